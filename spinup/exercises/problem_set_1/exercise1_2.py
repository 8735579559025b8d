"""Exercise 1.2: the Gaussian policy network of PPO.

PPO on a continuous-action task samples actions from a diagonal Gaussian whose mean comes
from a neural network and whose log standard deviation is a learned vector shared by all
states. Three pieces are missing below, each marked "YOUR CODE HERE": the layer builder
``mlp``, ``DiagonalGaussianDistribution.sample``, and the ``MLPGaussianActor`` module.

Grade your answer with::

    python -m spinup.exercises.problem_set_1.exercise1_2

Quick checks on random inputs come first (a few seconds). If they pass, our PPO trains
your policy on InvertedPendulum-v5 for 20 epochs of 4000 steps; you pass when the last 5
epochs average a return above 500 or one of them hits 1000, the task's ceiling.
``--epochs`` and ``--steps_per_epoch`` make the run shorter (then the verdict only shows
that the code runs), and ``--use_soln`` grades the reference answer instead.
"""
import numpy as np
import torch
import torch.nn as nn

# Log-likelihoods use the reference solution of Exercise 1.1, so that this exercise
# stands on its own.
from spinup.exercises.problem_set_1_solutions.exercise1_1_soln import gaussian_likelihood


def mlp(sizes, activation, output_activation=nn.Identity):
    """
    Build a multi-layer perceptron in PyTorch.

    Args:
        sizes: Tuple, list, or other iterable giving the number of units for each
            layer of the MLP, e.g. ``[obs_dim, 64, 64, act_dim]``.
        activation: Activation function class (e.g. ``nn.Tanh``) for all layers
            except the last.
        output_activation: Activation function class for the last layer.

    Returns:
        An ``nn.Module`` mapping a Tensor of shape [batch, sizes[0]] to one of shape
        [batch, sizes[-1]].
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


class DiagonalGaussianDistribution:
    """A batch of diagonal Gaussians with means ``mu`` [batch, act_dim] and log
    standard deviations ``log_std`` ([act_dim] or [batch, act_dim])."""

    def __init__(self, mu, log_std):
        self.mu = mu
        self.log_std = log_std

    @property
    def mean(self):
        return self.mu

    def sample(self):
        """
        Returns:
            A PyTorch Tensor of samples from the diagonal Gaussian distribution with
            mean and log_std given by ``self.mu`` and ``self.log_std``; shape
            [batch, act_dim].
        """
        #######################
        #                     #
        #   YOUR CODE HERE    #
        #                     #
        #######################
        pass

    #================================(Given, ignore)==========================================#
    def log_prob(self, value):
        return gaussian_likelihood(value, self.mu, self.log_std)

    def entropy(self):
        return (0.5 + 0.5 * np.log(2 * np.pi) + self.log_std).expand_as(self.mu).sum(axis=-1)
    #=========================================================================================#


class MLPGaussianActor(nn.Module):
    """Diagonal Gaussian policy: an MLP gives the mean action for each observation;
    the log standard deviations are a separate, state-independent parameter vector
    (initialise it to -0.5)."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        """
        Initialize an MLP Gaussian Actor by making a PyTorch module for computing the
        mean of the distribution given a batch of observations, and a log_std
        parameter.

        Make log_std a PyTorch Parameter with the same shape as the action vector,
        independent of observations, initialized to [-0.5, -0.5, ..., -0.5]. (Make
        sure it's trainable!)
        """
        #######################
        #                     #
        #   YOUR CODE HERE    #
        #                     #
        #######################
        # self.log_std =
        # self.mu_net =
        pass

    def forward(self, obs, act=None):
        """
        Args:
            obs: Tensor of observations, shape [batch, obs_dim].
            act: optional Tensor of actions, shape [batch, act_dim].

        Returns:
            ``(pi, logp_a)``: ``pi`` a DiagonalGaussianDistribution for the batch;
            ``logp_a`` the log-likelihoods (shape [batch]) of ``act`` under ``pi`` if
            ``act`` is given, else None.
        """
        #######################
        #                     #
        #   YOUR CODE HERE    #
        #                     #
        #######################
        # mu =
        # pi = DiagonalGaussianDistribution(mu, self.log_std)
        # logp_a = None
        # if act is not None:
        #     logp_a = ...
        # return pi, logp_a
        pass


if __name__ == "__main__":
    from spinup.exercises.problem_set_1.exercise1_2_auxiliary import main
    main(mlp, MLPGaussianActor)
