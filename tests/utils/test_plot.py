"""plot: damaged progress.txt files are skipped by name, the rest is plotted;
--select/--exclude match directory names at every level (seed directories too)."""
import pytest

from conftest import run_cli
from spinup.utils.plot import get_all_datasets

GOOD = "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\t1.0\t100\n1\t2.0\t200\n"


def _run(root, name, text=GOOD, exp_name="exp"):
    run_dir = root / name
    run_dir.mkdir(parents=True)
    (run_dir / "progress.txt").write_bytes(text if isinstance(text, bytes) else text.encode())
    (run_dir / "config.json").write_text('{"exp_name": "%s"}' % exp_name)
    return run_dir / "progress.txt"


DAMAGED = {
    "empty": "",
    "header_only": "Epoch\tAverageEpRet\tTotalEnvInteracts\n",
    "garbage_text": "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\toops\tabc\n1\t\x01x\t??\n",
    "extra_fields": "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\t1\t2\n1\t2\t3\t4\t5\t6\n",
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\x00garbage\xff" * 20,
}


@pytest.mark.parametrize("kind", sorted(DAMAGED))
def test_damaged_run_is_skipped_by_name_and_the_rest_plotted(tmp_path, kind):
    _run(tmp_path / "exp", "exp_s0")
    bad = _run(tmp_path / "exp", "exp_s1", DAMAGED[kind])
    fig = tmp_path / "fig.png"
    proc = run_cli("plot", tmp_path / "exp", "--savefig", fig)
    assert fig.stat().st_size > 1000 and "Traceback" not in proc.stderr
    assert any(str(bad) in line and "Skipping" in line for line in proc.stdout.splitlines())


def test_truncated_last_row_is_still_plotted(tmp_path):
    _run(tmp_path / "exp", "exp_s0", GOOD + "2\t3.")  # a run killed while writing
    data = get_all_datasets([str(tmp_path / "exp")])
    assert len(data) == 1 and len(data[0]) == 3


def test_nothing_readable_is_one_error_naming_the_file(tmp_path):
    bad = _run(tmp_path / "exp", "exp_s0", DAMAGED["binary"])
    proc = run_cli("plot", tmp_path / "exp", "--savefig", tmp_path / "f.png", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "no readable progress.txt" in proc.stderr
    assert str(bad) in proc.stdout and not (tmp_path / "f.png").exists()


def test_select_and_exclude_match_every_level(tmp_path):
    for seed in (0, 10, 20):
        _run(tmp_path / "cp", f"cp_s{seed}", exp_name="cp")
        _run(tmp_path / "cp_h64", f"cp_h64_s{seed}", exp_name="cp_h64")
    runs = get_all_datasets([str(tmp_path / "cp")], exclude=["s10"])
    assert len(runs) == 4  # seed 10 of both experiments dropped
    runs = get_all_datasets([str(tmp_path / "cp")], select=["s20"])
    assert len(runs) == 2
    runs = get_all_datasets([str(tmp_path / "cp")], select=["h64"], exclude=["s0"])
    assert sorted(set(r["Condition1"][0] for r in runs)) == ["cp_h64"] and len(runs) == 2
    with pytest.raises(ValueError, match="matches --select/--exclude"):
        get_all_datasets([str(tmp_path / "cp")], select=["nothing-like-this"])
    fig = tmp_path / "fig.png"
    proc = run_cli("plot", tmp_path / "cp", "--exclude", "s10", "--legend", "a", "b",
                   "--savefig", fig)
    assert fig.exists() and "Traceback" not in proc.stderr


# ---- issue 19: plot inputs that were not clean; issue 21: make_plots in a session ----

ONE_EPOCH = "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\t7.5\t100\n"
ALL_NAN = "Epoch\tAverageEpRet\tTotalEnvInteracts\n0\tnan\t100\n1\tnan\t200\n"


def _one_line_error(proc, code):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code and "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("plot: error:"), proc.stderr
    return lines[0]


def test_one_epoch_run_shows_its_point(tmp_path):
    import matplotlib.pyplot as plt
    from spinup.utils.plot import make_plots
    _run(tmp_path / "one", "one_s0", ONE_EPOCH)
    figs = make_plots([str(tmp_path / "one")], xaxis="TotalEnvInteracts",
                      values=["Performance"], savefig=str(tmp_path / "one.png"))
    points = [line for line in figs[0].axes[0].get_lines() if len(line.get_xdata()) == 1]
    assert points and list(points[0].get_xdata()) == [100] and list(points[0].get_ydata()) == [7.5]
    assert points[0].get_marker() not in (None, "", "None", " ")  # drawn, not an empty line
    plt.close("all")
    proc = run_cli("plot", tmp_path / "one", "--savefig", tmp_path / "cli.png")
    assert (tmp_path / "cli.png").stat().st_size > 1000 and not proc.stderr.strip()


def test_all_nan_performance_is_one_clear_line(tmp_path):
    bad = _run(tmp_path / "nan", "nan_s0", ALL_NAN)
    fig = tmp_path / "nan.png"
    proc = run_cli("plot", tmp_path / "nan", "--savefig", fig, check=False)
    line = _one_line_error(proc, 1)
    assert "Performance" in line and not fig.exists()
    assert f"Skipping {bad} for Performance: every value is NaN" in proc.stdout


def test_all_nan_run_is_skipped_and_the_others_plotted(tmp_path):
    _run(tmp_path / "mix", "mix_s0")
    _run(tmp_path / "mix", "mix_s1", ALL_NAN)
    proc = run_cli("plot", tmp_path / "mix", "--savefig", tmp_path / "mix.png")
    assert (tmp_path / "mix.png").exists() and "every value is NaN" in proc.stdout


def test_empty_value_list_is_a_usage_error(tmp_path):
    _run(tmp_path / "exp", "exp_s0")
    fig = tmp_path / "p.png"
    proc = run_cli("plot", tmp_path / "exp", "-y", "--savefig", fig, check=False)
    assert "--value" in _one_line_error(proc, 2) and not fig.exists()
    from spinup.utils.plot import make_plots
    with pytest.raises(ValueError, match="at least one column"):
        make_plots([str(tmp_path / "exp")], xaxis="Epoch", values=[], savefig=str(fig))


def test_savefig_creates_missing_parent_directories(tmp_path):
    _run(tmp_path / "exp", "exp_s0")
    fig = tmp_path / "nodir" / "sub" / "p.png"
    run_cli("plot", tmp_path / "exp", "--savefig", fig)
    assert fig.stat().st_size > 1000
    # Nothing to plot: the directories are not created either.
    proc = run_cli("plot", tmp_path / "nothing", "--savefig", tmp_path / "new" / "p.png",
                   check=False)
    assert proc.returncode == 1 and not (tmp_path / "new").exists()


def test_savefig_that_cannot_be_written_is_one_line_and_writes_nothing(tmp_path):
    _run(tmp_path / "exp", "exp_s0")
    (tmp_path / "afile").write_text("x")
    proc = run_cli("plot", tmp_path / "exp", "--savefig", tmp_path / "afile" / "p.png",
                   check=False)
    assert "cannot create directory" in _one_line_error(proc, 1)
    proc = run_cli("plot", tmp_path / "exp", "--savefig", tmp_path / "out" / "p.xyz",
                   check=False)
    assert ".xyz" in _one_line_error(proc, 1) and not (tmp_path / "out").exists()
    (tmp_path / "taken.png").mkdir()  # a directory where the image should go
    proc = run_cli("plot", tmp_path / "exp", "--savefig", tmp_path / "taken.png", check=False)
    assert "cannot write" in _one_line_error(proc, 1)


def test_make_plots_keeps_the_backend_and_returns_the_figures(tmp_path, monkeypatch, capsys):
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    from spinup.utils.plot import make_plots
    _run(tmp_path / "exp", "exp_s0")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    before = matplotlib.get_backend()
    plt.switch_backend("svg")  # a session's own choice, which make_plots must not undo
    try:
        figs = make_plots([str(tmp_path / "exp")], xaxis="TotalEnvInteracts",
                          values=["Performance", "Epoch"])
        assert matplotlib.get_backend() == "svg"
    finally:
        plt.close("all")
        plt.switch_backend(before)
    assert len(figs) == 2 and all(isinstance(f, Figure) for f in figs)
    # Issue 45: the Python caller holds the figures (a notebook saves them itself): no
    # advice about a command-line flag; the CLI says it (test below).
    assert "savefig" not in capsys.readouterr().err
    figs[0].savefig(tmp_path / "again.png")  # the returned figures stay usable
    assert (tmp_path / "again.png").stat().st_size > 1000


def test_cli_without_display_or_savefig_says_so_in_one_line(tmp_path):
    _run(tmp_path / "exp", "exp_s0")
    proc = run_cli("plot", tmp_path / "exp", env={"DISPLAY": "", "WAYLAND_DISPLAY": "",
                                                  "MPLBACKEND": ""})
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("No display available: use --savefig FILE")


def test_one_legend_label_for_a_folder_of_several_experiments_is_refused(tmp_path):
    """Issue 45: ``plot DIR/ --legend X`` over a folder of several experiments drew one
    merged curve labelled X. One label stands for one experiment: such a folder is
    refused in one line; a folder holding the seeds of one experiment takes its label."""
    for name in ("a", "b", "c"):
        for seed in (0, 1):
            _run(tmp_path / "all" / name, f"{name}_s{seed}", exp_name=name)
    with pytest.raises(ValueError, match=r"holds 3 experiments \(a, b, c\)"):
        get_all_datasets([str(tmp_path / "all") + "/"], legend=["X"])
    data = get_all_datasets([str(tmp_path / "all" / "a") + "/"], legend=["X"])
    assert len(data) == 2 and {d["Condition1"].iloc[0] for d in data} == {"X"}
    # Narrowed to one experiment by --select, the folder is fine again.
    data = get_all_datasets([str(tmp_path / "all") + "/"], legend=["X"], select=["b_"])
    assert len(data) == 2


def test_a_curve_of_one_point_has_a_legend_key_that_shows_it(tmp_path):
    """Issue 45: a run whose last row was cut keeps one row; its curve is drawn as a point,
    and its legend key was a line that the plot nowhere showed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from spinup.utils.plot import make_plots
    _run(tmp_path / "a", "a_s0", exp_name="a")
    _run(tmp_path / "b", "b_s0", exp_name="b",
         text="Epoch\tAverageEpRet\tTotalEnvInteracts\n0\t1.5\t100\n1\t2.")   # cut row
    try:
        figs = make_plots([str(tmp_path / "a"), str(tmp_path / "b")],
                          xaxis="TotalEnvInteracts", values=["Performance"],
                          savefig=str(tmp_path / "f.png"))
        keys = figs[0].gca().get_legend().get_lines()
        assert len(keys) == 2 and all(k.get_marker() == "o" for k in keys)
    finally:
        plt.close("all")
