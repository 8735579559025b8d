"""Experiment processes and signals: start one as the leader of its own process group
(:class:`_LocalHandle`), turn SIGINT and SIGTERM into :class:`Interrupted` while it runs, and stop
a set of them with spinup's one stop policy (:func:`_stop`: SIGINT, up to
:data:`~spinup.machinery.stopping.SHUTDOWN_GRACE` seconds, then SIGKILL).
:mod:`spinup.launch.grid_launch` and :mod:`spinup.launch.ray_launch` use them.
"""
import contextlib
import functools
import json
import os
import os.path as osp
import signal
import subprocess
import sys
import threading

from spinup.machinery.stopping import SHUTDOWN_GRACE, stop_all  # noqa: F401

POLL_SECONDS = 0.5   #: how often (seconds) the launcher looks at the running variants


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM reached the launcher while experiments ran (see Signals): ``signum``
    (int) is the signal; ``reported`` (bool): the launcher has printed what was interrupted."""

    def __init__(self, signum=signal.SIGINT):
        super().__init__()
        self.signum, self.reported = signum, False


def _start_process(encoded, log_path=None, threads=None):
    """Start ``run_entrypoint.py`` on ``encoded`` as the leader of a new process group, its
    output appended to ``log_path`` (``None``: this process's). Call it with SIGINT and
    SIGTERM blocked (see Signals); nothing runs between fork and exec (no ``preexec_fn``),
    which could deadlock in a multi-threaded process such as a Ray worker."""
    entrypoint = osp.join(osp.dirname(osp.abspath(__file__)), "run_entrypoint.py")
    # The child looks modules up as this process does (e.g. --env mymod:MyEnv-v0 with
    # mymod.py in the current directory); run_entrypoint puts this sys.path first.
    env = dict(os.environ, SPINUP_PARENT_SYS_PATH=json.dumps(sys.path),
               SPINUP_LAUNCHER_PID=str(os.getpid()))
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
                   PYTHONUNBUFFERED="1")
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(log_path, "a")) if log_path else None
        return subprocess.Popen([sys.executable or "python", entrypoint, encoded],
                                stdout=log, stderr=subprocess.STDOUT if log else None,
                                stdin=subprocess.DEVNULL if log else None, env=env,
                                start_new_session=True)


@contextlib.contextmanager
def _signals_interrupt():
    """Within: SIGINT (unless ignored) and SIGTERM raise :class:`Interrupted`. Only
    the main thread can set handlers; elsewhere the signals keep their effect."""
    def raise_interrupted(signum, frame):
        raise Interrupted(signum)
    main = threading.current_thread() is threading.main_thread()
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} if main else {}
    for s, handler in previous.items():
        if handler not in (signal.SIG_IGN, None):
            signal.signal(s, raise_interrupted)
    try:
        yield
    finally:
        for s, handler in previous.items():
            if handler is not None:
                signal.signal(s, handler)


class _LocalHandle:
    """An experiment process of this machine, started by :meth:`start`."""

    def __init__(self, encoded, log_path=None, threads=None):
        self.args, self.proc = (encoded, log_path, threads), None

    @property
    def started(self):
        """Whether there is a process (a signal can come before :meth:`start` made it)."""
        return self.proc is not None

    def start(self):
        """Fork with SIGINT and SIGTERM blocked: one arriving meanwhile is raised once
        ``self.proc`` is set, so the caller can stop the process (see Signals)."""
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            self.proc = _start_process(*self.args)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def poll(self):
        return None if self.proc is None else self.proc.poll()

    def _signal(self, signum):
        if self.proc is not None and self.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signum)

    interrupt = functools.partialmethod(_signal, signal.SIGINT)
    kill = functools.partialmethod(_signal, signal.SIGKILL)


def _stop(handles):
    """Stop the experiments of ``handles`` with spinup's one stop policy
    (:func:`~spinup.machinery.stopping.stop_all`: SIGINT to each process group, up to
    :data:`SHUTDOWN_GRACE` seconds, SIGKILL)."""
    stop_all(handles)
