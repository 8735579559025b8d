"""Asynchronous Advantage Actor-Critic (A3C).

Several worker processes each play their own copy of the environment. After every
short rollout of ``n_steps`` steps a worker computes the gradient of the
actor-critic loss on its *local* copy of the networks and applies it at once to one
*shared* copy, with no lock and no waiting for the others (Hogwild-style: the
parameters and the Adam statistics live in shared memory); then it copies the
newest shared parameters and plays on. The loss is A2C's (see ``a2c.py``); only the
way gradients reach the parameters differs.

Paper: Mnih, Badia, Mirza, Graves, Lillicrap, Harley, Silver, Kavukcuoglu (2016),
"Asynchronous Methods for Deep Reinforcement Learning", arXiv:1602.01783:
Algorithm S3 (asynchronous advantage actor-critic, the per-worker loop) and the
entropy bonus of Section 4. Lock-free updates: Recht et al. (2011), "Hogwild!",
arXiv:1106.5730.

Pseudocode, the same lines as docs/algorithms/a3c.rst (tests/docs/test_pseudocode_sync.py
checks that they agree):

.. begin-pseudocode

.. code-block:: none

   Main process:
   1. Input: θ, ψ and the moment estimates of SharedAdam (lr) in shared memory; counter T = 0;
      T_max = epochs · steps_per_epoch
   2. start num_workers processes, each running Worker(w) below; no barrier between them
   3. for epoch = 0, 1, ..., epochs − 1 do
   4.     wait until T ≥ (epoch + 1) · steps_per_epoch, recording the workers' messages
   5.     copy the shared θ; play num_test_episodes episodes with the mode of π_θ
   6.     save the model, log one row of progress.txt
   7. end for
   8. wait until every worker has left its loop; save the final model
   Worker(w), one process with its own environment, seeded seed + 10000 w:
   9. make local copies θ', ψ'
  10. while the main process has not asked to stop do
  11.     θ', ψ' ← the shared θ, ψ (no lock); note T
  12.     run π_θ' for n_steps steps, storing s_t, a_t, r_t, V_ψ'(s_t);
          a Box action is clipped for env.step
  13.     when a piece of trajectory ends (episode over, or the rollout's last step):
          v_end = 0 if terminated, else V_ψ'(s_T); δ_t = r_t + γ V_ψ'(s_t+1) − V_ψ'(s_t)
          with V_ψ'(s_T) = v_end; Â_t = Σ_l (γλ)^l δ_t+l; R̂_t = Â_t + V_ψ'(s_t)
  14.     loss = mean_t [−log π_θ'(a_t|s_t) Â_t − ent_coef · H[π_θ'(·|s_t)]
                         + vf_coef · (V_ψ'(s_t) − R̂_t)²], with Â_t and R̂_t held constant
  15.     (g_θ, g_ψ) = gradient of loss at (θ', ψ'); if max_grad_norm: rescale to that norm
  16.     without any lock: one SharedAdam step of the shared θ, ψ along (g_θ, g_ψ),
          learning rate lr · (1 − T / T_max) if anneal_lr, else lr
  17.     under the counter's lock: T ← T + n_steps; staleness = other updates since line 11
  18.     if T ≥ T_max: leave the loop
  19. end while

.. end-pseudocode

Lines of code that carry out a step are tagged ``[A3C line N]``. How the worker
processes are started, watched and stopped is in ``workers.py``.
"""
import copy
import os
import time

import gymnasium as gym
import numpy as np
import torch

import spinup.algos.a3c.core as core
from spinup.algos.a3c.workers import EpisodeDone, UpdateDone, WorkerPool
from spinup.machinery.door import Run, acting_error, check_finite_path, env_label
from spinup.utils.logx import EpochLogger


class A3CBuffer:
    """One worker's rollout of ``size`` transitions, and its advantages and returns.

    Advantages are GAE-lambda (Schulman et al. 2016, arXiv:1506.02438); with the
    default ``lam = 1`` they are the n-step advantages of pseudocode line 13. A
    rollout may hold the end of one episode and the start of the next:
    :meth:`finish_path` closes each piece.

    Args:
        obs_dim (tuple): shape of one observation.
        act_dim (tuple): shape of one action (``()`` for ``Discrete``).
        size (int): transitions per rollout (``n_steps``).
        gamma (float): discount, ``0 <= gamma <= 1``.
        lam (float): GAE lambda, ``0 <= lam <= 1``.
    """

    def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=1.0):
        self.obs = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.act = np.zeros(core.combined_shape(size, act_dim), dtype=np.float32)
        self.rew, self.val, self.adv, self.ret = (np.zeros(size, dtype=np.float32)
                                                  for _ in range(4))
        self.gamma, self.lam, self.size = gamma, lam, size
        self.n = 0           # transitions stored so far
        self.path_start = 0  # index where the current piece of trajectory began

    def full(self):
        return self.n == self.size

    def store(self, obs, act, rew, val):
        """Add one step: observation, action taken, reward received, ``V(obs)``."""
        if self.full():
            raise RuntimeError("A3CBuffer.store: the rollout is full; call get() first")
        i = self.n
        self.obs[i], self.act[i], self.rew[i], self.val[i] = obs, act, rew, val
        self.n = i + 1

    def finish_path(self, last_val=0):
        """Compute advantages and returns for the steps since the last call.

        Args:
            last_val (float): value of the state after the last stored step: 0 if
                the episode terminated there, else ``V(s_T)``, which stands in for
                the rewards not seen (end of the rollout, time limit, ``max_ep_len``).
        """
        seg = slice(self.path_start, self.n)
        check_finite_path(self, seg, last_val, self.obs, self.rew)  # stop at NaN/inf from the env
        rew, val = self.rew[seg], self.val[seg]
        next_val = np.append(val[1:], last_val)  # V(s_{t+1}); the last one bootstraps
        # delta_t = r_t + gamma V(s_{t+1}) - V(s_t); A_t = sum_l (gamma lam)^l delta_{t+l}
        delta = rew + self.gamma * next_val - val                     # [A3C line 13]
        self.adv[seg] = core.discount_cumsum(delta, self.gamma * self.lam)
        self.ret[seg] = self.adv[seg] + val  # value targets R_t = A_t + V(s_t)
        self.path_start = self.n

    def get(self):
        """The full rollout as float32 tensors ``obs, act, ret, adv`` (advantages not
        normalised: a rollout is only ``n_steps`` long); empties the buffer."""
        if not self.full():
            raise RuntimeError("A3CBuffer.get: the rollout is not complete")
        self.n = self.path_start = 0
        arrays = dict(obs=self.obs, act=self.act, ret=self.ret, adv=self.adv)
        return {name: torch.tensor(a, dtype=torch.float32) for name, a in arrays.items()}


def env_action(a, action_space):
    """The action handed to ``env.step``: a ``Box`` action clipped to the space's
    ``low``/``high`` (a Gaussian sample or mean can leave it), others unchanged."""
    if isinstance(action_space, gym.spaces.Box):
        return np.clip(a, action_space.low, action_space.high)
    return a


def a3c(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=10000, epochs=50, num_workers=None, n_steps=20, gamma=0.99, lam=1.0,
        lr=1e-3, anneal_lr=True, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5,
        max_ep_len=1000, num_test_episodes=5, logger_kwargs=dict(), save_freq=10,
        device="cpu"):
    """Train an actor-critic with A3C: ``num_workers`` processes update one shared
    model without locks, each with the gradients of its own n-step rollouts.

    Args:
        env_fn (callable): ``env_fn()`` returns a new ``gymnasium.Env`` with a flat
            ``Box`` observation space and a ``Box`` or ``Discrete`` action space. It
            is called once in the main process (the test environment) and once in
            every worker, which receives it through cloudpickle (lambdas work).
        actor_critic (type): ``actor_critic(observation_space, action_space,
            **ac_kwargs)`` builds the ``nn.Module`` described below; it must be
            importable by name (the workers receive the shared instance).
        ac_kwargs (dict): keyword arguments for ``actor_critic`` (``hidden_sizes``...).
        seed (int): seeds torch and numpy in the main process. Worker ``i`` uses
            ``seed + 10000 * i``, the first test episode ``seed + 1``. Runs are still
            not reproducible: the OS decides the order of the asynchronous updates.
        steps_per_epoch (int): environment steps, summed over all workers, per
            epoch (>= 1). An epoch only decides when the main process tests, logs
            and saves; the workers never wait for it.
        epochs (int): number of epochs (>= 1); the run lasts
            ``T_max = steps_per_epoch * epochs`` environment steps.
        num_workers (int or None): worker processes (>= 1); ``None`` means
            ``os.cpu_count()``. More workers than cores only add switching.
        n_steps (int): rollout length between two updates of one worker, Mnih et
            al.'s ``t_max`` (>= 1). 20 keeps the gradients fresh, as in the paper.
        gamma (float): discount factor, ``0 <= gamma <= 1``.
        lam (float): GAE lambda, ``0 <= lam <= 1``; the default 1 gives the plain
            n-step advantage of the paper.
        lr (float): learning rate of the shared Adam (> 0).
        anneal_lr (bool): decay the learning rate linearly from ``lr`` to 0 as the
            global counter ``T`` goes to ``T_max``, as Mnih et al. do.
        ent_coef (float): weight ``beta`` of the entropy bonus (>= 0). The 0.01 of
            the paper keeps the policy from collapsing early.
        vf_coef (float): weight ``c_v`` of the value loss (>= 0).
        max_grad_norm (float or None): clip each worker's gradient to this norm
            before applying it; ``None`` or 0 disables clipping. With many workers
            writing to the same weights, 0.5 keeps single updates small.
        max_ep_len (int): longest episode (>= 1), for training and test episodes;
            reaching it bootstraps from ``V(s_T)``.
        num_test_episodes (int): episodes (>= 0) the main process plays after each
            epoch with the deterministic policy on a snapshot of the shared model
            (``TestEpRet``).
        logger_kwargs (dict): keyword arguments for :class:`EpochLogger`.
        save_freq (int): ``pyt_save/model.pt`` is rewritten after every epoch and
            at the end (Ctrl-C or a failure saves it too); in addition, every
            ``save_freq`` epochs (>= 1) a copy ``model{epoch}.pt`` is kept (epochs
            0, save_freq, 2 save_freq, ...).
        device (str): ``'cpu'``, or ``'auto'`` (which is the CPU for A3C): its workers
            update networks in shared CPU memory, which a GPU cannot share, so a CUDA
            device is refused (a2c takes one).

    The actor-critic must have these members (those of ``core.MLPActorCritic``;
    A2C and PPO use the same ones). Shapes are for a batch of observations
    ``obs`` (batch, obs_dim); ``act_dim`` is absent for ``Discrete`` actions.

    ==============================  ===============================================
    Member                          Returns (shapes)
    ==============================  ===============================================
    ``step(obs)``                   numpy ``(a, v, logp_a)``: a sampled action
                                    (batch, act_dim), ``V(obs)`` (batch,) and the
                                    log-likelihood of ``a`` (batch,)
    ``act(obs, deterministic)``     numpy action (batch, act_dim): a sample, or the
                                    mode of ``pi`` when ``deterministic``
    ``pi(obs, act=None)``           ``(pi, logp_a)``: a ``torch.distributions``
                                    object and the log-likelihood (batch,) of
                                    ``act`` (``None`` without ``act``)
    ``pi.entropy(pi)``              tensor (batch,): entropy of each distribution
    ``v(obs)``                      tensor (batch,): ``V(obs)``, *not* (batch, 1)
    ==============================  ===============================================

    Returns:
        nn.Module: the shared actor-critic after training.

    Raises:
        TypeError: an argument of the wrong kind (e.g. a float ``n_steps``).
        ValueError: an argument out of range, an unsupported observation or action
            space, or a call under ``mpiexec`` with more than one process. Nothing
            is written to disk in these cases.
        RuntimeError: a worker failed (``workers.WorkerError``, with its traceback).
        KeyboardInterrupt: Ctrl-C, after stopping the workers. The files are those
            of the last finished epoch (``--resume`` continues from it).

    Source:
        Mnih et al. 2016, arXiv:1602.01783, Algorithm S3; the pseudocode and the
        loss are on docs/algorithms/a3c.rst.
    """
    config = dict(locals())

    # ---- Setup: check everything before anything is written ----
    # The door checks the arguments and the env (the test env; each worker makes its own),
    # fixes the torch threads and keeps checkpoints.
    run = Run(a3c, config, record=False)
    if num_workers is None:
        num_workers = os.cpu_count() or 1
    test_env = run.env

    logger = EpochLogger(**logger_kwargs)
    logger.save_config(config)

    torch.manual_seed(seed)
    np.random.seed(seed)

    # Shared model (theta, psi), shared optimizer state and counter T   [A3C line 1]
    ac = actor_critic(test_env.observation_space, test_env.action_space, **ac_kwargs)
    ac.share_memory()
    optimizer = core.SharedAdam(ac.parameters(), lr=lr)
    pool = WorkerPool(num_workers, name="a3c", log=lambda text: logger.log(text, color="cyan"))
    T = pool.ctx.Value("q", 0)
    total_steps = steps_per_epoch * epochs
    logger.log("\nNumber of parameters: \t pi: %d, \t v: %d\n"
               % (core.count_vars(ac.pi), core.count_vars(ac.v)))
    logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

    # What each epoch's checkpoint holds (a resume, resume=True, reads it back): the shared
    # model, the main process's generators and test env, and (saved with it) the optimizer
    # state and the counter T. The workers' episodes are not saved: a resumed run's
    # workers start new episodes (A3C's asynchrony makes no two runs equal anyway).
    run.keep(logger, env=False, test_env=test_env, ac=ac)

    def lr_at(steps):
        """Learning rate when the global counter is ``steps``."""
        return lr * max(0.0, 1.0 - steps / total_steps) if anneal_lr else lr

    # ---- Losses (computed by the workers, on their local copies) ----

    def compute_loss_pi(model, data):
        """``-J(theta')`` of line 14, a mean over the rollout, and the mean entropy
        ``H[pi(.|s_t)]`` of the bonus (Mnih et al. 2016, Section 4)."""
        pi, logp = model.pi(data["obs"], data["act"])
        return -(logp * data["adv"]).mean(), model.pi.entropy(pi).mean()  # [A3C line 14]

    def compute_loss_v(model, data):
        """Value part of the loss of line 14: mean squared error to the n-step returns."""
        return ((model.v(data["obs"]) - data["ret"]) ** 2).mean()        # [A3C line 14]

    # ---- Worker: rollout and asynchronous update   [A3C lines 9-19] ----
    # Runs in each worker process, sent there with cloudpickle. The shared objects
    # are its arguments (torch sends them as shared memory); the rest it captures.

    def worker(wid, link, shared_ac, shared_opt, T):
        worker_seed = seed + 10000 * wid
        torch.manual_seed(worker_seed)
        np.random.seed(worker_seed)
        env = env_fn()
        local_ac = copy.deepcopy(shared_ac)                            # [A3C line 9]
        buf = A3CBuffer(env.observation_space.shape, env.action_space.shape, n_steps,
                        gamma, lam)
        buf.source = env_label("a3c", env)
        o, _ = env.reset(seed=worker_seed)
        env.action_space.seed(worker_seed)
        ep_ret, ep_len = 0.0, 0
        while link.running():                                          # [A3C line 10]
            # (theta', psi') <- newest shared (theta, psi)             [A3C line 11]
            local_ac.load_state_dict(shared_ac.state_dict())
            T_read = T.value
            while not buf.full():                                      # [A3C line 12]
                try:
                    a, v, _ = local_ac.step(torch.as_tensor(o, dtype=torch.float32))
                except ValueError as e:  # NaN/inf policy output: bad observation, else the net
                    raise acting_error(e, o, buf, buf.n, f"a3c: worker {wid}, step {T_read}") from e
                o2, r, terminated, truncated, _ = env.step(env_action(a, env.action_space))
                buf.store(o, a, r, v)
                o, ep_ret, ep_len = o2, ep_ret + r, ep_len + 1
                episode_over = terminated or truncated or ep_len == max_ep_len
                if episode_over or buf.full():
                    # A true terminal state is worth 0; otherwise V(s_T) stands in
                    # for the rewards after the cut.                   [A3C line 13]
                    last_v = 0 if terminated else local_ac.step(
                        torch.as_tensor(o, dtype=torch.float32))[1]
                    buf.finish_path(last_v)
                if episode_over:
                    link.send(EpisodeDone(wid, ep_ret, ep_len))
                    o, _ = env.reset()
                    ep_ret, ep_len = 0.0, 0
            v_mean = float(buf.val.mean())

            # Gradients on the local copy                              [A3C lines 14-15]
            data = buf.get()
            loss_pi, ent = compute_loss_pi(local_ac, data)
            loss_v = compute_loss_v(local_ac, data)
            local_ac.zero_grad()
            (loss_pi - ent_coef * ent + vf_coef * loss_v).backward()
            if max_grad_norm:
                torch.nn.utils.clip_grad_norm_(local_ac.parameters(), max_grad_norm)

            # Master(g): point the shared parameters' .grad (in this process) at the
            # local gradients and take one Adam step on the shared tensors, without
            # a lock: other workers may be reading or writing them.   [A3C line 16]
            for p_shared, p_local in zip(shared_ac.parameters(), local_ac.parameters()):
                p_shared.grad = p_local.grad
            for group in shared_opt.param_groups:
                group["lr"] = lr_at(T.value)
            shared_opt.step()
            with T.get_lock():  # the only lock: the counter   [A3C line 17]
                T.value += n_steps
                T_now = T.value
            # Other workers' updates between our read (line 11) and this write.
            staleness = (T_now - T_read) // n_steps - 1
            link.send(UpdateDone(wid, time.time(), T_now, staleness,
                                 dict(LossPi=loss_pi.item(), LossV=loss_v.item(),
                                      Entropy=ent.item()), v_mean))
            if T_now >= total_steps:                                   # [A3C line 18]
                break
        env.close()

    # ---- Main loop: the main process tests, logs and saves   [A3C lines 3-8] ----
    test_ac = copy.deepcopy(ac)
    updates_file = None
    if logger.output_dir:
        path = os.path.join(logger.output_dir, "updates.txt")
        updates_file = open(path, "a" if logger.resuming else "w")
        if not logger.resuming:
            updates_file.write("Worker\tTime\tT\tStaleness\n")

    def handle(message):  # one message from a worker
        if isinstance(message, EpisodeDone):
            logger.store(EpRet=message.ep_ret, EpLen=message.ep_len)
        elif isinstance(message, UpdateDone):
            logger.store(Staleness=message.staleness, VVals=message.v_mean,
                         **message.losses)
            if updates_file:
                updates_file.write(f"{message.wid}\t{message.time - start_time:.4f}\t"
                                   f"{message.T}\t{message.staleness}\n")

    def test_episode(reset_seed):
        """One episode of the deterministic policy on ``test_ac``."""
        o, _ = test_env.reset(seed=reset_seed)
        ep_ret, ep_len, done = 0.0, 0, False
        while not done:
            a = test_ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic=True)
            o, r, terminated, truncated, _ = test_env.step(env_action(a, test_env.action_space))
            ep_ret, ep_len = ep_ret + r, ep_len + 1
            done = terminated or truncated or ep_len == max_ep_len
        logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)

    def log_epoch(epoch, steps):
        logger.log_tabular("Epoch", epoch)
        logger.log_tabular("EpRet", with_min_and_max=True)
        logger.log_tabular("TestEpRet", with_min_and_max=True)
        logger.log_tabular("EpLen", average_only=True)
        logger.log_tabular("TestEpLen", average_only=True)
        logger.log_tabular("VVals", with_min_and_max=True)
        logger.log_tabular("TotalEnvInteracts", steps)
        logger.log_tabular("LossPi", average_only=True)
        logger.log_tabular("LossV", average_only=True)
        logger.log_tabular("Entropy", average_only=True)
        logger.log_tabular("Staleness", average_only=True)
        logger.log_tabular("LR", lr_at(steps))
        logger.log_tabular("StepsPerSec", steps / (time.time() - start_time))
        logger.log_tabular("Time", time.time() - start_time)
        logger.dump_tabular()

    start_time = time.time()
    first_epoch, start_time, _ = run.resume(0, start_time)
    if run.saved:   # ac's state is copied into the shared parameters
        shared = [p for group in optimizer.param_groups for p in group["params"]]
        for i, p in enumerate(shared):  # in place: the tensors stay in shared memory
            for key, value in run.saved["optimizer"]["state"][i].items():
                optimizer.state[p][key].copy_(value)
        T.value = run.saved["T"]
    epoch = first_epoch
    try:
        # One torch thread here (small nets; the cores are for the workers); the test env
        # is closed at the end.   [A3C line 2]
        with run, pool.running(worker, (ac, optimizer, T)):
            try:
                for epoch in range(first_epoch, epochs):
                    # Wait while the workers update theta; record messages [A3C lines 3-4]
                    epoch_end = (epoch + 1) * steps_per_epoch
                    pool.wait_until(lambda: T.value >= epoch_end, handle)
                    pool.poll(handle)
                    steps_now = T.value
                    # Test a snapshot of the current theta, save, log   [A3C lines 5-6]
                    test_ac.load_state_dict(ac.state_dict())
                    for j in range(num_test_episodes):
                        test_episode(seed + 1 if epoch == 0 and j == 0 else None)
                        pool.poll(handle)
                    # model.pt replaced every epoch; model{epoch}.pt every save_freq
                    with run.epoch_end():   # a stop waits until model, row, checkpoint are written
                        logger.save_epoch_state({"env": test_env}, epoch, save_freq)
                        log_epoch(epoch, steps_now)
                        run.save(epoch + 1, start_time, T=T.value, optimizer=optimizer.state_dict())
                    if updates_file:
                        updates_file.flush()
                # Each worker stops by itself once T >= T_max   [A3C line 8]
                pool.join(handle)
                # updates that were in flight at the last save: model.pt = the result
                logger.save_state({"env": test_env}, None)
            except BaseException:   # Ctrl-C or a failure: what is saved is the last
                pool.stop(handle)     # epoch's (rows, model, checkpoint), as everywhere
                logger.log(f"a3c: stopped early, in epoch {epoch}; the files are those of "
                           "the last finished epoch", color="red")
                raise
    finally:
        if updates_file:
            updates_file.close()
    return ac

