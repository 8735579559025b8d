"""Each algorithm page's pseudocode, its module docstring and its code tags agree.

The format (shared by every page under ``docs/algorithms``):

* The page holds the numbered pseudocode between a line ``.. begin-pseudocode`` and
  a line ``.. end-pseudocode``; the module docstring of ``spinup/algos/<algo>/<algo>.py``
  holds the same lines between the same two markers. Blank lines and
  ``.. code-block`` lines are ignored, whitespace is collapsed, then the two lists of
  lines must be equal.
* A numbered step is a line ``N. text``. The code marks what implements step N with
  a comment or docstring tag ``[ALGO line N]`` (also ``[ALGO lines 4-5]`` or
  ``[ALGO lines 4, 6]``), anywhere under ``spinup/algos/<algo>/``.
* The page has a line-to-code table: a table whose first header cell is ``Line``;
  its first column lists step numbers (``4``, ``4-5`` or ``4, 5``).

Checked: every tag names an existing step; every step that does something (all but
the bare loop ends ``end for`` / ``end while`` / ``end if`` / ``else`` / ``until ...``)
is tagged in the code and appears in the line-to-code table.
"""
import ast
import re
from pathlib import Path

import docutils.core
import docutils.nodes
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "algorithms"
ALGOS = ["vpg", "trpo", "ppo", "a2c", "a3c", "ddpg", "td3", "sac", "dqn"]
BEGIN, END = ".. begin-pseudocode", ".. end-pseudocode"
STEP = re.compile(r"^(\d+)\.\s+(.*)$")
STRUCTURAL = re.compile(r"^(end(\s+(for|while|if|loop))?|else|until\b.*|repeat)\s*[.:]?$",
                        re.IGNORECASE)


def marked_lines(text, where):
    """The normalised lines between the markers of ``text`` (exactly one block)."""
    lines = [ln.strip() for ln in text.splitlines()]
    assert lines.count(BEGIN) == 1 and lines.count(END) == 1, \
        f"{where}: needs exactly one '{BEGIN}' and one '{END}' line"
    start, stop = lines.index(BEGIN), lines.index(END)
    assert start < stop, f"{where}: '{END}' comes before '{BEGIN}'"
    kept = []
    for ln in lines[start + 1:stop]:
        if not ln or ln.startswith(".. code-block"):
            continue
        kept.append(" ".join(ln.split()))
    assert kept, f"{where}: empty pseudocode"
    return kept


def steps(lines):
    """``{N: text}`` of the numbered lines, checking they run 1, 2, 3, ..."""
    found = {}
    for ln in lines:
        m = STEP.match(ln)
        if m:
            found[int(m.group(1))] = m.group(2)
    assert list(found) == list(range(1, len(found) + 1)), \
        f"steps must be numbered 1..N in order, got {list(found)}"
    return found


def numbers(spec):
    """Step numbers in a tag or table cell: '4', '4-5', '4, 6', '4 and 5'."""
    out = set()
    for a, b in re.findall(r"(\d+)(?:\s*[-–]\s*(\d+))?", spec):
        out.update(range(int(a), int(b or a) + 1))
    return out


def code_tags(algo):
    """Every step number tagged ``[ALGO line(s) ...]`` in the algorithm's package."""
    tag = re.compile(r"\[" + algo.upper() + r" lines? ([0-9][0-9 ,\-–]*(?:and [0-9]+)?)")
    found = set()
    for path in sorted((ROOT / "spinup" / "algos" / algo).glob("*.py")):
        for spec in tag.findall(path.read_text(encoding="utf-8")):
            found |= numbers(spec)
    return found


def parse_rst(text):
    """The page as a docutils tree (Sphinx-only roles and directives just report)."""
    return docutils.core.publish_doctree(
        text, settings_overrides=dict(report_level=5, halt_level=5, warning_stream=False))


def table_steps(doctree):
    """Step numbers in the first column of the table(s) whose first header cell is Line."""
    found, tables = set(), 0
    for table in doctree.findall(docutils.nodes.table):
        head = next(iter(table.findall(docutils.nodes.thead)), None)
        if head is None:
            continue
        first = next(iter(head.findall(docutils.nodes.entry)), None)
        if first is None or first.astext().strip() != "Line":
            continue
        tables += 1
        for body in table.findall(docutils.nodes.tbody):
            for row in body.findall(docutils.nodes.row):
                cell = next(iter(row.findall(docutils.nodes.entry)))
                found |= numbers(cell.astext())
    assert tables, "no line-to-code table (a table whose first header cell is 'Line')"
    return found


def page_text(algo):
    return (PAGES / f"{algo}.rst").read_text(encoding="utf-8")


def docstring(algo):
    path = ROOT / "spinup" / "algos" / algo / f"{algo}.py"
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
    assert doc, f"{path} has no module docstring"
    return doc


def test_every_algorithm_page_has_pseudocode():
    missing = [a for a in ALGOS if BEGIN not in page_text(a)]
    assert not missing, f"pages without '{BEGIN}': {missing}"
    # and no page elsewhere in docs/algorithms is forgotten by the checks below
    others = {p.stem for p in PAGES.glob("*.rst") if BEGIN in p.read_text(encoding="utf-8")}
    assert others <= set(ALGOS), f"pages with pseudocode but unknown here: {others - set(ALGOS)}"


@pytest.mark.parametrize("algo", ALGOS)
def test_docstring_matches_page(algo):
    page = marked_lines(page_text(algo), f"docs/algorithms/{algo}.rst")
    doc = marked_lines(docstring(algo), f"spinup/algos/{algo}/{algo}.py docstring")
    for i, (p, d) in enumerate(zip(page, doc)):
        assert p == d, f"{algo}: pseudocode line {i + 1} differs\n page: {p}\n code: {d}"
    assert len(page) == len(doc), f"{algo}: page has {len(page)} lines, docstring {len(doc)}"


@pytest.mark.parametrize("algo", ALGOS)
def test_tags_and_line_table_cover_the_steps(algo):
    numbered = steps(marked_lines(page_text(algo), f"docs/algorithms/{algo}.rst"))
    actions = {n for n, text in numbered.items() if not STRUCTURAL.match(text)}
    tags = code_tags(algo)
    assert tags, f"{algo}: no [{algo.upper()} line N] tags in spinup/algos/{algo}/"
    unknown = sorted(tags - set(numbered))
    assert not unknown, f"{algo}: code tags name steps the pseudocode lacks: {unknown}"
    untagged = sorted(actions - tags)
    assert not untagged, f"{algo}: steps without a [{algo.upper()} line N] tag: {untagged}"
    in_table = table_steps(parse_rst(page_text(algo)))
    unlisted = sorted(actions - in_table)
    assert not unlisted, f"{algo}: steps missing from the line-to-code table: {unlisted}"
    stray = sorted(in_table - set(numbered))
    assert not stray, f"{algo}: line-to-code table names steps that do not exist: {stray}"
