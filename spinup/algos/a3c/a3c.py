"""Asynchronous Advantage Actor-Critic (A3C), Mnih et al. 2016, "Asynchronous
Methods for Deep Reinforcement Learning".

``num_workers`` processes each run their own environment and their own *local* copy
of the actor-critic. After every rollout of ``n_steps`` steps a worker computes the
gradient of the actor-critic loss on its local copy and applies it straight to one
*shared* model (parameters and Adam statistics in shared memory), with no lock and
no waiting for the other workers (Hogwild, Recht et al. 2011). The main process
owns the logger: it collects the workers' episode statistics, runs test episodes and
saves the model once per epoch. Compare with ``a2c.py``: the loss is the same, only
the way gradients reach the parameters differs.

Pseudocode lines (docs/algorithms/a3c.rst) are referenced as ``[A3C line N]``.
"""
import copy
import os
import queue
import signal
import threading
import time
import traceback

import numpy as np
import torch
import torch.multiprocessing as mp

import spinup.algos.a3c.core as core
from spinup.utils.logx import EpochLogger


class A3CBuffer:
    """One worker's rollout of ``n_steps`` transitions with n-step (``lam=1``) or
    GAE-lambda advantages and the matching value targets (same as A2C's buffer)."""

    def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=1.0):
        self.obs_buf = np.zeros(core.combined_shape(size, obs_dim), dtype=np.float32)
        self.act_buf = np.zeros(core.combined_shape(size, act_dim), dtype=np.float32)
        self.adv_buf = np.zeros(size, dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.ret_buf = np.zeros(size, dtype=np.float32)
        self.val_buf = np.zeros(size, dtype=np.float32)
        self.gamma, self.lam = gamma, lam
        self.ptr, self.path_start_idx, self.max_size = 0, 0, size

    def store(self, obs, act, rew, val):
        """Append one timestep of agent-environment interaction."""
        assert self.ptr < self.max_size
        self.obs_buf[self.ptr] = obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.val_buf[self.ptr] = val
        self.ptr += 1

    def finish_path(self, last_val=0):
        """Close the current piece of trajectory; ``last_val`` is 0 at a true terminal
        state, else ``V(s_T)`` (end of rollout, truncation, ``max_ep_len``)."""
        path_slice = slice(self.path_start_idx, self.ptr)
        rews = np.append(self.rew_buf[path_slice], last_val)
        vals = np.append(self.val_buf[path_slice], last_val)
        # delta_t = r_t + gamma V(s_{t+1}) - V(s_t); A_t = sum_l (gamma lam)^l delta_{t+l}
        deltas = rews[:-1] + self.gamma * vals[1:] - vals[:-1]   # [A3C line 13]
        self.adv_buf[path_slice] = core.discount_cumsum(deltas, self.gamma * self.lam)
        self.ret_buf[path_slice] = self.adv_buf[path_slice] + self.val_buf[path_slice]
        self.path_start_idx = self.ptr

    def get(self):
        """The full rollout as tensors (advantages not normalised); resets the buffer."""
        assert self.ptr == self.max_size
        self.ptr, self.path_start_idx = 0, 0
        data = dict(obs=self.obs_buf, act=self.act_buf, ret=self.ret_buf, adv=self.adv_buf)
        return {k: torch.as_tensor(v, dtype=torch.float32) for k, v in data.items()}


def compute_loss(ac, data, ent_coef, vf_coef):
    """A2C/A3C loss of one rollout: ``-J(theta) - beta H + c_v J(psi)``."""
    obs, act, adv, ret = data["obs"], data["act"], data["adv"], data["ret"]
    pi, logp = ac.pi(obs, act)
    loss_pi = -(logp * adv).mean()               # -J(theta)   [A3C line 14]
    ent = ac.pi.entropy(pi).mean()               # entropy bonus H[pi(.|s)]
    loss_v = ((ac.v(obs) - ret) ** 2).mean()     # J(psi)      [A3C line 15]
    loss = loss_pi - ent_coef * ent + vf_coef * loss_v
    return loss, dict(LossPi=loss_pi.item(), LossV=loss_v.item(), Entropy=ent.item())


def worker(wid, env_fn_bytes, shared_ac, optimizer, T, stop, msgs, hp):
    """One A3C worker (runs in its own process)   [A3C lines 8-17].

    Args:
        wid (int): worker index; seeds ``hp['seed'] + 10000 * wid``.
        env_fn_bytes (bytes): cloudpickled ``env_fn``.
        shared_ac (nn.Module): the shared model (its tensors are in shared memory).
        optimizer (SharedAdam): optimizer of ``shared_ac`` with shared state.
        T (multiprocessing.Value): global step counter, shared by all workers.
        stop (multiprocessing.Event): set by the main process to stop the workers.
        msgs (multiprocessing.Queue): statistics and errors for the main process.
        hp (dict): hyperparameters of :func:`a3c`.
    """
    # Ctrl-C reaches every process of the terminal's process group; the main
    # process handles it and stops the workers, which must not die half-way.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)
    parent = os.getppid()
    try:
        import cloudpickle
        seed = hp["seed"] + 10000 * wid
        torch.manual_seed(seed)
        np.random.seed(seed)
        env = cloudpickle.loads(env_fn_bytes)()
        is_box = type(env.action_space).__name__ == "Box"
        act_low, act_high = (env.action_space.low, env.action_space.high) if is_box else (0, 0)
        # Worker's own copy of the model (theta', psi')   [A3C line 9]
        local_ac = copy.deepcopy(shared_ac)
        buf = A3CBuffer(env.observation_space.shape, env.action_space.shape, hp["n_steps"],
                        hp["gamma"], hp["lam"])
        msgs.put(("start", wid, os.getpid()))
        o, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        ep_ret, ep_len = 0, 0
        while not stop.is_set() and os.getppid() == parent:  # [A3C line 10]
            # Fetch the newest shared parameters: (theta', psi') <- (theta, psi)   [A3C line 11]
            local_ac.load_state_dict(shared_ac.state_dict())
            T_read = T.value
            vals = []
            # Run pi_theta' for n_steps steps   [A3C line 12]
            for _ in range(hp["n_steps"]):
                a, v, _ = local_ac.step(torch.as_tensor(o, dtype=torch.float32))
                env_a = np.clip(a, act_low, act_high) if is_box else a
                next_o, r, terminated, truncated, _ = env.step(env_a)
                ep_ret += r
                ep_len += 1
                buf.store(o, a, r, v)
                vals.append(float(v))
                o = next_o
                timeout = truncated or ep_len == hp["max_ep_len"]
                if terminated or timeout or buf.ptr == hp["n_steps"]:
                    # Only a true terminal state has value 0 (DESIGN 3)
                    if terminated:
                        v = 0
                    else:
                        _, v, _ = local_ac.step(torch.as_tensor(o, dtype=torch.float32))
                    buf.finish_path(v)
                    if terminated or timeout:
                        msgs.put(("episode", wid, ep_ret, ep_len))
                        o, _ = env.reset()
                        ep_ret, ep_len = 0, 0
            # Gradients on the local copy   [A3C lines 13-16]
            local_ac.zero_grad()
            loss, info = compute_loss(local_ac, buf.get(), hp["ent_coef"], hp["vf_coef"])
            loss.backward()
            if hp["max_grad_norm"]:
                torch.nn.utils.clip_grad_norm_(local_ac.parameters(), hp["max_grad_norm"])
            # Send them to the master: the shared model's .grad (in this process) points
            # at the local gradients; then one optimizer step on the shared tensors.
            # No lock: other workers may be reading or writing theta right now.  [A3C line 3]
            for shared_p, local_p in zip(shared_ac.parameters(), local_ac.parameters()):
                shared_p.grad = local_p.grad
            if hp["anneal_lr"]:
                for group in optimizer.param_groups:
                    group["lr"] = hp["lr"] * max(0.0, 1 - T.value / hp["total_steps"])
            optimizer.step()
            # Global step counter T <- T + n_steps (the only locked operation)  [A3C line 4]
            with T.get_lock():
                T.value += hp["n_steps"]
                T_now = T.value
            # Staleness: updates other workers applied between our read and our write
            staleness = (T_now - T_read) // hp["n_steps"] - 1
            msgs.put(("update", wid, time.time(), T_now, staleness, info, float(np.mean(vals))))
            if T_now >= hp["total_steps"]:
                break
        env.close()
        if os.getppid() != parent:
            # The main process is gone (killed): nobody will read our queued
            # messages, so exit without waiting to flush them.
            msgs.cancel_join_thread()
    except Exception:
        msgs.put(("error", wid, traceback.format_exc()))
        raise SystemExit(1)


def a3c(env_fn, actor_critic=core.MLPActorCritic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=10000, epochs=50, num_workers=None, n_steps=20, gamma=0.99, lam=1.0,
        lr=1e-3, anneal_lr=True, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5,
        max_ep_len=1000, num_test_episodes=5, logger_kwargs=dict(), save_freq=10):
    """
    Asynchronous Advantage Actor-Critic (A3C): ``num_workers`` processes update one
    shared actor-critic lock-free (Hogwild) with n-step advantage gradients.

    Args:
        env_fn : A function which creates a copy of the environment (called once
            in the main process for the test env, and once in every worker).
            It is sent to the workers with cloudpickle, so lambdas work.
            The environment must satisfy the gymnasium API, with a ``Box``
            observation space and a ``Box`` or ``Discrete`` action space.

        actor_critic: The constructor method for a PyTorch Module with a
            ``step`` method, an ``act`` method, a ``pi`` module, and a ``v``
            module, called as
            ``actor_critic(env.observation_space, env.action_space, **ac_kwargs)``.
            It must be importable (workers receive it by reference). Required
            members (the same as for A2C and PPO):

            ==============================  ======================================
            Member                          Returns (shapes)
            ==============================  ======================================
            ``step(obs)``                   numpy ``a`` (batch, act_dim), ``v``
                                            (batch,), ``logp_a`` (batch,)
            ``act(obs, deterministic)``     numpy ``a`` (batch, act_dim): a sample,
                                            or the mode when ``deterministic``
            ``pi(obs, act=None)``           torch Distribution ``pi`` and
                                            ``logp_a`` (batch,) of ``act``, or
                                            ``None`` if no ``act`` was given
            ``pi.entropy(pi)``              entropy of each distribution (batch,)
            ``v(obs)``                      tensor ``v`` (batch,) (flattened!)
            ==============================  ======================================

        ac_kwargs (dict): Any kwargs appropriate for the ActorCritic object
            you provided to A3C (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators. Worker ``i`` uses
            ``seed + 10000 * i``, the test env ``seed + 1``. Runs are not
            reproducible: the order of the asynchronous updates is up to the OS.

        steps_per_epoch (int): Environment steps (summed over workers) per epoch.
            Epochs only set when the main process logs, tests and saves.

        epochs (int): Number of epochs; the run lasts
            ``steps_per_epoch * epochs`` environment steps in total.

        num_workers (int): Number of worker processes (``None``: the number of
            CPUs, ``os.cpu_count()``).

        n_steps (int): Length of each worker's rollout between two of its updates
            (Mnih et al.'s ``t_max``).

        gamma (float): Discount factor. (Always between 0 and 1.)

        lam (float): Lambda for GAE-Lambda; ``1`` (default) gives the n-step
            advantage of Mnih et al.

        lr (float): Learning rate of the shared Adam optimizer.

        anneal_lr (bool): Decay the learning rate linearly to 0 with the global
            step counter (Mnih et al. 2016).

        ent_coef (float): Weight :math:`\\beta` of the entropy bonus.

        vf_coef (float): Weight :math:`c_v` of the value-function loss.

        max_grad_norm (float): Clip the norm of each worker's gradient to this
            value (``None`` or ``0``: no clipping).

        max_ep_len (int): Maximum length of trajectory / episode (also of test
            episodes). Reaching it bootstraps from ``V(s_T)``.

        num_test_episodes (int): Episodes the main process runs each epoch with
            the deterministic policy (the mode of ``pi``) on a snapshot of the
            shared model; logged as ``TestEpRet``.

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save
            the current policy and value function.

    Returns:
        The trained (shared) actor-critic module.

    Raises:
        ValueError: unsupported observation/action space or bad arguments.
        RuntimeError: a worker failed (its traceback is in the message).
        KeyboardInterrupt: Ctrl-C; the workers are stopped first.
    """
    torch.set_num_threads(1)  # small nets; the CPUs are for the workers

    # Set up logger and save configuration
    logger = EpochLogger(**logger_kwargs)
    logger.save_config(locals())

    if num_workers is None:
        num_workers = os.cpu_count() or 1
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise ValueError(f"a3c: num_workers must be a positive integer, got {num_workers!r}")
    if n_steps < 1 or steps_per_epoch < 1:
        raise ValueError("a3c: n_steps and steps_per_epoch must be positive")

    # Random seed and the main process's test environment
    torch.manual_seed(seed)
    np.random.seed(seed)
    test_env = env_fn()
    _check_spaces(test_env)

    # The shared model (theta, psi) and its optimizer, in shared memory   [A3C line 1]
    ac = actor_critic(test_env.observation_space, test_env.action_space, **ac_kwargs)
    ac.share_memory()
    optimizer = core.SharedAdam(ac.parameters(), lr=lr)
    var_counts = tuple(core.count_vars(module) for module in [ac.pi, ac.v])
    logger.log("\nNumber of parameters: \t pi: %d, \t v: %d\n" % var_counts)
    logger.setup_pytorch_saver(ac, ac_kwargs=ac_kwargs)

    # 'spawn' (not 'fork'): workers start from a fresh interpreter, so they inherit
    # no torch/OpenMP thread pools or locks from this process (forking a process
    # with threads can deadlock), and it is the only method on Windows and the
    # default on macOS. The price: the arguments are pickled, hence cloudpickle
    # for env_fn (lambdas) and ``if __name__ == "__main__":`` in user scripts.
    ctx = mp.get_context("spawn")
    T = ctx.Value("q", 0)          # global step counter
    stop, msgs = ctx.Event(), ctx.Queue()
    total_steps = steps_per_epoch * epochs
    hp = dict(seed=seed, n_steps=n_steps, gamma=gamma, lam=lam, lr=lr, anneal_lr=anneal_lr,
              ent_coef=ent_coef, vf_coef=vf_coef, max_grad_norm=max_grad_norm,
              max_ep_len=max_ep_len, total_steps=total_steps)
    import cloudpickle  # pickles lambdas and closures, which plain pickle cannot
    env_fn_bytes = cloudpickle.dumps(env_fn)
    procs = [ctx.Process(target=worker, name=f"a3c-worker-{i}", daemon=True,
                         args=(i, env_fn_bytes, ac, optimizer, T, stop, msgs, hp))
             for i in range(num_workers)]
    test_ac = copy.deepcopy(ac)
    updates_file = (open(os.path.join(logger.output_dir, "updates.txt"), "w")
                    if logger.output_dir else None)
    if updates_file:
        updates_file.write("Worker\tTime\tT\tStaleness\n")

    def handle(msg):
        """Turn one worker message into logger statistics."""
        kind, wid = msg[0], msg[1]
        if kind == "episode":
            logger.store(EpRet=msg[2], EpLen=msg[3])
        elif kind == "update":
            _, _, t, T_now, staleness, info, vval = msg
            logger.store(Staleness=staleness, VVals=vval, **info)
            if updates_file:
                updates_file.write(f"{wid}\t{t - start_time:.4f}\t{T_now}\t{staleness}\n")
        elif kind == "start":
            logger.log(f"Worker {wid} started (pid {msg[2]})", color="cyan")
        elif kind == "error":
            raise RuntimeError(f"a3c: worker {wid} failed:\n{msg[2]}")

    def poll(timeout):
        """Handle waiting messages; fail if a worker died or Ctrl-C was pressed."""
        if interrupted:
            raise KeyboardInterrupt
        try:
            handle(msgs.get(timeout=timeout))
            while True:
                handle(msgs.get_nowait())
        except queue.Empty:
            pass
        for p in procs:
            if p.exitcode not in (None, 0):
                poll_rest()
                raise RuntimeError(f"a3c: {p.name} exited with code {p.exitcode}")

    def poll_rest():
        try:
            while True:
                handle(msgs.get(timeout=0.2))
        except queue.Empty:
            pass

    # Start the workers with Ctrl-C ignored: spawned interpreters keep an ignored
    # SIGINT, so only this process reacts to it. Here Ctrl-C only sets a flag that
    # poll() checks (a KeyboardInterrupt raised at a random point can be swallowed,
    # e.g. inside a finalizer).
    interrupted = []
    in_main_thread = threading.current_thread() is threading.main_thread()
    old_handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main_thread else None
    start_time = time.time()
    epoch = 0
    try:
        try:
            for p in procs:
                p.start()
        finally:
            if in_main_thread:
                signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum))
        for epoch in range(epochs):
            # Main process: wait while the workers update theta   [A3C lines 6-7]
            while T.value < (epoch + 1) * steps_per_epoch:
                poll(0.05)
                if all(p.exitcode == 0 for p in procs) and T.value < total_steps:
                    raise RuntimeError("a3c: all workers exited before the end of the run")
            poll(0)
            steps_now = T.value

            # Test the deterministic policy on a snapshot of the shared model
            test_ac.load_state_dict(ac.state_dict())
            for j in range(num_test_episodes):
                o, _ = test_env.reset(seed=seed + 1 if epoch == 0 and j == 0 else None)
                done, ep_ret, ep_len = False, 0, 0
                while not done:
                    a = test_ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic=True)
                    o, r, terminated, truncated, _ = test_env.step(a)
                    ep_ret, ep_len = ep_ret + r, ep_len + 1
                    done = terminated or truncated or ep_len == max_ep_len
                logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)
                poll(0)

            if (epoch % save_freq == 0) or (epoch == epochs - 1):
                logger.save_state({"env": test_env}, None)
            _log_epoch(logger, epoch, steps_now, hp, start_time)
            if updates_file:
                updates_file.flush()
        # Let the workers finish their last rollout
        for p in procs:
            while p.is_alive():
                poll(0.05)
                p.join(0.05)
        poll(0)
    except BaseException:
        # Ctrl-C or a failed worker: stop everyone, keep what was logged, re-raise.
        stop.set()
        _shutdown(procs, poll_rest)
        logger.log("a3c: stopped early; saving the model and the partial epoch", color="red")
        try:
            logger.save_state({"env": test_env}, None)
            if logger.log_current_row:  # interrupted while writing a row: finish it
                logger.dump_tabular()
            else:
                _log_epoch(logger, epoch, T.value, hp, start_time)
        except Exception as e:  # never hide the original error
            logger.log(f"a3c: could not write the partial epoch: {e}", color="red")
        raise
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, old_handler)
        stop.set()
        _shutdown(procs, lambda: None)
        if updates_file:
            updates_file.close()
        test_env.close()
    return ac


def _log_epoch(logger, epoch, steps, hp, start_time):
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
    lr_now = hp["lr"] * max(0.0, 1 - steps / hp["total_steps"]) if hp["anneal_lr"] else hp["lr"]
    logger.log_tabular("LR", lr_now)
    logger.log_tabular("StepsPerSec", steps / (time.time() - start_time))
    logger.log_tabular("Time", time.time() - start_time)
    logger.dump_tabular()


def _shutdown(procs, drain, timeout=5.0):
    """Join the workers (draining their queue so none blocks on a full pipe);
    terminate, then kill, any that do not stop in time. Leaves no children."""
    deadline = time.time() + timeout
    while any(p.is_alive() for p in procs) and time.time() < deadline:
        drain()
        for p in procs:
            p.join(0.05)
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(1.0)
        if p.is_alive():
            p.kill()
            p.join()


def _check_spaces(env):
    """A3C needs a flat Box observation space and a Box or Discrete action space."""
    obs_space, act_space = env.observation_space, env.action_space
    if type(obs_space).__name__ != "Box" or len(obs_space.shape) != 1:
        raise ValueError(f"a3c: observation space {obs_space} is not supported; A3C needs a "
                         "flat Box (wrap the env in gymnasium.wrappers.FlattenObservation)")
    if type(act_space).__name__ not in ("Box", "Discrete"):
        raise ValueError(f"a3c: action space {act_space} is not supported (Box or Discrete)")
