"""The launch side of hidden arrays (frontend/hidden.py): constant buffers and global
device arrays, appended to every launch's arguments.

A kernel that reads a large global NumPy array, or a global DeviceArray, has
array parameters the user does not pass. Its C++ launcher is made with their
argspecs after the arguments' and a wrapper (``HiddenArgsLauncher``) appends
the arrays to each call's arguments, so the launcher writes their addresses
and the device tracks them as any argument (barriers after earlier writes,
buffers kept alive until the work completes). Kernels without hidden arrays
get the bare C++ launcher and pay nothing.

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


def launcher_specs(compiled):
    """(argspecs, writes) of the C++ launcher: the arguments', then the hidden arrays'."""
    specs = list(compiled.argspecs) + [spec for spec, _, _ in compiled.hidden]
    writes = list(compiled.writes) + [written for _, written, _ in compiled.hidden]
    return specs, writes


class HiddenArgsLauncher:
    """A C++ launcher whose kernel has hidden arrays: appends them to each launch."""

    __slots__ = ("core", "hidden")

    def __init__(self, core, hidden):
        self.core = core
        self.hidden = tuple(hidden)

    def launch(self, groups, local_size, args, hold=False):
        return self.core.launch(groups, local_size, tuple(args) + self.hidden, hold)

    def __getattr__(self, name):  # keep_last_block, last_block(): the C++ launcher's
        return getattr(self.core, name)

    def __setattr__(self, name, value):
        if name in self.__slots__:
            object.__setattr__(self, name, value)
        else:
            setattr(self.core, name, value)


def _name(device):
    info = getattr(device, "info", None)
    return f"device {getattr(info, 'index', '?')} ({getattr(info, 'name', device)})"
