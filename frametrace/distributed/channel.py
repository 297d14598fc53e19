"""The MPI transport of compiler collectives: gather at rank 0, merge, answer every rank.

Why point-to-point and not `Iallgather`: an error must name the ranks that did not answer, and
an all-gather that never completes cannot say who is missing. Rank 0 polls `Iprobe` for each
other rank's message, so it knows exactly who arrived; it then sends every rank either the
merged state or a verdict (timeout / mismatch) that names the missing or diverging ranks. A
rank that hears nothing from rank 0 by its own deadline reports rank 0. Every wait is a poll
with a deadline, never a blocking call, so divergent ranks raise instead of hanging.

The messages travel on a private duplicate of the user's communicator (`Idup`, polled with the
same deadline), so they never match the program's own receives (`MPI.ANY_TAG` included).
Exchange n uses tag 2n+1 (to rank 0) and 2n+2 (answers), modulo the tag space, so a late
message from an abandoned exchange cannot be taken for the answer to another one.
"""
from __future__ import annotations

import threading
import time

from . import protocol
from .errors import CollectiveError, CollectiveMismatchError, CollectiveTimeoutError

_POLL_MIN, _POLL_MAX = 5e-5, 5e-3        # seconds between polls: quick when ranks are in step


def _ranks(ranks) -> str:
    ranks = sorted(ranks)
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


class Channel:
    """Exchanges over one communicator; one exchange at a time (`lock`), numbered in call order."""

    def __init__(self, comm):
        self.parent = comm
        self.comm = None
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.seq = 0
        self.broken: CollectiveError | None = None
        self.lock = threading.Lock()
        self._sends = []            # (request, buffer): keep buffers alive until sent

    # -------------------------------------------------------------------------------------
    def exchange(self, code, state, timeout: float):
        """Send `state`, get the join over all ranks (a FrameState). Raises CollectiveError."""
        with self.lock:
            if self.broken is not None:
                raise type(self.broken)(
                    f"compiler collectives stopped after an earlier failure, so the compile of "
                    f"{protocol.frame_where(code)} cannot be shared: {str(self.broken).splitlines()[0]}",
                    frame=protocol.frame_where(code), ranks=self.broken.ranks)
            try:
                return self._exchange(code, state, timeout)
            except CollectiveError as exc:
                self.broken = exc
                raise

    def _exchange(self, code, state, timeout):
        from mpi4py import MPI
        start = time.monotonic()
        deadline = start + timeout
        self._setup(code, deadline)
        seq, self.seq = self.seq, self.seq + 1
        span = (self.comm.Get_attr(MPI.TAG_UB) or 32767) // 2 - 1
        tag_in, tag_out = 2 * (seq % span) + 1, 2 * (seq % span) + 2
        mine = protocol.encode(seq, self.rank, code, state)
        self._prune()
        if self.rank == 0:
            return self._gather(code, seq, protocol.decode(mine), tag_in, tag_out, deadline, timeout)
        self._send(mine, 0, tag_in)
        # rank 0 starts its own clock when it arrives: give its verdict time to reach us
        answer = self._poll({0}, tag_out, deadline + max(0.5, 0.1 * timeout))
        if not answer:
            where = protocol.frame_where(code)
            raise CollectiveTimeoutError(
                f"compiler collectives timed out after {timeout:g} s at the compile of {where} "
                f"(rank {self.rank}, exchange #{seq}): rank 0, which collects the exchange, did not "
                "answer (it is not compiling this frame, or is stuck elsewhere)", frame=where, ranks=(0,))
        verdict = answer[0]
        if not verdict.get("ok"):
            raise self._error(code, seq, verdict, timeout)
        return protocol.state_of(verdict)

    def _gather(self, code, seq, mine, tag_in, tag_out, deadline, timeout):
        msgs = {0: mine}
        waiting = set(range(1, self.size))
        while waiting:
            got = self._poll(waiting, tag_in, deadline)
            if not got:
                break
            for r, msg in got.items():
                waiting.discard(r)
                if msg.get("seq") != seq or msg.get("v") != protocol.VERSION:
                    msg = {"frame": None, "where": msg.get("where", "?") + f" (exchange #{msg.get('seq')})"}
                msgs[r] = msg
        frames = {str(r): m.get("where", "?") for r, m in msgs.items()}
        if any(m.get("frame") != mine["frame"] for m in msgs.values()):
            verdict = {"ok": False, "kind": "mismatch", "frames": frames, "missing": sorted(waiting)}
        elif waiting:
            verdict = {"ok": False, "kind": "timeout", "frames": frames, "missing": sorted(waiting)}
        else:
            merged = protocol.join(protocol.state_of(m) for m in msgs.values())
            verdict = {"ok": True, "sizes": {n: (None if s is None else list(s)) for n, s in merged.sizes.items()},
                       "ints": dict(merged.ints)}
        data = protocol.encode_verdict(verdict)
        for r in range(1, self.size):          # late ranks find the verdict waiting for them
            self._send(data, r, tag_out)
        if not verdict["ok"]:
            raise self._error(code, seq, verdict, timeout)
        return protocol.state_of(verdict)

    # -------------------------------------------------------------------------------------
    def _error(self, code, seq, verdict, timeout) -> CollectiveError:
        where = protocol.frame_where(code)
        missing = verdict.get("missing", [])
        late = f"{_ranks(missing)} of {self.size} did not answer within {timeout:g} s" if missing else ""
        if verdict.get("kind") == "mismatch":
            by_frame = {}
            for r, w in verdict.get("frames", {}).items():
                by_frame.setdefault(w, []).append(int(r))
            lines = "; ".join(f"{w} on {_ranks(rs)}" for w, rs in by_frame.items())
            others = [int(r) for r, w in verdict.get("frames", {}).items() if w != where]
            return CollectiveMismatchError(
                f"compiler collectives: the ranks diverged at exchange #{seq} (rank {self.rank} is compiling "
                f"{where}): {lines}" + (f"; {late}" if late else ""),
                frame=where, ranks=tuple(sorted(others + missing)))
        return CollectiveTimeoutError(
            f"compiler collectives timed out after {timeout:g} s at the compile of {where} "
            f"(rank {self.rank}, exchange #{seq}): {late} (they are not compiling this frame, or are stuck "
            "elsewhere)", frame=where, ranks=tuple(missing))

    def _poll(self, sources, tag, deadline) -> dict:
        """Messages from `sources` with `tag` as they arrive; returns what came by `deadline`
        (at least one message, or {} on timeout)."""
        from mpi4py import MPI
        status = MPI.Status()
        pause = _POLL_MIN
        while True:
            got = {}
            for r in sorted(sources):
                if self.comm.Iprobe(source=r, tag=tag, status=status):
                    buf = bytearray(status.Get_count(MPI.BYTE))
                    self.comm.Recv([buf, MPI.BYTE], source=r, tag=tag)
                    try:
                        got[r] = protocol.decode(buf)
                    except ValueError:
                        got[r] = {"where": f"<unreadable message from rank {r}>"}
            if got:
                return got
            if time.monotonic() >= deadline:
                return {}
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX)

    def _send(self, data: bytes, dest: int, tag: int):
        from mpi4py import MPI
        buf = bytearray(data)
        self._sends.append((self.comm.Isend([buf, MPI.BYTE], dest=dest, tag=tag), buf))

    def _prune(self):
        self._sends = [(req, buf) for req, buf in self._sends if not req.Test()]

    def _setup(self, code, deadline):
        """Duplicate the user's communicator once, without blocking (every rank's first exchange)."""
        if self.comm is not None:
            return
        comm, req = self.parent.Idup()
        pause = _POLL_MIN
        while not req.Test():
            if time.monotonic() >= deadline:
                where = protocol.frame_where(code)
                raise CollectiveTimeoutError(
                    f"compiler collectives timed out at the compile of {where} (rank {self.rank}): not every "
                    f"rank of {self.size} reached its first compile, so the collectives communicator could not "
                    "be set up (which ranks is unknown at this point)", frame=where)
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX)
        self.comm = comm
