"""Is one correction step of float32 sqrt correctly rounded with this driver's InverseSqrt?

Where the device's Fma rounds once, float32 sqrt starts from the driver's InverseSqrt y and
takes one step s = fma(fma(-s0, s0, x), y/2, s0), s0 = x y (frontend/mathlib/roots.py). s is
always faithful, and an exact rounding decision (two more Fma, comparisons, a select) makes
it correctly rounded for any y a few ulp off. Without the decision, s is correctly rounded
only if y's errors miss the few x whose roots lie nearest a midpoint between floats: a
property of the driver's InverseSqrt, which Vulkan does not promise (2 ulp) and no bound
gives (the step leaves about 2^-44 of relative error, the nearest roots lie 2^-51 from a
midpoint). NVIDIA's own sqrt.rn is this step on its hardware's reciprocal square root.

So the driver self-test checks it on every float32 of the short path's range
[2^-60, 2^60] (121 binades, about 10^9 values; a few milliseconds on a GPU), against the
float64 library's root rounded to float32, in one kernel (selftest_kernel.build_sqrt_probe).
"holds" lets kernels leave the decision out (CodegenControls.sqrt_one_step); "fails: ..."
counts the floats it misses and names the first. Not run where Fma may round twice (the step
needs it fused), without float64 (the reference), or without the compiler.
"""

import numpy as np

from . import compiler_hook
from .creation import to_device

#: Bit patterns of the range checked: float32 2^-60 to 2^60 (roots._DIRECT), inclusive.
FIRST = (127 - 60) << 23
LAST = (127 + 60) << 23
#: Floats per invocation.
PER = 256


def verdict(device, first=FIRST, last=LAST):
    """'holds', 'fails: N of M floats, the first x = ...' or 'not run: ...' for `device`
    over the float32 bit patterns first..last."""
    from .. import _core

    if not device.info.float64:
        return "not run: the device has no float64 (the reference)"
    if not compiler_hook.available():
        return "not run: the compiler is not loaded"
    built = compiler_hook.sqrt_probe_kernel(device, PER)
    if built is None:
        return "not run: the device's Fma may round twice"
    core, names = built
    count = last - first + 1
    host = {"span": np.array([first, count], np.int32),
            "found": np.array([0, np.iinfo(np.int32).max], np.int32)}
    arrays = [to_device(host[n], device=device) for n in names]
    kernel = device._core.load_kernel(core.words, core.push_size)
    launcher = _core.Launcher(device._core, kernel, list(core.args), core.param_size,
                              core.params_in_buffer)  # fmt: skip
    local = 64
    invocations = -(-count // PER)
    if not launcher.launch((-(-invocations // local), 1, 1), (local, 1, 1), tuple(arrays)):
        raise RuntimeError("the sqrt probe's kernel refused its own arguments")
    missed, example = (int(v) for v in arrays[names.index("found")].copy_to_host())
    if not missed:
        return "holds"
    x = np.array([example], np.int32).view(np.float32)[0]
    return f"fails: {missed} of {count} floats, the first x = {float(x)!r}"
