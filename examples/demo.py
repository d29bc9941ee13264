"""The README demo: a kernel written in Python runs on the default Vulkan device.

Run: python3 examples/demo.py
"""

import numpy as np

import numba_vulkan as nv


@nv.jit
def squares_of_odds(values, out):
    i = nv.global_id(0)
    if i < out.size:
        v = values[i]
        out[i] = v * v if v % 2 == 1 else -v


def main():
    values = np.arange(10, dtype=np.int32)
    out = np.zeros_like(values)
    squares_of_odds.forall(values.size)(values, out)
    info = nv.get_device().info
    print(f"device: {info.name} ({info.kind})")
    print(f"input:  {values.tolist()}")
    print(f"output: {out.tolist()}")
    want = np.where(values % 2 == 1, values * values, -values)
    print("matches NumPy:", bool(np.array_equal(out, want)))


if __name__ == "__main__":
    main()
