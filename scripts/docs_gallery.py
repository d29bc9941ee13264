"""The gallery's pictures, made by the examples themselves on the default Vulkan device.

Runs examples/{mandelbrot,heat_equation,nbody,image_blur}.py with --png into
docs/_generated/gallery_*.png for docs/gallery.md; each example checks its result against
NumPy and fails (and so fails the docs build) where it differs. Run by scripts/docs.sh.
"""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "_generated"
EXAMPLES = [
    ("mandelbrot.py", ["600", "480", "200"]),
    ("heat_equation.py", ["128", "400"]),
    ("nbody.py", ["256", "200"]),
    ("image_blur.py", ["256", "6"]),
]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    for name, args in EXAMPLES:
        png = OUT / f"gallery_{name[:-3]}.png"
        proc = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args, "--png",
                               str(png)], capture_output=True, text=True, env=env, check=False)  # fmt: skip
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        if proc.returncode != 0 or not png.exists():
            sys.stderr.write(proc.stdout + proc.stderr)
            raise SystemExit(f"examples/{name} failed: the gallery cannot be made")
        print(last)
    return 0


if __name__ == "__main__":
    sys.exit(main())
