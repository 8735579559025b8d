"""Checkpoints and resuming (spinup.machinery.checkpoint, logger_kwargs resume=True,
``python -m spinup.run ALGO --resume DIR``).

The exactness tests run one configuration twice: straight through, and stopped after
epoch 2 then resumed; ``progress.txt`` must be the same but for ``Time``.
"""
import json
import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
import pandas as pd
import pytest
import torch

from conftest import run_here
from spinup import ppo, sac
from spinup.machinery.checkpoint import (checkpoint_path, env_state, load_checkpoint,
                                     restore_env_state)

PPO_KW = dict(steps_per_epoch=500, seed=0, ac_kwargs=dict(hidden_sizes=(16,)),
              train_pi_iters=5, train_v_iters=5)
SAC_KW = dict(steps_per_epoch=300, seed=0, ac_kwargs=dict(hidden_sizes=(32, 32)),
              start_steps=200, update_after=200, num_test_episodes=1)


# One torch thread in every test of this file (the fixture is in conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")


def cartpole():
    return gym.make("CartPole-v1")


def pendulum():
    return gym.make("Pendulum-v1")


def halfcheetah():
    return gym.make("HalfCheetah-v5")


def table(run_dir):
    return pd.read_table(os.path.join(run_dir, "progress.txt"))


def assert_same_but_time(full, resumed):
    a, b = table(full).drop(columns="Time"), table(resumed).drop(columns="Time")
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def run_interrupted(algo, env_fn, kw, tmp_path, **extra):
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    algo(env_fn, epochs=4, logger_kwargs=dict(output_dir=full), **kw, **extra)
    algo(env_fn, epochs=2, logger_kwargs=dict(output_dir=cut), **kw, **extra)
    algo(env_fn, epochs=4, logger_kwargs=dict(output_dir=cut, resume=True), **kw, **extra)
    return full, cut


def test_ppo_resume_is_exact(tmp_path):
    full, cut = run_interrupted(ppo, cartpole, PPO_KW, tmp_path)
    assert list(table(cut)["Epoch"]) == [0, 1, 2, 3]
    assert_same_but_time(full, cut)


@pytest.mark.parametrize("alpha", [0.2, "auto"])
def test_sac_resume_is_exact(tmp_path, alpha):
    # Pendulum's episodes last 200 steps, so epoch 2 ends mid-episode.
    full, cut = run_interrupted(sac, pendulum, SAC_KW, tmp_path, alpha=alpha)
    assert list(table(cut)["Epoch"]) == [1, 2, 3, 4]
    assert_same_but_time(full, cut)


def test_rows_after_the_checkpoint_are_dropped(tmp_path):
    """A crash between a row and its checkpoint leaves a row the resumed run rewrites."""
    run_dir = str(tmp_path / "run")
    ppo(cartpole, epochs=2, logger_kwargs=dict(output_dir=run_dir), **PPO_KW)
    path = os.path.join(run_dir, "progress.txt")
    with open(path) as f:
        lines = f.readlines()
    with open(path, "a") as f:
        f.write(lines[-1].replace("1\t", "2\t", 1))  # an orphan row for epoch 2
    ppo(cartpole, epochs=3, logger_kwargs=dict(output_dir=run_dir, resume=True), **PPO_KW)
    assert list(table(run_dir)["Epoch"]) == [0, 1, 2]


def test_checkpoint_loads_with_weights_only(tmp_path):
    run_dir = str(tmp_path / "run")
    sac(pendulum, epochs=1, logger_kwargs=dict(output_dir=run_dir), **SAC_KW)
    state = torch.load(checkpoint_path(run_dir), weights_only=True)
    assert state["epoch"] == 1 and state["replay"]["size"] == 300
    assert state["replay"]["obs_buf"].shape == (300, 3)
    assert set(state) >= {"ac", "ac_targ", "pi_optimizer", "q_optimizer", "rng", "episode"}


def test_missing_and_corrupt_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_checkpoint(str(tmp_path))
    run_dir = str(tmp_path / "run")
    ppo(cartpole, epochs=1, logger_kwargs=dict(output_dir=run_dir), **PPO_KW)
    path = checkpoint_path(run_dir)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(ValueError, match="corrupt checkpoint"):
        ppo(cartpole, epochs=2, logger_kwargs=dict(output_dir=run_dir, resume=True), **PPO_KW)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "HalfCheetah-v5"])
def test_env_state_round_trip(env_id):
    """A restored env continues the episode, and its next reset is the same too."""
    env = gym.make(env_id)
    env.reset(seed=3)
    env.action_space.seed(0)
    for _ in range(5):
        env.step(env.action_space.sample())
    saved = env_state(env)
    assert saved["exact"]
    acts = [env.action_space.sample() for _ in range(3)]
    expected = [env.step(a) for a in acts] + [env.reset()]

    other = gym.make(env_id)
    other.reset(seed=99)
    assert restore_env_state(other, saved)
    got = [other.step(a) for a in acts] + [other.reset()]
    for want, have in zip(expected, got):
        assert (want[0] == have[0]).all() and want[1:3] == have[1:3]


# ---- The other algorithms: a crash after epoch 3's row, before its checkpoint ----

SMALL_OFF = dict(steps_per_epoch=300, seed=0, ac_kwargs=dict(hidden_sizes=(32, 32)),
                 start_steps=200, update_after=200, num_test_episodes=1)
SMALL_ON = dict(steps_per_epoch=500, seed=0, ac_kwargs=dict(hidden_sizes=(16,)))
OTHERS = {
    "dqn": (cartpole, dict(SMALL_OFF, prioritized_replay=True, n_step=3,
                           target_update_every=100)),
    "td3": (pendulum, SMALL_OFF),
    "ddpg": (pendulum, SMALL_OFF),
    "vpg": (cartpole, dict(SMALL_ON, train_v_iters=5)),
    "trpo": (cartpole, dict(SMALL_ON, train_v_iters=5)),
    "a2c": (cartpole, SMALL_ON),
    # MuJoCo: the integration state is restored mid-episode (epochs end at 400 steps).
    "sac": (halfcheetah, dict(SMALL_OFF, steps_per_epoch=400, max_ep_len=300)),
}


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_crash_between_row_and_checkpoint_then_resume(tmp_path, monkeypatch, name):
    """Same seed, same epochs: the resumed run repeats epoch 3 (its orphan row is
    dropped) and ends with the uninterrupted run's table."""
    import importlib

    import spinup
    algo = getattr(spinup, name)
    module = importlib.import_module(f"spinup.algos.{name}.{name}")
    if not hasattr(module, "save_checkpoint"):  # it saves through spinup.machinery.door
        module = importlib.import_module("spinup.machinery.door")
    env_fn, kw = OTHERS[name]
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    algo(env_fn, epochs=4, logger_kwargs=dict(output_dir=full), **kw)
    real_save = module.save_checkpoint

    def crash_at_third(run_dir, state):
        if state["epoch"] == 3:
            raise KeyboardInterrupt
        real_save(run_dir, state)

    monkeypatch.setattr(module, "save_checkpoint", crash_at_third)
    with pytest.raises(KeyboardInterrupt):
        algo(env_fn, epochs=4, logger_kwargs=dict(output_dir=cut), **kw)
    assert len(table(cut)) == 3
    monkeypatch.setattr(module, "save_checkpoint", real_save)
    algo(env_fn, epochs=4, logger_kwargs=dict(output_dir=cut, resume=True), **kw)
    assert len(table(cut)) == 4
    assert_same_but_time(full, cut)


# A signal between an epoch's row and its checkpoint (run.epoch_end, stopping.stops_wait)
STOP_AFTER_ROW = r"""
import os, signal, sys
import gymnasium as gym
import spinup
from spinup.utils import logx
algo, run_dir, sig = sys.argv[1], sys.argv[2], getattr(signal, sys.argv[3])
env_id = "CartPole-v1" if algo in ("ppo", "dqn") else "Pendulum-v1"
write_row = logx.Logger.dump_tabular

def row_then_signal(self):   # Ctrl-C or SIGTERM lands right after the row is written
    write_row(self)
    os.kill(os.getpid(), sig)

logx.Logger.dump_tabular = row_then_signal
kw = dict(steps_per_epoch=300, seed=0, ac_kwargs=dict(hidden_sizes=(16,)))
if algo != "ppo":
    kw.update(start_steps=100, update_after=100, num_test_episodes=1)
getattr(spinup, algo)(lambda: gym.make(env_id), epochs=3, logger_kwargs={"output_dir": run_dir},
                      **kw)
"""


@pytest.mark.parametrize("algo, sig", [("ppo", "SIGINT"), ("sac", "SIGTERM"),
                                       ("dqn", "SIGINT")])
def test_a_stop_after_the_first_row_waits_for_the_checkpoint_then_resume(tmp_path, algo, sig):
    """A Ctrl-C or SIGTERM right after the first epoch's row waits until that epoch's
    checkpoint is written, then stops the run as before (KeyboardInterrupt, or death by
    SIGTERM): the run holds one whole epoch, and a resume continues it."""
    run_dir = str(tmp_path / "run")
    proc = subprocess.run([sys.executable, "-c", STOP_AFTER_ROW, algo, run_dir, sig],
                          capture_output=True, text=True,
                          env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=300)
    if sig == "SIGTERM":
        assert proc.returncode == -signal.SIGTERM, proc.stderr[-2000:]
    else:
        assert proc.returncode != 0 and "KeyboardInterrupt" in proc.stderr, proc.stderr[-2000:]
    assert len(table(run_dir)) == 1
    assert load_checkpoint(run_dir)["epoch"] == 1   # the row and its checkpoint, both
    import spinup
    env_fn = cartpole if algo in ("ppo", "dqn") else pendulum
    kw = dict(steps_per_epoch=300, seed=0, ac_kwargs=dict(hidden_sizes=(16,)))
    if algo != "ppo":
        kw.update(start_steps=100, update_after=100, num_test_episodes=1)
    getattr(spinup, algo)(env_fn, epochs=2, logger_kwargs=dict(output_dir=run_dir, resume=True),
                          **kw)
    epochs = list(table(run_dir)["Epoch"])   # 0, 1 on-policy; 1, 2 off-policy
    assert len(epochs) == 2 and epochs[1] == epochs[0] + 1


def test_stops_wait_delivers_after_the_block_and_restores_the_handler():
    from spinup.machinery.stopping import stops_wait
    seen, order = [], []
    previous = signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
    try:
        with stops_wait((signal.SIGUSR1,)):
            signal.raise_signal(signal.SIGUSR1)
            order.append(("inside", list(seen)))
        assert order == [("inside", [])] and seen == [signal.SIGUSR1]
        assert signal.getsignal(signal.SIGUSR1) is not None
        signal.raise_signal(signal.SIGUSR1)   # the handler from before is back
        assert seen == [signal.SIGUSR1] * 2
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        with stops_wait((signal.SIGUSR1,)):   # an ignored signal stays ignored
            signal.raise_signal(signal.SIGUSR1)
        assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_stops_wait_outside_the_main_thread_runs_the_block():
    import threading

    from spinup.machinery.stopping import stops_wait
    ran = []

    def body():
        with stops_wait():
            ran.append(True)
    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert ran == [True]


def a3c_env():
    return gym.make("CartPole-v1")


def test_a3c_resume_continues(tmp_path):
    from spinup import a3c
    run_dir = str(tmp_path / "run")
    kw = dict(seed=0, num_workers=2, steps_per_epoch=1000, num_test_episodes=1)
    a3c(a3c_env, epochs=2, logger_kwargs=dict(output_dir=run_dir), **kw)
    saved = load_checkpoint(run_dir)
    assert saved["epoch"] == 2 and saved["T"] >= 2000
    a3c(a3c_env, epochs=3, logger_kwargs=dict(output_dir=run_dir, resume=True), **kw)
    t = table(run_dir)
    assert list(t["Epoch"]) == [0, 1, 2]
    assert t["TotalEnvInteracts"].iloc[2] >= 3000


# ---- Command line ----

def cli(*args, **kw):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "spinup.run", *args], capture_output=True,
                          text=True, env=env, **kw)


CLI_PPO = ["ppo", "--env", "CartPole-v1", "--steps_per_epoch", "500", "--hid", "[16]",
           "--train_pi_iters", "5", "--train_v_iters", "5"]


def test_cli_kill_then_resume(tmp_path):
    run_dir = tmp_path / "k" / "k_s0"
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", *CLI_PPO, "--epochs", "40",
                             "--data_dir", str(tmp_path), "--exp_name", "k"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    deadline = time.time() + 300
    try:
        while time.time() < deadline:
            rows = (run_dir / "progress.txt").read_text().count("\n") if \
                (run_dir / "progress.txt").exists() else 0
            if rows >= 3 and os.path.exists(checkpoint_path(str(run_dir))):
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and the experiment, mid-epoch
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    epochs_before = len(table(str(run_dir)))
    assert 2 <= epochs_before < 40
    result = cli("ppo", "--resume", str(run_dir), "--epochs", str(epochs_before + 2))
    assert result.returncode == 0, result.stderr
    assert list(table(str(run_dir))["Epoch"]) == list(range(epochs_before + 2))


@pytest.mark.parametrize("cpu", [1, 2])
def test_kill_9_of_the_launcher_stops_the_run_and_a_live_run_is_never_shared(tmp_path, cpu):
    """``kill -9`` of the CLI alone (no handler can forward it) must not leave the
    experiment training as an orphan (with ``--cpu 2``: nor ``mpiexec`` and its ranks);
    and while a run is alive, no second process may resume or overwrite its
    directory (both would write the same table)."""
    from spinup.machinery.run_dir import LOCK_NAME, RunInProgressError, check_run_dir_free
    run_dir = tmp_path / "o" / "o_s0"
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", *CLI_PPO, "--epochs", "2000",
                             "--cpu", str(cpu), "--data_dir", str(tmp_path), "--exp_name", "o"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not os.path.exists(checkpoint_path(str(run_dir))):
            time.sleep(0.05)
        owner = int((run_dir / LOCK_NAME).read_text())
        assert owner != proc.pid   # the experiment's own process holds the directory
        with pytest.raises(RunInProgressError, match=f"pid {owner}"):
            check_run_dir_free(str(run_dir))
        busy = cli("ppo", "--resume", str(run_dir), "--epochs", "3000")
        assert busy.returncode == 2 and f"in use by another running process (pid {owner})" \
            in busy.stderr, busy.stderr
        proc.kill()    # SIGKILL to the launcher only
        proc.wait()
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.kill(owner, signal.SIGKILL)
            pytest.fail("the experiment kept running after its launcher was killed")
    finally:
        if proc.poll() is None:
            proc.kill()
    check_run_dir_free(str(run_dir))   # the lock died with its owner
    epochs_before = len(table(str(run_dir)))
    assert epochs_before < 2000
    result = cli("ppo", "--resume", str(run_dir), "--epochs", str(epochs_before + 1))
    assert result.returncode == 0, result.stderr
    assert list(table(str(run_dir))["Epoch"]) == list(range(epochs_before + 1))


def test_resume_with_more_epochs_records_them_in_config_json(tmp_path):
    """After ``--resume DIR --epochs 2`` on a 1-epoch run, config.json says 2, so a plain
    ``--resume`` reports the run complete (it used to refuse with "--epochs 1 would undo
    them", a flag never typed); provenance.json has the resume's record."""
    result = cli(*CLI_PPO, "--epochs", "1", "--data_dir", str(tmp_path), "--exp_name", "e")
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "e" / "e_s0"
    refused = run_here("ppo", "--resume", str(run_dir), "--epochs", "3", "--gamma", "0.5")
    assert refused.returncode == 2 and json.load(open(run_dir / "config.json"))["epochs"] == 1
    assert "resumed" not in json.load(open(run_dir / "provenance.json"))
    longer = cli("ppo", "--resume", str(run_dir), "--epochs", "2")
    assert longer.returncode == 0, longer.stderr
    assert json.load(open(run_dir / "config.json"))["epochs"] == 2
    assert len(json.load(open(run_dir / "provenance.json"))["resumed"]) == 1
    plain = run_here("ppo", "--resume", str(run_dir))
    assert plain.returncode == 0 and "is complete" in plain.stdout, plain.stderr
    # A run extended by an older version (config.json still has the first count):
    config = json.load(open(run_dir / "config.json"))
    (run_dir / "config.json").write_text(json.dumps(dict(config, epochs=1)))
    old = run_here("ppo", "--resume", str(run_dir))
    assert old.returncode == 2 and "--epochs 1" not in old.stderr
    assert "more than the 1 of its config.json" in old.stderr and "N > 2" in old.stderr


def test_cli_resume_refusals(tmp_path):
    result = cli(*CLI_PPO, "--epochs", "1", "--data_dir", str(tmp_path), "--exp_name", "r")
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "r" / "r_s0"
    before = (run_dir / "progress.txt").read_bytes()

    changed = run_here("ppo", "--resume", str(run_dir), "--epochs", "2", "--gamma", "0.9")
    assert changed.returncode == 2
    assert changed.stderr.count("\n") == 1 and "gamma 0.9 (the run has 0.99)" in changed.stderr
    same = cli("ppo", "--resume", str(run_dir), "--gamma", "0.99", "--env", "CartPole-v1",
               "--verbose")
    assert same.returncode == 0, same.stderr  # unchanged values are accepted

    for bad_flags, message in ((["--epochs", "abc"], "--epochs expects an integer"),
                               (["--epochz", "3"], "unknown flag --epochz")):
        bad = run_here("ppo", "--resume", str(run_dir), *bad_flags)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
        assert message in bad.stderr

    os.remove(checkpoint_path(str(run_dir)))
    missing = run_here("ppo", "--resume", str(run_dir), "--epochs", "2")
    assert missing.returncode == 2 and "no checkpoint" in missing.stderr
    assert missing.stderr.count("\n") == 1
    assert (run_dir / "progress.txt").read_bytes() == before


def test_mpi_resume_after_the_ranks_stopped_one_epoch_apart(tmp_path):
    """A ``--cpu 2`` run stopped while its ranks were writing their checkpoints (seen in
    CI: rank 0 after epoch 44, rank 1 after 45) made the resume hang: rank 1 had nothing
    left to do and finished while rank 0 waited for it in the next collective. Each rank
    now keeps the epoch before, and the resume starts where all ranks are."""
    from spinup.machinery.checkpoint import checkpoint_path, previous_checkpoint_path
    result = cli(*CLI_PPO, "--epochs", "3", "--cpu", "2", "--data_dir", str(tmp_path),
                 "--exp_name", "m", timeout=300)
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "m" / "m_s0"
    assert os.path.exists(previous_checkpoint_path(str(run_dir), 1))
    whole = table(str(run_dir))
    # Rank 0 stopped before its epoch-3 checkpoint was written; rank 1 had written its own.
    os.replace(previous_checkpoint_path(str(run_dir), 0), checkpoint_path(str(run_dir), 0))
    assert load_checkpoint(str(run_dir), rank=0)["epoch"] == 2
    assert load_checkpoint(str(run_dir), rank=1)["epoch"] == 3
    resumed = cli("ppo", "--resume", str(run_dir), "--epochs", "3", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "resum" in resumed.stdout
    again = table(str(run_dir))
    assert list(again["Epoch"]) == [0, 1, 2]
    pd.testing.assert_frame_equal(again.drop(columns="Time"), whole.drop(columns="Time"),
                                  check_exact=True)


def _grid(tmp_path, *extra):
    return run_here("ppo", "--env", "CartPole-v1", "--steps_per_epoch", 200, "--seed", 0, 1,
                    "--exp_name", "g", "--data_dir", tmp_path, *extra)


def test_grid_resume_treats_each_run_as_resume_dir_does(tmp_path):
    """Issues 44 and 45: a grid ``--resume`` and ``--resume DIR`` decide alike.

    Fewer epochs than done: the single form refused, the grid skipped. A finished run
    whose checkpoint was deleted: the grid replaced its files (with other arguments
    too), exit 0. A deleted progress.txt: a traceback on resume."""
    assert _grid(tmp_path, "--epochs", 2).returncode == 0
    s0, s1 = tmp_path / "g" / "g_s0", tmp_path / "g" / "g_s1"
    before = (s1 / "progress.txt").read_bytes()
    proc = _grid(tmp_path, "--epochs", 1, "--resume")
    assert proc.returncode == 2 and "--epochs 1 would undo them" in proc.stderr
    single = run_here("ppo", "--resume", s0, "--epochs", 1)
    assert single.returncode == 2 and "would undo them" in single.stderr
    os.remove(s1 / "pyt_save" / "checkpoint.pt")
    proc = _grid(tmp_path, "--epochs", 2, "--resume", "--pi_lr", 0.01)
    assert proc.returncode == 2 and "pi_lr 0.01" in proc.stderr
    assert (s1 / "progress.txt").read_bytes() == before   # nothing replaced
    proc = _grid(tmp_path, "--epochs", 2, "--resume")   # finished, same arguments: skipped
    assert proc.returncode == 0 and (s1 / "progress.txt").read_bytes() == before
    proc = _grid(tmp_path, "--epochs", 3, "--resume")   # unfinished, cannot continue
    assert proc.returncode == 2 and "no checkpoint" in proc.stderr
    assert (s1 / "progress.txt").read_bytes() == before
    rows = (s0 / "progress.txt").read_text()
    os.remove(s0 / "progress.txt")   # the checkpoint carries the table
    proc = run_here("ppo", "--resume", s0, "--epochs", 3)
    assert proc.returncode == 0, proc.stderr
    again = (s0 / "progress.txt").read_text().splitlines()
    assert len(again) == 4 and again[:3] == rows.splitlines()
