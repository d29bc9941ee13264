"""typing/lean.py's OneCaptureWarnings gives the warnings of a type inference as Numba's
WarningsFixer does: the same ones, a constraint's kept under its line and deduplicated."""

import re
import warnings

import pytest
from numba.core import errors, types
from numba.core.typing.context import CallStack
from numba.extending import overload

import numba_vulkan as nv
from numba_vulkan.typing import lean, target


def _scenario(fixer, around):
    """Warnings raised as type inference raises them: outside constraints, in constraints
    (twice the same, as two rounds of propagation do), and in one that fails."""
    with around:
        warnings.warn("outside", errors.NumbaWarning)
        for _ in range(2):
            with fixer.catch_warnings(filename="k.py", lineno=3):
                warnings.warn("perf", errors.NumbaPerformanceWarning)
                warnings.warn("user", UserWarning)
            with fixer.catch_warnings(filename="k.py", lineno=4):
                warnings.warn("perf", errors.NumbaPerformanceWarning)
        with pytest.raises(ValueError):
            with fixer.catch_warnings(filename="k.py", lineno=5):
                warnings.warn("lost", errors.NumbaWarning)
                raise ValueError
        warnings.warn("outside again", DeprecationWarning)


def _emitted(make):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fixer, around = make()
        _scenario(fixer, around)
    return sorted((w.category.__name__, _plain(w.message), w.filename, w.lineno) for w in record)


def _plain(message):
    """The message without the ANSI highlighting NumbaWarning adds."""
    return re.sub(r"\x1b\[[0-9;]*m", "", str(message))


def test_same_warnings_as_numbas_fixer():
    def numbas():
        fixer = errors.WarningsFixer(errors.NumbaWarning)
        return fixer, fixer

    def ours():
        fixer = lean.OneCaptureWarnings(errors.NumbaWarning)
        return fixer, fixer.recording()

    theirs = _emitted(numbas)
    assert ("NumbaPerformanceWarning", "perf", "k.py", 3) in theirs
    assert _emitted(ours) == theirs


def _warning_function():
    """A new function whose @overload warns when typed (typings are remembered per function)."""

    def warns_when_typed(x):
        return x

    @overload(warns_when_typed, target="vulkan")
    def _warns_when_typed(x):
        warnings.warn("typed slowly", errors.NumbaPerformanceWarning)
        return lambda x: x * 2

    return warns_when_typed


def _kernel_warnings():
    fn = _warning_function()

    def k(out):
        out[0] = fn(out[1])

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        nv.jit(k).compile((types.Array(types.int64, 1, "C"),))
    return [(w.category, _plain(w.message), w.lineno) for w in record
            if issubclass(w.category, errors.NumbaWarning)]  # fmt: skip


def test_kernel_warnings_as_with_numbas_call_stack(monkeypatch):
    ours = _kernel_warnings()
    assert ours and all(m == "typed slowly" for _, m, _ in ours), ours
    monkeypatch.setattr(target.contexts()[0], "callstack", CallStack())
    assert _kernel_warnings() == ours
