"""Plot learning curves from ``progress.txt`` files (spec: "Plotting Results").

    python -m spinup.run plot [logdir ...] [--legend ...] [--xaxis X] [--value Y ...]
        [--count] [--smooth S] [--select ...] [--exclude ...] [--est mean|max|min]
        [--savefig FILE]

Curves of runs that share an ``exp_name`` (e.g. several seeds) are averaged,
with a band of one standard deviation (seaborn ``lineplot``).
"""
import argparse
import json
import os
import os.path as osp
import sys

import numpy as np
import pandas as pd

DIV_LINE_WIDTH = 50

# Global vars for tracking and labeling data at load time.
exp_idx = 0
units = dict()


def plot_data(data, xaxis="Epoch", value="AverageEpRet", condition="Condition1", smooth=1,
              estimator="mean", ax=None):
    """Draw one figure panel: ``value`` against ``xaxis`` for each ``condition``.

    Args:
        data (list of DataFrame): one frame per run (as returned by :func:`get_datasets`).
        smooth (int): average each curve over a centred window of ``smooth`` points
            (at the ends, over the points that exist).
        estimator (str): ``'mean'``, ``'max'`` or ``'min'`` across runs of a condition.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns
    if smooth > 1:
        data = [d.assign(**{value: d[value].rolling(smooth, center=True, min_periods=1).mean()})
                for d in data]
    data = pd.concat(data, ignore_index=True)
    sns.set_theme(style="darkgrid", font_scale=1.2)
    ax = sns.lineplot(data=data, x=xaxis, y=value, hue=condition, errorbar="sd",
                      estimator=getattr(np, estimator), ax=ax)
    ax.legend(loc="best").set_draggable(True)
    xscale = np.max(np.asarray(data[xaxis], dtype=float)) > 5e3
    if xscale:
        # Just some formatting niceness: x-axis scale in scientific notation if max x is large
        ax.ticklabel_format(style="sci", axis="x", scilimits=(0, 0))
    plt.tight_layout(pad=0.5)
    return ax


def get_datasets(logdir, condition=None):
    """Recursively look through logdir for output files produced by spinup.

    Assumes that any file "progress.txt" is a valid hit. Each run gets a
    ``Unit`` (run index), ``Condition1`` (``condition`` or the run's
    ``exp_name`` from config.json), ``Condition2`` (``Condition1-<unit>``) and
    ``Performance`` (``AverageTestEpRet`` if present, else ``AverageEpRet``) column.
    """
    global exp_idx
    global units
    datasets = []
    for root, _, files in sorted(os.walk(logdir)):
        if "progress.txt" not in files:
            continue
        exp_name = None
        try:
            with open(osp.join(root, "config.json")) as f:
                config = json.load(f)
            exp_name = config.get("exp_name")
        except (OSError, ValueError):
            print("No file named config.json in %s" % root)
        condition1 = condition or exp_name or "exp"
        condition2 = condition1 + "-" + str(exp_idx)
        exp_idx += 1
        if condition1 not in units:
            units[condition1] = 0
        unit = units[condition1]
        units[condition1] += 1
        try:
            exp_data = pd.read_table(osp.join(root, "progress.txt"))
        except (pd.errors.EmptyDataError, pd.errors.ParserError):
            print("Could not read from %s" % osp.join(root, "progress.txt"))
            continue
        if len(exp_data) == 0:
            print("No epochs logged yet in %s" % osp.join(root, "progress.txt"))
            continue
        performance = "AverageTestEpRet" if "AverageTestEpRet" in exp_data else "AverageEpRet"
        exp_data.insert(len(exp_data.columns), "Unit", unit)
        exp_data.insert(len(exp_data.columns), "Condition1", condition1)
        exp_data.insert(len(exp_data.columns), "Condition2", condition2)
        if performance in exp_data:
            exp_data.insert(len(exp_data.columns), "Performance", exp_data[performance])
        datasets.append(exp_data)
    return datasets


def get_all_datasets(all_logdirs, legend=None, select=None, exclude=None):
    """For every entry in all_logdirs:

    1) check if the entry is a real directory and if it is, pull data from it;
    2) if not, check to see if the entry is a prefix for a real directory, and
       pull data from that (autocomplete).

    Raises:
        ValueError: nothing matched, or ``legend`` has the wrong length.
    """
    logdirs = []
    for logdir in all_logdirs:
        if osp.isdir(logdir) and logdir[-1] == os.sep:
            logdirs += [logdir]
        else:
            basedir = osp.dirname(logdir) or "."
            prefix = logdir.split(os.sep)[-1]
            if not osp.isdir(basedir):
                continue
            listdir = sorted(os.listdir(basedir))
            logdirs += [osp.join(basedir, x) for x in listdir if prefix in x]

    # Enforce selection rules, which check logdirs for certain substrings.
    # Makes it easier to look at graphs from particular ablations, if you
    # launch many jobs at once with similar names.
    if select is not None:
        logdirs = [log for log in logdirs if all(x in log for x in select)]
    if exclude is not None:
        logdirs = [log for log in logdirs if all(x not in log for x in exclude)]
    if not logdirs:
        raise ValueError("no log directories match %s" % " ".join(all_logdirs))

    # Verify logdirs
    print("Plotting from...\n" + "=" * DIV_LINE_WIDTH + "\n")
    for logdir in logdirs:
        print(logdir)
    print("\n" + "=" * DIV_LINE_WIDTH)

    # Make sure the legend is compatible with the logdirs
    if legend is not None and len(legend) != len(logdirs):
        raise ValueError("Must give a legend title for each set of experiments: %d legends for "
                         "%d directories (%s)" % (len(legend), len(logdirs), ", ".join(logdirs)))

    # Load data from logdirs
    data = []
    if legend:
        for log, leg in zip(logdirs, legend):
            data += get_datasets(log, leg)
    else:
        for log in logdirs:
            data += get_datasets(log)
    if not data:
        raise ValueError("no progress.txt with logged epochs under %s" % ", ".join(logdirs))
    return data


def make_plots(all_logdirs, legend=None, xaxis=None, values=None, count=False,
               font_scale=1.5, smooth=1, select=None, exclude=None, estimator="mean",
               savefig=None):
    """Load the runs and draw one figure per value; show them or save to ``savefig``.

    With several values and ``savefig='out.png'``, figures go to
    ``out_<value>.png``.

    Returns:
        list of the saved file paths (empty when shown on screen).

    Raises:
        ValueError: no data, or a column is missing from every run.
    """
    import matplotlib
    if savefig or not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                       or sys.platform in ("darwin", "win32")):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = get_all_datasets(all_logdirs, legend, select, exclude)
    values = values if isinstance(values, list) else [values]
    condition = "Condition2" if count else "Condition1"
    saved = []
    for value in values:
        for col in (xaxis, value):
            if not any(col in d for d in data):
                columns = sorted(set().union(*[d.columns for d in data]))
                raise ValueError("column %r is in no progress.txt; columns: %s"
                                 % (col, ", ".join(columns)))
        plt.figure()
        plot_data([d for d in data if value in d and xaxis in d], xaxis=xaxis, value=value,
                  condition=condition, smooth=smooth, estimator=estimator)
        if savefig:
            root, ext = osp.splitext(savefig)
            fname = savefig if len(values) == 1 else "%s_%s%s" % (root, value, ext or ".png")
            plt.savefig(fname, dpi=120)
            saved.append(fname)
            print("Saved figure to %s" % fname)
    if not savefig:
        if matplotlib.get_backend().lower() == "agg":
            print("No display available: use --savefig FILE to save the plot.", file=sys.stderr)
        else:
            plt.show()
    return saved


def main(argv=None):
    """``python -m spinup.run plot``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m spinup.run plot",
                                     description="Plot spinup learning curves.")
    parser.add_argument("logdir", nargs="*", help="log directories or prefixes of them")
    parser.add_argument("--legend", "-l", nargs="*")
    parser.add_argument("--xaxis", "-x", default="TotalEnvInteracts")
    parser.add_argument("--value", "-y", default="Performance", nargs="*")
    parser.add_argument("--count", action="store_true")
    parser.add_argument("--smooth", "-s", type=int, default=1)
    parser.add_argument("--select", nargs="*")
    parser.add_argument("--exclude", nargs="*")
    parser.add_argument("--est", default="mean", choices=["mean", "max", "min"])
    parser.add_argument("--savefig", default=None, metavar="FILE",
                        help="save the figure to FILE (e.g. plot.png) instead of showing it")
    args = parser.parse_args(argv)
    if not args.logdir:
        parser.error("give at least one log directory")
    if args.smooth < 1:
        parser.error("--smooth must be at least 1")
    try:
        make_plots(args.logdir, args.legend, args.xaxis, args.value, args.count,
                   smooth=args.smooth, select=args.select, exclude=args.exclude,
                   estimator=args.est, savefig=args.savefig)
    except ValueError as e:
        print("plot: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
