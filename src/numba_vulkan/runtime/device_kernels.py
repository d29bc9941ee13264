"""What a Device does with kernels (the launch half of runtime/devices.py's Device):
check that it can run one, load SPIR-V, and launch it, asynchronously, on a stream or
waiting for it (``run``). Device inherits these; they use its ``info``, ``_core`` and
``_kernels``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import checks
from ..errors import VulkanSupportError
from . import spirv_words
from .array import DeviceArray
from .creation import to_device
from .device_info import _CAPABILITIES, DeviceInfo, Dim3Like, PushBlock
from .streams import Stream


class KernelLaunches:
    """The kernel methods of Device (see Device for its attributes)."""

    info: DeviceInfo

    def check_support(self, kernel: object) -> None:
        """Check that this device can run a kernel.

        Parameters
        ----------
        kernel : object
            Anything with ``capabilities`` (names such as ``"float64"``,
            ``"storage8"``, ``"subgroup_ballot"``), and optionally
            ``shared_bytes`` and ``local_size``: usually a CompiledKernel.

        Raises
        ------
        VulkanSupportError
            Naming the first capability the device lacks, and the device.
        """
        info = self.info
        for cap in getattr(kernel, "capabilities", ()) or ():
            if cap not in _CAPABILITIES:
                raise VulkanSupportError(
                    f"the kernel needs capability {cap!r}, which numba_vulkan does not know "
                    f"how to check on Vulkan device {info.index} '{info.name}'"
                )
            if not getattr(info, cap):
                raise VulkanSupportError(
                    f"the kernel needs {cap}, which Vulkan device {info.index} "
                    f"'{info.name}' does not support"
                )
        shared = getattr(kernel, "shared_bytes", 0) or 0
        if shared > info.max_shared_memory:
            raise VulkanSupportError(
                f"the kernel uses {shared} bytes of shared memory; Vulkan device "
                f"'{info.name}' allows {info.max_shared_memory} (max_shared_memory)"
            )

    def load_kernel(self, words: ArrayLike | bytes, push_size: int) -> Any:
        """Load a SPIR-V module (entry point ``main``) on this device.

        Parameters
        ----------
        words : array_like of uint32 or bytes
            The module.
        push_size : int
            Bytes of push constants the module declares (0: none).

        Returns
        -------
        numba_vulkan._core.Kernel
            Pipelines are created from it per local size, on first use.
        """
        words = spirv_words.check(words)
        push_size = checks.as_int(push_size, "push_size", minimum=0, maximum=2**32 - 1)
        if push_size % 4:
            raise ValueError(f"push_size must be a multiple of 4, not {push_size}")
        if push_size > self.info.max_push_constants:
            raise ValueError(
                f"push_size {push_size} exceeds the device's {self.info.max_push_constants} "
                f"bytes of push constants ({self.info.name})"
            )
        return self._core.load_kernel(words, push_size)

    def _kernel_for(self, kernel):
        from .. import _core as core

        if isinstance(kernel, core.Kernel):
            return kernel
        if not hasattr(kernel, "words"):
            raise TypeError(
                "kernel must be a loaded kernel (Device.load_kernel) or a CompiledKernel, "
                f"not {type(kernel).__name__}"
            )
        key = id(kernel)
        entry = self._kernels.get(key)
        if entry is None or entry[0] is not kernel:
            self.check_support(kernel)
            loaded = self.load_kernel(kernel.words, getattr(kernel, "push_size", 0))
            entry = (kernel, loaded)
            self._kernels[key] = entry
        return entry[1]

    def launch(self, kernel: Any, groups: Dim3Like,
               arrays: Sequence[DeviceArray | NDArray[Any] | None], push: PushBlock = b"",
               local_size: Dim3Like | None = None, _stream: Stream | None = None) -> None:
        """Start `kernel` over `groups` workgroups without waiting for it.

        Our kernels take no descriptor bindings: arrays are device addresses in
        the parameter block (push constants). So `push` is the whole parameter
        block, addresses included, and `arrays` lists the device arrays the
        kernel uses, in argument order: they are marked as used by the launch,
        so that copies of them wait for it. Launches are batched as described in
        the module documentation (MAX_BATCH, MAX_IN_FLIGHT).

        Parameters
        ----------
        kernel : numba_vulkan._core.Kernel or CompiledKernel
            A loaded kernel, or an object with ``words`` and ``push_size``
            (loaded once per device and cached).
        groups : tuple of int
            Workgroup counts along x, y and z.
        arrays : list of DeviceArray, numpy.ndarray or None
            The arrays the kernel uses (None entries are skipped). NumPy arrays
            (small host arrays) are copied to the device first and read from
            there; nothing is copied back, so pass arrays the kernel writes as
            device arrays, or use :meth:`run`.
        push : bytes or callable, optional
            The parameter block; a callable is called with `arrays` and returns it.
        local_size : tuple of int, optional
            Workgroup size; defaults to ``kernel.local_size`` or (1, 1, 1).

        Raises
        ------
        ValueError
            If a device array belongs to another device, or an entry is not an
            array.
        """
        groups = checks.as_dim3(groups, "groups")
        if local_size is not None:
            local_size = checks.as_dim3(local_size, "local_size", minimum=1)
        if not isinstance(arrays, (list, tuple)):
            raise TypeError(f"arrays must be a list of device arrays, not {type(arrays).__name__}")
        if not (callable(push) or isinstance(push, (bytes, bytearray, memoryview))):
            raise TypeError(f"push must be bytes or a callable, not {type(push).__name__}")
        arrays = list(arrays)
        if not any(isinstance(a, np.ndarray) for a in arrays):
            return self._launch(kernel, groups, arrays, push, local_size, _stream)
        # Small host arrays (the reference's status, shapes, scalars): the launch reads
        # their device copies in a slot of the kernel (runtime/slots.py). Nothing is
        # copied back (launch does not wait): use run for arrays the kernel writes.
        loaded = self._kernel_for(kernel)
        written = _written_arrays(kernel, len(arrays))
        with self._slots.lock:
            arrays = self._slots.take(self, loaded, arrays, written, _stream)
            return self._launch(kernel, groups, arrays, push, local_size, _stream)

    def _launch(self, kernel, groups, arrays, push, local_size, _stream):
        buffers = []
        for position, a in enumerate(arrays):
            if a is None:
                continue
            if not isinstance(a, DeviceArray):
                raise ValueError(  # noqa: TRY004 (the spec names ValueError)
                    f"arrays[{position}] must be a DeviceArray, a NumPy array or None, "
                    f"not {type(a).__name__}"
                )
            if a.device is not self:
                raise ValueError(f"a device array of {a.device} was passed to {self}")
            buffers.append(a._buffer)
        if callable(push):
            push = push(list(arrays))
        if local_size is None:
            local_size = getattr(kernel, "local_size", None) or (1, 1, 1)
        loaded = self._kernel_for(kernel)
        stream_core = None if _stream is None else _stream._core
        self._core.dispatch(loaded, _triple(groups), _triple(local_size), bytes(push), buffers,
                            stream_core)

    def launch_stream(self, stream: Stream, kernel: Any, groups: Dim3Like,
                      arrays: Sequence[DeviceArray | NDArray[Any] | None],
                      push: PushBlock = b"", local_size: Dim3Like | None = None) -> None:
        """Enqueue `kernel` on a Stream; see :meth:`launch` for the arguments.

        The launch waits, on the device, for the stream's earlier work and for
        whatever else still uses the buffers of `arrays` (other streams, work
        outside streams). NumPy arrays in `arrays` (small host arrays) are
        copied to the device on the stream first; nothing is copied back.

        Raises
        ------
        TypeError
            If `stream` is not a Stream.
        ValueError
            If the stream or a device array belongs to another device.
        """
        if not isinstance(stream, Stream):
            raise TypeError(f"stream must be a Stream, not {type(stream).__name__}")
        if stream.device is not self:
            raise ValueError(f"the stream belongs to {stream.device}, not to {self}")
        self.launch(kernel, groups, arrays, push, local_size, _stream=stream)

    def run(self, kernel: Any, groups: Dim3Like,
            arrays: Sequence[DeviceArray | NDArray[Any] | None], push: PushBlock = b"",
            local_size: Dim3Like | None = None) -> None:
        """Dispatch `kernel` over `groups` workgroups and wait for it.

        Like :meth:`launch`, but `arrays` may hold NumPy arrays: they are copied
        to temporary device arrays before the launch and, those the kernel writes
        (the ``written`` flags of a CompiledKernel's array declarations; every
        array for a kernel without them), back afterwards. Give `push` as a callable
        to build the parameter block from the device arrays (it receives the list
        with NumPy arrays replaced by their device copies).

        Raises
        ------
        ValueError
            If a device array belongs to another device.
        """
        if not isinstance(arrays, (list, tuple)):
            raise TypeError(f"arrays must be a list of arrays, not {type(arrays).__name__}")
        written = _written_arrays(kernel, len(arrays))
        device_arrays, back = [], []
        for position, a in enumerate(arrays):
            if a is None or isinstance(a, DeviceArray):
                device_arrays.append(a)
            else:
                if not isinstance(a, np.ndarray):
                    raise TypeError(
                        f"arrays must hold NumPy or device arrays, not {type(a).__name__}"
                    )
                host = a
                d = to_device(host, device=self)
                device_arrays.append(d)
                if written[position]:
                    back.append((host, d))
        self.launch(kernel, groups, device_arrays, push, local_size)
        self.synchronize()
        for host, d in back:
            if host.flags.writeable:
                d.copy_to_host(out=host) if host.flags.c_contiguous else np.copyto(
                    host, d.copy_to_host()
                )


def _triple(v):
    return checks.as_dim3(v, "groups")


def _written_arrays(kernel, count):
    """Per entry of a launch's `arrays` (the kernel's array arguments in order), whether
    the kernel may write it: from a CompiledKernel's argument declarations (``arguments``,
    kir/abi.h), else True for all (always safe)."""
    decls = getattr(kernel, "arguments", None)
    if decls is None:
        return [True] * count
    try:
        flags = [bool(d.written) for d in decls if d.kind == "array"]
    except AttributeError:  # another description of the parameters
        return [True] * count
    return flags if len(flags) == count else [True] * count
