"""Solution to Exercise 1.2: PPO Gaussian Policy."""
import numpy as np
import torch
import torch.nn as nn

from spinup.exercises.problem_set_1_solutions.exercise1_1_soln import gaussian_likelihood


def mlp(sizes, activation, output_activation=nn.Identity):
    """``Linear -> activation`` for each consecutive pair of ``sizes``; the last layer
    uses ``output_activation``."""
    modules = []
    n_layers = len(sizes) - 1
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        nonlinearity = output_activation if i == n_layers - 1 else activation
        modules.extend([nn.Linear(n_in, n_out), nonlinearity()])
    return nn.Sequential(*modules)


class DiagonalGaussianDistribution:
    """A batch of diagonal Gaussians (means ``mu``, log standard deviations ``log_std``)."""

    def __init__(self, mu, log_std):
        self.mu = mu
        self.log_std = log_std

    @property
    def mean(self):
        return self.mu

    def sample(self):
        # Reparameterised: mu + sigma * z, z ~ N(0, I)
        return self.mu + torch.exp(self.log_std) * torch.randn_like(self.mu)

    def log_prob(self, value):
        return gaussian_likelihood(value, self.mu, self.log_std)

    def entropy(self):
        return (0.5 + 0.5 * np.log(2 * np.pi) + self.log_std).expand_as(self.mu).sum(axis=-1)


class MLPGaussianActor(nn.Module):
    """Diagonal Gaussian policy with a state-independent, trainable ``log_std``."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.log_std = nn.Parameter(-0.5 * torch.ones(act_dim, dtype=torch.float32))
        self.mu_net = mlp([obs_dim, *hidden_sizes, act_dim], activation)

    def forward(self, obs, act=None):
        mu = self.mu_net(obs)
        pi = DiagonalGaussianDistribution(mu, self.log_std)
        logp_a = None
        if act is not None:
            logp_a = pi.log_prob(act)
        return pi, logp_a


if __name__ == '__main__':
    from spinup.exercises.problem_set_1.exercise1_2_auxiliary import main
    main(mlp, MLPGaussianActor)
