"""Exercise 4.1: A Batched Task from its Description.

Write ``WalledReach``, N copies of one small task held as the rows of a tensor and stepped
together by tensor operations (no Python loop over the copies). It is the task of
``spinup/examples/reach.py`` inside a walled square, with its own start states; read that
file and ``spinup/envs/base.py`` first.

The task. A point mass of 1 kg moves on the square arena [-1, 1] x [-1, 1].

* State, float32 (N, 6): position p = (p_x, p_y) [m], velocity v = (v_x, v_y) [m/s],
  goal g = (g_x, g_y) [m], in that column order.
* Action, (N, 2): the force a [N] along x and y, each component clipped to [-1, 1].
* One step, dt = 0.1 s, friction coefficient 0.5 (1/s), semi-implicit Euler:
  first v' = v + dt * (a - 0.5 v), then p' = p + dt * v' (the NEW velocity moves the mass).
* Walls: along each axis separately, a position p'_k beyond the arena (|p'_k| > 1) is put
  back on the wall (clipped to [-1, 1]) and that velocity component v'_k is set to 0.
  The goal never moves.
* Reward: -|g - p'| - 0.01 |a|^2 (p' after the walls, a after clipping).
* Termination: |g - p'| < 0.05 and |v'| < 0.2 (the mass stops on the goal).
* Time limit: ``self.max_episode_steps`` steps (200 by default): a truncation, not a
  termination.
* Observation, float32 (N, 6): p, v and the offset to the goal g - p.
* Start states: p uniform in [-1, 1]^2, v = 0, g uniform in [-0.8, 0.8]^2, drawn with the
  task's generator ``self.rng``.

Run this file to check your work::

    python -m spinup.exercises.problem_set_4.exercise4_1
"""
import numpy as np
import torch  # noqa: F401  (you will need it)
from gymnasium import spaces

from spinup.envs.base import TensorVectorEnv


class WalledReach(TensorVectorEnv):
    """Steer a point mass to a goal inside a walled square; see the module docstring."""

    name = "WalledReach-v0"
    default_max_episode_steps = 200
    single_observation_space = spaces.Box(-np.inf, np.inf, shape=(6,), dtype=np.float32)
    single_action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)

    def _initial_state(self, n):
        """
        Args:
            n (int): how many start states to draw.

        Returns:
            Tensor float32 (n, 6) on ``self.device``: p uniform in [-1, 1]^2, v = 0,
            g uniform in [-0.8, 0.8]^2. Draw every random number with
            ``generator=self.rng``, so that ``reset(seed=...)`` decides the episodes.
        """
        #######################
        #                     #
        #   YOUR CODE HERE    #
        #                     #
        #######################
        raise NotImplementedError

    def _dynamics(self, state, actions):
        """
        Args:
            state: Tensor float32 (N, 6), one row per copy (do not change it in place).
            actions: Tensor (N, 2), the forces (not yet clipped).

        Returns:
            ``(next_state, reward, terminated)``: Tensor float32 (N, 6), Tensor float32
            (N,), Tensor bool (N,). Tensor operations on whole columns only.
        """
        #######################
        #                     #
        #   YOUR CODE HERE    #
        #                     #
        #######################
        raise NotImplementedError

    def _observe(self, state):
        """
        Args:
            state: Tensor float32 (N, 6).

        Returns:
            a NEW Tensor float32 (N, 6): p, v, g - p.
        """
        #######################
        #                     #
        #   YOUR CODE HERE    #
        #                     #
        #######################
        raise NotImplementedError

    def step(self, actions):
        """Advance every copy one step (the job of ``TensorVectorEnv.step``: write it here
        yourself, without calling it).

        Use ``self._dynamics`` for the physics and ``self._initial_state`` for new
        episodes; keep the state in ``self.state`` and each copy's step count in
        ``self.elapsed`` (int64 (N,), 0 at the start of an episode).

        Args:
            actions: Tensor (N, 2).

        Returns:
            ``(obs, reward, terminated, truncated, info)``: obs float32 (N, 6); reward
            float32 (N,); terminated, truncated bool (N,); ``info["final_obs"]`` (N, 6)
            the observation each copy reached in this step, before any restart, and
            ``info["_final_obs"]`` bool (N,), the copies that finished in this step.
            A copy whose episode ended (terminated or truncated) is restarted in this
            same call: its row of ``obs`` is already the first observation of its next
            episode, and its step count is back to 0.
        """
        #######################
        #                     #
        #   YOUR CODE HERE    #
        #                     #
        #######################
        raise NotImplementedError


if __name__ == "__main__":
    import argparse

    from spinup.exercises.checks import check_exercise4_1
    from spinup.exercises.common import finish
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_soln", action="store_true")
    if parser.parse_args().use_soln:
        from spinup.exercises.problem_set_4_solutions.exercise4_1_soln import WalledReach
    finish(check_exercise4_1(WalledReach)[0])
