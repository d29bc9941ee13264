"""``numba.cuda.random`` on Vulkan: xoroshiro128+ generators, one state per invocation.

The generator is Blackman and Vigna's xoroshiro128+ (rotations 55, 14, 36, as
numba.cuda uses): a 128-bit state of two uint64 words per invocation, kept in a
device array of records ``(s0, s1)`` (``xoroshiro128p_dtype``), which the
device functions below read and advance in place. The states of an array are
one sequence, each state 2^64 steps past the previous one (the generator's
jump polynomial), so invocations draw from non-overlapping streams; both words
of the first state are one SplitMix64 output of the seed. These are the steps
numba.cuda takes: for the same seed the states and the uniform numbers are
bit for bit numba.cuda's, and the normal ones are its Box-Muller steps in its types
(float64 normals from float32 uniforms, as numba-cuda 0.30.4 draws them), equal up to
the last bits of log and cos.

Host side: ``create_xoroshiro128p_states(n, seed, subsequence_start=0,
stream=0)`` and ``init_xoroshiro128p_states(states, seed, ...)`` (computed on
the CPU with numba.njit, then copied). Kernel side: ``xoroshiro128p_next(states,
i)`` (uint64), ``xoroshiro128p_uniform_float64`` in [0, 1) and ``_float32`` (its
rounding), ``xoroshiro128p_normal_float32 / _float64`` (Box-Muller).
"""

import math

import numba
import numpy as np
from numba import float32, float64, int64, uint64

from ..dispatcher import jit

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
xoroshiro128p_type = numba.from_dtype(xoroshiro128p_dtype)

_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)  # x -> x advanced by 2^64 steps
_TWO_PI_64 = np.float64(2.0 * math.pi)
_TWO_PI_32 = np.float32(2.0 * math.pi)


# ---------------------------------------------------------------- shared by host and device
# numba.njit functions: the host computes initial states with them on the CPU, and kernels
# call them as device functions (recompiled for Vulkan, as any njit helper).


@numba.njit
def _rotl(x, k):
    x = uint64(x)
    return (x << uint64(k)) | (x >> uint64(64 - k))


@numba.njit
def _step(s0, s1):
    """One xoroshiro128+ step of the state (s0, s1): (its output, the next s0, s1)."""
    s0 = uint64(s0)
    s1 = uint64(s1)
    result = s0 + s1
    s1 ^= s0
    return result, _rotl(s0, 55) ^ s1 ^ (s1 << uint64(14)), _rotl(s1, 36)


@numba.njit
def _next(states, index):
    index = int64(index)
    result, s0, s1 = _step(states[index]["s0"], states[index]["s1"])
    states[index]["s0"] = s0
    states[index]["s1"] = s1
    return result


@numba.njit
def _unit64(x):
    """The float64 uniform in [0, 1) of output x: its top 53 bits."""
    return float64(x >> uint64(11)) * float64(1.0 / 9007199254740992.0)


@numba.njit
def _two_uniforms32(states, index):
    """The next two float32 uniforms of generator `index` (as two calls of
    xoroshiro128p_uniform_float32 draw them), its state read and written once: a kernel
    reads back what it stored only through memory, and Box-Muller's second draw would
    take that round trip."""
    index = int64(index)
    first, s0, s1 = _step(states[index]["s0"], states[index]["s1"])
    second, s0, s1 = _step(s0, s1)
    states[index]["s0"] = s0
    states[index]["s1"] = s1
    return float32(_unit64(first)), float32(_unit64(second))


# ---------------------------------------------------------------- device functions


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next uint64 of generator `index`, advancing its state."""
    return _next(states, index)


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform in [0, 1): the top 53 bits of the next number."""
    return _unit64(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform in [0, 1], the float64 one rounded (as numba.cuda's: it may round
    up to 1.0)."""
    return float32(xoroshiro128p_uniform_float64(states, index))


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A standard normal float64: Box-Muller on two *float32* uniforms, as numba.cuda
    computes it (so log(u1) is a float32 log; then float64 from -2 log(u1) and 2 pi u2 on)."""
    u1, u2 = _two_uniforms32(states, index)
    return math.sqrt(-float64(2.0) * math.log(u1)) * math.cos(_TWO_PI_64 * u2)


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A standard normal float32: Box-Muller on two float32 uniforms, all in float32
    (2 pi rounded to float32 first), as numba.cuda computes it."""
    u1, u2 = _two_uniforms32(states, index)
    return math.sqrt(-float32(2.0) * math.log(u1)) * math.cos(_TWO_PI_32 * u2)


# ---------------------------------------------------------------- host: initial states

@numba.njit
def _jump(states, index):
    s0 = uint64(0)
    s1 = uint64(0)
    for word in _JUMP:
        for bit in range(64):
            if uint64(word) & (uint64(1) << uint64(bit)):
                s0 ^= uint64(states[index]["s0"])
                s1 ^= uint64(states[index]["s1"])
            _next(states, index)
    states[index]["s0"] = s0
    states[index]["s1"] = s1


@numba.njit
def _splitmix64(x):
    x = uint64(x) + uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x, z ^ (z >> uint64(31))


@numba.njit
def _init_states(states, seed, subsequence_start):
    n = states.shape[0]
    if n == 0:
        return
    _, z = _splitmix64(uint64(seed))
    states[0]["s0"] = z  # both words from one SplitMix64 output, as numba.cuda does
    states[0]["s1"] = z
    for _ in range(subsequence_start):
        _jump(states, 0)
    for i in range(1, n):
        states[i]["s0"] = states[i - 1]["s0"]
        states[i]["s1"] = states[i - 1]["s1"]
        _jump(states, i)


def _host_states(n, seed, subsequence_start):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise TypeError(f"n must be an int >= 0, not {n!r}")
    states = np.zeros(int(n), dtype=xoroshiro128p_dtype)
    _init_states(states, np.uint64(int(seed) & (2**64 - 1)), int(subsequence_start))
    return states


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fill device array `states` (of ``xoroshiro128p_dtype``) from `seed`."""
    states.copy_to_device(_host_states(len(states), seed, subsequence_start),
                          stream=stream or None)  # fmt: skip


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A device array of `n` generator states seeded from `seed` (see the module docstring)."""
    from .. import runtime

    host = _host_states(n, seed, subsequence_start)
    return runtime.to_device(host, stream=stream or None)


__all__ = [
    "create_xoroshiro128p_states",
    "init_xoroshiro128p_states",
    "xoroshiro128p_dtype",
    "xoroshiro128p_next",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
    "xoroshiro128p_type",
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
]
