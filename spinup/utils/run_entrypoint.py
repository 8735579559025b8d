"""Subprocess entry point of :func:`spinup.utils.run_utils.call_experiment`.

Usage (internal): ``python run_entrypoint.py <base64(zlib(cloudpickle(thunk)))>``.
A ``ValueError`` or ``TypeError`` (how algorithms report bad arguments or an
unsupported environment) is printed as one line and the process exits with
code 2; set ``SPINUP_DEBUG=1`` to see the full traceback instead.
"""
import base64
import os
import sys
import zlib


def _exit(code):
    """Exit with ``code``; under MPI abort every rank, so none waits forever for this one."""
    from spinup.utils.mpi_tools import _comm, num_procs
    sys.stderr.flush()
    if num_procs() > 1:
        _comm().Abort(code)
    sys.exit(code)


def main(encoded_thunk):
    import cloudpickle
    thunk = cloudpickle.loads(zlib.decompress(base64.b64decode(encoded_thunk)))
    try:
        thunk()
    except (ValueError, TypeError) as e:
        if os.environ.get("SPINUP_DEBUG"):
            raise
        print("error: %s (set SPINUP_DEBUG=1 for the traceback)" % e, file=sys.stderr)
        _exit(2)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        _exit(130)


if __name__ == "__main__":
    main(sys.argv[1])
