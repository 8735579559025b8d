"""Exercise 2.2: a bug in DDPG that raises no error.

This file trains DDPG twice over, each time with three seeds: once with the correct
actor-critic (``spinup.algos.ddpg.core.MLPActorCritic``) and once with
:class:`BuggedMLPActorCritic` below, which differs from it in one small way. Then it
plots both groups of runs::

    python -m spinup.exercises.problem_set_2.exercise2_2

Compare the two curves. Then, using only the code in this file (keep DDPG's ``core.py``
closed), find the bug and work out why it hurts learning. A hint: the Q-loss of our
DDPG (``compute_loss_q`` in ``spinup/algos/ddpg/ddpg.py``) reads::

    q_sa = ac.q(obs, act)
    with torch.no_grad():
        q_next = ac_targ.q(next_obs, ac_targ.pi(next_obs))
        y = rew + gamma * (1 - done) * q_next
    loss = (q_sa - y).pow(2).mean()

What could a mistake in the Q-network's forward pass do to these lines?

The default settings (HalfCheetah, one hidden layer of 300 units, 50k steps, 3 seeds)
take hours on a laptop CPU. ``--env Pendulum-v1 --total_steps 10000 --steps_per_epoch
1000`` shows the same gap in minutes.
"""
import argparse
import os
import os.path as osp

import numpy as np
import torch
import torch.nn as nn

from spinup.algos.ddpg.core import MLPActorCritic


def mlp(sizes, activation, output_activation=nn.Identity):
    """A stack of ``nn.Linear`` layers of widths ``sizes``; ``activation`` after each
    hidden layer, ``output_activation`` after the last."""
    stack = nn.Sequential()
    for i in range(1, len(sizes)):
        stack.append(nn.Linear(sizes[i - 1], sizes[i]))
        stack.append(activation() if i < len(sizes) - 1 else output_activation())
    return stack


class BuggedMLPQFunction(nn.Module):
    """Q(s, a) for DDPG (with a bug)."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.q = mlp([obs_dim + act_dim, *hidden_sizes, 1], activation)

    def forward(self, obs, act):
        return self.q(torch.cat([obs, act], dim=-1))


class BuggedMLPActorCritic(MLPActorCritic):
    """DDPG's actor-critic, but with :class:`BuggedMLPQFunction` as its Q-function."""

    def __init__(self, observation_space, action_space, hidden_sizes=(256, 256),
                 activation=nn.ReLU):
        super().__init__(observation_space, action_space, hidden_sizes, activation)
        self.q = BuggedMLPQFunction(observation_space.shape[0], action_space.shape[0],
                                    hidden_sizes, activation)


def ddpg_with_actor_critic(bugged, hidden_sizes, **kwargs):
    """Run our DDPG with the bugged or the default actor-critic (and the spec's
    exercise settings, overridable through ``kwargs``)."""
    from spinup.algos.ddpg.ddpg import ddpg
    from spinup.algos.ddpg.core import MLPActorCritic as CorrectMLPActorCritic
    from spinup.exercises.problem_set_2.exercise2_2 import BuggedMLPActorCritic as Bugged
    settings = dict(max_ep_len=150, batch_size=64, polyak=0.95, start_steps=5000)
    settings.update(kwargs)
    return ddpg(actor_critic=Bugged if bugged else CorrectMLPActorCritic,
                ac_kwargs=dict(hidden_sizes=hidden_sizes), **settings)


def summarize(output_dirs):
    """Print the final test return of each run and the mean per condition."""
    import pandas as pd
    rows = {}
    for d in output_dirs:
        prog = pd.read_table(osp.join(d, "progress.txt"))
        bugged = osp.basename(osp.dirname(osp.normpath(d))).endswith("_bugged")
        rows.setdefault("bugged" if bugged else "correct", []).append(
            float(prog["AverageTestEpRet"].iloc[-1]))
    print("\nFinal AverageTestEpRet (last epoch), per seed:")
    for k, v in rows.items():
        print(f"  {k:8s} mean {np.mean(v):9.1f}   seeds: " + ", ".join(f"{x:.1f}" for x in v))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", type=str, default="HalfCheetah-v5")
    parser.add_argument("--h", type=int, default=300, help="hidden layer width")
    parser.add_argument("--l", type=int, default=1, help="number of hidden layers")
    parser.add_argument("--num_runs", "-n", type=int, default=3, help="seeds per condition")
    parser.add_argument("--steps_per_epoch", "-s", type=int, default=5000)
    parser.add_argument("--total_steps", "-t", type=int, default=int(5e4))
    parser.add_argument("--start_steps", type=int, default=5000)
    parser.add_argument("--update_after", type=int, default=1000)
    parser.add_argument("--max_ep_len", type=int, default=150)
    parser.add_argument("--num_test_episodes", type=int, default=10)
    parser.add_argument("--data_dir", type=str, default=None,
                        help="where to put the runs (default: spinup's data directory)")
    parser.add_argument("--savefig", type=str, default=None,
                        help="image file for the plot (default: ex2-2.png in the data dir)")
    args = parser.parse_args(argv)

    from spinup.user_config import DEFAULT_DATA_DIR
    from spinup.utils.plot import make_plots
    from spinup.utils import run_utils

    eg = run_utils.ExperimentGrid(name="ex2-2_ddpg")
    eg.add("replay_size", int(args.total_steps))
    eg.add("env_name", args.env, "", True)
    eg.add("seed", [10 * i for i in range(args.num_runs)])
    eg.add("epochs", int(args.total_steps / args.steps_per_epoch))
    eg.add("steps_per_epoch", args.steps_per_epoch)
    eg.add("start_steps", args.start_steps)
    eg.add("update_after", args.update_after)
    eg.add("max_ep_len", args.max_ep_len)
    eg.add("num_test_episodes", args.num_test_episodes)
    eg.add("hidden_sizes", [[args.h] * args.l])
    eg.add("bugged", [False, True], "bugged")
    output_dirs = eg.run(ddpg_with_actor_critic, data_dir=args.data_dir, datestamp=True)

    summarize(output_dirs)
    data_dir = args.data_dir or DEFAULT_DATA_DIR
    savefig = args.savefig or osp.join(data_dir, "ex2-2.png")
    # One directory per condition (its seeds inside); the trailing separator makes
    # the plotter use the directory as is rather than as a name prefix.
    logdirs = sorted({osp.dirname(osp.normpath(d)) + os.sep for d in output_dirs})
    make_plots(logdirs, legend=["bugged" if osp.normpath(d).endswith("_bugged") else "correct"
                                for d in logdirs],
               xaxis="TotalEnvInteracts", values=["Performance"], savefig=savefig)
    print("\nPlot: " + savefig)
    print("Now: what is the bug, and how does it break DDPG? "
          "(Discussion: spinup/exercises/problem_set_2_solutions/exercise2_2_soln.py)")


if __name__ == "__main__":
    main()
