"""Session 23 probe: what the driver's compilation of a new pipeline costs, and whether the
float controls of our modules (the OpExecutionMode entries DenormPreserve, DenormFlushToZero,
SignedZeroInfNanPreserve, RoundingModeRTE/RTZ) make it slower.

Each round makes one fresh triad kernel with a random constant of its own (new code for the
driver) and times its first launch and synchronisation less the compilation to SPIR-V
(compiler.compile_kernel): argument typing, the shader module, the pipeline layout, the
driver's compilation of the pipeline, the dispatch. Variants alternate round by round:

    as_is       the module as compiled
    no_float    the same module without its float-control execution modes (timing only:
                the results may differ on subnormals and signed zeros)

    PYTHONPATH=src python3 benchmarks/experiments/s23_driver_compile.py [ROUNDS]
"""

import os
import statistics
import sys
import time

import numpy as np

import numba_vulkan as nv
from numba_vulkan import compiler, launchers

FLOAT_CONTROL_MODES = {4459, 4460, 4461, 4462, 4463}
OP_EXECUTION_MODE = 16

SOURCE = """
def triad(a, b, c, s):
    i = nv.global_id(0)
    if i < a.size:
        a[i] = b[i] + s * c[i] + np.float32({salt})
"""


def without_float_controls(words):
    words = list(words)
    out, i = words[:5], 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if not (op == OP_EXECUTION_MODE and words[i + 2] in FLOAT_CONTROL_MODES):
            out += words[i:i + count]
        i += count
    return np.array(out, dtype=np.uint32)


class _Words:
    """A CompiledKernel with other words."""

    def __init__(self, compiled, words):
        self._compiled, self.words = compiled, words

    def __getattr__(self, name):
        return getattr(self._compiled, name)


def main(rounds):
    n = 1024
    a = nv.to_device(np.zeros(n, np.float32))
    b = nv.to_device(np.ones(n, np.float32))
    c = nv.to_device(np.ones(n, np.float32))
    s = np.float32(1.5)
    original = launchers.make_launcher
    variant = {"name": None}

    def patched(device, compiled):
        if variant["name"] == "no_float":
            compiled = _Words(compiled, without_float_controls(compiled.words))
        return original(device, compiled)

    launchers.make_launcher = patched
    compile_kernel = compiler.compile_kernel
    spent = [0.0]

    def timed_compile(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return compile_kernel(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t0

    compiler.compile_kernel = timed_compile
    times = {"as_is": [], "no_float": []}
    sizes = {}
    for k in range(rounds):
        for name in times:
            salt = f"{int.from_bytes(os.urandom(3), 'little')}.0"
            namespace = {"nv": nv, "np": np}
            exec(SOURCE.format(salt=salt), namespace)  # noqa: S102
            kernel = nv.jit(namespace["triad"])
            variant["name"] = name
            spent[0] = 0.0
            start = time.perf_counter()
            kernel[(n + 63) // 64, 64](a, b, c, s)
            nv.synchronize()
            times[name].append((time.perf_counter() - start - spent[0]) * 1e3)
            compiled = next(iter(kernel._compiled.values()))
            words = compiled.words if name == "as_is" else without_float_controls(compiled.words)
            sizes[name] = len(words)
    for name, ms in times.items():
        print(f"{name:9s} median {statistics.median(ms[2:]):6.2f} ms  min {min(ms):6.2f}  "
              f"({len(ms) - 2} rounds after two warm-ups) words {sizes.get(name)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
