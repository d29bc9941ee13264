"""The launch side of hidden arrays (frontend/hidden.py): constant buffers and global
device arrays, appended to every launch's arguments.

A kernel that reads a large global NumPy array, or a global DeviceArray, has
array parameters the user does not pass. Its C++ launcher is made with their
argspecs after the arguments' and a wrapper (packed_args.AdaptedLauncher)
appends the arrays to each call's arguments, so the launcher writes their
addresses and the device tracks them as any argument (barriers after earlier
writes, buffers kept alive until the work completes). Kernels without hidden
arrays or packed arguments get the bare C++ launcher and pay nothing.

Constant data is uploaded once per device, the first time a launcher is made
there, and kept with the CompiledKernel (``hidden_on_device``) for as long as
the kernel lives.
"""

import threading

_lock = threading.Lock()


def hidden_arrays(compiled, device):
    """The DeviceArrays the kernel's hidden parameters take on `device`, in order."""
    found = compiled.hidden_on_device.get(device)
    if found is not None:
        return found
    from .runtime.array import _upload

    with _lock:
        found = compiled.hidden_on_device.get(device)
        if found is None:
            values = []
            for _spec, _written, (kind, value) in compiled.hidden:
                if kind == "status":  # raise and print records (runtime/reports.py)
                    from .runtime.reports import status_array

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
            found = compiled.hidden_on_device[device] = tuple(values)
    return found


def _name(device):
    info = getattr(device, "info", None)
    return f"device {getattr(info, 'index', '?')} ({getattr(info, 'name', device)})"
