"""The built HTML docs work offline: no page loads a script or a stylesheet from the network.

The docs are built once (``sphinx-build -b html -q``) into a temporary folder, or read from an
existing build when ``SPINUP_DOCS_HTML`` names its folder. Every page's ``<script src>`` and
``<link href>`` must be a relative path (scripts: to a file that exists in the build), and
pages with math must load the MathJax copied into ``_static/mathjax``. Notebooks are not
executed for this build (``nb_execution_mode=off``): what matters here is the page template.
"""
import os
import subprocess
import sys
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest

pytest.importorskip("sphinx", reason="sphinx is not installed (pip install -e '.[docs]')")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Resources(HTMLParser):
    """Collect the script sources, stylesheet links and inline script text of one page."""

    def __init__(self):
        super().__init__()
        self.scripts, self.links, self.inline = [], [], []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self._in_script = "src" not in attrs
            if "src" in attrs:
                self.scripts.append(attrs["src"])
        elif tag == "link" and attrs.get("href"):
            rel = (attrs.get("rel") or "").lower()
            if any(word in rel for word in ("stylesheet", "preload", "modulepreload", "icon")):
                self.links.append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.inline.append(data)


def _is_remote(url):
    return bool(urlsplit(url).scheme) or url.startswith("//")


@pytest.fixture(scope="module")
def built_pages(tmp_path_factory):
    out = os.environ.get("SPINUP_DOCS_HTML")
    if not out:
        out = str(tmp_path_factory.mktemp("html"))
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q",
                               "-D", "nb_execution_mode=off", "docs", out],
                              cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (f"sphinx-build failed:\n{proc.stdout[-3000:]}\n"
                                      f"{proc.stderr[-3000:]}")
    pages = {}
    for folder, _, files in os.walk(out):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                parser = _Resources()
                with open(path, encoding="utf-8") as f:
                    parser.feed(f.read())
                pages[path] = parser
    assert pages, "the build wrote no HTML page"
    return out, pages


def test_no_page_loads_a_remote_script_or_stylesheet(built_pages):
    _, pages = built_pages
    remote = [(os.path.basename(path), url) for path, page in pages.items()
              for url in page.scripts + page.links if _is_remote(url)]
    assert not remote, f"pages load resources from the network: {remote[:10]}"
    inline = [os.path.basename(path) for path, page in pages.items()
              if any("http://" in text or "https://" in text for text in page.inline)]
    assert not inline, f"inline scripts name a remote URL in: {inline[:10]}"


def test_every_local_script_exists_in_the_build(built_pages):
    _, pages = built_pages
    missing = []
    for path, page in pages.items():
        for url in page.scripts:
            target = os.path.normpath(os.path.join(os.path.dirname(path), urlsplit(url).path))
            if not os.path.isfile(target):
                missing.append((os.path.basename(path), url))
    assert not missing, f"scripts that are not in the build: {missing[:10]}"


def test_math_pages_use_the_bundled_mathjax(built_pages):
    out, pages = built_pages
    with_math = [page for page in pages.values()
                 if any("mathjax" in url.lower() for url in page.scripts)]
    assert with_math, "no page loads MathJax, yet the algorithm pages have equations"
    for page in with_math:
        urls = [url for url in page.scripts if "mathjax" in url.lower()]
        assert all(url.endswith("_static/mathjax/tex-mml-chtml.js") for url in urls), urls
    fonts = os.path.join(out, "_static", "mathjax", "output", "chtml", "fonts", "woff-v2")
    assert os.path.isfile(os.path.join(fonts, "MathJax_Main-Regular.woff"))
    assert not os.path.exists(os.path.join(out, "_static", "mathjax", "latest.js"))
