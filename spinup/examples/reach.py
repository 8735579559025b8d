"""Reach: a batched task written on :class:`~spinup.envs.base.TensorVectorEnv`, the worked
example of docs/user/parallel_envs.rst. ``register()`` makes it ``spinup/Reach-v0``::

    import gymnasium as gym
    from spinup.examples import reach
    reach.register()
    envs = gym.make_vec("spinup/Reach-v0", num_envs=64)
"""
import numpy as np
import torch
from gymnasium import spaces

from spinup.envs.base import TensorVectorEnv


class Reach(TensorVectorEnv):
    """Steer a point mass on a plane to a goal and stop on it.

    Dynamics: a mass of 1 kg under the action's force and a linear friction force
    -0.5 v, one semi-implicit Euler step of dt = 0.1 s (the new velocity moves the mass).

    * State, float32 (N, 6): position p (2) [m], velocity v (2) [m/s], goal g (2) [m].
    * Observation, float32 (N, 6): p, v and the offset to the goal g - p.
    * Action, float (N, 2): the force [N] along x and y, each clipped to [-1, 1].
    * Reward: -|g - p'| - 0.01 |a|^2, with p' the position after the step.
    * Termination: |g - p'| < 0.05 m while |v'| < 0.2 m/s. Time limit: 200 steps.
    * Start states: p and g uniform in [-1, 1]^2, v = 0.

    See :class:`~spinup.envs.base.TensorVectorEnv` for the arguments.
    """

    name = "Reach-v0"
    default_max_episode_steps = 200
    dt, friction, action_cost = 0.1, 0.5, 0.01      # s, 1/s, reward per N^2
    goal_radius, stop_speed = 0.05, 0.2             # m, m/s
    single_observation_space = spaces.Box(-np.inf, np.inf, shape=(6,), dtype=np.float32)
    single_action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
    #          p_x   p_y   v_x  v_y  g_x   g_y
    reset_low = (-1.0, -1.0, 0.0, 0.0, -1.0, -1.0)
    reset_high = (1.0, 1.0, 0.0, 0.0, 1.0, 1.0)

    def _dynamics(self, state, actions):
        pos, vel, goal = state[:, 0:2], state[:, 2:4], state[:, 4:6]   # views, (N, 2) each
        force = actions.to(torch.float32).clamp(-1.0, 1.0)
        vel = vel + self.dt * (force - self.friction * vel)   # every copy in one operation
        pos = pos + self.dt * vel                             # moved by the NEW velocity
        dist = (goal - pos).norm(dim=1)
        reward = -dist - self.action_cost * (force * force).sum(1)
        terminated = (dist < self.goal_radius) & (vel.norm(dim=1) < self.stop_speed)
        return torch.cat((pos, vel, goal), 1), reward, terminated

    def _observe(self, state):
        pos, vel, goal = state[:, 0:2], state[:, 2:4], state[:, 4:6]
        return torch.cat((pos, vel, goal - pos), 1)   # torch.cat makes a new tensor


def register():
    """Register ``spinup/Reach-v0`` with gymnasium; calling it again does nothing."""
    import gymnasium
    if "spinup/Reach-v0" not in gymnasium.registry:
        gymnasium.register("spinup/Reach-v0", vector_entry_point="spinup.examples.reach:Reach",
                           max_episode_steps=Reach.default_max_episode_steps)
