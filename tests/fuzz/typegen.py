"""Random typed expression trees, run by numba.njit on the CPU and as numba_vulkan kernels.

A program reads input arrays of every width (int8 ... uint64, float32,
float64, bool) and scalar arguments (NumPy scalars and Python int/float/bool),
and writes a few random expression trees into output arrays, one element per
index:

* as ``fuzz_cpu(...)``: ``for i in range(out0.size): out0[i] = <expr>``,
  compiled by ``numba.njit(error_model="numpy")``, the oracle;
* as ``fuzz_kernel(...)``: invocation ``i`` does the same, compiled by
  ``nv.jit`` with its default options.

Every node is typed by Numba's own CPU typing context (operators, builtins,
NumPy scalar constructors, the unification of a conditional expression's two
branches), so the trees mix widths and signedness exactly as Numba types
them; each output array has its expression's type. After the CPU compile the
types are checked against njit's own typemap (a mismatch is a generator bug).

Undefined behaviour is kept out by construction, so that the CPU result is
the answer (see check_values for how results are compared):

* shift counts are a literal in [0, 63] or ``(c & 63)``; Numba computes every
  shift in 64 bits, and LLVM makes a count of 64 or more (or negative) poison
  (the x86 CPU then masks the count; we give the unbounded shift's result);
* ``**`` has an integer exponent, a literal in [0, 4] or ``(e & 3)``; Numba's
  integer ``**`` with a negative exponent divides by zero for a zero base, and
  float exponents call libm's pow, whose rounding Vulkan does not promise;
* a float converted to an integer type is first guarded into the target's
  range (``(x if lo < x < hi else 0.0)``; NaN takes the else branch): LLVM's
  fptosi/fptoui of an out-of-range value is poison.

Signed integer overflow in ``+ - * **`` cannot be kept out by construction,
and Numba marks those LLVM ops ``nsw``: an overflow is poison there, and LLVM
does exploit it (``u32 % (s ** 2)`` with ``s ** 2`` past 2^63 skips the sign
fix). The CPU version therefore also records both operands of every such node
(`probes`), and an element where one overflows is left out of the comparison
(see typecheck.overflowed); no such node appears under an integer `//` or `%`,
where a poison operand loses njit's zero test and traps. Unsigned wrap-around,
integer division by zero (0 under the NumPy error model), ``MIN // -1`` (0 in Numba) and float
division by zero (inf/NaN) are defined, and generated and checked.
"""

import linecache
import operator
import os
import random
from dataclasses import dataclass, field

import numpy as np
from numba.core import types
from numba.core.registry import cpu_target
from numba.np.numpy_support import from_dtype

_TC = cpu_target.typing_context
_TC.refresh()

#: The input widths, as (short name, NumPy dtype).
DTYPES = (
    ("i8", np.int8), ("i16", np.int16), ("i32", np.int32), ("i64", np.int64),
    ("u8", np.uint8), ("u16", np.uint16), ("u32", np.uint32), ("u64", np.uint64),
    ("f32", np.float32), ("f64", np.float64), ("b", np.bool_),
)  # fmt: skip

#: Scalar argument types: the NumPy scalar types and Python's int, float and bool.
SCALAR_TYPES = tuple(dt for _, dt in DTYPES) + (int, float, bool)

BINOPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
    "<<": operator.lshift, ">>": operator.rshift,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}  # fmt: skip
UNOPS = {"-": operator.neg, "~": operator.invert, "not ": operator.not_}
CASTS = {
    "np.int8": np.int8, "np.int16": np.int16, "np.int32": np.int32, "np.int64": np.int64,
    "np.uint8": np.uint8, "np.uint16": np.uint16, "np.uint32": np.uint32,
    "np.uint64": np.uint64, "np.float32": np.float32, "np.float64": np.float64,
    "np.bool_": np.bool_, "int": int, "float": float, "bool": bool,
}  # fmt: skip
CALLS = {"abs": abs, "min": min, "max": max}

# Operators that Numba emits with LLVM's nsw flag when the result is a signed integer.
NSW_OPS = ("+", "-", "*", "**")

# Float operations whose result Vulkan does not promise to round correctly.
INEXACT = {"/", "**"}


class Untypable(Exception):
    """Numba cannot type a node (the generator then picks something else)."""


def _resolve(fn, argtys):
    try:
        fnty = fn if fn in BINOPS.values() or fn in UNOPS.values() else _TC.resolve_value_type(fn)
        sig = _TC.resolve_function_type(fnty, tuple(argtys), {})
    except Exception as e:  # noqa: BLE001 - Numba reports typing failures in many ways
        raise Untypable(str(e)) from None
    if sig is None:
        raise Untypable(f"{fn} {argtys}")
    return sig


def is_float(ty):
    return isinstance(types.unliteral(ty), types.Float)


def is_intlike(ty):
    return isinstance(types.unliteral(ty), (types.Integer, types.Boolean))


# ---------------------------------------------------------------- the tree


@dataclass
class Node:
    """An expression node; `ty` is its Numba type (literal types for int literals)."""

    kind: str  # leaf, bin, un, cast, call, ifexp
    op: str = ""  # operator, cast or call name; the source text for leaves
    kids: tuple = ()
    ty: object = None
    value: object = None  # a leaf literal's value (for retyping)

    def render(self):
        k, op = self.kind, self.op
        r = [kid.render() for kid in self.kids]
        if k == "leaf":
            return op
        if k == "un":
            return f"({op}{r[0]})"
        if k == "bin":
            x, y = r
            if op in ("<<", ">>") and not _small_literal(self.kids[1], 63):
                y = f"({y} & 63)"
            if op == "**" and not _small_literal(self.kids[1], 4):
                y = f"({y} & 3)"
            return f"({x} {op} {y})"
        if k == "cast":
            x = r[0]
            bounds = _float_to_int_bounds(op, self.kids[0].ty)
            if bounds:
                x = f"({x} if {bounds[0]!r} < {x} < {bounds[1]!r} else 0.0)"
            return f"{op}({x})"
        if k == "call":
            return f"{op}({', '.join(r)})"
        if k == "ifexp":
            return f"({r[1]} if {r[0]} else {r[2]})"
        raise AssertionError(k)

    def walk(self):
        yield self
        for kid in self.kids:
            yield from kid.walk()

    def inexact(self):
        """True when a float `/` or `**` occurs in the tree."""
        return any(n.kind == "bin" and n.op in INEXACT and is_float(n.ty) for n in self.walk())

    def computes_float32(self):
        """True when an operation (not a leaf) of the tree has a float32 result: one that a
        device flushing float32 subnormals may give as zero."""
        return any(n.kind != "leaf" and n.ty == types.float32 for n in self.walk())


def _small_literal(node, hi):
    return isinstance(node.ty, types.IntegerLiteral) and 0 <= node.value <= hi


# Float -> integer conversions are poison out of range: (lo, hi) exclusive, exact in float64.
_INT_RANGE = {
    "np.int8": (-(2.0**7) - 1, 2.0**7), "np.int16": (-(2.0**15) - 1, 2.0**15),
    "np.int32": (-(2.0**31) - 1, 2.0**31), "np.int64": (-(2.0**63), 2.0**63),
    "int": (-(2.0**63), 2.0**63), "np.uint8": (-1.0, 2.0**8), "np.uint16": (-1.0, 2.0**16),
    "np.uint32": (-1.0, 2.0**32), "np.uint64": (-1.0, 2.0**64),
}  # fmt: skip


def _float_to_int_bounds(cast, from_ty):
    return _INT_RANGE.get(cast) if is_float(from_ty) else None


def retype(node):
    """Type `node` bottom up by Numba's rules; raises Untypable. Returns node.ty."""
    k = node.kind
    if k == "leaf":
        return node.ty
    tys = [retype(kid) for kid in node.kids]
    if k == "bin":
        x, y = tys
        if node.op in ("<<", ">>") and not _small_literal(node.kids[1], 63):
            if not is_intlike(y):
                raise Untypable("shift count")
            y = _resolve(operator.and_, (y, types.literal(63))).return_type
        if node.op == "**":
            if not is_intlike(y):
                raise Untypable("float exponent")
            if not _small_literal(node.kids[1], 4):
                y = _resolve(operator.and_, (y, types.literal(3))).return_type
        sig = _resolve(BINOPS[node.op], (x, y))
        if node.op == "**" and not is_intlike(sig.args[1]):
            raise Untypable("float exponent")  # Numba would call libm pow
        node.ty = sig.return_type
    elif k == "un":
        node.ty = _resolve(UNOPS[node.op], tys).return_type
    elif k == "cast":
        (x,) = tys
        if _float_to_int_bounds(node.op, x):
            x = _TC.unify_types(x, types.float64)  # the guard's conditional expression
        node.ty = _resolve(CASTS[node.op], (x,)).return_type
    elif k == "call":
        node.ty = _resolve(CALLS[node.op], tys).return_type
    elif k == "ifexp":
        c, a, b = tys
        if not _cond_ok(node.kids[0]):
            raise Untypable("a constant condition")
        if not isinstance(types.unliteral(c), (types.Integer, types.Boolean, types.Float)):
            raise Untypable("condition")
        t = _TC.unify_types(a, b)
        if t is None:
            raise Untypable(f"unify {a} {b}")
        node.ty = t
    if not isinstance(types.unliteral(node.ty), (types.Integer, types.Float, types.Boolean)):
        raise Untypable(f"{node.ty}")
    if all(_is_const_leaf(leaf) for leaf in node.walk() if leaf.kind == "leaf"):
        raise Untypable("a constant expression")
    if node.kind == "bin" and node.op in ("//", "%") and not is_float(node.ty):
        if any(_nsw(n) for kid in node.kids for n in kid.walk()):
            # An operand that overflowed is poison in njit, and so are the zero and
            # MIN // -1 tests: LLVM drops them (x * y == 0 becomes x == 0 or y == 0;
            # x ** 2 is "non-negative") and the CPU traps (SIGFPE; seeds 604, 1696,
            # 1876, 1907 of earlier versions).
            raise Untypable("an integer division of a value that may overflow")
    if node.kind == "bin" and node.op in FLOAT_ARITH and is_float(node.ty) and not ZEROS:
        if any(maybe_zero(kid) for kid in node.kids):
            raise Untypable("a float op on a constant zero (lavapipe folds it wrongly)")
    return node.ty


# NVK_TYPEFUZZ_ZEROS=1: also generate float ops on zeros that constant folding can see.
# The compiler hides such zeros from lavapipe (kir/float_zeros.h), which folded them
# wrongly; the default keeps them out, as the recorded 5,000-seed figures did.
ZEROS = os.environ.get("NVK_TYPEFUZZ_ZEROS") == "1"

_CONST_LEAVES = ("np.nan", "np.inf")
FLOAT_ARITH = ("+", "-", "*", "/", "//", "%", "**")


COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def _nsw(node):
    """A signed `+ - * **`: Numba emits it with nsw, so its overflow is undefined."""
    ty = types.unliteral(node.ty)
    signed = isinstance(ty, types.Integer) and ty.signed
    return node.kind == "bin" and node.op in NSW_OPS and signed


def _is_const_leaf(node):
    return node.kind == "leaf" and (node.value is not None or node.op in _CONST_LEAVES)


def _cond_ok(node):
    """CPython's compiler drops a conditional expression's branch when the condition is a
    constant, also through `not` and nested conditionals: Numba then never sees it."""
    if node.kind == "leaf":
        return not _is_const_leaf(node)
    if node.kind == "un" and node.op == "not ":
        return _cond_ok(node.kids[0])
    if node.kind == "ifexp":
        return _cond_ok(node.kids[1]) and _cond_ok(node.kids[2])
    return True


def maybe_zero(node):
    """Whether the driver's constant folding may turn `node` into a constant zero.

    lavapipe (Mesa's gallivm) returns the other operand for `0.0 + x`, and zero
    for `0.0 * x` and `0.0 / x`, whatever x is (inf, NaN, -0.0), even with
    SignedZeroInfNanPreserve; the compiler now hides such zeros from it
    (kir/float_zeros.h), but a float op on a zero that folding can see is
    generated only under NVK_TYPEFUZZ_ZEROS=1. Conservative: identical operands of `-` `^` `%`
    or a comparison count as constant, so does any branch of a conditional.
    """
    k, op, kids = node.kind, node.op, node.kids
    if k == "leaf":
        return node.value is not None and node.value == 0
    if k == "bin":
        if op in ("-", "^", "%", "//", "<", "<=", ">", ">=", "==", "!=", "&", "|"):
            # x ^ x, also through no-op casts (x ^ np.uint64(x)): one input on both sides.
            inputs = [{n.op for n in kid.walk() if n.kind == "leaf" and not _is_const_leaf(n)}
                      for kid in kids]  # fmt: skip
            if len(inputs[0]) <= 1 and inputs[0] == inputs[1]:
                return True
        if op in ("*", "&"):
            return maybe_zero(kids[0]) or maybe_zero(kids[1])
        # Range analysis may decide a comparison with a constant (`u8 > 300`, `nan < x`),
        # or a shift or division by one (`u8 >> 9`, `u8 // 1000`), at compile time.
        if op in COMPARISONS or op in (">>", "//", "%"):
            if any(_is_const_leaf(kid) for kid in kids):
                return True
        if op == "%" and kids[1].value is not None and abs(kids[1].value) == 1:
            return True
        if op in ("+", "-", "|", "^"):
            return maybe_zero(kids[0]) and maybe_zero(kids[1])
        return maybe_zero(kids[0])  # / // % ** << >>: a zero numerator or base
    if k == "ifexp":
        return maybe_zero(kids[1]) or maybe_zero(kids[2])
    if k == "call" and op != "abs":
        return maybe_zero(kids[0]) and maybe_zero(kids[1])
    return maybe_zero(kids[0])  # unary, abs, casts


# ---------------------------------------------------------------- values

_FLOAT_SPECIAL = [
    0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 3.0, -7.0, 0.1, 1e-3, 2.0**24 + 1, 2.0**31, -(2.0**31),
    2.0**32, 2.0**53 + 1, 2.0**63, 2.0**64, 1e30, -1e30, 1e300, -1e300, 3.4e38, -3.4e38,
    1.1754944e-38, 2.2250738585072014e-308, float("inf"), float("-inf"), float("nan"),
]  # fmt: skip
_INT_SPECIAL = [0, 1, -1, 2, -2, 3, 7, -7, 100, 2**31, 2**31 - 1, -(2**31), 2**32, 2**32 - 1,
                2**53 + 1, 2**63 - 1, -(2**63), 2**63, 2**64 - 1]  # fmt: skip


def _boundaries(dtype):
    """Values that matter for `dtype`: 0, +-1, its min and max and their neighbours, 2^31 ..."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return [False, True]
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return [dtype.type(v) for v in _FLOAT_SPECIAL]
    info = np.iinfo(dtype)
    edges = [info.min, info.min + 1, info.max, info.max - 1, info.max // 2, info.min // 2]
    return [v for v in _INT_SPECIAL + edges if info.min <= v <= info.max]


def random_values(rng, dtype, n):
    """n values of `dtype`: boundaries first (shuffled in), then random bits and small numbers."""
    dtype = np.dtype(dtype)
    pool = _boundaries(dtype)
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.45:
            out.append(rng.choice(pool))
        elif r < 0.75:
            out.append(rng.randint(-12, 12) if dtype.kind in "if" else rng.randint(0, 12))
        elif dtype == np.bool_:
            out.append(rng.random() < 0.5)
        elif dtype.kind == "f":
            out.append(rng.choice([-1, 1]) * rng.random() * 10.0 ** rng.randint(-6, 12))
        else:
            info = np.iinfo(dtype)
            out.append(rng.randint(int(info.min), int(info.max)))
    with np.errstate(over="ignore"):
        return np.array(out, dtype=dtype) if dtype.kind != "b" else np.array(out, np.bool_)


def scalar_value(rng, ty):
    """A value for a scalar argument of type `ty` (a NumPy scalar type or int/float/bool)."""
    if ty is bool:
        return rng.random() < 0.5
    if ty is float:
        return float(random_values(rng, np.float64, 1)[0])
    if ty is int:  # Numba types a Python int that fits as int64
        return int(random_values(rng, np.int64, 1)[0])
    return random_values(rng, ty, 1)[0]


def numba_type_of_scalar(ty):
    return {int: types.int64, float: types.float64, bool: types.boolean}.get(ty) or (
        from_dtype(np.dtype(ty))
    )


# ---------------------------------------------------------------- the generator


@dataclass
class Program:
    seed: int
    arrays: list  # (name, dtype)
    scalars: list  # (name, type: a NumPy scalar type or int/float/bool)
    exprs: list  # Node per output
    features: set = field(default_factory=set)

    def out_dtypes(self):
        return [np.dtype(str(types.unliteral(e.ty))) if types.unliteral(e.ty) != types.boolean
                else np.dtype(np.bool_) for e in self.exprs]  # fmt: skip

    def params(self):
        outs = [f"out{k}" for k in range(len(self.exprs))]
        return [n for n, _ in self.arrays] + [n for n, _ in self.scalars] + outs

    def body(self, indent):
        return [f"{indent}out{k}[i] = {e.render()}" for k, e in enumerate(self.exprs)]

    def probes(self):
        """[(output, node, operand texts)] for each signed `+ - * **` (nsw in Numba)."""
        found = []
        for k, e in enumerate(self.exprs):
            for n in e.walk():
                if _nsw(n):
                    x, y = (kid.render() for kid in n.kids)
                    if n.op == "**" and not _small_literal(n.kids[1], 4):
                        y = f"({y} & 3)"
                    found.append((k, n, (x, y)))
        return found

    def probe_dtypes(self):
        """The probe arrays' dtypes: uint64 for unsigned operands, int64 for the others."""
        out = []
        for _, n, _ in self.probes():
            for kid in n.kids:
                t = types.unliteral(kid.ty)
                unsigned = isinstance(t, types.Integer) and not t.signed
                out.append(np.dtype(np.uint64 if unsigned else np.int64))
        return out

    def cpu_src(self):
        probes = [f"p{j}" for j in range(2 * len(self.probes()))]
        lines = [f"def fuzz_cpu({', '.join(self.params() + probes)}):",
                 "    for i in range(out0.size):"]  # fmt: skip
        for j, (_, _, (x, y)) in enumerate(self.probes()):
            lines += [f"        p{2 * j}[i] = {x}", f"        p{2 * j + 1}[i] = {y}"]
        return "\n".join(lines + self.body(" " * 8)) + "\n"

    def kernel_src(self):
        lines = [
            f"def fuzz_kernel({', '.join(self.params())}):",
            "    i = nv.global_id(0)",
            "    if i < out0.size:",
        ]
        return "\n".join(lines + self.body(" " * 8)) + "\n"

    def source(self):
        decl = ", ".join(f"{n}: {np.dtype(d).name}[]" for n, d in self.arrays)
        decl += "".join(f", {n}: {getattr(t, '__name__', t)}" for n, t in self.scalars)
        types_ = ", ".join(f"out{k}: {d.name}" for k, d in enumerate(self.out_dtypes()))
        return f"# seed {self.seed}: {decl}\n# outputs {types_}\n{self.kernel_src()}"


class _Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.features = set()
        rng = self.rng
        names = [n for n, _ in DTYPES]
        picked = rng.sample(names, rng.randint(3, 6))
        self.arrays = [(f"a_{n}", dict(DTYPES)[n]) for n in picked]
        self.scalars = [
            (f"s{k}", rng.choice(SCALAR_TYPES)) for k in range(rng.choice([0, 1, 1, 2, 3]))
        ]
        self.leaves = [Node("leaf", f"{n}[i]", ty=from_dtype(np.dtype(d)))
                       for n, d in self.arrays]  # fmt: skip
        self.leaves += [Node("leaf", n, ty=numba_type_of_scalar(t)) for n, t in self.scalars]

    def literal(self):
        rng = self.rng
        r = rng.random()
        if r < 0.5:
            v = rng.choice([0, 1, 2, 3, 5, -1, -3, 7, 63, 100])
        elif r < 0.65:
            v = rng.choice(_INT_SPECIAL)
        elif r < 0.72:
            v = rng.choice([True, False])
        else:
            v = rng.choice([0.5, -0.0, 1.5, -2.25, 3.0, 1e10, 1e300, 2.0**53, 0.1])
            if rng.random() < 0.1:
                return Node("leaf", rng.choice(["np.nan", "np.inf"]), ty=types.float64)
        text = repr(v) if not (isinstance(v, int) and v < 0) else f"({v})"
        ty = types.float64 if isinstance(v, float) else types.literal(v)
        return Node("leaf", text, ty=ty, value=v)

    def leaf(self):
        if self.rng.random() < 0.75:
            return self.rng.choice(self.leaves)
        return self.literal()

    def expr(self, depth):
        """A typable tree of at most `depth` levels (retries on Numba typing failures)."""
        for _ in range(20):
            node = self._try(depth)
            try:
                retype(node)
                return node
            except Untypable:
                continue
        return self.rng.choice(self.leaves)

    def _try(self, depth):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf()
        kind = rng.choice(["arith"] * 5 + ["bits"] * 2 + ["shift", "pow", "cmp", "cmp", "un",
                                                          "cast", "cast", "cast", "call", "ifexp"])
        sub = lambda: self.expr(depth - 1)  # noqa: E731
        if kind == "arith":
            op = rng.choice(["+", "-", "*", "/", "//", "%"])
            return self._note(Node("bin", op, (sub(), sub())))
        if kind == "bits":
            return self._note(Node("bin", rng.choice(["&", "|", "^"]), (sub(), sub())))
        if kind == "shift":
            count = Node("leaf", str(c), ty=types.literal(c), value=c) if (
                (c := rng.randint(0, 63)) and rng.random() < 0.5) else sub()
            return self._note(Node("bin", rng.choice(["<<", ">>"]), (sub(), count)))
        if kind == "pow":
            e = rng.randint(0, 4)
            exp = Node("leaf", str(e), ty=types.literal(e), value=e)
            return self._note(Node("bin", "**", (sub(), exp if rng.random() < 0.6 else sub())))
        if kind == "cmp":
            return self._note(Node("bin", rng.choice(["<", "<=", ">", ">=", "==", "!="]),
                                   (sub(), sub())))  # fmt: skip
        if kind == "un":
            return self._note(Node("un", rng.choice(["-", "-", "~", "not "]), (sub(),)))
        if kind == "cast":
            return self._note(Node("cast", rng.choice(list(CASTS)), (sub(),)))
        if kind == "call":
            f = rng.choice(["abs", "min", "max"])
            return self._note(Node("call", f, (sub(),) if f == "abs" else (sub(), sub())))
        return self._note(Node("ifexp", "", (sub(), sub(), sub())))

    def _note(self, node):
        self.features.add(f"{node.kind} {node.op.strip()}".strip())
        return node


def generate(seed):
    """The program of a seed (deterministic)."""
    g = _Gen(seed)
    rng = g.rng
    exprs = [g.expr(rng.randint(1, 4)) for _ in range(rng.randint(3, 6))]
    return Program(seed, g.arrays, g.scalars, exprs, g.features)
