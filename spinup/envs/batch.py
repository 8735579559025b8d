"""What an algorithm steps: ``num_envs`` copies of a task, one call per batch step.

Two kinds of copies look the same to an algorithm (``run.envs``):

- :class:`EnvList`: ``num_envs`` separate gymnasium envs, stepped one after another in
  Python (any ``gymnasium.Env``; the path every run took before batched tasks).
- :class:`BatchedTask`: one ``gymnasium.vector.VectorEnv`` that steps all its copies in one
  call -- spinup's tensor tasks (:mod:`spinup.envs`) or any gymnasium vector env that
  resets a finished copy in the same step (``AutoresetMode.SAME_STEP``).

Both give::

    obs = envs.reset(seed)                                   # (num_envs, *obs_shape)
    obs, rew, terminated, truncated, final_obs = envs.step(actions)

``final_obs[i]`` is copy ``i``'s last observation when its episode ended in this step (the
state to bootstrap from after a truncation); ``obs[i]`` is then already the first one of
its next episode. ``observation_space`` and ``action_space`` are those of ONE copy.
"""
import gymnasium as gym
import numpy as np
import torch


class EnvList:
    """``num_envs`` gymnasium envs stepped in turn; env ``i`` is seeded with ``seed + i``.

    Args:
        envs (list of gymnasium.Env): the copies, made by the same ``env_fn``.
    """

    def __init__(self, envs):
        self.envs, self.num_envs = list(envs), len(envs)
        self.observation_space = envs[0].observation_space
        self.action_space = envs[0].action_space
        self.spec = getattr(envs[0], "spec", None)

    def reset(self, seed):
        """First observations (num_envs, *obs_shape) of new episodes, env ``i`` seeded with
        ``seed + i``."""
        return np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(self.envs)])

    def reset_copies(self, index):
        """New episodes (no seed) in the copies ``index``; their first observations."""
        return np.stack([self.envs[i].reset()[0] for i in index])

    def step(self, actions):
        """Step env ``i`` with ``actions[i]``; an env whose episode ends is reset at once (the
        loop of gymnasium's ``SyncVectorEnv`` with ``AutoresetMode.SAME_STEP``, without its
        batching of spaces and infos).

        Returns:
            tuple: ``obs`` (num_envs, *obs_shape); ``rew`` (num_envs,) float64;
            ``terminated``, ``truncated`` (num_envs,) bool; ``final_obs``, a list with the
            last observation of each episode that ended here, else ``None``.
        """
        n = self.num_envs
        if n == 1:   # the common case, without the lists (a few microseconds a step)
            env = self.envs[0]
            obs, rew, terminated, truncated, _ = env.step(actions[0])
            final_obs = [None]
            if terminated or truncated:
                final_obs[0] = obs
                obs, _ = env.reset()
            return (np.array(obs)[None], np.array([rew], dtype=float), np.array([terminated]),
                    np.array([truncated]), final_obs)
        obs, final_obs = [None] * n, [None] * n
        rew = np.zeros(n)
        terminated, truncated = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        for i, env in enumerate(self.envs):
            obs[i], rew[i], terminated[i], truncated[i], _ = env.step(actions[i])
            if terminated[i] or truncated[i]:
                final_obs[i] = obs[i]
                obs[i], _ = env.reset()
        return np.stack(obs), rew, terminated, truncated, final_obs

    def close(self):
        for env in self.envs:
            env.close()


def _host(x):
    """``x`` (tensor or array) as a numpy array of its own (the task may reuse its memory)."""
    return x.detach().cpu().numpy().copy() if isinstance(x, torch.Tensor) else np.array(x)


class BatchedTask:
    """A ``gymnasium.vector.VectorEnv`` (SAME_STEP autoreset) seen with numpy arrays.

    Its tensors are copied to numpy arrays once per batch step (a task on a GPU: to the
    host).

    Args:
        task (gymnasium.vector.VectorEnv): the copies.

    Raises:
        ValueError: the task resets finished copies on the NEXT step (gymnasium's default
            ``AutoresetMode.NEXT_STEP``), which would hand the algorithm a step that is
            no transition.
    """

    def __init__(self, task):
        mode = task.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
        if mode != gym.vector.AutoresetMode.SAME_STEP:
            raise ValueError(
                f"{type(task).__name__} resets a finished copy on the next step ({mode}); a "
                "batched task must reset it in the same step: use spinup's tasks "
                "(spinup/CartPole-v1, ...) or gym.make_vec(id, num_envs, vectorization_mode="
                "'sync', vector_kwargs={'autoreset_mode': gym.vector.AutoresetMode.SAME_STEP})")
        self.task, self.num_envs = task, task.num_envs
        self.observation_space = task.single_observation_space
        self.action_space = task.single_action_space
        self.device = getattr(task, "device", torch.device("cpu"))
        spec = getattr(task, "spec", None)
        self.spec = gym.spec(spec.id) if spec is not None and spec.id in gym.registry else None

    def reset(self, seed):
        """First observations (num_envs, *obs_shape) of new episodes, from ``seed``."""
        return _host(self.task.reset(seed=seed)[0])

    def reset_copies(self, index):
        """New episodes in the copies ``index``; their first observations."""
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[index] = True
        return _host(self.task.reset(options={"reset_mask": mask})[0])[index]

    def step(self, actions):
        """One step of every copy; see :class:`EnvList.step` (``final_obs`` is an array
        here, its rows valid where ``terminated | truncated``)."""
        obs, rew, terminated, truncated, info = self.task.step(actions)
        obs, done = _host(obs), _host(terminated) | _host(truncated)
        final_obs = info.get("final_obs")
        if final_obs is None:
            final_obs = obs
        elif final_obs.dtype == object:   # gymnasium's Sync/AsyncVectorEnv: None where not done
            final_obs = np.stack([f if d else o for f, d, o in zip(final_obs, done, obs)])
        return obs, _host(rew), _host(terminated), _host(truncated), _host(final_obs)

    def single_env(self, algo=None):
        """One copy as a plain gymnasium env (the registered id's ``entry_point``), for a
        test env and ``test_policy``. Without one: None, or with ``algo`` (an algorithm that
        needs test episodes) a ValueError saying how to give one."""
        if getattr(self.task, "evaluation_env", None) is not None:   # e.g. Atari's
            return self.task.evaluation_env()
        if self.spec is not None and self.spec.entry_point:
            return gym.make(self.spec.id)
        if algo is None:
            return None
        self.close()
        raise ValueError(
            f"{algo}: its test episodes need one copy of the batched task "
            f"{type(self.task).__name__} as a plain gymnasium env, and the task's registered "
            "id names none: register it with gymnasium.register(id, entry_point=<a "
            "gymnasium.Env class>, vector_entry_point=...) and make it with "
            "gymnasium.make_vec(id, num_envs)")

    def state_dict(self):
        """The task's state for a checkpoint (tasks with ``state_dict``), else None."""
        return self.task.state_dict() if hasattr(self.task, "state_dict") else None

    def load_state_dict(self, state):
        self.task.load_state_dict(state)

    def close(self):
        self.task.close()
