"""SubgraphBuilder: build the body of a structured loop (ops/loops.py) beside the graph it sits in.

The tracer swaps its builder for one of these while it traces a loop body once. Every node
goes into the body graph; a node of an enclosing graph used as an argument is lifted: it
becomes an input of the body (a `captured` value the loop node passes in), once per node, as
TorchDynamo's speculate_subgraph lifts free variables. Graph inputs (arrays the frame reads
for the first time inside the body) are created in the root graph and then lifted.
"""
from __future__ import annotations

from .builder import GraphBuilder, Proxy
from .graph import Graph, IndexSlice, Node


class SubgraphBuilder(GraphBuilder):
    def __init__(self, parent: GraphBuilder, label: str):
        super().__init__(Graph())
        self.parent, self.label = parent, label
        self.errstate = parent.errstate           # a loop inside a `with np.errstate` block
        self.shape_env = getattr(parent, "shape_env", None)
        self.input_layout = getattr(parent, "input_layout", None)
        self.captured: dict = {}          # enclosing node -> body input
        self.own: set = set()             # body inputs and nodes

    # -- inputs of the frame go to the root graph ----------------------------------------------
    def input_array(self, source: str, shape, dtype, scalar=False) -> Proxy:
        return self.parent.input_array(source, shape, dtype, scalar)

    def input_scalar(self, source: str, pytype: type) -> Proxy:
        return self.parent.input_scalar(source, pytype)

    # -- body inputs -------------------------------------------------------------------------------
    def body_input(self, label: str, fake, node_like: Node | None = None) -> Node:
        """A new input of the body (a carried value, or a lifted capture) with `fake`'s type."""
        from .builder import _PY_DTYPE, to_expr
        from .fake import FakeScalar
        if isinstance(fake, FakeScalar):
            node = self.graph.add_input(source=f"{self.label}:{label}", kind="scalar",
                                        dtype=_PY_DTYPE[fake.pytype], scalar=True)
        else:
            node = self.graph.add_input(source=f"{self.label}:{label}", kind="array",
                                        shape=to_expr(fake.shape), dtype=fake.dtype, scalar=fake.scalar)
        self.own.add(node)
        return node

    def lift(self, node: Node) -> Node:
        if node in self.own:
            return node
        inner = self.captured.get(node)
        if inner is None:
            inner = self.captured[node] = self.body_input(f"captured{len(self.captured)}", _fake_of(node))
        return inner

    def lift_args(self, a):
        if isinstance(a, Node):
            return self.lift(a)
        if isinstance(a, tuple):
            return tuple(self.lift_args(x) for x in a)
        if isinstance(a, IndexSlice):
            return IndexSlice(self.lift_args(a.start), self.lift_args(a.stop), self.lift_args(a.step))
        return a

    def added(self, node: Node) -> None:
        self.own.add(node)


def _fake_of(node: Node):
    from .builder import recorded_fake
    from .fake import FakeArray, FakeScalar
    fake = recorded_fake(node)
    if isinstance(fake, (FakeArray, FakeScalar)):
        return fake
    if node.attr("kind") == "scalar":
        return FakeScalar({"b": bool, "i": int, "f": float, "c": complex}[node.dtype.kind])
    return FakeArray(node.shape, node.dtype, node.scalar)

