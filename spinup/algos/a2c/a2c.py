"""Synchronous Advantage Actor-Critic (A2C).

An actor (the policy) and a critic (a state-value function) learn from short rollouts:
every ``n_steps`` environment steps, the actor follows the policy gradient weighted by
advantages that the critic bootstraps, and the critic regresses on the same n-step
returns. Several workers (MPI processes, ``--cpu N``) each run their own environment;
their gradients are averaged, and all of them take the same step, so they keep
identical parameters. With one process this is plain n-step actor-critic.

Papers and the equations the code uses:

* Mnih, Badia, Mirza, Graves, Lillicrap, Harley, Silver, Kavukcuoglu 2016,
  "Asynchronous Methods for Deep Reinforcement Learning", arXiv:1602.01783, Sec. 4
  and Algorithm S3 (its asynchronous form, A3C). A rollout of at most ``t_max`` steps
  gives the n-step return ``R_t = r_t + gamma r_{t+1} + ... + gamma^(n-t) V(s_n)``;
  the actor follows ``grad log pi(a_t|s_t) (R_t - V(s_t)) + beta grad H[pi(.|s_t)]``
  (the entropy bonus), the critic minimises ``(R_t - V(s_t))^2``. A2C is the
  synchronous variant: the workers wait for each other and the averaged gradient
  is applied once (Wu et al. 2017, the OpenAI Baselines A2C).
* Schulman, Moritz, Levine, Jordan, Abbeel 2016, arXiv:1506.02438, eq. 16: with
  ``lam < 1`` the advantage is GAE, ``A_t = sum_l (gamma lam)^l delta_{t+l}``;
  ``lam = 1`` (the default) is exactly the n-step advantage ``R_t - V(s_t)`` above.

Pseudocode, the same lines as docs/algorithms/a2c.rst (tests/docs/test_pseudocode_sync.py
checks that they agree):

.. begin-pseudocode

.. code-block:: none

   Every MPI process is a worker and applies the update itself: all hold the same θ, ψ.
   1. Input: policy weights θ, critic weights ψ (rank 0's copy on every process),
      Adam with learning rate lr, n processes
   2. for k = 0, 1, ..., U − 1 do   (U = epochs · steps_per_epoch / (n · num_envs · n_steps))
   3.     every worker w, in parallel: (g_θ^w, g_ψ^w) = Worker_w(θ, ψ)   (lines 10-13)
   4.     (g_θ, g_ψ) = (1/n) Σ_w (g_θ^w, g_ψ^w), one MPI all-reduce
   5.     if anneal_lr: set Adam's learning rate to lr · (1 − k / U)
   6.     if max_grad_norm: rescale (g_θ, g_ψ) so that its norm is at most max_grad_norm
   7.     one Adam step on (θ, ψ) along (g_θ, g_ψ)
   8.     after every steps_per_epoch / (n · num_envs · n_steps) iterations: save, log one row
   9. end for
   Worker_w(θ, ψ); its environment carries on from where the previous call left it:
  10.     run π_θ for n_steps steps of its num_envs env copies, storing s_t, a_t, r_t, V_ψ(s_t);
          a Box action is clipped for env.step
  11.     when a piece of trajectory ends (episode over, or the rollout's last step):
          v_end = 0 if terminated, else V_ψ(s_T); δ_t = r_t + γ V_ψ(s_t+1) − V_ψ(s_t)
          with V_ψ(s_T) = v_end; Â_t = Σ_l (γλ)^l δ_t+l; R̂_t = Â_t + V_ψ(s_t)
  12.     loss = mean_t [−log π_θ(a_t|s_t) Â_t − ent_coef · H[π_θ(·|s_t)]
                         + vf_coef · (V_ψ(s_t) − R̂_t)²], with Â_t and R̂_t held constant
  13.     return the gradient of loss with respect to (θ, ψ)

.. end-pseudocode

The code below marks each of these steps with an ``[A2C line N]`` comment.
"""
import time

import numpy as np
import torch

import spinup.algos.a2c.core as core
from spinup.machinery.door import Run, acting_error, check_finite_paths
from spinup.utils.advantages import gae_returns
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_pytorch import mpi_avg_grads, sync_params
from spinup.utils.mpi_tools import num_procs, proc_id


class A2CBuffer:
    """One rollout of one worker (``size = n_steps`` steps of each of its ``num_envs``
    env copies) and its advantages.

    A row per time step, a column per copy. ``store`` appends a row; ``finish_paths``
    closes the stretches of the copies' episodes that end at the current step (at an
    episode end, or at the end of the rollout); ``get`` computes the advantages, returns
    the rollout, ``size * num_envs`` samples, and empties the buffer.

    Args:
        obs_dim (tuple): shape of one observation.
        act_dim (tuple): shape of one action (``()`` for ``Discrete``).
        size (int): the rollout length ``n_steps``.
        gamma (float): discount factor.
        lam (float): GAE's lambda; 1 gives the n-step advantage of Mnih et al.
        num_envs (int): copies stepped together (columns).
        obs_dtype: the stored observations' dtype (images: their own uint8 or bool).
    """

    def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=1.0, num_envs=1,
                 obs_dtype=np.float32):
        def zeros(item_shape=None, dtype=np.float32):   # (size, num_envs, *item_shape)
            return np.zeros((size,) + core.combined_shape(num_envs, item_shape), dtype=dtype)

        self.obs_buf, self.act_buf = zeros(obs_dim, obs_dtype), zeros(act_dim)
        self.rew_buf = zeros()
        self.val_buf = zeros()  # critic's V(s_t) when acting
        self.adv_buf = zeros()  # written by get
        self.ret_buf = zeros()  # written by get
        # where an episode stretch ends: after which row, with which value, terminal?
        self.piece_end = np.zeros((size, num_envs), dtype=bool)
        self.end_val = np.zeros((size, num_envs))
        self.end_terminal = np.zeros((size, num_envs), dtype=bool)
        self.gamma, self.lam, self.max_size = gamma, lam, size
        self.ptr = 0                                   # next free row
        self.path_start = np.zeros(num_envs, dtype=int)  # per copy: first row not yet covered

    def store(self, obs, act, rew, val):
        """Record one step of every copy (leading axis num_envs): observation, action,
        reward and the critic's value."""
        i = self.ptr
        assert i < self.max_size, "A2CBuffer is full; get() must empty it first"
        self.obs_buf[i], self.act_buf[i] = obs, act
        self.rew_buf[i], self.val_buf[i] = rew, val
        self.ptr = i + 1

    def finish_paths(self, copies, last_vals, terminated):
        """Close, at the last stored step, the episode stretches of the copies ``copies``
        (index array); their advantages and value targets are computed by :meth:`get`.

        Args:
            copies (np.ndarray): the columns (copies).
            last_vals (np.ndarray): value after the last stored step, one per copy: 0 if
                the episode terminated there; otherwise ``V(s_T)``, which stands in for
                the rewards after the end of the rollout, a time limit or ``max_ep_len``.
            terminated (np.ndarray): bool, whether each stretch ended in a terminal state.
        """
        check_finite_paths(self, copies, self.path_start[copies], last_vals)
        row = self.ptr - 1
        self.piece_end[row, copies], self.end_val[row, copies] = True, last_vals
        self.end_terminal[row, copies] = terminated
        self.path_start[copies] = self.ptr

    def finish_path(self, last_val=0, env=0):
        """:meth:`finish_paths` for the one copy ``env`` (0 is terminal: see ``get``)."""
        terminal = np.asarray(last_val).dtype != np.float32   # a float32 value: V(s_T)
        self.finish_paths(np.array([env]), np.array([last_val]), np.array([terminal]))

    def get(self):
        """Empty the (full) buffer; return the rollout as float32 tensors ``obs``,
        ``act``, ``ret``, ``adv`` of ``size * num_envs`` samples. The advantages are not
        normalised: ``n_steps`` samples are too few for a stable mean and spread."""
        assert self.ptr == self.max_size, "A2CBuffer.get() needs a full rollout"
        # [A2C line 11] TD errors, then their (gamma lam)-discounted sums, of every
        # stretch; targets R_t = A_t + V(s_t): with lam = 1 the n-step returns.
        self.adv_buf[:], _ = gae_returns(self.rew_buf, self.val_buf, self.piece_end,
                                         self.end_val, self.end_terminal, self.gamma, self.lam)
        self.ret_buf = self.adv_buf + self.val_buf
        self.ptr, self.path_start[:], self.piece_end[:] = 0, 0, False
        arrays = dict(obs=self.obs_buf, act=self.act_buf, ret=self.ret_buf,
                      adv=self.adv_buf)
        samples = self.max_size * len(self.path_start)
        return {key: torch.as_tensor(arr.reshape(samples, *arr.shape[2:]), dtype=torch.float32)
                for key, arr in arrays.items()}


def compute_loss(ac, data, ent_coef, vf_coef):
    """The loss a worker minimises on its rollout   [A2C line 12].

    ``loss = -J(theta) - ent_coef * H + vf_coef * J(psi)`` with, averaged over the
    rollout, ``J(theta) = log pi(a_t|s_t) A_t`` (advantages held constant), the
    entropy ``H[pi(.|s_t)]`` and ``J(psi) = (V(s_t) - R_t)^2``.

    Args:
        ac (nn.Module): the actor-critic.
        data (dict): a rollout from :meth:`A2CBuffer.get`.
        ent_coef (float): entropy weight ``beta``.
        vf_coef (float): value-loss weight ``c_v``.

    Returns:
        ``(loss, info)``: the scalar loss tensor, and a dict of floats ``LossPi``,
        ``LossV``, ``Entropy`` for the logger.

    Source:
        Mnih et al. 2016, Sec. 4 (policy gradient with entropy bonus, value loss).
    """
    obs = data["obs"]
    dist, logp = ac.pi(obs, data["act"])
    loss_pi = -(logp * data["adv"]).mean()               # [A2C line 12]
    entropy = ac.pi.entropy(dist).mean()                 # [A2C line 12], the beta term
    loss_v = ((ac.v(obs) - data["ret"]) ** 2).mean()     # [A2C line 12]
    loss = loss_pi - ent_coef * entropy + vf_coef * loss_v
    info = dict(LossPi=loss_pi.item(), LossV=loss_v.item(), Entropy=entropy.item())
    return loss, info


def a2c(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, n_steps=20,
        gamma=0.99, lam=1.0, lr=1e-3, anneal_lr=True,
        ent_coef=0.0, vf_coef=0.5, max_grad_norm=None,
        max_ep_len=1000, logger_kwargs=dict(), save_freq=10, num_envs=1, device="cpu"):
    """Train an actor-critic with synchronous advantage actor-critic (A2C).

    Runs with one torch thread (a rollout of ``n_steps`` samples is too small for
    threads to pay off) and gives the caller's thread count back when it returns or
    raises.

    Args:
        env_fn (callable): ``env_fn()`` returns a new gymnasium environment with a flat
            ``Box`` observation space and a ``Box`` or ``Discrete`` action space; each
            worker makes its own.
        actor_critic (callable): called as
            ``actor_critic(env.observation_space, env.action_space, **ac_kwargs)``;
            returns an ``nn.Module`` with the members listed below.
        ac_kwargs (dict): extra arguments for ``actor_critic`` (the default takes
            ``hidden_sizes`` and ``activation``).
        seed (int): seed of torch, numpy and the environment; worker ``i`` uses
            ``seed + 10000 * i``.
        steps_per_epoch (int): environment steps per epoch, summed over the workers;
            each worker's share must be a positive multiple of ``n_steps``. Epochs
            only group logging and saving: A2C updates after every rollout.
        epochs (int): number of epochs, ``>= 1``; the run lasts
            ``steps_per_epoch * epochs`` environment steps.
        n_steps (int): rollout length per worker between two updates (Mnih et al.'s
            ``t_max``), ``>= 1``.
        gamma (float): discount factor, ``0 <= gamma <= 1``.
        lam (float): GAE's lambda, ``0 <= lam <= 1``. 1 is Mnih et al.'s n-step
            advantage; smaller values lower the variance at the price of bias.
        lr (float): Adam learning rate for actor and critic together, ``> 0``.
        anneal_lr (bool): lower the learning rate linearly to 0 over the run, as
            Mnih et al. do; the final policy settles instead of oscillating.
        ent_coef (float): weight ``beta >= 0`` of the entropy bonus. Mnih et al. use
            0.01; 0 measured best on CartPole (docs/benchmarks/a2c_a3c.rst).
        vf_coef (float): weight ``c_v >= 0`` of the critic's loss in the sum. It only
            matters with ``max_grad_norm``: the networks are separate and Adam rescales
            each parameter's step.
        max_grad_norm (float or None): clip the norm of the averaged gradient of all
            parameters to this value; ``None`` or 0 (the default) does not clip
            (Baselines' 0.5 measured worse on CartPole).
        max_ep_len (int): episode length cap in steps, ``>= 1``. Reaching it (or the
            environment's own time limit) ends the episode, bootstrapping from
            ``V(s_T)`` as for any truncation.
        logger_kwargs (dict): arguments of ``EpochLogger`` (``output_dir``, ``exp_name``).
        save_freq (int): ``pyt_save/model.pt`` is rewritten after every epoch (a
            crash or Ctrl-C loses at most the epoch in progress); in addition,
            every ``save_freq`` epochs (>= 1) a copy ``model{epoch}.pt`` is kept
            (epochs 0, save_freq, 2 save_freq, ...).
        num_envs (int): env copies each worker steps together, > 0: ``env_fn()``
            called that many times (env ``i`` seeded with seed + ``i``), or, when
            ``env_fn()`` returns a batched task (a ``gymnasium.vector.VectorEnv`` such
            as ``gym.make_vec('spinup/CartPole-v1', num_envs=64)``), its number of
            copies. One policy call acts for all of them, and a rollout holds
            ``n_steps * num_envs`` samples; ``steps_per_epoch`` must be a multiple of
            ``n_steps * num_envs * n`` (docs/user/parallel_envs.rst). An addition of
            this project.
        device (str): where the networks train, ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or
            ``'auto'`` (the CPU for this algorithm: a GPU gained it little); each rollout is
            copied there for the update and acting stays on the CPU (docs/user/gpu.rst).

    The actor-critic must have these members (``MLPActorCritic`` in ``core.py`` does):

    ============================  =================================================
    Member                        Meaning and shapes
    ============================  =================================================
    ``pi(obs, act=None)``         ``(dist, logp_a)``: a batch of torch distributions
                                  for ``obs`` (batch, obs_dim) and the (batch,)
                                  log-probabilities of ``act`` (``None`` without it)
    ``pi.entropy(dist)``          entropy of each distribution, (batch,), summed
                                  over action dimensions
    ``v(obs)``                    critic values, shape (batch,)
    ``step(obs)``                 numpy ``(a, v, logp_a)``: a sampled action
                                  (act_dim,) or (), ``V(obs)``, its log-probability
    ``act(obs, deterministic)``   numpy action only; the mode when ``deterministic``
    ============================  =================================================

    Returns:
        nn.Module: the trained actor-critic.

    Raises:
        ValueError: an argument outside its range, ``steps_per_epoch`` not a multiple
            of ``n_steps`` times the number of workers, or an unsupported observation
            or action space.
        TypeError: an argument of the wrong kind (the rules are in
            :mod:`spinup.machinery.arg_checks`), e.g. a float ``epochs`` or
            ``ac_kwargs['hidden_sizes']=64``.

    Source:
        Mnih et al. 2016 (Sec. 4, Algorithm S3, synchronous form);
        docs/algorithms/a2c.rst.
    """
    config = dict(locals())  # the arguments as passed, for config.json

    # ---- Checks (before anything is written to disk) ----
    # The door checks the arguments and the env; it also fixes the torch threads, places
    # the networks and saves and restores checkpoints.
    run = Run(a2c, config)
    env, envs = run.env, run.envs  # num_envs copies of the env, stepped together
    n_workers = num_procs()
    local_steps = steps_per_epoch // n_workers // num_envs  # per copy

    # One thread: on a busy 2-core machine two threads made A2C 7x slower (measured).
    with run:
        # ---- Setup: logger, seeds, actor-critic, buffer, optimizer, saver ----
        logger = EpochLogger(**logger_kwargs)
        logger.save_config(config)

        seed += 10000 * proc_id()
        torch.manual_seed(seed)
        np.random.seed(seed)

        # [A2C line 1] theta and psi; every worker starts from rank 0's copy.
        if actor_critic is core.MLPActorCritic:   # pixels get a CNN torso (DESIGN 21)
            actor_critic = core.default_actor_critic(env.observation_space)
        ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
        sync_params(ac)
        actor = run.place(ac, procs=n_workers)  # ac trains on `device`; actor: ac or a CPU copy
        logger.log("\nNumber of parameters: \t pi: %d, \t v: %d\n"
                   % (core.count_vars(ac.pi), core.count_vars(ac.v)))

        space = env.observation_space   # images are stored as they come
        obs_dtype = space.dtype if core.is_image_space(space) else np.float32
        buf = A2CBuffer(env.observation_space.shape, env.action_space.shape, n_steps,
                        gamma, lam, num_envs, obs_dtype)

        buf.source = run.label
        # One Adam for theta and psi together (the combined loss of compute_loss).
        optimizer = torch.optim.Adam(ac.parameters(), lr=lr)
        rollouts_per_epoch = local_steps // n_steps
        total_updates = epochs * rollouts_per_epoch
        logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

        # what each epoch's checkpoint holds (a resume, resume=True, reads it back)
        run.keep(logger, ac=ac, optimizer=optimizer)

        # ---- Losses: compute_loss above [A2C line 12] ----

        # ---- Update ----
        def update(n_done):
            """One synchronous step on this worker's rollout   [A2C lines 3-7]; ``n_done``
            updates came before it (for the learning-rate schedule, [A2C line 5])."""
            data = run.batch(buf.get())
            if anneal_lr:
                lr_now = lr * (1 - n_done / total_updates)
                for group in optimizer.param_groups:
                    group["lr"] = lr_now
            optimizer.zero_grad()
            loss, info = compute_loss(ac, data, ent_coef, vf_coef)
            loss.backward()    # [A2C line 13] this worker's (g_theta, g_psi)
            mpi_avg_grads(ac)  # [A2C line 4] sum over the workers, divide by n
            if max_grad_norm:  # [A2C line 6] same averaged gradient everywhere: same clip
                torch.nn.utils.clip_grad_norm_(ac.parameters(), max_grad_norm)
            optimizer.step()   # [A2C line 7]
            logger.store(**info)

        # ---- Main loop ----
        start_time = time.time()
        obs = envs.reset(seed)  # (num_envs, obs_dim)
        env.action_space.seed(seed)
        ep_ret, ep_len = np.zeros(num_envs), np.zeros(num_envs, dtype=int)
        is_box = type(env.action_space).__name__ == "Box"
        first_epoch, start_time, (obs, ep_ret, ep_len) = run.resume(0, start_time,
                                                                    (obs, ep_ret, ep_len))
        n_updates = run.saved.get("n_updates", 0)  # the lr schedule's position

        for epoch in range(first_epoch, epochs):
            for _ in range(rollouts_per_epoch):  # [A2C line 2] one iteration k
                for t in range(n_steps):
                    # [A2C line 10] Act with pi_theta for every copy at once. The envs see
                    # Gaussian samples clipped to the box; the buffer keeps the samples.
                    try:
                        a, v, _ = actor.step(torch.as_tensor(obs, dtype=torch.float32))
                    except ValueError as e:  # NaN/inf policy output: bad observation, else the net
                        raise acting_error(e, obs, buf, t, f"a2c: epoch {epoch}, step {t}") from e
                    env_a = (np.clip(a, env.action_space.low, env.action_space.high)
                             if is_box else a)
                    next_obs, r, terminated, truncated, final_obs = envs.step(env_a)
                    ep_ret += r
                    ep_len += 1
                    buf.store(obs, a, r, v)
                    obs = next_obs

                    timeout = truncated | (ep_len == max_ep_len)
                    rollout_done = t == n_steps - 1
                    if not (rollout_done or (terminated | timeout).any()):
                        continue
                    # [A2C line 11] Only a terminal state is worth 0; the end of the
                    # rollout and time limits bootstrap from the critic (docs page) at s_T,
                    # the copy's final observation if envs.step reset it.
                    over = np.flatnonzero(terminated | timeout)
                    ended = np.arange(num_envs) if rollout_done else over
                    last_vals, cut = np.zeros(len(ended)), ~terminated[ended]
                    if cut.any():
                        s_T = np.stack([final_obs[i] if truncated[i] else obs[i]
                                        for i in ended[cut]])
                        _, last_vals[cut], _ = actor.step(torch.as_tensor(s_T,
                                                                          dtype=torch.float32))
                    buf.finish_paths(ended, last_vals, ~cut)
                    if len(over):
                        logger.store(EpRet=ep_ret[over], EpLen=ep_len[over])
                        ep_ret[over], ep_len[over] = 0, 0
                        limit = over[~(terminated | truncated)[over]]  # max_ep_len
                        if len(limit):
                            obs[limit] = envs.reset_copies(limit)
                logger.store(VVals=buf.val_buf.flatten())  # the rollout's V(s_t), logged once
                update(n_updates)  # [A2C lines 3-7]
                run.refresh()
                n_updates += 1

            # [A2C line 8] model.pt replaced every epoch; model{epoch}.pt every save_freq epochs
            with run.epoch_end():   # a stop waits until model, row and checkpoint are written
                logger.save_epoch_state({"env": env}, epoch, save_freq)
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
                run.save(epoch + 1, start_time, (obs, ep_ret, ep_len), n_updates=n_updates)
    return ac

