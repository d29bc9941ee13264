#!/usr/bin/env bash
# Build the documentation (Sphinx + MyST over the Markdown pages in docs/, the API
# reference from the docstrings, the benchmark figures, the gallery's pictures made by the
# examples on the default Vulkan device) into build/docs/html.
# Warnings are errors. The tools come from PyPI into build/docs-venv (made once; it sees
# the system's numba and numpy, and imports numba_vulkan from src/ or the installed
# package, so build the extension first: scripts/dev-build.sh or scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/docs-venv
if [ ! -x "$venv/bin/sphinx-build" ]; then
    python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q "sphinx>=8,<10" "myst-parser>=4,<6" "furo>=2024" "matplotlib>=3.8"
fi
"$venv/bin/python" scripts/docs_figures.py
"$venv/bin/python" scripts/docs_gallery.py   # runs the examples on the default device
PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" NUMBA_VULKAN_CACHE=0 \
    "$venv/bin/sphinx-build" -W --keep-going -q -b html docs build/docs/html
echo "documentation: build/docs/html/index.html"
