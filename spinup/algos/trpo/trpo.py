"""Trust Region Policy Optimization (Schulman et al. 2015) and the Natural Policy Gradient
(Kakade 2002), with GAE-lambda advantages (Schulman et al. 2016).

Both solve, at every epoch, the Taylor-expanded trust-region problem

    max_theta  g^T (theta - theta_k)   s.t.  1/2 (theta - theta_k)^T H (theta - theta_k) <= delta

whose solution is ``theta_k + sqrt(2 delta / x^T H x) x`` with ``x = H^-1 g``. NPG takes that
step; TRPO backtracks along it until the true KL constraint holds and the surrogate improves.

Pseudocode lines (docs/algorithms/trpo.rst) are referenced as ``[TRPO line N]``.
"""
import time

import numpy as np
import torch
from torch.optim import Adam

import spinup.algos.trpo.core as core
from spinup.utils.logx import EpochLogger
from spinup.utils.mpi_pytorch import mpi_avg_grads, setup_pytorch_for_mpi, sync_params
from spinup.utils.mpi_tools import mpi_avg, mpi_statistics_scalar, num_procs, proc_id


class GAEBuffer:
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
        # GAE-lambda advantage: A_t = sum_l (gamma*lam)^l delta_{t+l}   [TRPO line 6]
        deltas = rews[:-1] + self.gamma * vals[1:] - vals[:-1]
        self.adv_buf[path_slice] = core.discount_cumsum(deltas, self.gamma * self.lam)
        # Rewards-to-go R_t, the targets for the value function   [TRPO line 5]
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


# ---------------------------------------------------------------------------------------
# Flat-parameter helpers. TRPO treats all policy parameters as one vector theta.
# ---------------------------------------------------------------------------------------
def get_flat_params(module):
    """All parameters of ``module`` concatenated into one 1-D tensor (a copy)."""
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def set_flat_params(module, flat):
    """Write the 1-D tensor ``flat`` back into the parameters of ``module`` (in order)."""
    flat = torch.as_tensor(flat, dtype=torch.float32)
    i = 0
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(flat[i:i + p.numel()].view_as(p))
            i += p.numel()


def flat_grad(y, params, **kwargs):
    """Gradient of the scalar ``y`` w.r.t. ``params``, as one 1-D tensor."""
    grads = torch.autograd.grad(y, params, **kwargs)
    return torch.cat([g.reshape(-1) for g in grads])


def hessian_vector_product(kl, params, damping_coeff):
    """Return ``Hx(x) = (H + damping_coeff * I) x`` where ``H`` is the Hessian of ``kl``
    w.r.t. ``params``, without ever building ``H``: with ``g_kl = grad kl``,
    ``H x = grad (g_kl . x)`` (double backprop). Products are averaged over MPI ranks.

    ``x`` and the result are 1-D numpy arrays (float64).
    """
    g_kl = flat_grad(kl, params, create_graph=True)  # keep graph: we differentiate it again

    def Hx(x):
        x_t = torch.as_tensor(x, dtype=torch.float32)
        hx = flat_grad(g_kl @ x_t, params, retain_graph=True)  # graph reused for every x
        return mpi_avg(hx.numpy()) + damping_coeff * np.asarray(x, dtype=np.float64)
    return Hx


def conjugate_gradient(Ax, b, cg_iters=10, residual_tol=1e-10):
    """Approximately solve ``A x = b`` for symmetric positive-definite ``A``, given only the
    function ``Ax(v) = A v`` (Hestenes & Stiefel 1952; Nocedal & Wright, Alg. 5.2).

    Args:
        Ax: function, 1-D numpy array -> 1-D numpy array.
        b (numpy array): right-hand side.
        cg_iters (int): maximum number of iterations (exact after ``len(b)``).
        residual_tol (float): stop when ``r^T r`` falls below it.
    """
    x = np.zeros_like(b, dtype=np.float64)
    r = np.array(b, dtype=np.float64)  # residual b - A x (x = 0)
    p = r.copy()                        # search direction
    r_dot_r = r @ r
    for _ in range(cg_iters):
        if r_dot_r < residual_tol:
            break
        Ap = Ax(p)
        alpha = r_dot_r / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        r_dot_r_new = r @ r
        p = r + (r_dot_r_new / r_dot_r) * p
        r_dot_r = r_dot_r_new
    return x


def backtracking_line_search(policy, theta_old, full_step, evaluate, surr_old, delta,
                             backtrack_iters=10, backtrack_coeff=0.8):
    """Set ``policy`` to ``theta_old + backtrack_coeff**j * full_step`` for the smallest
    ``j`` in ``0 .. backtrack_iters-1`` whose mean KL is ``<= delta`` and whose surrogate
    advantage improves on ``surr_old``.

    Args:
        evaluate: function ``() -> (surrogate, kl)`` of the policy's current parameters.

    Returns:
        ``j``; ``backtrack_iters`` when no step was accepted, in which case the policy is
        left at ``theta_old`` (no step).
    """
    for j in range(backtrack_iters):
        set_flat_params(policy, theta_old + backtrack_coeff ** j * full_step)
        surr, kl = evaluate()
        if kl <= delta and surr > surr_old:
            return j
    set_flat_params(policy, theta_old)
    return backtrack_iters


def trpo(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
         steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
         train_v_iters=80, damping_coeff=0.1, cg_iters=10, backtrack_iters=10,
         backtrack_coeff=0.8, lam=0.97, max_ep_len=1000, logger_kwargs=dict(),
         save_freq=10, algo='trpo'):
    """
    Trust Region Policy Optimization (with GAE-Lambda for advantage estimation),
    or the Natural Policy Gradient with ``algo='npg'``.

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

            TRPO also needs the KL-divergence between two outputs of ``pi``:
            ``core.mean_kl(pi_old, pi)`` handles ``Categorical`` and ``Normal``
            (diagonal Gaussian, summed over the last axis) distributions.

        ac_kwargs (dict): Any kwargs appropriate for the ActorCritic object
            you provided to TRPO (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators (each MPI process adds
            ``10000 * rank``).

        steps_per_epoch (int): Number of steps of interaction (state-action pairs)
            for the agent and the environment in each epoch, summed over all
            MPI processes.

        epochs (int): Number of epochs of interaction (equivalent to
            number of policy updates) to perform.

        gamma (float): Discount factor. (Always between 0 and 1.)

        delta (float): KL-divergence limit for TRPO / NPG update.
            (Should be small for stability. Values like 0.01, 0.05.)

        vf_lr (float): Learning rate for value function optimizer.

        train_v_iters (int): Number of gradient descent steps to take on
            value function per epoch.

        damping_coeff (float): Artifact for numerical stability, should be
            smallish. The Hessian-vector product uses ``(H + damping_coeff * I) x``.
            Probably don't play with this hyperparameter.

        cg_iters (int): Number of iterations of conjugate gradient to perform.
            More gives a more accurate ``H^-1 g``, at the cost of speed.
            Also probably don't play with this hyperparameter.

        backtrack_iters (int): Maximum number of steps allowed in the
            backtracking line search. If none is accepted the policy is not
            changed and ``BacktrackIters`` is logged as ``backtrack_iters``.

        backtrack_coeff (float): How far back to step during backtracking line
            search. (Always between 0 and 1, usually above 0.5.)

        lam (float): Lambda for GAE-Lambda. (Always between 0 and 1,
            close to 1.)

        max_ep_len (int): Maximum length of trajectory / episode / rollout.
            Reaching it (or the env's own time limit) cuts the episode and
            bootstraps from ``V(s_T)``.

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save
            the current policy and value function.

        algo (str): Either 'trpo' or 'npg': this code supports both, since they
            are almost the same (NPG takes the full step, no line search).

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

    if algo not in ('trpo', 'npg'):
        raise ValueError(f"trpo: algo must be 'trpo' or 'npg', not {algo!r}")
    if delta <= 0 or not 0 < backtrack_coeff < 1 or cg_iters < 1 or backtrack_iters < 0:
        raise ValueError(f"{algo}: need delta > 0, 0 < backtrack_coeff < 1, cg_iters >= 1 "
                         f"and backtrack_iters >= 0 (got {delta}, {backtrack_coeff}, "
                         f"{cg_iters}, {backtrack_iters})")

    # Random seed
    seed += 10000 * proc_id()
    torch.manual_seed(seed)
    np.random.seed(seed)

    # Instantiate environment
    env = env_fn()
    _check_spaces(env, algo)
    obs_dim = env.observation_space.shape
    act_dim = env.action_space.shape
    is_box = type(env.action_space).__name__ == "Box"
    if steps_per_epoch % num_procs() != 0 or steps_per_epoch < num_procs():
        raise ValueError(f"{algo}: steps_per_epoch={steps_per_epoch} must be a positive "
                         f"multiple of the number of MPI processes ({num_procs()})")

    # Create actor-critic module   [TRPO line 1: initial policy and value parameters]
    ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)

    # Sync params across processes
    sync_params(ac)

    # Count variables
    var_counts = tuple(core.count_vars(module) for module in [ac.pi, ac.v])
    logger.log("\nNumber of parameters: \t pi: %d, \t v: %d\n" % var_counts)

    # Set up experience buffer
    local_steps_per_epoch = int(steps_per_epoch / num_procs())
    buf = GAEBuffer(obs_dim, act_dim, local_steps_per_epoch, gamma, lam)

    # Surrogate advantage L(theta_k, theta) = mean[ pi_theta(a|s) / pi_k(a|s) * A ].
    # At theta = theta_k its gradient is the policy gradient g.   [TRPO line 7]
    def compute_surrogate(data):
        _, logp = ac.pi(data["obs"], data["act"])
        ratio = torch.exp(logp - data["logp"])
        return (ratio * data["adv"]).mean()

    # Set up function for computing value loss: mean squared error to the rewards-to-go
    def compute_loss_v(data):
        obs, ret = data["obs"], data["ret"]
        return ((ac.v(obs) - ret) ** 2).mean()

    # Set up optimizer for the value function (the policy is updated by hand)
    vf_optimizer = Adam(ac.v.parameters(), lr=vf_lr)

    # Set up model saving
    logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

    def update():
        data = buf.get()
        pi_params = list(ac.pi.parameters())
        with torch.no_grad():
            pi_old, _ = ac.pi(data["obs"])  # pi_k, held fixed during the update
            v_l_old = compute_loss_v(data).item()

        # Surrogate (averaged over ranks) and mean KL(pi_k || pi_theta) at the current theta.
        def evaluate():
            with torch.no_grad():
                surr = compute_surrogate(data).item()
                kl = core.mean_kl(pi_old, ac.pi(data["obs"])[0]).item()
            return mpi_avg(surr), mpi_avg(kl)

        # Policy gradient g = grad of the surrogate at theta_k   [TRPO line 7]
        surr = compute_surrogate(data)
        surr_old = mpi_avg(surr.item())
        g = mpi_avg(flat_grad(surr, pi_params).numpy())

        # x = H^-1 g by conjugate gradient, H = Hessian of the mean KL   [TRPO line 8]
        kl = core.mean_kl(pi_old, ac.pi(data["obs"])[0])  # = 0 at theta_k, but not its Hessian
        Hx = hessian_vector_product(kl, pi_params, damping_coeff)
        x = conjugate_gradient(Hx, g, cg_iters)

        # Largest step along x inside the quadratic trust region 1/2 s^T H s <= delta
        step_size = np.sqrt(2 * delta / (x @ Hx(x) + 1e-8))
        full_step = torch.as_tensor(step_size * x, dtype=torch.float32)
        theta_old = get_flat_params(ac.pi)

        if algo == 'npg':
            # Natural policy gradient: take the full step
            set_flat_params(ac.pi, theta_old + full_step)
            backtrack_j = 0
        else:
            # TRPO: backtracking line search on the true KL and surrogate   [TRPO line 9]
            backtrack_j = backtracking_line_search(ac.pi, theta_old, full_step, evaluate,
                                                   surr_old, delta, backtrack_iters,
                                                   backtrack_coeff)
            if backtrack_j == backtrack_iters:
                logger.log("Line search failed! Keeping old params.")

        # Value function learning by regression on rewards-to-go   [TRPO line 10]
        for _ in range(train_v_iters):
            vf_optimizer.zero_grad()
            loss_v = compute_loss_v(data)
            loss_v.backward()
            mpi_avg_grads(ac.v)  # average grads across MPI processes
            vf_optimizer.step()

        # Log changes from update, KL and new policy loss measured *after* the step.
        surr_new, kl_new = evaluate()
        with torch.no_grad():
            ent = pi_old.entropy().mean().item()
            loss_v_new = compute_loss_v(data).item()
        logger.store(LossPi=-surr_old, LossV=v_l_old, KL=kl_new, Entropy=ent,
                     DeltaLossPi=(-surr_new) - (-surr_old), DeltaLossV=loss_v_new - v_l_old,
                     BacktrackIters=backtrack_j)

    # Prepare for interaction with environment
    start_time = time.time()
    o, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    ep_ret, ep_len = 0, 0
    act_low, act_high = (env.action_space.low, env.action_space.high) if is_box else (None, None)

    # Main loop: collect experience in env and update/log each epoch   [TRPO line 3]
    for epoch in range(epochs):
        warned_cutoff = False
        for t in range(local_steps_per_epoch):
            # Run the current policy in the environment   [TRPO line 4]
            a, v, logp = ac.step(torch.as_tensor(o, dtype=torch.float32))
            # A Gaussian sample can leave the action box: clip what the env sees,
            # store the sample itself (its log-prob is what the surrogate uses).
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
                # cut-off bootstrap from V(s_T) (DESIGN 3).   [TRPO lines 5-6]
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

        # Perform TRPO or NPG update!   [TRPO lines 7-10]
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
        logger.log_tabular("BacktrackIters", average_only=True)
        logger.log_tabular("Time", time.time() - start_time)
        logger.dump_tabular()
    env.close()
    return ac


def npg(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
        train_v_iters=80, damping_coeff=0.1, cg_iters=10, backtrack_iters=10,
        backtrack_coeff=0.8, lam=0.97, max_ep_len=1000, logger_kwargs=dict(),
        save_freq=10):
    """
    Natural Policy Gradient: :func:`trpo` with ``algo='npg'``, i.e. the step
    ``sqrt(2 delta / x^T H x) x`` with ``x = H^-1 g`` is taken in full, without the
    backtracking line search (``backtrack_iters`` and ``backtrack_coeff`` are unused and
    ``BacktrackIters`` is logged as 0). All arguments are those of :func:`trpo`.

    Returns:
        The trained actor-critic module.
    """
    return trpo(**locals(), algo='npg')  # locals() here are exactly npg's arguments


def _check_spaces(env, algo):
    """TRPO needs a flat Box observation space and a Box or Discrete action space."""
    obs_space, act_space = env.observation_space, env.action_space
    if type(obs_space).__name__ != "Box" or len(obs_space.shape) != 1:
        raise ValueError(f"{algo}: observation space {obs_space} is not supported; it needs "
                         "a flat Box (wrap the env in gymnasium.wrappers.FlattenObservation)")
    if type(act_space).__name__ not in ("Box", "Discrete"):
        raise ValueError(f"{algo}: action space {act_space} is not supported (Box or Discrete)")
