"""typing/lean.py's LeanTypeInferer types globals and constants as Numba's TypeInferer does.

Each function of the corpus is typed twice by our pipeline, with Numba's TypeInferer and
with ours; the types of every variable and call, the return type, and the message of a
failed typing must be equal. The corpus has globals and constants of every kind that
LeanTypeInferer tells apart: literal-typed (int, bool, str), non-literal (modules,
classes, functions, device functions, floats, None), tuples and arrays (Numba's way).
"""

import math
import re

import numpy as np
import pytest
from numba.core import types
from numba.core.typeinfer import TypeInferer

import numba_vulkan as nv
from numba_vulkan.typing import lean, pipeline

G_INT = 7
G_BOOL = True
G_FLOAT = 2.5
G_F32 = np.float32(1.5)
G_COMPLEX = 1 + 2j
G_STR = "abc"
G_NONE = None
G_TUPLE = (1, 2, 3)
G_MIXED = (1, 2.5)
G_ARRAY = np.arange(4, dtype=np.float32)
G_LITERAL = types.literal(3)  # a Literal *type* as a value: Numba refuses it


@nv.jit
def _helper(x):
    return x * np.float32(2.0)


def _globals(a, x):
    a[0] = G_INT + G_FLOAT + G_F32 + x
    a[1] = math.sqrt(x) + np.float32(G_COMPLEX.real)
    if G_BOOL and G_NONE is None:
        a[2] = G_TUPLE[1] + G_MIXED[1] + G_ARRAY[2]
    a[3] = _helper(x) + min(x, 1.0) + abs(x)
    for k in range(G_INT):
        a[k] += k
    return None


def _string_global(a):
    if G_STR == "abc":  # a str global: Literal[str]
        a[0] = 1


def _constants(a, x):
    y = 1.5 * x + 3 - True
    z = (1, 2.0)
    s = "s"
    n = None
    c = 2j
    a[0] = y + z[1] + len(s) + (0 if n is None else 1) + c.imag
    a[1] = np.float32(x) / np.int32(4)


def _literal_type_global(a):
    a[0] = G_LITERAL


def _undefined_global(a):
    a[0] = NOT_DEFINED  # noqa: F821


def _modified_builtin(a):
    a[0] = range  # the test rebinds range in this module (Numba refuses a modified builtin)


def _typed(pyfunc, argtypes, numbas):
    """(variable types, call signatures, return type) or the error message, by our
    pipeline with Numba's TypeInferer (numbas) or with LeanTypeInferer."""
    lean_class = lean.LeanTypeInferer
    if numbas:
        lean.LeanTypeInferer = TypeInferer
    try:
        typed = pipeline.type_kernel(pyfunc, argtypes, pipeline.Options())
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, re.sub(r"\x1b\[[0-9;]*m", "", str(e))
    finally:
        lean.LeanTypeInferer = lean_class
    calls = sorted((str(node), str(sig)) for node, sig in typed.calltypes.items())
    return sorted((k, str(v)) for k, v in typed.typemap.items()), calls, str(typed.return_type)


ARRAY = types.float32[::1]


@pytest.mark.parametrize(
    "pyfunc,argtypes",
    [
        (_globals, (ARRAY, types.float32)),
        (_constants, (ARRAY, types.float32)),
        (_string_global, (ARRAY,)),
        (_literal_type_global, (ARRAY,)),
        (_undefined_global, (ARRAY,)),
        (_modified_builtin, (ARRAY,)),
    ],
)
def test_same_types_as_numbas_typeinferer(pyfunc, argtypes, monkeypatch):
    if pyfunc is _modified_builtin:
        monkeypatch.setitem(pyfunc.__globals__, "range", abs)  # typable, yet not range
    _typed(pyfunc, argtypes, numbas=True)  # whatever a first typing loads, loaded for both
    theirs = _typed(pyfunc, argtypes, numbas=True)
    assert _typed(pyfunc, argtypes, numbas=False) == theirs


def test_lean_typeinferer_is_used():
    seen = []
    original = lean.LeanTypeInferer.typeof_global

    def spy(self, *args):
        seen.append(type(self))
        return original(self, *args)

    lean.LeanTypeInferer.typeof_global = spy
    try:
        pipeline.type_kernel(_globals, (ARRAY, types.float32), pipeline.Options())
    finally:
        lean.LeanTypeInferer.typeof_global = original
    assert seen and set(seen) == {lean.LeanTypeInferer}


def test_no_literal_typing_error_for_plain_globals(monkeypatch):
    """The point of it: a kernel's modules, functions and floats raise no LiteralTypingError."""
    from numba.core import errors

    raised = []
    init = errors.LiteralTypingError.__init__

    def counting(self, *args, **kwargs):
        raised.append(args)
        init(self, *args, **kwargs)

    monkeypatch.setattr(errors.LiteralTypingError, "__init__", counting)

    def kernel(a, x):
        a[0] = _helper(x) + math.sqrt(x) + np.float32(2.5) + G_FLOAT

    pipeline.type_kernel(kernel, (ARRAY, types.float32), pipeline.Options())
    assert raised == []
