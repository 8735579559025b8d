"""Does a change alter learning? Compare progress.txt of old and new code, Time aside.

Runs every algorithm with a tiny fixed-seed budget twice, once with the code of a
reference checkout (``--ref``, default ``/work/main``) and once with this checkout,
each in its own subprocess with one torch thread, and compares the two
``progress.txt`` files column by column, ignoring ``Time`` (and any column whose
name contains ``FPS``, a speed). Prints one line per algorithm and exits 1 when any
pair differs.

Usage::

    python benchmarks/check_identical_progress.py [--ref DIR] [--algos ppo sac ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent.parent

# Tiny budgets: a few epochs, small networks, each run a few seconds.
RUNS = {
    "vpg": ("CartPole-v1", dict(steps_per_epoch=400, epochs=3)),
    "ppo": ("CartPole-v1", dict(steps_per_epoch=400, epochs=3, train_pi_iters=10,
                                train_v_iters=10)),
    "trpo": ("CartPole-v1", dict(steps_per_epoch=400, epochs=3)),
    "a2c": ("CartPole-v1", dict(steps_per_epoch=400, epochs=3)),
    "ppo_box": ("Pendulum-v1", dict(steps_per_epoch=400, epochs=2, train_pi_iters=10,
                                    train_v_iters=10)),
    "trpo_box": ("Pendulum-v1", dict(steps_per_epoch=400, epochs=2)),
    "ddpg": ("Pendulum-v1", dict(steps_per_epoch=300, epochs=2, start_steps=100,
                                 update_after=100, update_every=50, max_ep_len=150,
                                 num_test_episodes=2)),
    "td3": ("Pendulum-v1", dict(steps_per_epoch=300, epochs=2, start_steps=100,
                                update_after=100, update_every=50, max_ep_len=150,
                                num_test_episodes=2)),
    "sac": ("Pendulum-v1", dict(steps_per_epoch=300, epochs=2, start_steps=100,
                                update_after=100, update_every=50, max_ep_len=150,
                                num_test_episodes=2)),
    "dqn": ("CartPole-v1", dict(steps_per_epoch=500, epochs=2, update_after=500, update_every=50)),
}

CHILD = r"""
import sys, json, torch, gymnasium as gym
torch.set_num_threads(1)
import spinup
algo, env_id, kwargs, out = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
getattr(spinup, algo)(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(32, 32)),
                      seed=3, logger_kwargs=dict(output_dir=out), **kwargs)
"""


def run(code_dir, name, out_dir):
    """Run one algorithm with the code in ``code_dir``; return its progress table."""
    env_id, kwargs = RUNS[name]
    algo = name.split("_")[0]
    env = dict(os.environ, PYTHONPATH=str(code_dir), OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", CHILD, algo, env_id, json.dumps(kwargs), str(out_dir)],
                   env=env, cwd=code_dir, check=True, stdout=subprocess.DEVNULL)
    return pd.read_csv(Path(out_dir) / "progress.txt", sep="\t")


def compare(old, new):
    """Names of the columns (Time and speed columns aside) that differ."""
    keep = [c for c in old.columns if c != "Time" and "FPS" not in c]
    if list(old.columns) != list(new.columns) or len(old) != len(new):
        return ["<columns or rows>"]
    return [c for c in keep if not old[c].equals(new[c])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="/work/main", help="checkout with the reference code")
    parser.add_argument("--algos", nargs="+", default=list(RUNS), choices=list(RUNS))
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.algos:
            old = run(Path(args.ref).resolve(), name, Path(tmp) / f"{name}_ref")
            new = run(HERE, name, Path(tmp) / f"{name}_new")
            diff = compare(old, new)
            failed |= bool(diff)
            print(f"{name:10s} {'identical' if not diff else 'DIFFERS in ' + ', '.join(diff)}"
                  f"  ({len(new)} epochs, {len(new.columns)} columns)", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
