"""The loggers every algorithm writes its outputs through (spec: "Logger").

A run's directory receives ``progress.txt`` (tab-separated, a row per epoch, flushed each
time), ``config.json``, ``vars.json`` and ``pyt_save/model.pt``. :class:`EpochLogger` adds
per-epoch statistics over all MPI ranks. Under MPI only rank 0 prints and writes. Claiming
the directory, resuming and the progress line are the machinery's (:class:`RunRecord`).
"""
import json
import os
import os.path as osp
import reprlib
import shutil

import numpy as np

from spinup.machinery.door import (RunRecord, colorize, convert_json, kwargs_to_plain,
                                   print_table, save_model, write_atomically,
                                   write_text_atomically)
from spinup.utils.mpi_tools import mpi_statistics_scalar, proc_id


class Logger:
    """Write a run's table of diagnostics, its configuration and its saved model.

    Each epoch, call :meth:`log_tabular` once per column and then :meth:`dump_tabular`; the
    first epoch fixes the columns (names and order). Call :meth:`save_config` once at the
    start, and :meth:`setup_pytorch_saver` then :meth:`save_state` to save the model.

    Attributes:
        output_dir (str or None): where files go; ``None`` on MPI ranks other than 0.
        exp_name (str or None): the experiment's name (recorded in ``config.json``).
        log_current_row (dict): the values logged so far in this epoch.
    """

    def __init__(self, output_dir=None, output_fname="progress.txt", exp_name=None,
                 overwrite=False, tensorboard=False, verbose=False, resume=False, track=None):
        """Create the output directory and open the table file (on rank 0); nothing is
        written when it raises.

        Args:
            output_dir (str): the run's directory, created if needed (``None``:
                ``/tmp/experiments/<unix time>``).
            output_fname (str): name of the tab-separated table inside it.
            exp_name (str): name shared by the runs (seeds) of one configuration, which the
                plotter averages.
            overwrite (bool): replace an earlier run in ``output_dir`` (one that stopped before
                its first epoch, :func:`~spinup.machinery.run_dir.holds_run`, is replaced anyway).
            tensorboard (bool): also write rows to ``output_dir/tb/`` at step
                ``TotalEnvInteracts`` (needs ``tensorboard``).
            verbose (bool): print each row as the full table and the whole configuration;
                False prints one :func:`progress_line` per epoch.
            resume (bool): continue the run in ``output_dir``: append to the table (then
                :meth:`keep_rows`), keep ``config.json`` (its ``epochs`` updated at the first
                new row if the resume trains further).
            track (str or dict): also send each row, the configuration and provenance to
                ``'wandb'`` or ``'mlflow'`` (a dict sets more, see
                :mod:`spinup.machinery.tracking`); a resume continues the same tracked run.

        Raises:
            FileNotFoundError: ``resume`` is set and there is no table to continue.
            FileExistsError: the table exists and ``overwrite`` is False; or
                (:class:`~spinup.machinery.run_dir.RunInProgressError`) another live process
                writes to ``output_dir``.
            ImportError: ``tensorboard`` or ``track`` is set and its package is missing.
            ValueError: ``track`` names no tracker or an unknown option.
        """
        self.exp_name, self.verbose, self.resuming = exp_name, verbose, bool(resume)
        self.log_headers, self.log_current_row, self.first_row = [], {}, True
        self.output_dir = self.record = None
        self._config = {}
        self._saved_module, self._saved_kwargs = None, {}  # set by setup_pytorch_saver
        self._warned = set()  # keys of warn_once
        if proc_id() == 0:   # claims the directory and opens the table (RunRecord)
            self.record = RunRecord(output_dir, output_fname, resume, overwrite, tensorboard,
                                    track)
            self.output_dir = self.record.output_dir

    @property
    def output_file(self):
        """The open table file (``None`` on MPI ranks other than 0)."""
        return self.record.file if self.record is not None else None

    def keep_rows(self, epochs, table=None):
        """On resuming: cut the table back to its first ``epochs`` rows (or replace it with
        ``table``, its text when the checkpoint was written); see :meth:`RunRecord.keep_rows`.

        Raises:
            ValueError: no ``table``, and one of the first ``epochs`` rows is missing or cut.
        """
        if proc_id() != 0 or not self.resuming:
            return
        self.log_headers = self.record.keep_rows(epochs, table)
        self.first_row = not self.log_headers

    def close(self, failed=False):
        """The end of training (the algorithm's ``with run:`` block calls it): ends the
        tracked run, if any, marked failed when training raised."""
        if self.record is not None:
            self.record.close(failed)

    def log(self, msg, color="green"):
        """Print ``msg`` in colour, on rank 0 only."""
        if proc_id() == 0:
            print(colorize(msg, color, bold=True))

    def detail(self, msg, color="green"):
        """:meth:`log`, for a verbose logger only: per-epoch remarks that the table
        records anyway (e.g. PPO's early stop, in column ``StopIter``)."""
        if self.verbose:
            self.log(msg, color)

    def warn_once(self, key, msg):
        """Print warning ``msg`` the first time ``key`` is warned about in this run (rank 0),
        for conditions that recur every epoch (e.g. an episode cut off by the epoch's end)."""
        if key not in self._warned:
            self._warned.add(key)
            self.log(msg + " (shown once per run)", color="red")

    def log_tabular(self, key, val):
        """Set this epoch's value of column ``key`` (str) to ``val`` (a number, or anything
        printable).

        Raises:
            ValueError: the first epoch did not log ``key`` (the header row is written), or
                it was logged already this epoch (no :meth:`dump_tabular` in between).
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
        """Write the run's configuration to ``config.json`` and print it, and what produced
        the numbers to ``provenance.json`` (:mod:`spinup.machinery.provenance`).

        Values that JSON cannot hold are written readably (see
        :func:`~spinup.machinery.serialization_utils.convert_json`); the logger is left out and
        ``exp_name`` added. The dict is kept for :meth:`setup_pytorch_saver`'s ``ac_kwargs``.
        A resumed run keeps its files; its provenance is recorded with its first new row.

        Args:
            config (dict): usually ``locals()`` at the top of the algorithm.
        """
        config = {k: v for k, v in config.items() if not isinstance(v, Logger)}
        self._config = dict(config)
        as_json = convert_json(config)
        if self.exp_name is not None:
            as_json["exp_name"] = self.exp_name
        if proc_id() == 0:   # config.json, provenance.json (a resumed run keeps its files)
            self.record.save_config(config, as_json, self.verbose)

    def setup_pytorch_saver(self, what_to_save, ac_kwargs=None):
        """Choose the module that :meth:`save_state` writes to ``pyt_save/`` (call it once,
        after building the actor-critic).

        Args:
            what_to_save (torch.nn.Module): the actor-critic, built as
                ``actor_critic(observation_space, action_space, **ac_kwargs)``.
            ac_kwargs (dict): its kwargs; ``None``: those in the :meth:`save_config` dict.

        Raises:
            TypeError: a value in ``ac_kwargs`` cannot be stored in ``model.pt``
                (see :func:`~spinup.machinery.serialization_utils.kwargs_to_plain`).
        """
        if ac_kwargs is None:
            ac_kwargs = self._config.get("ac_kwargs", {})
        self._saved_kwargs = kwargs_to_plain(dict(ac_kwargs))
        self._saved_module = what_to_save

    def save_state(self, state_dict, itr=None):
        """Save the environment's description and the model (rank 0 only).

        Writes ``vars.json`` (``vars{itr}.json``): the env's ``EnvSpec`` as JSON under
        ``env_spec`` (``null`` when the env has none or it cannot be written) and the other
        entries of ``state_dict``; then, after :meth:`setup_pytorch_saver`,
        ``pyt_save/model.pt`` (``model{itr}.pt``). Every file is replaced atomically.

        Args:
            state_dict (dict): usually ``{'env': env}``.
            itr (int or None): ``None`` keeps one snapshot, overwritten each time; a distinct
                int per call keeps them all.
        """
        if proc_id() != 0:
            return
        env = state_dict.get("env")
        record = {k: convert_json(v) for k, v in state_dict.items() if k != "env"}
        record["env_spec"] = None
        if getattr(env, "spec", None) is not None:
            try:
                record["env_spec"] = env.spec.to_json()
            except Exception as e:  # make kwargs that JSON cannot hold
                self.log(f"Warning: could not save the environment spec ({e}); test_policy "
                         "will need the env passed by hand.", "red")
        suffix = "" if itr is None else str(itr)
        write_text_atomically(osp.join(self.output_dir, f"vars{suffix}.json"),
                              json.dumps(record, indent=2))
        module = self._saved_module
        if module is not None:
            save_dir = osp.join(self.output_dir, "pyt_save")
            os.makedirs(save_dir, exist_ok=True)
            spaces = [getattr(env, name, getattr(module, name, None))
                      for name in ("observation_space", "action_space")]
            save_model(osp.join(save_dir, f"model{suffix}.pt"), module, self._saved_kwargs,
                       *spaces)

    def save_epoch_state(self, state_dict, epoch, save_freq):
        """Save the model at the end of an epoch (rank 0 only): :meth:`save_state`, and when
        ``epoch`` is a multiple of ``save_freq`` copies ``vars{epoch}.json`` and
        ``pyt_save/model{epoch}.pt`` kept for good.

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
            line = None if self.verbose else self.record.progress(self.log_current_row,
                                                                  self._config)
            if line:
                print(line, flush=True)
            else:  # verbose, or none of the columns a progress line shows
                print_table(zip(self.log_headers, row))
            if self.first_row:
                self.output_file.write("\t".join(self.log_headers) + "\n")
            self.output_file.write("\t".join(str(val) for val in row) + "\n")
            self.output_file.flush()
            self.record.row_written(self.log_headers, self.log_current_row)
        self.log_current_row.clear()
        self.first_row = False


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

    During the epoch, ``store(Name=value)`` keeps values; at its end, ``log_tabular('Name')``
    logs their statistics over the epoch and over all MPI ranks, and forgets them::

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
        self.game_scores = None   # Atari: the run's call for the games finished since

    def store(self, **kwargs):
        """Keep values for this epoch's statistics.

        Args:
            **kwargs: ``Name=value``; a number or an array (each element is one sample).

        Raises:
            TypeError: the first value of a name is not a number or an array of numbers
                (a string, a tensor that requires grad, ...).
        """
        for key, value in kwargs.items():
            if key not in self.epoch_dict:  # the first value of each key is checked
                _check_numbers(key, value)
            self.epoch_dict.setdefault(key, []).append(value)

    def log_tabular(self, key, val=None, with_min_and_max=False, average_only=False):
        """Log a column, or the statistics of the values stored under ``key``.

        With ``val`` given, this is :meth:`Logger.log_tabular`. Otherwise the values stored
        this epoch on every rank give ``Average<key>`` and ``Std<key>`` (``nan`` if none),
        then ``Max<key>`` and ``Min<key>`` if ``with_min_and_max``; with ``average_only``,
        just the mean as ``<key>``. Every rank must make the same calls in the same order.

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
        columns = [(key, mean)] if average_only else [("Average" + key, mean), ("Std" + key, std)]
        if with_min_and_max:   # extremes: (min, max)
            columns += [("Max" + key, extremes[1]), ("Min" + key, extremes[0])]
        for column, value in columns:
            super().log_tabular(column, value)
        self.epoch_dict[key] = []
        if key == "EpRet" and self.game_scores is not None:   # EpRet: clipped, one life
            self.store(GameScore=np.asarray(self.game_scores(), dtype=float))
            self.log_tabular("GameScore", with_min_and_max=with_min_and_max)
