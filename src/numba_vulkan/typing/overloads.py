"""Typing of ``@overload`` implementations for the Vulkan target.

Numba types a call to an overloaded function (``min``, ``max``, NumPy
functions, user ``@overload(f, target="vulkan")`` ...) by compiling the
implementation its overload returns with the target's jit decorator and asking
the resulting dispatcher for a call template. For Vulkan that dispatcher only
*types* the implementation with our pipeline (Numba's front half, no code):
the front end lowers the call itself, or (later) lowers the implementation's
typed IR kept here as a device function.
"""

import weakref

from numba.core import typing, utils
from numba.core.typing.templates import fold_arguments

from . import devfn

_by_origin = weakref.WeakKeyDictionary()  # user's dispatcher -> OverloadDispatcher


class OverloadDispatcher:
    """A typing-only dispatcher for one ``@overload`` implementation (or device function).

    The front end inlines the typed IR kept in ``overloads`` at each call
    (frontend/inline.py). ``is_compiling`` is always False: recursion is
    refused by ``compile`` (and before typing, by typing/devfn.py), so
    Numba's recursive-call typing is never needed.
    """

    _can_compile = True
    is_compiling = False

    def __init__(self, py_func, jit_options, origin=None):
        self.py_func = py_func
        self.jit_options = dict(jit_options)
        self.origin = origin  # the user's object (nv.jit / numba.njit dispatcher), or None
        self._pysig = utils.pysignature(py_func)
        self.overloads = {}  # argument types -> pipeline.TypedKernel
        # (argument types as the call gives them) -> the call's signature: Numba's type
        # inference resolves each call several times while types settle, and building the
        # call template and matching it cost more than typing the call once (target.py).
        self.resolved = {}

    def __repr__(self):
        return f"<numba_vulkan overload {getattr(self.py_func, '__qualname__', self.py_func)}>"

    def get_function_type(self):
        """None: no one function type, as for Numba's dispatchers that may still compile
        (Numba's typing of a tuple holding the function asks)."""

    @property
    def nopython_signatures(self):
        return [typing.signature(t.return_type, *args) for args, t in self.overloads.items()]

    def _fold(self, args, kws):
        def normal(index, param, value):
            return value

        def default(index, param, default):
            from numba.core import types

            return types.Omitted(default)

        def stararg(index, param, values):
            from numba.core import types

            return types.StarArgTuple(values)

        return fold_arguments(self._pysig, args, kws, normal, default, stararg)

    def compile(self, argtypes):
        """Type the implementation for ``argtypes`` (once); returns its TypedKernel."""
        argtypes = tuple(argtypes)
        typed = self.overloads.get(argtypes)
        if typed is None:
            typed = devfn.type_function(self.py_func, argtypes)
            self.overloads[argtypes] = typed
        return typed

    def get_call_template(self, args, kws):
        from numba.core import types

        args = tuple(self._fold(tuple(args), kws))
        if self.origin is not None:
            # A device function: one specialisation per argument type, not per literal value.
            args = tuple(types.unliteral(a) for a in args)
        self.compile(args)
        template = typing.make_concrete_template(
            f"CallTemplate({self.py_func.__name__})",
            key=self.py_func.__name__,
            signatures=self.nopython_signatures,
        )
        return template, self._pysig, args, {}

    def get_overload(self, argtypes):
        return self.overloads[tuple(argtypes)]


def device_function(obj):
    """The typing-only dispatcher for jitted function `obj` (created once), or None."""
    if not devfn.is_jitted(obj):
        return None
    try:
        found = _by_origin.get(obj)
    except TypeError:  # not weakly referenceable
        found = None
    if found is None:
        found = OverloadDispatcher(obj.py_func, {}, origin=obj)
        try:
            _by_origin[obj] = found
        except TypeError:
            pass
    return found
