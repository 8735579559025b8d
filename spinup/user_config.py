"""User-editable defaults for spinup experiments (spec: "Running Experiments")."""
import os
import os.path as osp

# Where experiment outputs are saved by default: the ``data`` folder next to the
# ``spinup`` package (in a source checkout), overridable with SPINUP_DATA_DIR.
DEFAULT_DATA_DIR = os.environ.get(
    "SPINUP_DATA_DIR", osp.join(osp.abspath(osp.dirname(osp.dirname(__file__))), "data"))

# Whether to automatically insert a date and time stamp into the names of
# save directories.
FORCE_DATESTAMP = False

# Whether ExperimentGrid makes shorthands for parameter names automatically
# (first three letters of each colon-separated term).
DEFAULT_SHORTHAND = True

# Seconds to wait (with a countdown) before launching a grid of several
# experiments from an interactive terminal, so the user can abort with Ctrl-C.
WAIT_BEFORE_LAUNCH = 5
