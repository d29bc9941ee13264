"""A table of bad inputs across the public API (issue 10, item 4).

Each entry calls one public function with one bad argument. It must raise
TypeError, ValueError, OverflowError, MemoryError or one of numba_vulkan's
exception classes (IndexError too, for indexing, as NumPy does), never
nanobind's "incompatible function arguments", an AttributeError from deep
inside, or nothing at all; and the message must name the argument. After the
whole table, a real kernel still runs and gives the right answer.
"""

import math
import re

import numpy as np
import pytest
from numba.core import types

import numba_vulkan as nv
from numba_vulkan import errors
from numba_vulkan.runtime import DeviceArray

OURS = (
    errors.VulkanSupportError,
    errors.VulkanUnsupportedError,
    errors.VulkanError,
    errors.SpirvCodegenError,
)
CLEAR = (TypeError, ValueError, OverflowError, MemoryError, *OURS)
INDEXING = (*CLEAR, IndexError)


@nv.jit
def _fill(out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = i


def _device():
    return nv.get_device()


def _arr(n=4, dtype=np.int32):
    return nv.to_device(np.arange(n, dtype=dtype))


def _words():
    compiled = _fill.compile("void(int32[::1])", device=_device())
    return compiled


def _recorded_event():
    return nv.event().record()


# ---------------------------------------------------------------- the table

CASES = []  # (id, callable, accepted exception classes, regex the message must contain)


def case(name, fn, match, accepted=CLEAR):
    CASES.append((name, fn, accepted, match))


# Values that are not counts, and what each must raise where a count is expected.
NOT_INTS = [
    ("float", 2.5, TypeError),
    ("nan", math.nan, TypeError),
    ("inf", math.inf, TypeError),
    ("None", None, TypeError),
    ("str", "88", TypeError),
    ("bytes", b"8", TypeError),
    ("dict", {}, TypeError),
    ("object", object(), TypeError),
    ("complex", 1j, TypeError),
    ("bool", True, TypeError),
    ("np.float32", np.float32(3), TypeError),
    ("float array", np.array([2.0]), TypeError),
]
NEGATIVE = [("neg", -1, ValueError), ("np.neg", np.int64(-7), ValueError)]
HUGE = [("2**70", 2**70, OverflowError), ("2**32", 2**32, OverflowError)]

# (name, callable taking the bad value, message regex, which groups of values apply)
INT_ARGUMENTS = [
    ("forall.extent", lambda v: _fill.forall(v), "extent", ("not", "neg", "huge2")),
    ("forall.extent[1]", lambda v: _fill.forall((4, v)), "extent", ("not", "neg", "huge2")),
    ("forall.local_size", lambda v: _fill.forall(8, local_size=v), "local_size",
     ("not", "neg", "huge", "no None")),
    ("kernel.groups", lambda v: _fill[v, 64], "groups", ("not", "neg", "huge")),
    ("kernel.local_size", lambda v: _fill[1, v], "local_size", ("not", "neg", "huge")),
    ("kernel.groups.tuple", lambda v: _fill[(1, v), (8, 8)], "groups", ("not", "neg", "huge")),
    ("device_array.shape", lambda v: nv.device_array(v, np.int32), "shape", ("not", "neg")),
    ("device_array.shape[1]", lambda v: nv.device_array((2, v)), "shape", ("not", "neg")),
    ("pinned_array.shape", lambda v: nv.pinned_array(v), "shape", ("not", "neg")),
    ("Device.trim", lambda v: _device().trim(v), "limit", ("not", "neg", "huge2")),
    ("Device.pool_limit", lambda v: setattr(_device(), "pool_limit", v), "pool_limit",
     ("not", "neg", "huge2")),
    ("Device.load_kernel.push_size",
     lambda v: _device().load_kernel(_words().words, v), "push_size", ("not", "neg", "huge")),
    ("Device.launch.groups",
     lambda v: _device().launch(_words(), v, [_arr()]), "groups", ("not", "neg", "huge")),
    ("Device.launch.local_size",
     lambda v: _device().launch(_words(), 1, [_arr()], b"", v), "local_size",
     ("not", "neg", "huge", "no None")),
    ("DeviceArray.reshape", lambda v: _arr().reshape(v), "shape", ("not",)),
    ("DeviceArray.reshape[1]", lambda v: _arr().reshape((2, v)), "shape", ("not",)),
]  # fmt: skip

for api, fn, match, groups in INT_ARGUMENTS:
    values = []
    if "not" in groups:
        values += NOT_INTS
    if "neg" in groups:
        values += NEGATIVE
    if "huge" in groups:
        values += HUGE
    if "huge2" in groups:
        values += [("2**70", 2**70, OverflowError)]
    for label, value, error in values:
        if label == "None" and "no None" in groups:
            continue  # None means the default there
        case(f"{api}={label}", (lambda f, v: lambda: f(v))(fn, value), match, (error,))

# Huge shapes: exact sizes, never a wrapped-around small array.
for shape in [(2**33, 2**31), (2**62, 4), (2**40, 2**40, 2**40), 2**63]:
    case(f"device_array{shape}", (lambda s: lambda: nv.device_array(s))(shape), "shape",
         (MemoryError,))  # fmt: skip
    case(f"pinned_array{shape}", (lambda s: lambda: nv.pinned_array(s))(shape), "shape",
         (MemoryError,))  # fmt: skip
case("forall 2**40 groups", lambda: _fill.forall(2**40 * 64), "extent", (OverflowError,))
case("forall too many dims", lambda: _fill.forall((1, 2, 3, 4)), "extent", (TypeError,))
case("forall empty", lambda: _fill.forall(()), "extent", (TypeError,))
case("forall 2-d array", lambda: _fill.forall(np.ones((2, 2), np.int64)), "extent", (TypeError,))

# Device choices.
BAD_DEVICES = [
    ("float", 2.5), ("neg", -1), ("99", 99), ("name", "no-such-device-anywhere"),
    ("bytes", b"0"), ("list", [0]), ("object", object()), ("bool", True),
]  # fmt: skip
DEVICE_ARGUMENTS = [
    ("get_device", lambda v: nv.get_device(v)),
    ("select_device", lambda v: nv.select_device(v)),
    ("device_array", lambda v: nv.device_array(4, device=v)),
    ("to_device", lambda v: nv.to_device(np.ones(3), device=v)),
    ("device_array_like", lambda v: nv.device_array_like(np.ones(3), device=v)),
    ("stream", lambda v: nv.stream(v)),
    ("event", lambda v: nv.event(v)),
    ("pinned_array", lambda v: nv.pinned_array(4, device=v)),
    ("forall", lambda v: _fill.forall(4, device=v)),
    ("compile", lambda v: _fill.compile("void(int32[::1])", device=v)),
    ("synchronize", lambda v: nv.synchronize(v)),
]
for api, fn in DEVICE_ARGUMENTS:
    for label, value in BAD_DEVICES:
        case(f"{api}.device={label}", (lambda f, v: lambda: f(v))(fn, value), "[Dd]evice")
for label, value in [("float", 2.5), ("name", "no-such-device"), ("object", object())]:
    case(f"kernel[1, 1, {label}]", (lambda v: lambda: _fill[1, 1, v])(value), "device|stream")

# Streams.
for label, value in [("int", 5), ("str", "s"), ("float", 2.5), ("object", object())]:
    v = value
    case(f"to_device.stream={label}", (lambda v: lambda: nv.to_device(np.ones(2), stream=v))(v),
         "stream")  # fmt: skip
    case(f"copy_to_host.stream={label}", (lambda v: lambda: _arr().copy_to_host(stream=v))(v),
         "stream")  # fmt: skip
    case(f"copy_to_device.stream={label}",
         (lambda v: lambda: _arr().copy_to_device(np.arange(4), stream=v))(v), "stream")
    case(f"Event.record.stream={label}", (lambda v: lambda: nv.event().record(v))(v), "stream")
    case(f"forall.stream={label}", (lambda v: lambda: _fill.forall(4, stream=v))(v), "stream")
    case(f"launch_stream.stream={label}",
         (lambda v: lambda: _device().launch_stream(v, _words(), 1, [_arr()]))(v), "stream")

# Host data that cannot become device arrays.
BAD_HOST = [
    ("str", "abc"), ("None", None), ("object", object()), ("ragged", [1, [2, 3]]),
    ("dict", {"a": 1}), ("complex256", np.array([1 + 2j], np.clongdouble)), ("strings", np.array(["a", "b"])),
    ("datetime", np.array(["2020-01-01"], dtype="M8[D]")), ("objects", np.array([1, None])),
    ("void", np.zeros(2, dtype="V4")),
]  # fmt: skip
for label, value in BAD_HOST:
    case(f"to_device({label})", (lambda v: lambda: nv.to_device(v))(value), "array|dtype")
    case(f"copy_to_device({label})", (lambda v: lambda: _arr(2).copy_to_device(v))(value),
         "array|dtype|shape")  # fmt: skip
for label, dtype in [("object", object), ("complex256", np.clongdouble), ("str", "U3"),
                     ("datetime", "M8[s]"), ("nonsense", "nonsense"), ("int", 5),
                     ("void", "V8"), ("float128", np.longdouble)]:  # fmt: skip
    case(f"device_array.dtype={label}", (lambda d: lambda: nv.device_array(4, d))(dtype), "dtype")
    case(f"pinned_array.dtype={label}", (lambda d: lambda: nv.pinned_array(4, d))(dtype), "dtype")
for label, value in [("int", 5), ("list", [1, 2]), ("None", None), ("str", "x")]:
    case(f"device_array_like({label})", (lambda v: lambda: nv.device_array_like(v))(value),
         "array")  # fmt: skip

# copy_to_host(out=...).
_ro = np.zeros(4, np.int32)
_ro.flags.writeable = False
BAD_OUT = [
    ("list", [0, 0, 0, 0]), ("shape", np.zeros(5, np.int32)), ("dtype", np.zeros(4, np.int64)),
    ("strided", np.zeros(8, np.int32)[::2]), ("read-only", _ro),
    ("big-endian", np.zeros(4, ">i4")), ("2-d", np.zeros((2, 2), np.int32)), ("int", 3),
]  # fmt: skip
for label, out in BAD_OUT:
    case(f"copy_to_host(out={label})", (lambda o: lambda: _arr().copy_to_host(out=o))(out), "out")

# Indexing and views.
for label, key in [("float", 1.5), ("str", "a"), ("float list", [0.5, 1]),
                   ("float array", np.array([0.0])), ("index array out of range", np.array([4])),
                   ("mask of another shape", np.array([True, False])),
                   ("out of range", 10), ("negative out of range", -10), ("too many", (0, 0)),
                   ("str list", ["a"]), ("float in tuple", (1.5,))]:  # fmt: skip
    case(f"getitem[{label}]", (lambda k: lambda: _arr()[k])(key), "ind|bound|axis|array",
         INDEXING)  # fmt: skip
    case(f"setitem[{label}]", (lambda k: lambda: _arr().__setitem__(k, 1))(key),
         "ind|bound|axis|array", INDEXING)  # fmt: skip
for label, value in [("str", "abc"), ("None", None), ("too long", np.arange(3)),
                     ("object", object())]:  # fmt: skip
    case(f"setitem value={label}", (lambda v: lambda: _arr().__setitem__(0, v))(value), "value")
    case(f"setitem slice value={label}",
         (lambda v: lambda: _arr().__setitem__(slice(0, 2), v))(value), "value|shape|array")
case("reshape wrong size", lambda: _arr().reshape(3), "reshape")
case("reshape two -1", lambda: _arr().reshape(-1, -1), "reshape")
case("reshape strided", lambda: _arr(8).reshape(2, 4)[:, ::3].reshape(4), "reshape|cop")
for label, axes in [("repeat", (0, 0)), ("float", (2.5,)), ("out of range", (5,)),
                    ("too few", (0,)), ("str", ("a", "b"))]:  # fmt: skip
    case(f"transpose{label}",
         (lambda a: lambda: nv.device_array((2, 2), np.int32).transpose(a))(axes), "axes")
case("len of 0-d", lambda: len(nv.device_array((), np.int32)), "0-d")

# Events.
case("Event.synchronize unrecorded", lambda: nv.event().synchronize(), "event.*record")
case("Event.elapsed_time unrecorded", lambda: _recorded_event().elapsed_time(nv.event()),
     "record")  # fmt: skip
for label, value in [("int", 5), ("None", None), ("str", "e")]:
    case(f"Event.elapsed_time({label})",
         (lambda v: lambda: _recorded_event().elapsed_time(v))(value), "end")
    case(f"event_elapsed_time({label}, e)",
         (lambda v: lambda: nv.event_elapsed_time(v, _recorded_event()))(value), "start")

def _renamed_entry(words):
    """A valid module whose entry point is called 'kern' instead of 'main'."""
    raw = bytearray(words.tobytes())
    at = raw.index(b"main\0")
    raw[at : at + 4] = b"kern"
    return np.frombuffer(bytes(raw), np.uint32)


# Raw SPIR-V.
_garbage = np.array([0x07230203, 0x00010500, 0, 10, 0, 0xFFFFFFFF, 7], np.uint32)
BAD_WORDS = [
    ("3 bytes", b"abc"), ("zeros", np.zeros(8, np.uint32)), ("float32", np.ones(8, np.float32)),
    ("str", "OpCapability Shader"), ("None", None), ("garbage after header", _garbage),
    ("int64", np.ones(8, np.int64)), ("list", [0x07230203, 0, 0, 0, 0]),
    ("truncated", lambda: _words().words[:40]),
    ("no entry point main", lambda: _renamed_entry(_words().words)),
]  # fmt: skip
for label, words in BAD_WORDS:
    case(f"load_kernel({label})",
         (lambda w: lambda: _device().load_kernel(w() if callable(w) else w, 0))(words), "words")
case("load_kernel push_size 2", lambda: _device().load_kernel(_words().words, 2), "push_size")
case("load_kernel push_size 4096", lambda: _device().load_kernel(_words().words, 4096),
     "push_size")  # fmt: skip

# Device.launch / run.
case("launch kernel=5", lambda: _device().launch(5, 1, []), "kernel")
case("launch kernel=str", lambda: _device().launch("k", 1, []), "kernel")
case("launch arrays=5", lambda: _device().launch(_words(), 1, 5), "arrays")
case("launch arrays=[object]", lambda: _device().launch(_words(), 1, [object()]), "array")
case("launch push=5", lambda: _device().launch(_words(), 1, [_arr()], 5), "push")
case("run arrays=[list]", lambda: _device().run(_words(), 1, [[1, 2]]), "arrays")
case("run arrays=None", lambda: _device().run(_words(), 1, None), "arrays")
case("launch groups > max_groups (raw SPIR-V)",
     lambda: _device().launch(_words(), _device().info.max_groups[0] + 1, [_arr()]), "max_groups")

# Launch configurations and kernel calls.
for label, cfg in [("one", (4,)), ("five", (1, 2, 3, 4, 5)), ("str", "a"), ("int", 4),
                   ("4-d groups", ((1, 2, 3, 4), 64)), ("str groups", ("a", 64)),
                   ("float local", (1, 2.0)), ("str local item", (1, (8, "8"))),
                   ("zero local", (1, 0)), ("None groups", (None, 64)),
                   ("dict groups", ({}, 64))]:  # fmt: skip
    case(f"kernel[{label}]", (lambda c: lambda: _fill[c])(cfg), "launch configuration|groups|"
         "local_size")  # fmt: skip
case("local_size over device limit", lambda: _fill.forall(8, local_size=4096)(_arr(8)),
     "local size")  # fmt: skip
case("local_size 3-d over limit", lambda: _fill[1, (64, 64, 64)](_arr(8)), "local size")
case("kernel called directly", lambda: _fill(_arr()), "launch configuration")
case("kernel too few args", lambda: _fill.forall(4)(), "argument")
case("kernel too many args", lambda: _fill.forall(4)(_arr(), _arr()), "argument")
case("kernel keyword args", lambda: _fill.forall(4)(out=_arr()), "argument|keyword")
for label, value in [("list", [1, 2]), ("dict", {}), ("str", "abc"), ("None", None),
                     ("object", object()), ("datetime array", np.zeros(2, "M8[s]")),
                     ("0-d array", np.array(3)), ("strings", np.array(["a"])),
                     ("set", {1})]:  # fmt: skip
    case(f"kernel arg {label}", (lambda v: lambda: _fill.forall(4)(v))(value), "argument")

# jit options and compile().
for label, opts in [("fastmath str", {"fastmath": "yes"}), ("boundscheck int", {"boundscheck": 1}),
                    ("cache str", {"cache": "no"}), ("debug None", {"debug": None}),
                    ("device str", {"device": "gpu"}), ("inline", {"inline": "sometimes"}),
                    ("error_model", {"error_model": "c"}), ("narrow", {"narrow": "all"}),
                    ("unknown", {"unknown": 1}), ("opt", {"opt": 3})]:  # fmt: skip
    name = next(iter(opts))
    case(f"jit({label})", (lambda o: lambda: nv.jit(**o)(lambda x: None))(opts), name)
case("jit(5)", lambda: nv.jit(5), "function")
case("jit('f')", lambda: nv.jit("f"), "function")
for label, sig in [("nonsense", "nonsense("), ("unknown type", "void(float33[:])"),
                   ("list of ints", [1, 2]), ("int", 5), ("tuple with int", (types.float32, 5)),
                   ("None", None)]:  # fmt: skip
    case(f"compile({label})", (lambda s: lambda: _fill.compile(s))(sig), "argtypes|type")
case("compile(mode=5)", lambda: _fill.compile("void(int32[::1])", mode=5), "mode")


def test_the_table_has_at_least_200_bad_inputs():
    assert len(CASES) >= 200, len(CASES)
    assert len({c[0] for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize(("fn", "accepted", "match"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_bad_input(device, fn, accepted, match):
    with pytest.raises(Exception) as info:  # noqa: PT011 (checked below)
        fn()
    exc = info.value
    assert isinstance(exc, accepted), f"{type(exc).__name__}: {exc}"
    text = str(exc)
    assert "incompatible function arguments" not in text, text
    assert re.search(match, text), f"{match!r} not in {text!r}"


def test_the_process_stays_usable_after_the_table(device):
    """Every case of the table again, then a real kernel: the device still computes."""
    for _, fn, _, _ in CASES:
        try:
            fn()
        except Exception:  # noqa: S110 (each is checked by test_bad_input)
            pass
    nv.select_device(device)
    out = nv.device_array(1000, np.int32)
    _fill.forall(1000)(out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(1000))
    assert device.pool_limit >= 0


def test_big_endian_arrays_are_converted(device):
    """Big-endian host data means the same numbers: it is converted, never refused or garbled."""
    host = np.arange(10, dtype=">i4")
    d = nv.to_device(host)
    assert d.dtype == np.dtype(np.int32)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(10))
    out = np.zeros(10, ">f8")
    _fill.forall(10)(out)  # a NumPy argument: copied in and back
    np.testing.assert_array_equal(out, np.arange(10))
    e = nv.device_array(3, ">f4")
    assert e.dtype == np.dtype(np.float32)


def test_lists_are_accepted_like_tuples(device):
    launch = _fill.forall(64, local_size=[32])
    assert launch.local_size == (32, 1, 1) and launch.groups == (2, 1, 1)
    assert _fill[[2], [32]].groups == (2, 1, 1)
    out = nv.device_array(64, np.int32)
    _fill[[2], [32]](out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(64))


def test_numba_vulkan_debug_yes_does_not_break_import():
    """A malformed environment variable warns and uses the default; import still works."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    package_root = str(Path(nv.__file__).resolve().parents[1])  # the numba_vulkan under test
    code = "import numba_vulkan, numba_vulkan.config as c; print('DEBUG', c.DEBUG)"
    for value, expected in [("yes", "1"), ("off", "0"), ("maybe", "0")]:
        env = dict(os.environ, NUMBA_VULKAN_DEBUG=value, PYTHONPATH=package_root)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           check=False)  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert f"DEBUG {expected}" in r.stdout
        if value == "maybe":
            assert "NUMBA_VULKAN_DEBUG" in r.stderr  # a warning names the variable


@pytest.mark.parametrize("level", ["1", "2"])
def test_invalid_spirv_is_refused_before_the_validation_layer(device, level):
    """At NUMBA_VULKAN_DEBUG=1/2 invalid SPIR-V used to crash inside the validation layer."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = """
import numpy as np, numba_vulkan as nv
d = nv.get_device()
bad = np.array([0x07230203, 0x00010500, 0, 10, 0, 0xFFFFFFFF, 7, 1, 2, 3], np.uint32)
for words in (bad, bad[:6], np.concatenate([bad[:5], np.zeros(4, np.uint32)])):
    try:
        d.load_kernel(words, 0)
    except ValueError as e:
        assert "words" in str(e), e
    else:
        raise SystemExit("accepted invalid SPIR-V")
out = nv.device_array(8, np.int32)
@nv.jit
def k(o):
    i = nv.global_id(0)
    if i < o.size:
        o[i] = i
k.forall(8)(out)
assert list(out.copy_to_host()) == list(range(8))
print("SURVIVED")
"""
    package_root = str(Path(nv.__file__).resolve().parents[1])
    env = dict(os.environ, NUMBA_VULKAN_DEBUG=level, PYTHONPATH=package_root)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=False)  # fmt: skip
    assert r.returncode == 0 and "SURVIVED" in r.stdout, r.stdout + r.stderr
