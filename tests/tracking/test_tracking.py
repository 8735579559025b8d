"""``--track wandb|mlflow``: the rows, configuration and videos of a run sent to Weights &
Biases (offline) and MLflow (a SQLite store), read back through each tool's own reader and
compared with progress.txt; from Python, the command line and grids; resumes continue the
same tracked run; refusals happen before anything is written.

No network: W&B runs offline (the default here) and MLflow writes to a SQLite file. Nothing
of spinup is mocked.
"""
import json
import os
import os.path as osp
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT, run_here
from tests.tracking import wandb_records

pytest.importorskip("wandb")
pytest.importorskip("mlflow")

TINY = dict(epochs=2, steps_per_epoch=300)


def _cli(*args, cwd, env=None, check=True):
    """``python -m spinup.run *args`` in ``cwd`` (MLflow writes artifacts under the working
    directory's ``mlruns``, W&B nothing there)."""
    full_env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=ROOT, WANDB_MODE="offline")
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "spinup.run", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=600, env=full_env)
    if check and proc.returncode != 0:
        pytest.fail(f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def _same_rows(progress, rows, step_key="_step"):
    """Every row of ``progress`` (a DataFrame) is one of ``rows`` (dicts), number for
    number, at step TotalEnvInteracts."""
    assert len(rows) == len(progress)
    for (_, expected), got in zip(progress.iterrows(), rows):
        assert got[step_key] == int(expected["TotalEnvInteracts"])
        for column, value in expected.items():
            if np.isnan(value):
                assert got[column] is None or np.isnan(got[column]), column
            else:
                assert got[column] == pytest.approx(float(value), rel=1e-12, abs=0), column


def _mlflow_client(db):
    from mlflow.tracking import MlflowClient
    return MlflowClient(f"sqlite:///{db}")


def _mlflow_rows(client, run_id, columns):
    """The metric histories of an MLflow run as rows, one per step."""
    by_step = {}
    for column in columns:
        for m in client.get_metric_history(run_id, column):
            by_step.setdefault(m.step, {"step": m.step})[column] = m.value
    return [by_step[s] for s in sorted(by_step)]


@pytest.fixture
def mlflow_store(tmp_path):
    """A SQLite store whose experiment ``tests`` keeps its artifacts in ``tmp_path``."""
    db = tmp_path / "mlflow.db"
    client = _mlflow_client(db)
    client.create_experiment("tests", artifact_location=(tmp_path / "artifacts").as_uri())
    return db, client


def test_wandb_from_python_rows_config_and_resume(tmp_path, progress):
    """A run from Python sends each row at step TotalEnvInteracts and its config with the
    provenance; a resume appends to the same W&B run (same id), and the offline files read
    back give exactly progress.txt."""
    from spinup import ppo
    out = str(tmp_path / "run")
    track = dict(to="wandb", project="tests")
    env_fn = lambda: gym.make("CartPole-v1")   # noqa: E731
    ppo(env_fn, **TINY, logger_kwargs=dict(output_dir=out, track=track))
    first = json.load(open(osp.join(out, "tracking.json")))
    assert first["to"] == "wandb" and first["mode"] == "offline"
    ppo(env_fn, **dict(TINY, epochs=3),
        logger_kwargs=dict(output_dir=out, track=track, resume=True))
    assert json.load(open(osp.join(out, "tracking.json")))["id"] == first["id"]
    files = wandb_records.run_files(out)
    assert len(files) == 2 and all(first["id"] in f for f in files)
    _same_rows(progress(out), wandb_records.history(out))
    config = wandb_records.config(out)
    saved = json.load(open(osp.join(out, "config.json")))
    assert config["epochs"] == 3 and config["seed"] == saved["seed"]
    assert config["provenance"]["torch"] == json.load(
        open(osp.join(out, "provenance.json")))["run"]["torch"]
    record = wandb_records.run_record(out)
    assert (record.run_id, record.project) == (first["id"], "tests")


def test_wandb_grid_in_python_groups_its_variants(tmp_path, progress):
    """``ExperimentGrid.run(track=...)`` from Python, two seeds: two W&B runs in the group
    named after the grid, each holding its own progress.txt."""
    from spinup import ppo
    from spinup.launch.run_utils import ExperimentGrid
    grid = ExperimentGrid("grid")
    grid.add("env_name", "CartPole-v1")
    grid.add("epochs", 2)
    grid.add("steps_per_epoch", 300)
    grid.add("seed", [0, 1])
    dirs = grid.run(ppo, data_dir=str(tmp_path), track=dict(to="wandb", project="tests"))
    ids = set()
    for seed, out in zip((0, 1), dirs):
        record = wandb_records.run_record(out)
        assert (record.run_group, record.display_name) == ("grid", f"grid_s{seed}")
        ids.add(record.run_id)
        _same_rows(progress(out), wandb_records.history(out))
    assert len(ids) == 2


def test_mlflow_cli_grid_parent_rows_params_and_resume(tmp_path, mlflow_store, progress):
    """MLflow from the command line: the grid's runs are children of one parent run named
    after the grid; metric histories equal progress.txt; the config is the run's params;
    ``--resume DIR --epochs 3`` continues the same MLflow run."""
    db, client = mlflow_store
    common = ["--track", "mlflow", "--track_uri", f"sqlite:///{db}", "--track_project", "tests"]
    _cli("ppo", "--env", "CartPole-v1", "--epochs", 2, "--steps_per_epoch", 300,
         "--seed", 0, 1, "--exp_name", "g", "--data_dir", tmp_path, *common, cwd=tmp_path)
    experiment = client.get_experiment_by_name("tests").experiment_id
    runs = {r.info.run_name: r for r in client.search_runs([experiment])}
    assert set(runs) == {"g", "g_s0", "g_s1"}
    parent = runs["g"].info.run_id
    for seed in (0, 1):
        out = str(tmp_path / "g" / f"g_s{seed}")
        run = runs[f"g_s{seed}"]
        assert run.data.tags["mlflow.parentRunId"] == parent
        assert run.info.status == "FINISHED"
        assert json.load(open(osp.join(out, "tracking.json")))["run_id"] == run.info.run_id
        assert run.data.params["epochs"] == "2" and run.data.params["seed"] == str(seed)
        assert "provenance.torch" in run.data.params
        table = progress(out)
        _same_rows(table, _mlflow_rows(client, run.info.run_id, table.columns), "step")
    out = str(tmp_path / "g" / "g_s1")
    _cli("ppo", "--resume", out, "--epochs", 3, cwd=tmp_path)
    run = client.get_run(runs["g_s1"].info.run_id)
    assert run.info.status == "FINISHED"
    table = progress(out)
    assert len(table) == 3
    _same_rows(table, _mlflow_rows(client, run.info.run_id, table.columns), "step")
    assert len(client.search_runs([experiment])) == 3   # no new run


def test_missing_tracker_package_is_one_line_before_anything_is_written(tmp_path,
                                                                       monkeypatch):
    """Without the package: the CLI exits 2 with one line naming the extra and makes no
    directory; the Logger raises ImportError and writes nothing."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['wandb'] = None\n")
    proc = _cli("ppo", "--env", "CartPole-v1", "--data_dir", tmp_path / "data", "--track",
                "wandb", cwd=tmp_path, check=False,
                env={"PYTHONPATH": f"{site}{os.pathsep}{ROOT}"})
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and 'spinup[track]' in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "data").exists()
    from spinup.utils.logx import EpochLogger
    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(ImportError, match=r"spinup\[track\]"):
        EpochLogger(output_dir=str(tmp_path / "py"), track="wandb")
    assert not (tmp_path / "py").exists()


@pytest.mark.parametrize("flags, words", [
    (["--track", "neptune"], "must be one of wandb, mlflow"),
    (["--track_project", "p"], "--track_project needs --track"),
    (["--track", "wandb", "--track_uri", "x"], "--track_uri is not an option of wandb"),
    (["--track", "mlflow", "--track_entity", "me"], "--track_entity is not an option of mlflow"),
    (["--track", "wandb", "--track_mode", "sometimes"], "mode must be 'offline' or 'online'"),
    (["--track"], "--track needs a value"),
])
def test_bad_tracking_flags_are_refused_in_one_line(tmp_path, flags, words):
    proc = run_here("ppo", "--env", "CartPole-v1", "--data_dir", tmp_path / "d", *flags,
                    cwd=tmp_path)
    assert proc.returncode == 2
    assert words in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert not (tmp_path / "d").exists()


def test_track_options_from_python():
    from spinup.machinery.tracking import TrackingError, track_options
    assert track_options(None) is None and track_options(False) is None
    assert track_options("wandb") == {"to": "wandb", "video": False}
    assert track_options(dict(to="mlflow", uri="sqlite:///x.db", project=3))["project"] == "3"
    for bad in ("tensorboard", 3, dict(to="wandb", colour="red"), dict(project="p")):
        with pytest.raises(TrackingError):
            track_options(bad)


def test_a_tracker_that_fails_does_not_stop_training(tmp_path, capsys, progress):
    """MLflow at a store it cannot open: one warning, the run trains to its end and the
    table has every row."""
    from spinup import ppo
    out = str(tmp_path / "run")
    (tmp_path / "a_file").write_text("not a directory")
    bad = f"sqlite:///{tmp_path}/a_file/mlflow.db"
    ppo(lambda: gym.make("CartPole-v1"), **TINY,
        logger_kwargs=dict(output_dir=out, track=dict(to="mlflow", uri=bad)))
    printed = capsys.readouterr().out
    assert printed.count("Warning: tracking with mlflow stopped") == 1
    assert len(progress(out)) == 2 and not osp.exists(osp.join(out, "tracking.json"))


def test_overwrite_starts_a_new_tracked_run(tmp_path):
    """--overwrite clears the old run's tracking record and offline files with the rest."""
    from spinup import ppo
    out = str(tmp_path / "run")
    env_fn = lambda: gym.make("CartPole-v1")   # noqa: E731
    ppo(env_fn, epochs=1, steps_per_epoch=300, logger_kwargs=dict(output_dir=out, track="wandb"))
    first = json.load(open(osp.join(out, "tracking.json")))["id"]
    ppo(env_fn, epochs=1, steps_per_epoch=300,
        logger_kwargs=dict(output_dir=out, track="wandb", overwrite=True))
    files = wandb_records.run_files(out)
    assert len(files) == 1 and first not in files[0]
    assert len(wandb_records.history(out)) == 1
    assert list(pd.read_table(osp.join(out, "progress.txt"))["Epoch"]) == [0]


def test_videos_reach_the_tracked_run(tmp_path, mlflow_store):
    """``track=dict(video=True)``: one episode recorded at the end of training lands in
    MLflow's artifacts; ``test_policy --video`` on a W&B-tracked run adds its videos to that
    run as media (and ``--no_track`` keeps them local)."""
    pytest.importorskip("moviepy")
    pytest.importorskip("pygame")
    from spinup import ppo
    from spinup.utils import test_policy
    db, client = mlflow_store
    env_fn = lambda: gym.make("CartPole-v1")   # noqa: E731
    out = str(tmp_path / "m")
    ppo(env_fn, epochs=1, steps_per_epoch=300, logger_kwargs=dict(
        output_dir=out, track=dict(to="mlflow", uri=f"sqlite:///{db}", project="tests",
                                   video=True)))
    run_id = json.load(open(osp.join(out, "tracking.json")))["run_id"]
    videos = [a.path for a in client.list_artifacts(run_id, "videos")]
    assert len(videos) == 1 and videos[0].endswith(".mp4")
    assert os.listdir(osp.join(out, "videos")) == [osp.basename(videos[0])]
    assert client.get_run(run_id).info.status == "FINISHED"

    out = str(tmp_path / "w")
    ppo(env_fn, epochs=1, steps_per_epoch=300, logger_kwargs=dict(output_dir=out,
                                                                 track="wandb"))
    assert test_policy.main([out, "--video", str(tmp_path / "v1"), "-n", "1",
                             "--no_track"]) == 0
    assert len(wandb_records.run_files(out)) == 1   # not reopened
    assert test_policy.main([out, "--video", str(tmp_path / "v2"), "-n", "2"]) == 0
    media = [row for row in wandb_records.history(out) if "video/count" in row]
    assert len(media) == 1 and media[0]["video/count"] == 2, media
    assert media[0]["video/_type"] == "videos" and media[0]["_step"] == 300
