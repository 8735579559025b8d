"""The docs' ExperimentGrid example: PPO on CartPole-v1 over hidden sizes and activations.

    python -m spinup.examples.bench_ppo_cartpole --cpu 2 --num_runs 3

Runs 2 network shapes x 2 activations x ``num_runs`` seeds (in series), each
with ``--cpu`` MPI processes; then plot with
``python -m spinup.run plot data/ppo-bench --savefig ppo-bench.png``.
"""
import argparse

import torch

from spinup import ppo
from spinup.utils.run_utils import ExperimentGrid

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", type=int, default=4)
    parser.add_argument("--num_runs", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps_per_epoch", type=int, default=4000)
    parser.add_argument("--data_dir", type=str, default=None)
    args = parser.parse_args()

    eg = ExperimentGrid(name="ppo-bench")
    eg.add("env_name", "CartPole-v1", "", True)
    eg.add("seed", [10 * i for i in range(args.num_runs)])
    eg.add("epochs", args.epochs)
    eg.add("steps_per_epoch", args.steps_per_epoch)
    eg.add("ac_kwargs:hidden_sizes", [(32,), (64, 64)], "hid")
    eg.add("ac_kwargs:activation", [torch.nn.Tanh, torch.nn.ReLU], "")
    eg.run(ppo, num_cpu=args.cpu, data_dir=args.data_dir)
