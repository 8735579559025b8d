"""Exercise 4.1's checker (a batched task, WalledReach): it accepts the reference answer
and rejects the starter as shipped and the usual wrong answers, each with a message that
names the mistake."""
import subprocess
import sys

import pytest
import torch

from spinup.exercises import checks
from spinup.exercises.problem_set_4 import exercise4_1
from spinup.exercises.problem_set_4_solutions.exercise4_1_soln import WalledReach


def rejected(task_cls, *fragments):
    correct, message = checks.check_exercise4_1(task_cls)
    assert not correct
    for f in fragments:
        assert f in message, message
    return message


class NextStepRestart(WalledReach):
    """Restarts a finished copy at the start of the NEXT call (gymnasium's NEXT_STEP)."""

    def step(self, actions):
        pending = getattr(self, "_pending", None)
        if pending is not None:
            self.state = torch.where(pending[:, None], self._initial_state(self.num_envs),
                                     self.state)
            self.elapsed = self.elapsed.masked_fill(pending, 0)
        next_state, reward, terminated = self._dynamics(self.state, torch.as_tensor(actions))
        self.elapsed = self.elapsed + 1
        truncated = self.elapsed >= self.max_episode_steps
        self.state, self._pending = next_state, terminated | truncated
        obs = self._observe(next_state)
        return obs, reward, terminated, truncated, {"final_obs": obs.clone(),
                                                    "_final_obs": self._pending}


class TimeLimitTerminates(WalledReach):
    """Reports the time limit as a termination."""

    def step(self, actions):
        obs, rew, terminated, truncated, info = super().step(actions)
        return obs, rew, terminated | truncated, truncated, info


class FrictionSign(WalledReach):
    """A sign error in the dynamics: friction speeds the mass up."""
    friction = -0.5


class WallKeepsVelocity(WalledReach):
    """Puts the mass back on the wall but keeps its speed into the wall."""

    def _dynamics(self, state, actions):
        force = actions.to(torch.float32).clamp(-1.0, 1.0)
        vel = state[:, 2:4] + self.dt * (force - self.friction * state[:, 2:4])
        pos = (state[:, 0:2] + self.dt * vel).clamp(-1.0, 1.0)
        goal = state[:, 4:6]
        dist = (goal - pos).norm(dim=1)
        reward = -dist - self.action_cost * (force * force).sum(1)
        terminated = (dist < self.goal_radius) & (vel.norm(dim=1) < self.stop_speed)
        return torch.cat((pos, vel, goal), 1), reward, terminated


class GlobalGenerator(WalledReach):
    """Draws start states from torch's global generator instead of self.rng."""

    def _initial_state(self, n):
        return self._reset_low + self._reset_span * torch.rand(n, 6)


def test_solution_accepted():
    assert checks.check_exercise4_1(WalledReach) == (True, "")


def test_starter_rejected():
    rejected(exercise4_1.WalledReach, "not filled in reset (which calls your _initial_state)",
             "not filled in _observe", "not filled in _dynamics", "not filled in step")


@pytest.mark.parametrize("wrong, hint", [
    (NextStepRestart, "were not restarted in this step"),
    (TimeLimitTerminates, "a truncation is not a termination"),
    (FrictionSign, "sign error in the friction"),
    (WallKeepsVelocity, "set the velocity component along that axis to 0"),
    (GlobalGenerator, "generator=self.rng"),
])
def test_wrong_answers_rejected(wrong, hint):
    rejected(wrong, hint)


def test_exercise_module_grades_the_solution():
    proc = subprocess.run([sys.executable, "-m", "spinup.exercises.problem_set_4.exercise4_1",
                           "--use_soln"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout
