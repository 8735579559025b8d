"""Issue 44: one rule decides what a new run does with an existing directory
(spinup.machinery.run_dir.decide_start); the Logger and the grid's pre-launch check
both use it, so they answer alike for every state of the directory."""
import os

import pytest

from spinup.launch.grid_launch import check_before_launch
from spinup.utils.logx import EpochLogger
from spinup.machinery.run_dir import decide_start, resume_point


def _make(path, state):
    """A run directory in ``state``: absent, empty, a table without rows (stopped
    before its first epoch), or a table with one row (a run)."""
    if state == "absent":
        return
    os.makedirs(path)
    if state == "header":
        (path / "progress.txt").write_text("Epoch\n")
    elif state == "row":
        (path / "progress.txt").write_text("Epoch\n0\n")


def _outcome(call):
    try:
        call()
    except (FileExistsError, FileNotFoundError) as e:
        return type(e).__name__
    return "ok"


STATES = ["absent", "empty", "header", "row"]


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("overwrite", [False, True])
def test_logger_and_grid_check_agree(tmp_path, state, overwrite):
    grid_dir, logger_dir = tmp_path / "g", tmp_path / "l"
    _make(grid_dir, state)
    _make(logger_dir, state)
    expected = {"absent": "new", "empty": "new", "header": "reuse",
                "row": "replace" if overwrite else FileExistsError}[state]
    if expected is FileExistsError:
        with pytest.raises(FileExistsError, match="already holds a run"):
            decide_start(str(grid_dir), overwrite=overwrite)
    else:
        assert decide_start(str(grid_dir), overwrite=overwrite) == expected
    grid = _outcome(lambda: check_before_launch([dict(output_dir=str(grid_dir),
                                                      overwrite=overwrite)]))
    logger = _outcome(lambda: EpochLogger(output_dir=str(logger_dir), overwrite=overwrite))
    assert grid == logger == ("FileExistsError" if expected is FileExistsError else "ok")
    if expected in ("reuse", "replace"):
        assert (logger_dir / "progress.txt").read_text() == ""   # the old run is gone


def test_resume_without_a_run_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run to resume"):
        decide_start(str(tmp_path / "nothing"), resume=True)
    with pytest.raises(FileNotFoundError, match="no run to resume"):
        EpochLogger(output_dir=str(tmp_path / "nothing"), resume=True)


def test_resume_point_reads_every_rank(tmp_path):
    # Two ranks' checkpoints, one an epoch ahead: the resume starts from the lower
    # (the grid read rank 0 alone before issue 44, the CLI the lowest).
    from spinup.machinery.checkpoint import checkpoint_path, save_checkpoint
    save_checkpoint(str(tmp_path), dict(epoch=3))
    rank0 = checkpoint_path(str(tmp_path), 0)
    rank1 = checkpoint_path(str(tmp_path), 1)
    os.replace(rank0, rank1)
    save_checkpoint(str(tmp_path), dict(epoch=4))
    assert resume_point(str(tmp_path)) == (3, 2)
    with pytest.raises(FileNotFoundError):
        resume_point(str(tmp_path / "none"))


def test_resume_point_maps_checkpoints_instead_of_reading_them(tmp_path, monkeypatch):
    # Finding of issue 44: resume_point read every rank's whole checkpoint (a SAC
    # replay buffer is ~170 MB) to learn one counter. It maps the files now; a
    # damaged file is still refused in one line.
    import torch

    from spinup.machinery.checkpoint import checkpoint_path, save_checkpoint
    save_checkpoint(str(tmp_path), dict(epoch=2, buf=torch.zeros(1000, 100)))
    calls, load = [], torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k) or load(*a, **k))
    assert resume_point(str(tmp_path)) == (2, 1)
    assert [k.get("mmap") for k in calls] == [True]
    path = checkpoint_path(str(tmp_path))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(ValueError, match="corrupt checkpoint"):
        resume_point(str(tmp_path))
