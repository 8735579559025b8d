"""Acrobot as a batched tensor program (the same physics as gymnasium's Acrobot-v1)."""
import math

import numpy as np
import torch
from gymnasium import spaces

from spinup.envs.base import TensorVectorEnv


class Acrobot(TensorVectorEnv):
    """Swing the tip of a two-link pendulum, driven only at the middle joint, above a line.

    Dynamics: Sutton (1996), "Generalization in reinforcement learning: successful examples
    using sparse coarse coding" (NIPS), with the equations of motion of Sutton & Barto
    (1998), "Reinforcement Learning: An Introduction", section 11.3 (the "book" variant);
    one classic Runge-Kutta (rk4) step of dt = 0.2 s per action.

    * State, float32 (N, 4): link angles theta1, theta2 [rad] (theta1 from hanging down,
      theta2 relative to link 1; wrapped to [-pi, pi)) and angular velocities dtheta1,
      dtheta2 [rad/s] (clipped to +-4 pi and +-9 pi).
    * Observation, float32 (N, 6): cos theta1, sin theta1, cos theta2, sin theta2,
      dtheta1, dtheta2.
    * Action, (N,) int in {0, 1, 2}: torque -1, 0 or +1 [N m] on the middle joint.
    * Reward: -1 per step, 0 on the step that reaches the goal.
    * Termination: the tip is higher than 1 m above the pivot,
      -cos(theta1) - cos(theta1 + theta2) > 1.
    * Time limit: 500 steps. Start states: each column uniform in [-0.1, 0.1].

    See :class:`~spinup.envs.base.TensorVectorEnv` for the arguments.
    """

    name = "Acrobot-v1"
    default_max_episode_steps = 500
    dt, g = 0.2, 9.8                         # s, m/s^2
    m1 = m2 = 1.0                            # link masses [kg]
    l1 = 1.0                                 # length of link 1 [m]
    lc1 = lc2 = 0.5                          # pivot to centre of mass [m]
    i1 = i2 = 1.0                            # moments of inertia [kg m^2]
    max_vel1, max_vel2 = 4 * math.pi, 9 * math.pi
    single_observation_space = spaces.Box(
        -np.array([1, 1, 1, 1, max_vel1, max_vel2], dtype=np.float32),
        np.array([1, 1, 1, 1, max_vel1, max_vel2], dtype=np.float32), dtype=np.float32)
    single_action_space = spaces.Discrete(3)
    reset_low, reset_high = (-0.1,) * 4, (0.1,) * 4

    def _derivative(self, s, torque):
        """Time derivative of s = (theta1, theta2, dtheta1, dtheta2), shape (N, 4)."""
        th1, th2, dth1, dth2 = s.unbind(1)
        m1, m2, l1, lc1, lc2, i1, i2, g = (self.m1, self.m2, self.l1, self.lc1, self.lc2,
                                           self.i1, self.i2, self.g)
        cos2, sin2 = torch.cos(th2), torch.sin(th2)
        d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * cos2) + i1 + i2
        d2 = m2 * (lc2**2 + l1 * lc2 * cos2) + i2
        # cos(a - pi/2) is written sin(a): the same number, without rounding pi/2.
        phi2 = m2 * lc2 * g * torch.sin(th1 + th2)
        phi1 = (-m2 * l1 * lc2 * dth2 * dth2 * sin2 - 2 * m2 * l1 * lc2 * dth2 * dth1 * sin2
                + (m1 * lc1 + m2 * l1) * g * torch.sin(th1) + phi2)
        ddth2 = (torque + d2 / d1 * phi1 - m2 * l1 * lc2 * dth1 * dth1 * sin2 - phi2) / (
            m2 * lc2**2 + i2 - d2 * d2 / d1)
        ddth1 = -(d2 * ddth2 + phi1) / d1
        return torch.stack((dth1, dth2, ddth1, ddth2), 1)

    def _dynamics(self, state, actions):
        torque = actions.to(torch.float32) - 1
        h = self.dt
        k1 = self._derivative(state, torque)
        k2 = self._derivative(state + h / 2 * k1, torque)
        k3 = self._derivative(state + h / 2 * k2, torque)
        k4 = self._derivative(state + h * k3, torque)
        s = state + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        angles = torch.remainder(s[:, :2] + math.pi, 2 * math.pi) - math.pi
        vel1 = s[:, 2:3].clamp(-self.max_vel1, self.max_vel1)
        vel2 = s[:, 3:4].clamp(-self.max_vel2, self.max_vel2)
        next_state = torch.cat((angles, vel1, vel2), 1)
        th1, th2 = angles.unbind(1)
        terminated = -torch.cos(th1) - torch.cos(th1 + th2) > 1.0
        reward = terminated.to(torch.float32) - 1
        return next_state, reward, terminated

    def _observe(self, state):
        angles = state[:, :2]
        c, s = torch.cos(angles), torch.sin(angles)
        return torch.stack((c[:, 0], s[:, 0], c[:, 1], s[:, 1], state[:, 2], state[:, 3]), 1)
