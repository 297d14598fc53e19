"""Scheduling: a Graph -> kernels in loop IR + the steps the wrapper runs.

    plan = schedule.Plan(graph)      # what each node becomes; which values are materialised
    steps = fusion.group(plan)       # KernelStep (loop_ir.Kernel) / WrapperStep, in run order

Modules: classify (node categories), pointwise (elementwise ops -> expressions), views
(index maps), reductions (accumulator phases), kernels (loop-IR builder), schedule
(materialisation rules), fusion (grouping), loop_ir (the IR and its printer).
"""
