"""Random control-flow kernels against CPython (see gen.py).

CI runs a fixed set of seeds (NVK_SLOW_TESTS=1 adds 240 more); `python3 tests/fuzz/run_fuzz.py --seeds 0:500`
runs any range and prints each failing program.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import gen
import run_fuzz

SEED_TIMEOUT = 30  # seconds; a seed that hangs the compiler fails instead of stalling CI

CI_SEEDS = range(60)
SLOW_SEEDS = range(60, 300)


def test_generator_is_deterministic():
    assert generate_twice(12) and generate_twice(47)


def generate_twice(seed):
    a, b = gen.generate(seed), gen.generate(seed)
    return a.python_src == b.python_src and a.kernel_src == b.kernel_src


def test_generator_covers_the_constructs():
    # Over the CI seeds every construct of the brief appears, and CPython runs
    # each program to completion (bounded loops) within 32-bit values.
    seen = set()
    for seed in CI_SEEDS:
        program = gen.generate(seed)
        seen |= program.features
        values = gen.run_python(program, gen.inputs(seed, 16))
        assert np.abs(values).max() < 2**31
    wanted = {
        "while",
        "while_true",
        "neg_step",
        "pos_step",
        "var_step",
        "break",
        "continue",
        "return",
        "return_in_loop",
        "return_in_nested_loop",
        "and",
        "or",
        "not",
        "ifexp",
        "elif",
        "else",
        "floordiv",
        "mod",
        "var_divisor",
        "chained",
        "loop_else",
    }
    assert wanted <= seen, wanted - seen


def _workers(make):
    """A process that runs the seeds (see run_fuzz.Worker), replaced after a hang."""
    box = {"make": make, "worker": make()}
    yield box
    if box["worker"]:
        box["worker"].close()


@pytest.fixture(scope="module")
def worker(device):
    yield from _workers(lambda: run_fuzz.Worker(64))


@pytest.fixture(scope="module")
def memory_worker(device):
    """The same for the kernels that keep their variables in device memory."""
    yield from _workers(
        lambda: run_fuzz.Worker(64, gen.check_in_memory, run_fuzz.describe_in_memory))


def check_in_worker(box, seed):
    box["worker"] = box["worker"] or box["make"]()
    report, healthy = box["worker"].check(seed, SEED_TIMEOUT)
    if not healthy:
        box["worker"] = None
    assert report is None, report


@pytest.mark.device
@pytest.mark.parametrize("seed", CI_SEEDS)
def test_fuzz_seed(worker, seed):
    check_in_worker(worker, seed)


@pytest.mark.slow
@pytest.mark.device
@pytest.mark.skipif(not os.environ.get("NVK_SLOW_TESTS"), reason="set NVK_SLOW_TESTS=1 to run")
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_fuzz_seed_slow(worker, seed):
    check_in_worker(worker, seed)


#: Seeds run with the variables in device memory (gen.in_memory): 16 of them keep elements in
#: registers on lavapipe (seeds 0, 3, 5, 8, 9, 10, 16, 17, 23, 24, 25, 27, 31, 36, 37, 39).
MEMORY_SEEDS = range(40)


@pytest.mark.device
@pytest.mark.parametrize("seed", MEMORY_SEEDS)
def test_fuzz_seed_in_memory(memory_worker, seed):
    check_in_worker(memory_worker, seed)


@pytest.mark.device
def test_fuzz_in_memory_keeps_elements_in_registers(device):
    # The seeds above test the loop element promotion only where it runs: it does for these
    import numba_vulkan as nv

    kept = 0
    for seed in (0, 5, 8, 16, 27):
        source = gen.in_memory(gen.generate(seed).kernel_src)
        kernel = nv.jit(gen._load(source, "fuzz_kernel", {"nv": nv}))
        xs = gen.inputs(seed, 64)
        kernel.inspect_spirv(xs, np.zeros((64, 3), np.int32), np.zeros((64, 3), np.int64))
        (compiled,) = kernel.specialisations.values()
        kept += compiled.promoted_elements > 0
    assert kept == 5


#: Seeds run with the group loop forced (frontend/grid.py) over 270,000 inputs: 4,219
#: workgroups of forall's 64, so some dispatched workgroups take a second turn after their
#: kernels' returns, breaks and loops.
GROUP_LOOP_SEEDS = (0, 1, 2, 3, 4, 5)


@pytest.mark.device
@pytest.mark.parametrize("memory", [False, True])
def test_fuzz_seeds_with_the_group_loop(device, monkeypatch, memory):
    from numba_vulkan import config

    monkeypatch.setattr(config, "GROUP_LOOP", 2)
    for seed in GROUP_LOOP_SEEDS:
        assert gen.check(seed, 270_000, memory) is None


# Seeds whose kernels computed wrong results, found on 2026-12-01 (tests/fuzz/reduce.py shrinks
# them; benchmarks/results/h200_2026-12-01_controlflow_fuzz.txt has the reduced programs).
# A seed listed in KNOWN_WRONG is expected to fail on that driver and to pass elsewhere (strict
# xfail: a fix makes the list shrink). All pass now, and stay as seeds that must pass on every
# driver:
# - lavapipe's 1747 and 2408 (it lost the stores of invocations that left a loop towards an
#   enclosing construct's merge, the shape of SPIRV-Tools' merge-return): since the
#   structurizer took over returns from inside loops;
# - lavapipe's 10301 (invocations that had broken out of a `for` loop from a selection's merge
#   block ran its `else`): since the arms of an `if` that ends a loop's body leave the loop
#   themselves;
# - NVIDIA's nine, which all branch on a 64-bit `x + x` compared with a constant: since
#   that constant is hidden from NVIDIA's compiler (kir/int_ranges.h,
#   kHideCompareConstants).
KNOWN_WRONG = {}
FIXED = (386, 1248, 1678, 1747, 1751, 1967, 2408, 2418, 2632, 2792, 4444, 10301)


@pytest.mark.device
@pytest.mark.parametrize("seed", sorted({s for seeds in KNOWN_WRONG.values() for s in seeds}) + list(FIXED))
def test_known_wrong_seed(worker, device, request, seed):
    for driver, seeds in KNOWN_WRONG.items():
        if driver in device.info.name and seed in seeds:
            request.applymarker(pytest.mark.xfail(strict=True, reason=f"wrong on {driver}"))
    check_in_worker(worker, seed)
