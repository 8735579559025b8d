"""No committed file under docs/benchmarks/ names a path of the machine it came from (issue 56).

Logs and profiles copied from another machine carry its absolute paths (its temporary folder,
its home, its checkout, its Python environment). They say nothing to a reader, and they tell
where someone's files were; the records use placeholders instead (``<tmp>``, ``<repo>``,
``<venv>``; docs/benchmarks/device/README.txt). A placeholder such as ``/path/to/checkout``
in a page's example command is not a machine's path and passes.
"""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "docs" / "benchmarks"
#: the top folders of machine paths: Linux and macOS homes, temporary and system folders,
#: mounts; and a Windows drive's user folders
MACHINE_PATH = re.compile(
    r"(?<![\w.~<>/-])/(?:tmp|root|home|work|opt|Users|var|private|mnt|usr|srv|scratch|data)/"
    r"|\b[A-Za-z]:\\(?:Users|Windows|Program Files)\\")


def committed_files():
    """The files under docs/benchmarks/ that git tracks (every file there without git)."""
    proc = subprocess.run(["git", "ls-files", "-z", "--", str(RECORDS)], cwd=ROOT,
                          capture_output=True, check=False)
    if proc.returncode == 0 and proc.stdout:
        return [ROOT / name for name in proc.stdout.decode().split("\0") if name]
    return [p for p in RECORDS.rglob("*") if p.is_file()]


def test_the_pattern_finds_machine_paths_and_passes_placeholders():
    for text in ("/tmp/pytest-of-root/pytest-0", "in /home/someone/spinup", "'/work/main/x.py'",
                 "/opt/torch/.venv/lib", "(/Users/a/b)", r"C:\Users\a\spinup"):
        assert MACHINE_PATH.search(text), text
    for text in ("<tmp>/pytest-of-root/pytest-0", "<repo>/spinup/algos", "--ref /path/to/old",
                 "docs/benchmarks/device/run1.json", "spinup/data/x", "https://example.com/data/x",
                 "pytest-of-root"):
        assert not MACHINE_PATH.search(text), text


def test_no_committed_benchmark_record_holds_a_machine_path():
    files = committed_files()
    assert len(files) > 10
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue   # a binary file (a picture), or one deleted in the working tree
        for number, line in enumerate(text.splitlines(), 1):
            match = MACHINE_PATH.search(line)
            if match:
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, ("machine paths (replace them by <tmp>, <repo>, <venv>, ...):\n"
                       + "\n".join(found[:20]))
