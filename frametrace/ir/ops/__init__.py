"""Every op of the catalog (see `frametrace.ir.registry`), registered on import.

One module per op family; each documents the canonical form of its ops' arguments and
attributes at its top (the API layer, `frametrace.ir.numpy_api`, produces those forms):

  elementwise  unary/binary ufuncs, where, clip, astype
  reductions   sum prod mean var std max min any all argmax argmin; cumsum cumprod
  nan_reductions  nanmax nanmin (fmax/fmin.reduce); divide_quiet; report_if (run-time warnings)
  sorting      sort_rows (np.sort of short last-axis rows)
  take_along   take_along (np.take_along_axis: a gather inside kernels)
  views        getitem transpose reshape expand_dims squeeze broadcast_to
  shape_ops    concatenate stack copy
  creation     zeros ones empty full arange
  linalg       matmul dot
  mutation     assign
  advanced_index  index index_put ufunc_at (lists / integer arrays as indices)
  opaque       `register_opaque`: NumPy functions called as they are (numpy_api registers them)

Each registration also states the op's lowering, cost class and layout (see the registry's
module doc): the backends' op tables are queries of these, never lists of names.

Shared helpers: `symbolic` (size arithmetic over int | SymInt), `promotion` (NumPy dtype
rules by probing NumPy on one-element stand-ins), `broadcast`, `indexing` (canonical
getitem indices).
"""
from . import (advanced_index, creation, data_dependent, elementwise, linalg, loops, mutation,  # noqa: F401
               nan_reductions, reductions, shape_ops, sorting, take_along, views)
