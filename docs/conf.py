"""Sphinx configuration: the Markdown pages in docs/ (MyST) plus the API reference from the
docstrings. Built by scripts/docs.sh (warnings are errors there)."""

import glob
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# The source tree when it holds a built extension (scripts/dev-build.sh), else the installed package.
if glob.glob(os.path.join(ROOT, "src", "numba_vulkan", "_core*")):
    sys.path.insert(0, os.path.join(ROOT, "src"))

project = "numba_vulkan"
author = "the numba_vulkan developers"
copyright = "2026, the numba_vulkan developers"
# The package's version, from the file pyproject.toml reads it from (no import needed).
with open(os.path.join(ROOT, "src", "numba_vulkan", "_version.py")) as f:
    release = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M).group(1)

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = True  # "Attributes" as fields: no second description of a member
autodoc_member_order = "bysource"
autodoc_typehints = "none"
html_theme = "furo"
html_title = "numba_vulkan"
html_static_path = []
