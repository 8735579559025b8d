"""A3C: shared (Hogwild) updates, global step counter, asynchrony, failure and
Ctrl-C handling (no orphan processes), smoke runs via library and CLI."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

from conftest import ROOT, read_progress, run_cli
from spinup import a3c
from spinup.algos.a3c import core


def _dead(pid):
    """True if ``pid`` is gone (or a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return "State:\tZ" in f.read()
    except FileNotFoundError:
        return True


def _worker_pids(text):
    return [int(p) for p in re.findall(r"Worker \d+ started \(pid (\d+)\)", text)]


class SlowForWorker1(gym.Wrapper):
    """CartPole that sleeps 20 ms per step in worker 1 (seeded 10000 + seed)."""

    def reset(self, **kwargs):
        if kwargs.get("seed") is not None:
            self.slow = kwargs["seed"] >= 10000 and kwargs["seed"] < 20000
        return self.env.reset(**kwargs)

    def step(self, a):
        if getattr(self, "slow", False):
            time.sleep(0.02)
        return self.env.step(a)


def test_shared_model_counter_and_asynchrony(tmp_path):
    torch.manual_seed(0)
    env = gym.make("CartPole-v1")
    init = core.MLPActorCritic(env.observation_space, env.action_space).state_dict()
    n_steps, total = 10, 3000
    ac = a3c(lambda: SlowForWorker1(gym.make("CartPole-v1")), seed=0, num_workers=2,
             steps_per_epoch=1000, epochs=3, n_steps=n_steps,
             logger_kwargs=dict(output_dir=str(tmp_path)))
    # The workers changed the shared parameters the main process holds.
    changed = [not torch.equal(init[k], v) for k, v in ac.state_dict().items()]
    assert all(changed)
    # Global step counter: every worker's steps add up to it.
    upd = pd.read_table(tmp_path / "updates.txt")
    final_T = upd["T"].max()
    assert final_T == n_steps * len(upd) >= total
    assert sorted(upd["T"]) == list(range(n_steps, final_T + 1, n_steps))
    df = read_progress(tmp_path)
    assert (df["TotalEnvInteracts"].diff().dropna() > 0).all()
    assert df["TotalEnvInteracts"].iloc[-1] >= total
    # No barrier: the fast worker 0 makes many more updates than the slow worker 1
    # in the same time, and updates land between a worker's read and its write.
    counts = upd["Worker"].value_counts()
    assert counts.get(1, 0) >= 1 and counts[0] > 3 * counts.get(1, 0), counts.to_dict()
    assert (upd["Staleness"] > 0).any()
    assert "AverageTestEpRet" in df.columns


FAILING = textwrap.dedent("""
    import os
    import gymnasium as gym
    from spinup import a3c

    OUT = %r

    def rows_written():   # the bomb waits for the first row: no race with a busy machine
        path = os.path.join(OUT, "progress.txt")
        return os.path.exists(path) and open(path).read().count("\\n") >= 2

    class Boom(gym.Wrapper):
        def reset(self, **kw):
            if kw.get("seed") is not None:
                self.worker = kw["seed"] // 10000
                self.t = 0
            return self.env.reset(**kw)
        def step(self, a):
            self.t += 1
            if self.worker == 1 and self.t > 300 and rows_written():
                raise RuntimeError("env exploded in worker 1")
            return self.env.step(a)

    if __name__ == "__main__":
        a3c(lambda: Boom(gym.make("CartPole-v1")), num_workers=2, steps_per_epoch=200,
            epochs=1000, n_steps=10, logger_kwargs=dict(output_dir=OUT))
""")


def test_failing_worker_stops_run_without_orphans(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(FAILING % str(tmp_path / "out"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "worker 1 failed" in out and "env exploded in worker 1" in out
    pids = _worker_pids(out)
    assert len(pids) == 2
    assert all(_dead(p) for p in pids)
    assert len(read_progress(tmp_path / "out")) >= 1  # what was logged is kept


LONG_RUN = textwrap.dedent("""
    import gymnasium as gym
    from spinup import a3c

    if __name__ == "__main__":
        a3c(lambda: gym.make("CartPole-v1"), num_workers=2, steps_per_epoch=500,
            epochs=10000, n_steps=10, logger_kwargs=dict(output_dir=%r, verbose=True))
""")


def test_ctrl_c_stops_all_workers(tmp_path):
    script = tmp_path / "long.py"
    script.write_text(LONG_RUN % str(tmp_path / "out"))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            start_new_session=True, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                            # a background job of a script starts with SIGINT ignored
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    for line in proc.stdout:  # wait until the first epoch is logged
        lines.append(line)
        if "TotalEnvInteracts" in line:
            break
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    rest, _ = proc.communicate(timeout=120)
    out = "".join(lines) + rest
    assert proc.returncode != 0, out[-3000:]
    assert "KeyboardInterrupt" in out and "stopped early" in out, out[-3000:]
    pids = _worker_pids(out)
    assert len(pids) == 2, out[-3000:]
    assert all(_dead(p) for p in pids)
    # Issue 45: the finished epochs are in progress.txt and the interrupted one is not
    # (a row is an epoch's end; a partial row made a failed run's rerun be refused)
    from spinup.machinery.checkpoint import load_checkpoint
    rows = read_progress(tmp_path / "out")
    assert len(rows) >= 1 and len(rows) == load_checkpoint(str(tmp_path / "out"))["epoch"]


def _cartpole_failing_after(steps, error):
    """An env_fn: CartPole whose step() raises ``error`` after ``steps`` steps."""
    class FailsLater(gym.Wrapper):
        def __init__(self):
            super().__init__(gym.make("CartPole-v1"))
            self.steps = 0

        def step(self, a):
            self.steps += 1
            if self.steps > steps:
                raise error
            return self.env.step(a)
    return FailsLater


def test_a_failed_run_leaves_no_row_so_the_same_call_reuses_its_directory(tmp_path):
    """Issue 45: a worker's exception in epoch 0 used to leave a row of NaN test columns,
    and the rerun was refused ("already holds a run")."""
    from spinup import a3c
    out = str(tmp_path / "out")
    with pytest.raises(RuntimeError, match="the env broke"):
        a3c(_cartpole_failing_after(150, RuntimeError("the env broke")), num_workers=1, epochs=2, steps_per_epoch=400,
            logger_kwargs=dict(output_dir=out))
    assert (tmp_path / "out" / "progress.txt").read_text().count("\n") <= 1   # header only
    a3c(lambda: gym.make("CartPole-v1"), num_workers=1, epochs=1, steps_per_epoch=400,
        logger_kwargs=dict(output_dir=out))
    assert len(read_progress(tmp_path / "out")) == 1


def test_cli_smoke_and_cpu_flag_error(tmp_path):
    run_cli("a3c", "--env", "Pendulum-v1", "--num_workers", "2", "--oversubscribe",
            "--steps_per_epoch", "400",
            "--epochs", "2", "--exp_name", "a3csmoke", "--data_dir", tmp_path, timeout=300)
    df = read_progress(tmp_path / "a3csmoke" / "a3csmoke_s0")
    assert len(df) == 2 and df["TotalEnvInteracts"].iloc[-1] >= 800
    proc = run_cli("a3c", "--env", "CartPole-v1", "--cpu", "2", check=False, timeout=120)
    assert proc.returncode != 0 and "--num_workers" in proc.stderr + proc.stdout


# ---- Buffer and networks (no processes) ----

def test_buffer_n_step_returns_and_advantages():
    from spinup.algos.a3c.a3c import A3CBuffer
    buf = A3CBuffer((1,), (), 4, gamma=0.5, lam=1.0)
    vals = [0.5, 0.25, 1.0, 2.0]
    for t, (r, v) in enumerate(zip([1.0, 2.0, 3.0, 4.0], vals)):
        buf.store([0.0], 0, r, v)
        if t == 1:
            buf.finish_path(0)        # the episode terminated after two steps
    buf.finish_path(last_val=8.0)     # the rollout ends mid-episode: bootstrap
    data = buf.get()
    # terminal piece: R = 1 + .5*2, 2; cut piece: R = 3 + .5*4 + .25*8, 4 + .5*8
    assert data["ret"].tolist() == [2.0, 2.0, 7.0, 8.0]
    assert data["adv"].tolist() == [2.0 - 0.5, 2.0 - 0.25, 7.0 - 1.0, 8.0 - 2.0]
    assert buf.n == 0


def test_state_dict_keys_unchanged():
    box = gym.spaces.Box(-1, 1, (3,))
    gauss = core.MLPActorCritic(box, gym.spaces.Box(-1, 1, (2,)))
    cat = core.MLPActorCritic(box, gym.spaces.Discrete(4))
    layers = [f"{i}.{w}" for i in (0, 2, 4) for w in ("weight", "bias")]
    v_keys = [f"v.v_net.{k}" for k in layers]
    assert list(gauss.state_dict()) == (["pi.log_std"] + [f"pi.mu_net.{k}" for k in layers]
                                        + v_keys)
    assert list(cat.state_dict()) == [f"pi.logits_net.{k}" for k in layers] + v_keys


# ---- Fixes: test actions clipped, threads restored, MPI refused, arguments checked ----

class NarrowBox(gym.Env):
    """A continuous env with a narrow, asymmetric action box (an untrained Gaussian
    mean falls outside it) that remembers every action it is given."""
    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Box(np.array([0.2, -0.3], np.float32),
                                  np.array([0.25, -0.29], np.float32))

    def __init__(self):
        self.actions, self.t = [], 0

    def _obs(self):
        return self.np_random.uniform(-1, 1, 3).astype(np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, a):
        self.actions.append(np.array(a, dtype=np.float32))
        self.t += 1
        return self._obs(), 0.0, False, self.t >= 10, {}


def test_test_actions_clipped_and_threads_restored(tmp_path):
    made = []

    def env_fn():
        env = NarrowBox()
        made.append(env)
        return env

    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        a3c(env_fn, num_workers=1, steps_per_epoch=40, epochs=1, n_steps=10,
            num_test_episodes=3, logger_kwargs=dict(output_dir=str(tmp_path)))
        assert torch.get_num_threads() == 3  # a3c ran with 1 thread, then put 3 back
    finally:
        torch.set_num_threads(before)
    test_env = made[0]  # the main process builds one env: the test env
    assert len(made) == 1 and len(test_env.actions) == 3 * 10
    low, high = NarrowBox.action_space.low, NarrowBox.action_space.high
    assert all(((low <= a) & (a <= high)).all() for a in test_env.actions), test_env.actions


def test_refuses_to_run_under_mpi(tmp_path, monkeypatch):
    from spinup.utils import mpi_tools
    monkeypatch.setattr(mpi_tools, "num_procs", lambda: 2)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="num_workers"):
        a3c(lambda: gym.make("CartPole-v1"), num_workers=1, steps_per_epoch=20, epochs=1,
            n_steps=10, num_test_episodes=0, logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


MPI_SCRIPT = textwrap.dedent("""
    import sys
    import gymnasium as gym
    from spinup import a3c

    if __name__ == "__main__":
        a3c(lambda: gym.make("CartPole-v1"), num_workers=1, steps_per_epoch=20, epochs=1,
            n_steps=10, num_test_episodes=0, logger_kwargs=dict(output_dir=sys.argv[1]))
""")


@pytest.mark.mpi
def test_refuses_to_run_under_real_mpiexec(tmp_path):
    from spinup.launch.mpi_launch import find_mpiexec
    if find_mpiexec() is None:
        pytest.skip("no mpiexec (pip install mpich)")
    script = tmp_path / "a3c_mpi.py"
    script.write_text(MPI_SCRIPT)
    proc = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, str(script),
                           str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=dict(os.environ, IN_MPI="1"))
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "num_workers" in proc.stderr and "mpiexec" in proc.stderr, proc.stderr[-3000:]
    assert not (tmp_path / "out").exists()


SMALL = dict(num_workers=1, steps_per_epoch=20, epochs=1, n_steps=10, num_test_episodes=0)


@pytest.mark.parametrize("bad, error", [
    (dict(gamma=1.5), ValueError), (dict(lam=-0.1), ValueError), (dict(lr=0.0), ValueError),
    (dict(num_workers=0), ValueError), (dict(steps_per_epoch=0), ValueError),
    (dict(epochs=0), ValueError), (dict(n_steps=2.5), TypeError), (dict(epochs=True), TypeError),
    (dict(max_grad_norm=-1.0), ValueError), (dict(ent_coef=-0.01), ValueError),
    (dict(num_test_episodes=-1), ValueError), (dict(save_freq=0), ValueError),
    (dict(max_ep_len=0), ValueError),
    (dict(env_fn=lambda: gym.make("Blackjack-v1")), ValueError),  # Tuple observations
])
def test_bad_arguments_fail_before_anything_is_written(tmp_path, bad, error):
    kwargs = dict(SMALL, env_fn=lambda: gym.make("CartPole-v1"),
                  logger_kwargs=dict(output_dir=str(tmp_path / "out")))
    kwargs.update(bad)
    name = next(iter(bad))
    with pytest.raises(error, match="a3c"):
        a3c(**kwargs)
    assert not (tmp_path / "out").exists(), name


def test_a_workers_value_error_from_the_env_keeps_its_traceback(tmp_path):
    """Issue 44: a worker forwarded only ``str(e)`` of any ValueError, so an env's own
    ValueError reached the user without the frames that raised it."""
    from spinup import a3c
    with pytest.raises(RuntimeError) as e:
        a3c(_cartpole_failing_after(100, ValueError("the env got a bad value")), num_workers=1, epochs=1, steps_per_epoch=400,
            logger_kwargs=dict(output_dir=str(tmp_path / "out")))
    assert "Traceback" in str(e.value) and "in step" in str(e.value)
    assert "ValueError: the env got a bad value" in str(e.value)
