"""The launch side of hidden arrays (frontend/hidden.py): constant buffers, global
device arrays and the status buffer, as values of the kernel's hidden parameters.

A kernel that reads a large global NumPy array, or a global DeviceArray, or that
raises or prints (the status buffer, frontend/status.py), has array parameters
the user does not pass: hidden parameters ``<name>.addr``, ``<name>.shape[d]``
and ``<name>.strides[d]`` (kir/abi.h). ``hidden_values`` gives the C++ launcher
their values once, when it is made (launchers.hidden_values): the
DeviceArray itself for the address, so that the launcher writes its address,
marks its buffer as used by every launch (written where the kernel writes it)
and keeps it alive; its extents and strides (in elements) as ints. Launches
pay nothing for them.

Constant data is uploaded once per device, the first time a launcher is made
there, and kept with the CompiledKernel (``hidden_on_device``) for as long as
the kernel lives.
"""

from . import forksafe
from .runtime.creation import _upload, status_array
from .runtime.reports import thread_token

_lock = forksafe.lock()


def per_thread(compiled):
    """Whether the kernel takes the status buffer, which is the launching thread's own
    (runtime/reports.py): its hidden arrays, and its launchers, are kept per thread."""
    return any(kind == "status" for _name, (kind, _value) in compiled.hidden)


def hidden_arrays(compiled, device):
    """The DeviceArrays the kernel's hidden parameters take on `device` (and, for a kernel
    with a status buffer, in the calling thread), in order."""
    key = (device, thread_token()) if per_thread(compiled) else device
    found = compiled.hidden_on_device.get(key)
    if found is not None:
        return found
    with _lock:
        found = compiled.hidden_on_device.get(key)
        if found is None:
            values = []
            for _name, (kind, value) in compiled.hidden:
                if kind == "status":  # raise and print records (runtime/reports.py)
                    values.append(status_array(device))
                    continue
                if kind == "constant":
                    values.append(_upload(value, device))
                    continue
                if value.device is not device:
                    raise ValueError(
                        f"kernel {compiled.name!r} uses a global device array of "
                        f"{_name(value.device)}, but it is launched on {_name(device)}; "
                        "a global device array is used in place, on its own device only"
                    )
                values.append(value)
            found = compiled.hidden_on_device[key] = tuple(values)
    return found


def hidden_values(compiled, device, names):
    """{parameter name: value} of the hidden arrays' parameters on `device`, for those of
    `names` (the kernel's hidden parameters; a constant array's extents and strides are
    constants in the kernel but still have parameters)."""
    values = {}
    for (name, _source), array in zip(compiled.hidden, hidden_arrays(compiled, device)):
        values[f"{name}.addr"] = array
        strides = array._dev_strides
        for d, extent in enumerate(array.shape):
            values[f"{name}.shape[{d}]"] = int(extent)
            values[f"{name}.strides[{d}]"] = int(strides[d]) // int(array._itemsize)
    missing = {k for k in values if k.endswith(".addr")} - set(names)
    if missing:  # the front end and compiled.hidden disagree: never launch with a gap
        raise AssertionError(f"kernel {compiled.name!r} has no hidden parameters {missing}")
    return {k: v for k, v in values.items() if k in names}


def _name(device):
    info = getattr(device, "info", None)
    return f"device {getattr(info, 'index', '?')} ({getattr(info, 'name', device)})"
