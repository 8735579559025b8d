"""Deep Deterministic Policy Gradient (DDPG).

DDPG is Q-learning for continuous actions. A critic ``Q(s, a)`` is regressed on
replayed transitions towards a Bellman target computed with slowly moving copies of
both networks, and a deterministic actor ``mu(s)`` is moved uphill on ``Q(s, mu(s))``
by the chain rule through the critic. The data come from ``mu`` plus Gaussian noise.

Papers:
    Lillicrap et al. 2016, "Continuous control with deep reinforcement learning",
    arXiv:1509.02971, Algorithm 1: the target ``y = r + gamma Q'(s', mu'(s'))``, the
    critic's mean squared error, the sampled policy gradient and the soft target
    update with ``tau = 1 - polyak``.
    Silver et al. 2014, "Deterministic Policy Gradient Algorithms" (ICML), Theorem 1:
    the gradient of the return of a deterministic policy is
    ``E[grad_theta mu(s) grad_a Q(s, a) at a = mu(s)]``, which is what back-propagating
    ``-Q(s, mu(s))`` computes.

Pseudocode (the same numbered lines as docs/algorithms/ddpg.rst; actions are in
the policy units [-1, 1]^n until line 5):

.. begin-pseudocode

.. code-block:: none

    1. Input: actor μ_θ, critic Q_φ, empty replay buffer D of capacity replay_size
    2. Target copies θ_targ ← θ, φ_targ ← φ (only line 15 changes them)
    3. for t = 0, E, 2E, ..., epochs · steps_per_epoch − E do  (t counts env steps; E = num_envs)
    4.     for each of the E copies of the env, in one policy call: if t < start_steps:
           a ~ Uniform([−1, 1]^n), else: a ← clip(μ_θ(s) + act_noise · ξ, −1, 1), ξ ~ N(0, I)
    5.     Step the E copies together, each with clip(act_bias + act_scale · a, low, high)
    6.     Observe r, s′, terminated, truncated per copy; d ← terminated (a time limit is not an
           end); a copy whose episode ended is already reset, and s′ is its episode's last state
    7.     Store the E transitions (s, a, r, s′, d) in D in one call, overwriting the oldest
           entries when D is full; s ← the copies' current states
    8.     for each copy with terminated or truncated or max_ep_len steps: log EpRet, EpLen;
           reset it if the environment has not
    9.     for each t′ = t, ..., t + E − 1 with t′ ≥ update_after and t′ mod update_every = 0 do
    10.        repeat round(update_every · updates_per_step) times (by default update_every times:
               one gradient step per environment step on average):
    11.            Sample a batch B of batch_size transitions from D, uniformly with replacement
    12.            y ← r + γ (1 − d) Q_φtarg(s′, μ_θtarg(s′)), computed without gradient
    13.            One Adam step on φ for (1/|B|) Σ_B (Q_φ(s, a) − y)²
    14.            φ frozen: one Adam step on θ for −(1/|B|) Σ_B Q_φ(s, μ_θ(s))
    15.            θ_targ ← ρ θ_targ + (1 − ρ) θ and φ_targ ← ρ φ_targ + (1 − ρ) φ, ρ = polyak
    16.    if t + E is a multiple of steps_per_epoch: save the model, run num_test_episodes
           noiseless episodes with μ_θ, write one row of progress.txt

.. end-pseudocode

The code below marks where each step happens with ``[DDPG line N]``.
"""
import math
import time
from copy import deepcopy

import numpy as np
import torch

import spinup.algos.ddpg.core as core
from spinup.machinery.door import Run, check_finite_reward, check_finite_rows
from spinup.utils.logx import EpochLogger
from spinup.utils.torch_tools import adam, polyak_update



class ReplayBuffer:
    """First-in first-out store of transitions ``(s, a, r, s', d)``, sampled uniformly.

    All fields live in preallocated float32 arrays of ``size`` rows; once they are
    full, each new transition overwrites the oldest one. ``done`` is the
    environment's ``terminated`` flag: a time-limit cut is not a terminal state and
    is stored as 0 (docs/algorithms/ddpg.rst, "Key Equations").

    Args:
        obs_dim (tuple): shape of one observation.
        act_dim (int): number of action components.
        size (int): capacity in transitions.
    """

    def __init__(self, obs_dim, act_dim, size):
        def rows(shape=None):
            return np.zeros(core.combined_shape(size, shape), dtype=np.float32)

        self.obs_buf, self.obs2_buf, self.act_buf = rows(obs_dim), rows(obs_dim), rows(act_dim)
        self.rew_buf, self.done_buf = rows(), rows()
        self.max_size = size
        self.ptr = 0    # row the next transition goes to
        self.size = 0   # rows filled so far
        self.stored = 0  # transitions written in all (a GPU round syncs the rows since its last)

    def store(self, obs, act, rew, next_obs, done):
        """Write one transition into row ``ptr`` and advance ``ptr`` (cyclically)."""
        row = self.ptr
        if not math.isfinite(rew):  # NaN/inf reward from the env: stop at its step
            check_finite_reward(rew, self, row, obs, act)
        self.obs_buf[row], self.act_buf[row], self.rew_buf[row] = obs, act, rew
        self.obs2_buf[row], self.done_buf[row] = next_obs, done
        self.ptr = (row + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)
        self.stored += 1

    def store_batch(self, obs, act, rew, next_obs, done):
        """Write ``len(rew)`` transitions (one per env copy: each argument has a row per
        copy) into rows ``ptr``, ``ptr + 1``, ... (cyclically) and advance ``ptr`` past them."""
        n, start = len(rew), self.ptr
        rows = slice(start, start + n) if start + n <= self.max_size else \
            (start + np.arange(n)) % self.max_size   # the batch wraps past the end
        if not np.isfinite(rew).all():  # NaN/inf reward from the env: stop at its step
            i = int(np.flatnonzero(~np.isfinite(rew))[0])
            check_finite_reward(rew[i], self, (start + i) % self.max_size, obs[i], act[i])
        self.obs_buf[rows], self.act_buf[rows], self.rew_buf[rows] = obs, act, rew
        self.obs2_buf[rows], self.done_buf[rows] = next_obs, done
        self.ptr = (start + n) % self.max_size
        self.size = min(self.size + n, self.max_size)
        self.stored += n

    def sample_batch(self, batch_size=32):
        """Draw ``batch_size`` stored transitions uniformly, with replacement.

        Returns:
            dict of float32 tensors (views of fresh numpy copies): ``obs`` and
            ``obs2`` ``(batch_size, *obs_dim)``, ``act`` ``(batch_size, act_dim)``,
            ``rew`` and ``done`` ``(batch_size,)``.
        """
        rows = np.random.randint(0, self.size, size=batch_size)
        fields = (("obs", self.obs_buf), ("obs2", self.obs2_buf), ("act", self.act_buf),
                  ("rew", self.rew_buf), ("done", self.done_buf))
        batch = {name: array[rows] for name, array in fields}
        check_finite_rows(batch["obs"], batch["obs2"], rows, self)  # NaN/inf observations
        return {name: torch.from_numpy(value) for name, value in batch.items()}


def ddpg(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
         steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99,
         polyak=0.995, pi_lr=1e-3, q_lr=1e-3, batch_size=100, start_steps=10000,
         update_after=1000, update_every=50, act_noise=0.1, num_test_episodes=10,
         max_ep_len=1000, logger_kwargs=dict(), save_freq=1, num_envs=1,
         updates_per_step=1.0, device="cpu", cuda_graph=True):
    """Train a deterministic policy and its Q-function with DDPG.

    Args:
        env_fn (callable): returns a new gymnasium environment; called ``num_envs + 1``
            times (the copies to train in, one env for test episodes). Or it returns a
            batched task, a ``gymnasium.vector.VectorEnv`` such as
            ``gym.make_vec('spinup/Pendulum-v1', num_envs=64)`` whose copies are the
            ``num_envs`` training envs (the test env is then one plain env of the same
            id). It needs a flat ``Box`` observation space and a ``Box`` action space
            with finite bounds.
        actor_critic (callable): called as ``actor_critic(env.observation_space,
            env.action_space, **ac_kwargs)``; returns an ``nn.Module`` with the
            members in the table below.
        ac_kwargs (dict): extra keyword arguments for ``actor_critic``
            (``hidden_sizes``, ``activation`` for the default one).
        seed (int): seeds torch, numpy, the envs (copy ``i``: ``seed + i``) and the
            test env (``seed + 1``); >= 0.
        steps_per_epoch (int): env steps per epoch, all copies together; an epoch ends
            with test episodes and one row of ``progress.txt``. >= 1 and a multiple of
            ``num_envs``.
        epochs (int): number of epochs; the run takes ``steps_per_epoch * epochs``
            env steps. >= 1.
        replay_size (int): capacity of the replay buffer, in transitions. The
            default (one million) keeps every transition of a 1M-step run. >= 1.
        gamma (float): discount factor, ``0 <= gamma <= 1``.
        polyak (float): ``rho`` of the target update ``targ <- rho * targ +
            (1 - rho) * online``, ``0 <= polyak <= 1``. Close to 1 (0.995) keeps
            the Bellman targets slow-moving, which stabilizes the critic.
        pi_lr (float): Adam learning rate of the policy, > 0.
        q_lr (float): Adam learning rate of the Q-function, > 0.
        batch_size (int): transitions per gradient step, >= 1.
        start_steps (int): number of first env steps with actions drawn uniformly
            from the action box instead of the policy (broad early data), >= 0.
        update_after (int): no gradient step before this many env steps, so the
            first batches are not drawn from a handful of transitions; >= 0.
        update_every (int): env steps between update phases, >= 1. Each phase
            makes ``round(update_every * updates_per_step)`` gradient steps, so with
            the default ``updates_per_step`` there is one gradient step per env step
            on average whatever this value; larger values only batch the Python work.
        act_noise (float): standard deviation of the Gaussian noise added to the
            policy's action while collecting data, in the policy's ``[-1, 1]``
            units (0.1 = 10% of the half-width of the action box); >= 0. Test
            episodes use no noise.
        num_test_episodes (int): noise-free episodes at the end of every epoch,
            >= 0 (0 logs ``nan`` test returns).
        max_ep_len (int): cap on the episode length in env steps, >= 1. Hitting
            it (or the env's own time limit) ends the episode without making the
            last state terminal: its transition still bootstraps.
        logger_kwargs (dict): keyword arguments for :class:`EpochLogger`
            (``output_dir``, ``exp_name``).
        save_freq (int): ``pyt_save/model.pt`` is rewritten after every epoch (a
            crash or Ctrl-C loses at most the epoch in progress); in addition,
            every ``save_freq`` epochs (>= 1) a copy ``model{epoch}.pt`` is kept
            (epochs save_freq, 2 save_freq, ...; epochs count from 1).
        num_envs (int): env copies stepped together (>= 1): ``env_fn()`` called that
            many times, copy ``i`` seeded with ``seed + i``, or the copies of a batched
            task. One policy call acts for all of them and one ``store_batch`` puts their
            transitions in the buffer; ``steps_per_epoch`` must be a multiple of it. The
            step counts (``start_steps``, ``update_after``, ``update_every``, epochs)
            count the env steps of all copies. An addition of this project, not in
            Spinning Up.
        updates_per_step (float): gradient steps per env step, the update-to-data ratio
            (> 0): every ``update_every`` env steps the run takes
            ``round(update_every * updates_per_step)`` of them. The default 1 keeps the
            original schedule; many copies with a small ratio collect data fast and
            update less. An addition of this project.
        device (str): where the networks train, ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or
            ``'auto'``; acting stays on the CPU (docs/user/gpu.rst).
        cuda_graph (bool): on a GPU, capture each round of updates
            once as a CUDA graph and replay it (False: launch each kernel from Python).

    The actor-critic must provide (``B`` a batch size, ``n = act_dim``; ``pi`` and
    ``q`` work in the policy's units ``[-1, 1]^n``):

    =============================  =================================  ==========================
    Member                         Shapes                             Meaning
    =============================  =================================  ==========================
    ``pi(obs)``                    ``(B, obs_dim) -> (B, n)``         tensor ``mu(s)``, in
                                                                      ``[-1, 1]``
    ``q(obs, act)``                ``(B, obs_dim), (B, n) -> (B,)``   tensor ``Q(s, a)``; flat,
                                                                      not ``(B, 1)``
    ``act(obs, deterministic)``    ``(obs_dim,) -> (n,)``             numpy action in env units
                                                                      (for ``test_policy``)
    =============================  =================================  ==========================

    Returns:
        nn.Module: the trained actor-critic.

    Raises:
        TypeError: an argument of the wrong kind (e.g. a float ``epochs``).
        ValueError: an argument out of its range, an observation space that is not
            a flat ``Box``, an action space that is not a bounded ``Box`` (e.g.
            ``Discrete``), more than one MPI process, an unusable ``device``, a
            ``steps_per_epoch`` that is not a multiple of ``num_envs``, or a batched task
            with another number of copies than ``num_envs``. Raised before anything is
            written to disk.

    Source:
        Lillicrap et al. 2016 (arXiv:1509.02971), Algorithm 1; the pseudocode and
        line table of docs/algorithms/ddpg.rst.
    """
    config = dict(locals())   # before any other name exists: config.json = the arguments

    # ---- Setup: checks first, nothing is written before they pass ----
    # The door checks the arguments and the env and makes the test env; it also fixes the
    # torch threads, places the networks and keeps the checkpoints.
    run = Run(ddpg, config, test_env=True)
    env, envs, test_env = run.env, run.envs, run.test_env   # envs: the num_envs copies

    # Small networks and batches of 100 run fastest on one thread; the caller's setting
    # comes back, and the environments are closed, when training ends or fails.
    with run:
        logger = EpochLogger(**logger_kwargs)
        logger.save_config(config)

        torch.manual_seed(seed)
        np.random.seed(seed)

        act_space = env.action_space
        act_dim = act_space.shape[0]
        # A policy action a in [-1, 1]^n goes to the env as act_bias + act_scale * a.
        # (the same float32 numbers as the default actor-critic's act_scale/act_bias)
        low, high = act_space.low, act_space.high
        low64, high64 = low.astype(np.float64), high.astype(np.float64)
        act_scale = ((high64 - low64) / 2).astype(np.float32)
        act_bias = ((high64 + low64) / 2).astype(np.float32)

        # [DDPG line 1] actor-critic and an empty replay buffer
        ac = actor_critic(env.observation_space, act_space, **ac_kwargs)
        actor = run.place(ac)  # ac trains on `device`; actor is ac, or its CPU copy
        replay_buffer = ReplayBuffer(obs_dim=env.observation_space.shape, act_dim=act_dim,
                                     size=replay_size)
        replay_buffer.source = run.label
        # [DDPG line 2] targets start as copies; only polyak_update changes them
        ac_targ = deepcopy(ac)
        ac_targ.requires_grad_(False)

        # A list, not a generator: it is walked twice per update to freeze and thaw Q.
        q_params = list(ac.q.parameters())
        pi_optimizer = adam(ac.pi.parameters(), lr=pi_lr)
        q_optimizer = adam(q_params, lr=q_lr)
        logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

        # what each epoch's checkpoint holds (a resume, resume=True, reads it back)
        run.keep(logger, replay=replay_buffer, ac=ac, ac_targ=ac_targ,
                 pi_optimizer=pi_optimizer, q_optimizer=q_optimizer)
        logger.log(f"\nNumber of parameters: \t pi: {core.count_vars(ac.pi)}, "
                   f"\t q: {core.count_vars(ac.q)}\n")

        # ---- Losses ----
        def compute_loss_q(data):
            """Mean squared Bellman error of ``Q`` [DDPG line 12] [DDPG line 13]."""
            obs, act, rew = data["obs"], data["act"], data["rew"]
            next_obs, done = data["obs2"], data["done"]
            q_sa = ac.q(obs, act)
            with torch.no_grad():   # the target y is a constant for this step
                q_next = ac_targ.q(next_obs, ac_targ.pi(next_obs))
                y = rew + gamma * (1 - done) * q_next   # [DDPG line 12]
            loss = (q_sa - y).pow(2).mean()
            return loss, dict(QVals=q_sa.detach())

        def compute_loss_pi(data):
            """``-mean Q(s, mu(s))``: its gradient is minus the deterministic policy
            gradient (Silver et al. 2014, Theorem 1) [DDPG line 14]."""
            obs = data["obs"]
            return -ac.q(obs, ac.pi(obs)).mean()

        # ---- Update ----
        def update(data):
            """One gradient step on Q, one on the policy, one target update; returns the
            values to log, as tensors."""
            q_optimizer.zero_grad()
            loss_q, q_info = compute_loss_q(data)
            loss_q.backward()
            q_optimizer.step()                      # [DDPG line 13]

            # Q is held fixed in the policy step: no gradient is computed for it.
            for p in q_params:
                p.requires_grad_(False)
            pi_optimizer.zero_grad()
            loss_pi = compute_loss_pi(data)
            loss_pi.backward()
            pi_optimizer.step()                     # [DDPG line 14]
            for p in q_params:
                p.requires_grad_(True)

            polyak_update(ac, ac_targ, polyak)      # [DDPG line 15]
            return dict(LossQ=loss_q.detach(), LossPi=loss_pi.detach(), **q_info)

        # [DDPG line 10] the updates of a round: update_every of them at the default ratio
        n_updates = round(update_every * updates_per_step)
        # On a GPU, the round of n_updates updates of [DDPG lines 10-15]: the buffer is
        # copied there and the round may be replayed as one CUDA graph. None on the CPU,
        # where the main loop runs the updates one by one.
        update_round = run.update_round(update, replay_buffer, batch_size, n_updates,
                                        cuda_graph, log=logger.log)

        # ---- Acting (training and test episodes alike) ----
        def policy_action(obs, explore):
            """``clip(mu(s) + eps, -1, 1)`` in policy units, ``eps ~ N(0, act_noise^2)``
            when exploring and 0 in test episodes [DDPG line 4]."""
            with torch.no_grad():
                a = actor.pi(torch.as_tensor(obs, dtype=torch.float32)).numpy()
            if explore:
                a += act_noise * np.random.randn(*a.shape).astype(np.float32)
            # (np.minimum/np.maximum: the same result as np.clip, a fraction of its overhead)
            return np.minimum(np.maximum(a, -1.0), 1.0)

        def to_env(a):
            """Policy units ``[-1, 1]`` -> the env's ``[low, high]`` (clipped there too:
            float32 rounding can land a hair outside the box)."""
            return np.minimum(np.maximum(act_bias + act_scale * a, low), high)

        def run_test_episodes():
            for _ in range(num_test_episodes):
                obs, _ = test_env.reset()
                ep_ret, ep_len, over = 0.0, 0, False
                while not over:
                    obs, rew, terminated, truncated, _ = test_env.step(
                        to_env(policy_action(obs, explore=False)))
                    ep_ret += rew
                    ep_len += 1
                    over = terminated or truncated or ep_len == max_ep_len
                logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)

        # ---- Main loop ----
        start_time = time.time()
        obs = envs.reset(seed)  # (num_envs, obs_dim): copy i seeded with seed + i
        env.action_space.seed(seed)
        test_env.reset(seed=seed + 1)
        test_env.action_space.seed(seed + 1)
        ep_ret, ep_len = np.zeros(num_envs), np.zeros(num_envs, dtype=int)  # per copy
        epochs_done, start_time, (obs, ep_ret, ep_len) = run.resume(0, start_time,
                                                                    (obs, ep_ret, ep_len))
        for epoch in range(epochs_done + 1, epochs + 1):  # [DDPG line 3]
            # t counts env steps; one batch step takes t, t + 1, ..., t + num_envs - 1
            for t in range((epoch - 1) * steps_per_epoch, epoch * steps_per_epoch, num_envs):
                # [DDPG line 4] uniform actions first, then the noisy policy; a row per copy
                if t < start_steps:
                    a = np.random.uniform(-1.0, 1.0, size=(num_envs, act_dim)).astype(np.float32)
                else:
                    a = policy_action(obs, explore=True)
                # [DDPG line 5] [DDPG line 6] env units in, terminated/truncated out; envs.step
                # resets the copies whose episode ended, their last observations in final_obs
                next_obs, rew, terminated, truncated, final_obs = envs.step(to_env(a))
                ep_ret += rew
                ep_len += 1
                ended = terminated | truncated
                # [DDPG line 7] one call for the copies' transitions; d = terminated: cut-off
                # episodes still bootstrap
                replay_buffer.store_batch(obs, a, rew, core.next_states(next_obs, final_obs, ended),
                                          terminated)
                obs = next_obs

                # [DDPG line 8] max_ep_len cuts an episode that the env has not ended
                over = ended | (ep_len == max_ep_len)
                if over.any():
                    for i in np.flatnonzero(over):
                        logger.store(EpRet=ep_ret[i], EpLen=ep_len[i])
                    cut = np.flatnonzero(over & ~ended)
                    if len(cut):
                        obs[cut] = envs.reset_copies(cut)
                    ep_ret[over], ep_len[over] = 0.0, 0

                # [DDPG line 9] [DDPG line 10] a round of n_updates gradient steps for each
                # env step t_env of this batch step with t_env >= update_after and
                # t_env % update_every == 0
                first = max(t, update_after)   # the first such t_env: a multiple, rounded up
                for t_env in range(first + -first % update_every, t + num_envs, update_every):
                    if update_round is not None:   # a GPU: the round replayed as one CUDA graph
                        logger.store(**update_round())
                    else:
                        for _ in range(n_updates):   # [DDPG line 11] a new batch each time
                            logger.store(**update(replay_buffer.sample_batch(batch_size)))
                    run.refresh()

            # ---- End of epoch: test, then save and log ---- [DDPG line 16]
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
                logger.log_tabular("LossPi", average_only=True)
                logger.log_tabular("LossQ", average_only=True)
                logger.log_tabular("Time", time.time() - start_time)
                logger.dump_tabular()
                run.save(epoch, start_time, (obs, ep_ret, ep_len))
    return ac

