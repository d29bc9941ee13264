"""What the stream tests share: a kernel that keeps the device busy for a while, and two
small ones."""

import numpy as np

import numba_vulkan as nv


@nv.jit
def slow_fill(x, rounds):
    # x[i] = i + rounds, the long way round: keeps the device busy for a while.
    i = nv.global_id(0)
    if i < x.size:
        acc = np.int64(0)
        for r in range(rounds):
            acc = (acc * 7 + i + r) % 1000003
        if acc == -1:  # never (acc >= 0), but the loop must run to know
            x[i] = 0
        else:
            x[i] = i + rounds


@nv.jit
def plus_one(src, dst):
    i = nv.global_id(0)
    if i < dst.size:
        dst[i] = src[i] + 1


@nv.jit
def double(x):
    i = nv.global_id(0)
    if i < x.size:
        x[i] *= 2
