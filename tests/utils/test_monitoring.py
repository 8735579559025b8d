"""Watching a run: the one-line progress display, --verbose, colours, warn_once, TensorBoard."""
import importlib.util
import io
import json
import os
import re
import sys

import gymnasium as gym
import pytest

from conftest import read_progress, run_cli
from spinup.machinery.console import colorize, progress_line
from spinup.utils.logx import EpochLogger
from spinup.launch.run_utils import setup_logger_kwargs

HAVE_TENSORBOARD = importlib.util.find_spec("tensorboard") is not None
needs_tensorboard = pytest.mark.skipif(
    not HAVE_TENSORBOARD, reason='tensorboard is not installed (pip install "spinup[tensorboard]")')


def tiny_ppo(output_dir, epochs=3, **logger_options):
    from spinup import ppo
    ppo(lambda: gym.make("CartPole-v1"), ac_kwargs=dict(hidden_sizes=(8,)), steps_per_epoch=150,
        epochs=epochs, train_pi_iters=3, train_v_iters=3, seed=1,
        logger_kwargs=dict(output_dir=str(output_dir), **logger_options))


# ---- The progress line ----

def test_progress_line_parts():
    row = dict(Epoch=11, TotalEnvInteracts=48000, AverageEpRet=195.25,
               AverageTestEpRet=200.0, Time=33.0)
    line = progress_line(row, epochs=50, seconds_per_epoch=4.0, steps_per_second=1450.4)
    assert re.fullmatch(r"epoch 12/50  steps +48000  return +195.2 \(test 200\)  +1450 steps/s"
                        r"  ETA 02:32", line), line
    # Without the number of epochs: no k/N and no time left; nan returns show as '-'.
    line = progress_line(dict(Epoch=0, TotalEnvInteracts=10, AverageEpRet=float("nan")))
    assert line.startswith("epoch 1  ") and "ETA" not in line and line.endswith("return        -")
    assert progress_line(dict(Foo=1.0)) == ""  # no known column: the logger prints the table


def test_logger_prints_one_line_per_epoch_or_the_table_when_verbose(tmp_path, capsys):
    for verbose in (False, True):
        logger = EpochLogger(output_dir=str(tmp_path / str(verbose)), verbose=verbose)
        logger.save_config(dict(epochs=2, seed=0))
        for epoch in range(2):
            logger.store(EpRet=10.0 * epoch)
            logger.log_tabular("Epoch", epoch)
            logger.log_tabular("EpRet", with_min_and_max=True)
            logger.log_tabular("TotalEnvInteracts", 100 * (epoch + 1))
            logger.log_tabular("Time", 1.0 + epoch)
            logger.dump_tabular()
        out = capsys.readouterr().out
        if verbose:
            assert "|      AverageEpRet |" in out and '"seed":\t0' in out
        else:
            lines = [ln for ln in out.splitlines() if ln.startswith("epoch")]
            assert lines[0].startswith("epoch 1/2  steps      100  return        0")
            assert lines[1].endswith("ETA 00:00") and "AverageEpRet" not in out
            assert "config.json" in out and '"seed"' not in out  # the file, not its contents
    quiet, loud = (open(tmp_path / v / "progress.txt").read() for v in ("False", "True"))
    assert quiet == loud  # the table file does not depend on the display


@pytest.mark.parametrize("first_epoch", [0, 1])  # on-policy rows count from 0, off-policy from 1
def test_epochs_done_in_the_progress_line(tmp_path, capsys, first_epoch):
    for per_epoch in (100, None):
        logger = EpochLogger(output_dir=str(tmp_path / f"{first_epoch}{per_epoch}"))
        config = dict(epochs=3) if per_epoch is None else dict(epochs=3, steps_per_epoch=100)
        logger.save_config(config)
        for k in range(1, 4):
            logger.log_tabular("Epoch", k - 1 + first_epoch)
            logger.log_tabular("TotalEnvInteracts", 100 * k)
            logger.log_tabular("AverageTestEpRet", -5.0)
            logger.log_tabular("Time", float(k))
            logger.dump_tabular()
        lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch")]
        assert [ln.split()[1] for ln in lines] == ["1/3", "2/3", "3/3"]
        assert lines[0].endswith("return        - (test -5)     100 steps/s  ETA 00:02")


def test_warn_once(tmp_path, capsys):
    logger = EpochLogger(output_dir=str(tmp_path))
    for steps in (3, 4, 5):
        logger.warn_once("cut_off", f"Warning: trajectory cut off by epoch at {steps} steps.")
    logger.detail("only when verbose")
    out = capsys.readouterr().out
    assert out.count("cut off") == 1 and "at 3 steps" in out and "only when" not in out


def test_colours_only_on_a_terminal(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert colorize("hi", "red", bold=True) == "hi"
    monkeypatch.setattr(sys, "stdout", Terminal())
    assert colorize("hi", "red", bold=True) == "\x1b[31;1mhi\x1b[0m"
    monkeypatch.setenv("NO_COLOR", "1")
    assert colorize("hi", "red") == "hi"


def test_quickstart_output_is_short_plain_and_keeps_the_table_file(tmp_path):
    # The quickstart (ppo CartPole-v1, 50 epochs) with short epochs, so that episodes
    # are cut off by the end of an epoch in most epochs.
    args = ["ppo", "--env", "CartPole-v1", "--epochs", 50, "--steps_per_epoch", 60,
            "--train_pi_iters", 5, "--train_v_iters", 5, "--hid", "[16]",
            "--data_dir", tmp_path]
    quiet = run_cli(*args, "--exp_name", "quiet")
    lines = quiet.stdout.splitlines()
    assert len(lines) < 80, quiet.stdout
    assert "\x1b[" not in quiet.stdout + quiet.stderr
    assert quiet.stdout.count("trajectory cut off by epoch") == 1
    assert [ln.split()[1] for ln in lines if ln.startswith("epoch")] == \
        [f"{k}/50" for k in range(1, 51)]
    loud = run_cli(*args, "--exp_name", "loud", "--verbose")
    assert loud.stdout.count("|      AverageEpRet |") == 50
    assert "\x1b[" not in loud.stdout
    # progress.txt: same header and row formatting with or without --verbose (only Time differs).
    texts = [open(tmp_path / n / f"{n}_s0" / "progress.txt").read().splitlines()
             for n in ("quiet", "loud")]
    assert texts[0][0] == texts[1][0] and len(texts[0]) == 51
    time_col = texts[0][0].split("\t").index("Time")
    for a, b in zip(*texts):
        a, b = a.split("\t"), b.split("\t")
        del a[time_col], b[time_col]
        assert a == b
    config = json.load(open(tmp_path / "quiet" / "quiet_s0" / "config.json"))
    assert set(config["logger_kwargs"]) == {"exp_name", "output_dir"}


# ---- TensorBoard ----

def test_option_off_leaves_logger_kwargs_and_config_as_before(tmp_path):
    assert setup_logger_kwargs("x", 0, str(tmp_path)) == dict(
        output_dir=os.path.join(str(tmp_path), "x", "x_s0"), exp_name="x")
    assert setup_logger_kwargs("x", 0, str(tmp_path), tensorboard=True,
                               verbose=True)["tensorboard"] is True
    tiny_ppo(tmp_path / "run", epochs=1)
    assert json.load(open(tmp_path / "run" / "config.json"))["logger_kwargs"] == dict(
        output_dir=str(tmp_path / "run"))
    assert not (tmp_path / "run" / "tb").exists()


@needs_tensorboard
def test_tensorboard_events_hold_the_logged_values(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    tiny_ppo(tmp_path, epochs=3, tensorboard=True)
    table = read_progress(tmp_path)
    events = EventAccumulator(str(tmp_path / "tb"), size_guidance={"scalars": 0})
    events.Reload()
    assert set(events.Tags()["scalars"]) == set(table.columns)
    for column in table.columns:
        scalars = events.Scalars(column)
        assert [s.step for s in scalars] == list(table["TotalEnvInteracts"])
        assert [s.value for s in scalars] == pytest.approx(list(table[column]), rel=1e-6,
                                                           nan_ok=True)


@needs_tensorboard
def test_tensorboard_step_falls_back_to_the_epoch(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    logger = EpochLogger(output_dir=str(tmp_path), tensorboard=True)
    for epoch in range(3):
        logger.log_tabular("Epoch", epoch)
        logger.log_tabular("Loss", 1.0 / (epoch + 1))
        logger.dump_tabular()
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert [(s.step, round(s.value, 4)) for s in events.Scalars("Loss")] == \
        [(0, 1.0), (1, 0.5), (2, 0.3333)]


def hide_tensorboard(directory):
    """A directory whose ``tensorboard`` package fails to import, for PYTHONPATH."""
    (directory / "tensorboard").mkdir(parents=True)
    (directory / "tensorboard" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'tensorboard' (hidden by the test)\")\n")
    return str(directory)


def test_missing_tensorboard_is_one_error_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    with pytest.raises(ImportError, match=re.escape('pip install "spinup[tensorboard]"')):
        EpochLogger(output_dir=str(tmp_path / "run"), tensorboard=True)
    assert not (tmp_path / "run").exists()


def test_cli_without_tensorboard_exits_2_with_one_line(tmp_path):
    hidden = hide_tensorboard(tmp_path / "hide")
    data = tmp_path / "data"
    proc = run_cli("ppo", "--env", "CartPole-v1", "--epochs", 1, "--tensorboard",
                   "--data_dir", data, check=False,
                   env=dict(PYTHONPATH=os.pathsep.join([hidden, os.environ.get("PYTHONPATH", "")])))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "--tensorboard" in proc.stderr and 'pip install "spinup[tensorboard]"' in proc.stderr
    assert not data.exists()
