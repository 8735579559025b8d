"""The reading list (docs/intro/key_papers.rst) keeps its form, and the algorithm pages
link into it.

The page is parsed from its source. An entry is a label ``.. _paper-<name>:`` followed by
a bold title and the fields ``:Authors:``, ``:Year:``, ``:Venue:``, ``:ID:`` and ``:Why:``
(in that order). Checked:

* every entry has all five fields, a four-digit year, and an ID that is a linked arXiv
  identifier (``NNNN.NNNNN`` with an optional version ``vN``; the older ``NNNN.NNNN``
  form is accepted too) or a linked DOI (``10.NNNN/...``);
* the only entries without an identifier are the ones listed in ``NO_IDENTIFIER``, and
  each of those has a ``:Link:`` field;
* labels are unique, every area the issue lists is a section, and each has at least three
  entries;
* every bullet under "References" on each algorithm page (the part before "Other Public
  Implementations") links with ``:ref:`` to an entry that exists.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "intro" / "key_papers.rst"
ALGO_PAGES = sorted((ROOT / "docs" / "algorithms").glob("*.rst"))

AREAS = ["Deep Q-learning", "Policy gradients", "Deterministic and reparameterised policy gradients",
         "Distributional RL", "Exploration", "Transfer and multitask RL", "Hierarchy", "Memory",
         "Model-based RL", "Meta-RL", "Scaling RL", "RL in the real world", "Safety",
         "Imitation and inverse RL", "Reproducibility and evaluation", "Classic theory"]

# Cited works that have neither an arXiv id nor a DOI (looked for; none exists).
NO_IDENTIFIER = {
    "paper-vanhasselt2010double",   # NIPS 2010 proceedings only
    "paper-sutton2000pg",           # NIPS 12 proceedings only
    "paper-kakade2002npg",          # NIPS 14 proceedings only
    "paper-silver2014dpg",          # ICML 2014, PMLR 32 only
    "paper-kakade2002approx",       # ICML 2002, no online proceedings
    "paper-wu2017baselines",        # a blog post
    "paper-suttonbarto2018",        # a book (MIT Press)
    "paper-schaul2015uvfa",         # ICML 2015, PMLR 37 only
    "paper-hausman2018embedding",   # ICLR 2018, OpenReview only
    "paper-kapturowski2019r2d2",    # ICLR 2019, OpenReview only
    "paper-ziebart2010thesis",      # a PhD thesis (CMU)
}

ARXIV = re.compile(r"^`arXiv:(\d{4}\.\d{4,5}(v\d+)?) <https://arxiv\.org/abs/\1>`__$")
DOI = re.compile(r"^`doi:(10\.\d{4,9}/\S+) <https://doi\.org/\1>`__$")
FIELDS = ["Authors", "Year", "Venue", "ID", "Why"]
LABEL = re.compile(r"^\.\. _(paper-[a-z0-9]+):\s*$")


def parse_entries():
    """``{label: {"title": str, "section": str, field: value}}`` in page order."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    entries, section = {}, None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1]) and \
                len(lines[i + 1]) == len(line):
            section = line
        m = LABEL.match(line)
        if not m:
            continue
        label = m.group(1)
        assert label not in entries, f"label {label} appears twice"
        j = i + 1
        while not lines[j].strip():
            j += 1
        title = lines[j]
        assert re.fullmatch(r"\*\*.+\*\*", title), f"{label}: title line should be bold: {title!r}"
        fields, order = {}, []
        j += 1
        while j < len(lines) and lines[j].startswith("   :"):
            fm = re.match(r"^   :(\w+): (.*)$", lines[j])
            assert fm, f"{label}: malformed field line {lines[j]!r}"
            fields[fm.group(1)] = fm.group(2).strip()
            order.append(fm.group(1))
            j += 1
        entries[label] = dict(fields, title=title, section=section, order=order)
    return entries


ENTRIES = parse_entries()


def test_page_has_many_entries():
    assert len(ENTRIES) >= 3 * len(AREAS)


@pytest.mark.parametrize("label", sorted(ENTRIES))
def test_entry_fields(label):
    e = ENTRIES[label]
    assert [f for f in e["order"] if f != "Link"] == FIELDS, f"{label}: fields {e['order']}"
    assert re.fullmatch(r"\d{4}", e["Year"]), f"{label}: year {e['Year']!r}"
    assert 1950 <= int(e["Year"]) <= 2026
    assert e["Authors"] and e["Venue"] and len(e["Why"].split()) >= 6
    # a leading initial ("V. Mnih") would be read as an enumerated list item: escape it
    assert not re.match(r"^[A-Za-z]\. ", e["Authors"]), f"{label}: write the first initial as X\\."
    if e["ID"] == "none":
        assert label in NO_IDENTIFIER, f"{label}: needs an arXiv id or a DOI"
        assert e.get("Link", "").startswith(("http://", "https://")), f"{label}: needs a :Link:"
    else:
        assert label not in NO_IDENTIFIER, f"{label} has an ID now: remove it from NO_IDENTIFIER"
        assert ARXIV.match(e["ID"]) or DOI.match(e["ID"]), f"{label}: bad ID {e['ID']!r}"
    m = ARXIV.match(e["ID"])
    if m:  # an arXiv id starts with YYMM: the preprint cannot be later than the cited year
        yy = int(m.group(1)[:2])
        assert 2000 + yy <= int(e["Year"]), f"{label}: arXiv id from 20{yy}, year {e['Year']}"


def test_no_identifier_list_is_current():
    assert NO_IDENTIFIER <= set(ENTRIES)


def test_each_area_has_three_entries():
    counts = {}
    for e in ENTRIES.values():
        counts[e["section"]] = counts.get(e["section"], 0) + 1
    for area in AREAS:
        assert counts.get(area, 0) >= 3, f"area {area!r} has {counts.get(area, 0)} entries"


def references_bullets(page):
    """The bullet items of the page's References section, up to Other Public Implementations."""
    text = page.read_text(encoding="utf-8")
    start = text.index("\nReferences\n==========")
    stop = text.find("Other Public Implementations", start)
    part = text[start:stop if stop > 0 else len(text)]
    return [m.group(0) for m in re.finditer(r"^- .*(?:\n  .*)*", part, re.MULTILINE)]


@pytest.mark.parametrize("page", ALGO_PAGES, ids=lambda p: p.stem)
def test_algorithm_references_link_to_entries(page):
    bullets = references_bullets(page)
    assert bullets, f"{page.name}: no references found"
    for bullet in bullets:
        labels = re.findall(r":ref:`[^`<]*<(paper-[a-z0-9]+)>`", bullet)
        assert labels, f"{page.name}: reference without a reading-list link: {bullet[:120]}"
        for label in labels:
            assert label in ENTRIES, f"{page.name}: links to missing entry {label}"
