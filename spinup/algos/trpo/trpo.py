"""Trust Region Policy Optimization (TRPO) and the Natural Policy Gradient (NPG).

Both methods move a stochastic policy by the largest step that keeps its action
distributions, on average over the visited states, within a KL-divergence ``delta``
of the old ones: the step is measured in what the policy does, not in how far the
parameters move. NPG takes the step that a quadratic model of the KL allows; TRPO
shrinks it until the exact KL limit holds and the surrogate objective improves.

Papers and the equations the code uses:

* Schulman, Levine, Moritz, Jordan, Abbeel 2015, "Trust Region Policy Optimization",
  arXiv:1502.05477. The problem solved each epoch is eq. 14, the sample version of
  eq. 12::

      maximise_theta  L(theta) = E[ pi_theta(a|s) / pi_k(a|s) * A_k(s, a) ]
      subject to      KLbar(theta) = E_s[ D_KL(pi_k(.|s) || pi_theta(.|s)) ] <= delta

  Appendix C replaces both by their Taylor expansions at theta_k, ``L ~ g^T s`` and
  ``KLbar ~ 1/2 s^T H s`` with ``s = theta - theta_k`` and ``H`` the Hessian of the
  KL (the Fisher matrix). The maximiser of that model is the step
  ``sqrt(2 delta / (x^T H x)) x`` with ``x = H^-1 g``; ``x`` comes from conjugate
  gradient using only products ``H v``, and a backtracking line search shrinks the
  step by ``backtrack_coeff^j`` until the true ``KLbar <= delta`` and ``L`` improves.
* Kakade 2001, "A Natural Policy Gradient" (NIPS 14): the direction ``H^-1 g``. NPG
  (``algo='npg'``) takes the model's step as it is, without the line search.
* Schulman, Moritz, Levine, Jordan, Abbeel 2016, "High-Dimensional Continuous Control
  Using Generalized Advantage Estimation", arXiv:1506.02438, eq. 16: the advantages
  ``A_t = sum_l (gamma lam)^l delta_{t+l}`` built from the TD errors
  ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)``.

Pseudocode, the same lines as docs/algorithms/trpo.rst (tests/docs/test_pseudocode_sync.py
checks that they agree):

.. begin-pseudocode

.. code-block:: none

   1. Input: policy weights θ_0, value weights φ_0 (rank 0's copy on every MPI process);
      KL limit δ, damping c, cg_iters, backtrack_coeff α, backtrack_iters K
   2. for k = 0, 1, ..., epochs − 1 do
   3.     each process steps its num_envs copies of the env together, steps_per_epoch / N
          env steps in all, with a_t ~ π_θk(·|s_t), and stores s_t, a_t, r_t, V_φk(s_t),
          log π_θk(a_t|s_t) per copy; a Box action is clipped for env.step
   4.     when a piece of trajectory ends (episode over, or the epoch's last step):
          v_end = 0 if terminated, else V_φk(s_T);
          R̂_t = Σ_l γ^l r_t+l + γ^(T−t) v_end
   5.     on that piece: δ_t = r_t + γ V_φk(s_t+1) − V_φk(s_t), with V_φk(s_T) = v_end;
          Â_t = Σ_l (γλ)^l δ_t+l; after the epoch Â ← (Â − mean) / (std + 1e-8),
          mean and std taken over all processes
   6.     g = gradient at θ_k of L(θ) = (1/|D_k|) Σ_t ρ_t(θ) Â_t, averaged over processes,
          where ρ_t(θ) = π_θ(a_t|s_t) / π_θk(a_t|s_t)
   7.     Hv = gradient at θ_k of (∇_θ KL̄(θ_k, θ))ᵀ v, averaged over processes, plus c·v
   8.     x ≈ H⁻¹ g by conjugate gradient from x = 0: at most cg_iters products Hv,
          fewer once the squared residual |g − Hx|² is below 1e-10
   9.     s = sqrt(2δ / (xᵀHx + 1e-8)) · x
  10.     if algo = 'npg': θ_k+1 = θ_k + s, taken without any check (BacktrackIters = 0)
  11.     else for j = 0, 1, ..., K − 1 do
  12.         θ = θ_k + α^j s; if KL̄(θ_k, θ) ≤ δ and L(θ) > L(θ_k), both averaged over
              processes: θ_k+1 = θ, BacktrackIters = j, leave the loop
  13.     if no j passed: θ_k+1 = θ_k (BacktrackIters = K)
  14.     repeat train_v_iters times: one Adam step (vf_lr, averaged gradients) on
          (1/|D_k|) Σ_t (V_φ(s_t) − R̂_t)²; the result is φ_k+1
  15.     save the model, then log one row of progress.txt
  16. end for

.. end-pseudocode

The code below marks each of these steps with a ``[TRPO line N]`` comment.
"""
import time

import numpy as np
import torch

import spinup.algos.trpo.core as core
from spinup.algos.trpo.core import (conjugate_gradient, flat_grad, get_flat_params,
                                    hessian_vector_product, set_flat_params)
from spinup.machinery.door import Run, acting_error, check_finite_paths
from spinup.utils.advantages import gae_returns
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_pytorch import mpi_avg_grads, sync_params
from spinup.utils.mpi_tools import mpi_avg, mpi_statistics_scalar, num_procs, proc_id


class TRPOBuffer:
    """One epoch of experience of this process, with its advantages and returns.

    A row per time step, a column per env copy (``num_envs`` copies step side by
    side). ``store`` appends a row, ``finish_paths`` closes the episodes (or the pieces
    of them) of some copies that end at the current step, ``get`` computes the targets
    of every piece, hands the epoch to the update, ``size * num_envs`` samples, and
    empties the preallocated arrays.

    Args:
        obs_dim (tuple): shape of one observation.
        act_dim (tuple): shape of one action (``()`` for a ``Discrete`` space).
        size (int): steps each copy takes on this process per epoch.
        gamma (float): discount factor; lam (float): GAE's lambda.
        num_envs (int): copies stepped together (columns).
    """

    def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=0.95, num_envs=1):
        def zeros(item_shape=None):   # (size, num_envs, *item_shape)
            return np.zeros((size,) + core.combined_shape(num_envs, item_shape), dtype=np.float32)

        self.obs_buf, self.act_buf = zeros(obs_dim), zeros(act_dim)
        self.rew_buf = zeros()
        self.val_buf = zeros()    # V_phi(s_t) when acting
        self.logp_buf = zeros()   # log pi_k(a_t|s_t)
        self.adv_buf = zeros()    # filled by get
        self.ret_buf = zeros()    # filled by get
        # where an episode piece ends: after which row, with which value, terminal or not
        self.piece_end = np.zeros((size, num_envs), dtype=bool)
        self.end_val = np.zeros((size, num_envs))
        self.end_terminal = np.zeros((size, num_envs), dtype=bool)
        self.gamma, self.lam, self.max_size = gamma, lam, size
        self.ptr = 0                                   # next free row
        self.path_start = np.zeros(num_envs, dtype=int)  # per copy: first row still open

    def store(self, obs, act, rew, val, logp):
        """Record one step of every copy (each argument has a leading axis num_envs):
        observation, action, reward, value and log-probability."""
        i = self.ptr
        assert i < self.max_size, "TRPOBuffer is full; get() must empty it first"
        self.obs_buf[i], self.act_buf[i], self.rew_buf[i] = obs, act, rew
        self.val_buf[i], self.logp_buf[i] = val, logp
        self.ptr = i + 1

    def finish_paths(self, copies, last_vals, terminated):
        """Close, at the last stored step, the episode pieces of the copies ``copies``
        (index array); their advantages and returns are computed by :meth:`get`.

        Args:
            copies (np.ndarray): the columns (copies).
            last_vals (np.ndarray): value of the state after the last stored step, one
                per copy: 0 when the episode terminated there, ``V_phi(s_T)`` when it was
                cut short (time limit, ``max_ep_len``, end of the epoch), so that the
                rewards the cut removed are estimated instead of taken to be 0.
            terminated (np.ndarray): bool, whether each piece ended in a terminal state.
        """
        check_finite_paths(self, copies, self.path_start[copies], last_vals)
        row = self.ptr - 1
        self.piece_end[row, copies], self.end_val[row, copies] = True, last_vals
        self.end_terminal[row, copies] = terminated
        self.path_start[copies] = self.ptr

    def get(self):
        """Empty the (full) buffer and return the epoch as float32 tensors.

        [TRPO lines 4-5] First the GAE advantages (Schulman et al. 2016, eq. 16) and the
        discounted rewards-to-go, the regression targets of V_phi, of every piece, each
        bootstrapped from its value at the cut. Advantages are then shifted and scaled to
        mean 0, standard deviation 1 over the steps of all MPI processes (the ``1e-8``
        guards against a zero spread).

        Returns:
            dict with ``obs``, ``act``, ``ret``, ``adv``, ``logp``, each with a leading
            axis of ``size * num_envs`` samples.
        """
        assert self.ptr == self.max_size, "TRPOBuffer.get() needs a full epoch"
        self.adv_buf[:], self.ret_buf[:] = gae_returns(
            self.rew_buf, self.val_buf, self.piece_end, self.end_val, self.end_terminal,
            self.gamma, self.lam)
        self.ptr, self.path_start[:], self.piece_end[:] = 0, 0, False
        mean, std = mpi_statistics_scalar(self.adv_buf)
        self.adv_buf = (self.adv_buf - mean) / (std + 1e-8)
        arrays = dict(obs=self.obs_buf, act=self.act_buf, ret=self.ret_buf,
                      adv=self.adv_buf, logp=self.logp_buf)
        samples = self.max_size * len(self.path_start)
        return {key: torch.as_tensor(arr.reshape(samples, *arr.shape[2:]), dtype=torch.float32)
                for key, arr in arrays.items()}


def backtracking_line_search(policy, theta_old, full_step, evaluate, surr_old, delta,
                             backtrack_iters=10, backtrack_coeff=0.8):
    """Shrink the step until it is inside the trust region and improves the surrogate.

    Candidates are ``theta_old + backtrack_coeff**j * full_step`` for
    ``j = 0 .. backtrack_iters - 1``; the first whose mean KL is ``<= delta`` and whose
    surrogate is larger than ``surr_old`` is kept.

    Args:
        policy (nn.Module): the policy; its parameters are set to each candidate.
        theta_old, full_step (Tensor): flat parameters before the step, and the flat
            step ``sqrt(2 delta / x^T H x) x``.
        evaluate (function): ``() -> (surrogate, kl)`` at the current parameters.
        surr_old (float): surrogate at ``theta_old``; delta (float): the KL limit.
        backtrack_iters (int), backtrack_coeff (float): ``K`` and ``alpha``.

    Returns:
        int: the accepted ``j``; ``backtrack_iters`` if none was accepted, in which
        case ``policy`` is put back to ``theta_old``.

    Source:
        Schulman et al. 2015, Appendix C; docs/algorithms/trpo.rst, [TRPO lines 11-13].
    """
    for j in range(backtrack_iters):
        set_flat_params(policy, theta_old + backtrack_coeff ** j * full_step)
        surr, kl = evaluate()
        if kl <= delta and surr > surr_old:
            return j
    set_flat_params(policy, theta_old)  # nothing acceptable: no step this epoch
    return backtrack_iters


def trpo(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
         steps_per_epoch=4000, epochs=50,
         gamma=0.99, delta=0.01, vf_lr=1e-3, train_v_iters=80,
         damping_coeff=0.1, cg_iters=10, backtrack_iters=10, backtrack_coeff=0.8,
         lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10, algo='trpo',
         num_envs=1, device="cpu"):
    """Train a policy with TRPO (or, with ``algo='npg'``, the natural policy gradient).

    Args:
        env_fn (callable): ``env_fn()`` returns a new gymnasium environment with a flat
            ``Box`` observation space and a ``Box`` or ``Discrete`` action space.
        actor_critic (callable): called as
            ``actor_critic(env.observation_space, env.action_space, **ac_kwargs)``;
            returns an ``nn.Module`` with the members listed below.
        ac_kwargs (dict): extra arguments for ``actor_critic`` (the default takes
            ``hidden_sizes`` and ``activation``).
        seed (int): seed of torch, numpy and the environment; MPI process ``i`` uses
            ``seed + 10000 * i``.
        steps_per_epoch (int): environment steps per epoch, summed over all MPI
            processes (a positive multiple of their number). One epoch is one policy
            update, so this is the batch size of each update.
        epochs (int): number of epochs (= policy updates), ``>= 1``.
        gamma (float): discount factor, ``0 <= gamma <= 1``.
        delta (float): the trust-region radius, a limit on the mean KL between the
            policies before and after a step, ``> 0``. 0.01 is the TRPO paper's value;
            larger steps learn faster until the quadratic model stops being accurate.
        vf_lr (float): Adam learning rate of the value function, ``> 0``.
        train_v_iters (int): Adam steps on the value function per epoch, ``>= 0``
            (0 keeps ``V_phi`` at its initial weights; see the docs' exercise 2.1).
        damping_coeff (float): ``d >= 0`` in ``(H + d I) x``; keeps conjugate gradient
            stable where the sampled Fisher matrix is nearly singular. 0.1 works well
            and is seldom worth tuning.
        cg_iters (int): conjugate-gradient iterations for ``x ~ H^-1 g``, ``>= 1``.
            More iterations solve more accurately at one ``H v`` product each.
        backtrack_iters (int): the number ``K`` of line-search candidates, ``>= 0``.
            When none is accepted the policy keeps its parameters and
            ``BacktrackIters`` is logged as ``K``. Unused by NPG.
        backtrack_coeff (float): the shrink factor ``alpha`` of the line search, in
            ``(0, 1)``; 0.8 tries step lengths 1, 0.8, 0.64, ... Unused by NPG.
        lam (float): GAE's lambda, ``0 <= lam <= 1``: 0 gives one-step TD
            advantages (low variance, biased by ``V_phi``), 1 Monte Carlo returns
            minus ``V_phi`` (unbiased, high variance); 0.97 is the GAE paper's choice.
        max_ep_len (int): episode length cap in steps, ``>= 1``. Reaching it (or the
            environment's own time limit) ends the episode, bootstrapping from
            ``V_phi(s_T)`` as for any truncation.
        logger_kwargs (dict): arguments of ``EpochLogger`` (``output_dir``, ``exp_name``).
        save_freq (int): ``pyt_save/model.pt`` is rewritten after every epoch's
            update (a crash or Ctrl-C loses at most the epoch in progress); in
            addition, every ``save_freq`` epochs (>= 1) a copy ``model{epoch}.pt``
            is kept (epochs 0, save_freq, 2 save_freq, ...).
        algo (str): ``'trpo'`` (with the line search) or ``'npg'`` (the full step).
        num_envs (int): env copies each process steps together, > 0: ``env_fn()``
            called that many times (env ``i`` seeded with seed + ``i``), or, when
            ``env_fn()`` returns a batched task (a ``gymnasium.vector.VectorEnv`` such
            as ``gym.make_vec('spinup/CartPole-v1', num_envs=4096)``), its number of
            copies. One policy call acts for all of them; each runs ``steps_per_epoch
            / (num_envs * MPI processes)`` steps per epoch, which must be a whole
            number (docs/user/parallel_envs.rst). An addition of this project.
        device (str): where the networks train, ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or
            ``'auto'`` (the CPU for this algorithm: a GPU gained it little); the epoch's
            data is copied there for the update and acting stays on the CPU
            (docs/user/gpu.rst).

    The actor-critic must have these members (``MLPActorCritic`` in ``core.py`` does):

    ============================  =================================================
    Member                        Meaning and shapes
    ============================  =================================================
    ``pi(obs, act=None)``         ``(dist, logp_a)``: a batch of torch distributions
                                  for ``obs`` (batch, obs_dim) and the (batch,)
                                  log-probabilities of ``act``, or ``None`` without
                                  ``act``. ``core.mean_kl`` must accept two such
                                  batches (``Categorical`` or ``Normal``).
    ``v(obs)``                    value estimates, shape (batch,)
    ``step(obs)``                 numpy ``(a, v, logp_a)`` for acting: a sampled
                                  action (act_dim,) or (), ``V(obs)`` and
                                  ``log pi(a|obs)``
    ``act(obs, deterministic)``   numpy action only; the mode when ``deterministic``
    ============================  =================================================

    Returns:
        nn.Module: the trained actor-critic.

    Raises:
        ValueError: an argument outside its range, ``algo`` not ``'trpo'``/``'npg'``,
            ``steps_per_epoch`` not a multiple of the number of MPI processes, or an
            unsupported observation or action space.
        TypeError: an argument of the wrong kind (the rules are in
            :mod:`spinup.machinery.arg_checks`), e.g. a float ``epochs`` or
            ``ac_kwargs['hidden_sizes']=64``.

    Source:
        Schulman et al. 2015 (eqs. 12 and 14, Appendix C); Kakade 2001; GAE:
        Schulman et al. 2016 (eq. 16); docs/algorithms/trpo.rst.
    """
    config = dict(locals())  # the arguments as passed, for config.json

    # ---- Checks (before anything is written to disk) ----
    # The door checks the arguments and the env; it also fixes the torch threads, places
    # the networks and saves and restores checkpoints.
    run = Run(trpo, config, name=algo if algo in ("trpo", "npg") else "trpo")
    env, envs = run.env, run.envs  # num_envs copies of the env, stepped together

    with run:
        # ---- Setup: logger, seeds, actor-critic, buffer, optimizer, saver ----
        logger = EpochLogger(**logger_kwargs)
        logger.save_config(config)

        seed += 10000 * proc_id()
        torch.manual_seed(seed)
        np.random.seed(seed)

        # [TRPO line 1] theta_0 and phi_0, the same on every process.
        ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
        sync_params(ac)
        actor = run.place(ac)  # ac trains on `device`; actor is ac, or its CPU copy
        logger.log("\nNumber of parameters: \t pi: %d, \t v: %d\n"
                   % (core.count_vars(ac.pi), core.count_vars(ac.v)))

        local_steps = steps_per_epoch // num_procs() // num_envs  # per copy
        buf = TRPOBuffer(env.observation_space.shape, env.action_space.shape, local_steps,
                         gamma, lam, num_envs)
        buf.source = run.label
        # The policy moves by the hand-made step below; only V_phi has an optimizer.
        vf_optimizer = torch.optim.Adam(ac.v.parameters(), lr=vf_lr)
        logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

        # what each epoch's checkpoint holds (a resume, resume=True, reads it back)
        run.keep(logger, ac=ac, vf_optimizer=vf_optimizer)

        # ---- Losses ----
        def compute_surrogate(data):
            """Surrogate advantage L(theta) = mean[ pi_theta(a|s) / pi_k(a|s) * A ]
            (Schulman et al. 2015, eq. 14). Its gradient at theta_k is the policy
            gradient g of [TRPO line 6]."""
            _, logp = ac.pi(data["obs"], data["act"])
            return (torch.exp(logp - data["logp"]) * data["adv"]).mean()

        def compute_loss_v(data):
            """Mean squared error of V_phi against the rewards-to-go [TRPO line 14]."""
            err = ac.v(data["obs"]) - data["ret"]
            return (err ** 2).mean()

        # ---- Update ----
        def update():
            data = run.batch(buf.get())
            pi_params = list(ac.pi.parameters())
            with torch.no_grad():
                pi_old, _ = ac.pi(data["obs"])   # pi_k: the fixed end of every KL below
                loss_v_before = compute_loss_v(data).item()

            def evaluate():
                """(surrogate, mean KL to pi_k) at the current parameters, averaged over
                the MPI processes so that every process accepts the same step."""
                with torch.no_grad():
                    surr_now = compute_surrogate(data).item()
                    kl_now = core.mean_kl(pi_old, ac.pi(data["obs"])[0]).item()
                return mpi_avg(surr_now), mpi_avg(kl_now)

            # [TRPO line 6] g = gradient of the surrogate at theta_k.
            surr = compute_surrogate(data)
            surr_before = mpi_avg(surr.item())
            g = mpi_avg(flat_grad(surr, pi_params).cpu().numpy())   # CG runs in numpy

            # [TRPO lines 7-8] x ~ H^-1 g. The KL is 0 at theta_k, its Hessian is not.
            kl = core.mean_kl(pi_old, ac.pi(data["obs"])[0])
            Hx = hessian_vector_product(kl, pi_params, damping_coeff)
            x = conjugate_gradient(Hx, g, cg_iters)

            # [TRPO lines 9-10] Step to the edge of the model trust region 1/2 s^T H s = delta;
            # NPG takes it as it is, TRPO backtracks [TRPO lines 11-13].
            step_len = np.sqrt(2 * delta / (x @ Hx(x) + 1e-8))
            theta_k = get_flat_params(ac.pi)   # on the training device
            full_step = torch.as_tensor(step_len * x, dtype=torch.float32, device=theta_k.device)
            if algo == 'npg':
                set_flat_params(ac.pi, theta_k + full_step)   # accepted without checks
                j = 0
            else:
                j = backtracking_line_search(ac.pi, theta_k, full_step, evaluate, surr_before,
                                             delta, backtrack_iters, backtrack_coeff)
                if j == backtrack_iters:
                    logger.log("Line search accepted no step; the policy is unchanged.")

            # [TRPO line 14] Regress V_phi on the rewards-to-go.
            for _ in range(train_v_iters):
                vf_optimizer.zero_grad()
                compute_loss_v(data).backward()
                mpi_avg_grads(ac.v)
                vf_optimizer.step()

            # Log what the step did: surrogate and KL are measured after it.
            surr_after, kl_after = evaluate()
            with torch.no_grad():
                entropy = pi_old.entropy().mean().item()
                loss_v_after = compute_loss_v(data).item()
            logger.store(LossPi=-surr_before, LossV=loss_v_before, KL=kl_after, Entropy=entropy,
                         DeltaLossPi=surr_before - surr_after,
                         DeltaLossV=loss_v_after - loss_v_before, BacktrackIters=j)

        # ---- Main loop ----
        start_time = time.time()
        obs = envs.reset(seed)  # (num_envs, obs_dim)
        env.action_space.seed(seed)
        ep_ret, ep_len = np.zeros(num_envs), np.zeros(num_envs, dtype=int)
        is_box = type(env.action_space).__name__ == "Box"
        first_epoch, start_time, episode = run.resume(0, start_time, (obs, ep_ret, ep_len))
        obs, ep_ret, ep_len = episode  # on a resume: the episodes in progress
        # buf.get() leaves float64 advantages behind after the first epoch
        buf.adv_buf = buf.adv_buf.astype(run.saved.get("adv_dtype", np.float32))
        for epoch in range(first_epoch, epochs):  # [TRPO line 2]
            for t in range(local_steps):
                # [TRPO line 3] Act with pi_k for every copy at once. The envs see Gaussian
                # samples clipped to the action box; the buffer keeps the samples, whose
                # log-probs L uses.
                try:
                    a, v, logp = actor.step(torch.as_tensor(obs, dtype=torch.float32))
                except ValueError as e:  # NaN/inf policy output: bad observation, else the net
                    raise acting_error(e, obs, buf, t, f"{algo}: epoch {epoch}, step {t}") from e
                env_a = np.clip(a, env.action_space.low, env.action_space.high) if is_box else a
                next_obs, r, terminated, truncated, final_obs = envs.step(env_a)
                ep_ret += r
                ep_len += 1
                buf.store(obs, a, r, v, logp)
                obs = next_obs

                timeout = truncated | (ep_len == max_ep_len)
                epoch_full = t == local_steps - 1
                if not (epoch_full or (terminated | timeout).any()):
                    continue
                if epoch_full and not (terminated | timeout).all():
                    logger.warn_once("cut_off", "Warning: trajectory cut off by epoch at "
                                     f"{ep_len[np.argmin(terminated | timeout)]} steps.")
                # [TRPO lines 4-5] Close the path of each copy whose episode ended (all of
                # them at the epoch's end). Only a terminal state is worth 0; a time limit
                # or the end of the epoch bootstraps from V_phi (see the docs page), at
                # s_T: the copy's final observation if envs.step reset it.
                ended = np.arange(num_envs) if epoch_full else np.flatnonzero(terminated | timeout)
                last_vals, cut = np.zeros(len(ended)), ~terminated[ended]
                if cut.any():
                    s_T = np.stack([final_obs[i] if truncated[i] else obs[i] for i in ended[cut]])
                    _, last_vals[cut], _ = actor.step(torch.as_tensor(s_T, dtype=torch.float32))
                buf.finish_paths(ended, last_vals, ~cut)
                over = np.flatnonzero(terminated | timeout)  # whole episodes: log them
                if len(over):
                    logger.store(EpRet=ep_ret[over], EpLen=ep_len[over])
                    ep_ret[over], ep_len[over] = 0, 0
                    limit = over[~(terminated | truncated)[over]]  # max_ep_len: reset here
                    if len(limit):
                        obs[limit] = envs.reset_copies(limit)

            logger.store(VVals=buf.val_buf.flatten())  # the epoch's V(s_t), logged once
            update()  # [TRPO lines 6-14]
            run.refresh()

            # [TRPO line 15] model.pt replaced every epoch; model{epoch}.pt every save_freq epochs
            with run.epoch_end():   # a stop waits until model, row and checkpoint are written
                logger.save_epoch_state({"env": env}, epoch, save_freq)
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
                logger.log_tabular("BacktrackIters", average_only=True)
                logger.log_tabular("Time", time.time() - start_time)
                logger.dump_tabular()
                run.save(epoch + 1, start_time, (obs, ep_ret, ep_len),
                         adv_dtype=str(buf.adv_buf.dtype))
    return ac


def npg(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50,
        gamma=0.99, delta=0.01, vf_lr=1e-3, train_v_iters=80,
        damping_coeff=0.1, cg_iters=10, backtrack_iters=10, backtrack_coeff=0.8,
        lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10, num_envs=1,
        device="cpu"):
    """Train a policy with the natural policy gradient (Kakade 2001).

    :func:`trpo` with ``algo='npg'``: the step ``sqrt(2 delta / x^T H x) x``, ``x = H^-1
    g``, is taken as it is, without line search (``backtrack_iters`` and
    ``backtrack_coeff`` have no effect; ``BacktrackIters`` is 0). Arguments, the
    actor-critic contract, ``Returns``, ``Raises`` and logged columns are :func:`trpo`'s.

    Source:
        Kakade 2001, "A Natural Policy Gradient"; docs/algorithms/trpo.rst.
    """
    return trpo(**locals(), algo='npg')  # locals() holds exactly npg's arguments

