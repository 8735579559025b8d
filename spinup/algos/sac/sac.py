"""Soft Actor-Critic (SAC), Haarnoja et al. 2018, in the Spinning Up form (clipped
double-Q, no separate value network), with optional automatic entropy tuning
(Haarnoja et al. 2018b, "Soft Actor-Critic Algorithms and Applications").

Pseudocode lines (docs/algorithms/sac.rst) are referenced as ``[SAC line N]``.
"""
import time
from copy import deepcopy

import numpy as np
import torch
from torch.optim import Adam

import spinup.algos.sac.core as core
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_tools import num_procs


class ReplayBuffer:
    """A FIFO experience replay buffer: preallocated float32 numpy arrays, uniform
    sampling. ``done`` stores ``terminated`` only (a time-limit truncation is not a
    terminal state, DESIGN 3)."""

    def __init__(self, obs_dim, act_dim, size):
        self.obs_buf = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.obs2_buf = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.act_buf = np.zeros(core.combined_shape(size, act_dim), dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done):
        """Add one transition, overwriting the oldest once the buffer is full."""
        self.obs_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.done_buf[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_batch(self, batch_size=32):
        """Uniformly sample ``batch_size`` stored transitions (with replacement) as a
        dict of float32 tensors ``obs, obs2, act, rew, done``."""
        idxs = np.random.randint(0, self.size, size=batch_size)
        batch = dict(obs=self.obs_buf[idxs], obs2=self.obs2_buf[idxs], act=self.act_buf[idxs],
                     rew=self.rew_buf[idxs], done=self.done_buf[idxs])
        return {k: torch.from_numpy(v) for k, v in batch.items()}  # no copy


def polyak_update(net, net_targ, polyak):
    """``theta_targ <- polyak * theta_targ + (1 - polyak) * theta`` for every parameter,
    in place and without building a graph."""
    with torch.no_grad():
        for p, p_targ in zip(net.parameters(), net_targ.parameters()):
            p_targ.lerp_(p, 1 - polyak)  # = polyak * p_targ + (1 - polyak) * p


def sac(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99,
        polyak=0.995, lr=1e-3, alpha=0.2, batch_size=100, start_steps=10000,
        update_after=1000, update_every=50, num_test_episodes=10, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=1, target_entropy=None):
    """
    Soft Actor-Critic (SAC)

    Args:
        env_fn : A function which creates a copy of the environment.
            The environment must satisfy the gymnasium API, with a flat ``Box``
            observation space and a ``Box`` action space with finite bounds.

        actor_critic: The constructor method for a PyTorch Module with an ``act``
            method, a ``pi`` module, a ``q1`` module, and a ``q2`` module, called as
            ``actor_critic(env.observation_space, env.action_space, **ac_kwargs)``.
            Actions passed to and returned by ``pi``, ``q1`` and ``q2`` are in the
            policy's units, ``[-1, 1]^act_dim``. The ``act`` method and ``pi``
            module should accept batches of observations as inputs, and ``q1``
            and ``q2`` should accept a batch of observations and a batch of
            actions as inputs. When called, ``act``, ``q1``, and ``q2`` should
            return:

            ===========  ================  ======================================
            Call         Output Shape      Description
            ===========  ================  ======================================
            ``act``      (batch, act_dim)  | Numpy array of actions for each
                                           | observation, in env units (mapped
                                           | to the action space's ``low`` /
                                           | ``high``). ``act(obs, True)`` gives
                                           | the mean action ``tanh(mu)``.
            ``q1``       (batch,)          | Tensor containing one current estimate
                                           | of Q* for the provided observations
                                           | and actions. (Critical: make sure to
                                           | flatten this!)
            ``q2``       (batch,)          | Tensor containing the other current
                                           | estimate of Q* for the provided
                                           | observations and actions. (Critical:
                                           | make sure to flatten this!)
            ===========  ================  ======================================

            Calling ``pi(obs, deterministic=False, with_logprob=True)`` should
            return:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``a``        (batch, act_dim)  | Tensor containing actions from policy
                                           | given observations, in ``[-1, 1]``.
            ``logp_pi``  (batch,)          | Tensor containing log probabilities of
                                           | actions in ``a``. Importantly:
                                           | gradients should be able to flow back
                                           | into ``a``.
            ===========  ================  ======================================

        ac_kwargs (dict): Any kwargs appropriate for the ActorCritic object
            you provided to SAC (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators.

        steps_per_epoch (int): Number of steps of interaction (state-action pairs)
            for the agent and the environment in each epoch.

        epochs (int): Number of epochs to run and train agent.

        replay_size (int): Maximum length of replay buffer.

        gamma (float): Discount factor. (Always between 0 and 1.)

        polyak (float): Interpolation factor in polyak averaging for target
            networks. Target networks are updated towards main networks
            according to :math:`\\theta_{\\text{targ}} \\leftarrow \\rho
            \\theta_{\\text{targ}} + (1-\\rho) \\theta`, where :math:`\\rho` is
            polyak. (Always between 0 and 1, usually close to 1.)

        lr (float): Learning rate (used for both policy and value learning, and
            for the temperature when it is tuned).

        alpha (float or 'auto'): Entropy regularization coefficient. (Equivalent
            to inverse of reward scale in the original SAC paper.) ``'auto'``
            learns it (starting from 1) by gradient descent on
            :math:`\\log\\alpha` so that the policy's entropy tracks
            ``target_entropy`` (Haarnoja et al. 2018b).

        batch_size (int): Minibatch size for SGD.

        start_steps (int): Number of steps for uniform-random action selection,
            before running real policy. Helps exploration.

        update_after (int): Number of env interactions to collect before
            starting to do gradient descent updates. Ensures replay buffer
            is full enough for useful updates.

        update_every (int): Number of env interactions that should elapse
            between gradient descent updates. Note: Regardless of how long
            you wait between updates, the ratio of env steps to gradient steps
            is locked to 1.

        num_test_episodes (int): Number of episodes to test the deterministic
            (mean) policy at the end of each epoch.

        max_ep_len (int): Maximum length of trajectory / episode / rollout.
            Reaching it (or the env's own time limit) ends the episode, but the
            last transition still bootstraps (it is not a terminal state).

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save
            the current policy and value function.

        target_entropy (float or None): Entropy target for the tuned temperature;
            ``None`` means :math:`-\\text{act\\_dim}` (the paper's heuristic). Giving
            a number turns tuning on even with a numeric ``alpha`` (then used as the
            initial value).

    Returns:
        The trained actor-critic module.

    Raises:
        ValueError: unsupported spaces, bad arguments, or more than one MPI process.
    """
    if num_procs() > 1:
        raise ValueError("sac: SAC cannot use MPI (it does not average gradients over "
                         "processes); run it with one process (no --cpu / num_cpu=1)")
    auto_alpha = alpha == "auto" or target_entropy is not None
    if not auto_alpha and not isinstance(alpha, (int, float)):
        raise ValueError(f"sac: alpha must be a number or 'auto', got {alpha!r}")

    logger = EpochLogger(**logger_kwargs)
    logger.save_config(locals())

    # Batch-100 updates of small MLPs are fastest on one thread: extra threads cost
    # more in synchronisation than they gain (over 10x slower on a busy machine).
    # The previous setting is restored before returning.
    saved_num_threads = torch.get_num_threads()
    torch.set_num_threads(1)

    torch.manual_seed(seed)
    np.random.seed(seed)

    env, test_env = env_fn(), env_fn()
    _check_spaces(env, "sac")
    obs_dim = env.observation_space.shape
    act_dim = env.action_space.shape[0]

    # Create actor-critic module and target networks   [SAC line 1]
    ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
    ac_targ = deepcopy(ac)   # [SAC line 2: theta_targ,i <- theta_i]
    # Freeze target networks with respect to optimizers (only update via polyak averaging)
    for p in ac_targ.parameters():
        p.requires_grad = False

    # List (not a one-shot iterator) of parameters for both Q-networks, so the freeze
    # in update() really applies to them (DESIGN 9).
    q_params = list(ac.q1.parameters()) + list(ac.q2.parameters())

    # Experience buffer   [SAC line 1: empty replay buffer D]
    replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=replay_size)

    var_counts = tuple(core.count_vars(module) for module in [ac.pi, ac.q1, ac.q2])
    logger.log("\nNumber of parameters: \t pi: %d, \t q1: %d, \t q2: %d\n" % var_counts)

    # Temperature: fixed alpha, or alpha = exp(log_alpha) learned
    if auto_alpha:
        if target_entropy is None:
            target_entropy = -float(act_dim)
        init_alpha = 1.0 if alpha == "auto" else float(alpha)
        log_alpha = torch.tensor(np.log(init_alpha), dtype=torch.float32, requires_grad=True)
        alpha = log_alpha.exp().item()

    # Set up function for computing SAC Q-losses
    def compute_loss_q(data):
        o, a, r, o2, d = data["obs"], data["act"], data["rew"], data["obs2"], data["done"]

        q1 = ac.q1(o, a)
        q2 = ac.q2(o, a)

        # Bellman backup for Q functions   [SAC line 12]
        with torch.no_grad():
            # Target actions come from *current* policy   [SAC line 12: a~' ~ pi(.|s')]
            a2, logp_a2 = ac.pi(o2)

            # Target Q-values: clipped double-Q minus the entropy term
            q1_pi_targ = ac_targ.q1(o2, a2)
            q2_pi_targ = ac_targ.q2(o2, a2)
            q_pi_targ = torch.min(q1_pi_targ, q2_pi_targ)
            backup = r + gamma * (1 - d) * (q_pi_targ - alpha * logp_a2)

        # MSE loss against Bellman backup   [SAC line 13]
        loss_q1 = ((q1 - backup) ** 2).mean()
        loss_q2 = ((q2 - backup) ** 2).mean()
        loss_q = loss_q1 + loss_q2

        # Useful info for logging
        q_info = dict(Q1Vals=q1.detach().numpy(), Q2Vals=q2.detach().numpy())
        return loss_q, q_info

    # Set up function for computing SAC pi loss   [SAC line 14]
    def compute_loss_pi(data):
        o = data["obs"]
        pi, logp_pi = ac.pi(o)
        q1_pi = ac.q1(o, pi)
        q2_pi = ac.q2(o, pi)
        q_pi = torch.min(q1_pi, q2_pi)

        # Entropy-regularized policy loss
        loss_pi = (alpha * logp_pi - q_pi).mean()

        # Useful info for logging
        pi_info = dict(LogPi=logp_pi.detach().numpy())
        return loss_pi, logp_pi.detach(), pi_info

    # Set up optimizers for policy, q-functions (and temperature)
    # (fused=True: the same Adam update, one kernel per step instead of one per tensor)
    pi_optimizer = Adam(ac.pi.parameters(), lr=lr, fused=True)
    q_optimizer = Adam(q_params, lr=lr, fused=True)
    if auto_alpha:
        alpha_optimizer = Adam([log_alpha], lr=lr)

    # Set up model saving
    logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

    def update(data):
        nonlocal alpha
        # First run one gradient descent step for Q1 and Q2   [SAC line 13]
        q_optimizer.zero_grad()
        loss_q, q_info = compute_loss_q(data)
        loss_q.backward()
        q_optimizer.step()

        # Record things
        logger.store(LossQ=loss_q.item(), **q_info)

        # Freeze Q-networks so you don't waste computational effort
        # computing gradients for them during the policy learning step.
        for p in q_params:
            p.requires_grad = False

        # Next run one gradient descent step for pi.   [SAC line 14]
        pi_optimizer.zero_grad()
        loss_pi, logp_pi, pi_info = compute_loss_pi(data)
        loss_pi.backward()
        pi_optimizer.step()

        # Unfreeze Q-networks so you can optimize it at next step.
        for p in q_params:
            p.requires_grad = True

        # Record things
        logger.store(LossPi=loss_pi.item(), **pi_info)

        # Temperature step: minimize E[-alpha * (log pi(a|s) + target_entropy)]
        if auto_alpha:
            alpha_optimizer.zero_grad()
            loss_alpha = -(log_alpha.exp() * (logp_pi + target_entropy)).mean()
            loss_alpha.backward()
            alpha_optimizer.step()
            alpha = log_alpha.exp().item()

        # Finally, update target networks by polyak averaging.   [SAC line 15]
        # (SAC has no target policy: only the Q-functions have targets.)
        polyak_update(ac.q1, ac_targ.q1, polyak)
        polyak_update(ac.q2, ac_targ.q2, polyak)

    def get_action(o, deterministic=False):
        a, _ = ac.pi(torch.as_tensor(o, dtype=torch.float32), deterministic, False)
        return a.numpy()

    def test_agent():
        for j in range(num_test_episodes):
            o, _ = test_env.reset()
            done, ep_ret, ep_len = False, 0, 0
            while not (done or (ep_len == max_ep_len)):
                # Take deterministic actions (the mean action) at test time
                o, r, terminated, truncated, _ = test_env.step(
                    ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic=True))
                done = terminated or truncated
                ep_ret += r
                ep_len += 1
            logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)

    # Prepare for interaction with environment
    total_steps = steps_per_epoch * epochs
    start_time = time.time()
    o, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    test_env.reset(seed=seed + 1)
    test_env.action_space.seed(seed + 1)
    ep_ret, ep_len = 0, 0
    act_scale, act_bias = ac.act_scale.numpy(), ac.act_bias.numpy()  # [-1,1] -> [low,high]

    # Main loop: collect experience in env and update/log each epoch   [SAC line 3]
    for t in range(total_steps):

        # Until start_steps have elapsed, randomly sample actions uniformly over the
        # action box. Afterwards, use the learned policy.   [SAC line 4]
        with torch.no_grad():
            if t >= start_steps:
                a = get_action(o)
            else:
                a = np.random.uniform(-1.0, 1.0, size=act_dim).astype(np.float32)

        # Step the env   [SAC line 5]
        o2, r, terminated, truncated, _ = env.step(act_bias + act_scale * a)
        ep_ret += r
        ep_len += 1

        # Store experience to replay buffer. Only a true terminal state stops the
        # bootstrap: truncation and max_ep_len store done=False (DESIGN 3).   [SAC line 7]
        replay_buffer.store(o, a, r, o2, float(terminated))

        # Super critical, easy to overlook step: make sure to update
        # most recent observation!
        o = o2

        # End of trajectory handling   [SAC line 8]
        if terminated or truncated or ep_len == max_ep_len:
            logger.store(EpRet=ep_ret, EpLen=ep_len)
            o, _ = env.reset()
            ep_ret, ep_len = 0, 0

        # Update handling   [SAC lines 9-11]
        if t >= update_after and t % update_every == 0:
            for j in range(update_every):
                batch = replay_buffer.sample_batch(batch_size)
                update(data=batch)

        # End of epoch handling
        if (t + 1) % steps_per_epoch == 0:
            epoch = (t + 1) // steps_per_epoch

            # Save model
            if (epoch % save_freq == 0) or (epoch == epochs):
                logger.save_state({"env": env}, None)

            # Test the performance of the deterministic version of the agent.
            test_agent()

            # Log info about epoch
            logger.log_tabular("Epoch", epoch)
            logger.log_tabular("EpRet", with_min_and_max=True)
            logger.log_tabular("TestEpRet", with_min_and_max=True)
            logger.log_tabular("EpLen", average_only=True)
            logger.log_tabular("TestEpLen", average_only=True)
            logger.log_tabular("TotalEnvInteracts", t + 1)
            logger.log_tabular("Q1Vals", with_min_and_max=True)
            logger.log_tabular("Q2Vals", with_min_and_max=True)
            logger.log_tabular("LogPi", with_min_and_max=True)
            logger.log_tabular("LossPi", average_only=True)
            logger.log_tabular("LossQ", average_only=True)
            logger.log_tabular("Alpha", alpha)
            logger.log_tabular("Time", time.time() - start_time)
            logger.dump_tabular()
    env.close()
    test_env.close()
    torch.set_num_threads(saved_num_threads)
    return ac


def _check_spaces(env, name):
    """SAC needs a flat Box observation space and a bounded Box action space."""
    obs_space, act_space = env.observation_space, env.action_space
    if type(obs_space).__name__ != "Box" or len(obs_space.shape) != 1:
        raise ValueError(f"{name}: observation space {obs_space} is not supported; it needs a "
                         "flat Box (wrap the env in gymnasium.wrappers.FlattenObservation)")
    if type(act_space).__name__ != "Box" or len(act_space.shape) != 1:
        raise ValueError(f"{name}: action space {act_space} is not supported; {name.upper()} "
                         "needs a continuous (Box) action space (for Discrete actions use dqn)")
    if not (np.all(np.isfinite(act_space.low)) and np.all(np.isfinite(act_space.high))):
        raise ValueError(f"{name}: action space {act_space} has infinite bounds; "
                         f"{name.upper()} needs finite low/high to scale its tanh policy")
