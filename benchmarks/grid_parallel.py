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

import pandas as pd


def run_grid(data_dir, args, extra):
    """Run the grid with the CLI; return its wall time in seconds."""
    cmd = [sys.executable, "-m", "spinup.run", "ppo", "--env", args.env,
           "--seed", *map(str, args.seeds), "--epochs", str(args.epochs),
           "--steps_per_epoch", str(args.steps_per_epoch), "--data_dir", data_dir, *extra]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, PYTHONUNBUFFERED="1"))
    return time.perf_counter() - start


def same_tables(dir_a, dir_b, seeds):
    """True when every seed's progress.txt matches in both grids, ``Time`` aside."""
    for seed in seeds:
        tables = [pd.read_table(os.path.join(d, "cmd_ppo", f"cmd_ppo_s{seed}", "progress.txt"))
                  .drop(columns="Time") for d in (dir_a, dir_b)]
        if not tables[0].equals(tables[1]):
            return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 10, 20, 30])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps_per_epoch", type=int, default=4000)
    parser.add_argument("--jobs", default="2", help="N or auto")
    parser.add_argument("--keep", metavar="DIR",
                        help="write the runs under DIR (kept) instead of a temporary directory")
    args = parser.parse_args(argv)
    root = args.keep or tempfile.mkdtemp(prefix="grid-parallel-")
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
