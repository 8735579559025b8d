"""What a run prints to the terminal: coloured text (:func:`colorize`), an epoch's boxed
table (:func:`print_table`) and its one-line summary (:func:`progress_line`).
"""
import os
import sys

#: ANSI colour codes understood by :func:`colorize`.
color2num = dict(gray=30, red=31, green=32, yellow=33, blue=34, magenta=35, cyan=36,
                 white=37, crimson=38)


def colorize(string, color, bold=False, highlight=False):
    """Return ``string`` in ANSI colour codes, or unchanged when standard output is not a
    terminal (a file, a pipe, a CI log) or ``NO_COLOR`` is set, so that saved output holds no
    escape codes.

    Args:
        string (str): the text.
        color (str): a key of ``color2num`` (``'red'``, ``'green'``, ...).
        bold (bool): also make it bold.
        highlight (bool): colour the background instead of the text.

    Raises:
        KeyError: ``color`` is not a known colour.
    """
    code = color2num[color] + (10 if highlight else 0)   # KeyError even without a terminal
    isatty = getattr(sys.stdout, "isatty", None)
    if not (isatty and isatty()) or os.environ.get("NO_COLOR"):
        return string
    return f"\x1b[{code}{';1' if bold else ''}m{string}\x1b[0m"


def first_line(error, limit=None):
    """``'<ExceptionType>: <first line of its message>'`` (just the type for an empty
    message), cut to ``limit`` characters with ``...`` when longer: an exception as part of
    a one-line error message."""
    text = str(error).strip()
    line = f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__
    return line if limit is None or len(line) <= limit else line[:limit - 3] + "..."


def print_table(columns):
    """Print ``(name, value)`` pairs as the boxed two-column table of an epoch (numbers
    as ``%8.3g``); :meth:`~spinup.utils.logx.Logger.dump_tabular` and ``test_policy`` use it.
    """
    columns = list(columns)
    width = max([15] + [len(name) for name, _ in columns])
    rule = "-" * (width + 22)
    lines = [rule] + ["| %s | %15s |" % (name.rjust(width),
                                         "%8.3g" % val if hasattr(val, "__float__") else val)
                      for name, val in columns] + [rule]
    print("\n".join(lines), flush=True)


def _minutes(seconds):
    """``mm:ss`` (``h:mm:ss`` from one hour on) for a duration in seconds."""
    hours, rest = divmod(int(round(seconds)), 3600)
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
        row (dict): column -> value of the epoch.
        epochs (int): the run's number of epochs, for ``k/N`` and the time left.
        seconds_per_epoch (float): recent duration of an epoch, for the time left.
        steps_per_second (float): recent rate of environment steps.
        epochs_done (int): epochs finished with this row; ``None`` takes ``Epoch + 1``
            (right where ``Epoch`` counts from 0, as in the on-policy algorithms).
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
