"""Wall time of one PPO seed grid run serially and with ``--jobs N`` (issue 23).

Runs the same ``python -m spinup.run ppo ... --seed s1 s2 ...`` grid twice, into
separate data directories, first one variant after another, then ``--jobs N``;
reports both wall times, their ratio, and whether every variant's ``progress.txt``
is the same in both (``Time`` aside). Results go to ``docs/benchmarks/grid_parallel.rst``.

    python benchmarks/grid_parallel.py                       # 4 seeds, --jobs 2
    python benchmarks/grid_parallel.py --epochs 5 --keep data/bench_grid

The machine should be otherwise idle: the point is the ratio of the two times.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402


def run_grid(data_dir, args, extra):
    """Run the grid with this checkout's CLI; return its wall time in seconds."""
    cmd = [sys.executable, "-m", "spinup.run", "ppo", "--env", args.env,
           "--seed", *map(str, args.seeds), "--epochs", str(args.epochs),
           "--steps_per_epoch", str(args.steps_per_epoch), "--data_dir", data_dir, *extra]
    path = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=path))
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SystemExit(f"grid_parallel: the grid {' '.join(extra) or '(serial)'} failed: "
                         f"{last}")
    return time.perf_counter() - start


def same_tables(dir_a, dir_b, seeds):
    """True when every seed's progress.txt matches in both grids, ``Time`` aside."""
    import pandas as pd
    for seed in seeds:
        tables = [pd.read_table(os.path.join(d, "cmd_ppo", f"cmd_ppo_s{seed}", "progress.txt"))
                  .drop(columns="Time") for d in (dir_a, dir_b)]
        if not tables[0].equals(tables[1]):
            return False
    return True


def _jobs(text):
    """``auto`` or an integer >= 1, for the CLI's ``--jobs``."""
    return text if text == "auto" else str(_cli.positive(text))


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--env", default="CartPole-v1", type=_cli.gym_task,
                        help="a gymnasium task id")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 10, 20, 30],
                        help="the grid's seeds (one variant each)")
    parser.add_argument("--epochs", type=_cli.positive, default=10, help="epochs per variant")
    parser.add_argument("--steps_per_epoch", type=_cli.positive, default=4000,
                        help="env steps per epoch")
    parser.add_argument("--jobs", default="2", type=_jobs, help="N or auto")
    parser.add_argument("--keep", metavar="DIR",
                        help="write the runs under DIR (kept) instead of a temporary directory")
    args = parser.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds {' '.join(map(str, args.seeds))}: a seed is given twice")
    root = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="grid-parallel-")
    serial_dir, parallel_dir = os.path.join(root, "serial"), os.path.join(root, "jobs")
    for d in (serial_dir, parallel_dir):
        if os.path.exists(d):
            parser.error(f"{d} exists already; give another --keep directory")
    try:
        serial = run_grid(serial_dir, args, [])
        parallel = run_grid(parallel_dir, args, ["--jobs", args.jobs])
        same = same_tables(serial_dir, parallel_dir, args.seeds)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"PPO {args.env}, {len(args.seeds)} seeds x {args.epochs} epochs x "
          f"{args.steps_per_epoch} steps, {os.cpu_count()} CPUs")
    print(f"serial      {serial:8.1f} s")
    print(f"--jobs {args.jobs:<4} {parallel:8.1f} s   ratio {parallel / serial:.2f}")
    print(f"identical tables (Time aside): {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
