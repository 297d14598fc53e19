"""A loop whose float sums add up its iterations in NumPy's pairwise order (Loop.pairwise).

NumPy's add reduction along the innermost axis is `out = 0.0; out += pairwise_sum(x, n)`
(numpy/_core/src/umath/loops_utils.h.src), measured bit for bit on NumPy 2.4 and 2.5
(tests/backends/llvm/test_pairwise_sums.py):

    n < 8         res = 0.0; res += x[i] one by one
    n <= 128      r[k] = x[k] (k < 8); r[k] += x[8j + k] for each further whole group of 8;
                  res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)); then the last n % 8
                  elements one by one
    larger        n2 = n / 2 rounded down to a multiple of 8: P(x, n2) + P(x + n2, n - n2)

In groups of 8 ("units": n = 8U + R) a node of q units splits into floor(q/2) and ceil(q/2)
units; only the rightmost path (the spine) carries the R remaining elements, and a node is a
leaf when 8q (+ R on the spine) <= 128. Every leaf starts at a multiple of 8, so element i
goes into lane (i - start) % 8. Without recursion, the loop runs the leaves left to right:

    leaves: the path from the root to the current leaf is kept (lo, q, R per depth); the next
        leaf is the right sibling of the deepest left child on it, then left children down to
        a leaf (amortised O(1) per leaf)
    lanes = -0.0 (-0.0 + x == x: the same bits as NumPy's r[k] = x[k])
    for each unit u of the leaf: lanes += x[start + 8u : start + 8u + 8] (one vector add)
    res = the lanes combined as above; on the spine, then the R last elements one by one
    push (res, depth); while the two top entries have one depth they are siblings: replace
        them by (left + right, depth - 1)
    out += the one entry left (n < 8: res = 0.0, then the n elements one by one)

Speed: a leaf's lanes are one chain of vector adds (two 256-bit vectors in float64, one in
float32: the width LLVM vectorises with here), 4 cycles each; GROUP leaves run side by side
(independent chains: the units all of them have without a test, then the rest), and a sum of
n <= 128 (a row) has a path of its own without the tree. The strided copy (element-by-element
reads bound it, not the adds) runs one leaf at a time, rows of <= 128 included: its unit is
emitted once, not 2 x GROUP + 1 times (code size: test_pairwise_code_size.py). When the body
is only the sums' updates and their values are + - * / and negation of elements x[i] and
loop-invariant values (`x[i]`, `(x[i] - m) ** 2`, `x[i] * w[i]`: _vectorisable), a unit's 8
values are computed straight into the lanes, one vector instruction per scalar one of the plain
loop (the same IEEE operation per element: NumPy's bits); x[i] is read as a vector where the
copy knows it at unit stride (reversed at -1), element by element otherwise (the strided copy).
Any other body (a store, another accumulator, a call such as exp, a cast) runs over the group's
elements in order as a loop LLVM vectorises, writing the elements into a stack buffer that the
lanes then read.

Functions in the body (softmax's exp) are NumPy's own loop on chunks (chunked.py): the
group's elements are computed chunk by chunk into the stack buffer. Where NumPy does not sum
pairwise at all (a row of a Fortran-ordered operand: numpy_sums_in_order, tested at run time on
the strides), the loop takes the n < 8 path for any n: 0.0 and the elements one by one.

The iterations run in their order (0, 1, ..., n - 1), so whatever else the body does (stores,
other accumulators) is unchanged; only the float `red_add` accumulators (`acc := acc + x`, x
reading no accumulator) take NumPy's order. Their adds are plain `fadd` (no `reassoc`: nothing
may reorder them). The quick and the full tier emit the same code, so they give the same bits.
"""
from __future__ import annotations

from ...lower.loop_ir import DataLoad, Gather, Load, Loop, Op, Update, Var, walk_exprs
from . import types as T

BLOCK = 128          # NumPy's PW_BLOCKSIZE
LANES = 8
_STACK = 64          # tree depth bound: log2 of 2**63 / 8 units
GROUP = 4            # leaves run side by side: independent chains of vector adds


def pairwise_sums(lp: Loop) -> dict:
    """{acc name: dtype} of the float sums of `lp` to run in NumPy's order (module doc):
    `acc := red_add(acc, x)`, float32/float64, x reading no accumulator the loop updates; {}
    when the loop is not a pairwise one or an accumulator is updated twice."""
    if not lp.pairwise or lp.until is not None or lp.split or any(isinstance(s, Loop) or hasattr(s, "orelse")
                                                                   for s in lp.body):
        return {}
    updated = [s.name for s in lp.body if isinstance(s, Update)]
    out = {}
    for s in lp.body:
        v = s.value if isinstance(s, Update) else None
        if isinstance(v, Op) and v.op == "red_add" and v.dtype in ("float32", "float64") and len(v.args) == 2 \
                and v.args[0] == Var(s.name, v.dtype) \
                and not any(isinstance(x, Var) and x.name in updated for x in walk_exprs(v.args[1])):
            out[s.name] = v.dtype
    return out if len(updated) == len(set(updated)) else {}


def emit(em, lp: Loop, start: str, stop: str, versions, sums: dict):
    """Loop `lp` over [start, stop) (emit.FunctionEmitter.loop_in's place) with `sums` in
    NumPy's order; `versions`: loop_in's (fast-copy test, access map) or None."""
    # one element at a time (the tail): acc := acc + x; a unit: tmp[k] := x (added as a vector)
    tail = Loop(lp.var, lp.stop, [Update(s.name, Op("add", sums[s.name], (Var(s.name, sums[s.name]), s.value.args[1])))
                                  if isinstance(s, Update) and s.name in sums else s for s in lp.body])
    unit = Loop(lp.var, lp.stop, [Update(s.name, s.value.args[1]) if isinstance(s, Update) and s.name in sums else s
                                  for s in lp.body])
    tag = em.new_label("pw")
    st = _State(em, tag, sums, GROUP)
    n = em.emit(f"call i64 @llvm.smax.i64(i64 {em.emit(f'sub i64 {stop}, {start}', 'i64')}, i64 0)", "i64")
    in_order = numpy_sums_in_order(em, lp, sums)  # one element at a time: the n < 8 path's loop
    units = em.emit(f"lshr i64 {n}, 3", "i64")
    rest = em.emit(f"and i64 {n}, 7", "i64")
    done = em.new_label("pwdone")
    cond, access = versions if versions else (None, None)
    if cond is None:
        _driver(em, st, (unit, tail), start, stop, units, rest, done,
                None if access is None else {k: (b, s, 0) for k, (b, s, _, _) in access.items()}, False, in_order)
    else:
        fast, slow = em.new_label("pwfast"), em.new_label("pwslow")
        em.line(f"br i1 {cond}, label %{fast}, label %{slow}")
        for lbl, is_fast in ((fast, True), (slow, False)):
            em.label(lbl)
            _driver(em, st, (unit, tail), start, stop, units, rest, done,
                    {k: (fb if is_fast else b, s, sign if is_fast else 0) for k, (b, s, fb, sign) in access.items()},
                    not is_fast, in_order)
    em.label(done)
    for name, dt in sums.items():                 # out += the pairwise sum
        ty = T.reg(dt)
        ptr = em.accs[name][0]
        total = em.emit(f"load {ty}, ptr {st.total[name]}", ty)
        old = em.emit(f"load {ty}, ptr {ptr}", ty)
        em.line(f"store {ty} {em.emit(f'fadd {ty} {old}, {total}', ty)}, ptr {ptr}")


def numpy_sums_in_order(em, lp: Loop, sums: dict):
    """An i1, true at run time when NumPy adds these rows up one element at a time, not
    pairwise (None: never). NumPy sums pairwise only along the axis its iterator runs innermost,
    the one of the smallest |stride| (a tie goes to the later axis; axes of one element and
    zero strides do not count) of the summed operand: for a value computed from arrays, the
    temporary NumPy makes, laid out as its operands agree (C order unless all of them put
    another axis inside: npyiter's axis ordering). A Fortran-ordered x: `x.sum(axis=1)`, and
    softmax's `e.sum(axis=1)` of `e = np.exp(x - m)`, add each row's elements in order. The
    loop runs one order for all its sums: sums whose operands could disagree (`(x * y).sum(1)`
    and `x.sum(1)` fused, x Fortran-ordered, y not) stay pairwise (not NumPy's bits there): in
    order only when every sum's operands put another axis inside."""
    conds = []
    for s in lp.body:
        if not (isinstance(s, Update) and s.name in sums):
            continue
        votes, seen = [], set()
        for x in walk_exprs(s.value.args[1]):
            if type(x) is Load and len(x.index) >= 2 and (x.buf, x.index) not in seen:
                seen.add((x.buf, x.index))
                if sum(1 for a in x.index if a.coef(lp.var)) != 1:
                    return None
                v = _vote(em, lp, x.buf, x.index)
                if v is not None:
                    votes.append(v)
        if not votes:                            # a 1-d operand: pairwise whatever the others say
            return None
        conds.append(em._all(votes))
    return em._all(conds) if conds else None


def _vote(em, lp, buf, index):
    """Does operand buf[index] put another axis inside the summed one (None: it has no other
    axis that moves in the kernel's loops)?"""
    d = next(k for k, a in enumerate(index) if a.coef(lp.var))
    sd = _abs(em, f"%st{buf}_{d}")
    inside = []
    for e, a in enumerate(index):
        outer = [v for v in em.extents if v != lp.var and a.coef(v)]
        if e == d or not outer:
            continue
        se = _abs(em, f"%st{buf}_{e}")
        conds = [em.emit(f"icmp {'ule' if e > d else 'ult'} i64 {se}, {sd}", "i1"),
                 em.emit(f"icmp ne i64 {se}, 0", "i1")]
        for v in outer:                          # that axis has more than one element
            lo, hi = em.extents[v]
            conds.append(em.emit(f"icmp sgt i64 {em.emit(f'sub i64 {hi}, {lo}', 'i64')}, 1", "i1"))
        inside.append(em._all(conds))
    if not inside:
        return None
    vote = inside[0]
    for c in inside[1:]:
        vote = em.emit(f"or i1 {vote}, {c}", "i1")
    return vote


def _abs(em, v):
    return em.emit(f"call i64 @llvm.abs.i64(i64 {v}, i1 false)", "i64")


class _State:
    """The driver's allocas (promoted to registers by LLVM); per leaf j of a group: lanes[a][j]
    (the 8 lanes as 256-bit vectors), lo/q/depth[j]."""

    def __init__(self, em, tag, sums, group):
        def alloca(name, ty):
            ptr = f"%{tag}.{name}"
            em.allocas.append(f"  {ptr} = alloca {ty}")
            return ptr
        self.sums, self.group = sums, group
        self.lanes = {a: [[alloca(f"lanes{j}.{h}.{a}", _vec(dt)) for h in range(_halves(dt))] for j in range(group)]
                      for a, dt in sums.items()}
        self.alloca = alloca
        self._buf = None
        self.res = {a: alloca(f"res.{a}", T.reg(dt)) for a, dt in sums.items()}
        self.total = {a: alloca(f"total.{a}", T.reg(dt)) for a, dt in sums.items()}
        self.stack = {a: alloca(f"stack.{a}", f"[{_STACK} x {T.reg(dt)}]") for a, dt in sums.items()}
        self.depths = alloca("depths", f"[{_STACK} x i64]")
        for v in ("sp", "pos", "depth", "u", "umax"):
            setattr(self, v, alloca(v, "i64"))
        self.path = {f: alloca(f"path.{f}", f"[{_STACK} x i64]") for f in ("lo", "q", "extra")}
        self.leaf = [{v: alloca(f"{v}{j}", "i64") for v in ("lo", "q", "depth")} for j in range(group)]


    @property
    def buf(self):
        """The group's computed elements (a body _vectorisable does not take), allocated once used."""
        if self._buf is None:
            self._buf = {a: self.alloca(f"buf.{a}", f"[{self.group * BLOCK} x {T.reg(dt)}]")
                         for a, dt in self.sums.items()}
        return self._buf


def _halves(dt):
    """The 8 lanes as 256-bit vectors (the width LLVM vectorises the unit's loop with here)."""
    return 2 if dt == "float64" else 1


def _vec(dt):
    return f"<{LANES // _halves(dt)} x {T.reg(dt)}>"


_VECTOR_OPS = {"add": "fadd", "subtract": "fsub", "multiply": "fmul", "true_divide": "fdiv"}


def _vectorisable(unit: Loop, sums: dict, access, buffers) -> bool:
    """Whether a unit's 8 values can be computed straight into the lanes as vectors: the body
    is only the sums' updates, each value of the sum's dtype built from elements x[i] (any
    stride: gathered one by one where not at unit stride), values the loop does not change
    (splatted) and + - * / and negation, the instructions the scalar loop emits (NumPy's
    bits element by element). Anything else (other statements, calls, casts, data-dependent
    positions) computes the leaf's elements into the stack buffer (module doc)."""
    if access is None:
        return False
    return all(isinstance(s, Update) and s.name in sums
               and _vector_expr(s.value, sums[s.name], unit.var, access, buffers) for s in unit.body)


def _varies(e, var) -> bool:
    return any(isinstance(x, (Gather, DataLoad)) or (isinstance(x, Load) and any(a.coef(var) for a in x.index))
               or (isinstance(x, Op) and x.op == "affine" and x.args[0].coef(var)) for x in walk_exprs(e))


def _vector_expr(e, dt, var, access, buffers) -> bool:
    if not _varies(e, var):
        return getattr(e, "dtype", None) == dt
    if getattr(e, "dtype", None) != dt or isinstance(e, (Gather, DataLoad)):
        return False
    if isinstance(e, Load):
        return (e.buf, e.index) in access and buffers[e.buf].dtype == dt
    if isinstance(e, Op) and (e.op in _VECTOR_OPS and len(e.args) == 2 or e.op == "negative" and len(e.args) == 1):
        return all(_vector_expr(x, dt, var, access, buffers) for x in e.args)
    return False


def _vector_values(em, e, dt, access, var, b0) -> list:
    """The values of `e` (_vector_expr) at elements b0 .. b0 + 7 as the lanes' vectors: the
    instructions of the scalar loop, one per vector; x[i] read as a vector where the copy
    knows it at unit stride (reversed at -1), else element by element as the scalar loop
    reads it; values the loop does not change computed once and splatted."""
    ty, w = T.reg(dt), LANES // _halves(dt)
    vt = f"<{w} x {ty}>"
    saved = em.access, em.ivar, dict(em.cse), em.env.get(var)
    em.access, em.ivar = access, var
    memo = {}

    def scalar_at(x, i):                          # x at element i, as the scalar loop computes it
        em.cse = dict(saved[2])
        em.env[var] = i
        return em.ev(x)

    def at(first, k):
        return first if k == 0 else em.emit(f"add i64 {first}, {k}", "i64")

    def ev(x, first):
        if (x, first) in memo:
            return memo[(x, first)]
        if not _varies(x, var):
            if x not in memo:
                one = em.emit(f"insertelement {vt} poison, {ty} {scalar_at(x, first)}, i64 0", vt)
                memo[x] = em.emit(f"shufflevector {vt} {one}, {vt} poison, <{w} x i32> zeroinitializer", vt)
            return memo[x]
        if isinstance(x, Load):
            base, step, sign = access[(x.buf, x.index)]
            if sign in (1, -1):                   # `address`'s element index, i or -i
                j = first if sign == 1 else em.emit(f"sub nsw i64 0, {at(first, w - 1)}", "i64")
                p = em.emit(f"getelementptr inbounds {T.mem(dt)}, ptr {base}, i64 {j}", "ptr")
                r = em.emit(f"load {vt}, ptr {p}, align {T.itemsize(dt)}", vt)
                if sign == -1:
                    rev = ", ".join(f"i32 {w - 1 - k}" for k in range(w))
                    r = em.emit(f"shufflevector {vt} {r}, {vt} poison, <{w} x i32> <{rev}>", vt)
            else:
                r = "poison"
                for k in range(w):
                    r = em.emit(f"insertelement {vt} {r}, {ty} {scalar_at(x, at(first, k))}, i64 {k}", vt)
        elif x.op == "negative":
            r = em.emit(f"fneg {vt} {ev(x.args[0], first)}", vt)
        else:
            r = em.emit(f"{_VECTOR_OPS[x.op]} {vt} {ev(x.args[0], first)}, {ev(x.args[1], first)}", vt)
        memo[(x, first)] = r
        return r

    out = [ev(e, at(b0, h * w)) for h in range(_halves(dt))]
    em.access, em.ivar, em.cse = saved[:3]
    if saved[3] is not None:
        em.env[var] = saved[3]
    return out


def _load(em, ptr, ty="i64"):
    return em.emit(f"load {ty}, ptr {ptr}", ty)


def _store(em, value, ptr, ty="i64"):
    em.line(f"store {ty} {value}, ptr {ptr}")


def _driver(em, st, loops, start, stop, units, rest, done, access, scalar, in_order=None):
    """One copy of the loop (fast or strided `access`): n < 8 (or `in_order`: an i1, NumPy
    adds these rows in order) apart, else groups of leaves."""
    sums = st.sums
    unit, tail = loops
    accs = {a: em.accs[a] for a in sums}

    def run(lp, lo, hi, bind, md):
        exit_ = em.new_label("pwexit")
        em.counted(lp, lo, hi, exit_, access, scalar=scalar, md=md, on_iter=bind)
        em.label(exit_)
        em.accs.update(accs)

    def bind_res(i):
        for a, dt in sums.items():
            em.accs[a] = (st.res[a], dt)

    vec = _vectorisable(unit, sums, access, em.k.buffers)
    # the strided copy runs one leaf at a time: its element-by-element reads, not the adds'
    # latency, bound it, and GROUP leaves side by side would emit its body 2 x GROUP times more
    group = 1 if scalar else GROUP
    small, one, many, fin = (em.new_label(x) for x in ("pwsmall", "pwone", "pwmany", "pwfin"))
    _store(em, 0, st.sp)
    _store(em, 0, st.pos)
    n = em.emit(f"add i64 {em.emit(f'shl i64 {units}, 3', 'i64')}, {rest}", "i64")
    few = em.emit(f"icmp eq i64 {units}, 0", "i1")
    if in_order is not None:
        few = em.emit(f"or i1 {few}, {in_order}", "i1")
    em.line(f"br i1 {few}, label %{small}, label %{one}")
    # n < 8 (or in order): 0.0 and the elements one by one
    em.label(small)
    for a, dt in sums.items():
        _store(em, T.const(0.0, dt), st.res[a], T.reg(dt))
    run(tail, start, stop, bind_res, em.mod.scalar_loop_md())
    for a, dt in sums.items():
        _store(em, _load(em, st.res[a], T.reg(dt)), st.total[a], T.reg(dt))
    em.line(f"br label %{done}")
    # n <= 128: one leaf (a row of a row sum, typically); the strided copy takes it through the
    # loop below (one leaf at a time: the same steps, its body emitted once less)
    em.label(one)
    if group == 1:
        em.line(f"br label %{many}")
    else:
        single = em.new_label("pwsingle")
        em.line(f"br i1 {em.emit(f'icmp sle i64 {n}, {BLOCK}', 'i1')}, label %{single}, label %{many}")
        em.label(single)
        for k, v in (("lo", 0), ("q", units), ("depth", 0)):
            _store(em, v, st.leaf[0][k])
        _store(em, units, st.umax)
        _leaves(em, st, 1, False, unit, vec, access, scalar, start, stop, units, tail, bind_res, run)
        em.line(f"br label %{fin}")
    # groups of leaves side by side (independent chains of vector adds)
    em.label(many)
    _store(em, 0, st.umax)
    for j in range(group):
        _find_leaf(em, st, j, units, rest)
    _leaves(em, st, group, True, unit, vec, access, scalar, start, stop, units, tail, bind_res, run)
    em.line(f"br i1 {em.emit(f'icmp slt i64 {_load(em, st.pos)}, {units}', 'i1')}, label %{many}, label %{fin}")
    em.label(fin)
    for a, dt in sums.items():
        ty = T.reg(dt)
        p = em.emit(f"getelementptr [{_STACK} x {ty}], ptr {st.stack[a]}, i64 0, i64 0", "ptr")
        _store(em, _load(em, p, ty), st.total[a], ty)
    em.line(f"br label %{done}")


def _leaves(em, st, group, guarded, unit, vec, access, scalar, start, stop, units, tail, bind_res, run):
    """The units of leaves 0..group-1 (st.leaf: found), side by side, then their sums into the
    tree in order. `guarded`: a leaf may have fewer units than umax (or none)."""
    sums = st.sums
    for a, dt in sums.items():
        zeros = ", ".join([f"{T.reg(dt)} {T.const(-0.0, dt)}"] * (LANES // _halves(dt)))
        for lanes in st.lanes[a][:group]:
            for p in lanes:
                _store(em, f"<{zeros}>", p, _vec(dt))
    base = _load(em, st.leaf[0]["lo"])
    if not vec:                                   # the group's elements (the body) into st.buf
        lo = em.emit(f"add i64 {start}, {em.emit(f'shl i64 {base}, 3', 'i64')}", "i64")
        end = _load(em, st.pos) if guarded else units

        def bind(i):
            off = em.emit(f"sub i64 {i}, {lo}", "i64")
            for a, dt in sums.items():
                em.accs[a] = (em.emit(f"getelementptr {T.reg(dt)}, ptr {st.buf[a]}, i64 {off}", "ptr"), dt)
        run(unit, lo, em.emit(f"add i64 {start}, {em.emit(f'shl i64 {end}, 3', 'i64')}", "i64"), bind,
            em.mod.scalar_loop_md() if scalar else None)
    _store(em, 0, st.u)
    if guarded and group > 1:                     # units all leaves have without a test, then the rest
        umin = _load(em, st.leaf[0]["q"])
        for j in range(1, group):
            qj = _load(em, st.leaf[j]["q"])
            umin = em.emit(f"select i1 {em.emit(f'icmp slt i64 {qj}, {umin}', 'i1')}, i64 {qj}, i64 {umin}", "i64")
        _units(em, st, group, False, umin, vec, access, unit, start, base)
    # (one leaf: umax is its q, _find_leaf: no unit needs a test)
    _units(em, st, group, guarded and group > 1, _load(em, st.umax), vec, access, unit, start, base)
    for j in range(group):                        # each leaf's sum, in order, into the tree
        yes, no = em.new_label("pwleaf"), em.new_label("pwleafx")
        if guarded:
            qj = _load(em, st.leaf[j]["q"])
            em.line(f"br i1 {em.emit(f'icmp sgt i64 {qj}, 0', 'i1')}, label %{yes}, label %{no}")
            em.label(yes)
        _leaf_sum(em, st, j, units, start, stop, tail, bind_res, run)
        if guarded:
            em.line(f"br label %{no}")
            em.label(no)


def _units(em, st, group, guarded, stop, vec, access, unit, start, base):
    """Units st.u..stop-1 of leaves 0..group-1 side by side; `guarded`: only where the leaf has
    that unit."""
    uhead, ubody, uexit = em.new_label("pwu"), em.new_label("pwub"), em.new_label("pwux")
    em.line(f"br label %{uhead}")
    em.label(uhead)
    u = _load(em, st.u)
    em.line(f"br i1 {em.emit(f'icmp slt i64 {u}, {stop}', 'i1')}, label %{ubody}, label %{uexit}")
    em.label(ubody)
    for j in range(group):                        # unit u of each leaf j that has one
        yes, no = em.new_label("pwuj"), em.new_label("pwujx")
        if guarded:
            qj = _load(em, st.leaf[j]["q"])
            em.line(f"br i1 {em.emit(f'icmp slt i64 {u}, {qj}', 'i1')}, label %{yes}, label %{no}")
            em.label(yes)
        lo = _load(em, st.leaf[j]["lo"])
        _unit(em, st, j, vec, access, unit, start, em.emit(f"add i64 {lo}, {u}", "i64"), base)
        if guarded:
            em.line(f"br label %{no}")
            em.label(no)
    _store(em, em.emit(f"add i64 {u}, 1", "i64"), st.u)
    em.line(f"br label %{uhead}")
    em.label(uexit)


def _find_leaf(em, st, j, units, rest):
    """Leaf j of the group: the next leaf of the tree (none, q = 0, past the last unit). The
    path from the root to the current leaf is kept (lo, q, extra R elements per depth): the
    next leaf is the right sibling of the deepest left child on it, then left children down
    to a leaf (amortised O(1) per leaf; the root at the first)."""
    first, again, up, upmore, sib, desc, split, found, none, nxt = (em.new_label(x) for x in (
        "pwfirst", "pwagain", "pwup", "pwupm", "pwsib", "pwdesc", "pwsplit", "pwfound", "pwnone", "pwnext"))
    pos = _load(em, st.pos)
    em.line(f"br i1 {em.emit(f'icmp slt i64 {pos}, {units}', 'i1')}, label %{again}, label %{none}")
    em.label(none)
    _store(em, 0, st.leaf[j]["q"])
    em.line(f"br label %{nxt}")
    em.label(again)
    em.line(f"br i1 {em.emit(f'icmp eq i64 {pos}, 0', 'i1')}, label %{first}, label %{up}")
    em.label(first)                               # the root
    _path_set(em, st, "0", "0", units, rest)
    _store(em, 0, st.depth)
    em.line(f"br label %{desc}")
    em.label(up)                                  # up while the node is a right child
    d = _load(em, st.depth)
    parent = em.emit(f"sub i64 {d}, 1", "i64")
    right = em.emit(f"icmp ne i64 {_path(em, st, 'lo', d)}, {_path(em, st, 'lo', parent)}", "i1")
    em.line(f"br i1 {right}, label %{upmore}, label %{sib}")
    em.label(upmore)
    _store(em, parent, st.depth)
    em.line(f"br label %{up}")
    em.label(sib)                                 # a left child: its right sibling
    plo, pq, pextra = (_path(em, st, f, parent) for f in ("lo", "q", "extra"))
    h = em.emit(f"lshr i64 {pq}, 1", "i64")
    _path_set(em, st, d, em.emit(f"add i64 {plo}, {h}", "i64"), em.emit(f"sub i64 {pq}, {h}", "i64"), pextra)
    em.line(f"br label %{desc}")
    em.label(desc)                                # left children down to a leaf
    d = _load(em, st.depth)
    lo, q, extra = (_path(em, st, f, d) for f in ("lo", "q", "extra"))
    size = em.emit(f"add i64 {em.emit(f'shl i64 {q}, 3', 'i64')}, {extra}", "i64")
    em.line(f"br i1 {em.emit(f'icmp sle i64 {size}, {BLOCK}', 'i1')}, label %{found}, label %{split}")
    em.label(split)
    child = em.emit(f"add i64 {d}, 1", "i64")
    _path_set(em, st, child, lo, em.emit(f"lshr i64 {q}, 1", "i64"), "0")
    _store(em, child, st.depth)
    em.line(f"br label %{desc}")
    em.label(found)
    _store(em, lo, st.leaf[j]["lo"])
    _store(em, q, st.leaf[j]["q"])
    _store(em, d, st.leaf[j]["depth"])
    _store(em, em.emit(f"add i64 {lo}, {q}", "i64"), st.pos)
    umax = _load(em, st.umax)
    _store(em, em.emit(f"select i1 {em.emit(f'icmp sgt i64 {q}, {umax}', 'i1')}, i64 {q}, i64 {umax}", "i64"), st.umax)
    em.line(f"br label %{nxt}")
    em.label(nxt)


def _path(em, st, field, d):
    return _load(em, em.emit(f"getelementptr [{_STACK} x i64], ptr {st.path[field]}, i64 0, i64 {d}", "ptr"))


def _path_set(em, st, d, lo, q, extra):
    for field, v in (("lo", lo), ("q", q), ("extra", extra)):
        _store(em, v, em.emit(f"getelementptr [{_STACK} x i64], ptr {st.path[field]}, i64 0, i64 {d}", "ptr"))


def _unit(em, st, j, vec, access, unit, start, u, base):
    """Unit u (8 elements from start + 8u) into leaf j's lanes: computed as vectors (`vec`:
    _vectorisable) or read from the group's elements computed into st.buf (unit `base` at its
    start)."""
    sums = st.sums
    b0 = em.emit(f"add i64 {start}, {em.emit(f'shl i64 {u}, 3', 'i64')}", "i64")
    if not vec:
        off = em.emit(f"shl i64 {em.emit(f'sub i64 {u}, {base}', 'i64')}, 3", "i64")
        first = {a: em.emit(f"getelementptr {T.reg(dt)}, ptr {st.buf[a]}, i64 {off}", "ptr") for a, dt in sums.items()}
    values = {s.name: _vector_values(em, s.value, sums[s.name], access, unit.var, b0) for s in unit.body} if vec else {}
    for a, dt in sums.items():
        vt, w = _vec(dt), LANES // _halves(dt)
        for h, p in enumerate(st.lanes[a][j]):
            if vec:
                v = values[a][h]
            else:
                at = em.emit(f"getelementptr {T.reg(dt)}, ptr {first[a]}, i64 {h * w}", "ptr")
                v = em.emit(f"load {vt}, ptr {at}, align {T.itemsize(dt)}", vt)
            _store(em, em.emit(f"fadd {vt} {_load(em, p, vt)}, {v}", vt), p, vt)


def _leaf_sum(em, st, j, units, start, stop, tail, bind_res, run):
    """Leaf j's lanes combined as NumPy does; on the spine the last R elements one by one; then
    pushed into the tree with its depth, adding up siblings."""
    for a, dt in st.sums.items():
        ty, w = T.reg(dt), LANES // _halves(dt)
        parts = [_load(em, p, _vec(dt)) for p in st.lanes[a][j]]
        r = [em.emit(f"extractelement {_vec(dt)} {parts[k // w]}, i64 {k % w}", ty) for k in range(LANES)]

        def add(x, y, ty=ty):
            return em.emit(f"fadd {ty} {x}, {y}", ty)
        _store(em, add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7]))), st.res[a], ty)
    at_tail, push = em.new_label("pwtail"), em.new_label("pwpush")
    lo, q = _load(em, st.leaf[j]["lo"]), _load(em, st.leaf[j]["q"])
    end = em.emit(f"add i64 {lo}, {q}", "i64")
    em.line(f"br i1 {em.emit(f'icmp eq i64 {end}, {units}', 'i1')}, label %{at_tail}, label %{push}")
    em.label(at_tail)
    run(tail, em.emit(f"add i64 {start}, {em.emit(f'shl i64 {units}, 3', 'i64')}", "i64"), stop, bind_res,
        em.mod.scalar_loop_md())
    em.line(f"br label %{push}")
    em.label(push)
    _store(em, _load(em, st.leaf[j]["depth"]), st.depth)
    phead, pop, put = em.new_label("pwph"), em.new_label("pwpop"), em.new_label("pwput")
    em.line(f"br label %{phead}")
    em.label(phead)
    sp, d = _load(em, st.sp), _load(em, st.depth)
    top = em.emit(f"sub i64 {sp}, 1", "i64")
    nonempty = em.emit(f"icmp sgt i64 {sp}, 0", "i1")
    safe = em.emit(f"select i1 {nonempty}, i64 {top}, i64 0", "i64")
    below = _load(em, em.emit(f"getelementptr [{_STACK} x i64], ptr {st.depths}, i64 0, i64 {safe}", "ptr"))
    same = em.emit(f"icmp eq i64 {below}, {d}", "i1")
    em.line(f"br i1 {em.emit(f'and i1 {nonempty}, {same}', 'i1')}, label %{pop}, label %{put}")
    em.label(pop)                                 # siblings: left + right
    for a, dt in st.sums.items():
        ty = T.reg(dt)
        left = _load(em, em.emit(f"getelementptr [{_STACK} x {ty}], ptr {st.stack[a]}, i64 0, i64 {top}", "ptr"), ty)
        _store(em, em.emit(f"fadd {ty} {left}, {_load(em, st.res[a], ty)}", ty), st.res[a], ty)
    _store(em, top, st.sp)
    _store(em, em.emit(f"sub i64 {d}, 1", "i64"), st.depth)
    em.line(f"br label %{phead}")
    em.label(put)
    for a, dt in st.sums.items():
        ty = T.reg(dt)
        p = em.emit(f"getelementptr [{_STACK} x {ty}], ptr {st.stack[a]}, i64 0, i64 {sp}", "ptr")
        _store(em, _load(em, st.res[a], ty), p, ty)
    _store(em, d, em.emit(f"getelementptr [{_STACK} x i64], ptr {st.depths}, i64 0, i64 {sp}", "ptr"))
    _store(em, em.emit(f"add i64 {sp}, 1", "i64"), st.sp)


__all__ = ["pairwise_sums", "emit", "BLOCK", "LANES"]
