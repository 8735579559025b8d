"""Execute tutorial notebooks and save them with their outputs, which the docs show as they are.

    python docs/notebooks/save_outputs.py [NOTEBOOK.ipynb ...]   (default: all of them)

Run it after editing a notebook. Each notebook runs top to bottom in a fresh kernel of
this Python (``sys.executable``) inside a temporary directory, so the runs it trains do
not land in the repository. A cell error stops with the cell's traceback and leaves the
file unchanged. Needs the test extra (``pip install -e '.[test]'``).
"""
import glob
import json
import os
import os.path as osp
import sys
import tempfile

import nbclient
import nbformat

HERE = osp.dirname(osp.abspath(__file__))
KERNEL = "spinup-save-outputs"


def save_outputs(path, kernel_name=KERNEL):
    """Run the notebook at ``path`` in a temporary working directory and overwrite it
    with the executed version (no timing metadata, so that re-saving gives small diffs).

    Raises:
        nbclient.exceptions.CellExecutionError: a cell failed (the file is not written).
    """
    nb = nbformat.read(path, as_version=4)
    kernelspec = nb.metadata.get("kernelspec")
    with tempfile.TemporaryDirectory(prefix="spinup-nb-") as work:
        nbclient.NotebookClient(nb, kernel_name=kernel_name, timeout=1800,
                                record_timing=False,
                                resources={"metadata": {"path": work}}).execute()
    if kernelspec:
        nb.metadata["kernelspec"] = kernelspec  # keep the generic "python3" for readers
    nbformat.validate(nb)
    nbformat.write(nb, path)


def main(paths):
    with tempfile.TemporaryDirectory(prefix="spinup-kernel-") as jupyter:
        spec_dir = osp.join(jupyter, "kernels", KERNEL)
        os.makedirs(spec_dir)
        with open(osp.join(spec_dir, "kernel.json"), "w") as f:
            json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"],
                       "display_name": "Python 3", "language": "python"}, f)
        os.environ["JUPYTER_PATH"] = jupyter
        for var in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND"):  # as on a notebook server
            os.environ.pop(var, None)
        root = osp.dirname(osp.dirname(HERE))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (root, os.environ.get("PYTHONPATH")) if p)
        for path in paths or sorted(glob.glob(osp.join(HERE, "*.ipynb"))):
            print(f"executing {path} ...", flush=True)
            save_outputs(path)


if __name__ == "__main__":
    main(sys.argv[1:])
