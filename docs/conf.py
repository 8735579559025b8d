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
    "myst_nb",
]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
# Importing an algorithm must not need a display or MuJoCo.
autodoc_mock_imports = []

# Tutorial notebooks (docs/notebooks/*.ipynb) are rendered with the outputs they were
# saved with: the test suite already executes every one of them in a real kernel
# (tests/test_notebooks.py), so running them again at build time would only double the
# time CI spends training agents. After editing a notebook, save it again with its
# outputs: python docs/notebooks/save_outputs.py docs/notebooks/NAME.ipynb
nb_execution_mode = "off"
nb_execution_raise_on_error = True
nb_merge_streams = True
myst_enable_extensions = ["dollarmath"]  # $...$ and $$...$$ in the notebooks' text

templates_path = []
exclude_patterns = ["_build"]
master_doc = "index"
try:
    import sphinx_rtd_theme  # noqa: F401
    html_theme = "sphinx_rtd_theme"
except ImportError:
    html_theme = "alabaster"
html_static_path = []
