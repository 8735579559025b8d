"""The Introduction to RL (docs/intro/) defines the labels other pages link to, comes first
in the index, and every algorithm page links the intro concepts it builds on."""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")

# Labels the algorithm pages, the user guide and the research pages link to.
REQUIRED_LABELS = {
    "intro-concepts", "concepts-spaces", "concepts-policies", "concepts-trajectories",
    "concepts-return", "concepts-value-functions", "concepts-bellman", "concepts-advantage",
    "intro-kinds", "kinds-model-free-vs-model-based", "kinds-policy-optimization",
    "kinds-q-learning", "intro-policy-optimization", "pg-simplest", "pg-eglp-lemma",
    "pg-reward-to-go", "pg-baselines", "pg-other-forms",
}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def intro_labels():
    labels = set()
    for path in glob.glob(os.path.join(DOCS, "intro", "*.rst")):
        labels |= set(re.findall(r"^\.\. _([\w-]+):\s*$", read(path), flags=re.M))
    return labels


def test_required_labels_defined():
    assert REQUIRED_LABELS <= intro_labels(), REQUIRED_LABELS - intro_labels()


def test_intro_first_in_index():
    index = read(os.path.join(DOCS, "index.rst"))
    toctrees = re.findall(r"^\.\. toctree::\n((?:   .*\n|\n)*)", index, flags=re.M)
    assert ":caption: Introduction to RL" in toctrees[0]
    for page in ("intro/concepts", "intro/kinds", "intro/policy_optimization"):
        assert re.search(rf"^   {page}$", toctrees[0], flags=re.M), page


def test_every_algorithm_page_links_intro_concepts():
    labels = intro_labels()
    pages = sorted(glob.glob(os.path.join(DOCS, "algorithms", "*.rst")))
    assert len(pages) >= 9
    for path in pages:
        text = read(path)
        match = re.search(r"\*\*Background you need\*\*(.*?)\n\n", text, flags=re.S)
        assert match, f"{path}: no 'Background you need' line"
        linked = re.findall(r":ref:`[^`<]*<([\w-]+)>`", match.group(1))
        assert linked, f"{path}: the background line links nothing"
        assert set(linked) <= labels, f"{path}: unknown labels {set(linked) - labels}"
        # Near the top: inside the Background section, before its first subsection.
        assert match.start() < text.find("Quick Facts"), path
