"""Session 16: type-fuzz seeds 95 and 1060 with the low bit taken on 32 bits.

On the H200 (session 16's fuzz run) seed 1060's `y * (True & x)` (x int64, y the `if`'s
select) came out as y * (x != 0): every even nonzero x gave y. Seed 95 and-s a bool with
a 64-bit value. Both read the low bit of a 64-bit value: here the same programs with the
and done on the low 32-bit word (np.int32 of a 64-bit integer wraps, as in numba.njit,
and the low bit is unchanged), beside the statements the failures need.

What the H200 answered (results/h200_2026-12-01_s16_low_word.txt; the same with
NUMBA_VULKAN_HIDE_INT_RANGES 0, 7 and the default): the and on 32 bits leaves both wrong;
both pass written as selects, seed 95 as `(right & 1) if left else 0` and seed 1060 with
`(1 if x % 2 else 0)` for `True & x`. A lead for a code generation workaround (a bool or
a low bit used as a 0/1 integer emitted as a select), not yet one.

    python3 benchmarks/experiments/s16_low_word.py
"""

import os
import sys

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from s9_nvidia_bisect import L95, O0, O1, P95, P1060, R95, arguments, run_each  # noqa: E402

VARIANTS = {
    "95 original": P95["95 original"],
    "95 and on int32": f"out0[i] = np.int64(np.int32({L95}) & np.int32({R95}))",
    "95 and on uint32": f"out0[i] = np.int64(np.uint32({L95}) & np.uint32({R95}))",
    "95 bool select": f"out0[i] = ({R95} & 1) if {L95} else 0",
    "1060 original": P1060["1060 original"],
    "1060 and on int32": O0.replace("(True & a_i64[i])", "np.int64(np.int32(True) & np.int32(a_i64[i]))")
    + f"\n        {O1}",
    "1060 and on uint32": O0.replace("(True & a_i64[i])", "np.int64(np.uint32(a_i64[i]) & np.uint32(1))")
    + f"\n        {O1}",
    "1060 and as select": O0.replace("(True & a_i64[i])", "(1 if a_i64[i] % 2 else 0)") + f"\n        {O1}",
}


def main():
    run_each(VARIANTS, arguments(), {}, None)


if __name__ == "__main__":
    main()
