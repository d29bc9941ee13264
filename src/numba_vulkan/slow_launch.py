"""The slow launch path of a kernel (dispatcher.py's module doc): everything the C++
launchers cannot take at once. Type the arguments, compile or fetch the specialisation
and make its launcher, copy NumPy arrays to the device (and the written ones back),
convert scalars and tuples, and give clear errors for arguments the kernel cannot take.
"""

import inspect

import numpy as np

from . import arguments, config, narrowing, packed_args
from .errors import InternalCompilerError
from .launch import _device_name
from .runtime.array import host_order


def check_arg_count(dispatcher, args):
    """TypeError naming the kernel when ``args`` do not fit its parameters."""
    signature = dispatcher.__dict__.get("_signature", False)
    if signature is False:  # computed once: inspect.signature costs ~15 µs a launch
        try:
            signature = inspect.signature(dispatcher.py_func)
        except (TypeError, ValueError):  # no signature to check against
            signature = None
        dispatcher.__dict__["_signature"] = signature
    if signature is None:
        return
    try:
        signature.bind(*args)
    except TypeError as e:
        raise TypeError(
            f"kernel {dispatcher.__name__}{signature} got {len(args)} argument(s): {e}"
        ) from None


def _int64_beyond_32_bits(dispatcher, device, args, argtypes):
    """Whether a scalar argument the 32-bit-index specialisation passes in an int32 slot
    (narrowing.int64_in_32_bit_slot) lies outside int32: such a launch takes the 64-bit one.
    (Under narrow='ints' no int64 has such a slot: there the value raises OverflowError.)"""
    big = [ty for arg, ty in zip(args, argtypes)
           if isinstance(arg, (int, np.integer)) and not -(1 << 31) <= int(arg) < (1 << 31)]
    if not big:  # the usual launch: no mode to look up
        return False
    mode = dispatcher._mode(device)
    return any(narrowing.int64_in_32_bit_slot(ty, mode) for ty in big)


def run(dispatcher, launch, args):
    """Type the arguments, specialise, copy NumPy arrays and launch (see the module doc)."""
    from . import runtime

    dispatcher.slow_path_count += 1
    check_arg_count(dispatcher, args)
    device = launch.device if launch.device is not None else runtime.get_device()
    launch.check_limits(device)
    argtypes = []
    for position, arg in enumerate(args):
        if isinstance(arg, runtime.DeviceArray) and arg.device is not device:
            raise ValueError(
                f"argument {position} of kernel {dispatcher.__name__!r} is a device array of "
                f"{_device_name(arg.device)}, but the kernel is launched on "
                f"{_device_name(device)}; copy it with copy_to_host() and to_device()"
            )
        argtypes.append(arguments.typeof_argument(arg, position))
    wide = any(arguments.needs_64bit_indices(a) for a in _leaves(args) if hasattr(a, "strides"))
    wide = wide or launch.needs_64bit_ids() or _int64_beyond_32_bits(dispatcher, device, args,
                                                                      argtypes)
    spec = dispatcher._specialise(tuple(argtypes), device, wide, launch.shared_bytes)
    if spec.compiled.barrier_guards:
        dispatcher._check_barriers(spec.compiled, launch, device)

    # NumPy arrays travel to the device; the ones the kernel writes come back. On a
    # stream, both copies are enqueued on it (runtime/copies.py).
    stream = launch.stream
    if stream is not None and stream.device is not device:
        raise ValueError(f"the stream belongs to {_device_name(stream.device)}, but the "
                         f"kernel is launched on {_device_name(device)}")  # fmt: skip
    if stream is not None and stream._core.capturing:  # a graph captures it (graphs.py)
        if _holds_numpy(args):
            from .errors import VulkanGraphError

            raise VulkanGraphError(
                f"kernel {dispatcher.__name__!r} takes a NumPy array or record in a launch "
                "captured into a graph: a replay cannot copy host arrays in and out; pass "
                "device arrays (nv.to_device)"
            )
        # The arguments themselves where the launcher takes them: the graph names its
        # parameters by these objects (a scalar converted below would lose its name).
        if spec.launcher.launch(launch.groups, launch.local_size, args, False, stream._core):
            return
    device_args = list(args)
    copy_back = []
    for position, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            arguments.check_narrowed_array(
                arg, spec.compiled.by_position[position][0], position, dispatcher.__name__
            )
            if stream is not None:
                on_device = runtime.DeviceArray(device, arg.shape, arg.dtype,
                                                order=host_order(arg))  # as typed
                on_device.copy_to_device(arg, stream=stream)
            else:
                on_device = _upload(arg, device)
            device_args[position] = on_device
            if spec.compiled.writes[position]:
                copy_back.append((arg, on_device))
        elif isinstance(arg, np.void):  # a record: copied in and, if written, back
            host = arguments.record_memory(arg)
            if spec.compiled.writes[position] and not host.flags.writeable:
                raise ValueError(
                    f"argument {position} of kernel {dispatcher.__name__!r} is a record of a "
                    "read-only array, which the kernel writes"
                )
            if stream is not None:
                on_device = runtime.DeviceArray(device, host.shape, host.dtype)
                on_device.copy_to_device(host, stream=stream)
            else:
                on_device = _upload(host, device)
            device_args[position] = packed_args.RecordOnDevice(on_device)
            if spec.compiled.writes[position]:
                copy_back.append((host, on_device))
        elif isinstance(arg, (np.generic, int, float)):
            device_args[position] = arguments.scalar_for_launch(
                arg, argtypes[position], spec.compiled.by_position[position][0], position,
                dispatcher.__name__,
            )
        elif isinstance(arg, tuple):  # scalars, arrays: packed_args.py
            pairs = [] if spec.compiled.writes[position] else None
            device_args[position] = packed_args.for_launch(
                arg, argtypes[position], spec.compiled.by_position[position], position,
                dispatcher.__name__, device, pairs,
            )
            copy_back.extend(pairs or ())
    device_args = tuple(device_args)

    # With results to copy back, the launch is held: the copies' wait submits the
    # launch and the copies at once (one vkQueueSubmit, not two).
    held = bool(copy_back) and stream is None
    stream_core = None if stream is None else stream._core
    if not spec.launcher.launch(launch.groups, launch.local_size, device_args, held,
                                stream_core):  # fmt: skip
        raise InternalCompilerError(
            f"the launcher of kernel {dispatcher.__name__!r} {spec.compiled.argtypes} rejected "
            f"the arguments it was made for: {[type(a).__name__ for a in device_args]}"
        )
    if stream is not None:
        from .runtime import copies

        for host, on_device in copy_back:  # there after stream.synchronize()
            if not host.flags.writeable:
                continue
            copies.copy_to_host(on_device, host, stream)
        return
    raised = None
    for host, on_device in copy_back:
        try:
            if (host.flags.c_contiguous or on_device._f_only()) and host.dtype.isnative:
                on_device.copy_to_host(out=host)
            else:
                host[...] = on_device.copy_to_host()
        except Exception as e:  # a kernel's exception (runtime/reports.py): copy the rest
            if raised is None:
                raised = e
    if raised is not None:
        raise raised
    if (config.SYNC or dispatcher.sync_launches) and not copy_back:
        device.synchronize()
    elif spec.compiled.sites and _holds_numpy(args):
        device.synchronize()  # a launch with NumPy arguments reports (runtime/reports.py)


# ---------------------------------------------------------------- helpers


def _leaves(args):
    """The arguments, with the items of tuple arguments in place of the tuples."""
    for a in args:
        if isinstance(a, tuple):
            yield from _leaves(a)
        else:
            yield a


def _holds_numpy(args):
    """Whether launch arguments include NumPy arrays or records (also inside tuples)."""
    return any(isinstance(a, (np.ndarray, np.void)) or (isinstance(a, tuple) and _holds_numpy(a))
               for a in args)  # fmt: skip


def _upload(host, device):
    global _upload
    from .runtime.creation import _upload

    return _upload(host, device)
