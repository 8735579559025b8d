"""Grids run in parallel (--jobs), resumed as a whole (--resume), and on Ray
(--launcher ray): spinup.launch.grid_launch through the CLI and ExperimentGrid.run.

Every run is a tiny PPO on CartPole; tables are compared with ``Time`` dropped.
"""
import os
import re
import signal
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT, read_progress, run_cli
from spinup.launch.run_utils import ExperimentGrid

TINY = ["--env", "CartPole-v1", "--steps_per_epoch", "300", "--hid", "[16]",
        "--train_pi_iters", "5", "--train_v_iters", "5"]
SEEDS = [0, 10, 20, 30]


def grid_args(data_dir, epochs, seeds=SEEDS):
    return ["ppo", *TINY, "--epochs", str(epochs), "--seed", *map(str, seeds),
            "--data_dir", str(data_dir)]


def run_dir(data_dir, seed):
    return os.path.join(str(data_dir), "cmd_ppo", f"cmd_ppo_s{seed}")


def table(data_dir, seed):
    return read_progress(run_dir(data_dir, seed)).drop(columns="Time")


@pytest.fixture(scope="module")
def serial_grid(tmp_path_factory):
    """The 4-seed grid run one variant after another (the reference tables)."""
    data_dir = tmp_path_factory.mktemp("serial")
    run_cli(*grid_args(data_dir, 2))
    return data_dir


def test_jobs_2_gives_the_serial_tables(serial_grid, tmp_path):
    out = run_cli(*grid_args(tmp_path, 2), "--jobs", "2").stdout
    for seed in SEEDS:
        pd.testing.assert_frame_equal(table(serial_grid, seed), table(tmp_path, seed),
                                      check_exact=True)
        log = os.path.join(run_dir(tmp_path, seed), "output.log")
        assert "epoch 2/2" in open(log).read()          # the variant's own output
        # One terminal line per epoch and per finished variant.
        assert re.search(rf"^cmd_ppo_s{seed} +epoch 2/2 ", out, re.M)
        assert re.search(rf"^cmd_ppo_s{seed} +finished \(2 epochs", out, re.M)
    assert "2 at a time" in out
    assert "Grid summary (4 variants" in out and "4 finished" in out


def test_one_seed_on_its_own_gives_the_grid_table(serial_grid, tmp_path):
    """``python -m spinup.run`` with one seed runs in the launching process, with torch's
    default thread count there: its table is the serial grid's all the same."""
    run_cli("ppo", *TINY, "--epochs", "2", "--seed", "10", "--exp_name", "cmd_ppo",
            "--data_dir", str(tmp_path))
    pd.testing.assert_frame_equal(table(serial_grid, 10), table(tmp_path, 10), check_exact=True)


@pytest.mark.parametrize("flags, message", [
    (["--jobs", "0"], "--jobs expects a positive integer or 'auto'"),
    (["--jobs", "1.5"], "--jobs expects a positive integer or 'auto'"),
    (["--jobs", "64"], "--jobs 64 x --cpu 1 = 64 processes, more than the"),
    (["--ray_address", "10.0.0.1:6379"], "--ray_address needs --launcher ray"),
    (["--launcher", "slurm"], "--launcher expects local or ray"),
    (["--resume", "--dt"], "--resume finds the grid's runs by their directory names"),
    (["--resume", "--overwrite"], "--resume continues the grid's runs and --overwrite "
                                  "replaces them: give one of the two"),
])
def test_bad_launch_flags_are_one_line_and_start_nothing(tmp_path, flags, message, capsys):
    from spinup.run import main
    code = main(grid_args(tmp_path, 2, seeds=[0, 10]) + flags)
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not os.path.exists(tmp_path / "cmd_ppo")


def test_launcher_ray_without_ray_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    from spinup.run import main
    monkeypatch.setitem(sys.modules, "ray", None)   # import ray raises ImportError
    code = main(grid_args(tmp_path, 2, seeds=[0, 10]) + ["--launcher", "ray"])
    err = capsys.readouterr().err
    assert code == 2 and "needs Ray, which is not installed" in err
    assert len(err.strip().splitlines()) == 1
    assert not os.path.exists(tmp_path / "cmd_ppo")


def test_a_failing_variant_does_not_stop_the_others(tmp_path, capsys):
    from spinup import ppo
    from spinup.launch.grid_launch import GridError
    grid = ExperimentGrid("mixed")
    grid.add("env_name", ["CartPole-v1", "NoSuchEnv-v0"], "", in_name=True)
    grid.add("steps_per_epoch", 300)
    grid.add("epochs", 2)
    grid.add("ac_kwargs:hidden_sizes", [(16,)])
    grid.add("train_pi_iters", 5)
    grid.add("train_v_iters", 5)
    with pytest.raises(GridError) as info:
        grid.run(ppo, data_dir=str(tmp_path), jobs=2)
    bad_dir = tmp_path / "mixed_nosuchenv-v0" / "mixed_nosuchenv-v0_s0"
    good_dir = tmp_path / "mixed_cartpole-v1" / "mixed_cartpole-v1_s0"
    (label, code, log), = info.value.failed
    assert label == "mixed_nosuchenv-v0_s0" and code != 0 and info.value.returncode == 1
    assert log == str(bad_dir / "output.log") and "NoSuchEnv" in open(log).read()
    assert list(read_progress(str(good_dir))["Epoch"]) == [0, 1]
    out = capsys.readouterr().out
    assert re.search(rf"FAILED +mixed_nosuchenv-v0_s0 +exit code {code}, log {log}", out)
    assert re.search(r"finished +mixed_cartpole-v1_s0 +2 epochs", out)


def test_ctrl_c_stops_every_variant_then_resume_finishes_the_grid(serial_grid, tmp_path):
    """Ctrl-C after epoch 1 of a 200-epoch --jobs 2 grid; --resume completes it with
    each epoch logged once; a second --resume has nothing left to do. (200 epochs: these
    tiny epochs take about 60 ms each, and the launcher reports an epoch only when it next
    polls, so with 6 or 40 epochs the variants could finish before the signal reached them.)"""
    EPOCHS = 200
    args = [sys.executable, "-m", "spinup.run", *grid_args(tmp_path, EPOCHS, seeds=SEEDS[:3]),
            "--jobs", "2"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    def sigint_as_in_a_terminal():   # a shell's background job would ignore SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT, env=env, start_new_session=True,
                            preexec_fn=sigint_as_in_a_terminal)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if re.search(rf"epoch +1/{EPOCHS}", line):   # Ctrl-C in a terminal: SIGINT to the group
            os.killpg(proc.pid, signal.SIGINT)
            break
    seen.append(proc.stdout.read())
    proc.wait(timeout=300)
    text = "".join(seen)
    assert proc.returncode == 130, text
    assert "Interrupted: stopping 2 running variant(s)" in text
    assert re.search(r"not started +cmd_ppo_s20", text)
    assert not os.path.exists(run_dir(tmp_path, 20))
    assert any(os.path.exists(os.path.join(run_dir(tmp_path, s), "pyt_save", "checkpoint.pt"))
               for s in SEEDS[:2])

    before = {s: sorted(os.listdir(os.path.join(run_dir(tmp_path, s), "pyt_save")))
              for s in SEEDS[:2] if os.path.isdir(os.path.join(run_dir(tmp_path, s), "pyt_save"))}
    out = run_cli(*grid_args(tmp_path, EPOCHS, seeds=SEEDS[:3]), "--jobs", "2", "--resume").stdout
    assert "resumed after epoch" in out and "3 finished" in out, (before, text[-3000:], out)
    for seed in SEEDS[:3]:
        epochs = read_progress(run_dir(tmp_path, seed))["Epoch"]
        assert list(epochs) == list(range(EPOCHS))
        # The first two epochs are those of the uninterrupted serial grid.
        pd.testing.assert_frame_equal(table(tmp_path, seed).iloc[:2], table(serial_grid, seed),
                                      check_exact=True)

    again = run_cli(*grid_args(tmp_path, EPOCHS, seeds=SEEDS[:3]), "--resume").stdout
    assert "Running 0 of 3 variants" in again and "3 skipped" in again
    for seed in SEEDS[:3]:
        assert list(read_progress(run_dir(tmp_path, seed))["Epoch"]) == list(range(EPOCHS))


def test_launcher_ray_on_a_local_instance_gives_the_serial_tables(serial_grid, tmp_path):
    import ray  # noqa: F401  (the ray extra is part of .[test]: missing Ray fails here)
    out = run_cli(*grid_args(tmp_path, 2, seeds=SEEDS[:2]), "--launcher", "ray").stdout
    assert "as Ray tasks of 1 CPU(s) each" in out and "2 finished" in out
    for seed in SEEDS[:2]:
        pd.testing.assert_frame_equal(table(serial_grid, seed), table(tmp_path, seed),
                                      check_exact=True)


def test_jobs_auto_and_the_core_check(monkeypatch):
    from spinup.machinery import cores
    from spinup.launch.grid_launch import resolve_jobs
    from spinup.launch.run_utils import LaunchError
    monkeypatch.setattr(cores, "available_cores", lambda: 8)
    assert resolve_jobs("auto", 1) == 8 and resolve_jobs("auto", 2) == 4
    assert resolve_jobs("auto", 16) == 1 and resolve_jobs(4, 2) == 4
    with pytest.raises(LaunchError, match="--jobs 5 x --cpu 2 = 10 processes"):
        resolve_jobs(5, 2)
    assert resolve_jobs(5, 2, oversubscribe=True) == 5


def test_ray_address_nobody_answers_is_one_line_exit_2(tmp_path, capsys):
    import socket

    from spinup.run import main
    with socket.socket() as s:   # a free port, closed again: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(grid_args(tmp_path, 2, seeds=[0, 10])
                + ["--launcher", "ray", "--ray_address", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2 and "no Ray cluster answers there" in err
    assert len(err.strip().splitlines()) == 1
    assert not os.path.exists(tmp_path / "cmd_ppo")


def test_a_signal_before_a_variant_started_stops_at_once(tmp_path, monkeypatch, capsys):
    """Issue 44: a signal between ``run.handle = ...`` and ``.start()`` left a handle with
    no process, whose poll() said "running": the launcher waited the whole grace period
    (30 s) for it, and a Ray handle raised AttributeError instead."""
    import time

    from spinup import ppo
    from spinup.launch import grid_launch

    def interrupted_start(self):
        raise grid_launch.Interrupted(signal.SIGINT)   # as if Ctrl-C came right here
    monkeypatch.setattr(grid_launch._LocalHandle, "start", interrupted_start)
    grid = ExperimentGrid("early")
    grid.add("env_name", "CartPole-v1")
    grid.add("epochs", 1)
    begin = time.time()
    with pytest.raises(KeyboardInterrupt):
        grid.run(ppo, data_dir=str(tmp_path), jobs=1)
    assert time.time() - begin < grid_launch.SHUTDOWN_GRACE / 2
    out = capsys.readouterr().out
    assert re.search(r"not started +early_s0", out) and "stopping 0 running" in out
    from spinup.launch import ray_launch
    ray_handle = ray_launch._RayHandle(None, "", str(tmp_path / "x" / "output.log"), 1)
    assert not ray_handle.started and ray_handle.poll() is None   # no AttributeError


def test_nothing_runs_between_fork_and_exec(monkeypatch):
    """Issue 44: the launcher passed a ``preexec_fn`` (signal setup and ``prctl`` through
    ctypes) that ran in the forked child of a multi-threaded Ray worker, where it can
    deadlock. The child now sets these up itself (run_entrypoint), told the launcher's pid."""
    from spinup.launch import processes
    seen = {}

    def fake_popen(args, **kwargs):
        seen.update(kwargs)
    monkeypatch.setattr(processes.subprocess, "Popen", fake_popen)
    processes._start_process("encoded")
    assert seen.get("preexec_fn") is None and seen["start_new_session"]
    assert seen["env"]["SPINUP_LAUNCHER_PID"] == str(os.getpid())
