"""How spinup stops the processes it starts, with one policy for all of them (an experiment of
a grid, a single run, a Ray task's process, A3C's workers): ask each to stop, wait up to
:data:`SHUTDOWN_GRACE` seconds while they finish what they must save, then kill the rest.
And a child started by spinup dies with its parent (Linux), so no orphan trains on. Inside a
run, :func:`stops_wait` keeps a stop from landing between an epoch's files."""
import contextlib
import os
import signal
import threading
import time

SHUTDOWN_GRACE = 30   #: seconds the processes get to stop after being asked, before being killed


def stop_all(handles, meanwhile=None, tick=0.2):
    """Stop every handle: ``interrupt()`` each (ask), wait while any ``poll()`` is None, at
    most :data:`SHUTDOWN_GRACE` seconds, calling ``meanwhile()`` every ``tick`` seconds (e.g.
    to read their messages), then ``kill()`` each (a no-op for one that ended). A second
    Ctrl-C (``KeyboardInterrupt``) while waiting ends the wait at once."""
    for handle in handles:
        handle.interrupt()
    deadline = time.time() + SHUTDOWN_GRACE
    while time.time() < deadline and any(h.poll() is None for h in handles):
        try:
            if meanwhile is not None:
                meanwhile()
            time.sleep(tick)
        except KeyboardInterrupt:   # a second Ctrl-C: do not wait any longer
            break
    for handle in handles:
        handle.kill()


@contextlib.contextmanager
def stops_wait(signals=(signal.SIGINT, signal.SIGTERM)):
    """Context manager: a Ctrl-C (SIGINT) or SIGTERM that arrives inside the block waits until
    the block ends and is then handled as it would have been (the previous Python handler is
    called, e.g. ``KeyboardInterrupt`` raised; a signal with its default action is sent again,
    which ends the process). Used around an epoch's saved files (model, row, checkpoint), so a
    stopped run never holds a row without its checkpoint. An ignored signal stays ignored; a
    handler set outside Python is left alone; outside the main thread (where Python cannot
    set handlers) the block runs unguarded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived = []
    previous = {s: signal.getsignal(s) for s in signals}
    guarded = [s for s, h in previous.items() if h not in (signal.SIG_IGN, None)]
    for s in guarded:
        signal.signal(s, lambda signum, frame: arrived.append(signum))
    try:
        yield
    finally:
        for s in guarded:
            signal.signal(s, previous[s])
        for s in dict.fromkeys(arrived):   # each kind once, in the order they came
            if callable(previous[s]):
                previous[s](s, None)
            else:   # SIG_DFL
                os.kill(os.getpid(), s)


def die_with(parent):
    """Linux: get SIGTERM when the parent process dies, even by ``kill -9``
    (``prctl(PR_SET_PDEATHSIG)``); stop at once if ``parent`` (its pid) is already gone."""
    import ctypes
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != parent:   # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)
