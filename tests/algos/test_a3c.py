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
    import gymnasium as gym
    from spinup import a3c

    class Boom(gym.Wrapper):
        def reset(self, **kw):
            if kw.get("seed") is not None:
                self.worker = kw["seed"] // 10000
                self.t = 0
            return self.env.reset(**kw)
        def step(self, a):
            self.t += 1
            if self.worker == 1 and self.t > 300:
                raise RuntimeError("env exploded in worker 1")
            return self.env.step(a)

    if __name__ == "__main__":
        a3c(lambda: Boom(gym.make("CartPole-v1")), num_workers=2, steps_per_epoch=200,
            epochs=1000, n_steps=10, logger_kwargs=dict(output_dir=%r))
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
            epochs=10000, n_steps=10, logger_kwargs=dict(output_dir=%r))
""")


def test_ctrl_c_stops_all_workers(tmp_path):
    script = tmp_path / "long.py"
    script.write_text(LONG_RUN % str(tmp_path / "out"))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            start_new_session=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
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
    # the epochs logged so far (and the interrupted one) are in progress.txt
    assert len(read_progress(tmp_path / "out")) >= 1


def test_cli_smoke_and_cpu_flag_error(tmp_path):
    run_cli("a3c", "--env", "Pendulum-v1", "--num_workers", "2", "--steps_per_epoch", "400",
            "--epochs", "2", "--exp_name", "a3csmoke", "--data_dir", tmp_path, timeout=300)
    df = read_progress(tmp_path / "a3csmoke" / "a3csmoke_s0")
    assert len(df) == 2 and df["TotalEnvInteracts"].iloc[-1] >= 800
    proc = run_cli("a3c", "--env", "CartPole-v1", "--cpu", "2", check=False, timeout=120)
    assert proc.returncode != 0 and "--num_workers" in proc.stderr + proc.stdout
