"""The launcher: starts, watches and stops experiment processes (see ``docs/user/parallel.rst``).
``spinup.run`` and :class:`~spinup.launch.run_utils.ExperimentGrid` call :func:`run_one` (one
experiment) or :func:`run_grid` (up to ``jobs`` variants at once, or Ray tasks), which start
``run_entrypoint.py``, which calls the algorithm.

**Signals.** Each experiment process leads its own process group (with its ``mpiexec`` and MPI
ranks or its A3C workers), so neither a terminal's Ctrl-C nor a ``kill`` reaches it directly.
While experiments run, the launcher turns SIGINT and SIGTERM into :class:`Interrupted`: it sends
SIGINT to every experiment's group (a Ray task is asked through the file
:data:`~spinup.launch.ray_launch.STOP_NAME`), waits up to :data:`SHUTDOWN_GRACE` seconds (each
keeps its last checkpoint and exits with 130), kills the rest, prints one line and re-raises; the
command line exits with ``128 + signal``. Both signals stay blocked from before a fork until the
launcher holds the process, so none is lost; a launcher killed outright takes its experiments
with it (:func:`~spinup.launch.run_entrypoint.take_signals_from_launcher`).
"""
import base64
import collections
import contextlib
import json
import os
import os.path as osp
import tempfile
import time
import zlib

from spinup.launch.processes import (POLL_SECONDS, SHUTDOWN_GRACE, Interrupted,  # noqa: F401
                                     _LocalHandle, _signals_interrupt, _start_process, _stop)
from spinup.machinery.console import colorize, progress_line
from spinup.machinery.run_dir import (LaunchError, can_resume, check_run_dir_free, decide_start,
                                      env_maker, holds_run)
from spinup.machinery.serialization_utils import convert_json

DIV_LINE_WIDTH = 80
LOG_NAME = "output.log"   #: file in each run directory that receives the variant's output


class ExperimentError(RuntimeError):
    """An experiment started by :func:`~spinup.launch.run_utils.call_experiment` ended with a
    non-zero exit code: ``exp_name`` (str) names it, ``returncode`` (int) is the code."""

    def __init__(self, exp_name, returncode):
        self.exp_name, self.returncode = exp_name, returncode
        super().__init__(f"experiment {exp_name!r} failed (exit code {returncode}); "
                         "see its error message above")


class GridError(ExperimentError):
    """Some variants of a grid failed (the others ran to their end): ``failed`` (list) holds
    ``(variant label, exit code, log file)`` per failure; ``returncode`` is 1, the grid's."""

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
        self.shown = 0              # rows of progress.txt already reported (or stale)
        self.last_row = self.handle = self.returncode = None
        self.cause = None           # why a Ray task failed, for the summary

    @property
    def log_path(self):
        return osp.join(self.output_dir, LOG_NAME)


def check_can_create(path):
    """LaunchError unless directory ``path`` exists or can be created (checked without
    creating anything)."""
    probe = osp.abspath(path)
    while not osp.exists(probe) and osp.dirname(probe) != probe:
        probe = osp.dirname(probe)
    if not osp.isdir(probe):
        raise LaunchError(f"cannot create {path}: {probe} is a file, not a directory "
                          "(check --data_dir)")
    try:  # the real test of writability (permissions, read-only mounts, root)
        tempfile.TemporaryDirectory(dir=probe, prefix=".spinup-probe-").cleanup()
    except OSError as e:
        raise LaunchError(f"cannot create {path}: cannot write in {probe} "
                          f"({e.strerror or e}; check --data_dir)") from None


def check_before_launch(logger_kwargs_list, num_cpu=1, oversubscribe=False):
    """Every check that can fail before an experiment starts, so that none starts:
    :func:`check_cores`, then :func:`check_dirs`.

    Args:
        logger_kwargs_list (list of dict): the ``logger_kwargs`` of every run about
            to start (``output_dir`` and, optionally, ``overwrite`` or ``resume``).
        num_cpu, oversubscribe: as :func:`~spinup.launch.run_utils.call_experiment`.

    Raises:
        FileExistsError: a directory holds a run and neither ``overwrite`` nor ``resume``
            is set, or another process writes to it.
        LaunchError: ``num_cpu`` above the cores; a directory cannot be created; two runs
            would share a directory.
    """
    check_cores(num_cpu, oversubscribe)
    check_dirs(logger_kwargs_list)


def check_cores(num_cpu=1, oversubscribe=False):
    """LaunchError if ``num_cpu`` MPI processes exceed the cores (unless ``oversubscribe``):
    :func:`~spinup.machinery.cores.check_num_cpu`, asked once per launch."""
    from spinup.machinery.cores import check_num_cpu
    try:
        check_num_cpu(num_cpu, oversubscribe)
    except ValueError as e:
        raise LaunchError(str(e)) from None


def check_dirs(logger_kwargs_list):
    """FileExistsError or LaunchError (see :func:`check_before_launch`) unless every run's
    directory can be created, is free, and is used by one run only."""
    seen = set()
    for logger_kwargs in logger_kwargs_list:
        output_dir = logger_kwargs.get("output_dir")
        if output_dir is None:
            continue
        if osp.normpath(output_dir) in seen:
            raise LaunchError(f"two runs of the grid would write to {output_dir}; give the "
                              "parameters that tell them apart distinct values or shorthands")
        seen.add(osp.normpath(output_dir))
        check_can_create(output_dir)
        check_run_dir_free(output_dir)
        if not logger_kwargs.get("resume", False):   # the Logger's rule, asked of all first
            decide_start(output_dir, overwrite=logger_kwargs.get("overwrite", False))


def check_launch_options(jobs=None, launcher="local", ray_address=None):
    """The one check of the launcher's options (the command line, ``ExperimentGrid.run``,
    :func:`run_grid` and ``benchmarks/mujoco.py`` ask it alike).

    Args:
        jobs (int, str or None): variants at once; ``None``: not given.
        launcher (str or None): ``'local'`` or ``'ray'`` (``None``: local).
        ray_address (str or None): the Ray cluster.

    Raises:
        LaunchError: ``jobs`` not a positive int or ``'auto'``, or given with Ray (whose free
            CPUs decide how many variants run at once); an unknown ``launcher``; a
            ``ray_address`` without ``launcher='ray'``.
    """
    if launcher not in (None, "local", "ray"):
        raise LaunchError(f"--launcher expects local or ray, got {launcher!r}")
    if ray_address is not None and launcher != "ray":
        raise LaunchError("--ray_address needs --launcher ray")
    if jobs is None:
        return
    if launcher == "ray":
        raise LaunchError("--jobs is for the local launcher; with --launcher ray the "
                          "cluster's free CPUs decide how many variants run at once")
    if jobs != "auto" and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise LaunchError(f"--jobs expects a positive integer or 'auto', got {jobs!r}")


def resolve_jobs(jobs, num_cpu=1, oversubscribe=False):
    """The number of variants (at least 1) to run at once on this machine (``jobs`` passed
    :func:`check_launch_options`).

    Args:
        jobs (int or str): a positive int, or ``'auto'`` for ``cores // num_cpu``.
        num_cpu (int or str): MPI processes per variant (``'auto'``: one per
            physical core, so ``'auto'`` jobs is then 1).
        oversubscribe (bool): allow ``jobs * num_cpu`` above the cores.

    Raises:
        LaunchError: ``jobs * num_cpu`` processes exceed the cores without ``oversubscribe``.
    """
    from spinup.machinery.cores import available_cores, physical_cores
    per_variant = physical_cores() if num_cpu == "auto" else int(num_cpu)
    cores = available_cores()
    if jobs == "auto":
        return max(1, cores // per_variant)
    if jobs * per_variant > cores and not oversubscribe:
        raise LaunchError(f"--jobs {jobs} x --cpu {num_cpu} = {jobs * per_variant} processes, "
                          f"more than the {cores} CPU cores available here; use --jobs "
                          f"{max(1, cores // per_variant)} (or 'auto'), or add --oversubscribe")
    return jobs


def _encode_call(fn, kwargs=None, num_cpu=1, oversubscribe=False):
    """``fn(**kwargs)`` (an MPI job if ``num_cpu > 1``; an ``env_name`` keyword becomes
    ``env_fn``), serialized for ``run_entrypoint.py``'s command line."""
    import cloudpickle
    call = fn
    if kwargs is not None:
        kwargs = dict(kwargs)
        if "env_name" in kwargs:
            kwargs["env_fn"] = env_maker(kwargs.pop("env_name"), kwargs.get("num_envs"),
                                         kwargs.get("device"))

        def call():   # the launcher checked the core count
            from spinup.launch.mpi_launch import fork_checked
            fork_checked(num_cpu, oversubscribe=oversubscribe)
            fn(**kwargs)
    return base64.b64encode(zlib.compress(cloudpickle.dumps(call))).decode("utf-8")


def resume_advice(what):
    """How to go on after a stop that kept a checkpoint, for ``what`` (``'the grid'``, ``'the
    run'``): the last line of an interrupted grid and of an interrupted single run."""
    return f"Continue {what} with the same command and --resume (Python: resume=True)."


def run_one(encoded, exp_name, output_dir):
    """Run one experiment process (from :func:`_encode_call`), its output on this process's;
    return its exit code. Raises :class:`Interrupted` on SIGINT or SIGTERM, once it stopped.
    It says what was kept of the run in ``output_dir`` (and whether ``--resume`` continues
    it) when the run stops on a signal or because stdout's reader went away."""
    from spinup.launch.run_entrypoint import EXIT_PIPE_CLOSED, stdout_closed
    handle = _LocalHandle(encoded)
    with _signals_interrupt():
        try:
            handle.start()
            code = handle.proc.wait()
        except Interrupted as e:
            _stop([handle])
            where = (f"what was logged so far is in {output_dir}"
                     if output_dir and holds_run(output_dir) else "no epoch was logged")
            print(colorize(f"\nInterrupted: {exp_name} ({where})", "red", bold=True))
            if can_resume(output_dir):
                print(resume_advice("the run"), flush=True)
            e.reported = True
            raise
    if code == EXIT_PIPE_CLOSED:   # the experiment said nothing: its directory is known here
        stdout_closed([output_dir] if output_dir else None)
    return code


def _write_header(run):
    """Start (or continue) the run's log with what is being run."""
    os.makedirs(run.output_dir, exist_ok=True)
    # A run started from scratch (overwrite=True included) starts a new log.
    with open(run.log_path, "w" if run.state == "start" else "a") as log:
        what = f"Resuming after epoch {run.epochs_before}" if run.state == "resume" else "Running"
        log.write(f"{what}: experiment {run.label} with kwargs "
                  + json.dumps(convert_json(run.kwargs), sort_keys=True) + "\n")


def _as_number(text):
    try:
        return float(text)
    except ValueError:
        return text


def _report_epochs(run, width):
    """Print a line for each row of ``run``'s progress.txt not reported yet."""
    try:
        with open(osp.join(run.output_dir, "progress.txt")) as f:
            lines = f.read().split("\n")[:-1]   # the last piece is '' or a partial row
    except OSError:
        return
    if not lines:
        return
    header, rows = lines[0].split("\t"), lines[1:]
    # A resumed run puts its table back as its checkpoint has it: rows after it go.
    first = min(run.shown, len(rows))
    run.shown = len(rows)
    for epochs_done, row in enumerate(rows[first:], start=first + 1):
        run.last_row = {k: _as_number(v) for k, v in zip(header, row.split("\t"))}
        line = progress_line(run.last_row, run.epochs, epochs_done=epochs_done)
        print(f"{run.label.ljust(width)}  {line}", flush=True)


def _result(run):
    """``<epochs> epochs, return <last test return, else return>`` of a run."""
    row = run.last_row or {}
    ret = next(("%.4g" % row[key] for key in ("AverageTestEpRet", "AverageEpRet")
                if isinstance(row.get(key), float)), "-")
    return f"{run.shown} epochs, return {ret}"


def _summary(runs, seconds):
    rule = "=" * DIV_LINE_WIDTH
    counts = collections.Counter(run.outcome for run in runs)
    print("\n" + rule)
    print(colorize(f"Grid summary ({len(runs)} variants, {seconds / 60:.1f} min): "
                   + ", ".join(f"{n} {what}" for what, n in counts.items()), "white",
                   bold=True))
    width = max(len(run.label) for run in runs)
    for run in runs:
        color = {"finished": "green", "skipped": "cyan"}.get(run.outcome, "red")
        if run.outcome == "FAILED":
            detail = run.cause or f"exit code {run.returncode}, log {run.log_path}"
        elif run.outcome == "not started":
            detail = "-"
        else:
            detail = _result(run)
        print(f"  {colorize(run.outcome.ljust(11), color)} {run.label.ljust(width)}  {detail}")
    print(rule, flush=True)


def run_grid(runs, num_cpu=1, oversubscribe=False, jobs=1, launcher="local",
             ray_address=None, announce=None):
    """Run the planned ``runs`` and report on the terminal. Every check (``jobs`` x ``num_cpu``
    against the cores, the run directories, Ray being installed) is made before the first
    variant starts; the options themselves passed :func:`check_launch_options` (the caller's).

    Args:
        runs (list): from :func:`~spinup.launch.run_utils.plan_runs`.
        num_cpu (int or str): MPI processes per variant.
        oversubscribe (bool): allow more processes than cores.
        jobs (int or str): variants at once on this machine (``launcher='local'``).
        launcher (str): ``'local'`` or ``'ray'``.
        ray_address (str): the Ray cluster (``launcher='ray'``); ``None`` starts a local one.
        announce (callable): called once the checks passed (e.g. to print the grid).

    Returns:
        list of str: every variant's output directory.

    Raises:
        LaunchError, FileExistsError: a check failed; nothing was started.
        GridError: a variant failed (after all the others ended).
        Interrupted: (a KeyboardInterrupt) SIGINT or SIGTERM, after every variant stopped.
    """
    from spinup.machinery.cores import available_cores, physical_cores
    per_variant = physical_cores() if num_cpu == "auto" else int(num_cpu)
    if launcher == "ray":
        from spinup.launch.ray_launch import _check_reachable, require_ray
        ray = require_ray()
        if ray_address and not ray.is_initialized():
            _check_reachable(ray_address)
        for run in runs:   # a task's working directory is not the launcher's
            run.output_dir = osp.abspath(run.output_dir)
            run.kwargs["logger_kwargs"]["output_dir"] = run.output_dir
    else:
        jobs = resolve_jobs(jobs, num_cpu, oversubscribe)
    todo = [r for r in runs if r.state != "skip"]
    # The core count: resolve_jobs checked jobs x num_cpu here; a Ray task's are its node's.
    check_dirs([r.kwargs["logger_kwargs"] for r in todo])
    # Each variant's share of the cores for the threads of OpenMP/MKL code outside torch
    # (numpy, an env's own math). Torch itself trains on RUN_THREADS threads in every run,
    # whatever the launcher, so that the numbers do not depend on how the grid is run.
    threads = max(1, available_cores() // jobs) if launcher == "local" else per_variant
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():  # the user's setting, within the share
        threads = max(1, min(threads, int(os.environ["OMP_NUM_THREADS"])))
    if announce is not None:
        announce()
    for run in runs:
        run.outcome = "skipped" if run.state == "skip" else "not started"
    resumed = sum(r.state == "resume" for r in runs)
    where = (f"as Ray tasks of {per_variant} CPU(s) each" if launcher == "ray"
             else f"{jobs} at a time")
    print(colorize(f"Running {len(todo)} of {len(runs)} variants {where}"
                   + (f" ({len(runs) - len(todo)} finished before, {resumed} resumed)"
                      if len(todo) < len(runs) or resumed else "")
                   + f"; each variant's output goes to {LOG_NAME} in its run directory.",
                   "cyan", bold=True), flush=True)

    width = max((len(r.label) for r in runs), default=0)
    pending, running = list(todo), []

    def start(run):
        _write_header(run)
        encoded = _encode_call(run.fn, run.kwargs, num_cpu, oversubscribe)
        run.handle = (_RayHandle(remote_fn, encoded, run.log_path, per_variant)
                      if launcher == "ray" else _LocalHandle(encoded, run.log_path, threads))
        run.handle.start()
        verb = "resumed after epoch %d" % run.epochs_before if run.state == "resume" else "started"
        print(f"{run.label.ljust(width)}  {verb} (log: {run.log_path})", flush=True)

    finished = 0
    with contextlib.ExitStack() as stack:
        if launcher == "ray" and todo:
            from spinup.launch.ray_launch import _RayHandle, _start_ray, ray_task
            if _start_ray(ray_address, per_variant):
                stack.callback(ray.shutdown)
            remote_fn = ray.remote(ray_task)
        stack.enter_context(_signals_interrupt())
        begin = time.time()
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
                    _report_epochs(run, width)   # rows written just before it ended
                    running.remove(run)
                    finished += 1
                    run.returncode, run.cause = code, getattr(run.handle, "cause", None)
                    run.outcome = "finished" if code == 0 else "FAILED"
                    status = (f"finished ({_result(run)})" if code == 0 else
                              colorize(f"FAILED ({run.cause or f'exit code {code}'}); "
                                       f"see {run.log_path}", "red", bold=True))
                    print(f"{run.label.ljust(width)}  {status}  [{finished}/{len(todo)} done]",
                          flush=True)
        except Interrupted as e:
            # a variant whose handle exists but has not started has nothing to stop
            started = [run for run in running if run.handle is not None and run.handle.started]
            print(colorize(f"\nInterrupted: stopping {len(started)} running variant(s); "
                           "each keeps its last checkpoint.", "red", bold=True), flush=True)
            e.reported = True
            _stop([run.handle for run in started])
            for run in started:
                run.returncode = run.handle.poll()
                _report_epochs(run, width)
                run.outcome = "finished" if run.returncode == 0 else "interrupted"
            _summary(runs, time.time() - begin)
            print(resume_advice("the grid"), flush=True)
            raise
        except BrokenPipeError as e:   # stdout's reader went away: spinup.run says what was kept
            e.run_dirs = [run.output_dir for run in runs]
            raise
    _summary(runs, time.time() - begin)
    failed = [(r.label, r.returncode, r.log_path) for r in runs if r.outcome == "FAILED"]
    if failed:
        print("A failed variant keeps its last checkpoint: after fixing the cause, the "
              "same command with --resume (Python: resume=True) continues it.", flush=True)
        raise GridError(failed)
    return [r.output_dir for r in runs]
