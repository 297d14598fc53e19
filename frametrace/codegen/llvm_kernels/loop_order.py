"""Loop nests in the memory order of their operands, chosen at run time (NumPy's K order).

The kernels take strides as arguments, so one kernel serves C-ordered, F-ordered, transposed
and permuted arrays alike; but a nest emitted in C order walks an F-ordered array with a
strided innermost loop (no vectorisation, a cache line per element). NumPy's iterator sorts
the axes by the operands' strides (npyiter_find_best_axis_ordering) instead. So does this
module, for a perfect nest of independent iterations (an elementwise store phase):

    key[k]  = sum over the nest's accesses of |byte step of the access along level k|
              (levels of one iteration or none go outermost: any step is fine there)
    rank[k] = how many levels go inside level k: smaller keys inside, ties keep C order
    innermost = the level of rank 0: one copy of the nest per possible innermost level,
                its innermost loop emitted as usual (static: which accesses move with it,
                the unit-stride fast copy that LLVM vectorises, the strided copy);
    outer levels: one loop per position, running the level of that rank (its bounds picked
                with selects); the levels' indices are selected back once per inner loop.

For a C-ordered call the ranks are the identity and the copy whose innermost level is the last
one runs, with the same inner loop as before. Only the innermost loop is duplicated (once per
level, at most MAX_DEPTH levels): compile time of a 2-d elementwise kernel grows ~1.5x, of a
3-d one ~2-2.5x (measured in benchmarks/README.md). The quick tier reorders too: calls of a
few hundred thousand elements never tier up, and an F-ordered one ran 3-6x slower than NumPy
in C order. A kernel compiled tiny (optnone: a static few elements) keeps the plain C nest.

Reordering is legal when no iteration reads what another writes: every store is injective in
the nest's variables (each index dim holds at most one of them and each appears), a stored
buffer is read only at its store index, distinct buffers do not overlap (Buffer.noalias, proved
by the scheduler), accumulators (declared outside the nest: a full reduction, `x.sum()`) are
only combined with an order-free combiner (_commutative), and the body has no append or
index-valued expression (whose order or value depends on the loop variables other than
through addresses). Reductions into one element per row (`x.sum(axis=1)`: an accumulator per
outer iteration) and column sums read-modify-writing the result are not perfect nests or not
injective: they keep C order.
"""
from __future__ import annotations

from ...lower.loop_ir import Arg, Const, Gather, Let, Load, Loop, Op, Store, Update, Var, walk_exprs

# accumulator updates that any iteration order gives the same result (up to the reassociation
# the vectorised reductions already have); the second set only off floats (signed zeros)
# red_max_nonan / red_min_nonan: a float max/min over the elements that are not NaN (NaN is an
# `or` of its own) in any order gives the same value, but for the sign of a zero, which a pass
# of its own decides (lower/reductions.py _zero_sign_phase: `or`s of the zeros' signs)
_ANY_ORDER = ("red_add", "red_mul", "red_and", "red_or", "red_max_nonan", "red_min_nonan", "keep_bits")
_ANY_ORDER_EXACT = ("red_max", "red_min", "red_fmax", "red_fmin")
MAX_DEPTH = 4               # nests deeper than this keep C order (one inner-loop copy per level)
_OUTERMOST = (1 << 63) - 1  # the key of a level with at most one iteration


def reorderable(lp: Loop, buffers) -> list | None:
    """The loops of the perfect nest under `lp` (outermost first) when it may run in any order
    (module doc), else None."""
    nest = [lp]
    while len(nest[-1].body) == 1 and isinstance(nest[-1].body[0], Loop):
        nest.append(nest[-1].body[0])
    if not 2 <= len(nest) <= MAX_DEPTH:
        return None
    if any(x.start != Const(0, "int64") or not isinstance(x.stop, (Const, Arg)) or x.until is not None
           or x.pairwise for x in nest):
        return None      # a segment of a concatenation (bounds inside its dim): its own loop order
    body = nest[-1].body
    if not body or not all(isinstance(s, (Store, Let, Update)) for s in body):
        return None
    names = {lp.var for lp in nest}
    if len(names) != len(nest):
        return None
    accs = {s.name for s in body if isinstance(s, Update)}
    if any(isinstance(s, Update) and not _commutative(s, accs) for s in body):
        return None
    stored: dict = {}
    for s in body:
        if isinstance(s, Store):
            if not buffers[s.buf].noalias or stored.setdefault(s.buf, s.index) != s.index or \
                    not _injective(s.index, names):
                return None
    for s in body:
        e = s.value                              # (an Update reads its accumulator: a Var)
        for x in walk_exprs(e):
            if isinstance(x, Op) and x.op == "affine" and any(v in names for v, _ in x.args[0].terms):
                return None                      # an index used as a value (arange, segments)
            if isinstance(x, Load) and x.buf in stored and (isinstance(x, Gather) or x.index != stored[x.buf]):
                return None                      # reads another iteration's element
    return nest


def _commutative(u: Update, accs: set) -> bool:
    """acc := combine(acc, x) with a combiner whose result does not depend on the order of
    the x (floats: the reassociated sum and product, as vectorised; not max/min, whose zero
    sign does), and x reads no accumulator of the nest."""
    v = u.value
    if not (isinstance(v, Op) and len(v.args) == 2 and v.args[0] == Var(u.name, v.dtype)):
        return False
    if v.op not in _ANY_ORDER and not (v.op in _ANY_ORDER_EXACT and v.dtype[0] != "f"):
        return False
    return not any(isinstance(x, Var) and x.name in accs for x in walk_exprs(v.args[1]))


def _injective(index: tuple, names: set) -> bool:
    seen = []
    for a in index:
        vs = [v for v, c in a.terms if v in names]
        if len(vs) > 1:
            return False
        seen += vs
    return set(seen) == names


def _accesses(body) -> list:
    """The distinct (buf, index) of the loads and stores of a loop body."""
    out = []
    for s in body:
        out += [(x.buf, x.index) for x in walk_exprs(s.value) if isinstance(x, Load)]
        if isinstance(s, Store):
            out.append((s.buf, s.index))
    return list(dict.fromkeys(out))


def emit_nest(em, nest: list):
    """Emit the nest (from reorderable) in the order its operands' strides ask for (module doc)."""
    n = len(nest)
    # the threads' chunk [lo, hi) of a split level 0 starting at 0: the same share of the
    # outermost level in the order run (threads write disjoint pages and cache lines)
    share = nest[0].split and nest[0].start == Const(0, "int64")
    bounds = [("0", em.ev(nest[0].stop)) if share else em.bounds(nest[0])] + [em.bounds(x) for x in nest[1:]]
    keys = [_key(em, nest[k].var, bounds[k], _accesses(nest[-1].body)) for k in range(n)]
    # level m goes inside level k: a smaller key, or an equal one and m after k (C order on ties)
    ranks = []
    for k in range(n):
        r = None
        for m in range(n):
            if m != k:
                before = em.emit(f"icmp {'ule' if m > k else 'ult'} i64 {keys[m]}, {keys[k]}", "i1")
                b = em.emit(f"zext i1 {before} to i64", "i64")
                r = b if r is None else em.emit(f"add i64 {r}, {b}", "i64")
        ranks.append(r)
    at = {(k, r): em.emit(f"icmp eq i64 {ranks[k]}, {r}", "i1") for k in range(n) for r in range(n)}
    inner = "0"
    for k in range(1, n):
        inner = em.emit(f"select i1 {at[(k, 0)]}, i64 {k}, i64 {inner}", "i64")
    labels = {c: em.new_label(f"order{c}.") for c in range(n)}
    done = em.new_label("ordered")
    cases = " ".join(f"i64 {c}, label %{labels[c]}" for c in range(n - 1))
    em.line(f"switch i64 {inner}, label %{labels[n - 1]} [ {cases} ]")
    saved = dict(em.cse)
    for c in range(n):                          # c: the innermost level of this copy
        em.label(labels[c])
        others = [k for k in range(n) if k != c]
        # outer position p (outermost 0) runs the level of rank n - 1 - p
        pos_bounds = []
        for p in range(n - 1):
            lo, hi = bounds[others[0]]
            for k in others[1:]:
                lo = em.emit(f"select i1 {at[(k, n - 1 - p)]}, i64 {bounds[k][0]}, i64 {lo}", "i64")
                hi = em.emit(f"select i1 {at[(k, n - 1 - p)]}, i64 {bounds[k][1]}, i64 {hi}", "i64")
            pos_bounds.append((lo, hi))
        if share:
            pos_bounds[0] = _share(em, *pos_bounds[0], bounds[0][1])
        inner_loop = Loop(nest[c].var, nest[c].stop, nest[-1].body, nest[c].start)

        # level k's index is the counter at its position: through a small array indexed by
        # level, at slots LLVM cannot know (a volatile round trip): selects on the order in the
        # loop, or stores it can forward, get unswitched into a copy of the inner loop per order
        slots, table = [], None
        if n > 2:
            table, hidden = f"%order.at{em.new_label('')}", f"%order.slot{em.new_label('')}"
            em.allocas += [f"  {table} = alloca [{n} x i64]", f"  {hidden} = alloca i64"]
            for p in range(n - 1):
                lvl = str(others[0])
                for k in others[1:]:
                    lvl = em.emit(f"select i1 {at[(k, n - 1 - p)]}, i64 {k}, i64 {lvl}", "i64")
                em.line(f"store volatile i64 {lvl}, ptr {hidden}")
                lvl = em.emit(f"load volatile i64, ptr {hidden}", "i64")
                slots.append(em.emit(f"getelementptr [{n} x i64], ptr {table}, i64 0, i64 {lvl}", "ptr"))

        def innermost(counters, c=c, others=others, inner_loop=inner_loop, slots=slots, table=table):
            if n == 2:
                em.env[nest[others[0]].var] = counters[0]
            else:
                for p in range(n - 1):
                    em.line(f"store i64 {counters[p]}, ptr {slots[p]}")
                for k in others:
                    ptr = em.emit(f"getelementptr [{n} x i64], ptr {table}, i64 0, i64 {k}", "ptr")
                    em.env[nest[k].var] = em.emit(f"load i64, ptr {ptr}", "i64")
            em.loop_in(inner_loop, *bounds[c])
        _outer_loops(em, pos_bounds, [], innermost)
        em.line(f"br label %{done}")
        em.cse = dict(saved)
    em.label(done)


def _share(em, start: str, stop: str, n: str) -> tuple:
    """[start, stop) cut as the chunk [lo, hi) of [0, n): floor(lo * extent / n) onwards
    (monotone in lo, exact at 0 and n: the chunks of the threads partition the range)."""
    ext = em.emit(f"sub i64 {stop}, {start}", "i64")
    div = em.emit(f"call i64 @llvm.smax.i64(i64 {n}, i64 1)", "i64")
    out = []
    for edge in ("%lo", "%hi"):
        q = em.emit(f"sdiv i64 {em.emit(f'mul i64 {edge}, {ext}', 'i64')}, {div}", "i64")
        out.append(em.emit(f"add i64 {start}, {q}", "i64"))
    return tuple(out)


def _key(em, var: str, bound: tuple, accesses: list) -> str:
    """Sum of |byte step| along loop `var` over the accesses; _OUTERMOST for <= 1 iteration."""
    total = None
    for buf, index in accesses:
        for d, a in enumerate(index):
            c = a.coef(var)
            if c:
                s = f"%st{buf}_{d}" if c == 1 else em.emit(f"mul i64 %st{buf}_{d}, {c}", "i64")
                s = em.emit(f"call i64 @llvm.abs.i64(i64 {s}, i1 false)", "i64")
                total = s if total is None else em.emit(f"add i64 {total}, {s}", "i64")
    ext = em.emit(f"sub i64 {bound[1]}, {bound[0]}", "i64")
    many = em.emit(f"icmp sgt i64 {ext}, 1", "i1")
    return em.emit(f"select i1 {many}, i64 {total or 0}, i64 {_OUTERMOST}", "i64")


def _outer_loops(em, pos_bounds: list, counters: list, innermost):
    """Counted loops over the positions' bounds, outermost first; innermost(counters) inside."""
    if len(counters) == len(pos_bounds):
        innermost(counters)
        return
    lo, hi = pos_bounds[len(counters)]
    head, body, exit_ = em.new_label("ohead"), em.new_label("obody"), em.new_label("oexit")
    em.line(f"br label %{head}")
    em.label(head)
    em.line(f"br i1 {em.emit(f'icmp slt i64 {lo}, {hi}', 'i1')}, label %{body}, label %{exit_}")
    em.label(body)
    j = em.new_label("%pos")
    phi_at = len(em.lines)
    em.lines.append(None)
    saved = dict(em.cse)
    _outer_loops(em, pos_bounds, counters + [j], innermost)
    em.cse = saved
    nxt = em.emit(f"add nuw nsw i64 {j}, 1", "i64")
    em.line(f"br i1 {em.emit(f'icmp slt i64 {nxt}, {hi}', 'i1')}, label %{body}, label %{exit_}, "
            f"!llvm.loop {em.mod.no_unroll_md()}")
    em.lines[phi_at] = f"  {j} = phi i64 [{lo}, %{head}], [{nxt}, %{em.block}]"
    em.label(exit_)


__all__ = ["reorderable", "emit_nest", "MAX_DEPTH"]
