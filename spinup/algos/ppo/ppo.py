"""Proximal Policy Optimization (PPO-Clip) with GAE-lambda advantages and early stopping.

PPO collects an epoch of experience with the current policy, like VPG, but then takes
many gradient steps on that same batch. To keep the new policy close to the one that
collected the data, it maximizes a clipped objective that stops rewarding a change of
an action's probability beyond a factor 1 +- clip_ratio, and it stops the policy
steps of the epoch once the estimated KL divergence from the old policy grows too big.

Papers:
    Schulman, Wolski, Dhariwal, Radford, Klimov (2017), "Proximal policy optimization
    algorithms", arXiv:1707.06347, Eq. 7, the clipped surrogate objective
        L^CLIP(theta) = E_t[ min( r_t(theta) A_t,
                                  clip(r_t(theta), 1 - eps, 1 + eps) A_t ) ],
    with the probability ratio r_t(theta) = pi_theta(a_t|s_t) / pi_theta_old(a_t|s_t)
    and eps = clip_ratio. Line 9 uses it.

    Schulman, Moritz, Levine, Jordan, Abbeel (2016), "High-dimensional continuous
    control using generalized advantage estimation", ICLR, arXiv:1506.02438,
    Eq. 16: A_t = sum_{l>=0} (gamma * lam)^l delta_{t+l} with the TD residual
    delta_t = r_t + gamma V(s_{t+1}) - V(s_t). Line 5 uses it.

Pseudocode, the same lines as docs/algorithms/ppo.rst (tests/docs/test_pseudocode_sync.py
checks that they agree):

.. begin-pseudocode

.. code-block:: none

   1. Input: policy weights θ_0, value weights φ_0; rank 0's copy goes to every MPI process
   2. for k = 0, 1, ..., epochs − 1 do
   3.     each process steps its num_envs copies of the env together, steps_per_epoch / N
          env steps in all, with a_t ~ π_θk(·|s_t), and stores s_t, a_t, r_t, V_φk(s_t),
          log π_θk(a_t|s_t) per env; a Box action is clipped for env.step
   4.     when a piece of one env's trajectory ends (episode over, or the epoch's last step):
          v_end = 0 if terminated, else V_φk(s_T);
          R̂_t = Σ_l γ^l r_t+l + γ^(T−t) v_end
   5.     on that piece: δ_t = r_t + γ V_φk(s_t+1) − V_φk(s_t), with V_φk(s_T) = v_end;
          Â_t = Σ_l (γλ)^l δ_t+l; after the epoch Â ← (Â − mean) / (std + 1e-8),
          mean and std taken over all processes
   6.     for i = 0, 1, ..., train_pi_iters − 1 do (with minibatch_size: for each pass i, for
          each minibatch of a new random split of the batch, used as D_k by 7, 9 and 11)
   7.         KL_i = (1/|D_k|) Σ_t [log π_θk(a_t|s_t) − log π_θ(a_t|s_t)],
              averaged over processes
   8.         if KL_i > 1.5 · target_kl: leave the loop (StopIter = i)
   9.         one Adam step (pi_lr, averaged gradients) on the whole batch, minimising
              −(1/|D_k|) Σ_t [min(ρ_t Â_t, clip(ρ_t, 1 − ε, 1 + ε) Â_t) + c_H H(π_θ(·|s_t))],
              ρ_t = π_θ(a_t|s_t) / π_θk(a_t|s_t), c_H = ent_coef; the last iterate is θ_k+1
  10.     end for
  11.     repeat train_v_iters times: one Adam step (vf_lr, averaged gradients) on
          (1/|D_k|) Σ_t (V_φ(s_t) − R̂_t)², with clip_vloss each term the larger of that and
          (V_φk(s_t) + clip(V_φ(s_t) − V_φk(s_t), −ε, ε) − R̂_t)²; the result is φ_k+1
  12.     save the model, then log one row of progress.txt
  13. end for

.. end-pseudocode

The code that carries out pseudocode line N is tagged ``[PPO line N]``.
"""
import time

import gymnasium as gym
import numpy as np
import torch

import spinup.algos.ppo.core as core
from spinup.machinery.door import Run, acting_error, check_finite_paths
from spinup.utils.advantages import gae_returns
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_pytorch import mpi_avg_grads, sync_params
from spinup.utils.mpi_tools import mpi_avg, mpi_statistics_scalar, num_procs, proc_id


# ---- Buffer ----

class PPOBuffer:
    """One epoch of experience of one process, and the targets computed from it.

    Every array has a row per time step and a column per env copy (``num_envs`` copies
    step side by side). ``store`` appends a row; ``finish_paths`` closes the pieces of
    trajectory of some copies at the current step (an episode ended, or the epoch);
    ``get`` computes the advantages ``adv_buf`` and rewards-to-go ``ret_buf`` of every
    piece in one pass (:func:`spinup.utils.advantages.gae_returns`), hands the epoch to
    the update, flattened to ``size * num_envs`` samples, and empties the buffer.

    Args:
        obs_dim (tuple): shape of one observation.
        act_dim (tuple): shape of one action (``()`` for a ``Discrete`` space).
        size (int): steps per copy per epoch on this process.
        gamma (float): discount factor.
        lam (float): GAE lambda.
        num_envs (int): copies stepped together (columns).
        obs_dtype: the stored observations' dtype (images: their own uint8 or bool).
    """

    def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=0.95, num_envs=1,
                 obs_dtype=np.float32):
        def zeros(item_shape=(), dtype=np.float32):
            return np.zeros((size, num_envs, *item_shape), dtype=dtype)

        self.obs_buf, self.act_buf = zeros(obs_dim, obs_dtype), zeros(act_dim)
        self.rew_buf, self.val_buf, self.logp_buf = zeros(), zeros(), zeros()
        self.adv_buf, self.ret_buf = zeros(), zeros()
        # where a piece of trajectory ends: after which row, with which V(s_T), terminal?
        self.piece_end = np.zeros((size, num_envs), dtype=bool)
        self.end_val = np.zeros((size, num_envs))
        self.end_terminal = np.zeros((size, num_envs), dtype=bool)
        self.gamma, self.lam, self.max_size = gamma, lam, size
        self.ptr = 0                                        # next free row
        self.path_start_idx = np.zeros(num_envs, dtype=int)  # per copy: first row of its piece

    def store(self, obs, act, rew, val, logp):
        """Record one step of every copy: observations, actions, rewards, V(obs) and
        log pi(act|obs), each with a leading axis of length ``num_envs``."""
        if self.ptr >= self.max_size:
            raise RuntimeError(f"PPOBuffer is full ({self.max_size} steps); call get() first")
        row = self.ptr
        self.obs_buf[row], self.act_buf[row], self.rew_buf[row] = obs, act, rew
        self.val_buf[row], self.logp_buf[row] = val, logp
        self.ptr = row + 1

    def finish_paths(self, copies, last_vals, terminated):
        """Close the pieces of trajectory of the copies ``copies`` (an index array) at the
        last stored step.

        Args:
            copies (np.ndarray): which columns (copies).
            last_vals (np.ndarray): V(s_T) of each, the value of the state after the last
                stored step: 0 when the episode terminated, the critic's estimate when
                it was cut short (time limit, ``max_ep_len`` or end of the epoch), so
                that the rewards beyond the cut are still accounted for.
            terminated (np.ndarray): bool, whether each piece ended in a terminal state.
        """
        check_finite_paths(self, copies, self.path_start_idx[copies], last_vals)
        row = self.ptr - 1
        self.piece_end[row, copies], self.end_val[row, copies] = True, last_vals
        self.end_terminal[row, copies] = terminated
        self.path_start_idx[copies] = self.ptr

    def finish_path(self, last_val=0, env=0):
        """:meth:`finish_paths` for one copy ``env``, its ``adv_buf`` and ``ret_buf`` filled
        at once (to look at them before :meth:`get`)."""
        start = self.path_start_idx[env]
        terminal = np.asarray(last_val).dtype != np.float32   # a float32 value: V(s_T)
        self.finish_paths(np.array([env]), np.array([last_val]), np.array([terminal]))
        rows = slice(start, self.ptr)
        adv, ret = gae_returns(self.rew_buf[rows, env:env + 1], self.val_buf[rows, env:env + 1],
                               self.piece_end[rows, env:env + 1], self.end_val[rows, env:env + 1],
                               self.end_terminal[rows, env:env + 1], self.gamma, self.lam)
        self.adv_buf[rows, env], self.ret_buf[rows, env] = adv[:, 0], ret[:, 0]

    def get(self):
        """Return the epoch as float32 tensors ``obs, act, ret, adv, logp, val`` and reset.

        Rows (time) and columns (copies) are flattened into one batch of ``size *
        num_envs`` samples; the order does not matter to the losses, which average over
        the batch. The advantages are shifted and scaled to mean 0 and standard deviation
        1 over the whole batch of every MPI process (the 1e-8 keeps a batch of equal
        advantages from dividing by zero).
        """
        if self.ptr != self.max_size:
            raise RuntimeError(f"PPOBuffer.get: only {self.ptr} of {self.max_size} steps stored")
        # [PPO lines 4-5] R_t and the GAE advantages (Schulman et al. 2016, Eq. 16) of
        # every piece of trajectory, bootstrapped from its V(s_T).
        self.adv_buf[:], self.ret_buf[:] = gae_returns(
            self.rew_buf, self.val_buf, self.piece_end, self.end_val, self.end_terminal,
            self.gamma, self.lam)
        mean, std = mpi_statistics_scalar(self.adv_buf)
        # Normalised in place. (mean and std are float64, so from the second epoch on
        # adv_buf holds float64: kept as it was, so that a seed reproduces the curves
        # in docs/benchmarks bit for bit.)
        self.adv_buf = (self.adv_buf - mean) / (std + 1e-8)
        batch = dict(obs=self.obs_buf, act=self.act_buf, ret=self.ret_buf,
                     adv=self.adv_buf, logp=self.logp_buf, val=self.val_buf)
        self.ptr, self.path_start_idx[:], self.piece_end[:] = 0, 0, False
        samples = self.max_size * len(self.path_start_idx)
        return {key: torch.as_tensor(arr.reshape(samples, *arr.shape[2:]), dtype=torch.float32)
                for key, arr in batch.items()}


# ---- Algorithm ----

def ppo(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, clip_ratio=0.2, pi_lr=3e-4,
        vf_lr=1e-3, train_pi_iters=80, train_v_iters=80, lam=0.97, max_ep_len=1000,
        target_kl=0.01, logger_kwargs=dict(), save_freq=10, num_envs=1, device="cpu",
        ent_coef=0.0, clip_vloss=False, minibatch_size=None):
    """Train a policy with PPO-Clip (GAE-lambda advantages, early stopping on KL).

    Args:
        env_fn (callable): no arguments, returns a new ``gymnasium.Env`` with a flat
            ``Box`` observation space and a ``Box`` or ``Discrete`` action space, or a
            batched task of ``num_envs`` such envs (see ``num_envs``).
        actor_critic (callable): builds the agent as
            ``actor_critic(env.observation_space, env.action_space, **ac_kwargs)``;
            the ``nn.Module`` it returns must have the members in the table below.
            Default: :class:`spinup.algos.ppo.core.MLPActorCritic`.
        ac_kwargs (dict): extra keyword arguments for ``actor_critic``, e.g.
            ``hidden_sizes`` and ``activation`` (``--hid``, ``--act`` on the CLI).
        seed (int): seed of torch, numpy, the env and its action space; MPI process
            ``rank`` uses ``seed + 10000 * rank``.
        steps_per_epoch (int): env steps per epoch summed over all MPI processes,
            > 0 and a multiple of their number. Every policy step of an epoch uses
            the whole batch (or a minibatch), so a larger one means less noisy steps.
        epochs (int): number of epochs (collect, then update), > 0.
        gamma (float): discount factor, ``0 <= gamma <= 1``.
        clip_ratio (float): the epsilon of the clipped objective, 0 < clip_ratio < 1: a step gains
            nothing from moving an action's probability ratio outside
            ``[1 - clip_ratio, 1 + clip_ratio]``. Usually 0.1 to 0.3.
        pi_lr (float): Adam learning rate of the policy, > 0.
        vf_lr (float): Adam learning rate of the value function, > 0.
        train_pi_iters (int): at most this many Adam steps (passes) on the policy per
            epoch, > 0; early stopping (``target_kl``) usually ends the loop sooner.
        train_v_iters (int): Adam steps (passes) on the value loss per epoch, > 0.
        lam (float): GAE lambda, ``0 < lam <= 1``; values near 1 (default 0.97) keep
            the advantages nearly unbiased while the baseline cuts their variance.
        max_ep_len (int): episode length cap in env steps, > 0. Reaching it, or
            the env's own time limit, ends the episode and bootstraps from V(s_T).
        target_kl (float): the KL divergence between old and new policy that one
            epoch's update should roughly stay within, > 0. The policy steps stop
            when the estimate exceeds ``1.5 * target_kl``. Usually 0.01 to 0.05.
        logger_kwargs (dict): keyword arguments of
            :class:`spinup.utils.logx.EpochLogger` (``output_dir``, ``exp_name``).
        save_freq (int): ``pyt_save/model.pt`` is rewritten after every epoch's
            update (a crash or Ctrl-C loses at most the epoch in progress); in
            addition, every ``save_freq`` epochs (> 0) a copy ``model{epoch}.pt``
            is kept (epochs 0, save_freq, 2 save_freq, ...).
        num_envs (int): env copies each process steps together, > 0: ``env_fn()``
            called that many times (env ``i`` seeded with seed + ``i``), or, when
            ``env_fn()`` returns a batched task (a ``gymnasium.vector.VectorEnv`` such
            as ``gym.make_vec('spinup/CartPole-v1', num_envs=4096)``), its number of
            copies. One policy call acts for all of them, so more envs collect an
            epoch faster; each runs ``steps_per_epoch / (num_envs * MPI processes)``
            steps per epoch, which must be a whole number (docs/user/parallel_envs.rst).
            An addition of this project, not in Spinning Up.
        device (str): where the networks train, ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or
            ``'auto'`` (the CPU for this algorithm: a GPU gained it little); the epoch's
            data is copied there for the update and acting stays on the CPU
            (docs/user/gpu.rst).
        ent_coef (float): c_H >= 0 of [PPO line 9], the weight of the policy's entropy
            (of the whole action) added to the objective (a bonus for exploring).
        clip_vloss (bool): clip the value loss of [PPO line 11] as the PPO paper's code
            did, so one epoch moves no V(s_t) much beyond ``clip_ratio`` from V_φk(s_t).
        minibatch_size (int or None): samples per Adam step, 1 to the batch of one process.
            None: the whole batch. Else each iteration of ``train_pi_iters`` and
            ``train_v_iters`` is a pass over the batch in a new random order, one step per
            minibatch (the last may be smaller), and ``StopIter`` counts steps.
            ``ent_coef``, ``clip_vloss`` and ``minibatch_size`` are additions of this project.

    The actor-critic must provide (``obs_dim`` and ``act_dim`` are the sizes of
    the observation and the action; a ``Discrete`` action has no ``act_dim`` axis):

    =================================  ================================================
    Member                             Shapes and meaning
    =================================  ================================================
    ``step(obs)``                      obs tensor (num_envs, obs_dim) or (obs_dim,) ->
                                       numpy ``(a, v, logp_a)``: sampled actions
                                       (num_envs, act_dim), V(obs) and log pi(a|obs)
                                       of shape (num_envs,); no gradients
    ``act(obs, deterministic=False)``  obs -> numpy action (act_dim,): a sample, or
                                       the policy's mode when ``deterministic``
    ``pi(obs, act=None)``              obs (batch, obs_dim), act (batch, act_dim) ->
                                       ``(distribution, logp_a)`` with logp_a of shape
                                       (batch,), ``None`` when ``act`` is ``None``;
                                       the distribution has ``entropy()``
    ``v(obs)``                         obs (batch, obs_dim) -> values (batch,), not
                                       (batch, 1)
    =================================  ================================================

    ``pi`` and ``v`` are ``nn.Module`` objects: each gets its own Adam optimizer
    over its ``parameters()``.

    Returns:
        nn.Module: the trained actor-critic.

    Raises:
        TypeError: an argument of the wrong kind (the rules are in
            :mod:`spinup.machinery.arg_checks`), e.g. a float ``epochs`` or
            ``ac_kwargs['hidden_sizes']=64``.
        ValueError: an argument is out of range, ``steps_per_epoch`` is not a
            multiple of ``num_envs`` times the number of MPI processes, or the env's
            spaces are not supported. Raised before anything is written to disk.

    Source:
        docs/algorithms/ppo.rst (pseudocode, early stopping); Schulman et al.
        (2017), Eq. 7; Schulman et al. (2016), Eq. 16.
    """
    config = dict(locals())  # the arguments, for config.json

    # ---- Setup ----
    # The arguments and the env are checked before anything is written; the door also
    # fixes the torch threads, places the networks and saves and restores checkpoints.
    run = Run(ppo, config)
    env, envs = run.env, run.envs  # num_envs copies of the env, stepped together
    is_box = isinstance(env.action_space, gym.spaces.Box)

    with run:
        logger = EpochLogger(**logger_kwargs)
        logger.save_config(config)

        seed += 10000 * proc_id()
        torch.manual_seed(seed)
        np.random.seed(seed)

        # [PPO line 1] theta_0 and phi_0, the same on every MPI process.
        if actor_critic is core.MLPActorCritic:   # pixels get a CNN torso (DESIGN 21)
            actor_critic = core.default_actor_critic(env.observation_space)
        ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
        sync_params(ac)
        actor = run.place(ac)  # ac trains on `device`; actor is ac, or its CPU copy
        logger.log(f"\nNumber of parameters: pi {core.count_vars(ac.pi)}, "
                   f"v {core.count_vars(ac.v)}\n")

        local_steps = steps_per_epoch // num_procs() // num_envs  # per env
        space = env.observation_space   # images are stored as they come
        obs_dtype = space.dtype if core.is_image_space(space) else np.float32
        buf = PPOBuffer(env.observation_space.shape, env.action_space.shape,
                        local_steps, gamma, lam, num_envs, obs_dtype)
        buf.source = run.label
        pi_optimizer = torch.optim.Adam(ac.pi.parameters(), lr=pi_lr)
        vf_optimizer = torch.optim.Adam(ac.v.parameters(), lr=vf_lr)
        logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

        # what each epoch's checkpoint holds (a resume, resume=True, reads it back)
        run.keep(logger, ac=ac, pi_optimizer=pi_optimizer, vf_optimizer=vf_optimizer)

        # ---- Losses ----
        def compute_loss_pi(data):
            """Negated clipped objective L^CLIP of [PPO line 9] (Schulman et al. 2017,
            Eq. 7) on the batch, and ``kl``, the mean log-ratio old/new: the estimate
            of KL(old || new) that [PPO line 7] checks. Also returns the distribution
            ``pi`` and the ratios, for :func:`diagnostics`."""
            pi, logp = ac.pi(data["obs"], data["act"])
            adv = data["adv"]
            ratio = torch.exp(logp - data["logp"])  # r_t(theta)
            clipped = torch.clamp(ratio, 1 - clip_ratio, 1 + clip_ratio)
            objective = torch.min(ratio * adv, clipped * adv).mean()
            if ent_coef:   # c_H H(pi), the entropy bonus (joint: summed over a Box's axes)
                ent = pi.entropy()
                objective = objective + ent_coef * (ent.sum(-1) if is_box else ent).mean()
            kl = (data["logp"] - logp).mean()
            return -objective, kl, pi, ratio

        @torch.no_grad()
        def diagnostics(data):
            """What the log reports of the policy on the batch: the loss, ``kl``, the
            mean entropy ``ent`` and ``cf``, the fraction of samples whose ratio lies
            outside the clip range. Computed before and after the update only, so
            the steps in between pay for nothing but the loss and the KL."""
            loss_pi, kl, pi, ratio = compute_loss_pi(data)
            outside = (ratio < 1 - clip_ratio) | (ratio > 1 + clip_ratio)
            return dict(loss=loss_pi.item(), kl=kl.item(), ent=pi.entropy().mean().item(),
                        cf=outside.float().mean().item())

        def compute_loss_v(data):
            """Mean squared error of V_phi against the rewards-to-go ([PPO line 11]),
            each term the larger of it and the clipped one with ``clip_vloss``."""
            v, ret = ac.v(data["obs"]), data["ret"]
            loss = (v - ret) ** 2
            if clip_vloss:
                old = data["val"]
                loss = torch.max(loss, (old + (v - old).clamp(-clip_ratio, clip_ratio) - ret) ** 2)
            return loss.mean()

        # ---- Update ----
        def minibatches(data, passes):
            """[PPO line 6] ``passes`` times ``data``, or its minibatches in a new order each."""
            for _ in range(passes):
                if minibatch_size is None:
                    yield data
                    continue
                order = torch.randperm(len(data["adv"]), device=data["adv"].device)
                for idx in order.split(minibatch_size):
                    yield {key: value[idx] for key, value in data.items()}

        def gradient_step(optimizer, loss, module):
            """One Adam step on ``loss``, gradients averaged over MPI processes."""
            optimizer.zero_grad()
            loss.backward()
            mpi_avg_grads(module)
            optimizer.step()

        def update():
            data = run.batch(buf.get())
            before = diagnostics(data)
            with torch.no_grad():
                loss_v_before = compute_loss_v(data).item()
            # [PPO lines 6-9] Adam steps on the batch (or its minibatches); before each
            # one, the KL estimate on its samples (averaged over MPI processes) decides
            # whether to go on.
            for stop_iter, part in enumerate(minibatches(data, train_pi_iters)):
                loss_pi, kl, _, _ = compute_loss_pi(part)
                if mpi_avg(kl.item()) > 1.5 * target_kl:
                    logger.detail(f"Early stopping at step {stop_iter}: KL above 1.5 * target_kl.")
                    break
                gradient_step(pi_optimizer, loss_pi, ac.pi)
            else:
                stop_iter += 1  # never stopped early: every step was taken
            logger.store(StopIter=stop_iter)
            # [PPO line 11] regress V_phi on the rewards-to-go.
            for part in minibatches(data, train_v_iters):
                gradient_step(vf_optimizer, compute_loss_v(part), ac.v)
            # KL, ClipFrac and the loss changes describe the finished update: one more
            # evaluation of both losses on the same batch, after the last step.
            after = diagnostics(data)
            with torch.no_grad():
                loss_v_after = compute_loss_v(data).item()
            logger.store(LossPi=before["loss"], LossV=loss_v_before,
                         KL=after["kl"], Entropy=before["ent"], ClipFrac=after["cf"],
                         DeltaLossPi=after["loss"] - before["loss"],
                         DeltaLossV=loss_v_after - loss_v_before)

        # ---- Main loop ----
        start_time = time.time()
        o = envs.reset(seed)  # (num_envs, obs_dim)
        ep_ret, ep_len = np.zeros(num_envs), np.zeros(num_envs, dtype=int)
        first_epoch, start_time, episode = run.resume(0, start_time, (o, ep_ret, ep_len))
        o, ep_ret, ep_len = episode  # on a resume: the episodes in progress
        # buf.get() leaves float64 advantages behind after the first epoch
        buf.adv_buf = buf.adv_buf.astype(run.saved.get("adv_dtype", np.float32))
        for epoch in range(first_epoch, epochs):  # [PPO line 2]
            for t in range(local_steps):
                # [PPO line 3] act with pi_k, all envs in one call; the envs get the
                # actions clipped to their bounds, the buffer the samples themselves
                # (whose log-probs the ratio uses).
                try:
                    a, v, logp = actor.step(torch.as_tensor(o, dtype=torch.float32))
                except ValueError as e:  # NaN/inf policy output: bad observation, else the net
                    raise acting_error(e, o, buf, t, f"ppo: epoch {epoch}, step {t}") from e
                env_a = np.clip(a, env.action_space.low, env.action_space.high) if is_box else a
                o2, r, terminated, truncated, final_obs = envs.step(env_a)
                buf.store(o, a, r, v, logp)
                ep_ret, ep_len, o = ep_ret + r, ep_len + 1, o2

                reset_by_env = terminated | truncated  # already reset by envs.step
                episode_over = reset_by_env | (ep_len == max_ep_len)
                epoch_ended = t == local_steps - 1
                if not (epoch_ended or episode_over.any()):
                    continue  # mid-trajectory everywhere: keep collecting
                if epoch_ended and not episode_over.all():
                    logger.warn_once("cut_off", "Warning: trajectory cut off by epoch at "
                                     f"{ep_len[np.argmin(episode_over)]} steps.")
                # [PPO lines 4-5] close the piece of trajectory of every copy whose episode
                # ended (of every copy at the epoch's end): V(s_T) = 0 only after a true
                # terminal state, else the critic's estimate (the v that ac.step returns) of
                # s_T, which envs.step keeps in final_obs when it reset the copy.
                ended = np.arange(num_envs) if epoch_ended else np.flatnonzero(episode_over)
                last_vals = np.zeros(len(ended))
                cut = ~terminated[ended]
                if cut.any():
                    s_T = np.stack([final_obs[i] if reset_by_env[i] else o[i]
                                    for i in ended[cut]])
                    last_vals[cut] = actor.step(torch.as_tensor(s_T, dtype=torch.float32))[1]
                buf.finish_paths(ended, last_vals, ~cut)
                over = np.flatnonzero(episode_over)
                if len(over):
                    logger.store(EpRet=ep_ret[over], EpLen=ep_len[over])
                    ep_ret[over], ep_len[over] = 0.0, 0
                    cut_short = over[~reset_by_env[over]]  # max_ep_len reached: reset here
                    if len(cut_short):
                        o[cut_short] = envs.reset_copies(cut_short)

            logger.store(VVals=buf.val_buf.flatten())  # the epoch's V(s_t), logged once
            update()  # [PPO lines 6-11]
            run.refresh()

            # [PPO line 12] model.pt replaced every epoch; model{epoch}.pt every save_freq epochs
            with run.epoch_end():   # a stop waits until model, row and checkpoint are written
                logger.save_epoch_state({"env": env}, epoch, save_freq)
                logger.log_tabular("Epoch", epoch)
                logger.log_tabular("EpRet", with_min_and_max=True)
                logger.log_tabular("EpLen", average_only=True)
                logger.log_tabular("VVals", with_min_and_max=True)
                logger.log_tabular("TotalEnvInteracts", (epoch + 1) * steps_per_epoch)
                for key in ("LossPi", "LossV", "DeltaLossPi", "DeltaLossV", "Entropy", "KL",
                            "ClipFrac", "StopIter"):
                    logger.log_tabular(key, average_only=True)
                logger.log_tabular("Time", time.time() - start_time)
                logger.dump_tabular()
                run.save(epoch + 1, start_time, (o, ep_ret, ep_len),
                         adv_dtype=str(buf.adv_buf.dtype))
    return ac

