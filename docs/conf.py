"""Sphinx configuration: the Markdown pages in docs/ (MyST) plus the API reference from the
docstrings. Built by scripts/docs.sh (warnings are errors there)."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "src"))

project = "numba_vulkan"
author = "the numba_vulkan developers"
copyright = "2026, the numba_vulkan developers"
release = "0.1.0"

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
