"""CartPole as a batched tensor program (the same physics as gymnasium's CartPole-v1)."""
import math

import numpy as np
import torch
from gymnasium import spaces

from spinup.envs.base import TensorVectorEnv


class CartPole(TensorVectorEnv):
    """Balance a pole hinged on a cart that moves along a frictionless track.

    Dynamics: Barto, Sutton & Anderson (1983), "Neuronlike adaptive elements that can solve
    difficult learning control problems" (IEEE SMC), as coded in Sutton's pole.c;
    explicit Euler steps of tau = 0.02 s.

    * State and observation, float32 (N, 4): cart position x [m], cart velocity [m/s],
      pole angle theta from upright [rad], pole angular velocity [rad/s].
    * Action, (N,) int in {0, 1}: push the cart with 10 N to the left (0) or right (1).
    * Reward: +1 for every step, the last one included.
    * Termination: |x| > 2.4 m or |theta| > 12 degrees (0.2094 rad).
    * Time limit: 500 steps. Start states: each column uniform in [-0.05, 0.05].

    See :class:`~spinup.envs.base.TensorVectorEnv` for the arguments.
    """

    name = "CartPole-v1"
    default_max_episode_steps = 500
    gravity, cart_mass, pole_mass = 9.8, 1.0, 0.1   # m/s^2, kg, kg
    half_length, force_mag, tau = 0.5, 10.0, 0.02   # m (half the pole), N, s
    x_limit, theta_limit = 2.4, 12 * 2 * math.pi / 360
    single_observation_space = spaces.Box(
        -np.array([2 * x_limit, np.inf, 2 * theta_limit, np.inf], dtype=np.float32),
        np.array([2 * x_limit, np.inf, 2 * theta_limit, np.inf], dtype=np.float32),
        dtype=np.float32)
    single_action_space = spaces.Discrete(2)
    reset_low, reset_high = (-0.05,) * 4, (0.05,) * 4

    def _dynamics(self, state, actions):
        x, x_dot, theta, theta_dot = state.unbind(1)
        force = (actions.to(torch.float32) * 2 - 1) * self.force_mag
        cos, sin = torch.cos(theta), torch.sin(theta)
        total = self.cart_mass + self.pole_mass
        ml = self.pole_mass * self.half_length
        # Acceleration shared by the cart and the pole's pivot, then the pole's own.
        common = (force + ml * theta_dot * theta_dot * sin) / total
        theta_acc = (self.gravity * sin - cos * common) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos * cos / total))
        x_acc = common - ml * theta_acc * cos / total
        # Euler: positions move with the old velocities.
        x, theta = x + self.tau * x_dot, theta + self.tau * theta_dot
        x_dot, theta_dot = x_dot + self.tau * x_acc, theta_dot + self.tau * theta_acc
        terminated = (x.abs() > self.x_limit) | (theta.abs() > self.theta_limit)
        reward = torch.ones_like(x)
        return torch.stack((x, x_dot, theta, theta_dot), 1), reward, terminated

    def _observe(self, state):
        return state.clone()  # a new tensor: callers may change obs in place
