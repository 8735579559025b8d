"""Reward-to-go policy gradient: each log-probability weighted by the rewards after it.

Run it with::

    python -m spinup.examples.pg_math.2_rtg_pg --env CartPole-v1 --epochs 50

This is ``1_simple_pg.py`` with one change of weight. An action a_t cannot influence
rewards collected before time t, so those terms only add noise to the estimate; dropping
them leaves the expectation unchanged:

    grad J(theta) = E_tau[ sum_t grad log pi_theta(a_t | s_t)
                                 * (r_t + r_{t+1} + ... + r_{T-1}) ].

The sum in brackets is the (undiscounted) reward-to-go from step t.

Every epoch plays whole episodes with the current policy until more than ``batch_size``
steps are stored, then takes a single Adam step on the surrogate

    L(theta) = - mean over stored steps t of [ log pi_theta(a_t | s_t) * w_t ]

with w_t = the reward-to-go of step t within its episode. L is no measure of how well
the policy does (it can rise while returns improve): it is built so that its gradient,
on fresh data from the current policy, is minus a sample estimate of grad J. Works for
any gymnasium task with a Box observation space and a Discrete action space.

With ``--exp_name NAME`` the script also writes ``progress.txt`` and ``config.json``
(under ``--data_dir``, default ``data/``) for ``python -m spinup.run plot``.

docs/intro/policy_optimization.rst derives the gradient and walks through this file.
"""
import argparse
import sys
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from spinup.utils.logx import EpochLogger
from spinup.utils.run_utils import setup_logger_kwargs


def mlp(sizes, activation=nn.Tanh, output_activation=nn.Identity):
    """Fully connected network whose layer widths are ``sizes`` (input first, output
    last); ``activation`` after each hidden layer, ``output_activation`` at the end."""
    widths = list(zip(sizes[:-1], sizes[1:]))
    net = nn.Sequential()
    for i, (n_in, n_out) in enumerate(widths):
        net.append(nn.Linear(n_in, n_out))
        net.append(output_activation() if i == len(widths) - 1 else activation())
    return net


def reward_to_go(rews):
    """Undiscounted reward-to-go of every step of one episode.

    Args:
        rews (list of float): the episode's rewards r_0 ... r_{T-1}.

    Returns:
        numpy array [T]: entry t is ``rews[t] + rews[t+1] + ... + rews[T-1]``.
    """
    backwards = np.cumsum(np.asarray(rews, dtype=np.float64)[::-1])
    return backwards[::-1].copy()


def train(env_name="CartPole-v1", hidden_sizes=[32], lr=1e-2, epochs=50, batch_size=5000,
          seed=0, logger_kwargs=None):
    """Train a categorical MLP policy with the reward-to-go policy gradient.

    Args:
        env_name (str): gymnasium id; Box observations and Discrete actions only.
        hidden_sizes (list of int): widths of the policy's hidden layers (tanh).
        lr (float): Adam learning rate.
        epochs (int): number of policy updates.
        batch_size (int): an epoch stops at the first episode end past this many steps.
        seed (int): seeds torch and the first reset of the environment.
        logger_kwargs (dict or None): if given, an ``EpochLogger`` built from it writes
            ``config.json`` and one ``progress.txt`` row per epoch (columns Epoch,
            AverageEpRet, StdEpRet, MaxEpRet, MinEpRet, EpLen, LossPi,
            TotalEnvInteracts, Time); ``None`` only prints.

    Returns:
        list of float: the mean episode return of each epoch's batch.

    Raises:
        ValueError: if the environment's spaces are not Box and Discrete.
    """
    torch.manual_seed(seed)
    env = gym.make(env_name)
    if not (isinstance(env.observation_space, gym.spaces.Box)
            and isinstance(env.action_space, gym.spaces.Discrete)):
        raise ValueError(f"2_rtg_pg: {env_name} needs a Box observation space and a Discrete "
                         f"action space, not {type(env.observation_space).__name__} and "
                         f"{type(env.action_space).__name__}")
    logger = None
    if logger_kwargs is not None:  # optional: files for the plotter
        logger = EpochLogger(**logger_kwargs)
        logger.save_config(dict(env_name=env_name, hidden_sizes=hidden_sizes, lr=lr,
                                epochs=epochs, batch_size=batch_size, seed=seed))
    start_time, total_steps = time.time(), 0

    # Step 1: the policy, a categorical distribution over the network's logits.
    logits_net = mlp([env.observation_space.shape[0], *hidden_sizes, int(env.action_space.n)])
    opt = torch.optim.Adam(logits_net.parameters(), lr=lr)

    def policy(obs):
        """pi_theta(. | s): a Categorical over the actions, from the network's logits."""
        return torch.distributions.Categorical(logits=logits_net(obs))

    history = []
    for epoch in range(epochs):
        # Step 2: roll out whole episodes; one row per step in each list.
        obs_rows, act_rows, w_rows = [], [], []
        ep_returns, ep_lengths, ep_rews = [], [], []
        obs, _ = env.reset(seed=seed if epoch == 0 else None)
        while True:
            obs_rows.append(np.asarray(obs, dtype=np.float32))
            with torch.no_grad():  # acting needs no gradient
                act = policy(torch.from_numpy(obs_rows[-1])).sample().item()
            obs, rew, terminated, truncated, _ = env.step(act)
            act_rows.append(act)
            ep_rews.append(float(rew))
            if not (terminated or truncated):
                continue
            w_rows.extend(reward_to_go(ep_rews))
            ep_returns.append(sum(ep_rews))
            ep_lengths.append(len(ep_rews))
            (obs, _), ep_rews = env.reset(), []
            if len(obs_rows) > batch_size:
                break
        total_steps += len(obs_rows)

        # Step 3: one gradient step on the surrogate L(theta).
        logp = policy(torch.from_numpy(np.stack(obs_rows))).log_prob(torch.tensor(act_rows))
        surrogate = -(logp * torch.tensor(w_rows, dtype=torch.float32)).mean()
        opt.zero_grad()
        surrogate.backward()
        opt.step()

        # Step 4: report the epoch.
        history.append(float(np.mean(ep_returns)))
        if logger is None:
            print(f"epoch {epoch:3d}   surrogate {surrogate.item():9.3f}   "
                  f"mean return {history[-1]:8.2f}   mean length {np.mean(ep_lengths):7.1f}")
        else:  # the logger prints its own progress line
            logger.store(EpRet=ep_returns, EpLen=ep_lengths)
            logger.log_tabular("Epoch", epoch)
            logger.log_tabular("EpRet", with_min_and_max=True)
            logger.log_tabular("EpLen", average_only=True)
            logger.log_tabular("LossPi", surrogate.item())
            logger.log_tabular("TotalEnvInteracts", total_steps)
            logger.log_tabular("Time", time.time() - start_time)
            logger.dump_tabular()
    return history


def main(argv=None):
    """Command line: ``--env`` (or ``--env_name``), ``--lr``, ``--epochs``,
    ``--batch_size``, ``--seed``, and ``--exp_name`` / ``--data_dir`` to also write
    ``progress.txt`` and ``config.json`` to ``data_dir/exp_name/exp_name_s<seed>``."""
    cli = argparse.ArgumentParser(
        description="the reward-to-go policy gradient on a discrete-action task")
    cli.add_argument("--env_name", "--env", default="CartPole-v1")
    cli.add_argument("--lr", type=float, default=1e-2)
    cli.add_argument("--epochs", type=int, default=50)
    cli.add_argument("--batch_size", type=int, default=5000)
    cli.add_argument("--seed", type=int, default=0)
    cli.add_argument("--exp_name", default=None,
                     help="also write progress.txt and config.json for this experiment")
    cli.add_argument("--data_dir", default=None,
                     help="where --exp_name's directory goes (default: spinup's data dir)")
    opts = cli.parse_args(argv)
    print("Reward-to-go policy gradient: each step is weighted by the rewards from it onwards.\n")
    try:
        logger_kwargs = None
        if opts.exp_name is not None:
            logger_kwargs = setup_logger_kwargs(opts.exp_name, opts.seed, opts.data_dir)
        train(env_name=opts.env_name, lr=opts.lr, epochs=opts.epochs,
              batch_size=opts.batch_size, seed=opts.seed, logger_kwargs=logger_kwargs)
    except (ValueError, OSError, gym.error.Error) as exc:  # bad environment, name or directory
        print(f"{cli.prog}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == '__main__':
    main()
