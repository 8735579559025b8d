"""Sphinx configuration for the spinup docs (build: sphinx-build -W -b html docs docs/_build)."""
import os
import sys

sys.path.insert(0, os.path.abspath(".."))
from spinup.version import __version__  # noqa: E402

project = "spinup"
author = "spinup developers"
copyright = "2026, spinup developers"
# The text is this project's own. Pages that use ideas from OpenAI's Spinning Up docs
# (https://spinningup.openai.com) cite them as a reference.
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
# README files of committed data (docs/benchmarks/**/README.md) describe data, not pages.
exclude_patterns = ["_build", "benchmarks/**/README.md"]
master_doc = "index"
try:
    import sphinx_rtd_theme  # noqa: F401
    html_theme = "sphinx_rtd_theme"
except ImportError:
    html_theme = "alabaster"
html_static_path = []

# Math renders offline. MathJax 3 comes from the pip package django-static-mathjax (import
# name ``mathjax``, in the ``docs`` extra); the parts the pages need are copied into
# _static/mathjax, so no page loads a script from the network.
try:
    import mathjax as _mathjax_pkg
except ImportError as exc:
    raise RuntimeError("spinup docs: MathJax is missing; run pip install -e '.[docs]' "
                       "(it brings django-static-mathjax)") from exc
_MATHJAX_ES5 = os.path.join(os.path.dirname(_mathjax_pkg.__file__), "static", "mathjax", "es5")
mathjax_path = "mathjax/tex-mml-chtml.js"


def _copy_mathjax(app, exception):
    """Copy MathJax's browser build into _static/mathjax once the HTML pages are written.

    Left out: the SVG output, the combined ``*-full`` and MathML-only bundles, the node entry
    point and ``latest.js`` (a loader that fetches MathJax from a CDN).
    """
    if exception is not None or app.builder.format != "html":
        return
    import shutil
    skip = shutil.ignore_patterns("*svg*", "mml-*", "*-full*.js", "latest.js", "node-main.js")
    shutil.copytree(_MATHJAX_ES5, os.path.join(app.outdir, "_static", "mathjax"),
                    dirs_exist_ok=True, ignore=skip)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
