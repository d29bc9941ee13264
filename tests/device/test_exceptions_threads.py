"""A kernel's exception belongs to the thread that launched it: reported by that thread's
synchronisation, never by another's (each thread has its own status buffer and launchers,
runtime/reports.py); one no thread reports is a warning at exit."""

import threading

import numpy as np
import pytest
from conftest import run_python

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


@nv.jit
def _raises(out):
    if nv.global_id(0) == 0:
        raise ValueError("B's error")
    out[0] = 1


@nv.jit
def _clean(out):
    out[nv.global_id(0)] = 2


@nv.jit
def _prints_or_raises(flag, out):
    if flag[0] == 1 and nv.global_id(0) == 0:
        raise KeyError("only when asked")
    out[nv.global_id(0)] = 3


def test_an_exception_reaches_the_launching_thread_only():
    wrong = []
    for _ in range(20):
        res = {}
        start = threading.Barrier(2)

        def clean():
            d = nv.device_array(64, np.int32)
            start.wait()
            try:
                for _ in range(20):
                    _clean.forall(64)(d)
                    _prints_or_raises.forall(64)(np.zeros(1, np.int32), d)
                nv.synchronize()
                res["a"] = "ok"
            except Exception as e:  # noqa: BLE001 - the test reports what arrived
                res["a"] = repr(e)

        def raising():
            d = nv.device_array(64, np.int32)
            start.wait()
            try:
                _raises.forall(1)(d)
                _prints_or_raises.forall(64)(np.ones(1, np.int32), d)
                nv.synchronize()
                res["b"] = "no error"
            except (ValueError, KeyError) as e:
                res["b"] = type(e).__name__
                try:  # the second exception of the same thread: reported next
                    nv.synchronize()
                except (ValueError, KeyError):
                    pass

        threads = [threading.Thread(target=clean), threading.Thread(target=raising)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if res.get("a") != "ok" or res.get("b") not in ("ValueError", "KeyError"):
            wrong.append(res)
    assert not wrong, wrong


def test_the_main_thread_is_not_told_of_a_worker_s_exception():
    box = {}

    def worker():
        d = nv.device_array(1, np.int32)
        _raises.forall(1)(d)
        try:
            d.copy_to_host()  # a copy reports what this thread launched
        except ValueError as e:
            box["worker"] = str(e)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    nv.synchronize()  # nothing for this thread
    assert "B's error" in box["worker"]


def test_an_exception_never_reported_is_a_warning_at_exit():
    code = (
        "import threading, numpy as np, numba_vulkan as nv\n"
        "@nv.jit\n"
        "def bad(out):\n"
        "    if nv.global_id(0) == 0:\n"
        "        raise ValueError('never reported')\n"
        "    out[0] = 1\n"
        "t = threading.Thread(target=lambda: bad.forall(1)(nv.device_array(1, np.int32)))\n"
        "t.start(); t.join()\n"
    )
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "never reported" in r.stderr and "before exit" in r.stderr
