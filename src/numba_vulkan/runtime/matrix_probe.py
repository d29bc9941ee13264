"""The matrix units' self-test: does each cooperative-matrix configuration the device lists
compute exactly what the emulation computes?

A device that lists a configuration (VK_KHR_cooperative_matrix) gets kernels whose tiles
are its own cooperative matrices (frontend/matrix.py), so a driver fault there gives
wrong products with no error: NVIDIA's 580 driver loaded a column-major tile as
row-major where the kernel chose the layout in a branch. So, as for the driver self-test
(selftest.py), a probe runs each listed configuration once per driver before kernels
rely on it: one subgroup loads an accumulator from a row-major array, two A tiles from a
row-major array and a B tile from a column-major one, multiplies and accumulates twice,
doubles every element of its share (``acc[t]``) and stores the result into a row-major
and a column-major array. The operands are small integers, so every product and partial
sum is exact in every listed type and every device must give NumPy's result bit for bit.

Verdicts, by configuration (``str(MatrixShape)``): "exact", "wrong: ..." or "not run:
...". A configuration that is not exact (or whose probe could not compile or run) makes
the device's kernels emulate every tile (``DeviceInfo.matrix_shapes`` empty, with a
VulkanDriverFaultWarning naming it): the emulation is slower but exact everywhere.
A configuration the device lists but kernels emulate (bfloat16's where the device cannot
declare bfloat16 tiles: ``MatrixShape.emulated``) is not probed. The verdicts are cached
with the other probes (``driver_probes.json``, disk.py) and shown by
``python3 -m numba_vulkan``.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..errors import VulkanDriverFaultWarning

#: Bump when the probe changes: cached verdicts of other versions are not trusted.
#: 2: bfloat16 configurations on the units are probed.
VERSION = 2

EXACT = "exact"
NOT_PROBED = ("not run: emulated on this device (bfloat16 tiles need VK_KHR_shader_bfloat16's "
              "shaderBFloat16CooperativeMatrix)")

_SOURCE = """
def probe(a, b, c, out_rows, out_cols):
    fa = mx.fragment("a", {m}, {k}, T_{a})
    fb = mx.fragment("b", {k}, {n}, T_{b})
    acc = mx.fragment("acc", {m}, {n}, T_{c})
    mx.load(acc, c, 0, 0)
    mx.load(fb, b, 0, 0)
    mx.load(fa, a, 0, 0)
    mx.mma(acc, fa, fb)
    mx.load(fa, a, {m}, 0)
    mx.mma(acc, fa, fb)
    for t in range(acc.length):
        acc[t] = acc[t] + acc[t]
    mx.store(out_rows, 0, 0, acc)
    mx.store(out_cols, 0, 0, acc)
"""


def _kernel(shape):
    from ..stubs import matrix as mx
    from .compiler_hook import jit

    namespace = {"mx": mx, **{f"T_{t}": _dtype(t).type for t in (shape.a, shape.b, shape.c)}}
    exec(_SOURCE.format(**shape._asdict()), namespace)  # noqa: S102 - our own template
    return jit(namespace["probe"])


def _values(rng, dtype, shape, unsigned_high, signed_high):
    if _dtype(dtype).kind == "u":
        return rng.integers(0, unsigned_high + 1, shape)
    return rng.integers(-signed_high, signed_high + 1, shape)


def _dtype(name):
    if name == "bfloat16":
        from .. import bfloat16_host

        return np.dtype(bfloat16_host.scalar_type())
    return np.dtype(name)


def check(device, shape, seed=0):
    """The verdict on configuration `shape` (a MatrixShape) of `device`: its probe kernel
    compiled as any kernel for the device is (on its matrix units where it lists `shape`,
    else emulated), run by one subgroup, compared with NumPy."""
    rng = np.random.default_rng(seed)
    m, n, k = shape.m, shape.n, shape.k
    a = _values(rng, shape.a, (2 * m, k), 3, 2)
    b = _values(rng, shape.b, (k, n), 3, 2)
    c = _values(rng, shape.c, (m, n), 4, 4)
    want = 2 * (a[:m] @ b + a[m:] @ b + c)  # int64: exact, and exact in every listed type
    rows = np.zeros((m, n), _dtype(shape.c))
    cols = np.zeros((n, m), _dtype(shape.c)).T  # column-major
    args = (a.astype(_dtype(shape.a)), np.asfortranarray(b.astype(_dtype(shape.b))),
            c.astype(_dtype(shape.c)), rows, cols)  # fmt: skip
    size = device.info.subgroup_size  # one workgroup of one subgroup
    try:
        _kernel(shape).forall(size, device=device, local_size=size)(*args)
    except Exception as e:  # noqa: BLE001 - a probe that cannot run is a verdict too
        return f"not run: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    expected = want.astype(_dtype(shape.c))
    for name, got in (("row-major", rows), ("column-major", cols)):
        bad = got != expected
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            return (f"wrong: {int(bad.sum())} of {bad.size} elements of the {name} result, "
                    f"e.g. [{i}, {j}] = {got[i, j]} for {expected[i, j]}")  # fmt: skip
    return EXACT


def run(device):
    """{str(shape): verdict} for each configuration `device` lists."""
    verdicts = {}
    for shape in device.info.matrix_shapes:
        verdicts[str(shape)] = NOT_PROBED if shape.emulated else check(device, shape)
    return verdicts


def failed(verdicts):
    """The configurations whose verdict keeps kernels off the matrix units."""
    return [name for name, v in verdicts.items() if v != EXACT and v != NOT_PROBED]


def with_verdicts(info, verdicts):
    """`info` with the probe's verdicts; its listed configurations dropped (every tile
    emulated) where one failed."""
    info = dataclasses.replace(info, matrix_selftest=tuple(verdicts.items()))
    if failed(verdicts):
        info = dataclasses.replace(info, matrix_shapes=())
    return info


def warn_failed(info, verdicts):
    bad = failed(verdicts)
    if bad:
        warnings.warn(
            f"{info.name}: the matrix units computed wrong products or could not run for "
            f"{'; '.join(f'{name} ({verdicts[name]})' for name in bad)}: every nv.matrix tile "
            "is emulated on this device (exact, slower; python3 -m numba_vulkan shows the "
            "verdicts)", VulkanDriverFaultWarning, stacklevel=3)  # fmt: skip
