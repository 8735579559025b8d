"""Is a change faster or slower? Time SAC, TD3, DDPG or PPO of two versions of spinup
in alternating pairs of processes.

One run on a virtual machine can be 40 % slower than the next with the same code, so
two versions are compared in many alternating pairs (each run its own process, with a
warm-up that includes updates) and judged by their medians. ``REV`` is any git revision
of this repository; it is unpacked with ``git archive`` into a temporary directory and
put first on ``PYTHONPATH`` for its half of the runs. Usage::

    python benchmarks/ab_versions.py 81102e7 [--algo sac] [--pairs 8] [--steps 3000]
    python benchmarks/ab_versions.py --set MKL_CBWR=AVX2 ATEN_CPU_CAPABILITY=avx2

With ``--set NAME=VALUE ...`` instead of ``REV``, the working tree is compared with itself
run under those environment settings (the cost of a setting that fixes torch's kernels).

``--algo ppo`` times acting: PPO on CartPole-v1 with one env and one policy and one
value step per epoch (``train_pi_iters=train_v_iters=1``), epochs of ``--steps``
steps, one of warm-up; it prints microseconds of CPU time per env step.
"""
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

# Runs in the child process: warm-up (100 random steps, 100 with updates), then one
# timed run of the Pendulum configuration of offpolicy_speed.py; prints CPU seconds.
CHILD = """
import sys, tempfile, time
import gymnasium as gym, torch
torch.set_num_threads(1)
from importlib import import_module
algo = getattr(import_module(f"spinup.algos.{sys.argv[1]}.{sys.argv[1]}"), sys.argv[1])
def run(steps, start):
    out = tempfile.mkdtemp(prefix="spinup_ab_")
    algo(lambda: gym.make("Pendulum-v1"), ac_kwargs=dict(hidden_sizes=(256, 256)),
         steps_per_epoch=steps, epochs=1, batch_size=100, start_steps=start,
         update_after=start, update_every=50, num_test_episodes=0,
         logger_kwargs=dict(output_dir=out))
run(200, 100)
t = time.process_time()
run(int(sys.argv[2]), 1000)
print(time.process_time() - t)
"""

# PPO's child: one warm-up epoch, then 5 timed epochs; prints CPU microseconds per step.
CHILD_PPO = """
import sys, tempfile, time
import gymnasium as gym, torch
torch.set_num_threads(1)
from spinup.algos.ppo.ppo import ppo
steps = int(sys.argv[2])
def run(epochs):
    ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=steps, epochs=epochs,
        train_pi_iters=1, train_v_iters=1, logger_kwargs=dict(output_dir=tempfile.mkdtemp()))
run(1)
t = time.process_time()
run(5)
print((time.process_time() - t) / (5 * steps) * 1e6)
"""


def timed_run(algo, steps, pythonpath, settings=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", **(settings or {}))
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    child = CHILD_PPO if algo == "ppo" else CHILD
    out = subprocess.run([sys.executable, "-c", child, algo, str(steps)], env=env,
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        raise SystemExit(f"ab_versions: a timed {algo} run failed: {last}")
    return float(out.stdout.strip().splitlines()[-1])


def _archive(parser, rev):
    """``git archive`` of ``spinup/`` at ``rev`` (refused in one line when git cannot)."""
    try:
        archived = subprocess.run(["git", "-C", ROOT, "archive", rev, "spinup"],
                                  capture_output=True)
    except OSError as error:
        parser.error(f"cannot run git: {error}")
    if archived.returncode != 0:
        reason = (archived.stderr.decode().strip().splitlines() or ["git archive failed"])[0]
        parser.error(f"cannot unpack revision {rev!r}: {reason}")
    return archived.stdout


def _compare_revision(args, archive):
    with tempfile.TemporaryDirectory(prefix="spinup_rev_") as old_tree:
        subprocess.run(["tar", "-x", "-C", old_tree], input=archive, check=True)
        times = {"working tree": [], args.rev: []}
        for i in range(args.pairs):
            times["working tree"].append(timed_run(args.algo, args.steps, ROOT))
            times[args.rev].append(timed_run(args.algo, args.steps, old_tree))
            print(f"pair {i + 1}: working tree {times['working tree'][-1]:.2f}, "
                  f"{args.rev} {times[args.rev][-1]:.2f}", flush=True)
    return times


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n")[0])
    parser.add_argument("rev", nargs="?", help="git revision to compare the working tree with")
    parser.add_argument("--set", nargs="+", metavar="NAME=VALUE", type=_cli.settings,
                        help="compare the working tree with itself under these settings")
    parser.add_argument("--algo", default="sac", choices=["sac", "td3", "ddpg", "ppo"],
                        help="what the runs train")
    parser.add_argument("--pairs", type=_cli.positive, default=8,
                        help="alternating pairs of runs")
    parser.add_argument("--steps", type=_cli.positive, default=3000,
                        help="timed env steps per run (sac/td3/ddpg: more than the 1000 "
                             "random ones; ppo: steps per epoch)")
    args = parser.parse_args(argv)
    if (args.rev is None) == (args.set is None):
        parser.error("give a revision or --set NAME=VALUE ..., one of the two")
    if args.algo != "ppo" and args.steps <= 1000:
        parser.error(f"--steps {args.steps}: {args.algo} starts learning after 1000 steps; "
                     "give more")
    if args.set:
        settings = dict(pair.partition("=")[::2] for pair in args.set)
        other = " ".join(args.set)
        times = {"working tree": [], other: []}
        for i in range(args.pairs):
            times["working tree"].append(timed_run(args.algo, args.steps, ROOT))
            times[other].append(timed_run(args.algo, args.steps, ROOT, settings))
            print(f"pair {i + 1}: as is {times['working tree'][-1]:.2f}, "
                  f"with {other} {times[other][-1]:.2f}", flush=True)
    else:
        other = args.rev
        times = _compare_revision(args, _archive(parser, args.rev))
    unit = "us per step" if args.algo == "ppo" else f"s of CPU for {args.steps} steps"
    for name, ts in times.items():
        print(f"{name:>14s}: median {statistics.median(ts):.2f}, fastest {min(ts):.2f} "
              f"({unit}, {args.algo})")
    faster = sum(a < b for a, b in zip(times["working tree"], times[other]))
    print(f"working tree faster in {faster} of {args.pairs} pairs")


if __name__ == "__main__":
    main()
