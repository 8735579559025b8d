"""The tutorial notebooks run top to bottom in a real Jupyter kernel, and plotting in a
kernel stays inline (issue 21).

Each notebook of docs/notebooks is executed with nbclient in a fresh IPython kernel
that runs this interpreter (``sys.executable``, so the same spinup and packages) in a
temporary working directory, with ``DISPLAY`` and ``MPLBACKEND`` unset: the situation
of JupyterLab on a server or Colab. Any cell error fails the test.
"""
import base64
import glob
import json
import os
import re
import sys

import pytest

nbformat = pytest.importorskip("nbformat", reason="pip install -e '.[test]' (nbformat)")
nbclient = pytest.importorskip("nbclient", reason="pip install -e '.[test]' (nbclient)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "docs", "notebooks", "*.ipynb")))
KERNEL = "spinup-tests"
PNG_MAGIC = b"\x89PNG"


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    """A kernelspec that starts ``sys.executable``, found through ``JUPYTER_PATH``,
    and an environment without a display or a chosen matplotlib backend."""
    spec_dir = tmp_path / "jupyter" / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "spinup tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND"):
        monkeypatch.delenv(var, raising=False)
    # The kernel imports spinup from this checkout even when it is not pip-installed.
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", ROOT + (os.pathsep + path if path else ""))
    work = tmp_path / "work"
    work.mkdir()
    return work


def execute(nb, cwd):
    """Run every cell of ``nb`` in a new kernel started in ``cwd``; errors raise
    ``nbclient.exceptions.CellExecutionError`` naming the cell."""
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=1200,
                                     resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return nb


def outputs(cell):
    return cell.get("outputs", []) if cell.cell_type == "code" else []


def inline_images(cell):
    """The PNG images a code cell displayed (checked to be real PNG data)."""
    images = [out["data"]["image/png"] for out in outputs(cell)
              if "image/png" in out.get("data", {})]
    assert all(base64.b64decode(img)[:4] == PNG_MAGIC for img in images)
    return images


def animations(cell):
    return [out for out in outputs(cell) if "data:image/png;base64"
            in "".join(out.get("data", {}).get("text/html", ""))]


def test_there_are_at_least_three_notebooks():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS


#: A cell that trains: it calls an algorithm, a grid's ``run`` or the notebook's own
#: training helper, and so writes a run directory.
TRAINS = re.compile(r"\b(vpg|trpo|npg|ppo|a2c|a3c|ddpg|td3|sac|dqn|one_epoch)\(|\.run\(")


@pytest.mark.timeout(1800)  # a minute on an idle 2-core machine; much more when loaded
@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs_top_to_bottom_then_its_training_cells_again(path, kernel_env):
    """Every cell runs without error in a fresh kernel, and then every cell that trains
    runs a second time in the same kernel, as when a reader re-runs it (the notebooks
    pick output directories that allow it), followed by the cell after it, which reads
    what was trained. The notebook displays at least one inline image or animation."""
    nb = nbformat.read(path, as_version=4)
    first = len(nb.cells)
    code = [c for c in nb.cells if c.cell_type == "code"]
    again = sorted({i for i, c in enumerate(code) if TRAINS.search(c.source)}
                   | {i + 1 for i, c in enumerate(code[:-1]) if TRAINS.search(c.source)})
    assert again, f"{os.path.basename(path)} has no cell that trains"
    nb.cells = nb.cells + [nbformat.from_dict(json.loads(json.dumps(code[i]))) for i in again]
    nb = execute(nb, kernel_env)
    errors = [out for c in nb.cells for out in outputs(c) if out.get("output_type") == "error"]
    assert not errors
    shown = [c for c in nb.cells[:first] if inline_images(c) or animations(c)]
    assert shown, f"{os.path.basename(path)} displayed no inline figure or animation"


PLOT_CELLS = [
    # A finished run's progress.txt, written by hand (two seeds of one experiment).
    "import os\n"
    "for seed in (0, 1):\n"
    "    d = f'data/exp/exp_s{seed}'\n"
    "    os.makedirs(d, exist_ok=True)\n"
    "    with open(f'{d}/progress.txt', 'w') as f:\n"
    "        f.write('Epoch\\tAverageEpRet\\tTotalEnvInteracts\\n')\n"
    "        f.writelines(f'{e}\\t{e * 10 + seed}\\t{(e + 1) * 100}\\n' for e in range(5))\n"
    "    with open(f'{d}/config.json', 'w') as f:\n"
    "        f.write('{\"exp_name\": \"exp\"}')",
    "import matplotlib, matplotlib.pyplot\n"
    "from spinup.utils.plot import make_plots\n"
    "keys = ['axes.facecolor', 'axes.grid', 'font.size', 'lines.linewidth']\n"
    "before = {k: matplotlib.rcParams[k] for k in keys}\n"
    "figs = make_plots(['data/exp'], xaxis='TotalEnvInteracts', values=['Performance'])",
    "same = before == {k: matplotlib.rcParams[k] for k in keys}\n"
    "print(type(figs[0]).__name__, len(figs), matplotlib.get_backend(), same)",
    "import matplotlib.pyplot as plt\n"
    "plt.plot([1, 2, 3], [3, 1, 2])\n"
    "plt.show()",
    "plt.plot([0, 1], [1, 0])",  # no show(): the inline backend shows it at the cell's end
]


def test_make_plots_then_plain_matplotlib_both_show_inline(kernel_env):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in PLOT_CELLS])
    nb = execute(nb, kernel_env)
    make_plots_cell, info_cell, plain_cell, no_show_cell = nb.cells[1:]
    assert len(inline_images(make_plots_cell)) == 1
    assert not any("No display" in out.get("text", "") for out in outputs(make_plots_cell))
    info = "".join(out.get("text", "") for out in outputs(info_cell)).split()
    assert info[:2] == ["Figure", "1"]
    assert "inline" in info[2] and info[2].lower() != "agg"  # the backend was not switched
    assert info[3] == "True"  # nor the session's rcParams (seaborn's theme stays inside)
    assert len(inline_images(plain_cell)) == 1
    assert len(inline_images(no_show_cell)) == 1
