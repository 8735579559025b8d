"""Deep Q-Networks (DQN) and four of its extensions, each behind one switch.

DQN learns the optimal action-value function with a neural network and acts
epsilon-greedily on it; ``Q(s, a)`` regresses, on minibatches from a replay buffer,
onto a Bellman target computed with a periodically refreshed copy of the network.
Each switch changes one piece: who picks the next action in the target (Double DQN),
the network's shape (dueling), which transitions are replayed (prioritized replay)
and how many rewards enter the target (n-step returns).

Papers:
    - Mnih et al. 2015, Nature 518, "Human-level control through deep reinforcement
      learning": Algorithm 1 and the loss of Eq. 2 (Methods).
    - van Hasselt, Guez, Silver 2016, arXiv:1509.06461 (Double DQN): target Eq. 4.
    - Wang et al. 2016, arXiv:1511.06581 (dueling networks): Eq. 9, in ``core.py``.
    - Schaul et al. 2016, arXiv:1511.05952 (prioritized replay): Algorithm 1, Eq. 1
      with proportional priorities ``p_i = |delta_i| + eps``, weights Eq. 2.
    - Sutton and Barto 2018, "Reinforcement Learning: An Introduction", 2nd ed.,
      Section 7.1: the n-step return.

Pseudocode (the same numbered lines as docs/algorithms/dqn.rst; a switch in brackets
marks a step that depends on it):

.. begin-pseudocode

.. code-block:: none

    1. Input: Q-network Q_θ ([dueling]: trunk with V and A heads), empty replay buffer D
       ([prioritized_replay]: with a sum-tree of p^per_alpha, p_max ← 1)
    2. Target copy θ_targ ← θ
    3. for t = 0, E, 2E, ..., T − E, T = epochs · steps_per_epoch do
           (t counts env steps; E = num_envs copies of the env step together)
    4.     ε ← eps_start + min(t / eps_decay_steps, 1) · (eps_end − eps_start); for each of the E
           copies of the env: a ← a uniform action if t < start_steps or with probability ε, else
           argmax_a Q_θ(s, a) (one Q_θ call for the copies)
    5.     Step the E copies together; observe r, s′, terminated, truncated per copy (a copy whose
           episode ended is already reset, and s′ is its episode's last state)
    6.     Store the E transitions (s, a, r, s′, d = terminated, end = episode over) in D in one
           call ([prioritized_replay]: with priority p_max); s ← the copies' current states; for
           each copy whose episode is over: log EpRet, EpLen; reset it if the environment has not
    7.     for each t′ = t, ..., t + E − 1: if t′ ≥ update_after and t′ mod update_every = 0 then
           repeat round(update_every · updates_per_step) times (once by default):
    8.         Sample a batch B of batch_size indices i: uniformly, or [prioritized_replay] one per
               stratum with P(i) = p_i^α / Σ_k p_k^α (α = per_alpha), w_i = (N P(i))^(−β) / max_B w,
               β = per_beta + (1 − per_beta) · min(t′ / T, 1)
    9.         For each i: R_i = Σ_{k<m} γ^k r_{i+kE} with m ≤ n_step (entry i + kE: the same copy
               k steps later), stopping after an entry marked end or at that copy's newest entry
               (included); s′_i and d_i come from entry i + (m − 1)E
    10.        y_i ← R_i + γ^m (1 − d_i) Q_θtarg(s′_i, a*_i), a*_i = argmax_a Q_θtarg(s′_i, a),
               or [double] a*_i = argmax_a Q_θ(s′_i, a); computed without gradient
    11.        [anneal_lr] step size ← lr · (1 − t′ / T); one Adam step on
               (1/|B|) Σ_B w_i ℓ(Q_θ(s_i, a_i) − y_i), ℓ Huber or square (huber), w_i = 1 without
               prioritized_replay, gradient norm clipped to max_grad_norm (unless None)
    12.        [prioritized_replay] p_i ← |Q_θ(s_i, a_i) − y_i| + per_eps, TD error from before
               the step; the tree stores p_i^per_alpha; p_max ← max(p_max, p_i^per_alpha)
    13.        [polyak set] θ_targ ← ρ θ_targ + (1 − ρ) θ, ρ = polyak
    14.        [polyak None] (for each t′, after its gradient steps) if (t′ + 1) mod
               target_update_every = 0: θ_targ ← θ
    15.    if t + E is a multiple of steps_per_epoch: save the model, run num_test_episodes
           episodes with ε = eps_test, write one row of progress.txt (with ε and the step size)

.. end-pseudocode

Lines of code that carry out a step of this pseudocode are tagged ``[DQN line N]``.
"""
import math
import time
from copy import deepcopy

import numpy as np
import torch
import torch.nn.functional as F

import spinup.algos.dqn.core as core
from spinup.machinery.door import Run, check_finite_reward, check_finite_rows
from spinup.utils.logx import EpochLogger
from spinup.utils.torch_tools import adam, polyak_update, set_lr



class ReplayBuffer:
    """First-in first-out store of one-step transitions; n-step returns are formed
    when a batch is read (``get``), so one buffer serves every ``n_step``.

    Each slot holds ``(s, a, r, s', done, end)``: ``done`` is gymnasium's
    ``terminated`` (a true terminal state), ``end`` says that the episode stopped
    after this transition for any reason (terminated, truncated or ``max_ep_len``).
    A return never runs past an ``end``; after a truncation it bootstraps from the
    ``s'`` stored there (docs/algorithms/dqn.rst, "Key Equations").

    With ``num_envs`` env copies stored together (``store_batch``), copy ``i``'s
    transitions lie ``num_envs`` slots apart, so a return steps through the buffer
    with that stride.

    Args:
        obs_dim (tuple): shape of one observation.
        size (int): capacity, in transitions.
        gamma (float): discount of the n-step sum.
        n_step (int): largest number of rewards in a return (1: one-step DQN).
        num_envs (int): env copies whose transitions each ``store_batch`` writes.
        obs_dtype: numpy dtype of the stored observations (``uint8`` or ``bool`` for
            images, float32 otherwise).
        frames (int): ``k > 1`` when each observation is a stack of the env's last ``k``
            frames, ``(k, H, W)``, zero-padded at an episode's start (Atari's
            ``FrameStackObservation``): a slot then keeps only the newest frame of ``s``
            and of ``s'``, and ``get`` rebuilds the stacks from the earlier slots of the
            same copy (:meth:`frame_stacks`): 2 frames per transition instead of ``2k``.
    """

    def __init__(self, obs_dim, size, gamma=0.99, n_step=1, num_envs=1,
                 obs_dtype=np.float32, frames=1):
        self.frames = frames
        if frames > 1:   # the newest frame only, and how many earlier ones are the episode's
            obs_dim = tuple(obs_dim)[1:]
            self.depth_buf = np.zeros(size, np.int8)
        obs_shape = core.combined_shape(size, obs_dim)
        self.obs_buf = np.zeros(obs_shape, obs_dtype)
        self.obs2_buf = np.zeros(obs_shape, obs_dtype)
        self.act_buf = np.zeros(size, np.int64)
        self.rew_buf = np.zeros(size, np.float32)
        self.done_buf = np.zeros(size, np.float32)
        self.end_buf = np.zeros(size, bool)
        self.gamma = gamma
        self.n_step = n_step
        self.num_envs = num_envs
        self.max_size = size
        self.ptr = 0    # the slot the next transition goes to
        self.size = 0   # number of slots in use

    def store(self, obs, act, rew, next_obs, done, end):
        """Write one transition into slot ``ptr`` and advance ``ptr`` (cyclically)."""
        if self.frames > 1:
            return self.store_batch(*(np.asarray(x)[None] for x in
                                      (obs, act, rew, next_obs, done, end)))
        slot = self.ptr
        if not math.isfinite(rew):  # NaN/inf reward from the env: stop at its step
            check_finite_reward(rew, self, slot, obs, act)
        self.obs_buf[slot], self.act_buf[slot], self.rew_buf[slot] = obs, act, rew
        self.obs2_buf[slot], self.done_buf[slot], self.end_buf[slot] = next_obs, done, end
        self.ptr = (slot + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def store_batch(self, obs, act, rew, next_obs, done, end):
        """Write ``len(rew)`` transitions (one per env copy: each argument has a row per
        copy) into slots ``ptr``, ``ptr + 1``, ... (cyclically) and advance ``ptr`` past them."""
        n, start = len(rew), self.ptr
        slots = slice(start, start + n) if start + n <= self.max_size else \
            (start + np.arange(n)) % self.max_size   # the batch wraps past the end
        if not np.isfinite(rew).all():  # NaN/inf reward from the env: stop at its step
            i = int(np.flatnonzero(~np.isfinite(rew))[0])
            check_finite_reward(rew[i], self, (start + i) % self.max_size, obs[i], act[i])
        if self.frames > 1:   # the newest frames; the earlier ones are in earlier slots
            self.depth_buf[slots] = self._depths(obs)
            obs, next_obs = obs[:, -1], next_obs[:, -1]
        self.obs_buf[slots], self.act_buf[slots], self.rew_buf[slots] = obs, act, rew
        self.obs2_buf[slots], self.done_buf[slots], self.end_buf[slots] = next_obs, done, end
        self.ptr = (start + n) % self.max_size
        self.size = min(self.size + n, self.max_size)

    def sample_batch(self, batch_size=32):
        """``get`` of ``batch_size`` slots drawn uniformly, with replacement (with frame
        stacks, among the slots whose earlier frames are still stored)."""
        idxs = np.random.randint(0, self.size, size=batch_size)
        if self.frames > 1:
            lost = ~self.has_frames(idxs)
            while lost.any():   # a few of the oldest slots, right after the buffer wrapped
                idxs[lost] = np.random.randint(0, self.size, size=int(lost.sum()))
                lost = ~self.has_frames(idxs)
        return self.get(idxs)

    # ---- Frame stacks (frames > 1): each frame stored once per slot ----

    def _depths(self, obs):
        """For each copy's stack ``obs[c]`` (k, H, W), how many of its k - 1 earlier frames
        belong to its episode (0 at the episode's first step): one more than at the copy's
        previous slot, unless that transition ended an episode. Checked against the frames
        stored there; a stack that starts over (all earlier frames zero) counts 0.

        Raises:
            ValueError: a stack does not continue the copy's previous one (the env does
                not stack its last k frames with zero padding).
        """
        k, n = self.frames, len(obs)
        prev = (self.ptr - self.num_envs + np.arange(n)) % self.max_size
        depth = np.zeros(n, np.int8)
        if self.size >= self.num_envs:
            depth = np.where(self.end_buf[prev], 0, np.minimum(self.depth_buf[prev] + 1, k - 1))
        for c in np.flatnonzero(depth):
            if not np.array_equal(obs[c, -2], self.obs_buf[prev[c]]):
                depth[c] = 0
        fresh = depth == 0
        if not (obs[fresh, :-1] == 0).all():
            raise ValueError(f"dqn: the replay of frame stacks (frames={k}) needs each "
                             f"observation to be the env's last {k} frames, zero-padded at "
                             "an episode's start (FrameStackObservation(env, k, "
                             "padding_type='zero')); this env's stacks do not continue")
        return depth

    def has_frames(self, idxs):
        """Whether slot ``idxs``'s earlier frames are still stored: once the buffer has
        wrapped, the oldest slots' history lies in slots that now hold the newest data."""
        age = (idxs - self.ptr) % self.max_size if self.size == self.max_size else idxs
        return age >= self.depth_buf[idxs].astype(np.int64) * self.num_envs

    def frame_stacks(self, idxs, newest):
        """The stacks ``(B, k, H, W)`` of slots ``idxs``: ``newest`` (B, H, W) last, before
        it the frames of the same copy's earlier slots (``num_envs`` apart), zeros where
        the episode had not begun."""
        k, E = self.frames, self.num_envs
        out = np.zeros((len(idxs), k, *newest.shape[1:]), newest.dtype)
        out[:, -1] = newest
        for j in range(1, k):
            have = self.depth_buf[idxs] >= j
            out[have, k - 1 - j] = self.obs_buf[(idxs[have] - j * E) % self.max_size]
        return out

    def get(self, idxs):
        """Batch of transitions ``idxs`` with their m-step returns.   [DQN line 9]

        For each ``i``, ``m <= n_step`` rewards of the same env copy are summed (its
        transitions lie ``E = num_envs`` slots apart): ``ret = sum_{k<m} gamma^k
        r_{i+kE}``, and the target bootstraps from ``obs2 = s'_{i+(m-1)E}`` with
        ``done = d_{i+(m-1)E}`` and discount ``disc = gamma^m``. The sum stops early
        after a transition marked ``end``, and at the copy's newest transition (one of
        the last ``E`` slots before ``ptr``, included): ``E`` slots further on lies a
        slot that is either still empty or, once the buffer has wrapped, older than
        ``i``.

        Returns a dict of tensors: ``obs``, ``obs2`` ``(B, *obs_dim)``; ``act`` ``(B,)``
        int64; ``ret``, ``done``, ``disc`` ``(B,)`` float32.
        """
        ret = np.zeros(len(idxs), dtype=np.float32)
        disc = np.ones(len(idxs), dtype=np.float32)
        last = idxs.copy()                          # last transition summed so far
        going = np.ones(len(idxs), dtype=bool)      # still adding rewards
        age = (idxs - self.ptr) % self.max_size     # 0: the oldest slot, max_size - 1: newest
        for k in range(self.n_step):
            step = k * self.num_envs                # the same copy, k steps later
            j = (idxs + step) % self.max_size
            if k > 0:   # past the newest slot, the next one would be empty or older than i
                going &= ~self.end_buf[last] & (age + step < self.max_size)
            ret += np.where(going, disc * self.rew_buf[j], 0.0)
            last = np.where(going, j, last)
            disc = np.where(going, disc * self.gamma, disc)
        if self.frames > 1:   # s'_last: the stack of s_last shifted by its newest s' frame
            obs = self.frame_stacks(idxs, self.obs_buf[idxs])
            before = self.frame_stacks(last, self.obs_buf[last])[:, 1:]
            obs2 = np.concatenate([before, self.obs2_buf[last][:, None]], axis=1)
        else:
            obs, obs2 = self.obs_buf[idxs], self.obs2_buf[last]
        batch = dict(obs=obs, act=self.act_buf[idxs], ret=ret,
                     obs2=obs2, done=self.done_buf[last], disc=disc)
        check_finite_rows(batch["obs"], batch["obs2"], idxs, self)  # NaN/inf observations
        return {key: torch.as_tensor(value) for key, value in batch.items()}


class PrioritizedReplayBuffer(ReplayBuffer):
    """Proportional prioritized replay (Schaul et al. 2016, Algorithm 1).

    Slot ``i`` is drawn with probability ``P(i) = p_i^alpha / sum_k p_k^alpha``
    (Eq. 1; the sum-tree stores ``p_i^alpha``) and weighted by
    ``w_i = (N P(i))^-beta`` (Eq. 2), divided by the largest weight of its batch.

    ``alpha`` is the priority exponent (0: uniform), ``eps`` keeps priorities > 0.
    """

    def __init__(self, obs_dim, size, gamma=0.99, n_step=1, alpha=0.6, eps=1e-6, num_envs=1,
                 obs_dtype=np.float32, frames=1):
        super().__init__(obs_dim, size, gamma, n_step, num_envs, obs_dtype, frames)
        self.tree = core.SumTree(size)
        self.alpha = alpha
        self.eps = eps
        self.max_priority = 1.0

    def store(self, *args):
        """[DQN line 6] A new transition gets the largest priority seen so far, so it
        is replayed soon at least once."""
        self.tree.update(self.ptr, self.max_priority)
        super().store(*args)

    def store_batch(self, *args):
        """[DQN line 6] ``store`` for a batch of transitions, one per env copy."""
        self.tree.update((self.ptr + np.arange(len(args[2]))) % self.max_size, self.max_priority)
        super().store_batch(*args)
        if self.frames > 1 and self.size == self.max_size:   # never draw a slot whose
            oldest = (self.ptr + np.arange((self.frames - 1) * self.num_envs)) % self.max_size
            lost = oldest[~self.has_frames(oldest)]                # frames were overwritten
            if len(lost):
                self.tree.update(lost, 0.0)

    def sample_batch(self, batch_size=32, beta=0.4):
        """[DQN line 8] Stratified draw: one uniform point in each of ``batch_size``
        equal segments of ``[0, total)``, found in the sum-tree. Returns ``get``'s
        batch plus ``weights`` ``(B,)`` and the numpy ``idxs``."""
        total = self.tree.total()
        points = (np.arange(batch_size) + np.random.rand(batch_size)) * (total / batch_size)
        idxs = np.minimum(self.tree.find(points), self.size - 1)   # float round-off guard
        probs = self.tree.get(idxs) / total
        weights = (self.size * probs) ** (-beta)
        batch = self.get(idxs)
        batch["weights"] = torch.as_tensor(weights / weights.max(), dtype=torch.float32)
        batch["idxs"] = idxs
        return batch

    def update_priorities(self, idxs, td_errors):
        """[DQN line 12] ``p_i <- |delta_i| + eps`` for the replayed slots; the tree
        stores ``p_i^alpha`` (so does ``max_priority``)."""
        priorities = (np.abs(td_errors) + self.eps) ** self.alpha
        self.tree.update(idxs, priorities)
        self.max_priority = max(self.max_priority, float(priorities.max()))


def linear_epsilon(t, eps_start, eps_end, eps_decay_steps):
    """Exploration rate at env step ``t``: ``eps_start`` at ``t = 0``, linear down to
    ``eps_end`` at ``t = eps_decay_steps``, constant afterwards.   [DQN line 4]"""
    frac = min(t / eps_decay_steps, 1.0) if eps_decay_steps > 0 else 1.0
    return eps_start + frac * (eps_end - eps_start)


@torch.no_grad()
def q_target(q_net, q_targ, data, double=False):
    """Targets ``y = ret + disc * (1 - done) * Q_targ(s', a*)``.   [DQN line 10]

    DQN (Mnih et al. 2015): ``a* = argmax_a Q_targ(s', a)``, the target network both
    picks and evaluates the next action. Double DQN (Eq. 4 of arXiv:1509.06461):
    ``a* = argmax_a Q(s', a)``, the online network picks and the target network
    evaluates, which removes most of the upward bias of the max. Returns ``(B,)``.
    """
    q_next_all = q_targ(data["obs2"])
    chooser = q_net(data["obs2"]) if double else q_next_all
    a_star = chooser.argmax(dim=1, keepdim=True)
    q_next = q_next_all.gather(1, a_star).squeeze(1)
    return data["ret"] + data["disc"] * (1 - data["done"]) * q_next


def dqn(env_fn, actor_critic=core.MLPQFunction, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=25, replay_size=int(1e5), gamma=0.99, lr=1e-3,
        batch_size=64, start_steps=1000, update_after=1000, update_every=2,
        target_update_every=500, polyak=None, eps_start=1.0, eps_end=0.01,
        eps_decay_steps=10000, eps_test=0.0, double=False, dueling=False,
        prioritized_replay=False, per_alpha=0.6, per_beta=0.4, per_eps=1e-6, n_step=1,
        huber=True, max_grad_norm=10.0, anneal_lr=True, num_test_episodes=10,
        max_ep_len=1000, logger_kwargs=dict(), save_freq=1, num_envs=1, updates_per_step=None,
        device="cpu", cuda_graph=True):
    """Train a DQN agent (with the chosen extensions) and return its Q-network.

    The defaults solve CartPole-v1 (test return 500) within 100k steps for the seeds
    of docs/benchmarks/dqn.rst, with and without the switches.

    Args:
        env_fn (callable): builds a gymnasium environment with a flat ``Box``
            observation space and a ``Discrete`` action space; called ``num_envs + 1``
            times (the training copies and a test env). Or it returns a batched task,
            a ``gymnasium.vector.VectorEnv`` such as
            ``gym.make_vec('spinup/CartPole-v1', num_envs=64)`` whose copies are the
            ``num_envs`` training envs (the test env is then one plain env of the same
            id).
        actor_critic (callable): ``actor_critic(observation_space, action_space,
            **ac_kwargs)`` returns an ``nn.Module`` with the members below (the
            default is ``core.MLPQFunction``).

            ===============================  ==============  ================================
            Member                           Shape           Meaning
            ===============================  ==============  ================================
            ``forward(obs)``                 (batch, n)      ``Q(s, a)`` for each of the
                                                             ``n`` actions
            ``act(obs, deterministic)``      () or (batch,)  numpy greedy action
                                                             ``argmax_a Q(obs, a)``;
                                                             ``deterministic`` is ignored
            ===============================  ==============  ================================

        ac_kwargs (dict): extra keyword arguments for ``actor_critic``
            (``hidden_sizes``, ``activation``); ``dueling=True`` is added when
            ``dueling`` is on.
        seed (int): seed of torch, numpy and the environments (copy ``i``:
            ``seed + i``, the test env ``seed + 1``).
        steps_per_epoch (int): env steps per epoch, all copies together (>= 1 and a
            multiple of ``num_envs``); one log row per epoch.
        epochs (int): number of epochs (>= 1); 25 x 4000 = 100k steps.
        replay_size (int): replay capacity in transitions (>= 1); 1e5 holds a whole
            default run.
        gamma (float): discount, ``0 <= gamma <= 1``.
        lr (float): Adam step size, > 0 (the start value when ``anneal_lr``).
        batch_size (int): transitions per gradient step (>= 1).
        start_steps (int): env steps with uniformly random actions before
            epsilon-greedy acting starts (>= 0).
        update_after (int): env steps collected before the first update (>= 0).
        update_every (int): one gradient step every ``update_every`` env steps
            (>= 1; the "update frequency" of the DQN paper), ``round(update_every *
            updates_per_step)`` of them when ``updates_per_step`` is set.
        target_update_every (int): env steps between two copies of the Q-network
            into the target network (>= 1); unused when ``polyak`` is set.
        polyak (float or None): if set (``0 <= polyak <= 1``, e.g. 0.995), the
            target network instead moves after every gradient step:
            ``theta_targ <- polyak * theta_targ + (1 - polyak) * theta``.
        eps_start (float): exploration rate at step 0, in ``[0, 1]``.
        eps_end (float): exploration rate after the decay, in ``[0, 1]``; with 0.05
            one all-switch CartPole seed ended below 475 (docs/benchmarks/dqn.rst).
        eps_decay_steps (int): env steps of the linear decay (>= 0).
        eps_test (float): exploration rate of test episodes, in ``[0, 1]`` (0: greedy).
        double (bool): Double DQN target.
        dueling (bool): dueling network (passes ``dueling=True`` to ``actor_critic``).
        prioritized_replay (bool): proportional prioritized replay.
        per_alpha (float): priority exponent, >= 0 (0: uniform).
        per_beta (float): importance-sampling exponent at the start, in ``[0, 1]``;
            it rises linearly to 1 over the run.
        per_eps (float): added to ``|TD error|`` so that no priority is 0 (> 0).
        n_step (int): rewards per return (>= 1; 1 is one-step DQN).
        huber (bool): Huber loss of the TD error (quadratic below 1, linear above);
            otherwise the squared error.
        max_grad_norm (float or None): clip the gradient's global norm to this value
            (> 0); ``None``: no clipping.
        anneal_lr (bool): step size from ``lr`` down to 0, linearly over
            ``epochs * steps_per_epoch`` env steps (logged as ``LR``). With a constant
            step size plain DQN keeps oscillating after it has solved CartPole
            (docs/benchmarks/dqn.rst); the decay lets the last epochs settle.
        num_test_episodes (int): test episodes at the end of each epoch (>= 0).
        max_ep_len (int): cut episodes after this many steps (>= 1); the cut is not
            terminal, targets bootstrap there.
        logger_kwargs (dict): keyword arguments for ``EpochLogger``.
        save_freq (int): ``pyt_save/model.pt`` is rewritten after every epoch (a
            crash or Ctrl-C loses at most the epoch in progress); in addition,
            every ``save_freq`` epochs (>= 1) a copy ``model{epoch}.pt`` is kept
            (epochs save_freq, 2 save_freq, ...; epochs count from 1).
        num_envs (int): env copies stepped together (>= 1): ``env_fn()`` called that
            many times, copy ``i`` seeded with ``seed + i``, or the copies of a batched
            task. One Q-network call acts for all of them (each copy explores on its own
            draw) and one ``store_batch`` puts their transitions in the buffer;
            ``steps_per_epoch`` must be a multiple of it. The step counts
            (``start_steps``, ``update_after``, ``update_every``, ``eps_decay_steps``,
            ``target_update_every``, epochs) count the env steps of all copies. An
            addition of this project, not in Spinning Up.
        updates_per_step (float or None): gradient steps per env step, the
            update-to-data ratio (> 0), as in DDPG, TD3 and SAC: every ``update_every``
            env steps the run takes ``round(update_every * updates_per_step)`` of them
            (at least 1, checked). ``None`` (the default) keeps DQN's own schedule, one
            gradient step per ``update_every`` env steps (a ratio of 1 / update_every).
            An addition of this project.
        device (str): where the networks train, ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or
            ``'auto'``; replay and acting stay on the CPU (docs/user/gpu.rst).
        cuda_graph (bool): on a GPU, capture the gradient step once as a CUDA graph and
            replay it (False: launch each kernel from Python).

    Returns:
        nn.Module: the trained Q-network.

    Raises:
        TypeError: a count that is not an int, a number that is not real.
        ValueError: an argument out of range, an unsupported space (``Box`` actions:
            use ddpg, td3 or sac), more than one MPI process, an unusable ``device``, a
            ``steps_per_epoch`` that is not a multiple of ``num_envs``, or a batched task
            with another number of copies than ``num_envs``. Raised before anything is
            written to disk.

    Source:
        Mnih et al. 2015; arXiv:1509.06461; arXiv:1511.06581; arXiv:1511.05952;
        Sutton and Barto 2018, Section 7.1; docs/algorithms/dqn.rst.
    """
    config = dict(locals())

    # ---- Setup: arguments and spaces first, then the logger ----
    # The door checks the arguments and the env before anything is written and makes the
    # test env; it also places the network, fixes the torch threads and keeps checkpoints.
    run = Run(dqn, config, test_env=True)
    env, envs, test_env = run.env, run.envs, run.test_env   # envs: the num_envs copies

    logger = EpochLogger(**logger_kwargs)
    logger.save_config(config)

    torch.manual_seed(seed)
    np.random.seed(seed)

    # [DQN line 1] [DQN line 2] Q-network, its target copy, an empty buffer
    if dueling:
        ac_kwargs = dict(ac_kwargs, dueling=True)
    if actor_critic is core.MLPQFunction:   # pixels get a CNN torso (DESIGN 21)
        actor_critic = core.default_q_function(env.observation_space)
    q_net = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
    actor = run.place(q_net)  # q_net trains on `device`; actor is q_net, or its CPU copy
    q_targ = deepcopy(q_net)
    q_targ.requires_grad_(False)
    logger.log("\nNumber of parameters: \t q: %d\n" % core.count_vars(q_net))
    obs_shape, space = env.observation_space.shape, env.observation_space
    # images keep their uint8/bool cells; stacked Atari frames are stored once each
    stored = dict(obs_dtype=space.dtype if core.is_image_space(space) else np.float32,
                  frames=run.frame_stack)
    if prioritized_replay:
        replay = PrioritizedReplayBuffer(obs_shape, replay_size, gamma, n_step,
                                         per_alpha, per_eps, num_envs, **stored)
    else:
        replay = ReplayBuffer(obs_shape, replay_size, gamma, n_step, num_envs, **stored)
    replay.source = run.label

    optimizer = adam(q_net.parameters(), lr=lr)
    logger.setup_pytorch_saver(q_net, ac_kwargs=ac_kwargs)
    total_steps = steps_per_epoch * epochs
    # [DQN line 7] gradient steps per round of update_every env steps
    n_updates = 1 if updates_per_step is None else round(update_every * updates_per_step)

    # What each epoch's checkpoint holds (a resume, resume=True, reads it back). The
    # epsilon, beta and learning-rate schedules are functions of the step t, so
    # restoring the epoch restores their positions (the lr also sits in optimizer).
    run.keep(logger, replay=replay, q_net=q_net, q_targ=q_targ, optimizer=optimizer)

    # ---- Losses ----
    def compute_loss_q(data):
        """[DQN line 11] ``mean_i w_i l(Q(s_i, a_i) - y_i)``, ``l`` Huber or square,
        ``w_i = 1`` without prioritized replay (Eq. 2 in Methods of Mnih et al. 2015;
        weights: Algorithm 1 of arXiv:1511.05952). Also returns ``Q(s_i, a_i)`` and
        the TD errors, detached."""
        q = q_net(data["obs"]).gather(1, data["act"].unsqueeze(1)).squeeze(1)
        y = q_target(q_net, q_targ, data, double)
        td_error = q - y
        if huber:
            per_sample = F.smooth_l1_loss(q, y, reduction="none")
        else:
            per_sample = td_error ** 2
        if prioritized_replay:
            per_sample = per_sample * data["weights"]
        return per_sample.mean(), q.detach(), td_error.detach()

    # ---- Update ----
    def gradient_step(data, key=0):
        """[DQN line 11] [DQN line 13] One Adam step on batch ``data`` and the soft target
        update; returns tensors (on a GPU this may be a replayed CUDA graph)."""
        optimizer.zero_grad()
        loss, q, td_error = compute_loss_q(data)
        loss.backward()
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(q_net.parameters(), max_grad_norm)
        optimizer.step()
        if polyak is not None:   # [DQN line 13] soft form
            polyak_update(q_net, q_targ, polyak)
        return dict(loss=loss.detach(), q=q, td_error=td_error)

    # on a GPU: the batch is copied into fixed tensors there and the step replayed
    step_call = run.captured(gradient_step, cuda_graph, logger.log)

    def update(t):
        """One gradient step at env step ``t`` ([DQN line 8] to [DQN line 13])."""
        # [DQN line 8] prioritized replay: beta rises linearly from per_beta to 1
        if prioritized_replay:
            beta = per_beta + (1.0 - per_beta) * min(t / total_steps, 1.0)
            data = replay.sample_batch(batch_size, beta)
        else:
            data = replay.sample_batch(batch_size)

        # [DQN line 11]
        if anneal_lr:
            set_lr(optimizer, lr * (1.0 - t / total_steps))
        out = step_call({key: value for key, value in data.items() if key != "idxs"})

        if prioritized_replay:   # [DQN line 12]
            replay.update_priorities(data["idxs"], out["td_error"].cpu().numpy())
        logger.store(LossQ=out["loss"].item(), QVals=out["q"].cpu().numpy())

    # ---- Acting (training and test episodes alike) ----
    def epsilon_greedy(o, eps, action_space, uniform=False):
        """[DQN line 4] For each row of ``o`` (one per env copy): a uniform action when
        ``uniform`` or with probability ``eps``, else the greedy ``argmax_a Q(o, a)``,
        all rows in one call of ``act`` (which runs without grad)."""
        explore = np.ones(len(o), dtype=bool) if uniform else np.random.rand(len(o)) < eps

        def uniform_actions(k):   # k draws in one call, the numbers of k sample() calls
            return action_space.start + action_space.np_random.integers(action_space.n, size=k)
        if explore.all():
            return uniform_actions(len(o))
        a = actor.act(torch.as_tensor(o, dtype=torch.float32))
        if explore.any():
            a[explore] = uniform_actions(int(explore.sum()))
        return a

    def run_test_episodes():
        for _ in range(num_test_episodes):
            o, _ = test_env.reset()
            ep_ret, ep_len, ended = 0.0, 0, False
            while not ended:
                a = epsilon_greedy(o[None], eps_test, test_env.action_space)[0]
                o, r, terminated, truncated, _ = test_env.step(a)
                ep_ret += r
                ep_len += 1
                ended = terminated or truncated or ep_len == max_ep_len
            logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)

    # ---- Main loop ----
    start_time = time.time()
    o = envs.reset(seed)  # (num_envs, obs_dim): copy i seeded with seed + i
    env.action_space.seed(seed)
    test_env.reset(seed=seed + 1)
    test_env.action_space.seed(seed + 1)
    ep_ret, ep_len = np.zeros(num_envs), np.zeros(num_envs, dtype=int)  # per copy

    # Small networks, batches of 64: one thread is fastest (2000 steps took 15 s with
    # one, 286 s with two, on a busy 2-core machine) and reproducible. The door puts the
    # caller's setting back, and closes the environments, when training ends or fails.
    with run:
        epochs_done, start_time, (o, ep_ret, ep_len) = run.resume(0, start_time,
                                                                  (o, ep_ret, ep_len))
        if replay.size > 0:
            # A resume starts a new episode in a copy with ep_len 0 (the env could not be
            # restored exactly): mark that copy's last stored transition as an episode end,
            # so no n-step return spans both. (A fresh run's buffer is still empty.)
            last = replay.ptr - num_envs + np.flatnonzero(ep_len == 0)
            replay.end_buf[last % replay.max_size] = True
        for epoch in range(epochs_done + 1, epochs + 1):  # [DQN line 3]
            # t counts env steps; one batch step takes t, t + 1, ..., t + num_envs - 1
            for t in range((epoch - 1) * steps_per_epoch, epoch * steps_per_epoch, num_envs):
                # [DQN line 4] only uniform actions during the first start_steps steps
                eps = linear_epsilon(t, eps_start, eps_end, eps_decay_steps)
                a = epsilon_greedy(o, eps, env.action_space, uniform=t < start_steps)

                # [DQN line 5] envs.step resets the copies whose episode ended; their last
                # observations are in final_obs
                o2, r, terminated, truncated, final_obs = envs.step(a)
                ep_ret += r
                ep_len += 1
                ended = terminated | truncated
                episode_over = ended | (ep_len == max_ep_len)

                # [DQN line 6] one call for the copies' transitions; d = terminated; `end`
                # also marks truncations and cuts
                replay.store_batch(o, a, r, core.next_states(o2, final_obs, ended), terminated,
                                   episode_over)
                o = o2
                if episode_over.any():
                    for i in np.flatnonzero(episode_over):
                        logger.store(EpRet=ep_ret[i], EpLen=ep_len[i])
                    cut = np.flatnonzero(episode_over & ~ended)   # max_ep_len reached
                    if len(cut):
                        o[cut] = envs.reset_copies(cut)
                    ep_ret[episode_over], ep_len[episode_over] = 0.0, 0

                for t_env in range(t, t + num_envs):   # each env step of this batch step
                    # [DQN line 7]
                    if t_env >= update_after and t_env % update_every == 0:
                        for _ in range(n_updates):
                            update(t_env)
                        run.refresh()

                    # [DQN line 14] hard form: a copy is a polyak step with polyak = 0
                    if polyak is None and (t_env + 1) % target_update_every == 0:
                        polyak_update(q_net, q_targ, 0.0)

            # ---- End of epoch: test, then save and log ---- [DQN line 15]
            run_test_episodes()
            # model.pt replaced every epoch; model{epoch}.pt kept every save_freq epochs
            with run.epoch_end():   # a stop waits until model, row and checkpoint are written
                logger.save_epoch_state({"env": env}, epoch, save_freq)
                logger.log_tabular("Epoch", epoch)
                logger.log_tabular("EpRet", with_min_and_max=True)
                logger.log_tabular("TestEpRet", with_min_and_max=True)
                logger.log_tabular("EpLen", average_only=True)
                logger.log_tabular("TestEpLen", average_only=True)
                logger.log_tabular("TotalEnvInteracts", epoch * steps_per_epoch)
                logger.log_tabular("QVals", with_min_and_max=True)
                logger.log_tabular("LossQ", average_only=True)
                logger.log_tabular("Epsilon", eps)
                logger.log_tabular("LR", float(optimizer.param_groups[0]["lr"]))
                logger.log_tabular("Time", time.time() - start_time)
                logger.dump_tabular()
                run.save(epoch, start_time, (o, ep_ret, ep_len))
    return q_net

