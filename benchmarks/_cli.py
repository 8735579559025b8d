"""The command line the scripts of ``benchmarks/`` share.

- A script runs from any folder: before importing this module it puts the repository root
  first on ``sys.path`` and takes its own folder off it (``benchmarks/mujoco.py`` would
  otherwise hide the ``mujoco`` package)::

      HERE = os.path.dirname(os.path.abspath(__file__))
      sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path
                                               if os.path.abspath(p or ".") != HERE]
      from benchmarks import _cli

- ``--help`` shows every default (:class:`Parser`); a bad value is refused in one line,
  ``<script>: <what is wrong>``, exit status 2, no traceback, before anything runs.
- A script writes to its ``--out`` (default: a folder of the system's temp folder,
  :func:`scratch`) or ``--data_dir``; only ``--publish`` writes the record committed under
  ``docs/`` (or ``spinup/presets/``), and a publish of part of a record keeps the entries
  it did not measure again.
"""
import argparse
import os
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Formatter(argparse.RawDescriptionHelpFormatter):
    """The description as written, and ``(default: ...)`` after every option that has one."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (default is None or default is False or default == argparse.SUPPRESS
                or "%(default)" in text or "(default" in text or text == argparse.SUPPRESS
                or (not action.option_strings and action.nargs not in ("?", "*"))):
            return action.help
        if isinstance(default, (list, tuple)):
            default = " ".join(map(str, default)) or "none"
        return f"{text} (default: {str(default).replace('%', '%%')})".lstrip()


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line, ``<name>: <message>``, exit 2."""

    def __init__(self, *args, name=None, **kwargs):
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)
        self.name = name or self.prog

    def error(self, message):
        self.exit(2, f"{self.name}: {message}\n")


def parser(script, description, **kwargs):
    """The parser of ``benchmarks/<script>.py`` (``script``: its ``__file__``)."""
    name = os.path.splitext(os.path.basename(script))[0]
    return Parser(prog=f"python benchmarks/{name}.py", name=name, description=description,
                  **kwargs)


def scratch(name):
    """Where a script writes unless told otherwise: ``<temp folder>/spinup_benchmarks/<name>``."""
    return os.path.join(tempfile.gettempdir(), "spinup_benchmarks", name)


def committed(*parts):
    """The path of a committed record, and the same relative to the repository root."""
    return os.path.join(ROOT, *parts), "/".join(parts)


def add_publish(p, record):
    """The ``--publish`` flag, naming the committed ``record`` (relative path) it writes."""
    p.add_argument("--publish", action="store_true",
                   help=f"write the committed record ({record}) instead of --out")


# Value types: argparse turns their ValueError/ArgumentTypeError into a one-line refusal.

def _integer(text, low, ask):
    """``text`` as an integer >= ``low``; else the refusal, ``ask`` saying what to give."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{value}: give {ask}")
    return value


def positive(text):
    """An integer >= 1."""
    return _integer(text, 1, "at least 1")


def non_negative(text):
    """An integer >= 0."""
    return _integer(text, 0, "0 or more")


def folder(text):
    """A directory that exists."""
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text}: no such directory")
    return text


def gym_task(text):
    """A task id gymnasium knows (``spinup/...`` ids included)."""
    import gymnasium as gym
    if text.startswith("spinup/"):
        import spinup.envs  # noqa: F401  (registers the batched tasks)
    if text not in gym.envs.registry:
        close = [k for k in gym.envs.registry if k.split("-v")[0].lower()
                 == text.split("-v")[0].lower()]
        hint = f" (did you mean {', '.join(sorted(close))}?)" if close else ""
        raise argparse.ArgumentTypeError(f"{text!r} is not a registered gymnasium task{hint}")
    return text


def settings(text):
    """An environment setting ``NAME=VALUE``."""
    name, sep, _ = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    return text
