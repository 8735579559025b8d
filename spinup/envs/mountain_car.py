"""MountainCar, discrete and continuous, as batched tensor programs (the same physics as
gymnasium's MountainCar-v0 and MountainCarContinuous-v0)."""
import numpy as np
import torch
from gymnasium import spaces

from spinup.envs.base import TensorVectorEnv


class MountainCar(TensorVectorEnv):
    """Drive an underpowered car out of a valley (height sin(3 x)) by rocking back and forth.

    Dynamics: Moore (1990), "Efficient memory-based learning for robot control" (PhD
    thesis, Cambridge), in the form of Sutton & Barto's mountain-car task:
    v <- clip(v + (a - 1) * 0.001 - 0.0025 cos(3 x), +-0.07); x <- clip(x + v, -1.2, 0.6);
    hitting the left wall (x = -1.2) with v < 0 stops the car (v <- 0).

    * State and observation, float32 (N, 2): position x, velocity v (per step).
    * Action, (N,) int in {0, 1, 2}: accelerate left, do nothing, accelerate right.
    * Reward: -1 per step.
    * Termination: x >= 0.5 and v >= 0 (the flag on the right hill).
    * Time limit: 200 steps. Start states: x uniform in [-0.6, -0.4], v = 0.

    See :class:`~spinup.envs.base.TensorVectorEnv` for the arguments.
    """

    name = "MountainCar-v0"
    default_max_episode_steps = 200
    min_position, max_position, max_speed = -1.2, 0.6, 0.07
    goal_position, goal_velocity = 0.5, 0.0
    gravity, power = 0.0025, 0.001
    single_observation_space = spaces.Box(
        np.array([min_position, -max_speed], dtype=np.float32),
        np.array([max_position, max_speed], dtype=np.float32), dtype=np.float32)
    single_action_space = spaces.Discrete(3)
    reset_low, reset_high = (-0.6, 0.0), (-0.4, 0.0)

    def _push(self, actions):
        """Velocity change from the engine, float32 (N,)."""
        return (actions.to(torch.float32) - 1) * self.power

    def _dynamics(self, state, actions):
        x, v = state.unbind(1)
        v = (v + self._push(actions) - self.gravity * torch.cos(3 * x)).clamp(
            -self.max_speed, self.max_speed)
        x = (x + v).clamp(self.min_position, self.max_position)
        v = v.masked_fill((x <= self.min_position) & (v < 0), 0.0)  # the left wall stops it
        terminated = (x >= self.goal_position) & (v >= self.goal_velocity)
        return torch.stack((x, v), 1), self._reward(actions, terminated), terminated

    def _reward(self, actions, terminated):
        return torch.full_like(terminated, -1.0, dtype=torch.float32)

    def _observe(self, state):
        return state.clone()  # a new tensor: callers may change obs in place


class MountainCarContinuous(MountainCar):
    """MountainCar with a continuous engine and an energy cost.

    Same valley and dynamics as :class:`MountainCar` (Moore 1990), except the push:
    v <- v + 0.0015 * clip(a, -1, 1) - 0.0025 cos(3 x).

    * State and observation, float32 (N, 2): position x, velocity v (per step).
    * Action, float (N, 1): engine force, clipped to [-1, 1] for the dynamics.
    * Reward: +100 on reaching the goal, minus 0.1 a^2 every step; as in gymnasium the
      penalty uses the action as given (before clipping).
    * Termination: x >= 0.45 and v >= 0.
    * Time limit: 999 steps. Start states: x uniform in [-0.6, -0.4], v = 0.
    """

    name = "MountainCarContinuous-v0"
    default_max_episode_steps = 999
    goal_position, power = 0.45, 0.0015
    single_action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)

    def _push(self, actions):
        return actions[:, 0].to(torch.float32).clamp(-1.0, 1.0) * self.power

    def _reward(self, actions, terminated):
        a = actions[:, 0].to(torch.float32)
        return terminated.to(torch.float32) * 100.0 - 0.1 * a * a
