"""Where a run's numbers come from: the software and the CPU that produced them.

A run's numbers depend on its arguments, seed, library versions and kind of CPU (torch's
vector kernels), not on how it was launched. :func:`provenance` collects this for
``provenance.json``; where two records' :func:`numbers_signature` agree, the same run gives
identical numbers.
"""
import json
import os.path as osp
import platform
import subprocess
import sys
from importlib import metadata

#: Name of the file a run writes beside ``config.json``.
PROVENANCE_NAME = "provenance.json"

#: The entries of :func:`provenance` that the numbers of a run depend on.
NUMBERS_KEYS = ("torch", "numpy", "gymnasium", "mujoco", "cpu", "cpu_capability", "threads",
                "device")


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def cpu_model():
    """The CPU as ``"<vendor> family <f> model <m>: <model name>"`` from ``/proc/cpuinfo``
    (Linux), else :func:`platform.processor`. Family and model tell apart the chip
    generations that a virtual machine may give one generic name (``"AMD EPYC"``)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:  # not Linux
        fields = {}
    name = fields.get("model name") or platform.processor() or platform.machine()
    if "vendor_id" in fields:
        return (f"{fields['vendor_id']} family {fields.get('cpu family', '?')} "
                f"model {fields.get('model', '?')}: {name}")
    return name


def _commit():
    """The git commit of the spinup checkout (``+dirty`` when files differ), or None."""
    root = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
    if not osp.exists(osp.join(root, ".git")):
        return None
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def provenance(device="cpu", processes=1, threads=None):
    """What produced a run's numbers, as a JSON-ready dict.

    Args:
        device (str): where the networks train: ``"cpu"`` or ``"cuda:N (<GPU name>)"``.
        processes (int): MPI processes (or A3C workers) of the run.
        threads (int or None): torch threads; None: the count every algorithm sets
            (:data:`spinup.machinery.device.RUN_THREADS`).

    Returns:
        dict with ``spinup``, ``commit`` (None outside a git checkout), ``python``,
        ``torch``, ``numpy``, ``gymnasium``, ``mujoco`` (None when not installed), ``cpu``
        (:func:`cpu_model`), ``cpu_capability`` (torch's vector kernels, e.g. ``"AVX2"``),
        ``threads``, ``processes``, ``device`` and ``platform``.
    """
    import numpy as np
    import torch

    from spinup.machinery.device import RUN_THREADS
    from spinup.version import __version__
    return dict(spinup=__version__, commit=_commit(), python=platform.python_version(),
                torch=torch.__version__, numpy=np.__version__, gymnasium=_version("gymnasium"),
                mujoco=_version("mujoco"), cpu=cpu_model(),
                cpu_capability=torch.backends.cpu.get_cpu_capability(),
                threads=RUN_THREADS if threads is None else threads, processes=processes,
                device=device, platform=platform.platform())


def numbers_signature(record):
    """The part of a :func:`provenance` record that a run's numbers depend on
    (:data:`NUMBERS_KEYS`); missing keys are None."""
    return {key: record.get(key) for key in NUMBERS_KEYS}


def write_provenance(output_dir, record, resuming=False):
    """Write ``record`` to ``output_dir/provenance.json``: ``{"run": record}`` for a fresh
    run; a resumed run keeps what is there and appends ``record`` to the list ``"resumed"``."""
    path = osp.join(output_dir, PROVENANCE_NAME)
    if resuming:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {}
        data.setdefault("resumed", []).append(record)
    else:
        data = {"run": record}
    from spinup.machinery.serialization_utils import write_text_atomically
    write_text_atomically(path, json.dumps(data, indent=4, sort_keys=True))


def read_provenance(run_dir):
    """The provenance of the run in ``run_dir`` (its ``"run"`` record), or None if it has none."""
    try:
        with open(osp.join(run_dir, PROVENANCE_NAME)) as f:
            return json.load(f).get("run")
    except (OSError, ValueError):
        return None


if __name__ == "__main__":  # python -m spinup.machinery.provenance: this machine's record
    json.dump(provenance(), sys.stdout, indent=4, sort_keys=True)
    print()
