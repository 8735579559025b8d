"""Pendulum as a batched tensor program (the same physics as gymnasium's Pendulum-v1)."""
import math

import numpy as np
import torch
from gymnasium import spaces

from spinup.envs.base import TensorVectorEnv


def angle_normalize(theta):
    """Angle wrapped to [-pi, pi) (any shape, radians)."""
    return torch.remainder(theta + math.pi, 2 * math.pi) - math.pi


class Pendulum(TensorVectorEnv):
    """Swing a torque-limited pendulum up and hold it upright: the classic swing-up task.

    Dynamics: a rigid rod of mass m = 1 kg and length l = 1 m under gravity g = 10 m/s^2,
    theta'' = 3 g / (2 l) sin(theta) + 3 / (m l^2) u, one semi-implicit Euler step of
    dt = 0.05 s (the new angular velocity, clipped to +-8 rad/s, moves the angle).

    * State, float32 (N, 2): angle theta [rad] from upright (not wrapped), angular
      velocity [rad/s].
    * Observation, float32 (N, 3): cos theta, sin theta, angular velocity.
    * Action, float (N, 1): torque u [N m], clipped to [-2, 2].
    * Reward: -(angle_normalize(theta)^2 + 0.1 theta'^2 + 0.001 u^2), from the state
      before the step; between about -16.27 and 0.
    * Termination: never. Time limit: 200 steps.
    * Start states: theta uniform in [-pi, pi], angular velocity uniform in [-1, 1].

    See :class:`~spinup.envs.base.TensorVectorEnv` for the arguments.
    """

    name = "Pendulum-v1"
    default_max_episode_steps = 200
    max_speed, max_torque, dt, g, m, l = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0
    single_observation_space = spaces.Box(
        -np.array([1, 1, max_speed], dtype=np.float32),
        np.array([1, 1, max_speed], dtype=np.float32), dtype=np.float32)
    single_action_space = spaces.Box(-max_torque, max_torque, shape=(1,), dtype=np.float32)
    reset_low, reset_high = (-math.pi, -1.0), (math.pi, 1.0)

    def _dynamics(self, state, actions):
        theta, theta_dot = state.unbind(1)
        u = actions[:, 0].to(torch.float32).clamp(-self.max_torque, self.max_torque)
        cost = angle_normalize(theta) ** 2 + 0.1 * theta_dot * theta_dot + 0.001 * u * u
        acc = 3 * self.g / (2 * self.l) * torch.sin(theta) + 3.0 / (self.m * self.l**2) * u
        theta_dot = (theta_dot + acc * self.dt).clamp(-self.max_speed, self.max_speed)
        theta = theta + theta_dot * self.dt
        terminated = torch.zeros_like(theta, dtype=torch.bool)
        return torch.stack((theta, theta_dot), 1), -cost, terminated

    def _observe(self, state):
        theta, theta_dot = state.unbind(1)
        return torch.stack((torch.cos(theta), torch.sin(theta), theta_dot), 1)
