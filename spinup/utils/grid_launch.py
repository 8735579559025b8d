"""Running a grid's variants side by side, and picking up a grid where it stopped.

:meth:`ExperimentGrid.run <spinup.utils.run_utils.ExperimentGrid.run>` hands a
grid to :func:`run_grid` when it is asked for ``jobs``, ``resume`` or a
``launcher``:

* ``jobs=N`` keeps up to N variants running at once, each as its own process
  on this machine (an MPI job with ``num_cpu > 1``). ``'auto'`` takes as many as
  the cores allow: ``cores // num_cpu``. Each process gets an equal share of
  torch's threads, so N jobs never ask for more threads than there are cores.
* ``launcher='ray'`` sends each variant to a Ray cluster instead, as a task that
  reserves ``num_cpu`` CPUs of one node (``ray_address`` names the cluster; with
  none, a Ray instance is started on this machine for the grid).
* ``resume=True`` looks at each variant's run directory first: a run that did
  all its epochs is skipped, a run with a checkpoint continues from it, and the
  others start from scratch.

A variant's own output (progress lines, warnings, errors) goes to ``output.log``
in its run directory; the terminal gets one line per finished epoch of any
variant, one per variant that ends, and a summary. A failed variant does not stop
the others; the grid raises :class:`GridError` at the end. Ctrl-C (or SIGTERM)
stops every variant the way Ctrl-C stops one: each keeps its last checkpoint,
so the same command with ``--resume`` carries on. See ``docs/user/parallel.rst``.
"""
import inspect
import json
import os
import os.path as osp
import signal
import subprocess
import sys
import threading
import time

from spinup.utils.logx import colorize, progress_line
from spinup.utils.run_utils import (DIV_LINE_WIDTH, ExperimentError, LaunchError,
                                    _encode_call, _make_env_fn, check_before_launch,
                                    setup_logger_kwargs)
from spinup.utils.serialization_utils import convert_json

#: File in each run directory that receives the variant's terminal output.
LOG_NAME = "output.log"

#: How often (seconds) the launcher looks at the running variants.
POLL_SECONDS = 0.5

#: Seconds the variants get to stop after Ctrl-C before they are killed.
SHUTDOWN_GRACE = 30

LAUNCHERS = ("local", "ray")


class GridError(ExperimentError):
    """Some variants of a grid failed (the others ran to their end).

    Attributes:
        failed (list of tuple): ``(variant label, exit code, log file)`` per failure.
        returncode (int): always 1, the grid's exit code.
    """

    def __init__(self, failed):
        self.failed = failed
        names = ", ".join(f"{label} (exit code {code}, log {log})" for label, code, log in failed)
        RuntimeError.__init__(self, f"{len(failed)} variant(s) of the grid failed: {names}")
        self.exp_name, self.returncode = failed[0][0], 1


class _Run:
    """One variant of the grid: what to call, where it writes, and how far it got."""

    def __init__(self, label, fn, kwargs, output_dir, epochs):
        self.label, self.fn, self.kwargs = label, fn, kwargs
        self.output_dir, self.epochs = output_dir, epochs
        self.state = "start"        # 'start', 'resume' or 'skip' (finished before)
        self.epochs_before = 0      # epochs in the checkpoint a resumed run starts from
        self.shown = 0              # rows of progress.txt already reported
        self.synced = True          # False until a resumed run has cut its table back
        self.last_row = None
        self.handle = None
        self.returncode = None

    @property
    def log_path(self):
        return osp.join(self.output_dir, LOG_NAME)


# ---- Checks and planning ----

def resolve_jobs(jobs, num_cpu=1, oversubscribe=False):
    """The number of variants to run at once on this machine.

    Args:
        jobs (int or str): a positive int, or ``'auto'`` for ``cores // num_cpu``.
        num_cpu (int or str): MPI processes per variant (``'auto'``: one per
            physical core, so ``'auto'`` jobs is then 1).
        oversubscribe (bool): allow ``jobs * num_cpu`` above the cores.

    Returns:
        int: at least 1.

    Raises:
        LaunchError: ``jobs`` is not a positive int or ``'auto'``; or
            ``jobs * num_cpu`` processes exceed the cores without ``oversubscribe``.
    """
    from spinup.utils.mpi_tools import _physical_cores, available_cores
    if jobs != "auto" and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise LaunchError(f"--jobs expects a positive integer or 'auto', got {jobs!r}")
    per_variant = _physical_cores() if num_cpu == "auto" else int(num_cpu)
    cores = available_cores()
    if jobs == "auto":
        return max(1, cores // per_variant)
    if jobs * per_variant > cores and not oversubscribe:
        raise LaunchError(f"--jobs {jobs} x --cpu {num_cpu} = {jobs * per_variant} processes, "
                          f"more than the {cores} CPU cores available here; use --jobs "
                          f"{max(1, cores // per_variant)} (or 'auto'), or add --oversubscribe")
    return jobs


def _epochs_of(fn, kwargs):
    """The run's number of epochs: its keyword, else the function's default, else None."""
    if "epochs" in kwargs:
        return kwargs["epochs"]
    try:
        default = inspect.signature(fn).parameters["epochs"].default
    except (TypeError, ValueError, KeyError):
        return None
    return None if default is inspect.Parameter.empty else default


def _count_rows(output_dir):
    try:
        with open(osp.join(output_dir, "progress.txt")) as f:
            return max(0, sum(1 for line in f if line.strip()) - 1)
    except OSError:
        return 0


def _plan_resume(run, num_cpu):
    """Decide whether ``run`` is skipped, resumed or started again (``resume=True``).

    Raises:
        LaunchError: the checkpoint cannot be read, or was written by another
            number of MPI processes than ``num_cpu``.
    """
    import re

    from spinup.utils.checkpoint import checkpoint_path, load_checkpoint
    from spinup.utils.mpi_tools import _physical_cores
    if not osp.exists(checkpoint_path(run.output_dir)):
        if osp.exists(osp.join(run.output_dir, "progress.txt")):
            # Stopped before its first checkpoint: nothing to keep, start again.
            run.kwargs["logger_kwargs"]["overwrite"] = True
        return
    try:
        done = int(load_checkpoint(run.output_dir, rank=0)["epoch"])
    except (ValueError, KeyError) as e:
        raise LaunchError(f"--resume: {run.label}: {e}") from None
    ranks = len([n for n in os.listdir(osp.join(run.output_dir, "pyt_save"))
                 if re.fullmatch(r"checkpoint(_rank\d+)?\.pt", n)])
    wanted = _physical_cores() if num_cpu == "auto" else int(num_cpu)
    if ranks != wanted:
        raise LaunchError(f"--resume: {run.output_dir} was run with --cpu {ranks}, this grid "
                          f"asks for --cpu {num_cpu}; give the grid its original --cpu")
    if run.epochs is not None and done >= run.epochs:
        run.state, run.shown = "skip", done
        return
    run.state, run.epochs_before, run.shown = "resume", done, done
    run.synced = _count_rows(run.output_dir) <= done
    lk = run.kwargs["logger_kwargs"]
    lk.pop("overwrite", None)
    lk["resume"] = True


def plan_runs(thunk, variants, names, data_dir=None, datestamp=False, overwrite=False,
              tensorboard=False, verbose=False, resume=False, num_cpu=1):
    """The runs of a grid: each variant's function, keyword arguments and directory.

    Args:
        thunk (callable or str): as :meth:`ExperimentGrid.run`.
        variants (list of dict): :meth:`ExperimentGrid.variants` (not modified).
        names (list of str): each variant's name.
        resume (bool): look at the run directories and mark each run to be
            skipped, resumed or started (see :func:`run_grid`).
        others: as :func:`~spinup.utils.run_utils.call_experiment`.

    Returns:
        list of ``_Run``.

    Raises:
        LaunchError: ``resume`` with ``datestamp`` (the names change every time),
            or a checkpoint that cannot be resumed.
    """
    if resume and datestamp:
        raise LaunchError("--resume finds the grid's runs by their directory names, which "
                          "--dt makes new every time; resume each run with --resume DIR")
    runs = []
    for name, variant in zip(names, variants):
        kwargs = dict(variant)
        fn = kwargs.pop(thunk) if isinstance(thunk, str) else thunk
        kwargs["seed"] = kwargs.get("seed", 0)
        logger_kwargs = kwargs.get("logger_kwargs") or setup_logger_kwargs(
            name, kwargs["seed"], data_dir, datestamp, overwrite, tensorboard, verbose)
        kwargs["logger_kwargs"] = dict(logger_kwargs)
        output_dir = logger_kwargs["output_dir"]
        runs.append(_Run(osp.basename(osp.normpath(output_dir)), fn, kwargs, output_dir,
                         _epochs_of(fn, kwargs)))
        if resume:
            _plan_resume(runs[-1], num_cpu)
    return runs


# ---- Starting a run ----

def _encoded_call(run, num_cpu, oversubscribe):
    """``run``'s call, serialized for ``run_entrypoint.py`` (an MPI job if ``num_cpu > 1``)."""
    fn, kwargs = run.fn, dict(run.kwargs)
    if "env_name" in kwargs:
        kwargs["env_fn"] = _make_env_fn(kwargs.pop("env_name"))

    def run_in_subprocess():
        from spinup.utils.mpi_tools import mpi_fork
        mpi_fork(num_cpu, oversubscribe)
        fn(**kwargs)
    return _encode_call(run_in_subprocess)


def _write_header(run):
    """Start (or continue) the run's log with what is being run."""
    os.makedirs(run.output_dir, exist_ok=True)
    # A run started from scratch (overwrite=True included) starts a new log.
    with open(run.log_path, "w" if run.state == "start" else "a") as log:
        what = {"resume": f"Resuming after epoch {run.epochs_before}",
                "start": "Running"}[run.state]
        log.write(f"{what}: experiment {run.label} with kwargs "
                  + json.dumps(convert_json(run.kwargs), sort_keys=True) + "\n")


def _thread_env(threads):
    return {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
            "PYTHONUNBUFFERED": "1"}


def _start_process(encoded, log_path, extra_env):
    """Start ``run_entrypoint.py`` on ``encoded``, its output appended to ``log_path``.

    The process leads its own process group, so that a signal sent to the group
    reaches it and, under MPI, ``mpiexec`` and every rank.
    """
    import ctypes  # noqa: F401  (imported here, not in the forked child: see die_with_parent)

    from spinup.utils.mpi_tools import die_with_parent
    entrypoint = osp.join(osp.dirname(osp.abspath(__file__)), "run_entrypoint.py")
    tie_to_parent = die_with_parent()

    def in_child():
        # A Ray worker ignores or blocks some signals, and its children would inherit
        # that: Python would then never raise KeyboardInterrupt. SIGINT stays blocked
        # until run_entrypoint.main is ready for it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        if tie_to_parent is not None:
            tie_to_parent()
    with open(log_path, "a") as log:
        return subprocess.Popen([sys.executable or "python", entrypoint, encoded],
                                stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=dict(os.environ, **extra_env),
                                start_new_session=True, preexec_fn=in_child)


def _signal_group(proc, signum):
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


class _LocalHandle:
    """A variant running as a process of this machine."""

    def __init__(self, encoded, log_path, threads):
        self.proc = _start_process(encoded, log_path, _thread_env(threads))

    def poll(self):
        return self.proc.poll()

    def interrupt(self):
        if self.proc.poll() is None:
            _signal_group(self.proc, signal.SIGINT)

    def terminate(self):
        if self.proc.poll() is None:
            _signal_group(self.proc, signal.SIGTERM)

    def kill(self):
        if self.proc.poll() is None:
            _signal_group(self.proc, signal.SIGKILL)


#: Written into a run directory to ask the Ray task running there to stop (Ctrl-C).
STOP_NAME = ".spinup-stop"


def ray_task(encoded, log_path, threads):
    """What a Ray task runs: the variant's process on the task's node.

    The launcher asks the task to stop (on Ctrl-C) by creating ``STOP_NAME`` in
    the run directory, which every node sees; the task then sends SIGINT to the
    variant's processes, which stop as on Ctrl-C, keeping the last checkpoint.
    A ``KeyboardInterrupt`` raised in the task (``ray.cancel``) does the same.

    Returns:
        int: the variant's exit code.
    """
    stop_path = osp.join(osp.dirname(log_path), STOP_NAME)
    proc = _start_process(encoded, log_path, _thread_env(threads))
    try:
        while not osp.exists(stop_path):
            try:
                return proc.wait(timeout=POLL_SECONDS)
            except subprocess.TimeoutExpired:
                pass
    except KeyboardInterrupt:
        pass
    _signal_group(proc, signal.SIGINT)
    try:
        return proc.wait(timeout=SHUTDOWN_GRACE)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        return proc.wait()
    finally:
        if osp.exists(stop_path):
            os.remove(stop_path)


class _RayHandle:
    """A variant running as a Ray task that reserves ``num_cpu`` CPUs."""

    def __init__(self, remote_fn, encoded, log_path, num_cpu):
        self.stop_path = osp.join(osp.dirname(log_path), STOP_NAME)
        if osp.exists(self.stop_path):   # left by an earlier launcher that was killed
            os.remove(self.stop_path)
        self.ref = remote_fn.options(num_cpus=num_cpu).remote(encoded, log_path, num_cpu)
        self.code = None

    def poll(self):
        import ray
        if self.code is None:
            ready, _ = ray.wait([self.ref], timeout=0)
            if ready:
                try:
                    self.code = ray.get(self.ref)
                except (ray.exceptions.TaskCancelledError, ray.exceptions.RayTaskError,
                        ray.exceptions.WorkerCrashedError) as e:
                    print(f"Ray task failed: {e}", file=sys.stderr)
                    self.code = 130 if isinstance(e, ray.exceptions.TaskCancelledError) else 1
        return self.code

    def interrupt(self):
        if self.poll() is None:
            open(self.stop_path, "w").close()

    terminate = interrupt

    def kill(self):
        import ray
        if self.poll() is None:
            ray.cancel(self.ref, force=True)
        if osp.exists(self.stop_path):
            os.remove(self.stop_path)


def require_ray():
    """Import Ray, or raise a one-line :class:`LaunchError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise LaunchError("--launcher ray needs Ray, which is not installed: pip install -e "
                          "'.[ray]' (or pip install ray)") from None
    return ray


def _check_reachable(ray_address):
    """Fail fast on a ``host:port`` nobody listens on (Ray itself would retry for minutes).

    Raises:
        LaunchError: nothing accepts a connection at ``host:port`` within 10 s.
    """
    import socket
    host, colon, port = ray_address.rpartition(":")
    if not colon or not port.isdigit() or "://" in ray_address:
        return   # 'auto', ray://... : left to Ray
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as e:
        raise LaunchError(f"--ray_address {ray_address}: no Ray cluster answers there "
                          f"({e.strerror or e}); start one with 'ray start --head' and give "
                          "its address") from None


def _start_ray(ray_address, num_cpu):
    """Connect to the cluster at ``ray_address`` (or start a local Ray instance).

    Returns:
        bool: whether this call started Ray (and so should shut it down).

    Raises:
        LaunchError: no node of the cluster has ``num_cpu`` CPUs.
    """
    ray = require_ray()
    started = False
    if not ray.is_initialized():
        from spinup.utils.mpi_tools import available_cores
        options = dict(address=ray_address) if ray_address else dict(
            num_cpus=available_cores(), include_dashboard=False)
        try:
            ray.init(log_to_driver=False, configure_logging=False, **options)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = f"the Ray cluster at {ray_address}" if ray_address else "a local Ray"
            raise LaunchError(f"--launcher ray: cannot start or reach {where} "
                              f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") \
                from None
        started = True
    largest = max((node.get("Resources", {}).get("CPU", 0) for node in ray.nodes()
                   if node.get("Alive")), default=0)
    if largest < num_cpu:
        if started:
            ray.shutdown()
        raise LaunchError(f"--cpu {num_cpu}: no node of the Ray cluster has {num_cpu} CPUs "
                          f"(the largest has {int(largest)})")
    return started


# ---- The terminal ----

def _as_number(text):
    try:
        return float(text)
    except ValueError:
        return text


def _new_rows(run):
    """Rows of ``run``'s progress.txt not reported yet, as dicts."""
    try:
        with open(osp.join(run.output_dir, "progress.txt")) as f:
            lines = f.read().split("\n")[:-1]   # the last piece is '' or a partial row
    except OSError:
        return []
    if not lines:
        return []
    header, rows = lines[0].split("\t"), lines[1:]
    if not run.synced:   # a resumed run drops the rows after its checkpoint first
        if len(rows) > run.epochs_before:
            return []
        run.synced = True
    first = run.shown = min(run.shown, len(rows))
    run.shown = len(rows)
    return [(first + i + 1, {k: _as_number(v) for k, v in zip(header, row.split("\t"))})
            for i, row in enumerate(rows[first:])]


def _report_epochs(run, width):
    for epochs_done, row in _new_rows(run):
        run.last_row = row
        line = progress_line(row, run.epochs, epochs_done=epochs_done)
        print(f"{run.label.ljust(width)}  {line}", flush=True)


def _return_of(row):
    if not row:
        return "-"
    for key in ("AverageTestEpRet", "AverageEpRet"):
        if isinstance(row.get(key), float):
            return "%.4g" % row[key]
    return "-"


def _summary(runs, seconds):
    rule = "=" * DIV_LINE_WIDTH
    counts = {}
    for run in runs:
        counts[run.outcome] = counts.get(run.outcome, 0) + 1
    print("\n" + rule)
    print(colorize(f"Grid summary ({len(runs)} variants, {seconds / 60:.1f} min): "
                   + ", ".join(f"{n} {what}" for what, n in counts.items()), "white",
                   bold=True))
    width = max(len(run.label) for run in runs)
    for run in runs:
        color = {"finished": "green", "skipped": "cyan"}.get(run.outcome, "red")
        if run.outcome == "FAILED":
            detail = f"exit code {run.returncode}, log {run.log_path}"
        elif run.outcome == "not started":
            detail = "-"
        else:
            detail = f"{run.shown} epochs, return {_return_of(run.last_row)}"
        print(f"  {colorize(run.outcome.ljust(11), color)} {run.label.ljust(width)}  {detail}")
    print(rule, flush=True)


# ---- The grid ----

def run_grid(runs, num_cpu=1, oversubscribe=False, jobs=1, launcher="local",
             ray_address=None, announce=None):
    """Run the planned ``runs`` (see :func:`plan_runs`) and report on the terminal.

    Every check (``jobs`` x ``num_cpu`` against the cores, the run directories,
    Ray being installed) is made before the first variant starts.

    Args:
        runs (list): from :func:`plan_runs`.
        num_cpu (int or str): MPI processes per variant.
        oversubscribe (bool): allow more processes than cores.
        jobs (int or str): variants at once on this machine (``launcher='local'``).
        launcher (str): ``'local'`` or ``'ray'``.
        ray_address (str): the Ray cluster (``launcher='ray'``); ``None`` starts a
            local instance.
        announce (callable): called once the checks passed (e.g. to print the grid).

    Returns:
        list of str: every variant's output directory.

    Raises:
        LaunchError, FileExistsError: a check failed; nothing was started.
        GridError: a variant failed (after all the others ended).
        KeyboardInterrupt: Ctrl-C, after every variant stopped.
    """
    from spinup.utils.mpi_tools import _physical_cores, available_cores
    if launcher not in LAUNCHERS:
        raise LaunchError(f"--launcher expects one of {', '.join(LAUNCHERS)}, got {launcher!r}")
    if ray_address is not None and launcher != "ray":
        raise LaunchError("--ray_address is for --launcher ray")
    per_variant = _physical_cores() if num_cpu == "auto" else int(num_cpu)
    if launcher == "ray":
        ray = require_ray()
        if ray_address and not ray.is_initialized():
            _check_reachable(ray_address)
        for run in runs:   # a task's working directory is not the launcher's
            run.output_dir = osp.abspath(run.output_dir)
            run.kwargs["logger_kwargs"]["output_dir"] = run.output_dir
        check_before_launch([r.kwargs["logger_kwargs"] for r in runs if r.state != "skip"],
                            1, oversubscribe)
    else:
        jobs = resolve_jobs(jobs, num_cpu, oversubscribe)
        check_before_launch([r.kwargs["logger_kwargs"] for r in runs if r.state != "skip"],
                            num_cpu, oversubscribe)
    threads = max(1, available_cores() // jobs) if launcher == "local" else per_variant
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():  # the user's setting, within the share
        threads = max(1, min(threads, int(os.environ["OMP_NUM_THREADS"])))
    if announce is not None:
        announce()
    todo = [r for r in runs if r.state != "skip"]
    for run in runs:
        run.outcome = "skipped" if run.state == "skip" else "not started"
    resumed = sum(r.state == "resume" for r in runs)
    where = (f"as Ray tasks of {per_variant} CPU(s) each" if launcher == "ray"
             else f"{jobs} at a time, {threads} torch thread(s) each")
    print(colorize(f"Running {len(todo)} of {len(runs)} variants {where}"
                   + (f" ({len(runs) - len(todo)} finished before, {resumed} resumed)"
                      if len(todo) < len(runs) or resumed else "")
                   + f"; each variant's output goes to {LOG_NAME} in its run directory.",
                   "cyan", bold=True), flush=True)

    started_ray, remote_fn = False, None
    if launcher == "ray" and todo:
        import ray
        started_ray = _start_ray(ray_address, per_variant)
        remote_fn = ray.remote(ray_task)

    width = max((len(r.label) for r in runs), default=0)
    pending, running = list(todo), []
    begin = time.time()

    def start(run):
        _write_header(run)
        encoded = _encoded_call(run, num_cpu, oversubscribe)
        run.handle = (_RayHandle(remote_fn, encoded, run.log_path, per_variant)
                      if launcher == "ray" else _LocalHandle(encoded, run.log_path, threads))
        run.outcome = "running"
        verb = "resumed after epoch %d" % run.epochs_before if run.state == "resume" \
            else "started"
        print(f"{run.label.ljust(width)}  {verb} (log: {run.log_path})", flush=True)

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt

    # kill <pid> of the launcher stops the grid like Ctrl-C (only the main thread
    # can install a handler; elsewhere SIGTERM keeps its usual effect).
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_sigterm) if in_main else None
    finished = 0
    try:
        while pending or running:
            while pending and (launcher == "ray" or len(running) < jobs):
                run = pending.pop(0)
                running.append(run)
                start(run)
            time.sleep(POLL_SECONDS)
            for run in list(running):
                _report_epochs(run, width)
                code = run.handle.poll()
                if code is None:
                    continue
                _report_epochs(run, width)
                running.remove(run)
                finished += 1
                run.returncode = code
                run.outcome = "finished" if code == 0 else "FAILED"
                status = (f"finished ({run.shown} epochs, return {_return_of(run.last_row)})"
                          if code == 0 else colorize(f"FAILED with exit code {code}; see "
                                                     f"{run.log_path}", "red", bold=True))
                print(f"{run.label.ljust(width)}  {status}  [{finished}/{len(todo)} done]",
                      flush=True)
    except KeyboardInterrupt:
        if in_main:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)   # stopping already
        print(colorize(f"\nInterrupted: stopping {len(running)} running variant(s); each "
                       "keeps its last checkpoint.", "red", bold=True), flush=True)
        _stop(running)
        for run in running:
            _report_epochs(run, width)
            run.outcome = "finished" if run.returncode == 0 else "interrupted"
        _summary(runs, time.time() - begin)
        print("Continue the grid with the same command and --resume (Python: resume=True).",
              flush=True)
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        if started_ray:
            import ray
            ray.shutdown()
    _summary(runs, time.time() - begin)
    failed = [(r.label, r.returncode, r.log_path) for r in runs if r.outcome == "FAILED"]
    if failed:
        raise GridError(failed)
    return [r.output_dir for r in runs]


def _stop(running):
    """Interrupt every running variant, wait up to ``SHUTDOWN_GRACE``, then kill."""
    running = [run for run in running if run.handle is not None]
    for run in running:
        run.handle.interrupt()
    deadline = time.time() + SHUTDOWN_GRACE
    while time.time() < deadline and any(r.handle.poll() is None for r in running):
        try:
            time.sleep(0.2)
        except KeyboardInterrupt:   # a second Ctrl-C: do not wait any longer
            break
    for run in running:
        run.handle.kill()
        run.returncode = run.handle.poll()
