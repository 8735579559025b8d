"""A run's rows sent on to an experiment tracker: Weights & Biases or MLflow (``--track``).

The table in ``progress.txt`` stays the record of the run; a tracker gets a copy of each row
as it is written, with the same column names, at the step ``TotalEnvInteracts`` (``Epoch``
for a table without it). It also gets the run's ``config.json`` and ``provenance.json`` as its
configuration, and videos of the policy as media. What identifies the tracked run is kept in
the run directory (:data:`TRACKING_FILE`), so that a resume, or ``test_policy --video`` later,
continues the same tracked run.

Options, from ``logger_kwargs=dict(track=...)``, ``ExperimentGrid.run(track=...)`` or the
command line (``--track``, ``--track_project`` ...): a tracker's name (``'wandb'`` or
``'mlflow'``) or a dict with the keys of :data:`OPTION_KEYS`.

Weights & Biases runs offline unless told otherwise (``mode='online'``, ``--track_mode
online`` or ``WANDB_MODE=online``): the run is written under ``<output_dir>/wandb/`` and
``wandb sync`` uploads it later, so a machine without network (or without a login) never
waits for one. MLflow writes to its tracking URI (``uri``; by default MLflow's own, a
``mlflow.db`` SQLite file in the working directory, or ``MLFLOW_TRACKING_URI``).
"""
import glob
import json
import os
import os.path as osp
import time
import uuid

from spinup.machinery.console import _number, colorize, first_line
from spinup.machinery.serialization_utils import write_text_atomically

#: The trackers and the Python package each needs.
TRACKERS = {"wandb": "wandb", "mlflow": "mlflow"}

#: What a track dict may hold. ``to``: the tracker; ``project``: W&B project / MLflow
#: experiment (default ``'spinup'``); ``entity``: W&B team or user; ``uri``: MLflow tracking
#: URI; ``mode``: W&B ``'offline'`` (default) or ``'online'``; ``group``: W&B group (a grid
#: sets its name); ``parent``: MLflow parent run id (a grid sets it); ``video``: at the end of
#: training record one deterministic episode of the policy and log it.
OPTION_KEYS = ("to", "project", "entity", "uri", "mode", "group", "parent", "video")

#: File in the run directory naming the tracked run, for resumes and later videos.
TRACKING_FILE = "tracking.json"

#: Where the end-of-training recording goes, inside the run directory.
VIDEO_DIR = "videos"


class TrackingError(ValueError):
    """Tracking options that cannot work (one line)."""


def track_options(track, where="track"):
    """Check ``track`` and return it as a dict of :data:`OPTION_KEYS` (or ``None``).

    Args:
        track (str, dict or None): ``'wandb'``, ``'mlflow'``, a dict with ``to`` and other
            options, or ``None``/``False`` for no tracking.
        where (str): how the caller names the option, for messages.

    Raises:
        TrackingError: an unknown tracker or option, or an option of the other tracker.
        ImportError: the tracker's package is not installed (one line naming the extra).
    """
    if track is None or track is False:
        return None
    if isinstance(track, str):
        track = {"to": track}
    if not isinstance(track, dict):
        raise TrackingError(f"{where}: give 'wandb', 'mlflow' or a dict such as "
                            f"dict(to='wandb', project='p'), not {track!r}")
    unknown = sorted(set(track) - set(OPTION_KEYS))
    if unknown:
        raise TrackingError(f"{where}: unknown option {', '.join(unknown)} (allowed: "
                            f"{', '.join(OPTION_KEYS)})")
    options = {k: v for k, v in track.items() if v is not None}
    to = options.get("to")
    if to not in TRACKERS:
        raise TrackingError(f"{where}: the tracker must be one of {', '.join(TRACKERS)}, "
                            f"not {to!r}")
    for key in ("project", "entity", "uri", "group", "parent"):
        if key in options:
            options[key] = str(options[key])
    other = {"wandb": ("uri", "parent"), "mlflow": ("entity", "mode")}[to]
    for key in other:
        if key in options:
            raise TrackingError(f"{where}: {key!r} is not an option of {to} (its options: "
                                + ", ".join(k for k in OPTION_KEYS if k not in other) + ")")
    if options.get("mode", "offline") not in ("offline", "online"):
        raise TrackingError(f"{where}: mode must be 'offline' or 'online', not "
                            f"{options['mode']!r}")
    options["video"] = bool(options.get("video", False))
    _check_installed(to, where)
    return options


def _check_installed(to, where):
    """ImportError (one line) unless the tracker's package imports."""
    from importlib.util import find_spec
    try:
        found = find_spec(TRACKERS[to]) is not None   # None also when sys.modules says so
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ImportError(f"{where}={to!r} needs the {TRACKERS[to]} package; install it with: "
                          'pip install "spinup[track]" (from a clone: pip install -e ".[track]")')


def _flat(config, prefix=""):
    """A nested JSON dict as ``{'a.b': value}``."""
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _numbers(headers, row):
    """The numeric columns of a row, in table order."""
    out = {}
    for key in headers:
        val = _number(row, key)
        if val is not None:
            out[key] = val
    return out


class _Wandb:
    """One Weights & Biases run (offline by default), written under ``output_dir/wandb``."""

    def __init__(self, options, output_dir, name, saved):
        import wandb
        self.wandb = wandb
        mode = options.get("mode") or os.environ.get("WANDB_MODE") or "offline"
        run_id = saved.get("id") if saved else None
        run_id = run_id or uuid.uuid4().hex[:12]   # W&B's ids: letters and digits
        self.run = wandb.init(
            project=options.get("project", "spinup"), entity=options.get("entity"),
            group=options.get("group"), name=name, id=run_id, resume="allow",
            dir=output_dir, mode=mode,
            settings=wandb.Settings(console="off", disable_git=True, silent=True,
                                    reinit="create_new"))
        self.record = {"to": "wandb", "id": run_id, "project": options.get("project", "spinup"),
                       "entity": options.get("entity"), "mode": mode,
                       "group": options.get("group")}
        self.where = (f"W&B offline run {self.run.dir.rsplit(os.sep, 1)[0]} (upload it with: "
                      f"wandb sync {self.run.dir.rsplit(os.sep, 1)[0]})" if mode == "offline"
                      else f"W&B run {getattr(self.run, 'url', None) or run_id}")

    def config(self, config, provenance, resuming):
        self.run.config.update(dict(config, provenance=provenance), allow_val_change=True)

    def log_row(self, numbers, step):
        self.run.log(numbers, step=step)

    def log_videos(self, paths, step):
        self.run.log({"video": [self.wandb.Video(p, format="mp4", caption=osp.basename(p))
                                for p in paths]}, step=step)

    def finish(self, failed):
        self.run.finish(exit_code=1 if failed else 0)


class _Mlflow:
    """One MLflow run, through ``MlflowClient`` (no global active run, so a notebook may
    train several agents one after another)."""

    def __init__(self, options, output_dir, name, saved):
        from mlflow.tracking import MlflowClient
        uri = options.get("uri") or (saved or {}).get("uri")
        self.client = MlflowClient(uri)
        self.uri = self.client.tracking_uri
        if saved and saved.get("run_id"):
            self.run_id = saved["run_id"]
            self.client.update_run(self.run_id, status="RUNNING")
        else:
            experiment = experiment_id(self.client, options.get("project", "spinup"))
            tags = {"spinup.output_dir": osp.abspath(output_dir)}
            if options.get("parent"):
                tags["mlflow.parentRunId"] = options["parent"]
            self.run_id = self.client.create_run(experiment, run_name=name,
                                                 tags=tags).info.run_id
        self.record = {"to": "mlflow", "run_id": self.run_id, "uri": self.uri,
                       "project": options.get("project", "spinup"),
                       "parent": options.get("parent")}
        self.where = f"MLflow run {self.run_id} at {self.uri}"

    def config(self, config, provenance, resuming):
        from mlflow.entities import Param
        from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH
        if resuming:   # MLflow keeps a parameter's first value; a resume may change epochs
            return
        params = [Param(k, json.dumps(v) if not isinstance(v, str) else v)
                  for k, v in _flat(config).items()]
        params += [Param("provenance." + k, json.dumps(v) if not isinstance(v, str) else v)
                   for k, v in _flat(provenance).items()]
        params = [Param(p.key, p.value[:MAX_PARAM_VAL_LENGTH]) for p in params]
        for start in range(0, len(params), 100):   # log_batch takes at most 100 params
            self.client.log_batch(self.run_id, params=params[start:start + 100])
        self.client.log_dict(self.run_id, config, "config.json")
        self.client.log_dict(self.run_id, provenance, "provenance.json")

    def log_row(self, numbers, step):
        from mlflow.entities import Metric
        stamp = int(time.time() * 1000)
        self.client.log_batch(self.run_id, metrics=[Metric(k, v, stamp, step)
                                                    for k, v in numbers.items()])

    def log_videos(self, paths, step):
        for path in paths:
            self.client.log_artifact(self.run_id, path, artifact_path=VIDEO_DIR)

    def finish(self, failed):
        self.client.set_terminated(self.run_id, "FAILED" if failed else "FINISHED")


def experiment_id(client, name):
    """The id of MLflow experiment ``name``, created if it does not exist."""
    experiment = client.get_experiment_by_name(name)
    return experiment.experiment_id if experiment else client.create_experiment(name)


def grid_parent(options, grid_name):
    """The grid's group: for W&B ``options`` with ``group`` set to ``grid_name``; for MLflow
    with ``parent`` set to the id of a parent run named ``grid_name`` (found by its tag, so
    that a grid run again or resumed uses the same one; created otherwise). An option the
    caller set is kept."""
    options = dict(options)
    if options["to"] == "wandb":
        options.setdefault("group", grid_name)
        return options
    if "parent" in options:
        return options
    from mlflow.tracking import MlflowClient
    client = MlflowClient(options.get("uri"))
    experiment = experiment_id(client, options.get("project", "spinup"))
    found = client.search_runs([experiment], filter_string=f"tags.`spinup.grid` = "
                               f"'{grid_name}'", max_results=1)
    if found:
        options["parent"] = found[0].info.run_id
    else:   # a parent holds no metrics of its own: it is marked finished at once
        options["parent"] = client.create_run(experiment, run_name=grid_name,
                                              tags={"spinup.grid": grid_name}).info.run_id
        client.set_terminated(options["parent"], "FINISHED")
    return options


def read_tracking(output_dir):
    """The tracked run recorded in ``output_dir`` (:data:`TRACKING_FILE`), or ``None``."""
    try:
        with open(osp.join(output_dir, TRACKING_FILE)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


class Tracker:
    """The tracked run of one run directory, on MPI rank 0.

    It starts when the run's configuration is known (:meth:`config`, or the first row),
    sends each row (:meth:`log_row`), and ends with :meth:`finish`. A tracker that fails
    mid-run (a server gone) is reported once and dropped: training goes on, the table keeps
    every row.

    Args:
        options (dict): from :func:`track_options`.
        output_dir (str): the run directory.
        resuming (bool): continue the tracked run recorded there, if it is of this tracker.
    """

    def __init__(self, options, output_dir, resuming):
        self.options, self.output_dir, self.resuming = options, output_dir, resuming
        self.backend, self.failed = None, False
        self.step = None
        #: Seconds spent in the tracker's calls, by kind ('start' includes the config):
        #: written to tracking.json at the end, what --track cost this run.
        self.seconds = {"start": 0.0, "rows": 0.0, "videos": 0.0, "finish": 0.0}

    def _start(self):
        if self.backend is not None or self.failed:
            return self.backend
        saved = read_tracking(self.output_dir) if self.resuming else None
        if saved and saved.get("to") != self.options["to"]:
            saved = None
        if saved:   # a later session (a resume, test_policy's videos): the last step so far
            self.step = saved.get("last_step")
        kind = _Wandb if self.options["to"] == "wandb" else _Mlflow
        name = osp.basename(osp.normpath(self.output_dir))
        self.backend = self._guard(lambda: kind(self.options, self.output_dir, name, saved),
                                   "start")
        if self.backend is not None:
            self._write(self.backend.record)
            verb = "continuing" if saved else "to"
            print(colorize(f"Tracking {verb} {self.backend.where}", "cyan", bold=True))
        return self.backend

    def _guard(self, call, what, kind="start"):
        """``call()`` timed under ``kind``, or None after reporting a tracker's failure once."""
        start = time.perf_counter()
        try:
            return call()
        except Exception as e:   # the tracker's own errors: training must go on
            self.failed, self.backend = True, None
            print(colorize(f"Warning: tracking with {self.options['to']} stopped at {what} "
                           f"({first_line(e)}); the run goes on, progress.txt keeps "
                           "every row", "red", bold=True))
            return None
        finally:
            self.seconds[kind] += time.perf_counter() - start

    def config(self, config, provenance):
        """Send the run's configuration (``config.json``'s dict) and provenance."""
        if self._start() is not None:
            self._guard(lambda: self.backend.config(config, provenance, self.resuming),
                        "config")

    def log_row(self, headers, row):
        """Send a row's numeric columns at step ``TotalEnvInteracts`` (else ``Epoch``, else
        the row's number)."""
        if self._start() is None:
            return
        step = _number(row, "TotalEnvInteracts", _number(row, "Epoch"))
        self.step = int(step) if step is not None else (self.step or 0) + 1
        numbers = _numbers(headers, row)
        self._guard(lambda: self.backend.log_row(numbers, self.step), "a row", "rows")

    def log_videos(self, paths):
        """Send MP4 files as media (W&B, at the step of the last row) or artifacts under
        ``videos/`` (MLflow)."""
        if paths and self._start() is not None:
            self._guard(lambda: self.backend.log_videos(sorted(paths), self.step),
                        "the videos", "videos")

    def finish(self, failed=False):
        """End the tracked run (marked failed when training raised)."""
        if self.backend is not None:
            backend, self.backend = self.backend, None
            self._guard(lambda: backend.finish(failed), "the end", "finish")
            self._write(dict(backend.record, last_step=self.step,
                             seconds={k: round(v, 4) for k, v in self.seconds.items()}))
        self.failed = True   # nothing more is sent

    def _write(self, record):
        write_text_atomically(osp.join(self.output_dir, TRACKING_FILE),
                              json.dumps(record, indent=2) + "\n")


def record_episode(output_dir):
    """Record one deterministic episode of the run's saved policy to
    ``output_dir/videos/`` with ``test_policy --video`` (in a process of its own: the
    renderer stays out of the training process); the new MP4 files (none when the env
    cannot draw, with the reason printed)."""
    import subprocess
    import sys
    video_dir = osp.join(output_dir, VIDEO_DIR)
    before = set(glob.glob(osp.join(video_dir, "*.mp4")))
    done = subprocess.run([sys.executable, "-m", "spinup.run", "test_policy", output_dir,
                           "--video", video_dir, "-n", "1", "-d", "--no_track"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        print(colorize(f"Note: no video of the policy ({lines[-1] if lines else 'no reason'})",
                       "yellow"))
        return []
    return sorted(set(glob.glob(osp.join(video_dir, "*.mp4"))) - before)


def log_videos_to_run(output_dir, paths):
    """Add ``paths`` (MP4 files) to the tracked run recorded in ``output_dir`` (reopened
    for the purpose); nothing when the run was not tracked. Returns whether it was."""
    saved = read_tracking(output_dir)
    if not saved or not paths:
        return False
    options = {k: saved[k] for k in OPTION_KEYS if k != "video" and saved.get(k) is not None}
    try:
        options = track_options(options)
    except (TrackingError, ImportError) as e:
        print(colorize(f"Note: the videos were not sent to the tracked run ({e})", "yellow"))
        return False
    tracker = Tracker(options, output_dir, resuming=True)
    tracker.log_videos(paths)
    tracker.finish()
    return True
