"""Session 22: does the H200's driver unroll the trig chain's `for _ in range(8)`, and
does its code size cost it? (issue 7: the chain at 0.72x numba.cuda)

The kernel's 31 KB binary (``inspect_pipeline``: "Binary Size") is about what eight
copies of one round's code would make. Each variant rewrites the loop control of every
OpLoopMerge in the final SPIR-V before the pipeline is made (None as emitted, DontUnroll,
Unroll) and runs bench_math's trig chain, with numba.cuda's in the same run.

    python3 benchmarks/experiments/s22_trig_loop_control.py [--log2 24] [--rounds 2]
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_math  # noqa: E402
from backends import CudaBackend, VulkanBackend  # noqa: E402

OP_LOOP_MERGE = 246
CONTROLS = {"as emitted": None, "DontUnroll": 0x2, "Unroll": 0x1}


def set_loop_control(words, control):
    """Set the loop control mask of every OpLoopMerge in `words` (in place); how many."""
    i, n, count = 5, len(words), 0
    while i < n:
        count_op = int(words[i])
        length, opcode = count_op >> 16, count_op & 0xFFFF
        if opcode == OP_LOOP_MERGE and length == 4:
            words[i + 3] = control
            count += 1
        i += max(length, 1)
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inner", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from numba_vulkan import launchers

    make = launchers.make_launcher
    chosen = [None]

    def patched(device, compiled):
        if chosen[0] is not None:
            print(f"    loop merges set: {set_loop_control(compiled.words, chosen[0])}")
        return make(device, compiled)

    launchers.make_launcher = patched
    vk = VulkanBackend()
    try:
        cu = CudaBackend()
    except Exception as e:  # noqa: BLE001
        cu = None
        print(f"numba.cuda: {type(e).__name__}: {e}")
    for _ in range(args.rounds):
        for name, control in CONTROLS.items():
            chosen[0] = control
            r = bench_math.fig_trig_chain(vk, args, False)
            stats = r["pipeline"]
            print(f"numba_vulkan {name:>10}: {r['rate']:7.2f} x10^9/s correct={r['correct']} "
                  f"registers={stats.get('Register Count')} binary={stats.get('Binary Size')}")
        if cu is not None:
            r = bench_math.fig_trig_chain(cu, args, False)
            print(f"numba.cuda              : {r['rate']:7.2f} x10^9/s correct={r['correct']} "
                  f"{r['pipeline']}")


if __name__ == "__main__":
    main()
