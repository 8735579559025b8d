"""The simplest policy gradient (spec: "Intro to Policy Optimization", part 3).

    python spinup/examples/pg_math/1_simple_pg.py --env CartPole-v1 --epochs 50

Each epoch collects ``batch_size`` steps with the current categorical policy
and takes one step of gradient ascent on

    grad J(pi_theta) = E_tau[ sum_t grad log pi_theta(a_t|s_t) * R(tau) ],

estimated by the "loss" -mean_t(log pi(a_t|s_t) * R(tau)) over the batch.
"""
import argparse

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical
from torch.optim import Adam


def mlp(sizes, activation=nn.Tanh, output_activation=nn.Identity):
    """Build a feedforward neural network."""
    layers = []
    for j in range(len(sizes) - 1):
        act = activation if j < len(sizes) - 2 else output_activation
        layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
    return nn.Sequential(*layers)


def train(env_name="CartPole-v1", hidden_sizes=[32], lr=1e-2, epochs=50, batch_size=5000,
          seed=0):
    """Train a categorical MLP policy with the simplest policy gradient; return the
    list of mean episode returns, one per epoch."""
    torch.manual_seed(seed)
    env = gym.make(env_name)
    assert isinstance(env.observation_space, gym.spaces.Box), \
        "This example only works for envs with continuous state spaces."
    assert isinstance(env.action_space, gym.spaces.Discrete), \
        "This example only works for envs with discrete action spaces."
    obs_dim = env.observation_space.shape[0]
    n_acts = env.action_space.n

    # make core of policy network
    logits_net = mlp(sizes=[obs_dim] + hidden_sizes + [n_acts])

    # make function to compute action distribution
    def get_policy(obs):
        return Categorical(logits=logits_net(obs))

    # make action selection function (outputs int actions, sampled from policy)
    def get_action(obs):
        with torch.no_grad():
            return get_policy(obs).sample().item()

    # make loss function whose gradient, for the right data, is policy gradient
    def compute_loss(obs, act, weights):
        logp = get_policy(obs).log_prob(act)
        return -(logp * weights).mean()

    # make optimizer
    optimizer = Adam(logits_net.parameters(), lr=lr)

    # for training policy
    def train_one_epoch(first_reset_seed=None):
        batch_obs, batch_acts, batch_weights = [], [], []  # for R(tau) weighting
        batch_rets, batch_lens = [], []                     # for measuring episode returns
        obs, _ = env.reset(seed=first_reset_seed)
        ep_rews = []
        # collect experience by acting in the environment with current policy
        while True:
            batch_obs.append(obs.copy())
            act = get_action(torch.as_tensor(obs, dtype=torch.float32))
            obs, rew, terminated, truncated, _ = env.step(act)
            batch_acts.append(act)
            ep_rews.append(rew)
            if terminated or truncated:
                # if episode is over, record info about episode
                ep_ret, ep_len = sum(ep_rews), len(ep_rews)
                batch_rets.append(ep_ret)
                batch_lens.append(ep_len)
                # the weight for each logprob(a|s) is R(tau)
                batch_weights += [ep_ret] * ep_len
                obs, _ = env.reset()
                ep_rews = []
                # end experience loop if we have enough of it
                if len(batch_obs) > batch_size:
                    break

        # take a single policy gradient update step
        optimizer.zero_grad()
        batch_loss = compute_loss(obs=torch.as_tensor(np.array(batch_obs), dtype=torch.float32),
                                  act=torch.as_tensor(batch_acts, dtype=torch.int64),
                                  weights=torch.as_tensor(batch_weights, dtype=torch.float32))
        batch_loss.backward()
        optimizer.step()
        return batch_loss, batch_rets, batch_lens

    # training loop
    history = []
    for i in range(epochs):
        batch_loss, batch_rets, batch_lens = train_one_epoch(seed if i == 0 else None)
        print("epoch: %3d \t loss: %.3f \t return: %.3f \t ep_len: %.3f"
              % (i, batch_loss.item(), np.mean(batch_rets), np.mean(batch_lens)))
        history.append(float(np.mean(batch_rets)))
    return history


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--env_name", "--env", type=str, default="CartPole-v1")
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch_size", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("\nUsing simplest formulation of policy gradient.\n")
    train(env_name=args.env_name, lr=args.lr, epochs=args.epochs, batch_size=args.batch_size,
          seed=args.seed)
