"""Synchronous Advantage Actor-Critic (A2C), the synchronous variant of Mnih et al.
2016, "Asynchronous Methods for Deep Reinforcement Learning".

Every MPI process is one *worker* of Algorithm 5.20: it runs its own copy of the
environment for ``n_steps`` steps, computes the gradient of the actor-critic loss on
that short rollout, and the gradients of all workers are averaged (``mpi_avg_grads``)
before one identical optimizer step on every process. With one process this is plain
n-step advantage actor-critic.

Pseudocode lines (docs/algorithms/a2c.rst) are referenced as ``[A2C line N]``.
"""
import time

import numpy as np
import torch
from torch.optim import Adam

import spinup.algos.a2c.core as core
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_pytorch import mpi_avg_grads, setup_pytorch_for_mpi, sync_params
from spinup.utils.mpi_tools import num_procs, proc_id


class A2CBuffer:
    """Stores one rollout of ``n_steps`` transitions of one worker and computes the
    advantages and value targets. With ``lam=1`` the advantage is the n-step one,
    ``A_t = r_t + gamma r_{t+1} + ... + gamma^(n-t) V(s_n) - V(s_t)``; with ``lam<1``
    it is GAE-lambda."""

    def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=1.0):
        self.obs_buf = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.act_buf = np.zeros(core.combined_shape(size, act_dim), dtype=np.float32)
        self.adv_buf = np.zeros(size, dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.ret_buf = np.zeros(size, dtype=np.float32)
        self.val_buf = np.zeros(size, dtype=np.float32)
        self.gamma, self.lam = gamma, lam
        self.ptr, self.path_start_idx, self.max_size = 0, 0, size

    def store(self, obs, act, rew, val):
        """Append one timestep of agent-environment interaction."""
        assert self.ptr < self.max_size
        self.obs_buf[self.ptr] = obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.val_buf[self.ptr] = val
        self.ptr += 1

    def finish_path(self, last_val=0):
        """Close the current piece of trajectory. ``last_val`` is 0 if the episode
        terminated, else ``V(s_T)``: it bootstraps the rewards beyond the end of the
        rollout, a time-limit truncation, or ``max_ep_len``."""
        path_slice = slice(self.path_start_idx, self.ptr)
        rews = np.append(self.rew_buf[path_slice], last_val)
        vals = np.append(self.val_buf[path_slice], last_val)
        # TD errors delta_t = r_t + gamma V(s_{t+1}) - V(s_t)   [A2C line 11]
        deltas = rews[:-1] + self.gamma * vals[1:] - vals[:-1]
        # A_t = sum_l (gamma lam)^l delta_{t+l}; lam=1: the n-step advantage   [A2C line 11]
        self.adv_buf[path_slice] = core.discount_cumsum(deltas, self.gamma * self.lam)
        # Value targets: the (lambda-)return A_t + V(s_t); lam=1: the n-step return
        self.ret_buf[path_slice] = self.adv_buf[path_slice] + self.val_buf[path_slice]
        self.path_start_idx = self.ptr

    def get(self):
        """Return the full rollout as tensors and reset the buffer. Advantages are
        *not* normalised (a rollout holds only ``n_steps`` samples)."""
        assert self.ptr == self.max_size
        self.ptr, self.path_start_idx = 0, 0
        data = dict(obs=self.obs_buf, act=self.act_buf, ret=self.ret_buf, adv=self.adv_buf)
        return {k: torch.as_tensor(v, dtype=torch.float32) for k, v in data.items()}


def compute_loss(ac, data, ent_coef, vf_coef):
    """The actor-critic loss of one rollout, ``-J(theta) - beta H + c_v J(psi)``
    (minimised), and its parts for logging   [A2C lines 12-13]."""
    obs, act, adv, ret = data["obs"], data["act"], data["adv"], data["ret"]
    pi, logp = ac.pi(obs, act)
    # Policy loss: -J(theta) = -mean_t log pi(a_t|s_t) A_t   [A2C line 12]
    loss_pi = -(logp * adv).mean()
    # Entropy bonus H[pi(.|s_t)] (Mnih et al. 2016), maximised with weight beta
    ent = ac.pi.entropy(pi).mean()
    # Value loss: J(psi) = mean_t (V_psi(s_t) - R_t)^2   [A2C line 13]
    loss_v = ((ac.v(obs) - ret) ** 2).mean()
    loss = loss_pi - ent_coef * ent + vf_coef * loss_v
    return loss, dict(LossPi=loss_pi.item(), LossV=loss_v.item(), Entropy=ent.item())


def a2c(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, n_steps=20, gamma=0.99, lam=1.0, lr=1e-3,
        anneal_lr=True, ent_coef=0.0, vf_coef=0.5, max_grad_norm=None, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=10):
    """
    Synchronous Advantage Actor-Critic (A2C): n-step (or GAE-lambda) advantages,
    an entropy bonus, one gradient step per ``n_steps``-step rollout, gradients
    averaged over MPI processes (``--cpu N`` = N workers).

    Args:
        env_fn : A function which creates a copy of the environment.
            The environment must satisfy the gymnasium API, with a ``Box``
            observation space and a ``Box`` or ``Discrete`` action space.

        actor_critic: The constructor method for a PyTorch Module with a
            ``step`` method, an ``act`` method, a ``pi`` module, and a ``v``
            module, called as
            ``actor_critic(env.observation_space, env.action_space, **ac_kwargs)``.
            The ``step`` method should accept a batch of observations and return:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``a``        (batch, act_dim)  | Numpy array of actions for each
                                           | observation.
            ``v``        (batch,)          | Numpy array of value estimates
                                           | for the provided observations.
            ``logp_a``   (batch,)          | Numpy array of log probs for the
                                           | actions in ``a`` (unused by A2C).
            ===========  ================  ======================================

            The ``act(obs, deterministic=False)`` method behaves the same as
            ``step`` but only returns ``a`` (the mode of the policy when
            ``deterministic``).

            The ``pi`` module's forward call should accept a batch of
            observations and optionally a batch of actions, and return:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``pi``       N/A               | Torch Distribution object, containing
                                           | a batch of distributions describing
                                           | the policy for the provided observations.
            ``logp_a``   (batch,)          | Optional (only returned if batch of
                                           | actions is given). Tensor containing
                                           | the log probability, according to
                                           | the policy, of the provided actions.
                                           | If actions not given, will contain
                                           | ``None``.
            ===========  ================  ======================================

            ``pi.entropy(dist)`` should return the entropy (batch,) of each
            distribution in ``dist`` (summed over action dimensions).

            The ``v`` module's forward call should accept a batch of observations
            and return:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``v``        (batch,)          | Tensor containing the value estimates
                                           | for the provided observations. (Critical:
                                           | make sure to flatten this!)
            ===========  ================  ======================================

        ac_kwargs (dict): Any kwargs appropriate for the ActorCritic object
            you provided to A2C (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators (each MPI process adds
            ``10000 * rank``).

        steps_per_epoch (int): Number of steps of interaction (state-action pairs)
            for the agent and the environment in each epoch, summed over all
            MPI processes. Epochs only group logging and saving: A2C updates
            once every ``n_steps`` steps.

        epochs (int): Number of epochs; the run lasts
            ``steps_per_epoch * epochs`` environment steps in total.

        n_steps (int): Length of each worker's rollout, i.e. environment steps per
            worker between two gradient steps (Mnih et al.'s ``t_max``). Each
            process's share of ``steps_per_epoch`` must be a multiple of it.

        gamma (float): Discount factor. (Always between 0 and 1.)

        lam (float): Lambda for GAE-Lambda. ``1`` (default) gives the plain n-step
            advantage of Mnih et al.; smaller values trade variance for bias.

        lr (float): Learning rate of the (Adam) optimizer of policy and value
            function together.

        anneal_lr (bool): Decay the learning rate linearly to 0 over the run, as
            Mnih et al. 2016 do. Makes the final policy settle instead of
            oscillating.

        ent_coef (float): Weight :math:`\\beta` of the entropy bonus
            :math:`\\beta H[\\pi(\\cdot|s)]`, which keeps the policy exploring
            (Mnih et al. use 0.01; 0 measured best on CartPole, see the benchmarks).

        vf_coef (float): Weight :math:`c_v` of the value-function loss in the
            combined loss.

        max_grad_norm (float): Clip the norm of the (averaged) gradient of all
            parameters to this value before each step (``None`` or ``0``, the
            default: no clipping; Baselines uses 0.5, which measured worse on
            CartPole here).

        max_ep_len (int): Maximum length of trajectory / episode. Reaching it
            (or the env's own time limit) ends the episode and bootstraps from
            ``V(s_T)``.

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save
            the current policy and value function.

    Returns:
        The trained actor-critic module.

    Raises:
        ValueError: unsupported observation/action space or bad arguments.
    """
    # A2C's batches hold only n_steps samples: intra-op threads only cost time
    # (measured 7x slower with 2 threads on a busy 2-core machine), so use one.
    torch.set_num_threads(1)
    setup_pytorch_for_mpi()

    # Set up logger and save configuration
    logger = EpochLogger(**logger_kwargs)
    logger.save_config(locals())

    # Random seed
    seed += 10000 * proc_id()
    torch.manual_seed(seed)
    np.random.seed(seed)

    # Instantiate environment (one per worker)
    env = env_fn()
    _check_spaces(env)
    obs_dim = env.observation_space.shape
    act_dim = env.action_space.shape
    is_box = type(env.action_space).__name__ == "Box"
    local_steps_per_epoch = steps_per_epoch // num_procs()
    if (n_steps < 1 or steps_per_epoch % num_procs() != 0
            or local_steps_per_epoch % n_steps != 0 or local_steps_per_epoch == 0):
        raise ValueError(f"a2c: steps_per_epoch={steps_per_epoch} must be a positive multiple "
                         f"of n_steps={n_steps} times the number of MPI processes "
                         f"({num_procs()})")

    # Create actor-critic module   [A2C line 1: initial parameters theta, psi]
    ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)

    # Every worker starts from the master's parameters   [A2C line 1]
    sync_params(ac)

    # Count variables
    var_counts = tuple(core.count_vars(module) for module in [ac.pi, ac.v])
    logger.log("\nNumber of parameters: \t pi: %d, \t v: %d\n" % var_counts)

    # Set up the rollout buffer of this worker
    buf = A2CBuffer(obs_dim, act_dim, n_steps, gamma, lam)

    # One optimizer for theta and psi (pi and v are separate networks, so the
    # combined loss still gives each its own gradient)
    optimizer = Adam(ac.parameters(), lr=lr)
    total_updates = epochs * (local_steps_per_epoch // n_steps)
    num_updates = 0

    # Set up model saving
    logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

    def update():
        nonlocal num_updates
        data = buf.get()
        if anneal_lr:
            for group in optimizer.param_groups:
                group["lr"] = lr * (1 - num_updates / total_updates)
        optimizer.zero_grad()
        loss, info = compute_loss(ac, data, ent_coef, vf_coef)
        # Worker: (g_theta, g_psi) = gradients of the loss   [A2C line 14]
        loss.backward()
        # Master: average the workers' gradients (sum / n)   [A2C lines 3-7]
        mpi_avg_grads(ac)
        # Every process clips the same averaged gradient, so all stay identical.
        if max_grad_norm:
            torch.nn.utils.clip_grad_norm_(ac.parameters(), max_grad_norm)
        # Master: theta <- theta + eta g_theta; psi <- psi - eta g_psi   [A2C line 8]
        optimizer.step()
        num_updates += 1
        logger.store(**info)

    # Prepare for interaction with environment
    start_time = time.time()
    o, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    ep_ret, ep_len = 0, 0
    act_low, act_high = (env.action_space.low, env.action_space.high) if is_box else (None, None)

    # Main loop   [A2C line 2: for k = 0, 1, 2, ...]
    for epoch in range(epochs):
        for t in range(local_steps_per_epoch):
            # Worker: run pi_theta for n_steps, store (s, a, r, s')   [A2C line 10]
            a, v, _ = ac.step(torch.as_tensor(o, dtype=torch.float32))
            # A Gaussian sample can leave the action box: clip what the env sees,
            # store the sample itself (its log-prob is what the loss uses).
            env_a = np.clip(a, act_low, act_high) if is_box else a
            next_o, r, terminated, truncated, _ = env.step(env_a)
            ep_ret += r
            ep_len += 1

            buf.store(o, a, r, v)
            logger.store(VVals=v)
            o = next_o

            timeout = truncated or ep_len == max_ep_len
            rollout_ended = buf.ptr == n_steps
            if terminated or timeout or rollout_ended:
                # Only a true terminal state has value 0; the end of the rollout,
                # truncation and max_ep_len bootstrap from V(s) (DESIGN 3).
                if terminated:
                    v = 0
                else:
                    _, v, _ = ac.step(torch.as_tensor(o, dtype=torch.float32))
                buf.finish_path(v)
                if terminated or timeout:
                    logger.store(EpRet=ep_ret, EpLen=ep_len)
                    o, _ = env.reset()
                    ep_ret, ep_len = 0, 0
            if rollout_ended:
                # One synchronous A2C update per rollout   [A2C lines 3-8]
                update()

        # Save model
        if (epoch % save_freq == 0) or (epoch == epochs - 1):
            logger.save_state({"env": env}, None)

        # Log info about epoch
        logger.log_tabular("Epoch", epoch)
        logger.log_tabular("EpRet", with_min_and_max=True)
        logger.log_tabular("EpLen", average_only=True)
        logger.log_tabular("VVals", with_min_and_max=True)
        logger.log_tabular("TotalEnvInteracts", (epoch + 1) * steps_per_epoch)
        logger.log_tabular("LossPi", average_only=True)
        logger.log_tabular("LossV", average_only=True)
        logger.log_tabular("Entropy", average_only=True)
        logger.log_tabular("LR", optimizer.param_groups[0]["lr"])
        logger.log_tabular("Time", time.time() - start_time)
        logger.dump_tabular()
    env.close()
    return ac


def _check_spaces(env):
    """A2C needs a flat Box observation space and a Box or Discrete action space."""
    obs_space, act_space = env.observation_space, env.action_space
    if type(obs_space).__name__ != "Box" or len(obs_space.shape) != 1:
        raise ValueError(f"a2c: observation space {obs_space} is not supported; A2C needs a "
                         "flat Box (wrap the env in gymnasium.wrappers.FlattenObservation)")
    if type(act_space).__name__ not in ("Box", "Discrete"):
        raise ValueError(f"a2c: action space {act_space} is not supported (Box or Discrete)")
