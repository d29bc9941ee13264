"""Session 17: which forms of type-fuzz seeds 95 and 1060 the H200 computes right.

Session 16 (s16_low_word.py) found both seeds right when the 0/1 integer is a select.
Here the forms a code generation workaround could emit, each beside the statement the
failure needs (seed 1060's second output, or a float64 division), compared with
numba.njit element by element:
- seed 1060, y * (1 & b) with y = (a if a else 0): as a select on the low bit, as a
  product with a select, as a mask, with the 1 a kernel argument (the driver cannot
  know the and gives 0 or 1);
- seed 95, L & R with L a bool: the selects the workaround could emit.

What the H200 answered (results/h200_2026-12-01_s17_select_forms.txt): before the
rewrite, right as a select on the bit, a product with a select, a mask and with the 1 as
an argument; wrong as the original, the bit by a shift pair and the and on uint64; for
seed 95, right as select(L, R & 1, 0), select(L, R, 0) & 1, bools and the argument, wrong
as R & select(L, 1, 0). With spirv/zero_one.h (selects for products and ands with 0/1 and
0/-1 values) all 22 are right.

    python3 benchmarks/experiments/s17_select_forms.py
"""

import os
import sys

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from s9_nvidia_bisect import L95, O1, R95, arguments, run_each  # noqa: E402

Y = "(a_i8[i] if a_i8[i] else s_b)"
B = "a_i64[i]"
BESIDE = {"O1": O1, "div": "out1[i] = a_f64[i] / 3.0"}
FORMS_1060 = {
    "original": f"{Y} * (True & {B})",
    "select on the bit": f"{Y} if ({B} & 1) else 0",
    "select on the bit != 0": f"{Y} if ({B} & 1) != 0 else 0",
    "times select(bit, 1, 0)": f"{Y} * (1 if {B} & 1 else 0)",
    "mask": f"{Y} & -(1 & {B})",
    "one as an argument": f"{Y} * (s_one & {B})",
    "bit by a shift": f"{Y} * (({B} << 63) >> 63) * -1",
    "bit as uint64": f"{Y} * np.int64(np.uint64({B}) & np.uint64(1))",
}
FORMS_95 = {
    "original": f"{L95} & {R95}",
    "select(L, R & 1, 0)": f"({R95} & 1) if {L95} else 0",
    "select(L, R, 0) & 1": f"({R95} if {L95} else 0) & 1",
    "R & select(L, 1, 0)": f"{R95} & (1 if {L95} else 0)",
    "L and R & 1 as bools": f"np.int64({L95} and (({R95} & 1) != 0))",
    "one as an argument": f"({L95} & s_one) & {R95}",
}


def programs():
    out = {}
    for form, expr in FORMS_1060.items():
        for tag, beside in BESIDE.items():
            out[f"1060 {form} [{tag}]"] = f"out0[i] = {expr}\n        {beside}"
    for form, expr in FORMS_95.items():
        out[f"95 {form}"] = f"out0[i] = {expr}"
    return out


def main():
    args = arguments()
    args["s_one"] = np.int64(1)
    run_each(programs(), args, {}, None)


if __name__ == "__main__":
    main()
