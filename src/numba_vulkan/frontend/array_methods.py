"""Array methods that give views, inside kernels: ``a.reshape(...)``, ``a.view(dtype)``.

``a.reshape(d0, d1, ...)`` or ``a.reshape((d0, d1, ...))`` of a C-contiguous array or view
(Numba's layout 'C'; Numba refuses the others at compile time or, for layout 'A', raises
when the array is not contiguous): a view over the same elements with the new extents and
C-order strides, as numba.njit gives. One negative extent is inferred from the size; more
than one, or a size that does not match, raise numba.njit's ValueError ("multiple negative
shape values", "total size of new array must be unchanged") at run time. Layouts other than
'C' are refused (a clear error, not a copy: NumPy's reshape of a non-contiguous array
copies, and Numba's raises).

``a.view(dtype)`` of an array argument (or a view of one) for integer and float dtypes of
the same itemsize: a view of the same geometry whose loads and stores reinterpret the
bits (Reinterpreted). Another itemsize (numba.njit changes the last extent), bool,
complex, record and float16 elements, shared/local/global arrays and atomics through such
a view are refused. ``a.copy()`` of an array of constant shape (local, shared, or a global
array frozen into the kernel) is a new local array of its elements; of other arrays it is
refused with the reason (an allocation of a size known only at run time).
"""

from numba.core import types

from .. import _core
from . import arith, status
from .errors import unsupported
from .inline import BoundMethod

Op = _core.Op


def method_name(fn_ty):
    key = getattr(fn_ty, "typing_key", None)
    if isinstance(key, str):
        return key.split(".")[-1]
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
        return key[1]
    return None


def lower(lo, expr, fn, fn_ty, sig):
    """Lower ``a.reshape(...)`` on an array or view; None for other calls."""
    from .arrays import ArrayArg

    if not (isinstance(fn, BoundMethod) and isinstance(fn.receiver[0], ArrayArg)):
        return None
    name = method_name(fn_ty)
    if name == "reshape":
        return _reshape(lo, fn.receiver[0], fn.receiver[1], expr, sig), sig.return_type
    if name == "view":
        return _view(lo, fn.receiver[0], fn.receiver[1], expr, sig), sig.return_type
    if name == "copy":
        return _copy(lo, fn.receiver[0], fn.receiver[1], expr, sig), sig.return_type
    return None


def _copy(lo, arr, ty, expr, sig):
    """``a.copy()`` of an array whose shape is a compile-time constant (a local or shared
    array, a global array frozen into the kernel): a new local array (C order) of its
    elements, as numba.njit's new array. Other arrays' copies would need a size known only
    at run time: refused."""
    from .local_arrays import LocalArray, _bind_builder
    from .loops import for_each
    from .views import View

    loc = expr.loc
    dims = getattr(arr, "dims", None)
    if isinstance(arr, View) or dims is None or getattr(arr, "dynamic", False):
        raise unsupported(
            f"the method '.copy()' of {ty} (a copy, an array of a size known only at run "
            "time: copy into a local or shared array of constant shape with a loop, or into "
            "an output array; copies of local, shared and global arrays are supported)",
            loc,
        )
    if not isinstance(ty.dtype, (types.Integer, types.Float, types.Boolean)):
        raise unsupported(f"the method '.copy()' of {ty} (bool, integer and float elements)",
                          loc)  # fmt: skip
    out = _bind_builder(LocalArray(lo, sig.return_type, tuple(dims), False, loc=loc), lo.b)
    for_each(lo, arr, lambda b, idx: out.store(b, list(idx), arr.load(b, list(idx), loc), loc))
    return out


class Reinterpreted:
    """The array argument `root` read as elements of another dtype of the same width: the
    root of the views ``a.view(dtype)`` gives, and of every view made of those (views.py
    root_of), whose loads and stores bitcast between `reinterpret` (the new dtype's kind)
    and the buffer's kind (View.load, View.store). Everything else is the argument's.
    `aliased` makes atomics refuse it (their pointer has the buffer's type)."""

    aliased = True

    def __init__(self, root, ty, reinterpret, compute):
        self._root = root
        self.ty = ty
        self.reinterpret = reinterpret
        self.compute = compute

    def __getattr__(self, name):
        return getattr(self._root, name)

    @property
    def written(self):
        return self._root.written

    @written.setter
    def written(self, value):
        if value:
            self._root.written = True


def _view(lo, arr, ty, expr, sig):
    """``a.view(dtype)`` of an array argument or a view of one, for integer and float
    dtypes of the buffer's width (numba.njit's view of another itemsize changes the last
    extent: refused)."""
    from numba.np.numpy_support import as_dtype

    from .arrays import ArrayArg
    from .types import compute_kind, storage_kind
    from .views import View, geometry, root_of

    loc = expr.loc
    out_ty = sig.return_type
    what = f"the method '.view()' of {ty} as {out_ty.dtype}"
    scalar = (types.Integer, types.Float)
    if not (isinstance(ty.dtype, scalar) and isinstance(out_ty.dtype, scalar)):
        raise unsupported(f"{what} (integer and float element types only)", loc)
    if ty.dtype == types.float16 or out_ty.dtype == types.float16:
        raise unsupported(f"{what} (float16 elements)", loc)
    if as_dtype(ty.dtype).itemsize != as_dtype(out_ty.dtype).itemsize:
        raise unsupported(f"{what} (a view of another itemsize)", loc)
    root = root_of(arr, loc)
    if getattr(root, "reinterpret", None) is not None:
        root = root._root  # a view of a view: of the argument itself
    if type(root) is not ArrayArg:
        raise unsupported(f"{what} of a shared, local or global array", loc)
    kind = storage_kind(out_ty.dtype, lo.mode, loc)
    itemsize = as_dtype(out_ty.dtype).itemsize
    if not _core.memory_bytes(kind) == _core.memory_bytes(root.storage) == itemsize:
        raise unsupported(f"{what} where the kernel stores the elements narrowed", loc)
    cache = lo.__dict__.setdefault("reinterpreted", {})  # one root per argument and dtype
    key = (id(root), out_ty.dtype)
    if key not in cache:
        cache[key] = Reinterpreted(root, types.Array(out_ty.dtype, root.ndim, root.ty.layout),
                                   kind, compute_kind(out_ty.dtype, lo.mode, loc))  # fmt: skip
    offset, extents, strides = geometry(lo.b, arr)
    return View.make(lo, cache[key], out_ty, offset, extents, strides)


def _extents(lo, expr, sig, ik):
    """The requested extents as values of `ik` (loaded now: the statement's own block)."""
    b = lo.b
    if len(expr.args) == 1 and isinstance(sig.args[0], types.BaseTuple):
        values = lo.load_var(expr.args[0].name)
        values = list(values) if isinstance(values, (tuple, list)) else [values]
    else:
        values = [lo.load_var(a.name) for a in expr.args]
    return [arith.convert(b, v, ik) for v in values]


def _reshape(lo, arr, ty, expr, sig):
    from .exceptions import site
    from .views import View, geometry, root_of

    loc = expr.loc
    out_ty = sig.return_type
    if ty.layout != "C":
        raise unsupported(f"'.reshape()' of a {ty.layout}-layout array ({ty}): only "
                          "C-contiguous arrays are reshaped in kernels", loc)  # fmt: skip
    if not 1 <= out_ty.ndim <= 3:
        raise unsupported(f"'.reshape()' to {out_ty.ndim} dimensions (1 to 3)", loc)
    root = root_of(arr, loc)
    b = lo.b
    ik = arr.index_kind

    def solve():
        dims = _extents(lo, expr, sig, ik)
        size = arr.size(b, ik)
        zero, one = arith.const(b, ik, 0), arith.const(b, ik, 1)
        known, count = one, zero
        negative = [b.compare(Op.lt, d, zero) for d in dims]
        for d, neg in zip(dims, negative):
            known = b.binary(Op.mul, known, b.select(neg, one, d))
            count = b.binary(Op.add, count, b.select(neg, one, zero))
        no_known = b.compare(Op.eq, known, zero)
        divisor = b.select(no_known, one, known)
        inferred = b.select(no_known, zero, b.binary(Op.div, size, divisor))
        fits = b.select(no_known, b.compare(Op.eq, size, zero), b.compare(
            Op.eq, b.binary(Op.rem, size, divisor), zero))  # fmt: skip
        one_unknown = b.compare(Op.eq, count, one)
        ok = b.select(one_unknown, fits, b.compare(Op.eq, size, known))
        multiple = b.compare(Op.gt, count, one)
        dims = [b.select(neg, inferred, d) for d, neg in zip(dims, negative)]
        return dims, multiple, b.unary(Op.not_, ok)

    _, multiple, bad = solve()
    status.check(lo, multiple, site(lo, ValueError, ("multiple negative shape values",), loc))
    _, _, bad = solve()  # values do not cross blocks: computed again after each check
    status.check(lo, bad, site(lo, ValueError, ("total size of new array must be unchanged",),
                               loc))  # fmt: skip
    dims, _, _ = solve()
    offset = geometry(b, arr)[0]
    strides = [arith.const(b, ik, 1)]
    for d in reversed(dims[1:]):
        strides.insert(0, b.binary(Op.mul, strides[0], d))
    return View.make(lo, root, out_ty, offset, dims, strides)
