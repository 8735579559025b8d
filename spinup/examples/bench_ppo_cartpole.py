"""ExperimentGrid in practice: PPO on CartPole-v1 over network shapes and activations.

    python -m spinup.examples.bench_ppo_cartpole --cpu 2 --num_runs 3

The grid below has four variants (hidden sizes (32,) or (64, 64), times tanh or ReLU),
each trained with ``--num_runs`` seeds; the runs go one after another, each on ``--cpu``
MPI processes. Compare them afterwards with
``python -m spinup.run plot data/ppo-bench --savefig ppo-bench.png``.
"""
import argparse
import sys

import torch

from spinup import ppo
from spinup.utils import run_utils
from spinup.machinery.cores import available_cores


def main(argv=None):
    """Parse the flags, build the grid and run every variant with PPO.

    Returns:
        int: the exit code (2: the grid was refused before any run started, with one line
        on stderr, e.g. ``--cpu`` above the cores).
    """
    cli = argparse.ArgumentParser(description="PPO on CartPole-v1: a small ExperimentGrid")
    cli.add_argument("--cpu", type=int, default=min(4, available_cores()),
                     help="MPI processes per run (default: 4, or the cores if fewer)")
    cli.add_argument("--num_runs", type=int, default=3, help="seeds per variant")
    cli.add_argument("--epochs", type=int, default=10)
    cli.add_argument("--steps_per_epoch", type=int, default=4000)
    cli.add_argument("--data_dir", default=None, help="where the runs go (default: data/)")
    opts = cli.parse_args(argv)

    grid = run_utils.ExperimentGrid(name="ppo-bench")
    grid.add("env_name", "CartPole-v1", "", True)  # in the names of the run folders
    grid.add("seed", [10 * k for k in range(opts.num_runs)])
    grid.add("epochs", opts.epochs)
    grid.add("steps_per_epoch", opts.steps_per_epoch)
    grid.add("ac_kwargs:hidden_sizes", [(32,), (64, 64)], "hid")  # short name: hid
    grid.add("ac_kwargs:activation", [torch.nn.Tanh, torch.nn.ReLU], "")
    try:
        grid.run(ppo, num_cpu=opts.cpu, data_dir=opts.data_dir)
    except (run_utils.LaunchError, ValueError, TypeError, FileExistsError) as e:
        print(f"bench_ppo_cartpole: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
