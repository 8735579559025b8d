"""Vanilla Policy Gradient (REINFORCE with a learned value baseline), with GAE-lambda
advantages (Schulman et al. 2016).

Pseudocode lines (docs/algorithms/vpg.rst) are referenced as ``[VPG line N]``.
"""
import time

import numpy as np
import torch
from torch.optim import Adam

import spinup.algos.vpg.core as core
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_pytorch import mpi_avg_grads, setup_pytorch_for_mpi, sync_params
from spinup.utils.mpi_tools import mpi_statistics_scalar, num_procs, proc_id


class VPGBuffer:
    """Stores one epoch of trajectories and computes GAE-lambda advantages and
    rewards-to-go (the value targets)."""

    def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=0.95):
        self.obs_buf = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.act_buf = np.zeros(core.combined_shape(size, act_dim), dtype=np.float32)
        self.adv_buf = np.zeros(size, dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.ret_buf = np.zeros(size, dtype=np.float32)
        self.val_buf = np.zeros(size, dtype=np.float32)
        self.logp_buf = np.zeros(size, dtype=np.float32)
        self.gamma, self.lam = gamma, lam
        self.ptr, self.path_start_idx, self.max_size = 0, 0, size

    def store(self, obs, act, rew, val, logp):
        """Append one timestep of agent-environment interaction."""
        assert self.ptr < self.max_size  # buffer has to have room so you can store
        self.obs_buf[self.ptr] = obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.val_buf[self.ptr] = val
        self.logp_buf[self.ptr] = logp
        self.ptr += 1

    def finish_path(self, last_val=0):
        """Close the current trajectory: compute its GAE-lambda advantages and
        rewards-to-go. ``last_val`` is 0 if the episode terminated, else
        ``V(s_T)`` to bootstrap the rewards beyond a truncation or epoch cut-off."""
        path_slice = slice(self.path_start_idx, self.ptr)
        rews = np.append(self.rew_buf[path_slice], last_val)
        vals = np.append(self.val_buf[path_slice], last_val)
        # GAE-lambda advantage: A_t = sum_l (gamma*lam)^l delta_{t+l}   [VPG line 5]
        deltas = rews[:-1] + self.gamma * vals[1:] - vals[:-1]
        self.adv_buf[path_slice] = core.discount_cumsum(deltas, self.gamma * self.lam)
        # Rewards-to-go R_t, the targets for the value function   [VPG line 4]
        self.ret_buf[path_slice] = core.discount_cumsum(rews, self.gamma)[:-1]
        self.path_start_idx = self.ptr

    def get(self):
        """Return the whole (full) buffer as tensors, advantages normalised to
        mean 0 / std 1 over all MPI processes, and reset the buffer."""
        assert self.ptr == self.max_size  # buffer has to be full before you can get
        self.ptr, self.path_start_idx = 0, 0
        adv_mean, adv_std = mpi_statistics_scalar(self.adv_buf)
        self.adv_buf = (self.adv_buf - adv_mean) / (adv_std + 1e-8)
        data = dict(obs=self.obs_buf, act=self.act_buf, ret=self.ret_buf,
                    adv=self.adv_buf, logp=self.logp_buf)
        return {k: torch.as_tensor(v, dtype=torch.float32) for k, v in data.items()}


def vpg(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, pi_lr=3e-4,
        vf_lr=1e-3, train_v_iters=80, lam=0.97, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=10):
    """
    Vanilla Policy Gradient (with GAE-Lambda for advantage estimation).

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
                                           | actions in ``a``.
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
            you provided to VPG (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators (each MPI process adds
            ``10000 * rank``).

        steps_per_epoch (int): Number of steps of interaction (state-action pairs)
            for the agent and the environment in each epoch, summed over all
            MPI processes.

        epochs (int): Number of epochs of interaction (equivalent to
            number of policy updates) to perform.

        gamma (float): Discount factor. (Always between 0 and 1.)

        pi_lr (float): Learning rate for policy optimizer.

        vf_lr (float): Learning rate for value function optimizer.

        train_v_iters (int): Number of gradient descent steps to take on
            value function per epoch.

        lam (float): Lambda for GAE-Lambda. (Always between 0 and 1,
            close to 1.)

        max_ep_len (int): Maximum length of trajectory / episode / rollout.
            Reaching it (or the env's own time limit) cuts the episode and
            bootstraps from ``V(s_T)``.

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save
            the current policy and value function.

    Returns:
        The trained actor-critic module.

    Raises:
        ValueError: unsupported observation/action space or bad arguments.
    """
    # Special function to avoid certain slowdowns from PyTorch + MPI combo.
    setup_pytorch_for_mpi()

    # Set up logger and save configuration
    logger = EpochLogger(**logger_kwargs)
    logger.save_config(locals())

    # Random seed
    seed += 10000 * proc_id()
    torch.manual_seed(seed)
    np.random.seed(seed)

    # Instantiate environment
    env = env_fn()
    _check_spaces(env)
    obs_dim = env.observation_space.shape
    act_dim = env.action_space.shape
    is_box = type(env.action_space).__name__ == "Box"
    if steps_per_epoch % num_procs() != 0 or steps_per_epoch < num_procs():
        raise ValueError(f"vpg: steps_per_epoch={steps_per_epoch} must be a positive multiple "
                         f"of the number of MPI processes ({num_procs()})")

    # Create actor-critic module   [VPG line 1: initial policy and value parameters]
    ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)

    # Sync params across processes
    sync_params(ac)

    # Count variables
    var_counts = tuple(core.count_vars(module) for module in [ac.pi, ac.v])
    logger.log("\nNumber of parameters: \t pi: %d, \t v: %d\n" % var_counts)

    # Set up experience buffer
    local_steps_per_epoch = int(steps_per_epoch / num_procs())
    buf = VPGBuffer(obs_dim, act_dim, local_steps_per_epoch, gamma, lam)

    # Set up function for computing VPG policy loss
    def compute_loss_pi(data):
        obs, act, adv, logp_old = data["obs"], data["act"], data["adv"], data["logp"]

        # Policy loss -mean(log pi(a|s) * A): its gradient is the policy gradient  [VPG line 6]
        pi, logp = ac.pi(obs, act)
        loss_pi = -(logp * adv).mean()

        # Useful extra info
        approx_kl = (logp_old - logp).mean().item()
        ent = pi.entropy().mean().item()
        pi_info = dict(kl=approx_kl, ent=ent)
        return loss_pi, pi_info

    # Set up function for computing value loss: mean squared error to the rewards-to-go
    def compute_loss_v(data):
        obs, ret = data["obs"], data["ret"]
        return ((ac.v(obs) - ret) ** 2).mean()

    # Set up optimizers for policy and value function
    pi_optimizer = Adam(ac.pi.parameters(), lr=pi_lr)
    vf_optimizer = Adam(ac.v.parameters(), lr=vf_lr)

    # Set up model saving
    logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

    def update():
        data = buf.get()

        with torch.no_grad():
            v_l_old = compute_loss_v(data).item()

        # Train policy with a single step of gradient ascent on the policy gradient  [VPG lines 6-7]
        pi_optimizer.zero_grad()
        loss_pi, pi_info_old = compute_loss_pi(data)
        pi_l_old = loss_pi.item()
        loss_pi.backward()
        mpi_avg_grads(ac.pi)  # average grads across MPI processes
        pi_optimizer.step()

        # Value function learning by regression on rewards-to-go   [VPG line 8]
        for _ in range(train_v_iters):
            vf_optimizer.zero_grad()
            loss_v = compute_loss_v(data)
            loss_v.backward()
            mpi_avg_grads(ac.v)  # average grads across MPI processes
            vf_optimizer.step()

        # Log changes from update. KL and the new policy loss are measured
        # *after* the step (Spinning Up measured them before it: always ~0).
        with torch.no_grad():
            loss_pi_new, pi_info_new = compute_loss_pi(data)
            loss_v_new = compute_loss_v(data)
        logger.store(LossPi=pi_l_old, LossV=v_l_old, KL=pi_info_new["kl"],
                     Entropy=pi_info_old["ent"],
                     DeltaLossPi=(loss_pi_new.item() - pi_l_old),
                     DeltaLossV=(loss_v_new.item() - v_l_old))

    # Prepare for interaction with environment
    start_time = time.time()
    o, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    ep_ret, ep_len = 0, 0
    act_low, act_high = (env.action_space.low, env.action_space.high) if is_box else (None, None)

    # Main loop: collect experience in env and update/log each epoch   [VPG line 2]
    for epoch in range(epochs):
        warned_cutoff = False
        for t in range(local_steps_per_epoch):
            # Run the current policy in the environment   [VPG line 3]
            a, v, logp = ac.step(torch.as_tensor(o, dtype=torch.float32))
            # A Gaussian sample can leave the action box: clip what the env sees,
            # store the sample itself (its log-prob is what the loss uses).
            env_a = np.clip(a, act_low, act_high) if is_box else a
            next_o, r, terminated, truncated, _ = env.step(env_a)
            ep_ret += r
            ep_len += 1

            # save and log
            buf.store(o, a, r, v, logp)
            logger.store(VVals=v)

            # Update obs (critical!)
            o = next_o

            timeout = truncated or ep_len == max_ep_len
            epoch_ended = t == local_steps_per_epoch - 1

            if terminated or timeout or epoch_ended:
                if epoch_ended and not (terminated or timeout) and not warned_cutoff:
                    print("Warning: trajectory cut off by epoch at %d steps." % ep_len,
                          flush=True)
                    warned_cutoff = True
                # Only a true terminal state has value 0; truncation and the epoch
                # cut-off bootstrap from V(s_T) (DESIGN 3).   [VPG lines 4-5]
                if terminated:
                    v = 0
                else:
                    _, v, _ = ac.step(torch.as_tensor(o, dtype=torch.float32))
                buf.finish_path(v)
                if terminated or timeout:
                    # only save EpRet / EpLen if trajectory finished
                    logger.store(EpRet=ep_ret, EpLen=ep_len)
                    o, _ = env.reset()
                    ep_ret, ep_len = 0, 0

        # Save model
        if (epoch % save_freq == 0) or (epoch == epochs - 1):
            logger.save_state({"env": env}, None)

        # Perform VPG update!   [VPG lines 6-8]
        update()

        # Log info about epoch
        logger.log_tabular("Epoch", epoch)
        logger.log_tabular("EpRet", with_min_and_max=True)
        logger.log_tabular("EpLen", average_only=True)
        logger.log_tabular("VVals", with_min_and_max=True)
        logger.log_tabular("TotalEnvInteracts", (epoch + 1) * steps_per_epoch)
        logger.log_tabular("LossPi", average_only=True)
        logger.log_tabular("LossV", average_only=True)
        logger.log_tabular("DeltaLossPi", average_only=True)
        logger.log_tabular("DeltaLossV", average_only=True)
        logger.log_tabular("Entropy", average_only=True)
        logger.log_tabular("KL", average_only=True)
        logger.log_tabular("Time", time.time() - start_time)
        logger.dump_tabular()
    env.close()
    return ac


def _check_spaces(env):
    """VPG needs a flat Box observation space and a Box or Discrete action space."""
    obs_space, act_space = env.observation_space, env.action_space
    if type(obs_space).__name__ != "Box" or len(obs_space.shape) != 1:
        raise ValueError(f"vpg: observation space {obs_space} is not supported; VPG needs a "
                         "flat Box (wrap the env in gymnasium.wrappers.FlattenObservation)")
    if type(act_space).__name__ not in ("Box", "Discrete"):
        raise ValueError(f"vpg: action space {act_space} is not supported (Box or Discrete)")

