"""``nv.atomic.*``: atomic read-modify-write on one element of a global or shared array.

Each returns the element's old value. The operation runs on the element as
it lies in memory (its storage kind) and the old value is converted to the
dtype's compute kind. What runs on the device:

- 32- and 64-bit integers: add, sub, min, max, and_, or_, xor, exch and cas
  are native atomics (64-bit ones need the device's int64_atomics;
  ``VulkanSupportError`` without them, as no narrower operation can stand in).
- inc and dec (CUDA's atomicInc/atomicDec, which SPIR-V lacks) and every
  float operation the device has no native instruction for are a
  compare-and-swap loop on the element's bits: read the old value, compute
  the new one, swap if unchanged, else retry.
- float32 add is native where the device has ``float32_atomic_add``
  (VK_EXT_shader_atomic_float), a CAS loop elsewhere; float64 add is always
  a CAS loop (DeviceInfo does not report float64 atomic add). float sub is
  the add of the negated value (exact in IEEE arithmetic); exch swaps the
  bits. ``NUMBA_VULKAN_ATOMIC_CAS=1`` forces the loops (tests use it).
- min and max follow Python's ``min(old, val)``/``max(old, val)``: the old
  value stays unless val is strictly smaller/greater, so a NaN ``val`` is
  ignored and a NaN element stays NaN. Integer min/max compare by the
  dtype's signedness. nanmin and nanmax (numba.cuda's) treat NaN as missing:
  a NaN val changes nothing, a NaN element is replaced; on integers they are
  min and max. compare_and_swap(ary, expected, val) is cas on element 0.

A float CAS loop needs an integer view of the element: free for global arrays
(the same address read as uint32/uint64); shared float arrays that such an
atomic writes are held as integer bits by local_arrays.py.
"""

import os

from numba.core import types

from .. import _core, errors, stubs
from . import arith
from .arrays import ArrayArg, index_values
from .errors import unsupported
from .types import compute_kind, is_float, is_signed

Op = _core.Op
K = _core.Kind
A = _core.AtomicOp

_NATIVE_INT = {"add": A.add, "sub": A.sub, "min": A.min, "max": A.max, "and_": A.and_,
               "or_": A.or_, "xor": A.xor, "exch": A.exch}
_INT_OF = {K.f32: K.u32, K.f64: K.u64}
_STUB_NAMES = {stub: name for name, stub in stubs.atomic._members.items()}


def stub_name(fn):
    """"add", "cas" ... for an atomic stub, else None."""
    try:
        return _STUB_NAMES.get(fn)
    except TypeError:  # unhashable callee
        return None


def force_cas():
    return os.environ.get("NUMBA_VULKAN_ATOMIC_CAS", "") not in ("", "0")


def native_float_add(lowerer, dtype):
    """Whether a float atomic add of `dtype` is one native instruction on this device."""
    return (
        isinstance(dtype, types.Float)
        and dtype.bitwidth == 32
        and getattr(lowerer.mode, "float32_atomic_add", True)
        and not force_cas()
    )


def _atomic_indices(lowerer, arr, idx_var, loc):
    """The index values of an atomic's ``idx``: as for ``arr[idx]``, except that a tuple's
    float members are converted to intp first (truncated toward zero), as numba.cuda's
    atomics convert every index of a tuple to intp."""
    idx_ty = lowerer.typemap[idx_var.name]
    if not (isinstance(idx_ty, types.BaseTuple)
            and any(isinstance(t, types.Float) for t in idx_ty.types)):
        return index_values(lowerer, arr, idx_var, idx_ty, loc)
    values = list(lowerer.load_var(idx_var.name))
    ik = compute_kind(types.intp, lowerer.mode, loc)
    return [arith.convert(lowerer.b, v, ik) if isinstance(t, types.Float) else v
            for v, t in zip(values, idx_ty.types)]


def lower_atomic(lowerer, fn, expr, sig, target):
    b, loc = lowerer.b, expr.loc
    name = stub_name(fn)
    ary_var, idx_var = expr.args[0], expr.args[1]
    arr = lowerer.statics.get(ary_var.name)
    if not isinstance(arr, ArrayArg):
        raise unsupported(f"atomic.{name} on {lowerer.typemap[ary_var.name]}", loc)
    if getattr(arr, "shared", True) is False:
        raise unsupported(f"atomic.{name} on a local array (it is private to its invocation: "
                          "use plain operations)", loc)
    if getattr(getattr(arr, "root", arr), "reinterpret", None) is not None:
        raise unsupported(f"atomic.{name} on a.view(dtype) (its memory holds another dtype: "
                          "array_methods.py)", loc)  # fmt: skip
    if getattr(getattr(arr, "root", arr), "aliased", False):
        raise unsupported(f"atomic.{name} on a dynamic shared array when the kernel has "
                          "another of a different dtype aliasing it (local_arrays.py)", loc)
    dtype = sig.return_type
    ck = compute_kind(dtype, lowerer.mode, loc)
    if name == "compare_and_swap":  # numba.cuda's cas on element 0 of a 1-d array
        name = "cas"
        indices = [arith.const(b, arr.index_kind, 0)]
        values = [lowerer.load_cast(v, dtype) for v in expr.args[1:]]
    else:
        indices = _atomic_indices(lowerer, arr, idx_var, loc)
        values = [lowerer.load_cast(v, dtype) for v in expr.args[2:]]
    mk = arr.storage if not getattr(arr, "bits", False) else arr.value_kind  # the value's kind
    if arith.BITS.get(mk, 0) not in (32, 64):
        raise unsupported(f"atomic.{name} on {dtype} arrays", loc)
    if arith.BITS[mk] == 64 and not getattr(lowerer.mode, "int64_atomics", True):
        raise errors.VulkanSupportError(
            f"atomic.{name} on {dtype} needs 64-bit atomics (int64_atomics), which the device "
            f"lacks (at {loc.filename}:{loc.line})" if loc else
            f"atomic.{name} on {dtype} needs 64-bit atomics (int64_atomics), which the device lacks"
        )
    values = [arith.convert(b, v, mk) for v in values]
    lowerer.atomics_used = True
    arr.written = True

    if is_float(mk):
        if name == "add" and native_float_add(lowerer, dtype) and not getattr(arr, "bits", False):
            old = b.atomic(A.add, [arr.element_ptr(b, indices, loc), values[0]])
            return arith.convert(b, old, ck), dtype
        if name == "sub" and native_float_add(lowerer, dtype) and not getattr(arr, "bits", False):
            old = b.atomic(A.add, [arr.element_ptr(b, indices, loc), b.unary(Op.neg, values[0])])
            return arith.convert(b, old, ck), dtype
        if name == "exch":
            ik = _INT_OF[mk]
            old = b.atomic(A.exch, [_int_ptr(arr, b, indices, loc), b.bitcast(ik, values[0])])
            return arith.convert(b, b.bitcast(mk, old), ck), dtype
        update = {"add": _f_add, "sub": _f_sub, "min": _min, "max": _max,
                  "nanmin": _nanmin, "nanmax": _nanmax}.get(name)
        if update is None:
            raise unsupported(f"atomic.{name} on {dtype} arrays", loc)
        return arith.convert(b, _cas_loop(lowerer, arr, indices, values, mk, update, loc), ck), dtype

    if name == "cas":
        expected, value = values
        old = b.atomic(A.cas, [arr.element_ptr(b, indices, loc), expected, value])
        return arith.convert(b, old, ck), dtype
    name = {"nanmin": "min", "nanmax": "max"}.get(name, name)  # no NaN among integers
    if name in _NATIVE_INT:
        old = b.atomic(_NATIVE_INT[name], [arr.element_ptr(b, indices, loc), values[0]])
        return arith.convert(b, old, ck), dtype
    update = {"inc": _inc, "dec": _dec}[name]
    return arith.convert(b, _cas_loop(lowerer, arr, indices, values, mk, update, loc), ck), dtype


def _int_ptr(arr, b, indices, loc):
    """A pointer to the element as an integer of its width (float CAS loops and exch)."""
    if getattr(arr, "bits", False):
        return arr.element_ptr(b, indices, loc)
    if hasattr(arr, "var"):  # a shared float array not held as bits: cannot happen (local_arrays)
        raise unsupported("this float atomic on a shared array", loc)
    return _global_int_ptr(arr, b, indices, loc)


def _global_int_ptr(arr, b, indices, loc):
    saved = arr.storage
    arr.storage = _INT_OF[saved]
    try:
        return arr.element_ptr(b, indices, loc)
    finally:
        arr.storage = saved


# New values from (builder, old, value, kind); integers for inc/dec, floats for the rest.

def _f_add(b, old, v, k):
    return b.binary(Op.add, old, v)


def _f_sub(b, old, v, k):
    return b.binary(Op.sub, old, v)


def _min(b, old, v, k):
    return b.select(b.compare(Op.lt, v, old), v, old)


def _max(b, old, v, k):
    return b.select(b.compare(Op.gt, v, old), v, old)


def _nanmin(b, old, v, k):
    # numba.cuda's nanmin: a NaN val changes nothing, a NaN element takes val
    take = arith.logical_or(b, b.compare(Op.lt, v, old), b.compare(Op.ne, old, old))
    return b.select(b.compare(Op.ne, v, v), old, b.select(take, v, old))


def _nanmax(b, old, v, k):
    take = arith.logical_or(b, b.compare(Op.gt, v, old), b.compare(Op.ne, old, old))
    return b.select(b.compare(Op.ne, v, v), old, b.select(take, v, old))


def _inc(b, old, v, k):
    wrap = b.compare(Op.ge, old, v)
    return b.select(wrap, arith.const(b, k, 0), b.binary(Op.add, old, arith.const(b, k, 1)))


def _dec(b, old, v, k):
    zero = arith.const(b, k, 0)
    wrap = arith.logical_or(b, b.compare(Op.eq, old, zero), b.compare(Op.gt, old, v))
    return b.select(wrap, v, b.binary(Op.sub, old, arith.const(b, k, 1)))


def _cas_loop(lowerer, arr, indices, values, k, update, loc):
    """The compare-and-swap loop: returns the old value (kind k)."""
    b = lowerer.b
    ik = _INT_OF.get(k, k)
    # KIR values do not cross blocks: indices, operand and result travel in variables.
    idx_ptrs = []
    for idx in indices:
        p = b.var(b.kind(idx))
        b.store(p, idx)
        idx_ptrs.append(p)
    val_ptr = b.var(k)
    b.store(val_ptr, values[0])
    old_ptr = b.var(k)
    retry_ptr = b.var(K.bool)
    b.store(retry_ptr, arith.const(b, K.bool, True))
    # A while loop that tests at the top: the structurizer then merges the loop at its
    # exit block, so the code after it (barriers included) is outside the loop construct.
    tag = f"cas{b.current_block}"
    header, body, done = (b.create_block(f"{tag}.{p}") for p in ("header", "body", "done"))
    b.br(header)
    b.set_block(header)
    b.condbr(b.load(retry_ptr), body, done)
    b.set_block(body)
    idx = [b.load(p) for p in idx_ptrs]
    ptr = _int_ptr(arr, b, idx, loc) if ik != k else arr.element_ptr(b, idx, loc)
    old_bits = b.load(ptr)
    old = b.bitcast(k, old_bits) if ik != k else old_bits
    new = update(b, old, b.load(val_ptr), k)
    new_bits = b.bitcast(ik, new) if ik != k else new
    got = b.atomic(A.cas, [ptr, old_bits, new_bits])
    b.store(old_ptr, b.bitcast(k, got) if ik != k else got)
    b.store(retry_ptr, b.compare(Op.ne, got, old_bits))
    b.br(header)
    b.set_block(done)
    return b.load(old_ptr)


__all__ = ["lower_atomic", "native_float_add", "stub_name", "is_signed"]
