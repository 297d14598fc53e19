"""Unroll-and-jam of a native loop nest's outer loop: JAM consecutive iterations (`config.loop_jam`,
4; 1 switches it off) computed in one pass over the arrays they read, where the analysis proves
it changes nothing.

A matrix-vector product in a loop body (`cov[i:, i] = data[:, i] @ data[:, i:]`,
loop_arrays.dot_array) reads the whole matrix once per outer iteration: bound by reading it
from L2/L3, where NumPy's gemv is no slower. Consecutive iterations often read the same matrix
(shifted windows of one array). Computing JAM iterations together, the innermost loops of
their products fused into one, reads each element once for JAM multiply-adds.

    for i in [0, trip):  body(i)
becomes
    for b in [0, trip // JAM):
        the PURE statements of body(JAM*b + u), u = 0..JAM-1, jammed (below)
        the other statements of body(JAM*b), then of body(JAM*b + 1), ... in program order
    for i in [JAM * (trip // JAM), trip):  body(i)

Legality. A top-level statement of the body is *pure* when it writes only scratch buffers
(loop_arrays: a product's accumulators, a write's staging copy), reads no array the loop writes
other than scratch buffers, reads only lets and accumulators that are themselves pure (declared
by a pure statement, and not updated by one that is not since), and touches no scratch buffer
an earlier statement that is not pure touched. Scratch buffers are written before they
are read in every iteration (loop_arrays builds them so), so each copy u gets a scratch buffer
of its own and its pure statements depend on nothing another iteration does: they may run
before the earlier iterations' other statements, in any interleaving with the other copies'
pure statements. The other statements (every write into an array the caller sees, every read
of such an array, carried values) keep their order, copy after copy, exactly as the loop ran
them. So a body that writes what a later iteration reads is never reordered: its reading
statement is not pure, and stays after the earlier iteration's writes. A loop with a `break`
or checked ops (which leave at an iteration) is left alone.

Jamming the pure statements, position by position across the copies:
  * loops with the same bounds in every copy: one loop over the copies' bodies (jammed in turn);
  * loops whose bounds move with the copy and whose reads of unwritten arrays are the same
    elements shifted by a constant along the loop (`data[k, i + u + p]` for p in [0, M - i - u)):
    aligned (p -> q - u: every copy then reads data[k, i + q], q in [u, M - i)); each copy runs
    its own first iterations [s_u, max s), then one fused loop runs every copy's body over the
    common rest, loading the shared element once;
  * anything else: the copies' statements one after another.
A pure loop over the rows of a product's matrix (`for k: t = v[k]; for p: S[p] += t * M[k, p]`)
first takes ROWS of its iterations per pass (_rows: S loaded and stored once per ROWS rows).
The transformation is applied only when some innermost loop ends up shared by the copies (an
aligned fusion, or a jammed innermost loop reading the same element in several copies);
otherwise nothing is gained and the nest is left as it was.

Every copy computes each of its values with the same operations in the same order as the
loop did (iterations of an aligned loop are reordered only across copies), so results are
bit-identical to the loop without the transformation.
"""
from __future__ import annotations

import dataclasses

from ...config import config
from ...lower.loop_ir import (Acc, Affine, Append, Const, DataLoad, Gather, If, Let, Load, Loop, Op, Store,
                              Stride, Update, Var, walk_exprs)


ROWS = 2           # rows of a product's matrix per pass over its accumulators (_rows)


# ----------------------------------------------------------------------------- rewriting


class _Map:
    """A rewriting of expressions and statements: affine indices, let/accumulator names and
    buffers (each a function; identity by default). Shared subexpressions are rewritten once."""

    def __init__(self, affine=None, name=None, buf=None):
        self.affine = affine or (lambda a: a)
        self.name = name or (lambda n: n)
        self.buf = buf or (lambda b: b)
        self.memo: dict = {}

    def expr(self, e):
        if e is None:
            return None
        try:
            return self.memo[e]
        except (KeyError, TypeError):
            pass
        out = self._expr(e)
        try:
            self.memo[e] = out
        except TypeError:
            pass
        return out

    def _expr(self, e):
        if isinstance(e, Affine):
            return self.affine(e)
        if isinstance(e, Var):
            return Var(self.name(e.name), e.dtype)
        if isinstance(e, Stride):
            return Stride(self.buf(e.buf), e.dim, e.dtype)
        if isinstance(e, Load):
            kw = {"buf": self.buf(e.buf), "index": tuple(self.affine(a) for a in e.index)}
            if isinstance(e, Gather):
                kw["pos"] = self.expr(e.pos)
            elif isinstance(e, DataLoad):
                kw["pos"] = tuple((d, self.expr(p)) for d, p in e.pos)
            return dataclasses.replace(e, **kw)
        if isinstance(e, Op):
            return Op(e.op, e.dtype, tuple(self.expr(a) for a in e.args))
        return e                                   # Const, Arg, Python values

    def stmts(self, stmts) -> list:
        return [self.stmt(s) for s in stmts]

    def stmt(self, s):
        if isinstance(s, Loop):
            return Loop(s.var, self.expr(s.stop), self.stmts(s.body), self.expr(s.start), s.split,
                        self.expr(s.until), s.pairwise, s.short)
        if isinstance(s, Acc):
            return Acc(self.name(s.name), s.dtype, self.expr(s.init))
        if isinstance(s, Update):
            return Update(self.name(s.name), self.expr(s.value))
        if isinstance(s, Let):
            return Let(self.name(s.name), self.expr(s.value))
        if isinstance(s, Store):
            return Store(self.buf(s.buf), tuple(self.affine(a) for a in s.index), self.expr(s.value),
                         tuple((d, self.expr(p)) for d, p in s.pos))
        if isinstance(s, Append):
            return Append(self.buf(s.buf), self.name(s.counter), self.expr(s.cap), self.expr(s.value),
                          self.expr(s.cond))
        if isinstance(s, If):
            return If(self.expr(s.cond), self.stmts(s.body), self.stmts(s.orelse))
        raise TypeError(s)


def _substitute(var: str, by: Affine):
    """Affine rewriting: loop variable `var` replaced by the affine form `by`."""
    def affine(a: Affine) -> Affine:
        c = a.coef(var)
        return a if not c else a.without(var) + by.scale(c)
    return affine


# ----------------------------------------------------------------------------- facts


def _exprs_of(s):
    """The expressions statement `s` evaluates itself (not those of nested statements)."""
    if isinstance(s, Loop):
        out = [s.start, s.stop] + ([s.until] if s.until is not None else [])
    elif isinstance(s, Acc):
        out = [s.init]
    elif isinstance(s, (Update, Let)):
        out = [s.value]
    elif isinstance(s, Store):
        out = [s.value] + [p for _, p in s.pos] + [Op("affine", "int64", (a,)) for a in s.index]
    elif isinstance(s, Append):
        out = [s.cap, s.value, s.cond]
    elif isinstance(s, If):
        out = [s.cond]
    else:
        raise TypeError(s)
    return out


def _walk(stmts):
    """Every statement in `stmts`, nested ones included."""
    for s in stmts:
        yield s
        if isinstance(s, Loop):
            yield from _walk(s.body)
        elif isinstance(s, If):
            yield from _walk(s.body)
            yield from _walk(s.orelse)


def _facts(s) -> tuple:
    """(buffers read, buffers written, names read, names defined, names updated) by statement
    `s`, nested statements included."""
    read, written, used, defined, updated = set(), set(), set(), set(), set()
    for t in _walk([s]):
        for e in _exprs_of(t):
            for x in walk_exprs(e):
                if isinstance(x, Load):
                    read.add(x.buf)
                elif isinstance(x, Var):
                    used.add(x.name)
                elif isinstance(x, Stride):
                    read.add(x.buf)
        if isinstance(t, (Store, Append)):
            written.add(t.buf)
        if isinstance(t, (Let, Acc)):
            defined.add(t.name)
        if isinstance(t, Update):
            used.add(t.name)
            updated.add(t.name)
        if isinstance(t, Append):
            used.add(t.counter)
            updated.add(t.counter)
    return read, written, used, defined, updated


def _pure(body: list, scratch: set) -> list:
    """Per top-level statement of `body`: is it pure (module doc)?"""
    facts = [_facts(s) for s in body]
    written = set().union(*(f[1] for f in facts)) if facts else set()
    shared = written - scratch
    pure_names, impure_touched, out = set(), set(), []
    for s, (read, wrote, used, defined, updated) in zip(body, facts):
        ok = (not (wrote - scratch) and not (read & shared)
              and used - defined <= pure_names
              and not ((read | wrote) & scratch & impure_touched))
        out.append(ok)
        if ok:
            pure_names |= {s.name} if isinstance(s, (Let, Acc)) else set()
        else:                         # an accumulator it updates is no longer pure to read
            impure_touched |= (read | wrote) & scratch
            pure_names -= updated
    return out


# ----------------------------------------------------------------------------- jamming


class _Jam:
    def __init__(self, unwritten: set):
        self.unwritten = unwritten      # buffers no statement of the loop writes
        self.shared = False             # some innermost loop reads an element for several copies

    def lists(self, lists: list) -> list:
        """Parallel statement lists, one per copy, jammed position by position."""
        out = []
        for group in zip(*lists):
            s0 = group[0]
            if isinstance(s0, Loop) and all(isinstance(g, Loop) for g in group) and \
                    not any(g.until is not None or g.pairwise or g.split for g in group):
                if all(g.start == s0.start and g.stop == s0.stop and g.var == s0.var for g in group):
                    if _innermost(s0) and self._common_loads([g.body for g in group]):
                        self.shared = True
                    out.append(Loop(s0.var, s0.stop, self.lists([g.body for g in group]), s0.start,
                                    short=all(g.short for g in group)))
                    continue
                fused = self._aligned(group)
                if fused is not None:
                    out.extend(fused)
                    continue
            out.extend(group)
        return out

    def _loads(self, stmts) -> list:
        """The loads of unwritten arrays in `stmts`, in a deterministic order."""
        out = []
        for t in _walk(stmts):
            for e in _exprs_of(t):
                out += [x for x in walk_exprs(e) if type(x) is Load and x.buf in self.unwritten]
        return out

    def _common_loads(self, bodies) -> bool:
        first = set(self._loads(bodies[0]))
        return any(first & set(self._loads(b)) for b in bodies[1:])

    def _aligned(self, group) -> list | None:
        """Loops whose reads of unwritten arrays coincide once shifted along the loop by a
        constant per copy (module doc): the copies' first iterations, then one fused loop."""
        var = group[0].var
        if any(g.var != var or not _innermost(g) for g in group):
            return None
        loads = [self._loads(g.body) for g in group]
        if not loads[0] or any(len(x) != len(loads[0]) for x in loads):
            return None
        shifts = []
        for mine in loads:
            s = _shift(loads[0], mine, var)
            if s is None:
                return None
            shifts.append(s)
        low = min(shifts)
        shifts = [s - low for s in shifts]
        starts, stops, bodies = [], [], []
        for g, s in zip(group, shifts):
            move = _Map(affine=_substitute(var, Affine.var(var) + Affine(const=-s)))
            starts.append(_plus(g.start, s))
            stops.append(_plus(g.stop, s))
            bodies.append(move.stmts(g.body))
        if any(st != stops[0] for st in stops) or not all(isinstance(st, Const) for st in starts):
            return None
        lo = max(st.value for st in starts)
        out = []
        for st, body in zip(starts, bodies):
            if st.value < lo:
                stop = Op("minimum", "int64", (Const(lo, "int64"), stops[0]))
                out.append(Loop(var, stop, body, st, short=True))
        out.append(Loop(var, stops[0], self.lists(bodies), Const(lo, "int64")))
        self.shared = True
        return out


def _innermost(lp: Loop) -> bool:
    return not any(isinstance(s, (Loop, If)) for s in lp.body)


def _shift(base: list, mine: list, var: str) -> int | None:
    """The constant s such that every load of `mine`, with `var` replaced by `var - s`, is the
    corresponding load of `base`; None when there is none."""
    s = None
    for a, b in zip(base, mine):
        if a.buf != b.buf or a.dtype != b.dtype or len(a.index) != len(b.index):
            return None
        for ia, ib in zip(a.index, b.index):
            diff = ib + ia.scale(-1)
            if diff.terms or diff.syms:
                return None
            c = ia.coef(var)
            if ib.coef(var) != c:
                return None
            if c == 0:
                if diff.const:
                    return None
                continue
            if diff.const % c:
                return None
            here = diff.const // c
            if s is not None and here != s:
                return None
            s = here
    return s


def _plus(e, s: int):
    """An int64 bound expression plus the constant s."""
    if s == 0:
        return e
    if isinstance(e, Const):
        return Const(e.value + s, "int64")
    if isinstance(e, Op) and e.op == "affine":
        return Op("affine", "int64", (e.args[0] + Affine(const=s),))
    return Op("add", "int64", (e, Const(s, "int64")))


# ----------------------------------------------------------------------------- the entry


def _rows(lp: Loop, rows: int) -> list | None:
    """Loop `lp` (lets and innermost loops, inside one iteration of the outer loop) with `rows`
    of its iterations per pass: their lets first, then each inner loop once over every copy's
    body (`S[p] += t0 * M[k, p]; S[p] += t1 * M[k + 1, p]`: S loaded and stored once per `rows`
    rows of M, as the rows form of lower/matmul.py). Legal when the lets read no array the loop
    writes and every array it writes is read and written at one index only, in one inner loop,
    moving with that loop's index and not with `lp`'s: then each element sees its updates in
    the loop's order. None where that does not hold."""
    if lp.until is not None or lp.split or lp.pairwise or lp.start != Const(0, "int64") or \
            not any(isinstance(s, Loop) for s in lp.body):
        return None
    written, where = set(), {}
    for s in lp.body:
        if isinstance(s, Loop):
            if not _innermost(s) or s.until is not None or s.pairwise or \
                    not all(isinstance(t, (Let, Store)) and not (isinstance(t, Store) and t.pos) for t in s.body):
                return None
            if any(lp.var in _vars(e) for e in (s.start, s.stop)):
                return None
            written |= {t.buf for t in s.body if isinstance(t, Store)}
        elif not isinstance(s, Let):
            return None
    for pos, s in enumerate(lp.body):
        inner = s.body if isinstance(s, Loop) else [s]
        for t in inner:
            accesses = [(x.buf, x) for e in _exprs_of(t) for x in walk_exprs(e) if isinstance(x, Load)]
            if isinstance(t, Store):
                accesses.append((t.buf, t))
            for buf, x in accesses:
                if buf not in written:
                    continue
                if not isinstance(s, Loop) or type(x) not in (Load, Store):
                    return None
                index = x.index
                if where.setdefault(buf, (pos, index)) != (pos, index) or \
                        not any(a.coef(s.var) for a in index) or any(a.coef(lp.var) for a in index):
                    return None
    defined = {t.name for t in _walk(lp.body) if isinstance(t, Let)}
    block = f"{lp.var}r"
    copies = [_Map(affine=_substitute(lp.var, Affine.var(block, rows) + Affine(const=r)),
                   name=lambda n, r=r: f"{n}_r{r}" if n in defined else n).stmts(lp.body) for r in range(rows)]
    lets = [s for c in copies for s in c if isinstance(s, Let)]
    groups = list(zip(*[[s for s in c if isinstance(s, Loop)] for c in copies]))
    if any(g.start != group[0].start or g.stop != group[0].stop for group in groups for g in group):
        return None                               # bounds read a let of the copy
    loops = [Loop(group[0].var, group[0].stop, [t for g in group for t in g.body], group[0].start,
                  short=group[0].short) for group in groups]
    if isinstance(lp.stop, Const) and lp.stop.value % rows == 0:      # a static size: no remainder
        return [Loop(block, Const(lp.stop.value // rows, "int64"), lets + loops)]
    blocks = Op("floor_divide", "int64", (lp.stop, Const(rows, "int64")))
    done = Op("multiply", "int64", (blocks, Const(rows, "int64")))
    return [Loop(block, blocks, lets + loops), Loop(lp.var, lp.stop, lp.body, done)]


def _vars(e) -> set:
    """The loop variables an int64 bound expression reads."""
    out = set()
    for x in walk_exprs(e):
        if isinstance(x, Op) and x.op == "affine":
            out |= {v for v, _ in x.args[0].terms}
    return out


def unroll_and_jam(outer: Loop, scratch: set, new_scratch) -> list | None:
    """The statements replacing top-level loop `outer` (a native nest's loop over its
    iterations, counted from 0), or None when the transformation does not apply or gains
    nothing (module doc). `scratch`: the scratch buffers; `new_scratch(b)`: a new scratch
    buffer standing for the same array as scratch buffer `b` (a copy's own)."""
    jam = config.loop_jam
    if jam < 2 or outer.until is not None or outer.split or outer.pairwise or outer.start != Const(0, "int64"):
        return None
    pure = _pure(outer.body, scratch)
    if not any(pure):
        return None
    body = []                     # the pure loops with ROWS of their iterations per pass (_rows)
    for s, p in zip(outer.body, pure):
        rows = _rows(s, ROWS) if p and isinstance(s, Loop) and ROWS > 1 else None
        body.extend(rows or [s])
    pure = _pure(body, scratch)
    head, rest = _copies(outer, body, pure, jam, scratch, lambda b: -1 - b)       # dry run: no buffers made
    if head is None:
        return None
    head, rest = _copies(outer, body, pure, jam, scratch, new_scratch)
    blocks = Op("floor_divide", "int64", (outer.stop, Const(jam, "int64")))
    done = Op("multiply", "int64", (blocks, Const(jam, "int64")))
    return [Loop(f"{outer.var}j", blocks, head + rest),
            Loop(outer.var, outer.stop, outer.body, done)]


def _copies(outer: Loop, body: list, pure: list, jam: int, scratch: set, new_scratch) -> tuple:
    """(the jammed pure statements, the other statements copy after copy) of `jam` copies of
    `body` (outer's index JAM * block + u in copy u), or (None, None) when no innermost loop
    is shared by the copies."""
    defined = {s.name for s in _walk(body) if isinstance(s, (Let, Acc))}
    written = set().union(*(_facts(s)[1] for s in body))
    copies = []
    for u in range(jam):
        own = {b: (b if u == 0 else new_scratch(b)) for b in sorted(scratch)}
        m = _Map(affine=_substitute(outer.var, Affine.var(f"{outer.var}j", jam) + Affine(const=u)),
                 name=lambda n, u=u: f"{n}_j{u}" if n in defined else n,
                 buf=lambda b, own=own: own.get(b, b))
        copies.append(m.stmts(body))
    unwritten = {x.buf for s in body for t in _walk([s]) for e in _exprs_of(t) for x in walk_exprs(e)
                 if isinstance(x, Load)} - written
    jammer = _Jam(unwritten)
    head = jammer.lists([[s for s, p in zip(c, pure) if p] for c in copies])
    if not jammer.shared:
        return None, None
    return head, [s for c in copies for s, p in zip(c, pure) if not p]


__all__ = ["unroll_and_jam"]
