"""The worker processes of A3C and how the main process supervises them.

:mod:`spinup.algos.a3c.a3c` says *what* a worker computes; this module says how the
workers are started, how they talk to the main process, and how they are stopped,
so that a run never leaves processes behind:

- **Start.** :class:`WorkerPool` starts each worker with the ``spawn`` method, as
  a fresh interpreter: forking a process that already runs torch/OpenMP threads can
  deadlock, ``fork`` does not exist on Windows and is not the default on macOS.
  Spawn pickles a process's arguments, so the worker function is sent with
  ``cloudpickle`` (closures and lambdas work), while the shared model, the
  optimizer and the step counter go as ordinary arguments, which
  ``torch.multiprocessing`` sends as handles to shared memory, not as copies.
- **Messages.** A worker reports to the main process through one queue, with one
  small named tuple per kind of message (:class:`WorkerStarted`,
  :class:`EpisodeDone`, :class:`UpdateDone`, :class:`WorkerFailed`).
- **Ctrl-C.** The terminal sends ``SIGINT`` to every process of the group. Workers
  ignore it; in the main process it only sets a flag, which :meth:`WorkerPool.poll`
  turns into ``KeyboardInterrupt`` at a point where the main loop can clean up (an
  exception raised at an arbitrary instruction could be swallowed, e.g. inside a
  finalizer).
- **Stop.** The main process sets a stop event and joins the workers, reading the
  queue meanwhile (a worker with unread messages in a full pipe cannot exit);
  workers that do not stop within the grace period are terminated, then killed (the
  launcher's policy too: :mod:`spinup.machinery.stopping`). A worker dies with its
  parent (Linux), as every process spinup starts does.
- **Failure.** An exception in a worker is sent to the main process as
  :class:`WorkerFailed` with its traceback; :meth:`WorkerPool.poll` raises it as
  :class:`WorkerError`, and so it does for a worker that died without a word.
"""
import contextlib
import os
import queue
import signal
import sys
import threading
import traceback
from typing import NamedTuple

import torch
import torch.multiprocessing as mp

from spinup.machinery.door import RUN_THREADS, die_with, stop_all


# ---- Messages from a worker to the main process ----

class WorkerStarted(NamedTuple):
    """The worker process is running (sent before anything else)."""
    wid: int
    pid: int


class EpisodeDone(NamedTuple):
    """A training episode ended (terminal state, time limit or ``max_ep_len``)."""
    wid: int
    ep_ret: float
    ep_len: int


class UpdateDone(NamedTuple):
    """The worker applied one gradient step to the shared model.

    ``T`` is the global step counter just after this update, ``staleness`` the
    number of other workers' updates applied between this worker reading the
    shared parameters and writing its gradient, ``losses`` a dict of floats
    (``LossPi``, ``LossV``, ``Entropy``) and ``v_mean`` the mean critic value over
    the rollout.
    """
    wid: int
    time: float
    T: int
    staleness: int
    losses: dict
    v_mean: float


class WorkerFailed(NamedTuple):
    """The worker raised; ``trace`` is the formatted traceback, or only the message
    for a ``ValueError`` (a refusal such as a NaN policy output: one line, no traceback)."""
    wid: int
    trace: str
    refusal: bool = False


class WorkerError(RuntimeError):
    """A worker failed, died, or all workers stopped too early."""


# ---- The worker side ----

class WorkerLink:
    """What a worker process sees of the main process: the stop event and the message
    queue. Created in the main process (whose pid it keeps) and passed to each worker."""

    def __init__(self, stop, messages):
        self._stop = stop
        self._messages = messages
        self.parent = os.getpid()

    def running(self):
        """False once the main process asked the workers to stop."""
        return not self._stop.is_set()

    def send(self, message):
        self._messages.put(message)


def _worker_main(wid, link, target_bytes, shared_args):
    """Entry point of a worker process: run ``target(wid, link, *shared_args)``."""
    # Ctrl-C is for the main process, which stops the workers in order; a worker
    # killed half-way through an update could leave a lock held.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The workers already use every core between them: RUN_THREADS (one) each.
    torch.set_num_threads(RUN_THREADS)
    if sys.platform.startswith("linux"):
        die_with(link.parent)   # no orphan: the worker ends with the main process
    try:
        import cloudpickle
        link.send(WorkerStarted(wid, os.getpid()))
        target = cloudpickle.loads(target_bytes)
        target(wid, link, *shared_args)
    except ValueError as e:
        if str(e).startswith("a3c:"):   # spinup's own one-line refusal (e.g. a NaN output)
            link.send(WorkerFailed(wid, str(e), refusal=True))
        else:   # the user's env or actor-critic: its traceback is what they need
            link.send(WorkerFailed(wid, traceback.format_exc()))
        raise SystemExit(1)
    except Exception:
        link.send(WorkerFailed(wid, traceback.format_exc()))
        raise SystemExit(1)


# ---- The main-process side ----

class _WorkerHandle:
    """A worker process as :func:`~spinup.machinery.stopping.stop_all` handles one: asked
    to stop through the pool's stop event, killed with SIGTERM, then SIGKILL."""

    def __init__(self, proc, stop):
        self.proc, self.stop = proc, stop

    def interrupt(self):
        self.stop.set()

    def poll(self):
        self.proc.join(0)   # reaps an ended worker
        return self.proc.exitcode

    def kill(self):
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


class WorkerPool:
    """Starts ``num_workers`` processes running one function and supervises them.

    Use :meth:`running` as a context manager around the main loop; inside it, call
    :meth:`poll`, :meth:`wait_until` or :meth:`join` often: they hand the workers'
    messages to a ``handle(message)`` callback (in the order they were sent) and
    raise :class:`WorkerError` or ``KeyboardInterrupt`` when the run must end.

    Args:
        num_workers (int): number of processes, >= 1.
        name (str): prefix of error messages and process names (``name-worker-i``).
        log (callable): ``log(text)`` for start-up and shutdown notes.
    """

    def __init__(self, num_workers, name, log=print):
        #: The multiprocessing context; shared objects (``ctx.Value``...) that are
        #: passed to the workers must come from it.
        self.ctx = mp.get_context("spawn")
        self.name = name
        self.num_workers = num_workers
        self._log = log
        self._stop = self.ctx.Event()
        self._messages = self.ctx.Queue()
        self._procs = []
        self._interrupted = False

    # -- starting and stopping --

    @contextlib.contextmanager
    def running(self, target, shared_args=()):
        """Start the workers, each running ``target(wid, link, *shared_args)``, and
        stop them all (see :meth:`stop`) when the block is left, however it is left.

        Args:
            target (callable): the worker function; sent with cloudpickle, so it may
                be a closure. It should return once ``link.running()`` is false and
                send :class:`EpisodeDone`/:class:`UpdateDone` with ``link.send``.
            shared_args (tuple): objects shared with the workers (tensors in shared
                memory, ``ctx.Value``, ...). They must be passed here, not captured
                by ``target``: cloudpickle would send copies.

        Yields:
            WorkerPool: ``self``.
        """
        import cloudpickle
        target_bytes = cloudpickle.dumps(target)
        link = WorkerLink(self._stop, self._messages)
        self._procs = [self.ctx.Process(target=_worker_main, name=f"{self.name}-worker-{i}",
                                        daemon=True, args=(i, link, target_bytes, shared_args))
                       for i in range(self.num_workers)]
        in_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGINT) if in_main_thread else None
        try:
            # A spawned interpreter keeps an ignored SIGINT, so a Ctrl-C during its
            # (slow) start-up cannot kill it before it installs its own handler.
            if in_main_thread:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                for p in self._procs:
                    p.start()
            finally:
                if in_main_thread:
                    signal.signal(signal.SIGINT, self._on_sigint)
            yield self
        finally:
            self.stop()
            if in_main_thread and previous is not None:
                signal.signal(signal.SIGINT, previous)

    def _on_sigint(self, signum, frame):
        self._interrupted = True

    def stop(self, handle=None):
        """Stop every worker with spinup's one stop policy
        (:func:`~spinup.machinery.stopping.stop_all`): set the stop event, wait up to
        ``SHUTDOWN_GRACE`` seconds, then terminate (and kill) those still alive. Messages
        that arrive meanwhile go to ``handle`` (failures are only logged) or, without
        ``handle``, are dropped. Returns when no worker process is left."""
        stop_all([_WorkerHandle(p, self._stop) for p in self._procs], tick=0.05,
                 meanwhile=lambda: self._read(handle, wait=0.0, raise_failures=False))
        self._read(handle, wait=0.0, raise_failures=False)

    # -- watching the workers --

    def poll(self, handle, timeout=0.0):
        """Hand waiting messages to ``handle`` (waiting up to ``timeout`` seconds for
        the first one).

        Raises:
            KeyboardInterrupt: Ctrl-C was pressed since the last call.
            WorkerError: a worker reported an exception or exited with an error.
        """
        if self._interrupted:
            raise KeyboardInterrupt
        self._read(handle, wait=timeout, raise_failures=True)
        for p in self._procs:
            if p.exitcode not in (None, 0):
                # Its traceback may still be on the way: give it a moment.
                self._read(handle, wait=0.2, raise_failures=True, until_quiet=True)
                raise WorkerError(f"{self.name}: {p.name} exited with code {p.exitcode}")

    def wait_until(self, done, handle, interval=0.05):
        """Poll until ``done()`` is true.

        Raises:
            WorkerError: every worker has exited normally but ``done()`` is still
                false (it never will be), or as :meth:`poll`.
            KeyboardInterrupt: as :meth:`poll`.
        """
        while not done():
            self.poll(handle, timeout=interval)
            if all(p.exitcode == 0 for p in self._procs) and not done():
                raise WorkerError(f"{self.name}: all workers exited before the end of the run")

    def join(self, handle, interval=0.05):
        """Wait for every worker to return by itself, polling meanwhile."""
        for p in self._procs:
            while p.is_alive():
                self.poll(handle, timeout=interval)
                p.join(interval)
        self.poll(handle)

    def _read(self, handle, wait, raise_failures, until_quiet=False):
        """Empty the queue. Waits ``wait`` seconds for the first message, or, with
        ``until_quiet``, keeps reading until no message came for ``wait`` seconds."""
        try:
            message = self._messages.get(timeout=wait) if wait > 0 else \
                self._messages.get_nowait()
            while True:
                self._dispatch(message, handle, raise_failures)
                message = self._messages.get(timeout=wait) if until_quiet else \
                    self._messages.get_nowait()
        except queue.Empty:
            pass

    def _dispatch(self, message, handle, raise_failures):
        if isinstance(message, WorkerStarted):
            self._log(f"Worker {message.wid} started (pid {message.pid})")
        elif isinstance(message, WorkerFailed):
            text = message.trace if message.refusal else \
                f"{self.name}: worker {message.wid} failed:\n{message.trace}"
            if raise_failures:
                raise (ValueError if message.refusal else WorkerError)(text)
            self._log(text)
        elif handle is not None:
            handle(message)
