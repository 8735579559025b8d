"""Soft Actor-Critic (SAC).

SAC is an off-policy actor-critic for continuous actions that maximises the return
plus ``alpha`` times the entropy of its stochastic policy. Two Q-functions regress
onto one soft Bellman target, built from the smaller of two target-network values and
an action drawn fresh from the current policy; the policy, a tanh-squashed Gaussian,
follows the gradient of that smaller Q-value through the reparameterisation trick.
The temperature ``alpha`` is either fixed or adapted so that the policy's entropy
stays near a target.

Papers:
    Haarnoja, Zhou, Abbeel and Levine 2018, "Soft Actor-Critic: Off-Policy Maximum
    Entropy Deep Reinforcement Learning with a Stochastic Actor", arXiv:1801.01290:
    the reparameterised policy objective (Eq. 11-12) and the log-likelihood of
    tanh-squashed actions (Appendix C, in ``core.squashed_gaussian_log_prob``).

    Haarnoja et al. 2018b, "Soft Actor-Critic Algorithms and Applications",
    arXiv:1812.05905: the soft value with the temperature written out (Eq. 3) inside
    the Q-function loss (Eq. 5), the policy loss (Eq. 7) and the temperature loss
    ``J(alpha) = E[-alpha log pi(a|s) - alpha H_target]`` (Eq. 18). As on the docs
    page, the value network of the first paper is replaced by the minimum of two
    target Q-functions (clipped double-Q).

Pseudocode (the same numbered lines as docs/algorithms/sac.rst; actions are in
the policy units [-1, 1]^n until line 5):

.. begin-pseudocode

.. code-block:: none

    1. Input: squashed-Gaussian policy π_θ, critics Q_φ1 and Q_φ2, empty replay buffer D
    2. Target copies φ_targ,1 ← φ1, φ_targ,2 ← φ2 (no target policy); α ← alpha, or if learned:
       log α ← log(1 if alpha = 'auto' else alpha), H̄ ← target_entropy (None: −n)
    3. for t = 0, E, 2E, ..., epochs · steps_per_epoch − E do  (t counts env steps; E = num_envs)
    4.     for each of the E copies of the env, in one policy call: if t < start_steps:
           a ~ Uniform([−1, 1]^n), else: a ← tanh(μ_θ(s) + σ_θ(s) ⊙ ξ), ξ ~ N(0, I)
    5.     Step the E copies together, each with clip(act_bias + act_scale · a, low, high)
    6.     Observe r, s′, terminated, truncated per copy; d ← terminated (a time limit is not an
           end); a copy whose episode ended is already reset, and s′ is its episode's last state
    7.     Store the E transitions (s, a, r, s′, d) in D in one call, overwriting the oldest
           entries when D is full; s ← the copies' current states
    8.     for each copy with terminated or truncated or max_ep_len steps: log EpRet, EpLen;
           reset it if the environment has not
    9.     for each t′ = t, ..., t + E − 1 with t′ ≥ update_after and t′ mod update_every = 0 do
    10.        repeat round(update_every · updates_per_step) times:
    11.            Sample a batch B of batch_size transitions from D, uniformly with replacement
    12.            ã′ ~ π_θ(·|s′) fresh; y ← r + γ (1 − d) (min_i Q_φtarg,i(s′, ã′) − α log π_θ(ã′|s′)),
                   computed without gradient
    13.            One Adam step on (φ1, φ2) for (1/|B|) Σ_B [(Q_φ1(s, a) − y)² + (Q_φ2(s, a) − y)²]
    14.            φ1, φ2 frozen: ã ← tanh(μ_θ(s) + σ_θ(s) ⊙ ξ); one Adam step on θ for
                   (1/|B|) Σ_B (α log π_θ(ã|s) − min_i Q_φi(s, ã))
    15.            if α is learned: one Adam step on log α for −(1/|B|) Σ_B α (log π_θ(ã|s) + H̄),
                   reusing line 14's log π values (detached); then α ← exp(log α)
    16.            φ_targ,i ← ρ φ_targ,i + (1 − ρ) φi for i = 1, 2, ρ = polyak
    17.    if t + E is a multiple of steps_per_epoch: save the model, run num_test_episodes
           episodes with the mean action tanh(μ_θ(s)), write one row of progress.txt (with α)

.. end-pseudocode

Lines of code that carry out a step of this pseudocode are tagged ``[SAC line N]``.
"""
import math
import time
from copy import deepcopy

import numpy as np
import torch

import spinup.algos.sac.core as core
from spinup.machinery.door import Run, check_finite_reward, check_finite_rows
from spinup.utils.logx import EpochLogger
from spinup.utils.torch_tools import adam, polyak_update



class ReplayBuffer:
    """First-in first-out store of transitions ``(s, a, r, s', d)``.

    The arrays are float32 and allocated once; when ``size`` transitions are stored,
    each new one overwrites the oldest. ``done`` holds gymnasium's ``terminated``
    only: an episode cut by a time limit still bootstraps from ``s'``
    (docs/algorithms/sac.rst, "Key Equations").

    Args:
        obs_dim (tuple): shape of one observation.
        act_dim (int or tuple): shape of one action.
        size (int): capacity, in transitions.
    """

    def __init__(self, obs_dim, act_dim, size):
        obs_shape = core.combined_shape(size, obs_dim)
        self.obs_buf = np.zeros(obs_shape, np.float32)
        self.obs2_buf = np.zeros(obs_shape, np.float32)
        self.act_buf = np.zeros(core.combined_shape(size, act_dim), np.float32)
        self.rew_buf = np.zeros(size, np.float32)
        self.done_buf = np.zeros(size, np.float32)
        self.max_size = size
        self.ptr = 0    # the slot the next transition goes to
        self.size = 0   # number of slots in use
        self.stored = 0  # transitions written in all (a GPU round syncs the rows since its last)

    def store(self, obs, act, rew, next_obs, done):
        """Write one transition into slot ``ptr`` and advance ``ptr`` (cyclically)."""
        slot = self.ptr
        if not math.isfinite(rew):  # NaN/inf reward from the env: stop at its step
            check_finite_reward(rew, self, slot, obs, act)
        self.obs_buf[slot], self.act_buf[slot], self.rew_buf[slot] = obs, act, rew
        self.obs2_buf[slot], self.done_buf[slot] = next_obs, done
        self.ptr = (slot + 1) % self.max_size
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
            dict: float32 tensors ``obs`` and ``obs2`` ``(batch, *obs_dim)``, ``act``
            ``(batch, act_dim)``, ``rew`` and ``done`` ``(batch,)``, sharing memory
            with freshly indexed numpy arrays (no second copy).
        """
        rows = np.random.randint(0, self.size, size=batch_size)
        columns = dict(obs=self.obs_buf, obs2=self.obs2_buf, act=self.act_buf,
                       rew=self.rew_buf, done=self.done_buf)
        batch = {key: column[rows] for key, column in columns.items()}
        check_finite_rows(batch["obs"], batch["obs2"], rows, self)  # NaN/inf observations
        return {key: torch.from_numpy(value) for key, value in batch.items()}


def sac(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99,
        polyak=0.995, lr=1e-3, alpha=0.2, batch_size=100, start_steps=10000,
        update_after=1000, update_every=50, num_test_episodes=10, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=1, target_entropy=None, num_envs=1,
        updates_per_step=1.0, device="cpu", cuda_graph=True):
    """Train a SAC agent and return its actor-critic.

    Args:
        env_fn (callable): builds a gymnasium environment; called ``num_envs + 1``
            times (the copies to train in, one env for test episodes). Or it returns a
            batched task, a ``gymnasium.vector.VectorEnv`` such as
            ``gym.make_vec('spinup/Pendulum-v1', num_envs=64)`` whose copies are the
            ``num_envs`` training envs (the test env is then one plain env of the same
            id). It needs a flat ``Box`` observation space and a ``Box`` action space
            with finite bounds.
        actor_critic (callable): ``actor_critic(observation_space, action_space,
            **ac_kwargs)`` returns an ``nn.Module`` with the members below (the
            default is ``core.MLPActorCritic``). Actions of ``pi``, ``q1`` and ``q2``
            are in policy units, ``[-1, 1]^act_dim``.

            ===========================  =======================  ===============================
            Member                       Shape                    Meaning
            ===========================  =======================  ===============================
            ``pi``                       ``a``: (batch, act_dim)  ``pi(obs, deterministic,
                                         ``logp``: (batch,)       with_logprob)``: a reparam.
                                                                  sample ``a`` in [-1, 1]
                                                                  (``tanh(mu)`` if deterministic)
                                                                  and ``log pi(a|s)`` (``None``
                                                                  unless ``with_logprob``), both
                                                                  differentiable
            ``q1(obs, act)``             (batch,)                 one estimate of ``Q(s, a)``
            ``q2(obs, act)``             (batch,)                 another estimate of ``Q(s, a)``
            ``act_scale``, ``act_bias``  (act_dim,)               tensors: env action =
                                                                  ``act_bias + act_scale * a``
            ``act(obs, deterministic)``  (act_dim,)               numpy action in env units
                                                                  (run by ``test_policy``)
            ===========================  =======================  ===============================

        ac_kwargs (dict): extra keyword arguments for ``actor_critic``
            (``hidden_sizes``, ``activation``).
        seed (int): seed of torch, numpy and the environments (copy ``i``: ``seed + i``,
            the test env ``seed + 1``).
        steps_per_epoch (int): env steps per epoch, all copies together (>= 1 and a
            multiple of ``num_envs``); one log row per epoch.
        epochs (int): number of epochs (>= 1).
        replay_size (int): replay capacity in transitions (>= 1); the default 1e6
            keeps every transition of a 1M-step run.
        gamma (float): discount, ``0 <= gamma <= 1``.
        polyak (float): ``rho`` of the target update ``phi_targ <- rho phi_targ +
            (1 - rho) phi``, ``0 <= polyak <= 1``; 0.995 lets a target network
            follow its Q-network over a few hundred updates.
        lr (float): Adam step size (> 0) of the policy, the Q-functions and
            ``log alpha``.
        alpha (float or 'auto'): entropy temperature, >= 0 (0.2 as in Spinning Up;
            it plays the role of an inverse reward scale). ``'auto'`` learns
            ``log alpha`` (starting from ``alpha = 1``) so that the policy's entropy
            tracks ``target_entropy`` (Eq. 18 of arXiv:1812.05905).
        batch_size (int): transitions per gradient step (>= 1).
        start_steps (int): env steps with actions drawn uniformly from the action
            box before the policy acts (>= 0); it fills the buffer with diverse data.
        update_after (int): env steps collected before the first update (>= 0).
        update_every (int): env steps between two blocks of updates (>= 1); each
            block has ``round(update_every * updates_per_step)`` updates, so with the
            default ``updates_per_step`` there is one update per env step on average,
            whatever its value.
        num_test_episodes (int): episodes with the mean action ``tanh(mu)`` at the
            end of each epoch (>= 0).
        max_ep_len (int): cut episodes after this many steps (>= 1). The cut is not a
            terminal state: the stored ``d`` stays 0.
        logger_kwargs (dict): keyword arguments for ``EpochLogger``.
        save_freq (int): ``pyt_save/model.pt`` is rewritten after every epoch (a
            crash or Ctrl-C loses at most the epoch in progress); in addition,
            every ``save_freq`` epochs (>= 1) a copy ``model{epoch}.pt`` is kept
            (epochs save_freq, 2 save_freq, ...; epochs count from 1).
        target_entropy (float or None): entropy target ``H_target`` of the learned
            temperature, in policy units; ``None`` means ``-act_dim``, the papers'
            heuristic. A number turns learning on even when ``alpha`` is a number
            (then the initial temperature, > 0).
        num_envs (int): env copies stepped together (>= 1): ``env_fn()`` called that
            many times, copy ``i`` seeded with ``seed + i``, or the copies of a batched
            task. One policy call acts for all of them and one ``store_batch`` puts their
            transitions in the buffer; ``steps_per_epoch`` must be a multiple of it. The
            step counts (``start_steps``, ``update_after``, ``update_every``, epochs)
            count the env steps of all copies. An addition of this project, not in
            Spinning Up.
        updates_per_step (float): gradient steps per env step, the update-to-data ratio
            (> 0): every ``update_every`` env steps the run takes
            ``round(update_every * updates_per_step)`` updates. The default 1 keeps the
            original schedule; many copies with a small ratio collect data fast and
            update less. An addition of this project.
        device (str): where the networks train, ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or
            ``'auto'``; acting stays on the CPU (docs/user/gpu.rst).
        cuda_graph (bool): on a GPU, capture each round of updates
            once as a CUDA graph and replay it (False: launch each kernel from Python).

    Returns:
        nn.Module: the trained actor-critic.

    Raises:
        TypeError: a count argument that is not an integer, or a number that is not
            a real number.
        ValueError: an argument out of its range, ``alpha`` neither a number nor
            ``'auto'``, an unsupported observation or action space (``Discrete``
            actions: use dqn), more than one MPI process, an unusable ``device``, a
            ``steps_per_epoch`` that is not a multiple of ``num_envs``, or a batched task
            with another number of copies than ``num_envs``. Raised before anything is
            written to disk.

    Source:
        Haarnoja et al. 2018, arXiv:1801.01290, and 2018b, arXiv:1812.05905;
        docs/algorithms/sac.rst.
    """
    config = dict(locals())

    # ---- Setup: arguments and spaces first, then the logger ----
    # The door checks the arguments and the env before anything is written, and makes the
    # test env; it also fixes the torch threads, places the networks and keeps checkpoints.
    run = Run(sac, config, test_env=True)
    env, envs, test_env = run.env, run.envs, run.test_env   # envs: the num_envs copies
    learn_alpha = alpha == "auto" or target_entropy is not None
    observation_space, action_space = env.observation_space, env.action_space
    (act_dim,) = action_space.shape

    # Batches of ~100 through small MLPs: one thread is fastest (extra threads cost more
    # in synchronisation than they save) and keeps a seed's numbers reproducible. The
    # caller's setting comes back, and the environments are closed, when training ends
    # or fails.
    with run:
        logger = EpochLogger(**logger_kwargs)
        logger.save_config(config)

        torch.manual_seed(seed)
        np.random.seed(seed)

        # [SAC line 1] actor-critic and an empty replay buffer; it trains on `device`, and
        # acting uses `actor` (itself on the CPU, else a CPU copy refreshed after updates)
        ac = actor_critic(observation_space, action_space, **ac_kwargs)
        actor = run.place(ac)
        # [SAC line 2] targets start as copies; only polyak_update moves them
        ac_targ = deepcopy(ac)
        ac_targ.requires_grad_(False)
        replay_buffer = ReplayBuffer(observation_space.shape, act_dim, replay_size)
        replay_buffer.source = run.label
        n_params = [core.count_vars(net) for net in (ac.pi, ac.q1, ac.q2)]
        logger.log("\nNumber of parameters: \t pi: %d, \t q1: %d, \t q2: %d\n" % tuple(n_params))

        # [SAC line 2] Temperature: a constant, or exp(log_alpha) with log_alpha learned.
        if learn_alpha:
            if target_entropy is None:
                target_entropy = -float(act_dim)
            alpha_0 = 1.0 if alpha == "auto" else float(alpha)
            log_alpha = torch.tensor(np.log(alpha_0), dtype=torch.float32, requires_grad=True,
                                     device=run.device)
            alpha = log_alpha.detach().exp()   # a tensor, refilled after each alpha step

        # Both Q-functions share one optimizer; a list (not a one-shot iterator) also
        # serves the freeze in update().
        q_params = list(ac.q1.parameters()) + list(ac.q2.parameters())
        pi_optimizer = adam(ac.pi.parameters(), lr=lr)
        q_optimizer = adam(q_params, lr=lr)
        # One scalar gains nothing from the fused kernel; the plain Adam also keeps the
        # learned-alpha runs of earlier versions bit for bit.
        alpha_optimizer = adam([log_alpha], lr=lr, fused=False) if learn_alpha else None

        logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

        # what each epoch's checkpoint holds (a resume, resume=True, reads it back)
        run.keep(logger, replay=replay_buffer, ac=ac, ac_targ=ac_targ,
                 pi_optimizer=pi_optimizer, q_optimizer=q_optimizer,
                 alpha_optimizer=alpha_optimizer, log_alpha=log_alpha if learn_alpha else None)

        # ---- Losses ----
        def compute_loss_q(data):
            """[SAC line 12] [SAC line 13] Squared error of both Q-functions against the
            target ``y = r + gamma (1 - d) (min_j Q_targ,j(s', a') - alpha log pi(a'|s'))``
            with ``a' ~ pi(.|s')`` sampled now (Eq. 3 and 5 of arXiv:1812.05905, without the
            factor 1/2 and with the clipped double-Q minimum)."""
            obs, act, obs2 = data["obs"], data["act"], data["obs2"]
            q1 = ac.q1(obs, act)
            q2 = ac.q2(obs, act)
            with torch.no_grad():
                act2, logp_act2 = ac.pi(obs2)
                q_next = torch.min(ac_targ.q1(obs2, act2), ac_targ.q2(obs2, act2))
                soft_value = q_next - alpha * logp_act2
                y = data["rew"] + gamma * (1 - data["done"]) * soft_value
            loss = ((q1 - y) ** 2).mean() + ((q2 - y) ** 2).mean()
            return loss, dict(Q1Vals=q1.detach(), Q2Vals=q2.detach())

        def compute_loss_pi(data):
            """[SAC line 14] ``mean(alpha log pi(a|s) - min_j Q_j(s, a))`` over the batch,
            ``a`` a reparameterised sample (Eq. 7 of arXiv:1812.05905; Eq. 12 of
            arXiv:1801.01290). Also returns ``log pi``, detached, for the temperature."""
            obs = data["obs"]
            act, logp = ac.pi(obs)
            q_min = torch.min(ac.q1(obs, act), ac.q2(obs, act))
            return (alpha * logp - q_min).mean(), logp.detach()

        def compute_loss_alpha(logp):
            """[SAC line 15] ``J(alpha) = mean(-alpha (log pi + H_target))``
            as a function of ``log alpha`` (Eq. 18 of arXiv:1812.05905): alpha grows
            while the entropy ``-log pi`` is below the target and shrinks above it."""
            return -(log_alpha.exp() * (logp + target_entropy)).mean()

        # ---- Update ----
        def update(data):
            """One gradient step on each loss, then the target networks; returns the values
            to log as tensors (read once per round: no GPU wait inside an update)."""
            # [SAC line 13]
            q_optimizer.zero_grad()
            loss_q, q_info = compute_loss_q(data)
            loss_q.backward()
            q_optimizer.step()

            # [SAC line 14] the policy's loss reaches the Q-functions' parameters too;
            # with them frozen its backward pass skips their gradients.
            for p in q_params:
                p.requires_grad = False
            pi_optimizer.zero_grad()
            loss_pi, logp = compute_loss_pi(data)
            loss_pi.backward()
            pi_optimizer.step()
            for p in q_params:
                p.requires_grad = True

            if learn_alpha:   # [SAC line 15]
                alpha_optimizer.zero_grad()
                compute_loss_alpha(logp).backward()
                alpha_optimizer.step()
                alpha.copy_(log_alpha.detach().exp())

            # [SAC line 16] SAC has no target policy: only the Q-functions have targets.
            polyak_update(ac.q1, ac_targ.q1, polyak)
            polyak_update(ac.q2, ac_targ.q2, polyak)
            return dict(LossQ=loss_q.detach(), LossPi=loss_pi.detach(), LogPi=logp, **q_info)

        # [SAC line 10] the updates of a round: update_every of them at the default ratio
        n_updates = round(update_every * updates_per_step)
        # On a GPU, the round of n_updates updates of [SAC lines 10-16]: the buffer is
        # copied there and the round may be replayed as one CUDA graph. None on the CPU,
        # where the main loop runs the updates one by one.
        update_round = run.update_round(update, replay_buffer, batch_size, n_updates,
                                        cuda_graph, log=logger.log)

        # ---- Acting (training and test episodes alike) ----
        act_scale, act_bias = actor.act_scale.numpy(), actor.act_bias.numpy()
        low, high = action_space.low, action_space.high

        def policy_action(o, deterministic=False):
            """[SAC line 4] ``a ~ pi(.|s)`` (or ``tanh(mu)``) in policy units, numpy."""
            with torch.no_grad():
                a, _ = actor.pi(torch.as_tensor(o, dtype=torch.float32), deterministic, False)
            return a.numpy()

        def to_env(a):
            """``[-1, 1]^act_dim`` -> ``[low, high]``: the map of ``ac.act``, then a clip
            (np.minimum/np.maximum: np.clip's result at a fraction of its overhead)."""
            return np.minimum(np.maximum(act_bias + act_scale * a, low), high)

        def run_test_episodes():
            for _ in range(num_test_episodes):
                o, _ = test_env.reset()
                ep_ret, ep_len, ended = 0.0, 0, False
                while not ended:
                    a = policy_action(o, deterministic=True)
                    o, r, terminated, truncated, _ = test_env.step(to_env(a))
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
        epochs_done, start_time, (o, ep_ret, ep_len) = run.resume(0, start_time,
                                                                  (o, ep_ret, ep_len))
        if learn_alpha and run.saved:
            alpha.fill_(run.saved["alpha"])
        for epoch in range(epochs_done + 1, epochs + 1):  # [SAC line 3]
            # t counts env steps; one batch step takes t, t + 1, ..., t + num_envs - 1
            for t in range((epoch - 1) * steps_per_epoch, epoch * steps_per_epoch, num_envs):
                # [SAC line 4] uniform over the box while t < start_steps, then the policy;
                # a row per copy
                if t < start_steps:
                    a = np.random.uniform(-1.0, 1.0, size=(num_envs, act_dim)).astype(np.float32)
                else:
                    a = policy_action(o)

                # [SAC line 5] [SAC line 6] envs.step resets the copies whose episode ended;
                # their last observations are in final_obs
                o2, r, terminated, truncated, final_obs = envs.step(to_env(a))
                ep_ret += r
                ep_len += 1
                ended = terminated | truncated
                # [SAC line 7] one call for the copies' transitions; only `terminated` is
                # stored as d = 1
                replay_buffer.store_batch(o, a, r, core.next_states(o2, final_obs, ended),
                                          terminated)
                o = o2

                # [SAC line 8] max_ep_len cuts an episode that the env has not ended
                over = ended | (ep_len == max_ep_len)
                if over.any():
                    for i in np.flatnonzero(over):
                        logger.store(EpRet=ep_ret[i], EpLen=ep_len[i])
                    cut = np.flatnonzero(over & ~ended)
                    if len(cut):
                        o[cut] = envs.reset_copies(cut)
                    ep_ret[over], ep_len[over] = 0.0, 0

                # [SAC line 9] [SAC line 10] a round for each env step t_env of this batch
                # step with t_env >= update_after and t_env % update_every == 0
                first = max(t, update_after)   # the first such t_env: a multiple, rounded up
                for t_env in range(first + -first % update_every, t + num_envs, update_every):
                    if update_round is not None:   # a GPU: the round replayed as one CUDA graph
                        logger.store(**update_round())
                    else:
                        for _ in range(n_updates):   # [SAC line 11] a new batch each time
                            logger.store(**update(replay_buffer.sample_batch(batch_size)))
                    run.refresh()

            # ---- End of epoch: test, then save and log ---- [SAC line 17]
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
                logger.log_tabular("Q1Vals", with_min_and_max=True)
                logger.log_tabular("Q2Vals", with_min_and_max=True)
                logger.log_tabular("LogPi", with_min_and_max=True)
                logger.log_tabular("LossPi", average_only=True)
                logger.log_tabular("LossQ", average_only=True)
                logger.log_tabular("Alpha", float(alpha))
                logger.log_tabular("Time", time.time() - start_time)
                logger.dump_tabular()
                run.save(epoch, start_time, (o, ep_ret, ep_len), alpha=float(alpha))
    return ac
