"""Does a change alter learning? Compare progress.txt of old and new code, Time aside.

Runs every algorithm with a tiny fixed-seed budget twice, once with the code of a
reference checkout (``--ref``) and once with this checkout,
each in its own subprocess with one torch thread, and compares the two
``progress.txt`` files column by column, ignoring ``Time`` (and any column whose
name contains ``FPS``, a speed). Prints one line per algorithm and exits 1 when any
pair differs.

Usage::

    python benchmarks/check_identical_progress.py --ref DIR [--algos ppo sac ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = Path(HERE).parent
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [str(ROOT)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

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
    import pandas as pd
    env = dict(os.environ, PYTHONPATH=str(code_dir), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, algo, env_id, json.dumps(kwargs),
                           str(out_dir)], env=env, cwd=code_dir, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SystemExit(f"check_identical_progress: {name} with the code in {code_dir} "
                         f"failed: {last}")
    return pd.read_csv(Path(out_dir) / "progress.txt", sep="\t")


def compare(old, new):
    """Names of the columns (Time and speed columns aside) that differ."""
    keep = [c for c in old.columns if c != "Time" and "FPS" not in c]
    if list(old.columns) != list(new.columns) or len(old) != len(new):
        return ["<columns or rows>"]
    return [c for c in keep if not old[c].equals(new[c])]


def _checkout(text):
    """A folder holding another checkout's ``spinup/``."""
    _cli.folder(text)
    if not os.path.isfile(os.path.join(text, "spinup", "__init__.py")):
        raise argparse.ArgumentTypeError(f"{text}: no spinup/ package in it (not a checkout)")
    return text


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, type=_checkout,
                        help="checkout with the reference code (e.g. a git worktree of the "
                             "commit before a change)")
    parser.add_argument("--algos", nargs="+", default=list(RUNS), choices=list(RUNS),
                        help="the runs to compare")
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.algos:
            old = run(Path(args.ref).resolve(), name, Path(tmp) / f"{name}_ref")
            new = run(ROOT, name, Path(tmp) / f"{name}_new")
            diff = compare(old, new)
            failed |= bool(diff)
            print(f"{name:10s} {'identical' if not diff else 'DIFFERS in ' + ', '.join(diff)}"
                  f"  ({len(new)} epochs, {len(new.columns)} columns)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
