"""Solution to Exercise 4.1: WalledReach, a batched task written from its description.

The physics is Reach's (``spinup/examples/reach.py``) followed by the walls; ``step`` is
written out where a task would normally inherit ``TensorVectorEnv.step``.
"""
import numpy as np
import torch
from gymnasium import spaces

from spinup.envs.base import TensorVectorEnv


class WalledReach(TensorVectorEnv):
    """Steer a point mass to a goal inside the square [-1, 1]^2 (exercise4_1.py has the
    full description)."""

    name = "WalledReach-v0"
    default_max_episode_steps = 200
    dt, friction, action_cost, goal_radius, stop_speed = 0.1, 0.5, 0.01, 0.05, 0.2
    single_observation_space = spaces.Box(-np.inf, np.inf, shape=(6,), dtype=np.float32)
    single_action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
    #          p_x   p_y   v_x  v_y  g_x   g_y
    reset_low = (-1.0, -1.0, 0.0, 0.0, -0.8, -0.8)
    reset_high = (1.0, 1.0, 0.0, 0.0, 0.8, 0.8)

    def _initial_state(self, n):
        # The base class's draw: one uniform number per column from self.rng, scaled to
        # the box reset_low .. reset_high (the velocity's box has width 0).
        u = torch.rand(n, 6, generator=self.rng, device=self.device)
        return self._reset_low + self._reset_span * u

    def _dynamics(self, state, actions):
        pos, vel, goal = state[:, 0:2], state[:, 2:4], state[:, 4:6]
        force = actions.to(torch.float32).clamp(-1.0, 1.0)
        vel = vel + self.dt * (force - self.friction * vel)
        pos = pos + self.dt * vel
        outside = pos.abs() > 1.0                     # (N, 2): which axes hit a wall
        pos = pos.clamp(-1.0, 1.0)
        vel = torch.where(outside, torch.zeros_like(vel), vel)
        dist = (goal - pos).norm(dim=1)
        reward = -dist - self.action_cost * (force * force).sum(1)
        terminated = (dist < self.goal_radius) & (vel.norm(dim=1) < self.stop_speed)
        return torch.cat((pos, vel, goal), 1), reward, terminated

    def _observe(self, state):
        pos, vel, goal = state[:, 0:2], state[:, 2:4], state[:, 4:6]
        return torch.cat((pos, vel, goal - pos), 1)

    def step(self, actions):
        actions = torch.as_tensor(actions, device=self.device)
        next_state, reward, terminated = self._dynamics(self.state, actions)
        elapsed = self.elapsed + 1
        truncated = elapsed >= self.max_episode_steps  # the time limit, kept apart
        done = terminated | truncated
        final_obs = self._observe(next_state)          # what the finished copies reached
        # Restart finished copies now (same step); the others keep their next state.
        fresh = self._initial_state(self.num_envs)
        self.state = torch.where(done[:, None], fresh, next_state)
        self.elapsed = torch.where(done, torch.zeros_like(elapsed), elapsed)
        info = {"final_obs": final_obs, "_final_obs": done}
        return self._observe(self.state), reward, terminated, truncated, info
