"""Which kernel computes a matrix product of one loop dtype on one device: ``choose``.

NumPy picks the loop dtype (``np.matmul.resolve_dtypes``); this module picks how the
device computes it. A plan names the kernel family and its parameters; products.py runs
it: the tiled SIMT kernel of kernels.py, with the accumulation type of ``ACCUMULATION``,
or, with ``units=True``, cooperative-matrix tiles (tiles.py) for float16 loops and for
two bfloat16 operands (products.py's ``_RUNNERS``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import bfloat16_host
from ..checks import dtype_name
from ..errors import VulkanSupportError, VulkanUnsupportedError
from .kernels import Tiling

#: Loop dtype -> the type products are summed in. Floats: float16 in float32, rounded once
#: at the end, as NumPy's own float16 loop does; float32 and float64 in themselves
#: (bfloat16 operands never make a loop of their own: NumPy's loop for them is float32).
#: Integers wrap as NumPy's loops do; their sums modulo 2^bits do not depend on summing in
#: a wider type and truncating at the end, so 8/16-bit types sum in 32 bits. bool is
#: "any(a and b)", an OR of ANDs in int32.
ACCUMULATION = {
    "float16": "float32",
    "float32": "float32",
    "float64": "float64",
    "int8": "int32",
    "int16": "int32",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint32",
    "uint16": "uint32",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "int32",
}

#: Tiling per device kind, measured with benchmarks/bench_matmul.py (best of 7 or 8).
#: lavapipe (kind "cpu", 256-bit vectors; 512^3 float32, 2-core Xeon, 2026-12-05): 8x8
#: invocations of 8x8 results with the k step and the copies to shared memory as loops,
#: BK 32: 50-51 ms (5.3 GFLOP/s); 16x16 of 8x8, BK 8: 55 ms; 16x16 of 4x4: 80 ms; 16x16 of
#: 1x1 (examples/tiled_matmul.py): 310 ms; the k step written out in the source: no faster
#: and three times the compile time (Numba types every written-out line). H100 (4096^3,
#: commit 24b78c2 with this package, results/h100_2026-12-05_matmul.txt): 16x16 of 4x4,
#: BK 16: float32 14.3-14.7 TFLOP/s, float64 9.2; 16x16 of 8x8 (128x128 tiles), BK 8:
#: 14.2 and 5.8; BK 16 with 8x8: 9.5; 8x8 of 8x8 (lavapipe's): 3.7; examples/tiled_matmul.py
#: 7.9; cuBLAS (torch, no TF32) 50.5 TFLOP/s.
_TILINGS = {
    "cpu": Tiling(wx=8, wy=8, tm=8, tn=8, bk=32, unroll=1, unroll_loads=False),
    "gpu": Tiling(wx=16, wy=16, tm=4, tn=4, bk=16, unroll=1, unroll_loads=False),
}


@dataclasses.dataclass(frozen=True)
class Plan:
    """How to compute one product: the kernel family, the accumulation dtype and the
    family's parameters."""

    family: str  # "simt": kernels.tiled; "blocked": blocked.run; "tiles": tiles.run
    acc: np.dtype
    tiling: Tiling
    #: Fewer workgroups than this (with a long k) split k into chunks summed apart.
    min_groups: int
    #: "tiles": the tiles' element type (tiles.OPERANDS: float16, bfloat16, int8, uint8).
    operands: str = ""
    #: Float products fused into their sums (matmul's ``contract``).
    contract: bool = False


#: choose's plans by its arguments (a plan depends on nothing else)
_chosen: dict = {}


def choose(loop: np.dtype, device, units: bool = False, operands=(),
           contract: bool = False) -> Plan:
    """The plan for the loop dtype `loop` (NumPy's, from ``np.matmul.resolve_dtypes``) on
    `device`; with `units`, a float16 loop on cooperative matrices (linalg/tiles.py), and
    the float32 loop NumPy gives two bfloat16 operands (the dtypes in `operands`) on
    bfloat16 ones, and the int32 (uint32) loop of two int8 (uint8) operands
    (``dtype=np.int32``) on 8-bit ones summed in that type. A float32 or float64 loop of
    operands of its own dtype on a GPU: linalg/blocked.py's kernel (products.py falls back
    to the SIMT kernel for products it does not suit). `contract`: float products fused
    into their sums (SIMT and blocked kernels).

    Raises
    ------
    VulkanUnsupportedError
        For a dtype no kernel computes (complex, object).
    VulkanSupportError
        For float64 or 64-bit integers on a device without them.
    """
    key = (loop, device, units, tuple(operands), contract)
    plan = _chosen.get(key)
    if plan is None:
        plan = _chosen[key] = _choose(np.dtype(loop), device, units, operands, contract)
    return plan


def _choose(loop, device, units, operands, contract):
    name = dtype_name(loop)
    acc = ACCUMULATION.get(name)
    if acc is None:
        raise VulkanUnsupportedError(
            f"matmul of {loop} is not available on device arrays (supported: bool, integers, "
            "float16, float32, float64); copy to the host with np.asarray(d)")
    info = device.info
    for dt in (loop, np.dtype(acc)):
        if dt.itemsize == 8 and not (info.float64 if dt.kind == "f" else info.int64):
            raise VulkanSupportError(
                f"matmul of {loop} needs {'float64' if dt.kind == 'f' else '64-bit integers'}, "
                f"which {info.name} does not support")
    tiling = _TILINGS["cpu" if info.kind == "cpu" else "gpu"]
    if units and loop == np.float16:
        return Plan("tiles", np.dtype(np.float32), tiling, 0, "float16")
    if units and loop == np.float32 and operands and all(map(bfloat16_host.is_dtype, operands)):
        return Plan("tiles", np.dtype(np.float32), tiling, 0, "bfloat16")
    for small, sums in (("int8", np.int32), ("uint8", np.uint32)):  # 8-bit tiles
        if units and loop == sums and operands and all(d == small for d in operands):
            return Plan("tiles", np.dtype(sums), tiling, 0, small)
    # Devices below the usual limits (Vulkan guarantees 128 invocations and 16 KiB): the
    # same tile with fewer, busier invocations, then shorter k steps.
    while tiling.wy > 1 and (tiling.threads > info.max_local_invocations
                             or tiling.wy > info.max_local_size[1]):
        tiling = dataclasses.replace(tiling, wy=tiling.wy // 2, tm=tiling.tm * 2)
    while tiling.bk > 1 and (np.dtype(acc).itemsize * tiling.bk * (tiling.bm + tiling.bn)
                             > info.max_shared_memory):
        tiling = dataclasses.replace(tiling, bk=tiling.bk // 2)
    contract = contract and name in ("float32", "float64")
    family = "simt"
    if (info.kind != "cpu" and name in ("float32", "float64") and operands
            and all(np.dtype(d) == loop for d in operands)):
        family = "blocked"
    return Plan(family, np.dtype(acc), tiling, 4 if info.kind == "cpu" else 256,
                contract=contract)
