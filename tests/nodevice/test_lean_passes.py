"""typing/lean_passes.py gives the IR Numba's TranslateByteCode and GenericRewrites give.

Each function of the corpus is translated twice (Numba's Interpreter and ours),
then rewritten twice (Numba's rewrite registry and ours), and the IR dumps must
be equal; the corpus has the constructs each skipped step looks for, so a
skip that loses a rewrite shows as a difference.
"""

import builtins
import io

import numpy as np
import pytest
from numba.core import bytecode, compiler, interpreter, postproc, rewrites
from numba.core.errors import UnsupportedBytecodeError
from numba.core.rewrites import ir_print, static_getitem

from numba_vulkan.typing import lean_passes

_print_alias = print


class _Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _arith(a, b):
    if a > b:
        return a - b
    return np.float32(b) * 2.0


def _loop(x):
    acc = 0.0
    for k in range(4):
        acc += x * k
    return min(max(acc, -1.0), 1.0)


def _const_items(a, x):
    a[1] = a[0] + x
    return (a[2], x**2, x**3.5)


def _prints(x):
    print(x, 1)
    _print_alias(x)
    builtins.print("b")
    return x


def _raises(x):
    if x < 0:
        raise ValueError("negative", 3)
    return x


def _with_block(x):
    with _Ctx():
        y = x + 1
    return y


def _star_call(f, args, kws):
    return f(*args, **kws)


def _many_keywords(f, x):  # CPython calls with CALL_FUNCTION_EX beyond 15 keywords
    return f(
        k0=x, k1=x, k2=x, k3=x, k4=x, k5=x, k6=x, k7=x, k8=x, k9=x, k10=x, k11=x, k12=x,
        k13=x, k14=x, k15=x, k16=x,
    )


def _dict_merge(a):
    return {**a, "k": 1}


def _named_like_peephole(d):
    d._update_from_bytecode(1)
    return d


CORPUS = [
    _arith,
    _loop,
    _const_items,
    _prints,
    _raises,
    _with_block,
    _star_call,
    _many_keywords,
    _dict_merge,
    _named_like_peephole,
]

MATCHABLE = [f for f in CORPUS if f not in (_star_call, _dict_merge)]  # Numba refuses those


def _dump(func_ir):
    out = io.StringIO()
    func_ir.dump(file=out)
    return out.getvalue()


def _translate(func, interp_class):
    func_id = bytecode.FunctionIdentity.from_function(func)
    return interp_class(func_id).interpret(bytecode.ByteCode(func_id=func_id))


def _translated(func, interp_class):
    """The IR's dump, or the error Numba's translation refuses the function with."""
    try:
        return _dump(_translate(func, interp_class))
    except UnsupportedBytecodeError as e:
        return f"{type(e).__name__}: {e}"


def _rewritten(func, apply):
    func_ir = _translate(func, interpreter.Interpreter)
    postproc.PostProcessor(func_ir).run()
    state = compiler.StateDict()
    state.func_ir, state.typemap, state.calltypes = func_ir, None, None
    state.func_id, state.args = func_ir.func_id, ()
    apply(state)
    return _dump(func_ir)


@pytest.mark.parametrize("func", CORPUS, ids=lambda f: f.__name__)
def test_translation_equals_numbas(func):
    theirs = _translated(func, interpreter.Interpreter)
    assert _translated(func, lean_passes.LeanInterpreter) == theirs


@pytest.mark.parametrize("func", MATCHABLE, ids=lambda f: f.__name__)
def test_rewrites_equal_numbas(func):
    theirs = _rewritten(func, lambda s: rewrites.rewrite_registry.apply("before-inference", s))
    assert _rewritten(func, lean_passes._apply_rewrites) == theirs


def _scan(func):
    func_ir = _translate(func, interpreter.Interpreter)
    postproc.PostProcessor(func_ir).run()
    return lean_passes._Scan(func_ir), func_ir


@pytest.mark.parametrize("func", MATCHABLE, ids=lambda f: f.__name__)
def test_skips_only_what_cannot_match(func):
    scan, func_ir = _scan(func)
    state = compiler.StateDict()
    state.func_ir, state.typemap, state.calltypes = func_ir, None, None
    for cls in rewrites.rewrite_registry.rewrites["before-inference"]:
        if lean_passes._may_match(cls, scan, func_ir):
            continue
        rewrite = cls(state)
        for block in func_ir.blocks.values():
            assert not rewrite.match(func_ir, block, None, None), (cls, func)


def test_skips_happen():
    scan, func_ir = _scan(_loop)
    for cls in rewrites.rewrite_registry.rewrites["before-inference"]:
        expected = cls not in lean_passes._KNOWN_REWRITES
        assert lean_passes._may_match(cls, scan, func_ir) is expected, cls
    scan, func_ir = _scan(_const_items)
    assert lean_passes._may_match(static_getitem.RewriteConstGetitems, scan, func_ir)
    assert lean_passes._may_match(static_getitem.RewriteConstSetitems, scan, func_ir)
    assert not lean_passes._may_match(ir_print.RewritePrintCalls, scan, func_ir)
    scan, func_ir = _scan(_prints)
    assert lean_passes._may_match(ir_print.RewritePrintCalls, scan, func_ir)
    # ir.Print nodes appear only once RewritePrintCalls has run
    assert not lean_passes._may_match(ir_print.DetectConstPrintArguments, scan, func_ir)


def test_each_print_spelling_is_found():
    for name, callee in (("print", print), ("alias", _print_alias), ("module", builtins.print)):
        assert callee is print, name
    ours = _rewritten(_prints, lean_passes._apply_rewrites)
    assert ours.count("print(") == 3, ours
