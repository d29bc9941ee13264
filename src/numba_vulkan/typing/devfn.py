"""Typing of calls to device functions: ``@nv.jit`` and ``@numba.njit`` functions in kernels.

Numba types a call to a dispatcher through its ``types.Dispatcher`` type,
which asks the dispatcher for a call template. For Vulkan every callable
jitted function (ours or numba.njit's) is mapped by
``VulkanTypingContext.resolve_value_type`` to one typing-only
``OverloadDispatcher`` of its Python function: the callee is typed with our
pipeline for the Vulkan target (so njit helpers are *recompiled* for Vulkan,
never run through Numba's CPU code generator), and the front end inlines its
typed IR at each call (frontend/inline.py, docs/device-functions.md).

Recursion, direct or mutual, cannot be inlined. ``check_not_recursive``
refuses, at typing time, to type a function that is being typed (any cycle,
also through ``@overload``); after a failed typing, ``check_cycles`` looks for
a cycle in the functions a kernel names, so the error names the cycle and the
kernel's line. A recursive call in code that Numba prunes before typing (a
dead branch) is never typed, so it is no error.
"""

import builtins
import dis
import threading

from numba.core import ir

from .. import checks
from ..errors import VulkanUnsupportedError

_local = threading.local()
_typer = None  # typing/pipeline.py's type_kernel with default options (set_typer)


def set_typer(typer):
    """Register how a function is typed for Vulkan: ``typer(py_func, argtypes)`` returns its
    TypedKernel. typing/pipeline.py does, when imported (it sits above the typing context,
    which makes the OverloadDispatchers that call it)."""
    global _typer
    _typer = typer


def type_function(py_func, argtypes):
    """Type `py_func` for `argtypes` with the registered typer (a recursive call raises)."""
    check_not_recursive(py_func)
    return _typer(py_func, argtypes)


def typing_stack():
    """The Python functions being typed in this thread, outermost (the kernel) first."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _name(func):
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


def check_not_recursive(py_func):
    """Raise VulkanUnsupportedError if `py_func` is already being typed in this thread."""
    stack = typing_stack()
    if py_func in stack:
        cycle = stack[stack.index(py_func):] + [py_func]
        raise VulkanUnsupportedError(
            f"recursion is not supported in Vulkan kernels: '{_name(py_func)}' calls itself "
            f"({' -> '.join(_name(f) for f in cycle)}); device functions are inlined"
        )


#: The classes of numba_vulkan's own jit dispatchers. numba_vulkan.dispatcher
#: registers its Dispatcher here when it is imported: typing does not import the
#: dispatcher, which builds on it.
JIT_CLASSES = []


def register_jit_class(cls):
    """Make instances of `cls` (a jit dispatcher class) device functions when called."""
    if cls not in JIT_CLASSES:
        JIT_CLASSES.append(cls)


def is_nv_jitted(obj):
    """Whether `obj` is an @nv.jit dispatcher."""
    return isinstance(obj, tuple(JIT_CLASSES))


def is_jitted(obj):
    """Whether `obj` is an @nv.jit or a numba.njit/jit dispatcher (a device function here)."""
    from numba.core.dispatcher import Dispatcher as NumbaDispatcher

    return is_nv_jitted(obj) or isinstance(obj, NumbaDispatcher)


def origin_options(origin):
    """The options of the user's dispatcher that matter when it is inlined: a dict with
    fastmath, boundscheck, debug and error_model (None where the user did not set it)."""
    if is_nv_jitted(origin):
        opts = origin.options
        return {
            "fastmath": bool(opts["fastmath"]),
            "boundscheck": bool(opts["boundscheck"]),
            "debug": bool(opts["debug"]),
            "error_model": opts["error_model"],
        }
    opts = getattr(origin, "targetoptions", {}) or {}
    return {
        "fastmath": bool(checks.fastmath_option(opts.get("fastmath", False))),
        "boundscheck": bool(opts.get("boundscheck", False)),
        "debug": bool(opts.get("debug", False)),
        # njit's default is 'python'; only an explicit choice is compared with the kernel's.
        "error_model": opts.get("error_model"),
    }


# ---------------------------------------------------------------- cycles, before typing


def _loaded_names(code):
    """(name, line) for every global or free variable `code` loads, in order."""
    line = code.co_firstlineno
    for instr in dis.get_instructions(code):
        positions = getattr(instr, "positions", None)
        if positions is not None and positions.lineno is not None:
            line = positions.lineno
        elif instr.starts_line is not None:
            line = instr.starts_line
        if instr.opname in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLOSURE"):
            yield instr.argval, line


def _callees(py_func):
    """(jitted callee, its Python function, line) for each jitted function `py_func` names."""
    code = getattr(py_func, "__code__", None)
    if code is None:
        return
    # Most functions call no jitted function: then the bytecode need not be read.
    names = (*code.co_names, *code.co_freevars)
    if not any(is_jitted(lookup_name(py_func, name)) for name in names):
        return
    seen = set()
    for name, line in _loaded_names(code):
        if name in seen:
            continue
        seen.add(name)
        value = lookup_name(py_func, name)
        if is_jitted(value):
            yield value.py_func, line


def check_cycles(kernel_func):
    """Raise VulkanUnsupportedError if a function `kernel_func` calls (at any depth) is recursive.

    The error names the cycle and carries the kernel's line that starts the chain of calls.
    """
    filename = getattr(getattr(kernel_func, "__code__", None), "co_filename", None)
    path = [kernel_func]
    lines = []
    done = set()

    def visit(func):
        for callee, line in _callees(func):
            if callee in path:
                cycle = path[path.index(callee):] + [callee]
                where = ir.Loc(filename, lines[0] if lines else line)
                raise VulkanUnsupportedError(
                    f"recursion is not supported in Vulkan kernels: '{_name(callee)}' calls "
                    f"itself ({' -> '.join(_name(f) for f in cycle)}); device functions are "
                    "inlined into the kernel",
                    loc=where,
                ) from None  # raised in place of the failed typing's error
            if callee in done:
                continue
            path.append(callee)
            lines.append(line)
            visit(callee)
            path.pop()
            lines.pop()
            done.add(callee)

    visit(kernel_func)


#: What lookup_name returns for a name the function cannot see.
MISSING = object()


def lookup_name(pyfunc, name):
    """The value `name` has in `pyfunc` (a free variable, a global or a builtin), else MISSING."""
    code = getattr(pyfunc, "__code__", None)
    closure = getattr(pyfunc, "__closure__", None) or ()
    if code is not None and name in code.co_freevars:
        try:
            return closure[code.co_freevars.index(name)].cell_contents
        except (IndexError, ValueError):
            return MISSING
    value = getattr(pyfunc, "__globals__", {}).get(name, MISSING)
    if value is MISSING:
        value = getattr(builtins, name, MISSING)
    return value
