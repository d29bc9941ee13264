"""saxpy: out = a * x + y on the default Vulkan device, checked against NumPy.

Run: python3 examples/saxpy.py [n]
"""

import sys

import numpy as np

import numba_vulkan as nv


@nv.jit
def saxpy(a, x, y, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def main(n=1 << 20):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(2.0)

    # NumPy arrays are copied to the device and the output back after the launch.
    out = np.empty_like(x)
    saxpy.forall(n)(a, x, y, out)

    # Device arrays stay on the device: launches return at once.
    dx, dy, dout = nv.to_device(x), nv.to_device(y), nv.device_array(n, np.float32)
    saxpy.forall(n)(a, dx, dy, dout)
    out2 = dout.copy_to_host()

    want = a * x + y
    ok = np.array_equal(out, want) and np.array_equal(out2, want)
    print(f"saxpy on {nv.get_device().info.name}: n={n}, out[:4]={out[:4]}, matches NumPy: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20))
