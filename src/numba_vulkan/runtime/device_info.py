"""DeviceInfo: what a Vulkan physical device offers kernels (filled by the C++ core)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..narrowing import Mode


@dataclasses.dataclass(frozen=True, eq=False)
class DeviceInfo:
    """A Vulkan physical device: what kernels may use on it.

    Attributes
    ----------
    index : int
        Position in :func:`list_devices` (among the visible devices:
        ``NUMBA_VULKAN_VISIBLE_DEVICES``).
    vulkan_index : int
        Position in the Vulkan loader's list of devices (``index`` unless
        ``NUMBA_VULKAN_VISIBLE_DEVICES`` chooses or orders them).
    logical : int
        0, or n for the (n+1)-th entry of ``NUMBA_VULKAN_VISIBLE_DEVICES`` that names the
        same physical device: each entry is a logical device of its own (a VkDevice with
        its own queues, memory and kernels), so one machine can test several devices.
    name : str
        Device name reported by the driver.
    kind : {'discrete', 'integrated', 'virtual', 'cpu', 'other'}
        Device type.
    float64, int64, int16, int8 : bool
        Whether shaders may use the respective type.
    handle : int
        The VkPhysicalDevice handle, as an integer.
    int64_atomics : bool
        Atomic operations on 64-bit integers in buffers.
    float16 : bool
        Arithmetic on float16 values.
    storage16, storage8 : bool
        Buffers may hold 16-bit (float16, int16) or 8-bit values.
    float32_atomic_add : bool
        Atomic float32 addition in buffers and shared memory (VK_EXT_shader_atomic_float).
    push_constant8, push_constant16 : bool
        Push constants may hold 8-bit or 16-bit values (storagePushConstant8/16).
    max_local_size : tuple of int
        Largest workgroup extent along each axis.
    max_local_invocations : int
        Largest number of invocations in one workgroup.
    max_groups : tuple of int
        Largest number of workgroups along each axis of a dispatch.
    max_shared_memory : int
        Bytes of workgroup-shared memory per workgroup.
    nan_preserve : tuple of int
        Float widths for which shaders can keep NaN, infinity and signed zero.
    denorm_preserve : tuple of int
        Float widths for which shaders can keep subnormal numbers (kernels ask
        for it without fastmath; otherwise a driver may flush them to zero).
    timestamp_bits : int
        Valid bits of the compute queue's timestamps (0: none).
    timestamp_period : float
        Nanoseconds per timestamp tick.
    subgroup_size : int
        Invocations per subgroup.
    subgroup_basic, subgroup_vote, subgroup_arithmetic, subgroup_ballot, \
subgroup_shuffle, subgroup_shuffle_relative : bool
        Which classes of subgroup operations compute shaders may use.
    subgroup_partitioned : bool
        The device groups a subgroup's lanes by value in one instruction
        (VK_NV_shader_subgroup_partitioned); ``cuda.match_any_sync`` and ``match_all_sync``
        use it there, and a loop of shuffles and ballots elsewhere.
    matrix_shapes : tuple of MatrixShape
        The cooperative-matrix configurations the device lists (VK_KHR_cooperative_matrix,
        subgroup scope); empty where it has none (kernels then emulate them:
        ``nv.matrix.shapes()``). A bfloat16 configuration is marked emulated where
        ``bfloat16_matrix`` is off: its tiles are then emulated.
    bfloat16_type, bfloat16_matrix : bool
        Shaders may declare bfloat16 values, and cooperative matrices of them
        (VK_KHR_shader_bfloat16's shaderBFloat16Type and shaderBFloat16CooperativeMatrix,
        enabled wherever supported): bfloat16 tiles run on the matrix units.
    loop_iteration_limit : int or None
        Iterations after which the driver silently ends a loop nest in one
        invocation (65,535 on Mesa 22's lavapipe), or None where loops run to
        the end. Measured by a probe kernel when the device is first opened and
        cached per driver version (runtime/probes.py, runtime/disk.py); None until then if the
        cache does not know the driver yet.
    selftest : tuple of (str, str)
        The driver self-test's verdict on each primitive the compiler relies on for
        exact results, as (primitive, verdict) pairs: "exact", "wrong: ..." or
        "not run: ..." (runtime/selftest.py); cached per driver like the loop cap.
    soft_forms : tuple of str
        The software forms kernels for the device are compiled with, because the
        self-test found the driver's primitive wrong or NUMBA_VULKAN_SOFT_FORMS asks.
    matrix_selftest : tuple of (str, str)
        The matrix units' self-test: (configuration, verdict) for each configuration the
        device lists (runtime/matrix_probe.py); where one is not exact, ``matrix_shapes``
        is empty and every tile is emulated. Cached per driver like the loop cap.
    api_version : tuple of int
        The device's Vulkan version (major, minor, patch).
    driver_name, driver_info : str
        What the driver says of itself.
    """

    index: int
    name: str
    kind: str
    float64: bool
    int64: bool
    int16: bool
    int8: bool
    handle: int
    int64_atomics: bool = False
    float16: bool = False
    storage16: bool = False
    storage8: bool = False
    float32_atomic_add: bool = False
    push_constant8: bool = False
    push_constant16: bool = False
    max_local_size: tuple[int, int, int] = (128, 128, 64)
    max_local_invocations: int = 128
    max_groups: tuple[int, int, int] = (65535, 65535, 65535)
    max_shared_memory: int = 16384
    nan_preserve: tuple[int, ...] = ()
    denorm_preserve: tuple[int, ...] = ()
    timestamp_bits: int = 0
    timestamp_period: float = 1.0
    subgroup_size: int = 1
    subgroup_basic: bool = False
    subgroup_vote: bool = False
    subgroup_arithmetic: bool = False
    subgroup_ballot: bool = False
    subgroup_shuffle: bool = False
    subgroup_shuffle_relative: bool = False
    subgroup_partitioned: bool = False
    matrix_shapes: tuple = ()
    bfloat16_type: bool = False
    bfloat16_matrix: bool = False
    loop_iteration_limit: int | None = None
    selftest: tuple[tuple[str, str], ...] = ()
    soft_forms: tuple[str, ...] = ()
    matrix_selftest: tuple[tuple[str, str], ...] = ()
    # Beyond the spec: facts the runtime and `python -m numba_vulkan` use.
    api_version: tuple[int, int, int] = (1, 2, 0)
    driver_name: str = ""
    driver_info: str = ""
    vendor_id: int = 0
    device_id: int = 0
    vulkan_memory_model: bool = False
    max_push_constants: int = 128
    device_local_bytes: int = 0
    vulkan_index: int = -1
    logical: int = 0

    def __repr__(self) -> str:
        v = ".".join(map(str, self.api_version[:2]))
        again = f", logical {self.logical}" if self.logical else ""
        return f"<DeviceInfo {self.index}: {self.name!r} ({self.kind}, Vulkan {v}{again})>"


# ---- names for annotations ------------------------------------------------------------
# The modules below runtime/devices.py (arrays, streams, creation, device_list) take and
# return devices but cannot import Device (it imports them), so they annotate with these.

#: A grid, a workgroup size or an extent: an int or 1 to 3 ints (``checks.as_dim3``).
Dim3Like = int | Sequence[int]
#: An array shape: an int or a sequence of ints (``checks.as_shape``).
ShapeLike = int | Sequence[int]
#: NumPy's ``axis`` argument of the whole-array reductions (None, or every axis).
Axis = int | Sequence[int] | None
#: A launch's parameter block: bytes, or a callable given the launch's arrays that makes it.
PushBlock = bytes | bytearray | memoryview | Callable[[list], bytes | bytearray]


class DeviceLike(Protocol):
    """What a :class:`~numba_vulkan.Device` offers, for the annotations of modules that
    cannot import runtime/devices.py (it sits above them): Device's public surface, no
    more and no less (tests/nodevice/test_type_hints.py keeps the two alike)."""

    MAX_BATCH: int
    MAX_IN_FLIGHT: int
    MAX_SLOTS: int

    @property
    def info(self) -> DeviceInfo: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def handle(self) -> int: ...
    @property
    def queue(self) -> int: ...
    @property
    def stream_queue(self) -> int: ...
    @property
    def stream_queues(self) -> tuple[str, ...]: ...
    @property
    def family(self) -> int: ...
    @property
    def transfer_family(self) -> int: ...
    @property
    def command_pool(self) -> int: ...
    @property
    def memory(self) -> dict[str, int]: ...
    @property
    def timeout(self) -> float: ...
    @timeout.setter
    def timeout(self, seconds: float | None) -> None: ...
    @property
    def pool_limit(self) -> int: ...
    @pool_limit.setter
    def pool_limit(self, nbytes: int) -> None: ...
    def pool_stats(self) -> dict[str, int]: ...
    def trim(self, limit: int = 0) -> None: ...
    def synchronize(self, report: bool = True) -> None: ...
    def wait_for(self, buffer: Any) -> None: ...
    def check_support(self, kernel: object) -> None: ...
    def load_kernel(self, words: Any, push_size: int) -> Any: ...
    def launch(self, kernel: Any, groups: Dim3Like, arrays: Sequence[Any],
               push: PushBlock = b"", local_size: Dim3Like | None = None,
               _stream: Any = None) -> None: ...
    def launch_stream(self, stream: Any, kernel: Any, groups: Dim3Like, arrays: Sequence[Any],
                      push: PushBlock = b"", local_size: Dim3Like | None = None) -> None: ...
    def run(self, kernel: Any, groups: Dim3Like, arrays: Sequence[Any], push: PushBlock = b"",
            local_size: Dim3Like | None = None) -> None: ...


#: How a call names a device: an index into ``list_devices()``, a substring of the name, a
#: DeviceInfo or a Device; None for the selected (default) one.
DeviceSpec = int | str | DeviceInfo | DeviceLike | None


_FIELDS = {f.name for f in dataclasses.fields(DeviceInfo)}
# Capability names a CompiledKernel may list (spirv/tools.h CapabilityNames, plus the
# features kernels may use), each a boolean DeviceInfo field.
_CAPABILITIES = {f.name for f in dataclasses.fields(DeviceInfo) if f.type in (bool, "bool")}


# GPUs whose float64 rate is a large fraction of their float32 rate (data-centre
# parts). Other GPUs run float64 at 1/16 to 1/64 of float32 or emulate it; CPUs
# (lavapipe) run it at full speed. No Vulkan property reports this.
_FAST_FLOAT64 = ("H100", "H200", "H800", "GH200", "A100", "A800", "A30", "V100", "P100", "B100",
                 "B200", "GB200", "INSTINCT", "MI100", "MI210", "MI250", "MI300")  # fmt: skip


def float64_is_slow(info: DeviceInfo) -> bool:
    """Whether float64 arithmetic is much slower than float32 on a device (a name heuristic).

    True for GPUs other than the data-centre parts in _FAST_FLOAT64; False for
    CPUs and virtual devices. Used for VulkanPerformanceWarning only.
    """
    if info.kind not in ("discrete", "integrated") or not info.float64:
        return False
    name = info.name.upper()
    return not any(part in name for part in _FAST_FLOAT64)
