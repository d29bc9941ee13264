"""The public API carries PEP 484 type hints (the package ships ``py.typed``): every function
of ``numba_vulkan.__all__`` and every public method and property of the public classes has
an annotation for each parameter and for its return, and ``typing.get_type_hints`` resolves
them (string annotations, ``from __future__ import annotations``, must name real things).
The in-kernel intrinsics (numba_vulkan/stubs.py) and the exception classes are left out."""

import dataclasses
import inspect
import typing

import pytest

import numba_vulkan as nv
from numba_vulkan.dispatcher import Dispatcher
from numba_vulkan.launch import LaunchConfig
from numba_vulkan.runtime import mapped_array

#: Public classes whose methods and properties are checked (DeviceInfo, a dataclass, is
#: checked by its fields).
CLASSES = (nv.DeviceArray, nv.Device, nv.Stream, nv.Event, Dispatcher, LaunchConfig)
#: Dunder methods that are part of the API (indexing, conversion, DLPack, construction).
DUNDERS = ("__init__", "__new__", "__getitem__", "__setitem__", "__len__", "__array__",
           "__dlpack__", "__dlpack_device__", "__call__")  # fmt: skip


def _ours(obj):
    """Defined in numba_vulkan's Python code (not in the C++ extension, not elsewhere)."""
    module = getattr(obj, "__module__", None) or ""
    return module.startswith("numba_vulkan") and module != "numba_vulkan._core"


def _public_functions():
    out = {}
    for name in nv.__all__:
        obj = getattr(nv, name)
        if inspect.isfunction(obj) and _ours(obj) and obj.__module__ != "numba_vulkan.stubs":
            out[f"nv.{name}"] = obj
    out["nv.runtime.mapped_array"] = mapped_array
    return out


def _members(cls):
    """{qualified name: function} of the public methods and property getters/setters that
    ``cls`` defines in numba_vulkan (its own or its mixins'; not object's, not C++'s)."""
    out = {}
    for klass in reversed(cls.__mro__):
        if not _ours(klass):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") and name not in DUNDERS:
                continue
            where = f"{cls.__name__}.{name}"
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                for part in ("fget", "fset"):
                    fn = getattr(value, part)
                    if fn is not None:
                        out[f"{where} ({part})"] = fn
            elif inspect.isfunction(value):
                out[where] = value
    return out


def _all_callables():
    found = _public_functions()
    for cls in CLASSES:
        found.update(_members(cls))
    return found


CALLABLES = _all_callables()


def test_the_survey_finds_the_api():
    names = set(CALLABLES)
    for expected in ("nv.jit", "nv.to_device", "nv.vectorize", "nv.get_device",
                     "DeviceArray.copy_to_host", "DeviceArray.sum", "DeviceArray.astype",
                     "DeviceArray.ndim (fget)", "Device.launch", "Device.timeout (fset)",
                     "Stream.synchronize", "Event.elapsed_time", "Dispatcher.forall",
                     "Dispatcher.inspect_kir", "Dispatcher.__getitem__"):  # fmt: skip
        assert expected in names


def _missing(fn):
    """What of `fn`'s signature has no annotation."""
    signature = inspect.signature(fn)
    missing = []
    params = list(signature.parameters.values())
    for position, p in enumerate(params):
        if position == 0 and p.name in ("self", "cls"):
            continue
        if p.annotation is inspect.Parameter.empty:
            missing.append(p.name)
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_annotated(name):
    fn = CALLABLES[name]
    missing = _missing(fn)
    assert not missing, f"{name}: no annotation for {', '.join(missing)}"
    hints = typing.get_type_hints(fn)  # names resolve
    assert "return" in hints


def test_device_info_fields_are_typed():
    hints = typing.get_type_hints(nv.DeviceInfo)
    assert {f.name for f in dataclasses.fields(nv.DeviceInfo)} <= set(hints)


def _protocol_members(proto):
    names = set(getattr(proto, "__annotations__", {}))
    names |= {n for n in vars(proto) if not n.startswith("_")}
    return {n for n in names if not n.startswith("_")}


def test_device_protocol_mirrors_device():
    """The modules below runtime/devices.py cannot import Device, so they annotate devices
    with the DeviceLike protocol: it lists Device's public surface, no more, no less."""
    from numba_vulkan.runtime.device_info import DeviceLike

    public = {n for klass in nv.Device.__mro__ if _ours(klass) for n in vars(klass)
              if not n.startswith("_")}  # fmt: skip
    public |= {n for n in typing.get_type_hints(nv.Device) if not n.startswith("_")}
    assert _protocol_members(DeviceLike) == public
    typing.get_type_hints(DeviceLike)
    for name, value in vars(DeviceLike).items():
        if inspect.isfunction(value) and not name.startswith("_"):
            assert not _missing(value), name
