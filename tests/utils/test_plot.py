"""plot: damaged progress.txt files are skipped by name, the rest is plotted;
--select/--exclude match directory names at every level (seed directories too)."""
import pytest

from conftest import run_cli
from spinup.utils.plot import get_all_datasets

GOOD = "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\t1.0\t100\n1\t2.0\t200\n"


def _run(root, name, text=GOOD, exp_name="exp"):
    run_dir = root / name
    run_dir.mkdir(parents=True)
    (run_dir / "progress.txt").write_bytes(text if isinstance(text, bytes) else text.encode())
    (run_dir / "config.json").write_text('{"exp_name": "%s"}' % exp_name)
    return run_dir / "progress.txt"


DAMAGED = {
    "empty": "",
    "header_only": "Epoch\tAverageEpRet\tTotalEnvInteracts\n",
    "garbage_text": "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\toops\tabc\n1\t\x01x\t??\n",
    "extra_fields": "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\t1\t2\n1\t2\t3\t4\t5\t6\n",
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\x00garbage\xff" * 20,
}


@pytest.mark.parametrize("kind", sorted(DAMAGED))
def test_damaged_run_is_skipped_by_name_and_the_rest_plotted(tmp_path, kind):
    _run(tmp_path / "exp", "exp_s0")
    bad = _run(tmp_path / "exp", "exp_s1", DAMAGED[kind])
    fig = tmp_path / "fig.png"
    proc = run_cli("plot", tmp_path / "exp", "--savefig", fig)
    assert fig.stat().st_size > 1000 and "Traceback" not in proc.stderr
    assert any(str(bad) in line and "Skipping" in line for line in proc.stdout.splitlines())


def test_truncated_last_row_is_still_plotted(tmp_path):
    _run(tmp_path / "exp", "exp_s0", GOOD + "2\t3.")  # a run killed while writing
    data = get_all_datasets([str(tmp_path / "exp")])
    assert len(data) == 1 and len(data[0]) == 3


def test_nothing_readable_is_one_error_naming_the_file(tmp_path):
    bad = _run(tmp_path / "exp", "exp_s0", DAMAGED["binary"])
    proc = run_cli("plot", tmp_path / "exp", "--savefig", tmp_path / "f.png", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "no readable progress.txt" in proc.stderr
    assert str(bad) in proc.stdout and not (tmp_path / "f.png").exists()


def test_select_and_exclude_match_every_level(tmp_path):
    for seed in (0, 10, 20):
        _run(tmp_path / "cp", f"cp_s{seed}", exp_name="cp")
        _run(tmp_path / "cp_h64", f"cp_h64_s{seed}", exp_name="cp_h64")
    runs = get_all_datasets([str(tmp_path / "cp")], exclude=["s10"])
    assert len(runs) == 4  # seed 10 of both experiments dropped
    runs = get_all_datasets([str(tmp_path / "cp")], select=["s20"])
    assert len(runs) == 2
    runs = get_all_datasets([str(tmp_path / "cp")], select=["h64"], exclude=["s0"])
    assert sorted(set(r["Condition1"][0] for r in runs)) == ["cp_h64"] and len(runs) == 2
    with pytest.raises(ValueError, match="matches --select/--exclude"):
        get_all_datasets([str(tmp_path / "cp")], select=["nothing-like-this"])
    fig = tmp_path / "fig.png"
    proc = run_cli("plot", tmp_path / "cp", "--exclude", "s10", "--legend", "a", "b",
                   "--savefig", fig)
    assert fig.exists() and "Traceback" not in proc.stderr
