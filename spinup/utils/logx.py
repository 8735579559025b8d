"""The loggers every algorithm writes its outputs through (spec: "Logger").

A run's directory receives ``progress.txt`` (tab-separated, a row per
:meth:`Logger.dump_tabular`, flushed each time), ``config.json``
(:meth:`Logger.save_config`), ``vars.json`` and ``pyt_save/model.pt``
(:meth:`Logger.save_state`). :class:`EpochLogger` adds per-epoch statistics over
all MPI ranks (:meth:`~EpochLogger.store`). Under MPI only rank 0 prints and writes.
"""
import atexit
import json
import os
import os.path as osp
import reprlib
import shutil
import sys
import time
import weakref

import numpy as np

from spinup.utils.mpi_tools import mpi_statistics_scalar, num_procs, proc_id
from spinup.utils.provenance import PROVENANCE_NAME, provenance, write_provenance
from spinup.utils.serialization_utils import (convert_json, kwargs_to_plain, save_model,
                                              write_atomically, write_text_atomically)

#: ANSI colour codes understood by :func:`colorize`.
color2num = dict(gray=30, red=31, green=32, yellow=33, blue=34, magenta=35, cyan=36,
                 white=37, crimson=38)


def colorize(string, color, bold=False, highlight=False):
    """Return ``string`` wrapped in ANSI escape codes so a terminal shows it in colour.

    When standard output is not a terminal (a file, a pipe, a CI log), or the
    ``NO_COLOR`` environment variable is set, ``string`` is returned unchanged, so
    that saved output holds no escape codes.

    Args:
        string (str): the text.
        color (str): a key of ``color2num`` (``'red'``, ``'green'``, ...).
        bold (bool): also make it bold.
        highlight (bool): colour the background instead of the text.

    Raises:
        KeyError: ``color`` is not a known colour.
    """
    codes = [str(color2num[color] + (10 if highlight else 0))]
    if not _stdout_is_terminal():
        return string
    if bold:
        codes.append("1")
    return f"\x1b[{';'.join(codes)}m{string}\x1b[0m"


def _stdout_is_terminal():
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def _format_cell(val):
    """How a value appears in the printed table: numbers as ``%8.3g``, others as they are."""
    return "%8.3g" % val if hasattr(val, "__float__") else val


def print_table(columns):
    """Print ``(name, value)`` pairs as the boxed two-column table loggers show each epoch.

    Used by :meth:`Logger.dump_tabular`, and on its own where a summary should be
    shown but not written to disk (``test_policy``).
    """
    columns = list(columns)
    width = max([15] + [len(name) for name, _ in columns])
    rule = "-" * (width + 22)
    lines = [rule] + ["| %s | %15s |" % (name.rjust(width), _format_cell(val))
                      for name, val in columns] + [rule]
    print("\n".join(lines), flush=True)


def _minutes(seconds):
    """``mm:ss`` (``h:mm:ss`` from one hour on) for a duration in seconds."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    text = "%02d:%02d" % divmod(rest, 60)
    return f"{hours}:{text}" if hours else text


def _number(row, key, default=None):
    """``row[key]`` as a float when it is a number (not a string), else ``default``."""
    val = row.get(key)
    return float(val) if hasattr(val, "__float__") and not isinstance(val, str) else default


def progress_line(row, epochs=None, seconds_per_epoch=None, steps_per_second=None,
                  epochs_done=None):
    """One line summarising an epoch's row, as printed when the logger is not verbose.

    For example ``epoch 12/50  steps 48000  return 195.3 (test 200.0)  1450 steps/s
    ETA 02:41``; a part whose figure is missing is left out, a ``nan`` return is ``-``.

    Args:
        row (dict): column -> value of the epoch (``Epoch`` counts from 0).
        epochs (int): the run's number of epochs, for ``k/N`` and the time left.
        seconds_per_epoch (float): recent duration of an epoch, for the time left.
        steps_per_second (float): recent rate of environment steps.
        epochs_done (int): epochs finished with this row; ``None`` takes
            ``Epoch + 1`` (right for the on-policy algorithms, whose ``Epoch``
            counts from 0; the off-policy ones count from 1).
    """
    def short(val):  # nan: no episode ended this epoch
        return "-" if val is None or val != val else "%.4g" % val

    parts = []
    epoch = _number(row, "Epoch")
    if epoch is not None and epochs_done is None:
        epochs_done = int(epoch) + 1
    if epochs_done is not None:
        done = str(epochs_done)
        parts.append(f"epoch {done.rjust(len(str(epochs)))}/{epochs}" if epochs
                     else f"epoch {done}")
    steps = _number(row, "TotalEnvInteracts")
    if steps is not None:
        parts.append("steps %8d" % steps)
    ret, test_ret = _number(row, "AverageEpRet"), _number(row, "AverageTestEpRet")
    if ret is not None or test_ret is not None:
        shown = "return %8s" % short(ret)
        parts.append(shown + ("" if test_ret is None else " (test %s)" % short(test_ret)))
    if steps_per_second:
        parts.append("%6.0f steps/s" % steps_per_second)
    if epochs and epochs_done is not None and seconds_per_epoch is not None:
        parts.append("ETA " + _minutes(max(epochs - epochs_done, 0) * seconds_per_epoch))
    return "  ".join(parts)


def _tensorboard_writer_class():
    """``torch.utils.tensorboard.SummaryWriter``, or an ImportError naming the extra."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as e:
        raise ImportError(f"tensorboard=True needs the tensorboard package ({e}); install it "
                          'with: pip install "spinup[tensorboard]"') from None
    return SummaryWriter


def _config_text(config):
    """config.json's text for a JSON-ready dict (sorted keys, one entry per line)."""
    return json.dumps(config, separators=(",", ":\t"), indent=4, sort_keys=True)


def _unfinished(run_dir, table_path):
    """``(epochs done, epochs planned)`` for a run that stopped with a checkpoint before
    its last epoch, else None."""
    try:
        with open(osp.join(run_dir, "config.json")) as f:
            planned = json.load(f).get("epochs")
        with open(table_path) as f:
            done = max(0, len(f.read().splitlines()) - 1)
    except (OSError, ValueError, AttributeError):
        return None
    if not osp.exists(osp.join(run_dir, "pyt_save", "checkpoint.pt")):
        return None
    return (done, planned) if isinstance(planned, int) and 0 < done < planned else None


def refusal_to_overwrite(table_path):
    """The one-line message for an output directory that already holds a run (with the
    way to continue it, when the run stopped before its last epoch)."""
    run_dir = osp.dirname(table_path) or "."
    stopped = _unfinished(run_dir, table_path)
    resume = "" if stopped is None else (
        f" The run stopped after epoch {stopped[0]} of {stopped[1]}: continue it with "
        f"--resume {run_dir} (a grid: the same command and --resume; Python: "
        "logger_kwargs=dict(..., resume=True)).")
    return (f"{run_dir} already holds a run ({osp.basename(table_path)} exists); refusing to "
            "overwrite it. Choose a new --exp_name, add --dt for date-stamped directories, "
            "or pass --overwrite (Python: overwrite=True in an algorithm's logger_kwargs, in "
            "ExperimentGrid.run or in EpochLogger)." + resume)


def holds_run(output_dir, table_name="progress.txt"):
    """Whether ``output_dir`` holds a run that finished at least one epoch.

    That is: its table has a row after the header, or ``pyt_save/`` holds a
    checkpoint or a model. A run interrupted while starting (``config.json`` and
    an empty table, nothing saved) holds none: the same command may reuse the
    directory, and there is nothing to resume.
    """
    try:
        with open(osp.join(output_dir, table_name)) as f:
            if len(f.readlines(1 << 16)) > 1:  # the header and at least one row
                return True
    except OSError:
        pass
    try:
        saved = os.listdir(osp.join(output_dir, "pyt_save"))
    except OSError:
        return False
    return any(name.endswith(".pt") for name in saved)


def _clear_run(output_dir, table_name):
    """Delete what a run wrote to ``output_dir`` (its table, ``config.json``,
    ``provenance.json``, ``vars*.json``, ``pyt_save/``, ``tb/``, ``output.log``), so that
    nothing of it is left next to a new run. An ``output.log`` that is this process's standard
    output (a grid launcher opened it for the new run) stays."""
    import re
    for name in os.listdir(output_dir):
        path = osp.join(output_dir, name)
        if name in ("pyt_save", "tb") and osp.isdir(path):
            shutil.rmtree(path)
        elif (name in (table_name, "config.json", PROVENANCE_NAME)
              or re.fullmatch(r"vars\d*\.json", name)
              or (name == "output.log" and not osp.samestat(os.stat(path), os.fstat(1)))):
            os.remove(path)


#: Name of the lock file in a run directory; see :func:`lock_run_dir`.
LOCK_NAME = ".spinup.lock"


class RunInProgressError(FileExistsError):
    """Another live process is writing to the run directory (it holds the lock)."""


class _RunDirLock:
    """An open ``.spinup.lock`` with an exclusive ``flock``; deleting and closing it (when
    the last reference goes, or the process exits) releases the directory."""

    def __init__(self, lock_file):
        self._file = lock_file
        atexit.register(lambda ref=weakref.ref(self): ref() and ref().release())

    def release(self):
        if not self._file.closed:
            try:  # a finished run keeps no lock file (a killed one does; it is harmless)
                os.unlink(self._file.name)
            except OSError:
                pass
            self._file.close()

    __del__ = release


# real path of a run directory -> its lock, while some logger of this process uses it
_held_locks = weakref.WeakValueDictionary()


def _lock_path(output_dir):
    return osp.join(osp.realpath(output_dir), LOCK_NAME)


def _flock_or_refuse(output_dir, mode):
    """Open ``output_dir``'s lock file with ``mode`` and lock it exclusively.

    Returns the open file, or ``None`` where files cannot be locked. Raises
    :class:`RunInProgressError` (naming the owner's pid) if another process has it.
    """
    try:
        import fcntl
        lock_file = open(_lock_path(output_dir), mode)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.seek(0)
        owner = lock_file.read().strip() or "unknown"
        lock_file.close()
        raise RunInProgressError(
            f"{output_dir} is in use by another running process (pid {owner}); wait for "
            "it to end, or stop it, before starting, resuming or overwriting a run there") \
            from None
    except OSError:  # no flock on this file system
        lock_file.close()
        return None
    return lock_file


def lock_run_dir(output_dir):
    """Claim ``output_dir`` for this process.

    The claim is an exclusive ``flock`` on ``output_dir/.spinup.lock`` (which holds
    the owner's pid), shared by the loggers of this process, held while the returned
    object is referenced, and dropped by the OS when the process ends however it ends.
    Where ``flock`` is unavailable nothing is locked and ``None`` is returned.

    Args:
        output_dir (str): an existing run directory.

    Returns:
        object or None: the claim; drop every reference to release it.

    Raises:
        RunInProgressError: another process holds the lock; the message names its pid.
    """
    path = _lock_path(output_dir)
    held = _held_locks.get(path)
    if held is not None:
        return held
    lock_file = _flock_or_refuse(output_dir, "a+")
    if lock_file is None:
        return None
    lock_file.seek(0)
    lock_file.truncate()
    lock_file.write(f"{os.getpid()}\n")
    lock_file.flush()
    held = _held_locks[path] = _RunDirLock(lock_file)
    return held


def check_run_dir_free(output_dir):
    """Raise :class:`RunInProgressError` if another process holds ``output_dir``'s
    lock (see :func:`lock_run_dir`). Takes nothing and writes nothing; a directory
    without a lock file is free."""
    path = _lock_path(output_dir)
    if path in _held_locks or not osp.exists(path):
        return
    probe = _flock_or_refuse(output_dir, "r")
    if probe is not None:
        probe.close()


class Logger:
    """Write a run's table of diagnostics, its configuration and its saved model.

    Each epoch, call :meth:`log_tabular` once per column and then
    :meth:`dump_tabular`; the columns (names and order) are fixed by the first
    epoch. Call :meth:`save_config` once at the start, and
    :meth:`setup_pytorch_saver` then :meth:`save_state` to save the model.

    Attributes:
        output_dir (str or None): where files go; ``None`` on MPI ranks other than 0.
        exp_name (str or None): the experiment's name (recorded in ``config.json``).
        log_current_row (dict): the values logged so far in this epoch.
    """

    def __init__(self, output_dir=None, output_fname="progress.txt", exp_name=None,
                 overwrite=False, tensorboard=False, verbose=False, resume=False):
        """Create the output directory and open the table file (on rank 0).

        Args:
            output_dir (str): directory for the run's files, created if needed.
                ``None`` gives ``/tmp/experiments/<unix time>``.
            output_fname (str): name of the tab-separated table inside it.
            exp_name (str): name shared by the runs of one configuration (e.g.
                its seeds); the plotter averages the runs that share it.
            overwrite (bool): replace an earlier run in ``output_dir`` (its files
                are deleted first). A run that stopped before its first epoch
                (:func:`holds_run`) is replaced without it.
            tensorboard (bool): also write every row to TensorBoard event files in
                ``output_dir/tb/`` at step ``TotalEnvInteracts`` (needs ``tensorboard``).
            verbose (bool): print each row as the full table and the whole
                configuration; False prints one :func:`progress_line` per epoch.
            resume (bool): continue the run in ``output_dir``: the table is opened
                for appending (then :meth:`keep_rows`), ``config.json`` is kept (its
                ``epochs`` is updated with the first new row when the resume trains
                further).

        Raises:
            FileNotFoundError: ``resume`` is set and there is no table to continue.
            FileExistsError: the table exists already and ``overwrite`` is False;
                or (:class:`RunInProgressError`) another live process is writing
                to ``output_dir`` (see :func:`lock_run_dir`).
            ImportError: ``tensorboard`` is True and the package is missing.
                Nothing has been written when any of these is raised.
        """
        self.exp_name = exp_name
        self.log_headers = []
        self.log_current_row = {}
        self.first_row = True
        self.output_file = None
        self.output_dir = None
        self._config = {}
        self._saved_module = None  # set by setup_pytorch_saver
        self._saved_kwargs = {}
        self.resuming = bool(resume)
        self.verbose = verbose
        self._warned = set()  # keys of warn_once
        self._pace = None  # (epochs done, Time, TotalEnvInteracts) of the previous row
        self._rates = None  # smoothed (seconds per epoch, steps per second)
        self._first_epoch = None  # Epoch of the first row printed
        self._start = time.time()  # for the pace when rows have no Time column
        self._tb_writer, self._tb_rows = None, 0
        self._lock = None  # the claim on output_dir (lock_run_dir), rank 0 only
        self._provenance = None  # a resumed run's record, written with its first row
        self._resumed_epochs = None  # a resumed run's epochs, into config.json with it too
        writer_class = _tensorboard_writer_class() if tensorboard else None
        if proc_id() != 0:
            return
        self.output_dir = output_dir or f"/tmp/experiments/{int(time.time())}"
        table_path = osp.join(self.output_dir, output_fname)
        self._table_path = table_path
        if osp.isdir(self.output_dir):
            # Claim the directory before deciding what to do with it (another process's
            # live run comes first, and two --overwrite runs cannot both clear it); the
            # claim lasts as long as self, and is dropped again if the run is refused.
            held_before = _lock_path(self.output_dir) in _held_locks
            self._lock = lock_run_dir(self.output_dir)
            try:
                self._decide(table_path, output_fname, resume, overwrite)
            except BaseException:
                if not held_before and self._lock is not None:
                    self._lock.release()
                self._lock = None
                raise
        elif resume:
            self._continue_table()   # raises: there is no run to resume
        try:
            os.makedirs(self.output_dir, exist_ok=True)
        except OSError as e:
            raise FileExistsError(f"Logger: cannot use output_dir={self.output_dir!r} as the "
                                  f"run's directory ({e.strerror}): give the path of a "
                                  "directory (a file is in the way)") from None
        if self._lock is None:   # a new directory: claim it now
            self._lock = lock_run_dir(self.output_dir)
        self.output_file = self.output_file or open(table_path, "w")
        atexit.register(self.output_file.close)
        if writer_class is not None:
            self._tb_writer = writer_class(log_dir=osp.join(self.output_dir, "tb"))
            atexit.register(self._tb_writer.close)
        print(colorize(f"Logging data to {table_path}", "green", bold=True))

    def _decide(self, table_path, output_fname, resume, overwrite):
        """In a claimed existing directory: continue its table (``resume``), refuse to
        overwrite a run, or clear what a run left there."""
        if resume:
            self._continue_table()
        elif osp.exists(table_path):
            if not holds_run(self.output_dir, output_fname):
                print(colorize(f"Note: reusing {self.output_dir}: the run there stopped "
                               "before its first epoch ended.", "yellow", bold=True))
            elif not overwrite:
                raise FileExistsError(refusal_to_overwrite(table_path))
            else:
                print(colorize(f"Warning: replacing the run in {self.output_dir} "
                               "(overwrite=True).", "red", bold=True))
            _clear_run(self.output_dir, output_fname)

    def _continue_table(self):
        """Open the table of the run being resumed for appending (:meth:`keep_rows` next)."""
        if not osp.exists(self._table_path) and not osp.isdir(
                osp.join(self.output_dir, "pyt_save")):
            raise FileNotFoundError(f"{self.output_dir}: no run to resume "
                                    f"({osp.basename(self._table_path)} does not exist)")
        # A deleted table comes back from the checkpoint, which carries its text
        # (keep_rows; a checkpoint without it refuses there in one line).
        self.output_file = open(self._table_path, "a")

    def keep_rows(self, epochs, table=None):
        """On resuming: make the table the header and the first ``epochs`` rows, once each.

        ``table`` is the text the table had when the checkpoint was written (every
        checkpoint carries it): it replaces the file, whatever happened to it since
        (rows of epochs after the checkpoint, a cut, an emptied file). Without it (a
        checkpoint of an older version) the rows after the first ``epochs`` are dropped.

        Raises:
            ValueError: no ``table``, and one of the first ``epochs`` rows is missing
                or cut (the file is left as it is).
        """
        if proc_id() != 0 or not self.resuming:
            return
        with open(self._table_path) as f:
            text = f.read()
        if table is None:
            lines = text.split("\n")
            width = len(lines[0].split("\t"))
            whole = [len(line.split("\t")) == width for line in lines[1:-1]][:epochs]
            if len(whole) < epochs or not all(whole):
                first_bad = whole.index(False) if False in whole else len(whole)
                raise ValueError(f"cannot resume: {self._table_path} lacks complete rows for "
                                 f"epochs {first_bad + 1}-{epochs} of the checkpoint")
            table = "".join(line + "\n" for line in lines[:epochs + 1])
        if text != table:
            self.output_file.close()
            write_text_atomically(self._table_path, table)
            self.output_file = open(self._table_path, "a")
            atexit.register(self.output_file.close)
        header = table.split("\n", 1)[0]
        self.log_headers = header.split("\t") if header else []
        self.first_row = not self.log_headers

    def log(self, msg, color="green"):
        """Print ``msg`` in colour, on rank 0 only."""
        if proc_id() == 0:
            print(colorize(msg, color, bold=True))

    def detail(self, msg, color="green"):
        """Like :meth:`log`, but only for a verbose logger: per-epoch remarks that
        the table records anyway (e.g. PPO's early stop, in column ``StopIter``)."""
        if self.verbose:
            self.log(msg, color)

    def warn_once(self, key, msg):
        """Print warning ``msg`` the first time ``key`` is warned about in this run (rank 0).

        For conditions that recur every epoch, such as an episode cut off by the
        end of the epoch, so that they do not bury the progress output.
        """
        if key in self._warned:
            return
        self._warned.add(key)
        self.log(msg + " (shown once per run)", color="red")

    def log_tabular(self, key, val):
        """Set this epoch's value of column ``key``.

        Args:
            key (str): the column name.
            val: its value (a number, or anything printable).

        Raises:
            ValueError: ``key`` is a column that the first epoch did not log (the
                header row is already written), or it was logged already this
                epoch (:meth:`dump_tabular` was not called in between).
        """
        if not self.first_row and key not in self.log_headers:
            raise ValueError(f"cannot add new key {key} after the first epoch: the header "
                             "row of the table lists only the columns of the first epoch")
        if key in self.log_current_row:
            raise ValueError(f"{key} was already logged this epoch; call dump_tabular() "
                             "once per epoch")
        if self.first_row:
            self.log_headers.append(key)
        self.log_current_row[key] = val

    def save_config(self, config):
        """Write the run's configuration to ``config.json`` and print it, and what
        produced the numbers to ``provenance.json`` (:mod:`spinup.utils.provenance`).

        Values that JSON cannot hold are written readably (see
        :func:`~spinup.utils.serialization_utils.convert_json`); the logger itself
        is left out and ``exp_name`` is added. The dict is also kept so that
        :meth:`setup_pytorch_saver` can find ``ac_kwargs`` in it.

        Args:
            config (dict): usually ``locals()`` at the top of the algorithm.
        """
        config = {k: v for k, v in config.items() if not isinstance(v, Logger)}
        self._config = dict(config)
        as_json = convert_json(config)
        if self.exp_name is not None:
            as_json["exp_name"] = self.exp_name
        if proc_id() != 0:
            return
        # What the numbers come from, beside config.json. A resumed run adds its record
        # with its first new row (dump_tabular): a resume refused before then changes
        # nothing in the directory.
        from spinup.utils.torch_tools import device_label
        self._provenance = provenance(device=device_label(config, num_procs()),
                                      processes=config.get("num_workers") or num_procs())
        if self.resuming:  # a resumed run keeps its config.json, but for a new epochs
            self._resumed_epochs = as_json.get("epochs")
            return
        write_provenance(self.output_dir, self._provenance)
        self._provenance = None
        text = _config_text(as_json)
        if self.verbose:
            print(colorize("Saving config to config.json:\n", color="cyan", bold=True))
            print(text)
        else:
            print(colorize(f"Saving config to {osp.join(self.output_dir, 'config.json')}",
                           color="cyan", bold=True))
        with open(osp.join(self.output_dir, "config.json"), "w") as f:
            f.write(text)

    def _record_resumed_epochs(self):
        """A resume that goes beyond the saved ``epochs`` (``--resume DIR --epochs N``)
        writes the new count into config.json, so that the file describes the run."""
        path = osp.join(self.output_dir, "config.json")
        try:
            with open(path) as f:
                saved = json.load(f)
        except (OSError, ValueError):
            return
        if (not isinstance(saved, dict) or self._resumed_epochs is None
                or saved.get("epochs") == self._resumed_epochs):
            return
        saved["epochs"] = self._resumed_epochs
        write_text_atomically(path, _config_text(saved))

    def setup_pytorch_saver(self, what_to_save, ac_kwargs=None):
        """Choose the module that :meth:`save_state` writes to ``pyt_save/``.

        Call it once, after building the actor-critic.

        Args:
            what_to_save (torch.nn.Module): the actor-critic, built as
                ``actor_critic(observation_space, action_space, **ac_kwargs)``.
            ac_kwargs (dict): the kwargs it was built with. ``None`` takes
                ``ac_kwargs`` from the :meth:`save_config` dict (else ``{}``).

        Raises:
            TypeError: a value in ``ac_kwargs`` cannot be stored in ``model.pt``
                (see :func:`~spinup.utils.serialization_utils.kwargs_to_plain`).
        """
        if ac_kwargs is None:
            ac_kwargs = self._config.get("ac_kwargs", {})
        self._saved_kwargs = kwargs_to_plain(dict(ac_kwargs))
        self._saved_module = what_to_save

    def save_state(self, state_dict, itr=None):
        """Save the environment's description and the model (rank 0 only).

        Writes ``vars.json`` (``vars{itr}.json``): the env's ``EnvSpec`` as JSON
        under ``env_spec`` (``null`` when the env has none or it cannot be
        written), plus the other entries of ``state_dict`` as JSON; then, after
        :meth:`setup_pytorch_saver`, ``pyt_save/model.pt`` (``model{itr}.pt``).
        Every file is replaced atomically.

        Args:
            state_dict (dict): usually ``{'env': env}``.
            itr (int or None): ``None`` keeps a single snapshot, overwritten each
                time; a distinct int per call keeps them all.
        """
        if proc_id() != 0:
            return
        env = state_dict.get("env")
        record = {k: convert_json(v) for k, v in state_dict.items() if k != "env"}
        record["env_spec"] = self._env_spec_json(env)
        suffix = "" if itr is None else str(itr)
        write_text_atomically(osp.join(self.output_dir, f"vars{suffix}.json"),
                              json.dumps(record, indent=2))
        if self._saved_module is not None:
            self._save_model(suffix, env)

    def save_epoch_state(self, state_dict, epoch, save_freq):
        """Save the model at the end of an epoch (rank 0 only).

        ``vars.json`` and ``pyt_save/model.pt`` are replaced (:meth:`save_state`) every
        epoch; when ``epoch`` is a multiple of ``save_freq`` they are also copied to
        ``vars{epoch}.json`` and ``pyt_save/model{epoch}.pt``, kept for good.

        Args:
            state_dict (dict): as for :meth:`save_state`, usually ``{'env': env}``.
            epoch (int): the epoch just finished, as the algorithm numbers it.
            save_freq (int): epochs between two numbered snapshots (>= 1).
        """
        self.save_state(state_dict, itr=None)
        if proc_id() != 0 or epoch % save_freq != 0:
            return
        pairs = [("vars.json", f"vars{epoch}.json")]
        if self._saved_module is not None:
            pairs.append((osp.join("pyt_save", "model.pt"),
                          osp.join("pyt_save", f"model{epoch}.pt")))
        for latest, numbered in pairs:
            src = osp.join(self.output_dir, latest)
            write_atomically(osp.join(self.output_dir, numbered),
                             lambda tmp, src=src: shutil.copyfile(src, tmp))

    def _env_spec_json(self, env):
        """``env.spec.to_json()``, or ``None`` (with a warning if it could not be written)."""
        if getattr(env, "spec", None) is None:
            return None
        try:
            return env.spec.to_json()
        except Exception as e:  # make kwargs that JSON cannot hold
            self.log(f"Warning: could not save the environment spec ({e}); test_policy will "
                     "need the env passed by hand.", "red")
            return None

    def _save_model(self, suffix, env):
        module = self._saved_module
        save_dir = osp.join(self.output_dir, "pyt_save")
        os.makedirs(save_dir, exist_ok=True)
        spaces = [getattr(env, name, getattr(module, name, None))
                  for name in ("observation_space", "action_space")]
        save_model(osp.join(save_dir, f"model{suffix}.pt"), module, self._saved_kwargs, *spaces)

    def dump_tabular(self):
        """End the epoch: print its row (a table when verbose, else a :func:`progress_line`),
        append it to the file (after the header, the first time; a column without a value
        is left empty) and to the TensorBoard files if any, and start a new row.
        """
        if not self.log_current_row:
            self.warn_once("empty row", "Warning: dump_tabular() with nothing logged since the "
                           "last row; no empty row is written")
            return
        if proc_id() == 0:
            row = [self.log_current_row.get(key, "") for key in self.log_headers]
            line = None if self.verbose else self._progress(self.log_current_row)
            if line:
                print(line, flush=True)
            else:  # verbose, or none of the columns a progress line shows
                print_table(zip(self.log_headers, row))
            if self.first_row:
                self.output_file.write("\t".join(self.log_headers) + "\n")
            self.output_file.write("\t".join(str(val) for val in row) + "\n")
            self.output_file.flush()
            if self._provenance is not None:  # the first row of a resumed run
                write_provenance(self.output_dir, self._provenance, resuming=True)
                self._provenance = None
                self._record_resumed_epochs()
            if self._tb_writer is not None:
                self._write_tensorboard(self.log_current_row)
        self.log_current_row.clear()
        self.first_row = False

    def _progress(self, row):
        """The progress line of ``row``.

        The pace (seconds per epoch, steps per second) is measured between
        consecutive rows and smoothed over epochs, so the time left does not jump
        with one slow epoch. The first row printed is measured from the start of
        the run (``Time``), which also covers a resumed run.
        """
        epoch, steps = _number(row, "Epoch"), _number(row, "TotalEnvInteracts", 0.0)
        elapsed = _number(row, "Time", time.time() - self._start)
        # Epochs done: from the steps where the epoch length is known, since the
        # on-policy algorithms count Epoch from 0 and the off-policy ones from 1.
        per_epoch = self._config.get("steps_per_epoch")
        done = None
        if isinstance(per_epoch, int) and per_epoch > 0 and "TotalEnvInteracts" in row:
            done = int(round(steps / per_epoch))
        elif epoch is not None:
            if self._first_epoch is None:
                self._first_epoch = epoch
            done = int(epoch) + (1 if self._first_epoch == 0 else 0)
        if done is not None:
            last_done, last_time, last_steps = self._pace or (0, 0.0, 0.0)
            if done > last_done and elapsed > last_time:
                measured = ((elapsed - last_time) / (done - last_done),
                            (steps - last_steps) / (elapsed - last_time))
                self._rates = measured if self._rates is None else tuple(
                    0.7 * old + 0.3 * new for old, new in zip(self._rates, measured))
            self._pace = (done, elapsed, steps)
        seconds_per_epoch, steps_per_second = self._rates or (None, None)
        return progress_line(row, self._config.get("epochs"), seconds_per_epoch,
                             steps_per_second, done)

    def _write_tensorboard(self, row):
        """Add the row's numeric columns to the event files, at step ``TotalEnvInteracts``."""
        step = row.get("TotalEnvInteracts", row.get("Epoch", self._tb_rows))
        for key in self.log_headers:
            val = _number(row, key)
            if val is not None:
                self._tb_writer.add_scalar(key, val, global_step=int(step))
        self._tb_writer.flush()
        self._tb_rows += 1


def _check_numbers(key, value):
    """Raise TypeError (one line naming ``key``) unless ``value`` is numbers numpy can read."""
    try:
        kind = np.asarray(value).dtype.kind
    except (RuntimeError, TypeError, ValueError):
        kind = None
    if kind not in tuple("biuf"):
        raise TypeError(f"EpochLogger.store: {key}={reprlib.repr(value)} is not allowed: a "
                        "number or an array of numbers (for a tensor that requires grad, "
                        "store t.item() or t.detach())")


class EpochLogger(Logger):
    """A :class:`Logger` that also summarises values collected during an epoch.

    During the epoch, ``store(Name=value)`` keeps values; at its end,
    ``log_tabular('Name')`` logs their statistics over the epoch and over all MPI
    ranks, and forgets them::

        logger.store(EpRet=ep_ret)          # after each episode
        logger.log_tabular('EpRet', with_min_and_max=True)
        # -> columns AverageEpRet, StdEpRet, MaxEpRet, MinEpRet

    Attributes:
        epoch_dict (dict): key -> list of the values stored this epoch.
    """

    def __init__(self, *args, **kwargs):
        """Takes the arguments of :meth:`Logger.__init__`."""
        super().__init__(*args, **kwargs)
        self.epoch_dict = {}

    def store(self, **kwargs):
        """Keep values for this epoch's statistics.

        Args:
            **kwargs: ``Name=value``; a value is a number or an array (every
                element counts as one sample).

        Raises:
            TypeError: the first value of a name is a string, a tensor requiring grad ...
        """
        for key, value in kwargs.items():
            if key not in self.epoch_dict:  # the first value of each key is checked
                _check_numbers(key, value)
            self.epoch_dict.setdefault(key, []).append(value)

    def log_tabular(self, key, val=None, with_min_and_max=False, average_only=False):
        """Log a column, or the statistics of the values stored under ``key``.

        With ``val`` given, this is :meth:`Logger.log_tabular`. Otherwise the
        values stored this epoch on every rank give ``Average<key>`` and ``Std<key>``
        (``nan`` if none), then ``Max<key>`` and ``Min<key>`` if ``with_min_and_max``;
        with ``average_only``, just the mean as ``<key>``. Every rank must make the
        same calls in the same order (the statistics are reduced over ranks).

        Args:
            key (str): the column, or the name given to :meth:`store`.
            val: a value to log directly; ``None`` for stored values.
            with_min_and_max (bool): add the max and min columns.
            average_only (bool): log only the mean.

        Raises:
            ValueError: as :meth:`Logger.log_tabular`.
        """
        if val is not None:
            super().log_tabular(key, val)
            return
        stored = self.epoch_dict.get(key, [])
        try:
            samples = np.concatenate([np.ravel(v) for v in stored]) if stored else np.zeros(0)
        except (RuntimeError, TypeError, ValueError):
            samples = None
        if samples is None or samples.dtype.kind not in "biuf":
            for value in stored:  # raises for the first value that is not numbers
                _check_numbers(key, value)
        mean, std, *extremes = mpi_statistics_scalar(samples, with_min_and_max)
        if average_only:
            super().log_tabular(key, mean)
        else:
            super().log_tabular("Average" + key, mean)
            super().log_tabular("Std" + key, std)
        if with_min_and_max:
            lowest, highest = extremes
            super().log_tabular("Max" + key, highest)
            super().log_tabular("Min" + key, lowest)
        self.epoch_dict[key] = []
