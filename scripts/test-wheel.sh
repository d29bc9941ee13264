#!/usr/bin/env bash
# CI: the manylinux wheel in a fresh virtual environment. Builds it with
# scripts/wheel.sh, installs it in a new venv (build/wheel-venv; numba and numpy come
# from PyPI), then, from a directory outside the checkout, checks the version, the
# py.typed marker, that the package is the installed one, and runs kernels on the default
# Vulkan device against NumPy (python -m numba_vulkan's health line too). Any failure
# ends the script with a non-zero status. Under half a minute after scripts/setup.sh
# (the build is current), about 2 minutes with the build from scratch (2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
PY=${PYTHON:-python3}
start=$SECONDS

# pyproject.toml takes the version from here (scripts/wheel.sh refuses 0.1.0).
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' src/numba_vulkan/_version.py)
mkdir -p build
bash scripts/wheel.sh | tee build/wheel.log
wheel=$root/$(tail -n 1 build/wheel.log)
case "$wheel" in
    */numba_vulkan-"$version"-*manylinux*.whl) ;;
    *) echo "test-wheel: scripts/wheel.sh made no manylinux wheel of $version: $wheel" >&2
       exit 1 ;;
esac

# A fresh venv, without the system's packages. Debian's Python needs python3-venv for it.
venv=$root/build/wheel-venv
rm -rf "$venv"
if ! "$PY" -m venv "$venv" 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "test-wheel: installing python3-venv"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
        rm -rf "$venv"
    fi
    "$PY" -m venv "$venv"
fi
vpy=$venv/bin/python
"$vpy" -m pip install -q --upgrade "pip>=23"
"$vpy" -m pip install -q "$wheel"
"$vpy" -m pip check

# Outside the checkout, so that nothing of src/ can be imported; a fresh kernel cache.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export NUMBA_VULKAN_CACHE_DIR=$work/cache
unset PYTHONPATH
"$vpy" - "$version" "$venv" <<'EOF'
import importlib.metadata
import importlib.resources
import os
import sys

import numpy as np

import numba_vulkan as nv

version, venv = sys.argv[1], os.path.realpath(sys.argv[2])
where = os.path.realpath(nv.__file__)
assert where.startswith(venv + os.sep), f"numba_vulkan imported from {where}, not the venv"
assert hasattr(nv, "_core"), "no numba_vulkan._core: this is not the C++-core numba_vulkan"
installed = importlib.metadata.version("numba_vulkan")
assert installed == version, f"installed distribution is {installed}, _version.py says {version}"
assert nv.__version__ == version, f"numba_vulkan.__version__ is {nv.__version__}, want {version}"
typed = importlib.resources.files("numba_vulkan") / "py.typed"
assert typed.is_file(), "py.typed is not installed"

# The README's kernel, and a ufunc on a device array, against NumPy.
@nv.jit
def saxpy(a, x, y, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]

x = np.arange(1000, dtype=np.float32)
y = np.ones_like(x)
out = np.empty_like(x)
saxpy.forall(x.size)(np.float32(2.0), x, y, out)
assert np.array_equal(out, np.float32(2.0) * x + y), out[:8]
d = nv.to_device(x)
s = np.asarray(np.sqrt(d) * 2 + d)
assert np.allclose(s, np.sqrt(x) * 2 + x, rtol=1e-6), s[:8]
print(f"test-wheel: numba_vulkan {nv.__version__} from {where}: py.typed, "
      f"saxpy and a ufunc match NumPy on {nv.get_device().info.name}")
EOF
"$vpy" -m numba_vulkan | tee "$work/main.log"
if ! tail -n 1 "$work/main.log" | grep -q "^health: ok"; then
    echo "test-wheel: python -m numba_vulkan's health line is not ok" >&2
    exit 1
fi
echo "test-wheel: passed in $((SECONDS - start)) s ($(basename "$wheel"))"
