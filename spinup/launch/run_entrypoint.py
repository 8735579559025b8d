"""The process in which :func:`spinup.launch.run_utils.call_experiment` runs an experiment:
``python run_entrypoint.py <base64 of zlib of cloudpickle of a zero-argument function>``.

Exit codes: 0 when the call returns; 2 with the message on one line for a ``ValueError``,
``TypeError`` or ``FileExistsError`` (``SPINUP_DEBUG=1`` shows the traceback); 130 without a
traceback for Ctrl-C, which stays blocked (by the launcher) until :func:`main` has loaded the
call and its modules; 1 with Python's traceback for anything else. Under MPI, exits 2 and 130
abort every rank. The launching process's ``sys.path`` (``SPINUP_PARENT_SYS_PATH``, JSON)
comes first, in place of this file's directory, so modules import as they did there.
"""
import atexit
import base64
import contextlib
import json
import os
import signal
import sys
import zlib


def _use_parent_path():
    try:
        parent = json.loads(os.environ.get("SPINUP_PARENT_SYS_PATH", ""))
    except ValueError:
        return
    if not isinstance(parent, list):
        return
    parent = [p for p in parent if isinstance(p, str)]
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if p not in parent and os.path.abspath(p or ".") != here]
    sys.path[:] = parent + rest


def _exit(code):
    """Exit at once, running the ``atexit`` handlers but not the slow interpreter teardown;
    under MPI abort the whole job, so that no other rank hangs."""
    from spinup.utils.mpi_tools import _comm, num_procs
    sys.stderr.flush()
    if num_procs() > 1:
        _comm().Abort(code)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


_ctrl_c_seen = False   # set by the handler of watch_ctrl_c when a Ctrl-C arrives


def _note_and_raise(signum, frame):
    global _ctrl_c_seen
    _ctrl_c_seen = True
    raise KeyboardInterrupt


def watch_ctrl_c():
    """From now on, remember every Ctrl-C as well as raising ``KeyboardInterrupt``, so that
    :func:`caused_by_ctrl_c` recognises one that a C extension's import turned into another
    exception (numpy's "could not import module 'datetime'"). Does nothing outside the main
    thread or when SIGINT has a handler other than Python's default.

    Returns:
        The previous handler, for :func:`unwatch_ctrl_c`.
    """
    global _ctrl_c_seen
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.default_int_handler:
        _ctrl_c_seen = False
        with contextlib.suppress(ValueError):   # not the main thread
            signal.signal(signal.SIGINT, _note_and_raise)
    return previous


def unwatch_ctrl_c(previous):
    """Undo :func:`watch_ctrl_c`: put back ``previous``, the handler it returned."""
    if signal.getsignal(signal.SIGINT) is not previous:
        signal.signal(signal.SIGINT, previous)


_mask_before_hold = None   # the signal mask from before hold_ctrl_c (None: nothing held)


def hold_ctrl_c():
    """Block SIGINT until :func:`release_ctrl_c`, e.g. during imports (a Ctrl-C inside
    torch's can abort the process); a Ctrl-C meanwhile waits, it is not lost."""
    global _mask_before_hold
    if _mask_before_hold is None:
        _mask_before_hold = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def release_ctrl_c():
    """Let a Ctrl-C held by :func:`hold_ctrl_c` through (it raises KeyboardInterrupt at
    once); does nothing when none is held."""
    global _mask_before_hold
    if _mask_before_hold is not None:
        mask, _mask_before_hold = _mask_before_hold, None
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def caused_by_ctrl_c(exc):
    """Whether ``exc`` came from a Ctrl-C: a ``KeyboardInterrupt`` is in its chain of causes
    and contexts, or a Ctrl-C has been seen since :func:`watch_ctrl_c`."""
    if _ctrl_c_seen:
        return True
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def take_signals_from_launcher():
    """First thing in a process the grid launcher started (nothing without
    ``SPINUP_LAUNCHER_PID``). It starts with SIGINT and SIGTERM blocked (the launcher's mask at
    the fork): SIGINT gets Python's handler, even if the launcher ignored it (a Ray worker does),
    and stays blocked until :func:`main` is ready for it; SIGTERM is unblocked; on Linux the
    process gets SIGTERM when the launcher dies
    (:func:`spinup.machinery.stopping.die_with`)."""
    launcher = os.environ.pop("SPINUP_LAUNCHER_PID", None)
    if launcher is None:
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    if sys.platform.startswith("linux"):
        from spinup.machinery.stopping import die_with   # spinup's one rule for its children
        die_with(int(launcher))


def main(encoded_thunk):
    """Decode the call and run it, turning user errors into one line and an exit code.

    Args:
        encoded_thunk (str): the call, encoded by ``call_experiment``.
    """
    try:
        watch_ctrl_c()
        _use_parent_path()
        import cloudpickle
        # Unpickling imports numpy, torch, ... while Ctrl-C is still held (it can abort them).
        call = cloudpickle.loads(zlib.decompress(base64.b64decode(encoded_thunk)))
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})   # a held Ctrl-C lands here
        call()
    except KeyboardInterrupt:
        _exit_after_ctrl_c()
    except BrokenPipeError:   # its launcher, which knows the run's directory, says so
        _stdout_to_devnull()
        _exit(EXIT_PIPE_CLOSED)
    except Exception as e:
        if caused_by_ctrl_c(e):   # a library turned the Ctrl-C into another exception
            _exit_after_ctrl_c()
        if not isinstance(e, (ValueError, TypeError, FileExistsError)) \
                or getattr(e, "spinup_keep_traceback", False) or os.environ.get("SPINUP_DEBUG"):
            raise   # a bug, a missing module, the user's env failing, or asked for: keep it
        print(f"error: {e} (set SPINUP_DEBUG=1 for the traceback)", file=sys.stderr)
        _exit(2)


EXIT_PIPE_CLOSED = 141   #: exit code after the reader of stdout went away (128 + SIGPIPE)


def _stdout_to_devnull():
    """Point stdout at ``/dev/null``, so that the final flush does not fail again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def stdout_closed(run_dirs=None):
    """Handle a ``BrokenPipeError`` on stdout (the reader exited early, as ``| head``
    does) in the launching process: point stdout at ``/dev/null``, say so once on stderr
    and return :data:`EXIT_PIPE_CLOSED`. ``--resume`` is named only when one of ``run_dirs``
    (the directories of the runs it stopped) holds a checkpoint
    (:func:`~spinup.machinery.run_dir.can_resume`); without any, nothing was kept; ``None``
    (no run known) says neither."""
    from spinup.machinery.run_dir import can_resume
    _stdout_to_devnull()
    kept = ""
    if run_dirs is not None and any(can_resume(d) for d in run_dirs):
        kept = "; what the run wrote so far is kept (--resume continues it)"
    elif run_dirs is not None:
        kept = (" before the run's first epoch ended, so nothing was kept (the same command "
                "starts it again)")
    with contextlib.suppress(OSError):
        print("stopped: the program reading the output closed it (e.g. '| head')" + kept,
              file=sys.stderr)
    return EXIT_PIPE_CLOSED


def _exit_after_ctrl_c():
    if "spinup.utils.mpi_tools" in sys.modules:   # else: interrupted while importing
        _exit(130)
    sys.exit(130)


if __name__ == "__main__":
    _use_parent_path()   # spinup imports as in the launcher (also for die_with)
    take_signals_from_launcher()
    main(sys.argv[1])
