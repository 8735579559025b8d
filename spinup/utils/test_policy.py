"""Load a trained agent from a run's directory and watch it act (spec: "Experiment Outputs").

    python -m spinup.run test_policy PATH [-l L] [-n N] [-nr] [-i I] [-d]
        [--video DIR] [--allow-module NAME ...]

PATH is a run's output directory, a folder written by ``spinup.run export`` (or a downloaded
copy of one), or ``hf://REPO_ID[@REVISION]`` (downloaded from the Hugging Face Hub first).
The actor-critic comes from ``pyt_save/model.pt`` (an exported folder: ``model.pt``), loaded
weights-only with the same rules for every source; the env from ``vars.json``.
"""
import argparse
import contextlib
import glob
import json
import os
import os.path as osp
import re
import sys
import time

import numpy as np

from spinup.machinery.console import first_line as _first_line, print_table
from spinup.machinery.serialization_utils import build_model, read_model

ENV_NOT_FOUND = ("Environment not found!\n\n It looks like the environment wasn't saved, "
                 "and we can't run the agent in it. :(\n\n Check out the docs page on "
                 "Experiment Outputs for how to handle this situation: build the env "
                 "yourself and call\n"
                 "   env, get_action = load_policy_and_env(fpath)  # env is None\n"
                 "   run_policy(your_env, get_action)")


class HubDownloadError(FileNotFoundError):
    """An ``hf://REPO_ID[@REVISION]`` path whose folder cannot be had: no network, the Hub
    unreachable, ``HF_HUB_OFFLINE`` set and the repo not in the local cache, an unknown or
    private repo, a missing revision. A ``FileNotFoundError``, so code that handles a missing
    run handles it too; its message is one line naming the repo and what to do."""


def _env_flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def local_path(fpath):
    """``fpath`` as a local folder: ``hf://REPO_ID[@REVISION]`` is downloaded
    (``huggingface_hub.snapshot_download``, into the Hub's cache, once); anything else is
    returned unchanged.

    With ``HF_HUB_OFFLINE=1`` nothing is asked of the network: a repo already in the cache
    is used, any other fails at once.

    Raises:
        HubDownloadError: the repo cannot be downloaded (a ``FileNotFoundError``; one line
            naming the repo and the advice).
        ImportError: huggingface_hub is not installed.
    """
    if not isinstance(fpath, str) or not fpath.startswith("hf://"):
        return fpath
    repo, _, revision = fpath[len("hf://"):].partition("@")
    if not repo.strip("/"):
        raise HubDownloadError(f"{fpath}: give a repo id, e.g. hf://your-name/ppo-CartPole-v1")
    try:
        from huggingface_hub import constants, snapshot_download
    except ImportError:
        raise ImportError(f"{fpath}: the Hugging Face Hub needs the huggingface_hub package; "
                          'install it with: pip install "spinup[hub]"') from None
    # Read now, not only when huggingface_hub was imported: a process that sets it later.
    offline = _env_flag("HF_HUB_OFFLINE") or constants.HF_HUB_OFFLINE
    from spinup.version import __version__
    try:
        return snapshot_download(repo_id=repo, revision=revision or None,
                                 local_files_only=offline, library_name="spinup",
                                 library_version=__version__)
    except Exception as e:   # offline, unknown repo, no access, bad id or revision
        from huggingface_hub import errors
        if offline:
            reason = ("HF_HUB_OFFLINE is set and it is not in the local cache; unset "
                      "HF_HUB_OFFLINE where there is network")
        elif isinstance(e, errors.RevisionNotFoundError):
            reason = f"the repo has no revision {revision!r}; check the branch, tag or commit"
        elif isinstance(e, (errors.RepositoryNotFoundError, errors.GatedRepoError)):
            reason = ("no such repo, or it is private or gated: check the id, and log in "
                      "(`hf auth login` or HF_TOKEN) if you have access")
        elif isinstance(e, ValueError):   # a malformed repo id or revision
            reason = f"{_first_line(e)}; give hf://NAME/REPO or hf://NAME/REPO@REVISION"
        else:   # the network or the Hub is down (the library says "Got: ConnectError ...")
            reason = (f"the Hub cannot be reached ({_first_line(e)}); check the network, or "
                      "set HF_HUB_OFFLINE=1 to use a copy already in the local cache")
        raise HubDownloadError(f"cannot download {fpath}: {reason}; or give the path of a "
                               "downloaded copy of the folder") from None


def _model_path(fpath, itr):
    """``model{itr}.pt``, or for ``'last'`` ``model.pt`` if it exists, else the
    highest-numbered snapshot (FileNotFoundError if there is none)."""
    save_dir = osp.join(fpath, "pyt_save")
    if not osp.isdir(save_dir) and osp.isfile(osp.join(fpath, "model.pt")):
        if itr != "last":   # a shared agent (spinup.run export): one model, no snapshots
            raise FileNotFoundError(f"{fpath} holds one model (an exported agent), no "
                                    f"snapshot {itr}")
        return osp.join(fpath, "model.pt")
    if not osp.isdir(save_dir):
        runs = (sorted(d for d in os.listdir(fpath)
                       if osp.isdir(osp.join(fpath, d, "pyt_save"))) if osp.isdir(fpath) else [])
        if runs:   # an experiment's folder (a grid's variant): its runs are one level down
            shown = ", ".join(runs[:5]) + (", ..." if len(runs) > 5 else "")
            raise FileNotFoundError(
                f"{fpath!r} is the folder of {len(runs)} run(s) ({shown}), not one run; "
                f"give one, e.g.: python -m spinup.run test_policy {osp.join(fpath, runs[0])}")
        raise FileNotFoundError(f"no saved model in {fpath!r} (expected {save_dir}/model.pt); "
                                "is this the output directory of a spinup run?")
    if itr != "last":
        path = osp.join(save_dir, f"model{itr}.pt")
        if not osp.exists(path):
            raise FileNotFoundError(f"no snapshot {itr} in {save_dir}")
        return path
    path = osp.join(save_dir, "model.pt")
    if osp.exists(path):
        return path
    numbered = [int(m.group(1)) for m in map(re.compile(r"model(\d+)\.pt").fullmatch,
                                             os.listdir(save_dir)) if m]
    if not numbered:
        raise FileNotFoundError(f"no model*.pt in {save_dir}")
    return osp.join(save_dir, f"model{max(numbered)}.pt")


def load_pytorch_policy(fpath, itr="last", deterministic=False, allowed_modules=()):
    """Rebuild the saved actor-critic of a run and wrap it as a policy function.

    Args:
        fpath (str): the run's output directory, a folder written by ``spinup.run export``,
            or ``hf://REPO_ID[@REVISION]`` (downloaded from the Hugging Face Hub).
        itr: ``'last'``, or the number of a snapshot saved with ``save_state(..., itr)``.
        deterministic (bool): act with the deterministic action (Gaussian mean, most likely
            discrete action, SAC's squashed mean).
        allowed_modules (sequence of str): modules besides ``spinup`` whose ``nn.Module``
            classes the file may name (a custom actor-critic).

    Returns:
        ``get_action(obs) -> action`` (numpy in and out); the module is ``get_action.ac``.

    Raises:
        FileNotFoundError: no saved model; for an ``hf://`` repo that cannot be downloaded,
            its subclass :class:`HubDownloadError`.
        ValueError: not a model this spinup reads, or it names a class that is not allowed.
        ImportError: the actor-critic class cannot be imported (or, for ``hf://``,
            huggingface_hub is not installed).
    """
    import torch
    path = _model_path(local_path(fpath), itr)
    print(f"\n\nLoading from {path}.\n\n")
    ac = build_model(read_model(path), path, allowed_modules)

    def get_action(o):
        with torch.no_grad():
            return ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic=deterministic)
    get_action.ac = ac
    return get_action


def load_env(fpath, itr="last", render_mode=None):
    """``gymnasium.make`` the ``EnvSpec`` in ``vars{itr}.json`` (if it exists, else
    ``vars.json``) of a run, an exported folder or ``hf://REPO_ID``; ``None`` if the run
    recorded none (:class:`HubDownloadError` as :func:`local_path`)."""
    import gymnasium as gym
    from spinup.envs import pixels
    spec = _saved_env_spec(local_path(fpath), itr)
    if spec is None:
        return None
    if pixels.is_atari_id(spec.id):   # the game as scored: no life-episodes, no clipping
        extra = {"render_mode": render_mode} if render_mode else {}
        return pixels.make_atari(spec.id, training=False, **extra)
    return gym.make(spec, render_mode=render_mode) if render_mode else gym.make(spec)


def _saved_env_spec(fpath, itr="last"):
    import gymnasium as gym
    candidates = ([] if itr == "last" else [f"vars{itr}.json"]) + ["vars.json"]
    existing = [osp.join(fpath, name) for name in candidates if osp.exists(osp.join(fpath, name))]
    if not existing:
        return None
    with open(existing[0]) as f:
        spec_json = json.load(f).get("env_spec")
    return gym.envs.registration.EnvSpec.from_json(spec_json) if spec_json else None


def load_policy_and_env(fpath, itr="last", deterministic=False, render_mode=None,
                        allowed_modules=()):
    """Load a run's trained policy and its environment.

    Args:
        fpath, itr, deterministic, allowed_modules: see :func:`load_pytorch_policy`.
        render_mode (str): passed to ``gymnasium.make`` (e.g. ``'human'``).

    Returns:
        ``(env, get_action)``; ``env`` is ``None`` when the run recorded no
        environment (then build it yourself and call :func:`run_policy`).

    Raises:
        FileNotFoundError (:class:`HubDownloadError` for ``hf://``), ValueError,
        ImportError: as :func:`load_pytorch_policy`.
    """
    fpath = local_path(fpath)   # hf://: downloaded once
    get_action = load_pytorch_policy(fpath, itr, deterministic, allowed_modules)
    return load_env(fpath, itr, render_mode), get_action


def load_policy(fpath, itr="last", deterministic=False):
    """The spec's name for :func:`load_policy_and_env`, without ``render_mode`` and
    ``allowed_modules``: the same ``(env, get_action)`` and errors."""
    return load_policy_and_env(fpath, itr, deterministic)


def _clipped(env, get_action):
    """``get_action`` with actions clipped to the bounds of a Box action space."""
    from gymnasium import spaces
    space = env.action_space
    if not isinstance(space, spaces.Box):
        return get_action
    return lambda o: np.clip(get_action(o), space.low, space.high)


def run_policy(env, get_action, max_ep_len=None, num_episodes=100, render=True):
    """Run episodes with ``get_action`` in ``env``, printing each episode's return.

    Actions for a ``Box`` action space are clipped to its bounds, as in training. Nothing
    is written to disk.

    Args:
        env: a gymnasium environment with the spaces the agent was trained on.
        get_action (callable): observation -> action.
        max_ep_len (int): cut episodes at this length; ``None`` or 0: the env's own limit.
        num_episodes (int): how many episodes.
        render (bool): call ``env.render()`` each step if ``env.render_mode == 'human'``.

    Returns:
        dict: the printed summary: ``AverageEpRet``, ``StdEpRet``, ``MaxEpRet``,
        ``MinEpRet`` and ``EpLen`` (the mean episode length).

    Raises:
        RuntimeError: ``env`` is ``None`` (the spec's "Environment not found!").
    """
    if env is None:
        raise RuntimeError(ENV_NOT_FOUND)
    returns, lengths, act = [], [], _clipped(env, get_action)
    show = render and env.render_mode == "human"
    for episode in range(num_episodes):
        o, _ = env.reset()
        ep_ret, ep_len, over = 0, 0, False
        while not over:
            if show:
                env.render()
                time.sleep(1e-3)
            o, r, terminated, truncated, _ = env.step(act(o))
            ep_ret += r
            ep_len += 1
            over = terminated or truncated or bool(max_ep_len and ep_len == max_ep_len)
        returns.append(ep_ret)
        lengths.append(ep_len)
        print("Episode %d \t EpRet %.3f \t EpLen %d" % (episode, ep_ret, ep_len))
    summary = {"AverageEpRet": np.mean(returns), "StdEpRet": np.std(returns),
               "MaxEpRet": np.max(returns), "MinEpRet": np.min(returns),
               "EpLen": np.mean(lengths)}
    print_table(summary.items())
    return summary


def watch_policy(fpath, itr="last", deterministic=True, max_ep_len=None, seed=0,
                 frame_step=1, fps=30, width=4.0, allowed_modules=(), as_html=True):
    """Play one episode of a run's policy as an inline animation (for a notebook: the env
    draws off-screen, the frames are embedded as JavaScript; no ffmpeg, no files).

    Args:
        fpath, itr, allowed_modules: as :func:`load_pytorch_policy`.
        deterministic (bool): act with the most likely action (default), not a sample.
        max_ep_len (int): stop after this many steps; ``None``: the env's own limit.
        seed (int): seed of the episode's ``env.reset``.
        frame_step (int): keep every ``frame_step``-th frame (the episode is played in full).
        fps (int): frames per second of the animation.
        width (float): width of the animation in inches (height: the frames' aspect).
        as_html (bool): return an ``IPython.display.HTML``; ``False``: the ``FuncAnimation``
            (e.g. for ``.save('ep.gif')``).

    Returns:
        The HTML or the animation, with the episode's ``ep_ret`` and ``ep_len``.

    Raises:
        FileNotFoundError, ValueError, ImportError: as :func:`load_pytorch_policy`, or
            ``as_html`` without IPython.
        RuntimeError: no environment recorded, or it cannot draw frames (pygame missing).
    """
    import gymnasium as gym
    from matplotlib import animation
    from matplotlib.figure import Figure
    if not isinstance(frame_step, int) or frame_step < 1:
        raise ValueError(f"watch_policy: frame_step must be an integer >= 1, got {frame_step!r}")
    get_action = load_pytorch_policy(fpath, itr, deterministic, allowed_modules)
    env = load_env(fpath, itr, render_mode="rgb_array")
    if env is None:
        raise RuntimeError(ENV_NOT_FOUND)
    frames, ep_ret, ep_len = [], 0.0, 0
    sdl_driver = os.environ.get("SDL_VIDEODRIVER")
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    try:
        o, _ = env.reset(seed=seed)
        try:
            frames.append(env.render())
        except gym.error.DependencyNotInstalled as e:
            raise RuntimeError("watch_policy needs the environment's renderer: pip install "
                               f"'spinup[video]' ({_first_line(e)})") from None
        over, act = False, _clipped(env, get_action)
        while not over:
            o, r, terminated, truncated, _ = env.step(act(o))
            ep_ret, ep_len = ep_ret + float(r), ep_len + 1
            over = terminated or truncated or bool(max_ep_len and ep_len >= max_ep_len)
            if ep_len % frame_step == 0 or over:
                frames.append(env.render())
    finally:
        env.close()
        if sdl_driver is None:
            os.environ.pop("SDL_VIDEODRIVER", None)
    height, wide = frames[0].shape[:2]
    # A Figure without pyplot: the notebook shows only the animation, not a stray still.
    fig = Figure(figsize=(width, width * height / wide), dpi=72)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_axis_off()
    image = ax.imshow(frames[0])
    title = ax.text(0.02, 0.97, "", transform=ax.transAxes, va="top", fontsize=9,
                    bbox=dict(facecolor="white", alpha=0.7, linewidth=0))

    def draw(i):
        image.set_data(frames[i])
        title.set_text(f"step {min(i * frame_step, ep_len)} of {ep_len}, return {ep_ret:.1f}")
        return image, title

    anim = animation.FuncAnimation(fig, draw, frames=len(frames), interval=1000 / fps,
                                   blit=False)
    print(f"Episode: return {ep_ret:.3f}, length {ep_len}")
    result = anim
    if as_html:
        try:
            from IPython.display import HTML
        except ImportError:
            raise ImportError("watch_policy(as_html=True) needs IPython, which every Jupyter "
                              "kernel has; outside one, use as_html=False") from None
        result = HTML(offline_player(anim.to_jshtml(fps=fps, default_mode="once")))
    result.ep_ret, result.ep_len = ep_ret, ep_len
    return result


# The HTML player's Font Awesome icons (from a CDN) as unicode characters.
_PLAYER_ICONS = {"fa-minus": "\u2212", "fa-fast-backward": "\u23ee", "fa-step-backward": "\u23f4",
                 "fa-play fa-flip-horizontal": "\u25c0", "fa-pause": "\u23f8",
                 "fa-play": "\u25b6", "fa-step-forward": "\u23f5",
                 "fa-fast-forward": "\u23ed", "fa-plus": "+"}


def offline_player(html):
    """Make the ``str`` that ``Animation.to_jshtml`` returned load nothing from the
    network: no Font Awesome ``<link>``, each button's icon a unicode character."""
    html = re.sub(r'<link[^>]*font-awesome[^>]*>', "", html)
    for icon, char in _PLAYER_ICONS.items():
        html = html.replace(f'<i class="fa {icon}"></i>', char)
    return html


def _parser():
    parser = argparse.ArgumentParser(prog="python -m spinup.run test_policy",
                                     description="Run a trained spinup policy.")
    parser.add_argument("fpath", type=str, help="output directory of a run, a folder made by "
                        "'spinup.run export', or hf://REPO_ID[@REVISION]")
    parser.add_argument("--len", "-l", type=int, default=0,
                        help="max episode length (0: only the env's own limit)")
    parser.add_argument("--episodes", "-n", type=int, default=100)
    parser.add_argument("--norender", "-nr", action="store_true",
                        help="do not render (no display needed)")
    parser.add_argument("--itr", "-i", type=int, default=-1,
                        help="snapshot to load (-1: the last)")
    parser.add_argument("--deterministic", "-d", action="store_true",
                        help="use the deterministic action (SAC: the mean action)")
    parser.add_argument("--video", metavar="DIR", default=None,
                        help="record every episode to an MP4 file in DIR instead of showing "
                             "a window (needs: pip install 'spinup[video]'); for a run "
                             "tracked with --track, the videos are sent to its tracked run too")
    parser.add_argument("--no_track", action="store_true",
                        help="with --video: keep the videos local, even for a tracked run")
    parser.add_argument("--allow-module", dest="allow_modules", action="append", default=[],
                        metavar="NAME",
                        help="also trust torch.nn.Module classes from module NAME (and its "
                             "submodules) when rebuilding the policy; repeatable. Only for "
                             "files you trust: importing a module runs its code")
    return parser


def video_env(fpath, itr, video_dir, name_prefix="test_policy"):
    """The run's environment drawing off-screen, every episode recorded to an MP4 file in
    ``video_dir`` (``gymnasium.wrappers.RecordVideo``; the file is written when the episode
    ends or the env is closed); ``None`` if the run recorded no environment.

    Raises:
        RuntimeError: the renderer or the video packages are missing (one line).
    """
    import gymnasium as gym
    from gymnasium.wrappers import RecordVideo
    spec = _saved_env_spec(local_path(fpath), itr)
    if spec is not None and "mujoco" in str(spec.entry_point) \
            and "MUJOCO_GL" not in os.environ:
        os.environ["MUJOCO_GL"] = "egl"  # off-screen rendering, no display needed
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame draws off-screen too
    env = load_env(fpath, itr, "rgb_array")
    if env is None:
        return None
    try:
        env.reset()
        env.render()  # a missing renderer (pygame for CartPole) fails here, not mid-episode
        return RecordVideo(env, video_folder=video_dir, episode_trigger=lambda ep: True,
                           name_prefix=name_prefix, disable_logger=True)
    except gym.error.DependencyNotInstalled as e:  # pygame, moviepy
        env.close()
        raise RuntimeError(f"a video needs extra packages: pip install 'spinup[video]' "
                           f"(from a clone: pip install -e '.[video]'); {_first_line(e)}"
                           ) from None


def _make_watchable_env(args, itr):
    """The run's environment (or ``None``) for a window, a video, or neither; where a
    window cannot open, a one-line note says so and a plain environment is returned."""
    if args.video:
        return video_env(args.fpath, itr, args.video)
    if args.norender:
        return load_env(args.fpath, itr)
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        reason = "no display (DISPLAY is not set)"
    else:
        env = load_env(args.fpath, itr, "human")
        if env is None:
            return None
        try:
            env.reset()  # human rendering draws here, so this is where it fails
            return env
        except Exception as e:  # pygame missing, no video device, GLFW failure ...
            reason = f"cannot render ({_first_line(e)})"
            with contextlib.suppress(Exception):
                env.close()
    print(f"test_policy: {reason}; running without rendering (-nr skips rendering, --video "
          "DIR records MP4s)", file=sys.stderr)
    return load_env(args.fpath, itr)


def main(argv=None):
    """``python -m spinup.run test_policy ...``; returns the exit code: 0; 1 when the run
    cannot be loaded or played; 2 when an ``hf://`` repo cannot be downloaded (offline,
    unknown, private). The reason is printed on one line."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    if args.len < 0:
        parser.error(f"--len {args.len}: give 0 (the env's own limit) or a number of steps >= 1")
    if args.itr < -1:
        parser.error(f"--itr {args.itr}: give -1 (the last snapshot) or a snapshot number >= 0")
    itr = "last" if args.itr < 0 else args.itr
    try:
        args.fpath = local_path(args.fpath)   # hf://REPO_ID: downloaded once
    except (FileNotFoundError, ImportError) as e:
        print(f"test_policy: error: {e}", file=sys.stderr)
        return 2
    videos_before = set(glob.glob(osp.join(args.video, "*.mp4"))) if args.video else set()
    try:
        # The policy first: a bad model.pt should fail before any window or video.
        get_action = load_pytorch_policy(args.fpath, itr, args.deterministic,
                                         args.allow_modules)
        env = _make_watchable_env(args, itr)
        try:
            run_policy(env, get_action, args.len, args.episodes,
                       render=not (args.norender or args.video))
        finally:
            if env is not None:
                env.close()  # also writes the last video
    except (FileNotFoundError, ImportError, ValueError, RuntimeError) as e:
        print(f"test_policy: error: {e}", file=sys.stderr)
        return 1
    if args.video:
        print(f"Videos saved in {args.video}")
        if not args.no_track:   # a run trained with --track: its tracked run gets them too
            from spinup.machinery.tracking import log_videos_to_run
            videos = sorted(set(glob.glob(osp.join(args.video, "*.mp4"))) - videos_before)
            if log_videos_to_run(args.fpath, videos):
                print(f"Sent {len(videos)} video(s) to the run's tracker")
    return 0


if __name__ == "__main__":
    sys.exit(main())
