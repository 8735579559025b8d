"""The machinery every batched task shares: N copies of one environment held as rows of a
tensor and stepped together by tensor operations, on whichever device holds the tensor.

A task subclass describes its physics with two class attributes and two hooks:

* ``reset_low``, ``reset_high``: per state column, the box that start states are drawn
  from uniformly (``_initial_state(n)``; override it for another distribution);
* ``_dynamics(state, actions)``: one step of every copy, returning
  ``(next_state (N, state_dim), reward (N,), terminated (N,) bool)``;
* ``_observe(state)``: the observation of each row, shape (N, obs_dim) float32, in a
  new tensor (never ``state`` itself: callers may change observations in place).

Everything else (time limit, same-step autoreset, seeding, checkpoints) lives here.
"""
from typing import ClassVar

import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space


class TensorVectorEnv(VectorEnv):
    """N copies of a task stepped at once as torch tensors (gymnasium 1.x ``VectorEnv``).

    Args:
        num_envs: number of copies N (int >= 1).
        device: torch device (or its name) that holds the state and runs the step.
        max_episode_steps: time limit in steps (int >= 1); ``None`` takes the task's default.
        render_mode: only ``None`` is accepted (these tasks do not draw).

    Raises:
        ValueError: num_envs < 1, a bad max_episode_steps, or a render mode.

    Episodes that end are restarted inside the same ``step`` call
    (``AutoresetMode.SAME_STEP``); the observation they ended on is in ``info["final_obs"]``.
    """

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    name = "TensorVectorEnv"          # the task's name in error messages
    default_max_episode_steps = None  # set by each task
    single_observation_space = None   # set by each task (a gymnasium Box)
    single_action_space = None        # set by each task (Discrete or Box)
    reset_low = reset_high = ()       # set by each task: start-state box, one per column

    def __init__(self, num_envs=1, device="cpu", max_episode_steps=None, render_mode=None):
        if max_episode_steps is None:
            max_episode_steps = self.default_max_episode_steps
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f"{self.name}: num_envs must be an int >= 1, got {num_envs!r}")
        if isinstance(max_episode_steps, bool) \
                or not isinstance(max_episode_steps, (int, np.integer)) or max_episode_steps < 1:
            raise ValueError(f"{self.name}: max_episode_steps must be an int >= 1, "
                             f"got {max_episode_steps!r}")
        if render_mode is not None:
            raise ValueError(f"{self.name}: no render modes, got render_mode={render_mode!r}")
        self.num_envs = int(num_envs)
        self.max_episode_steps = int(max_episode_steps)
        self.device = torch.device(device)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._action_shape = tuple(self.action_space.shape)
        self._reset_low = torch.tensor(self.reset_low, dtype=torch.float32, device=self.device)
        self._reset_span = torch.tensor(self.reset_high, dtype=torch.float32,
                                        device=self.device) - self._reset_low
        self.rng = torch.Generator(device=self.device)
        self._seeded = False
        self.state = None  # (N, state_dim) float32, set by reset()
        self.elapsed = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)

    def _initial_state(self, n):
        """n start states, float32 (n, state_dim), uniform in the box reset_low..reset_high."""
        u = torch.rand(n, len(self.reset_low), generator=self.rng, device=self.device)
        return self._reset_low + self._reset_span * u

    def reset(self, *, seed=None, options=None):
        """Start new episodes; returns ``(obs, {})``, obs float32 (N, obs_dim) on the device.

        Args:
            seed: int seeding the generator (same seed, same actions -> same trajectories).
                ``None`` keeps the generator going, or seeds it from fresh OS entropy the
                first time.
            options: ``{"reset_mask": bool array or tensor (N,)}`` restarts only those
                copies; the others keep their state and step count.
        """
        if seed is not None:
            self.rng.manual_seed(int(seed))
        elif not self._seeded:
            self.rng.manual_seed(int(np.random.SeedSequence().entropy % 2**63))
        self._seeded = True
        fresh = self._initial_state(self.num_envs)
        mask = (options or {}).get("reset_mask")
        if mask is None or self.state is None:
            self.state = fresh
            self.elapsed = torch.zeros_like(self.elapsed)
        else:
            mask = torch.as_tensor(mask, device=self.device).to(torch.bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"{self.name}: reset_mask must have shape ({self.num_envs},),"
                                 f" got {tuple(mask.shape)}")
            self.state = torch.where(mask[:, None], fresh, self.state)
            self.elapsed = self.elapsed.masked_fill(mask, 0)
        return self._observe(self.state), {}

    def step(self, actions):
        """Advance every copy one step.

        Args:
            actions: tensor or numpy array, (N,) integers for a Discrete action space or
                (N, act_dim) floats for a Box one (clipped to its bounds by the task).

        Returns:
            ``(obs, reward, terminated, truncated, info)``: obs float32 (N, obs_dim), reward
            float32 (N,), terminated and truncated bool (N,), all on the device.
            ``info["final_obs"]`` (N, obs_dim) is each copy's observation before any
            restart (equal to obs for copies that go on), ``info["_final_obs"]`` (N,)
            marks the copies that ended (terminated or truncated) and were restarted.

        Raises:
            RuntimeError: step before reset. ValueError: actions of the wrong shape.
        """
        if self.state is None:
            raise RuntimeError(f"{self.name}: call reset() before step()")
        actions = torch.as_tensor(actions, device=self.device)
        if tuple(actions.shape) != self._action_shape:
            raise ValueError(f"{self.name}: actions must have shape {self._action_shape}, "
                             f"got {tuple(actions.shape)}")
        next_state, reward, terminated = self._dynamics(self.state, actions)
        elapsed = self.elapsed + 1
        truncated = elapsed >= self.max_episode_steps  # like gymnasium's TimeLimit
        done = terminated | truncated
        final_obs = self._observe(next_state)
        # Draw start states for every row and keep those of finished rows: no host sync.
        self.state = torch.where(done[:, None], self._initial_state(self.num_envs), next_state)
        self.elapsed = elapsed.masked_fill(done, 0)
        info = {"final_obs": final_obs, "_final_obs": done}
        return self._observe(self.state), reward, terminated, truncated, info

    def state_dict(self):
        """Clones of everything that decides the future: state, step counts, generator."""
        return {"state": None if self.state is None else self.state.clone(),
                "elapsed": self.elapsed.clone(), "rng": self.rng.get_state(),
                "seeded": self._seeded}

    def load_state_dict(self, d):
        """Restore a :meth:`state_dict` exactly (the same later trajectories)."""
        self.state = None if d["state"] is None else d["state"].to(self.device, copy=True)
        self.elapsed = d["elapsed"].to(self.device, copy=True)
        self.rng.set_state(d["rng"])
        self._seeded = d["seeded"]

    def close(self, **kwargs):
        """Nothing to release: the tensors go with the object."""
        self.closed = True

    def __repr__(self):
        return f"{self.name}(num_envs={self.num_envs}, device={self.device})"
