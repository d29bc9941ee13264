"""Regenerate the golden corpus: PYTHONPATH=src python3 tests/golden/regen.py [name ...]

Writes tests/golden/<name>.kir and <name>.spvasm for every kernel of kernels.py
(or the ones named), after validating each module with SPIRV-Tools. Review the
diff (`git diff tests/golden`) before committing: it is the change in code
generation.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import golden  # noqa: E402
from kernels import CASES  # noqa: E402


def main(names):
    from numba_vulkan import _core

    unknown = sorted(set(names) - set(CASES))
    if unknown:
        sys.exit(f"unknown golden kernels: {', '.join(unknown)} (known: {', '.join(CASES)})")
    for name in names or CASES:
        fn, argtypes = CASES[name]
        kir, spirv, words = golden.compile_case(fn, argtypes)
        _core.validate(words)
        kir_path, spirv_path = golden.paths(name)
        for path, text in ((kir_path, kir), (spirv_path, spirv)):
            with open(path, "w") as f:
                f.write(text)
        print(f"{name}: {len(kir.splitlines())} KIR lines, {len(words)} SPIR-V words")
    stale = {f.rsplit(".", 1)[0] for f in os.listdir(golden.HERE)
             if f.endswith((".kir", ".spvasm"))} - set(CASES)  # fmt: skip
    for name in sorted(stale):
        print(f"note: {name}.kir/.spvasm have no kernel in kernels.py any more (delete them)")


if __name__ == "__main__":
    main(sys.argv[1:])
