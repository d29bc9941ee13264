#!/usr/bin/env bash
# Sourced on the lent NVIDIA host after `NVK_NO_BUILD=1 source .gl/remote-setup.sh`.
# Needs .gl/src/spirv-tools_2023.1.orig.tar.gz: `apt-get source --download-only spirv-tools`
# (with deb-src enabled) in .gl/src on this machine.
# Builds SPIRV-Tools (Debian's source of the same version) with the GPU host's own compiler:
# Debian's static libraries, built by GCC 12, crash when linked by that host's GCC 13.
set -e
# The image's default compiler (/opt/gcc) links libstdc++ statically, which breaks
# iostreams inside SPIRV-Tools; the system compiler links it dynamically.
export CC=/usr/bin/gcc CXX=/usr/bin/g++
t0=$(date +%s)
mkdir -p /tmp/spvt-src && tar xzf .gl/src/spirv-tools_2023.1.orig.tar.gz -C /tmp/spvt-src --strip-components=1
cmake -S /tmp/spvt-src -B /tmp/spvt-build2 -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSPIRV-Headers_SOURCE_DIR=/tmp/sysroot/usr -DSPIRV_SKIP_TESTS=ON -DSPIRV_SKIP_EXECUTABLES=ON \
  -DSPIRV_WERROR=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX=/tmp/spvt2 >/tmp/spvt-cfg.log 2>&1 || { tail -20 /tmp/spvt-cfg.log; exit 1; }
cmake --build /tmp/spvt-build2 --target install >/tmp/spvt-build2.log 2>&1 || { tail -30 /tmp/spvt-build2.log; exit 1; }
echo "spirv-tools built in $(( $(date +%s) - t0 )) s"
python3 -m pip install -q --upgrade --no-build-isolation --no-deps --target /tmp/site \
    -C cmake.define.CMAKE_PREFIX_PATH="/tmp/spvt2;/tmp/sysroot/usr" -C build-dir=/tmp/build-sys . || exit 1
export PYTHONPATH=/tmp/site
echo "numba_vulkan built"
