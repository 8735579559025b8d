"""The process in which :func:`spinup.utils.run_utils.call_experiment` runs an experiment.

Internal; the one argument is the call to run, as made by ``call_experiment``::

    python run_entrypoint.py <base64 of zlib of cloudpickle of a zero-argument function>

How the process ends:

* the call returns: exit code 0;
* it raises ``ValueError`` or ``TypeError`` (how algorithms reject bad arguments
  or an unsupported environment), or ``FileExistsError`` (the logger refusing to
  overwrite a finished run): the message on one line, exit code 2
  (``SPINUP_DEBUG=1`` shows the traceback instead);
* Ctrl-C, even while the modules are still being imported: exit code 130 and no
  traceback (the launching process says what was interrupted);
* any other exception: Python's traceback and exit code 1.

Under MPI the exits of the first two kinds abort every rank, so that no rank waits
forever for the one that stopped.

Modules are looked up as in the launching process: its ``sys.path`` (passed in the
environment variable ``SPINUP_PARENT_SYS_PATH`` as JSON) comes first, in place of
this file's own directory, so that e.g. an env module in the directory the command
was started from imports here too.
"""
import base64
import json
import os
import sys
import zlib


def _use_parent_path():
    """Put the launching process's ``sys.path`` first, in place of ``spinup/utils``."""
    try:
        parent = json.loads(os.environ.get("SPINUP_PARENT_SYS_PATH", ""))
    except ValueError:
        return
    if not isinstance(parent, list):
        return
    parent = [p for p in parent if isinstance(p, str)]
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if p not in parent and os.path.abspath(p or ".") != here]
    sys.path[:] = parent + rest


def _exit(code):
    """Exit with ``code``; under MPI abort the whole job, so no other rank hangs."""
    from spinup.utils.mpi_tools import _comm, num_procs
    sys.stderr.flush()
    if num_procs() > 1:
        _comm().Abort(code)
    sys.exit(code)


def caused_by_ctrl_c(exc):
    """Whether a ``KeyboardInterrupt`` is in the chain of causes and contexts of ``exc``.

    numpy turns a Ctrl-C that arrives while its C extensions load into an ``ImportError``
    ("Importing the numpy C-extensions failed"), with the interrupt as its cause.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def main(encoded_thunk):
    """Decode the call and run it, turning user errors into one line and an exit code.

    Args:
        encoded_thunk (str): the call, encoded by ``call_experiment``.
    """
    try:
        _use_parent_path()
        import cloudpickle
        call = cloudpickle.loads(zlib.decompress(base64.b64decode(encoded_thunk)))
        call()
    except (ValueError, TypeError, FileExistsError) as e:
        if os.environ.get("SPINUP_DEBUG"):
            raise
        print(f"error: {e} (set SPINUP_DEBUG=1 for the traceback)", file=sys.stderr)
        _exit(2)
    except KeyboardInterrupt:
        if "spinup.utils.mpi_tools" in sys.modules:   # else: interrupted while importing
            _exit(130)
        sys.exit(130)
    except ImportError as e:
        if not caused_by_ctrl_c(e):   # a real missing module: keep its traceback
            raise
        sys.exit(130)


if __name__ == "__main__":
    main(sys.argv[1])
