"""Learning curves from the ``progress.txt`` files of runs (spec: "Plotting Results").

    python -m spinup.run plot [logdir ...] [--legend ...] [--xaxis X] [--value Y ...]
        [--count] [--smooth S] [--select ...] [--exclude ...] [--est mean|max|min]
        [--savefig FILE]

The runs of one condition (by default one ``exp_name``: the seeds of one configuration) are
drawn as one curve, their mean with a band of one standard deviation; ``--count``: each run.
"""
import argparse
import collections
import itertools
import os
import os.path as osp
import sys

import numpy as np
import pandas as pd

from spinup.machinery.run_dir import read_run_config

DIV_LINE_WIDTH = 50

# Run numbers for the whole process, so that ``--count`` labels stay distinct across
# directories: one over all runs, and one per condition (the ``Unit`` column).
_run_numbers = itertools.count()
_runs_per_condition = collections.Counter()


def plot_data(data, xaxis="Epoch", value="AverageEpRet", condition="Condition1", smooth=1,
              estimator="mean", ax=None):
    """Draw ``value`` against ``xaxis``, one curve per ``condition``, on one axes, in
    seaborn's darkgrid theme (the session's ``rcParams`` are put back after).

    Args:
        data (list of pandas.DataFrame): the runs, as from :func:`get_datasets`.
        xaxis (str): column for the x axis.
        value (str): column for the y axis.
        condition (str): column that groups runs into curves: ``'Condition1'``
            (by experiment) or ``'Condition2'`` (every run apart).
        smooth (int): mean over a centred window of ``smooth`` points (fewer at the ends).
        estimator (str): ``'mean'``, ``'max'`` or ``'min'`` of a condition's runs.
        ax: matplotlib axes to draw on (default: the current one, made in the theme).

    Returns:
        The matplotlib axes.
    """
    import matplotlib
    import seaborn as sns
    if smooth > 1:
        data = [run.assign(**{value: run[value].rolling(smooth, center=True,
                                                        min_periods=1).mean()})
                for run in data]
    table = pd.concat(data, ignore_index=True)
    if ax is None:
        import matplotlib.pyplot as plt
        plt.gcf()  # outside the theme: a backend chosen now keeps its own settings
    with matplotlib.rc_context():
        sns.set_theme(style="darkgrid", font_scale=1.2)
        ax = sns.lineplot(data=table, x=xaxis, y=value, hue=condition, errorbar="sd",
                          estimator=getattr(np, estimator), ax=ax)
        ax.legend(loc="best").set_draggable(True)
        if np.max(np.asarray(table[xaxis], dtype=float)) > 5e3:  # x ticks as 1eN multiples
            ax.ticklabel_format(style="sci", axis="x", scilimits=(0, 0))
        ax.figure.tight_layout(pad=0.5)
    return ax


def _read_exp_name(run_dir, quiet=False):
    try:
        return read_run_config(run_dir).get("exp_name")
    except ValueError:   # LaunchError: missing, not JSON, or not an object
        if not quiet:
            print(f"No file named config.json in {run_dir}")
        return None


def _read_progress(run_dir):
    """A run's ``progress.txt`` as a DataFrame (its path in ``attrs["path"]``), or ``None``
    with one line saying why not."""
    path = osp.join(run_dir, "progress.txt")
    try:
        table = pd.read_table(path)
    except Exception as e:  # pandas has many ways to say "not a table": all mean skip it
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"Skipping {path}: cannot be read ({reason})")
        return None
    if len(table) == 0:
        print(f"Skipping {path}: no epochs logged yet")
        return None
    if not any(pd.api.types.is_numeric_dtype(table[col]) for col in table.columns):
        print(f"Skipping {path}: not a table of numbers (damaged or not a progress file)")
        return None
    table.attrs["path"] = path
    return table


def _matches(run_dir, top, select, exclude):
    """Each ``select`` word occurs in a directory name from ``top`` down to ``run_dir``,
    and no ``exclude`` word in any."""
    base = osp.dirname(osp.normpath(top))
    names = osp.relpath(osp.normpath(run_dir), base or ".").split(os.sep)
    return (all(any(word in name for name in names) for word in select or [])
            and not any(word in name for word in exclude or [] for name in names))


def _find_runs(logdir, select=None, exclude=None):
    """The directories below ``logdir`` (included) with a ``progress.txt``, filtered, sorted."""
    return [run_dir for run_dir, _, files in sorted(os.walk(logdir))
            if "progress.txt" in files and _matches(run_dir, logdir, select, exclude)]


def get_datasets(logdir, condition=None, select=None, exclude=None):
    """Load every run below ``logdir`` (any directory holding a ``progress.txt``).

    Args:
        logdir (str): a directory, searched recursively.
        condition (str): label for all these runs; ``None``: each run's ``exp_name`` from
            ``config.json`` (``'exp'`` if it has none).
        select, exclude (list of str): keep only runs whose directory names (from ``logdir``
            down) contain every word of ``select`` and none of ``exclude``.

    Returns:
        list of pandas.DataFrame: one per readable run with logged epochs (others are skipped
        with a note), with columns added: ``Unit`` (the run's number in its condition),
        ``Condition1`` (the label), ``Condition2`` (``<label>-<run number>``) and
        ``Performance`` (``AverageTestEpRet`` if logged, else ``AverageEpRet``).
    """
    runs = []
    for run_dir in _find_runs(logdir, select, exclude):
        label = condition or _read_exp_name(run_dir) or "exp"
        number = next(_run_numbers)
        unit = _runs_per_condition[label]
        _runs_per_condition[label] += 1
        table = _read_progress(run_dir)
        if table is None:
            continue
        score = "AverageTestEpRet" if "AverageTestEpRet" in table else "AverageEpRet"
        table["Unit"] = unit
        table["Condition1"] = label
        table["Condition2"] = f"{label}-{number}"
        if score in table:
            table["Performance"] = table[score]
        runs.append(table)
    return runs


def _expand_logdirs(all_logdirs):
    """An existing directory written with a trailing separator as it is; any other
    ``base/prefix``: every entry of ``base`` whose name contains ``prefix``."""
    found = []
    for entry in all_logdirs:
        if osp.isdir(entry) and entry.endswith(os.sep):
            found.append(entry)
            continue
        base, prefix = osp.dirname(entry) or ".", osp.basename(entry)
        if osp.isdir(base):
            found += [osp.join(base, name) for name in sorted(os.listdir(base)) if prefix in name]
    return found


def get_all_datasets(all_logdirs, legend=None, select=None, exclude=None):
    """Load the runs named on the command line.

    Args:
        all_logdirs (list of str): directories or prefixes (see ``--help``).
        legend (list of str): one label per directory with matching runs (not ``exp_name``).
        select, exclude (list of str): as :func:`get_datasets`.

    Returns:
        list of pandas.DataFrame, as :func:`get_datasets`: each run once, however many of
        the directories or prefixes lead to it.

    Raises:
        ValueError: no directory or run matches, no run could be read, or ``legend`` does
            not have one entry per directory (or a directory holds several experiments).
    """
    logdirs = _expand_logdirs(all_logdirs)
    if not logdirs:
        raise ValueError("no log directories match %s" % " ".join(all_logdirs))
    unique = {}   # a directory named twice (or by two prefixes) is taken once
    for d in logdirs:
        unique.setdefault(osp.realpath(d), d)
    logdirs = [d for d in unique.values() if _find_runs(d, select, exclude)]
    if not logdirs:
        raise ValueError("no run directory with a progress.txt under %s%s"
                         % (" ".join(all_logdirs),
                            " matches --select/--exclude" if select or exclude else ""))

    rule = "=" * DIV_LINE_WIDTH
    print(f"Plotting from...\n{rule}\n\n" + "\n".join(logdirs) + f"\n\n{rule}")

    if legend is not None and len(legend) != len(logdirs):
        raise ValueError(f"--legend needs one name per log directory: got {len(legend)} for "
                         f"{len(logdirs)} directories ({', '.join(logdirs)})")
    for d in logdirs if legend is not None else []:   # one label must mean one experiment
        names = sorted({str(_read_exp_name(r, quiet=True) or "exp")
                        for r in _find_runs(d, select, exclude)})
        if len(names) > 1:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise ValueError(f"--legend gives one label per log directory, but {d} holds "
                             f"{len(names)} experiments ({shown}); give each experiment's "
                             "folder (or a prefix that matches only it) its own label, or "
                             "leave --legend out")
    labels = legend or [None] * len(logdirs)
    data, seen = [], {}   # each run once, by its real path (prefixes and nesting overlap)
    for d, label in zip(logdirs, labels):
        for run in get_datasets(d, label, select, exclude):
            path, real = run.attrs["path"], osp.realpath(run.attrs["path"])
            if real in seen:
                print(f"Skipping {path}: already included (as {seen[real]})")
                continue
            seen[real] = path
            data.append(run)
    if not data:
        raise ValueError("no readable progress.txt with logged epochs under %s (see the "
                         "'Skipping' lines above)" % ", ".join(logdirs))
    return data


def _can_show():
    """True unless the current matplotlib backend is file-only (``agg``, ``pdf`` ...)."""
    import matplotlib
    from matplotlib.backends import BackendFilter, backend_registry
    file_only = backend_registry.list_builtin(BackendFilter.NON_INTERACTIVE)
    return matplotlib.get_backend().lower() not in file_only


def _check_format(savefig):
    from matplotlib.figure import Figure
    ext = osp.splitext(savefig)[1].lstrip(".").lower()
    formats = Figure().canvas.get_supported_filetypes()
    if ext and ext not in formats:
        raise ValueError(f"--savefig {savefig}: cannot write .{ext} files; use one of "
                         + ", ".join("." + f for f in sorted(formats)))


def make_plots(all_logdirs, legend=None, xaxis=None, values=None, count=False,
               font_scale=1.5, smooth=1, select=None, exclude=None, estimator="mean",
               savefig=None):
    """Load runs and draw one figure per column in ``values``; show or save them (the
    session's matplotlib backend and ``rcParams`` are left as they are).

    Args:
        all_logdirs, legend, select, exclude: as :func:`get_all_datasets`.
        xaxis (str): column for the x axis (the CLI's default is ``TotalEnvInteracts``).
        values (str or list of str): column(s) to plot, one figure each.
        count (bool): draw each run separately instead of one curve per experiment.
        font_scale (float): kept for the spec's signature; the theme sets the fonts.
        smooth, estimator: as :func:`plot_data`.
        savefig (str): save to this file (its directory created if needed) instead of
            ``plt.show()`` (where the backend can show); several values: ``out_<value>.png``.

    Returns:
        list of matplotlib.figure.Figure: one per value.

    Raises:
        ValueError: no data; ``values`` is empty; ``xaxis`` or a value is a column of no
            run, or holds no number in any run (e.g. all NaN); ``savefig`` has an extension
            matplotlib cannot write or a directory that cannot be created.
    """
    import matplotlib.pyplot as plt
    values = [values] if isinstance(values, str) or values is None else list(values)
    if not values or any(not isinstance(v, str) or not v for v in values):
        raise ValueError("give at least one column to plot (--value/-y NAME ...)")
    if savefig:
        _check_format(savefig)
    data = get_all_datasets(all_logdirs, legend, select, exclude)
    condition = "Condition2" if count else "Condition1"
    tables = []
    for value in values:
        missing = [col for col in (xaxis, value) if not any(col in run for run in data)]
        if missing:
            columns = sorted(set().union(*[run.columns for run in data]))
            raise ValueError("column %r is in no progress.txt; columns: %s"
                             % (missing[0], ", ".join(columns)))
        usable = []
        for run in data:
            path = run.attrs.get("path", "a run")
            if value not in run or xaxis not in run:
                print(f"Skipping {path} for {value}: it has no "
                      f"{value if value not in run else xaxis} column")
                continue
            bad = [col for col in (xaxis, value) if not pd.api.types.is_numeric_dtype(run[col])]
            if bad:
                print(f"Skipping {path} for {value}: column "
                      f"{bad[0]} holds values that are not numbers (damaged file?)")
                continue
            if run[value].isna().all():
                print(f"Skipping {path} for {value}: every value is NaN")
                continue
            usable.append(run)
        if not usable:
            raise ValueError(f"nothing to plot for {value}: no run has a number in both its "
                             f"{xaxis} and {value} columns (see the 'Skipping' lines above)")
        tables.append((value, usable))
    parent = osp.dirname(savefig or "")
    if parent:   # created only now that there is something to save
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as e:
            raise ValueError(f"--savefig {savefig}: cannot create directory {parent} "
                             f"({e.strerror or e})") from None
    figures = []
    for value, usable in tables:
        fig = plt.figure()  # current, so plot_data makes its axes there, in the theme
        ax = plot_data(usable, xaxis=xaxis, value=value, condition=condition,
                       smooth=smooth, estimator=estimator)
        table = pd.concat(usable, ignore_index=True)
        if (table.groupby(condition)[xaxis].nunique() < 2).any():  # a one-x curve: as points
            legend = ax.get_legend()
            for line in ax.get_lines() + (legend.get_lines() if legend else []):
                line.set_marker("o")
        figures.append(fig)
        if savefig:
            stem, ext = osp.splitext(savefig)
            target = savefig if len(values) == 1 else f"{stem}_{value}{ext or '.png'}"
            try:
                fig.savefig(target, dpi=120)
            except OSError as e:  # no permission, a directory of that name, disk full
                raise ValueError(f"cannot write {target} ({e.strerror or e})") from None
            print(f"Saved figure to {target}")
    if not savefig and _can_show():
        plt.show()
    return figures


def _parser():
    parser = argparse.ArgumentParser(prog="python -m spinup.run plot",
                                     description="Plot spinup learning curves.")
    parser.add_argument("logdir", nargs="*", help="log directories or prefixes of them")
    parser.add_argument("--legend", "-l", nargs="*",
                        help="one curve label per log directory")
    parser.add_argument("--xaxis", "-x", default="TotalEnvInteracts")
    parser.add_argument("--value", "-y", default="Performance", nargs="*",
                        help="column(s) to plot, one figure each")
    parser.add_argument("--count", action="store_true",
                        help="one curve per run instead of per experiment")
    parser.add_argument("--smooth", "-s", type=int, default=1)
    parser.add_argument("--select", nargs="*",
                        help="only runs whose directory names (at any level below the "
                             "log directory) contain all of these")
    parser.add_argument("--exclude", nargs="*",
                        help="skip runs whose directory names (at any level, seed "
                             "directories included) contain any of these")
    parser.add_argument("--est", default="mean", choices=["mean", "max", "min"])
    parser.add_argument("--savefig", default=None, metavar="FILE",
                        help="save the figure to FILE (e.g. plot.png) instead of showing it")
    return parser


def main(argv=None):
    """``python -m spinup.run plot ...``; returns the exit code: 0, 1 when there is
    nothing to plot, 2 for an empty ``--value`` list."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.logdir:
        parser.error("give at least one log directory")
    if args.smooth < 1:
        parser.error("--smooth must be at least 1")
    if not args.value:
        print("plot: error: --value/-y needs at least one column name (e.g. -y Performance)",
              file=sys.stderr)
        return 2
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) \
        and sys.platform not in ("darwin", "win32")
    if (args.savefig or headless) and "matplotlib.pyplot" not in sys.modules:
        import matplotlib  # off-screen, unless a session (a notebook) already plots
        matplotlib.use("Agg")
    try:
        make_plots(args.logdir, legend=args.legend, xaxis=args.xaxis, values=args.value,
                   count=args.count, smooth=args.smooth, select=args.select,
                   exclude=args.exclude, estimator=args.est, savefig=args.savefig)
    except ValueError as e:
        print(f"plot: error: {e}", file=sys.stderr)
        return 1
    if not args.savefig and not _can_show():
        print("No display available: use --savefig FILE to save the plot.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
