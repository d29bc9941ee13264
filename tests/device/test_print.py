"""print in kernels (frontend/printing.py, runtime/reports.py): records in the status
buffer, printed at synchronisation in launch order, formatted as numba.njit prints the
same values; a full buffer reports how many records it lost."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import _core, runtime, sites
from numba_vulkan.runtime import reports

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def prints_everything(a, n, f, g, flag):
    print("ints", n, np.int8(-3), np.uint8(250), np.int16(-300), np.uint32(4000000000))
    print("big", np.int64(-(2**62)), np.uint64(2**64 - 1), np.int32(-(2**31)))
    print("floats", f, g, np.float32(1e20), np.float32(-0.0), 1e-7, 123456789.0)
    print("special", np.inf, -np.inf, np.nan, 1.0 / 3.0, np.float32(1.0) / np.float32(3.0))
    print("bools", flag, not flag, n > 3)
    print("tuples", (n, f), (g,), ((n, flag), 2.5), a[0])
    print()
    print("only a string")


ARGS = (np.array([1.25]), np.int64(-42), np.float32(0.1), 2.5e300, True)


def test_print_of_each_type_matches_numba_njit(device, capsys):
    numba.njit(prints_everything)(*ARGS)
    expected = capsys.readouterr().out
    nv.jit(prints_everything)[1, 1](*ARGS)  # NumPy arguments: the launch reports
    assert capsys.readouterr().out == expected
    assert "0.10000000149011612" in expected  # float32 prints as the double it boxes to


@nv.jit
def numbered(out, k):
    i = nv.global_id(0)
    if i < out.size:
        print("launch", k, "invocation", i)


def test_print_order_follows_launch_order(device, capsys):
    out = nv.to_device(np.zeros(4, np.int32))
    for k in range(6):
        numbered.forall(4)(out, k)  # asynchronous
    assert capsys.readouterr().out == ""  # nothing before a synchronisation
    device.synchronize()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 24
    launches = [int(line.split()[1]) for line in lines]
    assert launches == sorted(launches)  # invocations of one launch may come in any order
    for k in range(6):
        assert sorted(lines[4 * k: 4 * k + 4]) == [f"launch {k} invocation {i}" for i in range(4)]
    device.synchronize()
    assert capsys.readouterr().out == ""  # printed once


@nv.jit
def print_then_raise(out):
    i = nv.global_id(0)
    if i == 0:
        print("before", i)
        raise ValueError("after printing")


def test_records_print_before_the_exception_is_raised(device, capsys):
    out = nv.to_device(np.zeros(1, np.int32))
    print_then_raise.forall(1)(out)
    with pytest.raises(ValueError, match="after printing"):
        out.copy_to_host()
    assert capsys.readouterr().out == "before 0\n"


@nv.jit
def many(out):
    i = nv.global_id(0)
    if i < out.size:
        print(i)


def test_overflow_is_reported_never_silent(device, capsys):
    capacity = reports.print_words()
    per_record = sites.record_words(2)  # header + one int64
    n = capacity // per_record + 1000
    out = nv.to_device(np.zeros(n, np.int8))
    many.forall(n)(out)
    device.synchronize()
    lines = capsys.readouterr().out.splitlines()
    printed = [int(x) for x in lines[:-1]]
    assert len(printed) == capacity // per_record
    assert len(set(printed)) == len(printed) and all(0 <= v < n for v in printed)
    lost = n - len(printed)
    assert lines[-1].startswith(f"numba_vulkan: {lost} print record(s) lost")
    many.forall(10)(out[:10])  # the buffer is empty again
    device.synchronize()
    assert sorted(int(x) for x in capsys.readouterr().out.split()) == list(range(10))


def test_print_buffer_words_can_be_lowered(device, capsys, monkeypatch):
    """runtime.PRINT_BUFFER_WORDS set smaller: in effect from the next report on."""
    out = nv.to_device(np.zeros(100, np.int8))
    many.forall(1)(out[:1])
    device.synchronize()  # makes the buffer if this process has none yet, and resets it
    monkeypatch.setattr(runtime, "PRINT_BUFFER_WORDS", 64)
    many.forall(1)(out[:1])
    device.synchronize()  # the reset takes the new size
    capsys.readouterr()
    many.forall(100)(out)
    device.synchronize()
    lines = capsys.readouterr().out.splitlines()
    fit = 64 // sites.record_words(2)
    assert len(lines) == fit + 1 and lines[-1].startswith(f"numba_vulkan: {100 - fit} print")
    monkeypatch.undo()
    many.forall(1)(out[:1])
    device.synchronize()  # back to the size the buffer was made with
    assert reports.status(device).words[sites.PRINT_AREA + 1] == reports.print_words()


def test_print_records_decodes_a_buffer(device, capsys):
    numbered.forall(2)(nv.to_device(np.zeros(2, np.int32)), 7)
    words = reports.status(device).words
    device._core.synchronize()
    area = words[sites.PRINT_AREA:].copy()
    runtime.print_records(area)
    runtime.print_records(area[: sites.PRINT_HEADER])  # the header only: cursor past the end
    device.synchronize()  # the hook prints the same records
    out = capsys.readouterr().out.splitlines()
    assert sorted(out[:2]) == ["launch 7 invocation 0", "launch 7 invocation 1"]
    assert sorted(out[-2:]) == sorted(out[:2])
    with pytest.raises(TypeError):
        runtime.print_records(np.zeros((2, 2), np.uint32))


def test_kernels_that_do_not_print_or_raise_take_no_status_buffer(device):
    @nv.jit
    def plain(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = i

    out = nv.to_device(np.zeros(4, np.int32))
    plain.forall(4)(out)
    spec = next(iter(plain._specialisations.values()))
    assert not spec.compiled.sites and not spec.compiled.hidden
    assert isinstance(spec.launcher, _core.Launcher)  # the bare C++ launcher: nothing added


def test_unreported_output_is_flushed_at_exit(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "unreported.py"
    script.write_text(
        "import numpy as np, numba_vulkan as nv\n"
        "@nv.jit\n"
        "def k(out):\n"
        "    if nv.global_id(0) == 0:\n"
        "        print('printed at exit')\n"
        "        raise KeyError('never synchronized')\n"
        "k.forall(1)(nv.to_device(np.zeros(1)))\n"  # asynchronous, never synchronised
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout == "printed at exit\n"
    assert "KeyError" in r.stderr and "never synchronized" in r.stderr


@nv.jit
def print_helper(x):
    print("helper", x)
    return x + 1


@nv.jit
def loop_with_prints(out, n):
    if nv.global_id(0) == 0:
        s = 0
        for j in range(n):
            s += print_helper(j)
            if s > 5:
                raise ArithmeticError("sum too large")
        out[0] = s


def test_print_in_a_device_function_inside_a_loop(device, capsys):
    out = np.zeros(1)
    loop_with_prints[1, 1](out, 2)
    assert out[0] == 3 and capsys.readouterr().out == "helper 0\nhelper 1\n"
    with pytest.raises(ArithmeticError, match="sum too large"):
        loop_with_prints[1, 1](out, 10)  # 1 + 2 + 3 > 5: raises after the third print
    assert capsys.readouterr().out == "helper 0\nhelper 1\nhelper 2\n"
