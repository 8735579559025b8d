"""Sphinx configuration for the spinup docs (build: sphinx-build -W -b html docs docs/_build)."""
import os
import sys

sys.path.insert(0, os.path.abspath(".."))
from spinup.version import __version__  # noqa: E402

project = "spinup"
author = "spinup developers"
copyright = "2026, spinup developers (docs text adapted from OpenAI Spinning Up, MIT)"
version = release = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
# Importing an algorithm must not need a display or MuJoCo.
autodoc_mock_imports = []

templates_path = []
exclude_patterns = ["_build"]
master_doc = "index"
try:
    import sphinx_rtd_theme  # noqa: F401
    html_theme = "sphinx_rtd_theme"
except ImportError:
    html_theme = "alabaster"
html_static_path = []
