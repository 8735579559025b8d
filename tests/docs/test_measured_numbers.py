"""The measured numbers of the docs pages against the registry ``docs/measured.py``.

- Every registered snippet is still on its page (whitespace collapsed) and holds the
  numbers registered for it, so a page edit that changes a number without the registry,
  or the registry without the page, fails here.
- Every fast entry is measured again (its command, under a minute of one core) and gives
  the page's numbers to the printed digit. Runs depend on the kind of CPU, so on a CPU
  other than ``MEASURED_ON``'s only the entries marked ``anywhere`` are compared; a new
  torch on the same CPU is compared, since a page must follow the code it describes.
- Every slow entry says when, at which commit and on what machine it was measured, and
  the file named as its record still holds the snippets registered for it.
- A page that dates a measurement has at least one entry.
"""
import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_spec = importlib.util.spec_from_file_location("docs_measured", DOCS / "measured.py")
measured = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(measured)

ENTRIES = measured.ENTRIES
FAST = [e for e in ENTRIES if e.fast]
SLOW = [e for e in ENTRIES if not e.fast]


def by_name(entries):
    return pytest.mark.parametrize("entry", entries, ids=lambda e: e.name)


def test_names_are_unique_and_fast_entries_can_be_measured():
    names = [e.name for e in ENTRIES]
    assert len(names) == len(set(names))
    assert all(callable(e.measure) for e in FAST)
    assert {e.page.split("/")[0] for e in ENTRIES} <= {"intro", "algorithms", "user"}


@by_name(ENTRIES)
def test_snippet_is_on_its_page_and_holds_the_numbers(entry):
    snippet = measured.normalise(entry.snippet)
    assert snippet in measured.page_text(entry.page), (
        f"docs/{entry.page} no longer says: {snippet!r} (update docs/measured.py with the "
        f"page, and rerun the entry if a number changed)")
    for number in entry.numbers:
        assert number in snippet, (entry.name, number)


@by_name(SLOW)
def test_slow_entry_says_when_where_and_with_what(entry):
    assert re.fullmatch(r"20\d\d-[01]\d-[0-3]\d", entry.date), entry.date
    assert re.fullmatch(r"[0-9a-f]{7,40}", entry.commit), entry.commit
    assert entry.machine.strip() and entry.command.strip()
    if (ROOT / ".git").exists():
        proc = subprocess.run(["git", "cat-file", "-e", f"{entry.commit}^{{commit}}"],
                              cwd=ROOT, capture_output=True)
        assert proc.returncode == 0, f"{entry.name}: no commit {entry.commit} in this checkout"


@by_name([e for e in ENTRIES if e.source])
def test_the_record_still_holds_the_numbers(entry):
    path, snippets = entry.source
    assert (ROOT / path).is_file(), path
    text = measured.normalise((ROOT / path).read_text(encoding="utf-8"))
    for snippet in snippets:
        assert measured.normalise(snippet) in text, (
            f"{path} no longer says {snippet!r}: a rerun changed the record that "
            f"docs/{entry.page} quotes ({entry.name})")


def test_every_page_that_dates_a_measurement_has_an_entry():
    registered = {e.page for e in ENTRIES}
    dated = set()
    for part in ("intro", "algorithms", "user"):
        for page in (DOCS / part).glob("*.rst"):
            if re.search(r"\b20\d\d-[01]\d-[0-3]\d\b", page.read_text(encoding="utf-8")):
                dated.add(f"{part}/{page.name}")
    assert dated <= registered, sorted(dated - registered)


@pytest.fixture(scope="module")
def same_cpu():
    return measured.machine_matches()


@pytest.mark.xdist_group("measured_numbers")   # one worker: the entries share their runs
@by_name(FAST)
def test_fast_entry_gives_the_pages_numbers(entry, same_cpu):
    matches, here = same_cpu
    if not (entry.anywhere or matches):
        pytest.skip(f"measured on {measured.MEASURED_ON}; this CPU is {here['cpu']} "
                    f"({here['cpu_capability']}), whose runs round differently")
    got, _ = measured.rerun(entry)
    assert got == tuple(entry.numbers), (
        f"{entry.name}: `{entry.command}` now gives {got}, docs/{entry.page} says "
        f"{entry.numbers}")
