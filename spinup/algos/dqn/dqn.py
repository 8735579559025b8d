"""Deep Q-Networks (Mnih et al. 2015) with the classic extensions as switches:
Double DQN (van Hasselt et al. 2016), dueling networks (Wang et al. 2016),
proportional prioritized replay (Schaul et al. 2016) and n-step returns
(Sutton 1988; Hessel et al. 2018).

Pseudocode lines (docs/algorithms/dqn.rst) are referenced as ``[DQN line N]``.
"""
import time
from copy import deepcopy

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim import Adam

import spinup.algos.dqn.core as core
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_tools import num_procs


class SumTree:
    """A complete binary tree over ``capacity`` leaves (rounded up to a power of
    two) stored in one array: node 1 is the root, node ``k`` has children ``2k`` and
    ``2k+1``, leaf ``i`` is node ``capacity + i``. Each inner node holds the sum of
    its children, so the root is the total priority and sampling proportionally to
    the leaves is a walk from the root (O(log N)). Both operations are vectorised
    over a batch: they move down (or up) one level for the whole batch at a time."""

    def __init__(self, size):
        self.capacity = 1 << int(np.ceil(np.log2(max(size, 1))))
        self.tree = np.zeros(2 * self.capacity, dtype=np.float64)

    def total(self):
        return self.tree[1]

    def get(self, idxs):
        """Priorities of leaves ``idxs``."""
        return self.tree[np.asarray(idxs) + self.capacity]

    def update(self, idxs, priorities):
        """Set leaves ``idxs`` to ``priorities`` and recompute the sums above them."""
        nodes = np.atleast_1d(np.asarray(idxs)) + self.capacity
        self.tree[nodes] = priorities
        nodes = np.unique(nodes // 2)
        while nodes[0] >= 1:  # all nodes of a batch are on the same level
            self.tree[nodes] = self.tree[2 * nodes] + self.tree[2 * nodes + 1]
            nodes = np.unique(nodes // 2)

    def find(self, u):
        """For each ``u`` in ``[0, total)``, the leaf ``i`` with
        ``sum_{j<i} p_j <= u < sum_{j<=i} p_j`` (a prefix-sum search)."""
        u = np.array(u, dtype=np.float64)
        nodes = np.ones(len(u), dtype=np.int64)
        while nodes[0] < self.capacity:
            left = self.tree[2 * nodes]
            go_right = u >= left
            u -= left * go_right
            nodes = 2 * nodes + go_right
        return nodes - self.capacity


class ReplayBuffer:
    """FIFO experience replay of transitions ``(s, a, r, s', d)`` with n-step returns
    computed when a batch is sampled.

    ``done`` is ``terminated`` only (a true terminal state); ``end`` marks the last
    transition of an episode for any reason (terminated, truncated, ``max_ep_len``).
    An n-step return never crosses ``end``; after a truncation it bootstraps from
    the ``s'`` stored there (DESIGN 3)."""

    def __init__(self, obs_dim, size, gamma=0.99, n_step=1):
        self.obs_buf = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.obs2_buf = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.act_buf = np.zeros(size, dtype=np.int64)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.end_buf = np.zeros(size, dtype=bool)
        self.gamma, self.n_step = gamma, n_step
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done, end):
        self.obs_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.done_buf[self.ptr] = done
        self.end_buf[self.ptr] = end
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_batch(self, batch_size=32):
        return self.get(np.random.randint(0, self.size, size=batch_size))

    def get(self, idxs):
        """Batch for transitions ``idxs`` with m-step returns, m <= n_step:
        ``ret = sum_{k<m} gamma^k r_{i+k}``, bootstrap state ``obs2 = s'_{i+m-1}``,
        ``done = d_{i+m-1}`` and ``disc = gamma^m``.  [DQN line 9]
        The sum stops after an episode's last transition and before slot ``ptr``
        (the next one to be written: not yet stored, or older than ``i`` once the
        buffer has wrapped)."""
        ret = np.zeros(len(idxs), dtype=np.float32)
        disc = np.ones(len(idxs), dtype=np.float32)
        last, alive = idxs.copy(), np.ones(len(idxs), dtype=bool)
        for k in range(self.n_step):
            j = (idxs + k) % self.max_size
            if k > 0:
                alive &= ~self.end_buf[last] & (j != self.ptr)
            ret += np.where(alive, disc * self.rew_buf[j], 0.0)
            last = np.where(alive, j, last)
            disc = np.where(alive, disc * self.gamma, disc)
        data = dict(obs=self.obs_buf[idxs], act=self.act_buf[idxs], ret=ret,
                    obs2=self.obs2_buf[last], done=self.done_buf[last], disc=disc)
        return {k: torch.as_tensor(v) for k, v in data.items()}


class PrioritizedReplayBuffer(ReplayBuffer):
    """Proportional prioritized replay (Schaul et al. 2016): transition ``i`` is
    sampled with probability ``P(i) = p_i^alpha / sum_k p_k^alpha`` (the sum-tree
    holds ``p_i^alpha``) and carries the importance-sampling weight
    ``w_i = (N P(i))^-beta``, divided by the largest weight in the batch."""

    def __init__(self, obs_dim, size, gamma=0.99, n_step=1, alpha=0.6, eps=1e-6):
        super().__init__(obs_dim, size, gamma, n_step)
        self.tree = SumTree(size)
        self.alpha, self.eps, self.max_priority = alpha, eps, 1.0

    def store(self, *args):
        # New transitions get the largest priority so far: each is replayed
        # at least once soon.   [DQN line 6]
        self.tree.update(self.ptr, self.max_priority)
        super().store(*args)

    def sample_batch(self, batch_size=32, beta=0.4):
        # Stratified sampling: one uniform draw in each of batch_size equal
        # segments of [0, total).   [DQN line 8]
        total = self.tree.total()
        u = (np.arange(batch_size) + np.random.rand(batch_size)) * (total / batch_size)
        idxs = np.minimum(self.tree.find(u), self.size - 1)  # guard float round-off
        probs = self.tree.get(idxs) / total
        weights = (self.size * probs) ** (-beta)
        data = self.get(idxs)
        data["weights"] = torch.as_tensor(weights / weights.max(), dtype=torch.float32)
        data["idxs"] = idxs
        return data

    def update_priorities(self, idxs, td_errors):
        """``p_i <- (|delta_i| + eps)^alpha``.   [DQN line 12]"""
        priorities = (np.abs(td_errors) + self.eps) ** self.alpha
        self.tree.update(idxs, priorities)
        self.max_priority = max(self.max_priority, float(priorities.max()))


def linear_epsilon(t, eps_start, eps_end, eps_decay_steps):
    """Exploration rate at step ``t``: linear from ``eps_start`` to ``eps_end`` over
    ``eps_decay_steps`` steps, then constant."""
    frac = min(t / eps_decay_steps, 1.0) if eps_decay_steps > 0 else 1.0
    return eps_start + frac * (eps_end - eps_start)


@torch.no_grad()
def q_target(q_net, q_targ, data, double=False):
    """Bellman target ``y = ret + disc * (1 - done) * Q_targ(s', a*)``.   [DQN line 10]

    DQN: ``a* = argmax_a Q_targ(s', a)`` (the target net selects and evaluates).
    Double DQN: ``a* = argmax_a Q(s', a)`` (the online net selects, the target
    net evaluates), which removes most of the max-operator's overestimation."""
    q2_all = q_targ(data["obs2"])
    a2 = (q_net(data["obs2"]) if double else q2_all).argmax(dim=1, keepdim=True)
    q2 = q2_all.gather(1, a2).squeeze(1)
    return data["ret"] + data["disc"] * (1 - data["done"]) * q2


def dqn(env_fn, actor_critic=core.MLPQFunction, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=25, replay_size=int(1e5), gamma=0.99, lr=1e-3,
        batch_size=64, start_steps=1000, update_after=1000, update_every=2,
        target_update_every=500, polyak=None, eps_start=1.0, eps_end=0.01,
        eps_decay_steps=10000, eps_test=0.0, double=False, dueling=False,
        prioritized_replay=False, per_alpha=0.6, per_beta=0.4, per_eps=1e-6, n_step=1,
        huber=True, max_grad_norm=10.0, anneal_lr=True, num_test_episodes=10,
        max_ep_len=1000, logger_kwargs=dict(), save_freq=1):
    """
    Deep Q-Network with optional Double DQN, dueling network, prioritized replay
    and n-step returns.

    Args:
        env_fn : A function which creates a copy of the environment.
            The environment must satisfy the gymnasium API, with a flat ``Box``
            observation space and a ``Discrete`` action space.

        actor_critic: The constructor method for a PyTorch Module with a
            ``forward`` and an ``act`` method, called as
            ``actor_critic(env.observation_space, env.action_space, **ac_kwargs)``.
            Its forward call accepts a batch of observations and returns:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``q``        (batch, n_act)    | Tensor of action values
                                           | ``Q(s, a)`` for every action ``a``
                                           | of each observation.
            ===========  ================  ======================================

            ``act(obs, deterministic=False)`` returns the greedy action
            ``argmax_a Q(obs, a)`` as numpy (``deterministic`` is accepted for
            ``test_policy`` and ignored: the greedy policy is deterministic).

        ac_kwargs (dict): Any kwargs appropriate for the Q-network
            (``hidden_sizes``, ``activation``). ``dueling=True`` is added by
            the ``dueling`` switch.

        seed (int): Seed for random number generators.

        steps_per_epoch (int): Number of steps of interaction (state-action pairs)
            for the agent and the environment in each epoch.

        epochs (int): Number of epochs to run and train agent.

        replay_size (int): Maximum length of replay buffer.

        gamma (float): Discount factor. (Always between 0 and 1.)

        lr (float): Learning rate (Adam) for the Q-network.

        batch_size (int): Minibatch size for SGD.

        start_steps (int): Number of steps of uniform-random action selection
            before epsilon-greedy takes over (exploration warm-up).

        update_after (int): Number of env interactions to collect before
            starting to do gradient descent updates.

        update_every (int): One gradient step every ``update_every`` env steps
            (the DQN paper's "update frequency").

        target_update_every (int): Copy the Q-network into the target network
            every ``target_update_every`` env steps (hard update).

        polyak (float or None): If set (e.g. 0.995), replaces the hard copy by a
            soft update after every gradient step:
            ``theta_targ <- polyak * theta_targ + (1 - polyak) * theta``.

        eps_start (float): Initial exploration rate of epsilon-greedy.

        eps_end (float): Final exploration rate. With 0.05 instead of 0.01, the
            all-switch CartPole run of one seed ended below 475
            (docs/benchmarks/dqn.rst).

        eps_decay_steps (int): Steps over which epsilon decays linearly from
            ``eps_start`` to ``eps_end``.

        eps_test (float): Exploration rate of the test episodes (0 = greedy).

        double (bool): Double DQN target (online argmax, target-network value).

        dueling (bool): Dueling network (passes ``dueling=True`` to
            ``actor_critic``).

        prioritized_replay (bool): Proportional prioritized experience replay.

        per_alpha (float): Priority exponent ``alpha`` (0 = uniform).

        per_beta (float): Initial importance-sampling exponent ``beta``,
            annealed linearly to 1 over the whole run.

        per_eps (float): Small constant added to ``|TD error|`` so that no
            priority is zero.

        n_step (int): Number of reward steps in the return (1 = one-step DQN).

        huber (bool): Huber loss on the TD error (else squared error).

        max_grad_norm (float or None): Clip the gradient's global norm to this
            (None: no clipping).

        anneal_lr (bool): Decay the learning rate linearly from ``lr`` to 0 over
            the run (``epochs * steps_per_epoch`` env steps), logged as ``LR``.
            Without it, plain DQN keeps oscillating after it has solved CartPole
            (docs/benchmarks/dqn.rst); with it the last epochs settle.

        num_test_episodes (int): Number of episodes to test the policy
            at the end of each epoch.

        max_ep_len (int): Maximum length of trajectory / episode / rollout.
            Reaching it (or the env's own time limit) ends the episode without
            making it terminal: targets bootstrap there.

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save
            the current Q-network.

    Returns:
        The trained Q-network.

    Raises:
        ValueError: unsupported observation/action space, MPI, or bad arguments.
    """
    # Set up logger and save configuration
    logger = EpochLogger(**logger_kwargs)
    logger.save_config(locals())
    if num_procs() > 1:
        raise ValueError("dqn: cannot use MPI (more than one process); DQN is a "
                         "single-process algorithm, run it with --cpu 1")
    for name, val in [("n_step", n_step), ("batch_size", batch_size),
                      ("update_every", update_every), ("replay_size", replay_size),
                      ("target_update_every", target_update_every)]:
        if int(val) < 1:
            raise ValueError(f"dqn: {name} must be >= 1, got {val}")

    # Small networks and batches: one torch thread is faster (measured 15 s vs 286 s
    # for the same 2000 steps on a busy 2-core machine) and makes runs reproducible.
    torch.set_num_threads(1)

    # Random seed
    torch.manual_seed(seed)
    np.random.seed(seed)

    # Instantiate environment
    env, test_env = env_fn(), env_fn()
    _check_spaces(env)
    obs_dim = env.observation_space.shape

    # Create Q-network and target network   [DQN lines 1-2]
    if dueling:
        ac_kwargs = dict(ac_kwargs, dueling=True)
    q_net = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
    q_targ = deepcopy(q_net)
    for p in q_targ.parameters():  # the target network is only updated by copying
        p.requires_grad = False
    logger.log("\nNumber of parameters: \t q: %d\n" % core.count_vars(q_net))

    # Experience buffer   [DQN line 1]
    if prioritized_replay:
        replay = PrioritizedReplayBuffer(obs_dim, replay_size, gamma, n_step, per_alpha, per_eps)
    else:
        replay = ReplayBuffer(obs_dim, replay_size, gamma, n_step)

    # Q-loss: mean over the batch of (importance weight *) l(Q(s,a) - y)   [DQN line 11]
    def compute_loss_q(data):
        q = q_net(data["obs"]).gather(1, data["act"].unsqueeze(1)).squeeze(1)
        y = q_target(q_net, q_targ, data, double)
        td = q - y
        per_sample = F.smooth_l1_loss(q, y, reduction="none") if huber else td ** 2
        if prioritized_replay:
            per_sample = per_sample * data["weights"]
        return per_sample.mean(), q.detach(), td.detach()

    # fused=True: the same Adam update, one kernel per step instead of one per tensor
    optimizer = Adam(q_net.parameters(), lr=lr, fused=True)

    # Set up model saving
    logger.setup_pytorch_saver(q_net, ac_kwargs=ac_kwargs)

    total_steps = steps_per_epoch * epochs

    def update(t):
        # Sample a batch (PER: beta annealed linearly from per_beta to 1)   [DQN line 8]
        if prioritized_replay:
            beta = per_beta + (1.0 - per_beta) * min(t / total_steps, 1.0)
            data = replay.sample_batch(batch_size, beta)
        else:
            data = replay.sample_batch(batch_size)

        # One gradient descent step on the Q-loss   [DQN line 11]
        if anneal_lr:
            optimizer.param_groups[0]["lr"] = lr * (1.0 - t / total_steps)
        optimizer.zero_grad()
        loss_q, q, td = compute_loss_q(data)
        loss_q.backward()
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(q_net.parameters(), max_grad_norm)
        optimizer.step()

        if prioritized_replay:  # [DQN line 12]
            replay.update_priorities(data["idxs"], td.numpy())
        if polyak is not None:  # soft target update   [DQN line 13]
            with torch.no_grad():
                for p, p_targ in zip(q_net.parameters(), q_targ.parameters()):
                    p_targ.mul_(polyak).add_((1 - polyak) * p)
        logger.store(LossQ=loss_q.item(), QVals=q.numpy())

    def test_agent():
        for _ in range(num_test_episodes):
            o, _ = test_env.reset()
            ret, length, done = 0.0, 0, False
            while not done:
                if np.random.rand() < eps_test:
                    a = test_env.action_space.sample()
                else:
                    a = q_net.act(torch.as_tensor(o, dtype=torch.float32)).item()
                o, r, terminated, truncated, _ = test_env.step(a)
                ret, length = ret + r, length + 1
                done = terminated or truncated or length == max_ep_len
            logger.store(TestEpRet=ret, TestEpLen=length)

    # Prepare for interaction with environment
    start_time = time.time()
    o, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    test_env.reset(seed=seed + 1)
    test_env.action_space.seed(seed + 1)
    ep_ret, ep_len = 0, 0

    # Main loop: collect experience in env and update/log each epoch   [DQN line 3]
    for t in range(total_steps):
        # Epsilon-greedy action (uniform random during the warm-up)   [DQN line 4]
        eps = linear_epsilon(t, eps_start, eps_end, eps_decay_steps)
        if t < start_steps or np.random.rand() < eps:
            a = env.action_space.sample()
        else:
            a = q_net.act(torch.as_tensor(o, dtype=torch.float32)).item()

        # Step the env   [DQN line 5]
        o2, r, terminated, truncated, _ = env.step(a)
        ep_ret += r
        ep_len += 1

        # Store the transition; only a true terminal state is "done" (DESIGN 3)   [DQN line 6]
        timeout = truncated or ep_len == max_ep_len
        replay.store(o, a, r, o2, terminated, terminated or timeout)

        # Super critical, easy to overlook step: make sure to update
        # most recent observation!
        o = o2

        # End of trajectory handling
        if terminated or timeout:
            logger.store(EpRet=ep_ret, EpLen=ep_len)
            o, _ = env.reset()
            ep_ret, ep_len = 0, 0

        # Update handling   [DQN line 7]
        if t >= update_after and t % update_every == 0:
            update(t)

        # Hard target-network update   [DQN line 13]
        if polyak is None and (t + 1) % target_update_every == 0:
            q_targ.load_state_dict(q_net.state_dict())

        # End of epoch handling
        if (t + 1) % steps_per_epoch == 0:
            epoch = (t + 1) // steps_per_epoch

            # Save model
            if (epoch % save_freq == 0) or (epoch == epochs):
                logger.save_state({"env": env}, None)

            # Test the performance of the greedy policy
            test_agent()

            # Log info about epoch
            logger.log_tabular("Epoch", epoch)
            logger.log_tabular("EpRet", with_min_and_max=True)
            logger.log_tabular("TestEpRet", with_min_and_max=True)
            logger.log_tabular("EpLen", average_only=True)
            logger.log_tabular("TestEpLen", average_only=True)
            logger.log_tabular("TotalEnvInteracts", t + 1)
            logger.log_tabular("QVals", with_min_and_max=True)
            logger.log_tabular("LossQ", average_only=True)
            logger.log_tabular("Epsilon", eps)
            logger.log_tabular("LR", optimizer.param_groups[0]["lr"])
            logger.log_tabular("Time", time.time() - start_time)
            logger.dump_tabular()
    env.close()
    test_env.close()
    return q_net


def _check_spaces(env):
    """DQN needs a flat Box observation space and a Discrete action space."""
    obs_space, act_space = env.observation_space, env.action_space
    if type(obs_space).__name__ != "Box" or len(obs_space.shape) != 1:
        raise ValueError(f"dqn: observation space {obs_space} is not supported; DQN needs a "
                         "flat Box (wrap the env in gymnasium.wrappers.FlattenObservation)")
    if type(act_space).__name__ != "Discrete":
        raise ValueError(f"dqn: action space {act_space} is not supported; DQN needs a "
                         "Discrete action space (for continuous actions use ddpg, td3 or sac)")
