"""The run directory behind an :class:`~spinup.utils.logx.EpochLogger`: claiming it (a live
run there comes first), deciding whether to start, resume or replace, cutting a resumed
table back, recording provenance, the one-line progress of each row and TensorBoard."""
import atexit
import os
import os.path as osp
import time

from spinup.machinery.console import _number, colorize, progress_line
from spinup.machinery.device import device_label
from spinup.machinery.provenance import provenance, write_provenance
from spinup.machinery.run_dir import (LaunchError, _clear_run, _held_locks, _lock_path,
                                      decide_start, lock_run_dir, read_run_config)
from spinup.machinery.serialization_utils import config_text, write_text_atomically
from spinup.machinery.tracking import Tracker, record_episode, track_options
from spinup.utils.mpi_tools import num_procs


def tensorboard_writer_class():
    """``torch.utils.tensorboard.SummaryWriter``, or an ImportError naming the extra."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as e:
        raise ImportError(f"tensorboard=True needs the tensorboard package ({e}); install it "
                          'with: pip install "spinup[tensorboard]"') from None
    return SummaryWriter


class RunRecord:
    """The files of one run on MPI rank 0: its directory (claimed for as long as the record
    lives), its table ``output_fname`` open for appending rows, and what a resume keeps.

    Args:
        output_dir (str or None): the run's directory (``None``: ``/tmp/experiments/<time>``).
        output_fname (str): the table's file name.
        resume (bool): continue the run there (its table is appended to).
        overwrite (bool): replace an earlier run there.
        tensorboard (bool): also write rows to ``output_dir/tb/``.
        track (str, dict or None): also send rows to an experiment tracker
            (:func:`~spinup.machinery.tracking.track_options`).

    Raises:
        FileNotFoundError, FileExistsError, RunInProgressError: as
            :class:`~spinup.utils.logx.Logger` documents; nothing is written then.
        TrackingError, ImportError: ``track`` cannot work; nothing is written then.
    """

    def __init__(self, output_dir, output_fname, resume, overwrite, tensorboard, track=None):
        self.resuming = bool(resume)
        self.output_dir = output_dir or f"/tmp/experiments/{int(time.time())}"
        self.table_path = osp.join(self.output_dir, output_fname)
        self.file = self._lock = self._tb_writer = None
        self._provenance = self._resumed_epochs = None   # a resume's, written with its first row
        self._pace = self._rates = self._first_epoch = None
        self._start, self._tb_rows = time.time(), 0
        writer_class = tensorboard_writer_class() if tensorboard else None
        track = track_options(track, "logger_kwargs['track']")
        # Claim an existing directory before deciding what to do with it (a live run there
        # comes first, and two --overwrite runs cannot both clear it); the claim is dropped
        # again if the run is refused.
        held_before = _lock_path(self.output_dir) in _held_locks
        if osp.isdir(self.output_dir):
            self._lock = lock_run_dir(self.output_dir)
        try:
            action = decide_start(self.output_dir, resume, overwrite, output_fname)
        except BaseException:
            if not held_before and self._lock is not None:
                self._lock.release()
            self._lock = None
            raise
        if action == "resume":   # appended to; keep_rows trims it (or rewrites it)
            self.file = open(self.table_path, "a")
        elif action in ("reuse", "replace"):
            print(colorize(f"Note: reusing {self.output_dir}: the run there stopped before its "
                           "first epoch ended." if action == "reuse" else
                           f"Warning: replacing the run in {self.output_dir} (overwrite=True).",
                           "yellow" if action == "reuse" else "red", bold=True))
            _clear_run(self.output_dir, output_fname)
        try:
            os.makedirs(self.output_dir, exist_ok=True)
        except OSError as e:
            raise FileExistsError(f"Logger: cannot use output_dir={self.output_dir!r} as the "
                                  f"run's directory ({e.strerror}): give the path of a "
                                  "directory (a file is in the way)") from None
        if self._lock is None:   # a new directory: claim it now
            self._lock = lock_run_dir(self.output_dir)
        self.file = self.file or open(self.table_path, "w")
        atexit.register(self.file.close)
        if writer_class is not None:
            self._tb_writer = writer_class(log_dir=osp.join(self.output_dir, "tb"))
            atexit.register(self._tb_writer.close)
        self.tracker = None
        if track is not None:
            self.tracker = Tracker(track, self.output_dir, self.resuming)
            atexit.register(self.tracker.finish)   # a script that never calls close()
        print(colorize(f"Logging data to {self.table_path}", "green", bold=True))

    def keep_rows(self, epochs, table=None):
        """On resuming: make the table its header and its first ``epochs`` rows, once each.

        ``table``, the table's text when the checkpoint was written, replaces the file;
        without it (an older checkpoint) the rows after the first ``epochs`` are dropped.

        Returns:
            list: the table's columns (empty for a table without a header).

        Raises:
            ValueError: no ``table``, and one of the first ``epochs`` rows is missing or cut
                (the file is left as it is).
        """
        with open(self.table_path) as f:
            text = f.read()
        if table is None:
            lines = text.split("\n")
            width = len(lines[0].split("\t"))
            whole = [len(line.split("\t")) == width for line in lines[1:-1]][:epochs]
            first_bad = next((i for i, ok in enumerate(whole) if not ok), len(whole))
            if first_bad < epochs:
                raise ValueError(f"cannot resume: {self.table_path} lacks complete rows for "
                                 f"epochs {first_bad + 1}-{epochs} of the checkpoint")
            table = "".join(line + "\n" for line in lines[:epochs + 1])
        if text != table:
            self.file.close()
            write_text_atomically(self.table_path, table)
            self.file = open(self.table_path, "a")
            atexit.register(self.file.close)
        header = table.split("\n", 1)[0]
        return header.split("\t") if header else []

    def save_config(self, config, as_json, verbose):
        """Record what produced the numbers (``provenance.json``) and, for a new run, write
        ``config.json`` (``as_json``, the JSON-ready ``config``). A resumed run keeps its
        files: its provenance and new ``epochs`` are recorded with its first new row."""
        self._provenance = provenance(device=device_label(config, num_procs()),
                                      processes=config.get("num_workers") or num_procs())
        if self.tracker is not None:
            self.tracker.config(as_json, self._provenance)
        if self.resuming:
            self._resumed_epochs = as_json.get("epochs")
            return
        write_provenance(self.output_dir, self._provenance)
        self._provenance = None
        text = config_text(as_json)
        if verbose:
            print(colorize("Saving config to config.json:\n", color="cyan", bold=True))
            print(text)
        else:
            print(colorize(f"Saving config to {osp.join(self.output_dir, 'config.json')}",
                           color="cyan", bold=True))
        with open(osp.join(self.output_dir, "config.json"), "w") as f:
            f.write(text)

    def row_written(self, headers, row):
        """After a row reached the table: a resume's provenance and new ``epochs`` (with its
        first row), and the row's numeric columns to TensorBoard at ``TotalEnvInteracts``."""
        if self._provenance is not None:
            write_provenance(self.output_dir, self._provenance, resuming=True)
            self._provenance = None
            self._record_resumed_epochs()
        if self._tb_writer is not None:
            step = row.get("TotalEnvInteracts", row.get("Epoch", self._tb_rows))
            for key in headers:
                val = _number(row, key)
                if val is not None:
                    self._tb_writer.add_scalar(key, val, global_step=int(step))
            self._tb_writer.flush()
            self._tb_rows += 1
        if self.tracker is not None:
            self.tracker.log_row(headers, row)

    def close(self, failed=False):
        """The end of training: with ``track=dict(video=True)`` (and training not
        ``failed``) record one episode of the saved policy and send it, then end the
        tracked run. Nothing more is sent after."""
        if self.tracker is None or self.tracker.failed:
            return
        if self.tracker.options.get("video") and not failed:
            self.tracker.log_videos(record_episode(self.output_dir))
        self.tracker.finish(failed)

    def _record_resumed_epochs(self):
        """Write a resume's new ``epochs`` (``--resume DIR --epochs N``) into config.json."""
        try:
            saved = read_run_config(self.output_dir)
        except LaunchError:
            return
        if self._resumed_epochs is not None and saved.get("epochs") != self._resumed_epochs:
            saved["epochs"] = self._resumed_epochs
            write_text_atomically(osp.join(self.output_dir, "config.json"), config_text(saved))

    def progress(self, row, config):
        """The progress line of ``row``, its pace measured between rows (the first from the
        run's ``Time``) and smoothed over epochs so that the time left does not jump."""
        epoch, steps = _number(row, "Epoch"), _number(row, "TotalEnvInteracts", 0.0)
        elapsed = _number(row, "Time", time.time() - self._start)
        # Epochs done: from the steps where the epoch length is known, since the
        # on-policy algorithms count Epoch from 0 and the off-policy ones from 1.
        per_epoch = config.get("steps_per_epoch")
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
        return progress_line(row, config.get("epochs"), seconds_per_epoch,
                             steps_per_second, done)
