"""A Vulkan kernel's output used by CuPy and PyTorch without a copy, and back (docs/interop.md).

Runs on an NVIDIA GPU whose Vulkan driver exports memory, with CuPy or PyTorch
installed; elsewhere it says why it cannot and exits cleanly.
"""

import numpy as np

import numba_vulkan as nv
from numba_vulkan.errors import VulkanSupportError


@nv.jit
def ramp(a):
    i = nv.global_id(0)
    if i < a.size:
        a[i] = i * 0.5


@nv.jit
def add_one(a):
    i = nv.global_id(0)
    if i < a.size:
        a[i] += 1.0


def main():
    n = 1 << 20
    expect = np.arange(n, dtype=np.float32) * np.float32(0.5)
    try:
        import cupy
    except ImportError:
        cupy = None
    try:
        import torch
    except ImportError:
        torch = None
    try:
        d = nv.device_array(n, np.float32, exportable=True)  # memory CUDA can share
        ramp[n // 256, 256](d)
        if cupy is not None:
            c = nv.to_cupy(d)  # waits for ramp, then shares the memory
            assert float(c[-1]) == expect[-1]
            c *= 2  # CuPy writes into the Vulkan array...
            add_one[n // 256, 256](nv.from_cuda(c))  # ...from_cuda waits for CuPy's stream
            np.testing.assert_array_equal(d.copy_to_host(), 2 * expect + 1)
            print("CuPy shares the array:", c[:4], "->", d[:4].copy_to_host())
        if torch is not None:
            t = nv.to_torch(d)
            t -= 1
            torch.cuda.synchronize()  # before Vulkan reads what PyTorch wrote
            np.testing.assert_array_equal(d.copy_to_host(), 2 * expect)
            print("PyTorch shares the array:", t[:4].cpu().numpy())
        if cupy is None and torch is None:
            print("neither CuPy nor PyTorch is installed; nothing to share with")
    except VulkanSupportError as e:
        print("CUDA interop is not available here:", e)


if __name__ == "__main__":
    main()
