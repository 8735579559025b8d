"""The public home of the experiment launcher (spec: ``spinup.utils.run_utils``).

The code lives in :mod:`spinup.launch.run_utils`; this module names what users import.
"""
from spinup.launch.run_utils import (ExperimentError, ExperimentGrid, LaunchError,  # noqa: F401
                                     call_experiment, setup_logger_kwargs, valid_str)
