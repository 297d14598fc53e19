"""Exceptions the instruction translator's run loop catches to end a frame's trace early.

They sit below the translator and its opcode handlers (which raise them) so neither imports the
other for them.
"""


class ReturnSignal(Exception):
    """A traced frame returned `value` (a RETURN_VALUE, or the merged returns of a callee's paths)."""

    def __init__(self, value):
        self.value = value


class BreakPoint(Exception):
    """The restarted root trace reached the instruction where the graph breaks."""

    def __init__(self, tx):
        self.tx = tx
