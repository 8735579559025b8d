"""Where two ways of launching a run disagreed, one rule now decides for both:

1. what a resume may change (``--resume DIR`` and a grid's ``--resume``);
2. the argument checks before any variant runs (the CLI and ``ExperimentGrid.run``);
3. ``| head`` stopping a run names ``--resume`` only when there is a checkpoint;
4. Ctrl-C of a single run advises ``--resume`` as a grid's does (with a checkpoint);
5. a refused ``--resume DIR`` names the flag the user typed (``--cpu``, not ``--num_cpu``).

Every run is a tiny PPO on CartPole.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, read_progress, run_cli, run_here
from spinup.machinery.checkpoint import checkpoint_path

RUN = {"--env": "CartPole-v1", "--steps_per_epoch": "200", "--hid": "[8]",
       "--train_pi_iters": "5", "--train_v_iters": "5", "--exp_name": "x"}


def cli_args(data_dir, **flags):
    """``ppo`` with the flags of :data:`RUN`, those in ``flags`` (``hid="[9]"``) replacing or
    added to them, and ``--data_dir``."""
    given = dict(RUN, **{f"--{key}": str(value) for key, value in flags.items()})
    return ["ppo", *[token for pair in given.items() for token in pair],
            "--data_dir", str(data_dir)]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 1-epoch run: ``<data_dir>/x/x_s0``."""
    data_dir = tmp_path_factory.mktemp("finished")
    run_cli(*cli_args(data_dir, epochs=1))
    return data_dir


@pytest.fixture
def data_dir(finished, tmp_path):
    """A copy of :func:`finished`'s data directory for one test to change."""
    copy = tmp_path / "data"
    shutil.copytree(finished, copy)
    return copy


def env_one_thread():
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")


# ---- 1. What a resume may change ----

def test_resume_may_change_the_device_in_both_entries(finished, data_dir, tmp_path):
    """``--resume DIR --device auto`` ran while the grid's ``--resume`` with the same change
    was refused (exit 2): both accept it now (optimizers resume across devices)."""
    single = data_dir / "x" / "x_s0"
    proc = run_here("ppo", "--resume", single, "--epochs", 2, "--device", "auto")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(read_progress(single)["Epoch"]) == [0, 1]
    grid_data = tmp_path / "grid"
    shutil.copytree(finished, grid_data)
    proc = run_here(*cli_args(grid_data, epochs=2, device="auto"), "--resume")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(read_progress(grid_data / "x" / "x_s0")["Epoch"]) == [0, 1]


@pytest.mark.parametrize("flag, value, named", [("gamma", "0.5", "gamma 0.5"),
                                                ("hid", "[9]", "'hidden_sizes': [9]")])
def test_a_changed_argument_is_refused_alike_by_both_entries(data_dir, flag, value, named):
    run_dir = data_dir / "x" / "x_s0"
    before = (run_dir / "progress.txt").read_bytes()
    single = run_here("ppo", "--resume", run_dir, "--epochs", 2, f"--{flag}", value)
    grid = run_here(*cli_args(data_dir, epochs=2, **{flag: value}), "--resume")
    for proc in (single, grid):
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert named in proc.stderr and "--device" in proc.stderr
    assert single.stderr == grid.stderr
    assert (run_dir / "progress.txt").read_bytes() == before


# ---- 2. ExperimentGrid.run checks every variant before any runs ----

def test_python_grid_checks_every_variant_before_any_runs(tmp_path):
    """``eg.add("device", ["cpu", "cuda"])`` without a GPU trained the cpu variant, then
    failed the cuda one; the CLI refused the same grid before anything ran. Both refuse it
    now, in the same line, and write nothing."""
    import torch

    from spinup import ppo
    from spinup.utils.run_utils import ExperimentGrid
    missing = "cuda" if not torch.cuda.is_available() else f"cuda:{torch.cuda.device_count()}"
    grid = ExperimentGrid("dev")
    grid.add("env_name", "CartPole-v1")
    grid.add("steps_per_epoch", 200)
    grid.add("epochs", 1)
    grid.add("ac_kwargs:hidden_sizes", [(8,)])
    grid.add("device", ["cpu", missing])
    with pytest.raises(ValueError) as info:
        grid.run(ppo, data_dir=str(tmp_path))
    message = str(info.value)
    assert "device=" in message and "\n" not in message
    assert not os.listdir(tmp_path)   # nothing was written
    proc = run_here("ppo", "--env", "CartPole-v1", "--steps_per_epoch", 200, "--epochs", 1,
                    "--hid", "[8]", "--device", "cpu", missing, "--data_dir", tmp_path)
    assert proc.returncode == 2 and proc.stderr == f"error: {message}\n"
    assert not os.listdir(tmp_path)


# ---- 3. The reader of the output goes away ----

def _closed_after(data_dir, wanted, epochs):
    """Run the CLI, read its output up to the first line holding ``wanted``, close it; return
    ``(exit code, stderr)``."""
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run",
                             *cli_args(data_dir, epochs=epochs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env_one_thread())
    try:
        for line in proc.stdout:
            if wanted in line:
                break
        proc.stdout.close()
        err = proc.stderr.read()
        return proc.wait(timeout=300), err
    finally:
        if proc.poll() is None:
            proc.kill()


def test_closed_output_names_resume_only_when_a_checkpoint_was_kept(tmp_path):
    """``... | head -2`` stopped the run before its config.json existed, yet advised
    ``--resume``, which then failed."""
    code, err = _closed_after(tmp_path / "early", "Running experiment", epochs=2)
    run_dir = tmp_path / "early" / "x" / "x_s0"
    assert code == 141 and not os.path.exists(checkpoint_path(str(run_dir))), err
    line, = err.strip().splitlines()
    assert line.startswith("stopped: the program reading the output closed it")
    assert "--resume" not in line and "nothing was kept" in line
    code, err = _closed_after(tmp_path / "later", "epoch 1/3", epochs=3)
    run_dir = tmp_path / "later" / "x" / "x_s0"
    assert code == 141 and os.path.exists(checkpoint_path(str(run_dir))), err
    assert err.strip().splitlines() == [
        "stopped: the program reading the output closed it (e.g. '| head'); what the run "
        "wrote so far is kept (--resume continues it)"]


# ---- 4. Ctrl-C of a single run ----

def _ctrl_c(data_dir, ready, **flags):
    """Start the CLI, send it SIGINT once ``ready(run_dir)``; return the CompletedProcess."""
    run_dir = data_dir / "x" / "x_s0"
    # SIGINT as in a terminal, even when the suite itself runs as a script's background job
    # (which starts with SIGINT ignored, and its children with it)
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", *cli_args(data_dir, **flags)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env_one_thread(), start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not ready(run_dir) and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before the signal"
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.serial
def test_ctrl_c_of_a_single_run_advises_resume_as_a_grid_does(tmp_path):
    """A grid's Ctrl-C ends with "Continue the grid with the same command and --resume";
    a single run's said nothing of --resume, even with a checkpoint to continue."""
    proc = _ctrl_c(tmp_path / "kept", lambda d: os.path.exists(checkpoint_path(str(d))),
                   epochs=500)
    assert proc.returncode == 130, proc.stderr[-3000:]
    assert "Interrupted: x (what was logged so far is in" in proc.stdout
    assert ("Continue the run with the same command and --resume (Python: resume=True)."
            in proc.stdout)
    # Stopped before its first epoch ended: nothing to resume, no advice to.
    proc = _ctrl_c(tmp_path / "none", lambda d: os.path.exists(d / "config.json"),
                   epochs=1, steps_per_epoch=100000)
    assert proc.returncode == 130, proc.stderr[-3000:]
    assert "Interrupted: x (no epoch was logged)" in proc.stdout
    assert "--resume" not in proc.stdout + proc.stderr


# ---- 5. A refused --resume DIR names the flag as typed ----

def test_resume_refusal_names_the_cpu_flag_as_typed(data_dir):
    """``--resume DIR --cpu 1`` of a run of 2 MPI processes named ``--num_cpu 1``."""
    run_dir = data_dir / "x" / "x_s0"
    # A --cpu 2 run leaves one checkpoint per process; the second rank's is a copy here.
    shutil.copy(checkpoint_path(str(run_dir)), checkpoint_path(str(run_dir), rank=1))
    proc = run_here("ppo", "--resume", run_dir, "--epochs", 3, "--cpu", 1)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--cpu 1 differs" in proc.stderr and "--num_cpu" not in proc.stderr
    proc = run_here("ppo", "--resume", run_dir, "--epochs", 3, "--num_cpu", 1)
    assert proc.returncode == 2 and "--num_cpu 1 differs" in proc.stderr
