"""test_policy: runs headless (no display, no pygame) with a one-line note, writes no
stray files, and records MP4 videos with --video."""
import importlib.util
import os

import pytest

from conftest import run_cli

HAS_VIDEO = all(importlib.util.find_spec(m) for m in ("moviepy", "pygame"))
needs_video = pytest.mark.skipif(not HAS_VIDEO, reason="--video needs moviepy and pygame: "
                                 "pip install -e '.[video]' (included in '.[test]')")


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory):
    data = tmp_path_factory.mktemp("runs")
    run_cli("ppo", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--exp_name", "tp", "--data_dir", data)
    return data / "tp" / "tp_s0"


def _stray_dirs():
    return set(os.listdir("/tmp/experiments")) if os.path.isdir("/tmp/experiments") else set()


def test_headless_without_display_runs_without_rendering(cartpole_run, monkeypatch):
    before = _stray_dirs()
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    proc = run_cli("test_policy", cartpole_run, "-n", 2)
    assert "Episode 1" in proc.stdout and "AverageEpRet" in proc.stdout
    notes = [line for line in proc.stderr.splitlines() if "without rendering" in line]
    assert len(notes) == 1 and "Traceback" not in proc.stderr
    assert _stray_dirs() == before  # no /tmp/experiments/<time>/ any more


def test_headless_without_pygame_runs_without_rendering(cartpole_run, tmp_path):
    # A display is claimed, but pygame cannot be imported: rendering fails at the first
    # reset, and test_policy falls back instead of crashing with DependencyNotInstalled.
    fake = tmp_path / "fake" / "pygame"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('pygame hidden by the test')\n")
    env = {"DISPLAY": ":99", "PYTHONPATH": str(tmp_path / "fake")}
    proc = run_cli("test_policy", cartpole_run, "-n", 2, env=env)
    assert "Episode 1" in proc.stdout and "Traceback" not in proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "without rendering" in line]
    assert len(notes) == 1 and "pygame" in notes[0]


def test_video_needs_its_extra_and_says_so(cartpole_run, tmp_path):
    fake = tmp_path / "fake" / "pygame"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('pygame hidden by the test')\n")
    proc = run_cli("test_policy", cartpole_run, "-n", 1, "--video", tmp_path / "v",
                   env={"PYTHONPATH": str(tmp_path / "fake")}, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "spinup[video]" in proc.stderr and not (tmp_path / "v").exists()


def _assert_mp4s(video_dir, count):
    files = sorted(video_dir.glob("*.mp4"))
    assert len(files) == count, files
    for f in files:
        head = f.read_bytes()[:12]
        assert f.stat().st_size > 1000 and head[4:8] == b"ftyp"  # an MP4 container


@needs_video
def test_video_cartpole(cartpole_run, tmp_path):
    proc = run_cli("test_policy", cartpole_run, "-n", 2, "--video", tmp_path / "v")
    assert "Videos saved in" in proc.stdout
    _assert_mp4s(tmp_path / "v", 2)


@needs_video
@pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco")
def test_video_halfcheetah(tmp_path, monkeypatch):
    monkeypatch.delenv("MUJOCO_GL", raising=False)  # test_policy sets egl itself
    run_cli("ppo", "--env", "HalfCheetah-v5", "--epochs", 1, "--steps_per_epoch", 200,
            "--exp_name", "hc", "--data_dir", tmp_path)
    proc = run_cli("test_policy", tmp_path / "hc" / "hc_s0", "-n", 1, "-l", 50,
                   "--video", tmp_path / "v", check=False)
    if proc.returncode != 0 and "gl" in proc.stderr.lower():
        pytest.skip(f"no off-screen OpenGL (MUJOCO_GL=egl) here: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    _assert_mp4s(tmp_path / "v", 1)


@needs_video
def test_watch_policy_returns_an_inline_animation_without_a_display(cartpole_run, tmp_path,
                                                                   monkeypatch):
    from spinup.utils.test_policy import watch_policy
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(var, raising=False)
    before = set(os.listdir(cartpole_run))
    html = watch_policy(str(cartpole_run), max_ep_len=6)
    assert html.ep_len == 6 and html.ep_ret == 6.0  # CartPole pays 1 per step
    assert "<script" in html.data and html.data.count("data:image/png;base64") == 7
    # nothing from the network: no CDN stylesheet, the buttons' icons are plain characters
    assert "http" not in html.data and 'class="fa ' not in html.data and "\u25b6" in html.data
    html = watch_policy(str(cartpole_run), max_ep_len=6, frame_step=2)
    assert html.data.count("data:image/png;base64") == 4  # the reset, then steps 2, 4, 6
    anim = watch_policy(str(cartpole_run), max_ep_len=3, as_html=False)
    anim.save(str(tmp_path / "ep.html"), writer="html")  # the animation itself
    assert (tmp_path / "ep.html").stat().st_size > 1000
    assert set(os.listdir(cartpole_run)) == before  # nothing written
    assert "SDL_VIDEODRIVER" not in os.environ  # the session's environment is left as it was
    with pytest.raises(ValueError, match="frame_step"):
        watch_policy(str(cartpole_run), frame_step=0)


def test_an_experiment_folder_points_to_its_runs(cartpole_run):
    """Issue 45: ``test_policy`` given the folder above the runs said only "no saved model"."""
    from spinup.utils.test_policy import load_policy_and_env
    folder = os.path.dirname(str(cartpole_run))
    with pytest.raises(FileNotFoundError) as e:
        load_policy_and_env(folder)
    assert "not one run" in str(e.value)
    assert f"test_policy {os.path.join(folder, os.path.basename(str(cartpole_run)))}" \
        in str(e.value)
