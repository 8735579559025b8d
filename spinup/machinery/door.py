"""The one door from an algorithm (and from the logger) into spinup's machinery.

An algorithm file reads as its pseudocode; everything that keeps a run safe and resumable
is reached from here in a few calls::

    run = Run(ppo, config)          # check the arguments, make the env(s), before any file
    with run:                       # fixed torch threads; envs closed, env errors named
        actor = run.place(ac)       # train on `device`, act on the CPU
        run.keep(logger, ac=ac, pi_optimizer=pi_optimizer)   # what a checkpoint holds
        epoch0, start_time, episode = run.resume(0, start_time, episode)
        ...
        with run.epoch_end():       # model, row, then: run.save(epoch + 1, start_time, episode)

What lies behind it (argument rules, env checks, checkpoints, devices, CUDA graphs, the run
directory) is listed in docs/dev/rooms.rst; a student need not read it.
"""
import gymnasium as gym

from spinup.envs import pixels
from spinup.envs.batch import BatchedTask, EnvList
from spinup.machinery.arg_checks import _rules_of, check_args
from spinup.machinery.checkpoint import Checkpoint, load_checkpoint, recorded, save_checkpoint
from spinup.machinery.console import colorize, print_table  # noqa: F401  (for the logger)
from spinup.machinery.device import RUN_THREADS, Placement, resolve_device, torch_threads
from spinup.machinery.env_checks import (check_finite_obs, check_finite_path,  # noqa: F401
                                         check_finite_paths,
                                         check_finite_reward, check_finite_rows, env_label,
                                         make_env, report_env_step_error)
from spinup.machinery.record import RunRecord  # noqa: F401  (for the logger)
from spinup.machinery.serialization_utils import (convert_json, kwargs_to_plain,  # noqa: F401
                                                  save_model, write_atomically,
                                                  write_text_atomically)
from spinup.machinery.stopping import die_with, stop_all, stops_wait  # noqa: F401 (first two: A3C)
from spinup.machinery.update_graph import CapturedCall, UpdateRound  # noqa: F401
from spinup.utils.mpi_tools import num_procs


def acting_error(error, obs, buf, step, where):
    """The exception to raise when the policy failed on ``obs`` with ``error`` (a
    ValueError: NaN or infinite output): a non-finite observation is named by the env
    check (which raises), else ``ValueError("<where>: <error>")``, ``where`` saying when
    (e.g. ``'ppo: epoch 3, step 17'``); ``buf`` names the env, ``step`` counts the rollout."""
    check_finite_obs(obs, buf, step)
    return ValueError(f"{where}: {error}")


class Run:
    """The machinery of one run of an algorithm, behind one object.

    Args:
        fn (callable): the algorithm function (its argument rules and env spaces are
            looked up by its module, :data:`spinup.machinery.arg_checks.RULES`).
        config (dict): its arguments, ``dict(locals())`` at its top; ``_algorithm`` is
            added for ``config.json``.
        test_env (bool): also make a separate test env (:attr:`test_env`).
        name (str or None): the name in messages (default ``fn.__name__``).
        record (bool): wrap the envs to record their episodes (False: A3C, whose main
            process keeps no training episode).

    Attributes:
        env: the checked training env (wrapped to record its episode for a resume).
        envs (EnvList or BatchedTask): the ``config['num_envs']`` copies stepped together
            (:mod:`spinup.envs.batch`): separate gymnasium envs, or one batched task when
            ``env_fn()`` returns a ``gymnasium.vector.VectorEnv`` (then ``env`` is it too).
        test_env: the test env, or None.
        device (torch.device): where the networks train, after :meth:`place`.

    Raises:
        TypeError, ValueError: an argument or the env is refused (one line), before any
            file is written.
    """

    def __init__(self, fn, config, test_env=False, name=None, record=True):
        self.name, self.config = name or fn.__name__, config
        check_args(self.name, fn, config)
        env_fn, num_envs = config["env_fn"], config.get("num_envs")
        first = make_env(self.name, env_fn, num_envs=num_envs, **_rules_of(fn)[1])
        if isinstance(first, gym.vector.VectorEnv):   # one task steps all the copies
            self.envs = self.env = BatchedTask(first)
            self.test_env = self.env.single_env(self.name) if test_env else None
        else:   # recorded: a Box2D world cannot be saved, so a resume replays the episode
            self.envs = EnvList([recorded(e) if record else e
                                 for e in [first] + [env_fn() for _ in range(1, num_envs or 1)]])
            self.env = self.envs.envs[0]
            # an Atari env_fn's test episodes play whole, unclipped games
            self.test_env = getattr(env_fn, "evaluation_env", env_fn)() if test_env else None
        self.label = env_label(self.name, self.env)   # names the env in data errors
        # k when observations are the last k frames: DQN's replay keeps each frame once
        self.frame_stack = pixels.frame_stack(self.env)
        pixels.check_replay_memory(self.name, config, self.env, self.frame_stack, self.envs)
        self.placed = self.ckpt = self.run_dir = self.logger = None
        self.device, self.saved, self._threads = None, {}, torch_threads(RUN_THREADS)

    def __enter__(self):
        """Train with :data:`RUN_THREADS` torch threads, however the run was launched (the
        count changes the last bits of sums); the caller's count comes back at the end."""
        self._threads.__enter__()
        return self

    def __exit__(self, kind, error, tb):
        """Put the thread count back and close the envs; an exception from inside an env's
        ``step()`` gets one line naming the epoch and step before it propagates."""
        if isinstance(error, Exception):   # not Ctrl-C: a KeyboardInterrupt is no env error
            report_env_step_error(self.name, error)
        if hasattr(self.logger, "close"):   # the end of training: a tracked run is ended
            self.logger.close(failed=error is not None)
        for env in (self.envs, self.test_env):
            if env is not None:
                env.close()
        return self._threads.__exit__(kind, error, tb)

    def place(self, net, procs=None):
        """Train ``net`` on ``config['device']`` (checked; ``procs``: the processes that
        share the run, MPI ranks by default) and return the module to act with: ``net``
        itself on the CPU, else a CPU copy that :meth:`refresh` keeps current."""
        procs = num_procs() if procs is None else procs
        self.placed = Placement(net, resolve_device(self.name, self.config.get("device", "cpu"),
                                                    procs))
        self.device = self.placed.device
        return self.placed.actor

    def batch(self, data):
        """``data`` (a dict of tensors) on the training device."""
        return self.placed.batch(data)

    def refresh(self):
        """Copy the trained weights into the acting copy (nothing to do on the CPU)."""
        self.placed.refresh()

    def keep(self, logger, replay=None, env=True, test_env=None, **nets):
        """Name what each epoch's checkpoint holds: ``nets`` (networks, optimizers, or
        tensors; ``None`` is kept as None), the ``replay`` buffer, the episodes in progress
        of the envs (``env=False``: none) and the test env's state (:attr:`test_env`, or
        ``test_env``)."""
        envs = (self.envs if isinstance(self.envs, BatchedTask) else self.envs.envs
                if "num_envs" in self.config else self.env)
        self.logger = logger
        if pixels.keeps_score(self.envs):   # Atari: the game's own score beside EpRet
            logger.game_scores = lambda: [s for s, _ in pixels.finished_games(self.envs)]
        self.ckpt = Checkpoint(self.name, logger, env=envs if env else None, placed=self.placed,
                               nets=nets, replay=replay, test_env=test_env or self.test_env)
        logger_kwargs = self.config.get("logger_kwargs") or {}
        self.run_dir = logger.output_dir or logger_kwargs.get("output_dir")
        self.resuming = logger.resuming

    def resume(self, epochs_done, start_time, episode=None):
        """On a resume (``logger_kwargs['resume']``): load the checkpoint into what
        :meth:`keep` named, cut the table back, and return ``(epochs_done, start_time,
        episode)`` to go on from; else return the arguments. :attr:`saved` then holds the
        checkpoint's other values (``{}`` without a resume)."""
        if not self.resuming:
            return epochs_done, start_time, episode
        self.saved = load_checkpoint(self.run_dir)
        return self.ckpt.restore(self.saved)

    def epoch_end(self):
        """Context manager around an epoch's files (model, row, checkpoint): a Ctrl-C or
        SIGTERM inside waits for all (:func:`~spinup.machinery.stopping.stops_wait`)."""
        return stops_wait()

    def save(self, epochs_done, start_time, episode=None, **extra):
        """Write the checkpoint after ``epochs_done`` epochs (after the epoch's row):
        ``episode`` as ``(obs, ep_ret, ep_len)``, ``extra`` plain values to keep."""
        if self.run_dir is not None:
            save_checkpoint(self.run_dir, self.ckpt.state(epochs_done, start_time, episode,
                                                          **extra))

    def update_round(self, update, buffer, batch_size, n, graph, period=None, log=print):
        """On a GPU, the off-policy round of ``n`` updates on fresh batches from ``buffer``
        as one :class:`~spinup.machinery.update_graph.UpdateRound` (the rows drawn by the
        CPU's numpy calls, the batches gathered on the GPU, the round replayed as a CUDA
        graph with ``graph``); on the CPU None: the algorithm runs its loop as written."""
        round_ = UpdateRound(self.name, update, buffer, batch_size, n, self.device, graph,
                             period, log)
        return round_ if round_.on_device else None

    def captured(self, fn, graph, log=print):
        """``fn`` as a :class:`~spinup.machinery.update_graph.CapturedCall` on the training
        device: called plainly on the CPU, replayed as a CUDA graph with ``graph``."""
        return CapturedCall(self.name, fn, self.device, graph, log)
