"""A trained run as a folder for the Hugging Face Hub, and that folder uploaded.

    python -m spinup.run export DIR OUT [--episodes N] [--seed S] [--itr I] [--no_video]
    python -m spinup.run push OUT REPO_ID [--private] [--message M]

``export`` writes OUT with what someone else needs to use, judge and reproduce the agent of
run DIR; it needs no network:

===================  ==========================================================================
``model.pt``         the saved actor-critic, copied as the run saved it (weights and how to
                     rebuild the network; loaded weights-only, no pickled code)
``vars.json``        the environment's gymnasium spec (``test_policy`` makes the env from it)
``config.json``      the run's arguments; ``provenance.json`` what produced its numbers
``progress.txt``     the training table
``results.json``     mean and std of the return over N deterministic test episodes, measured
                     at export, episode ``i`` reset with seed ``S + i``
``replay.mp4``       one deterministic episode (seed ``S``); left out with ``--no_video``, or
                     when the env cannot draw
``README.md``        a model card: the Hub's metadata (``model-index`` with the result), what
                     was trained, and how to load it
===================  ==========================================================================

``push`` checks such a folder and uploads it in one commit (``huggingface_hub.upload_folder``).
``test_policy`` and :func:`spinup.utils.test_policy.load_policy_and_env` read the folder, a
downloaded copy, or ``hf://REPO_ID[@REVISION]`` directly.

Exit codes of both commands: 0; 2 for bad input (a folder in the way, not a run, an
incomplete folder, a bad repo id); 1 when the Hub cannot be used (offline, no login, refused).
"""
import argparse
import contextlib
import datetime
import io
import json
import os
import os.path as osp
import shutil
import sys
import tempfile
import warnings

import numpy as np

from spinup.machinery.console import first_line

#: The files every exported folder has (``replay.mp4`` may be missing).
FOLDER_FILES = ("model.pt", "vars.json", "config.json", "provenance.json", "progress.txt",
                "results.json", "README.md")
#: The files of the run that are copied as they are (``vars.json`` possibly from
#: ``vars{itr}.json``).
RUN_FILES = ("vars.json", "config.json", "provenance.json", "progress.txt")
MIN_EPISODES = 10
#: config.json entries the card's table leaves out (bookkeeping, not settings).
_NOT_SETTINGS = ("logger_kwargs", "env_fn", "exp_name", "_algorithm")


class ShareError(Exception):
    """``export`` or ``push`` refused or failed; the message is one line.

    Attributes:
        code (int): the command's exit code: 2 for bad input, 1 when the Hub failed.
    """

    def __init__(self, message, code=2):
        super().__init__(message)
        self.code = code


def _first_line(error):
    return first_line(error, limit=300)


def _hub():
    try:
        import huggingface_hub
    except ImportError:
        raise ShareError('the Hugging Face Hub needs the huggingface_hub package; install it '
                         'with: pip install "spinup[hub]" (from a clone: pip install -e '
                         '".[hub]")') from None
    return huggingface_hub


def evaluate(folder, episodes=MIN_EPISODES, seed=0, itr="last"):
    """Play the deterministic policy of ``folder`` (a run or an exported folder) for
    ``episodes`` episodes, episode ``i`` reset with seed ``seed + i``, actions clipped to
    the action space as in training.

    Returns:
        dict: ``mean_reward``, ``std_reward``, ``episodes``, ``seed``, ``returns``,
        ``lengths``.

    Raises:
        FileNotFoundError, ValueError, ImportError: as
            :func:`spinup.utils.test_policy.load_policy_and_env`.
        RuntimeError: the run recorded no environment.
        gymnasium.error.Error: the environment cannot be made.
    """
    from spinup.utils.test_policy import ENV_NOT_FOUND, _clipped, load_policy_and_env
    with contextlib.redirect_stdout(io.StringIO()):   # not its "Loading from ..." line
        env, get_action = load_policy_and_env(folder, itr, deterministic=True)
    if env is None:
        raise RuntimeError(ENV_NOT_FOUND)
    act, returns, lengths = _clipped(env, get_action), [], []
    try:
        for i in range(episodes):
            o, _ = env.reset(seed=seed + i)
            ep_ret, ep_len, over = 0.0, 0, False
            while not over:
                o, r, terminated, truncated, _ = env.step(act(o))
                ep_ret, ep_len = ep_ret + float(r), ep_len + 1
                over = terminated or truncated
            returns.append(ep_ret)
            lengths.append(ep_len)
    finally:
        env.close()
    return {"mean_reward": float(np.mean(returns)), "std_reward": float(np.std(returns)),
            "episodes": episodes, "seed": seed, "returns": returns, "lengths": lengths}


def _metric(results):
    """The model-index value, as the Hub's reinforcement-learning cards write it."""
    return f"{results['mean_reward']:.2f} +/- {results['std_reward']:.2f}"


def _cell(value, limit=60):
    text = value if isinstance(value, str) else json.dumps(value)
    text = text if len(text) <= limit else text[:limit - 3] + "..."
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def _card(config, results, video_note):
    """The model card (a ``huggingface_hub.ModelCard``) of an exported folder."""
    hub = _hub()
    env_id, algo = results["env_id"], results["algorithm"]
    value = _metric(results)
    data = hub.ModelCardData(
        library_name="spinup", model_name=f"{algo}-{env_id}",
        tags=["reinforcement-learning", "deep-reinforcement-learning", "spinup", algo, env_id],
        eval_results=[hub.EvalResult(
            task_type="reinforcement-learning", task_name="reinforcement-learning",
            dataset_type=env_id, dataset_name=env_id, metric_type="mean_reward",
            metric_name="mean_reward", metric_value=value)])
    rows = [f"| environment | `{env_id}` |"] + [
        f"| `{key}` | {_cell(val)} |" for key, val in sorted(config.items())
        if key not in _NOT_SETTINGS]
    table = "\n".join(rows)
    first, last = results["seed"], results["seed"] + results["episodes"] - 1
    snapshot = ("the last model the run saved" if results["itr"] == "last"
                else f"the snapshot saved at epoch {results['itr']}")
    body = f"""
# {algo.upper()} on {env_id}

A `{algo}` agent for the gymnasium environment `{env_id}`, trained with spinup, a PyTorch
rebuild of OpenAI's Spinning Up in Deep RL. This folder holds {snapshot}.

**Result: {value}**, the mean and standard deviation of the return of the deterministic
policy over {results['episodes']} episodes, reset with seeds {first} to {last}. They were
played when the folder was exported (`results.json` lists every episode's return and
length), so anyone can check the number by playing the same episodes again.

{video_note}

## Loading it

Install spinup with its Hub extra (`pip install "spinup[hub]"`). Below, `REPO_ID` is the id
of this repository on the Hub, and `DIR` a local copy of this folder.

Watch or measure it from the command line:

```bash
python -m spinup.run test_policy hf://REPO_ID -n 10 -d      # fetched from the Hub and cached
hf download REPO_ID --local-dir DIR                         # or keep a copy of the folder
python -m spinup.run test_policy DIR -n 10 -d
```

Or from Python:

```python
from spinup.utils.test_policy import load_policy_and_env

env, get_action = load_policy_and_env("hf://REPO_ID", deterministic=True)   # or DIR
obs, _ = env.reset(seed=0)
action = get_action(obs)
```

`model.pt` is read weights-only: loading it rebuilds spinup's own network classes and
executes nothing stored in the file. A custom network class has to be trusted by name
(`--allow-module NAME` on the command line, `allowed_modules=` in Python).

## Training

`config.json` has every argument of the run, `provenance.json` the software versions and the
machine that produced it, and `progress.txt` the training curves, one row per epoch
(`python -m spinup.run plot DIR` draws them). The main settings:

| argument | value |
|---|---|
{table}

Exported with spinup {results['spinup']} on {results['date']}.
"""
    return hub.ModelCard(f"---\n{data.to_yaml()}\n---\n{body}")


def _run_facts(run_dir, itr):
    """``(model path, {name: source path}, config, env id, algorithm)`` of a run (ShareError
    if it is not a run with a saved model, its files and an env id)."""
    from spinup.machinery.run_dir import saved_env_id
    from spinup.utils.test_policy import _model_path
    if not osp.isdir(run_dir):
        raise ShareError(f"export: {run_dir} is not a directory; give a run's output "
                         "directory (it has pyt_save/model.pt)")
    try:
        model = _model_path(run_dir, itr)
    except FileNotFoundError as e:
        raise ShareError(f"export: {e}") from None
    sources = {name: osp.join(run_dir, name) for name in RUN_FILES}
    if itr != "last" and osp.isfile(osp.join(run_dir, f"vars{itr}.json")):
        sources["vars.json"] = osp.join(run_dir, f"vars{itr}.json")
    missing = [name for name, path in sources.items() if not osp.isfile(path)]
    if missing:
        raise ShareError(f"export: {run_dir} has a model but not {', '.join(missing)}; is it "
                         "the output directory of a (finished) spinup run?")
    try:
        with open(sources["config.json"]) as f:
            config = json.load(f)
        with open(sources["vars.json"]) as f:
            spec = json.load(f).get("env_spec")
        env_id = saved_env_id(config) or (json.loads(spec)["id"] if spec else None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ShareError(f"export: cannot read the run's config.json or vars.json "
                         f"({_first_line(e)})") from None
    if env_id is None:
        raise ShareError(f"export: {run_dir} records no gymnasium environment, so the agent "
                         "could be neither evaluated nor loaded elsewhere")
    return model, sources, config, env_id, config.get("_algorithm", "agent")


def export(run_dir, out, episodes=MIN_EPISODES, seed=0, video=True, itr="last"):
    """Write the Hub folder of ``run_dir`` to ``out`` (see the module docstring).

    The folder is built in a temporary directory beside ``out`` and renamed into place at
    the end, so ``out`` is either complete or not there (an empty ``out`` is replaced).

    Args:
        run_dir (str): a run's output directory (or an exported folder, to measure again).
        out (str): the folder to create: absent, or an empty directory.
        episodes (int): deterministic test episodes for ``results.json`` (at least 10).
        seed (int): reset seed of the first test episode (and of the replay).
        video (bool): record ``replay.mp4``; an env that cannot draw only gives a note.
        itr: ``'last'``, or the number of a snapshot ``pyt_save/model{itr}.pt``.

    Returns:
        dict: what ``results.json`` holds.

    Raises:
        ShareError: ``episodes`` < 10, ``out`` is not empty, ``run_dir`` is not a run with a
            saved model (or snapshot ``itr``), its files and an env id, the agent cannot be
            played, or huggingface_hub is not installed (all code 2).
    """
    import gymnasium as gym
    if episodes < MIN_EPISODES:
        raise ShareError(f"export: --episodes {episodes}: give at least {MIN_EPISODES} (the "
                         "model card's result is their mean and std)")
    if osp.exists(out) and not (osp.isdir(out) and not os.listdir(out)):
        raise ShareError(f"export: {out} exists and is not an empty directory; give a new "
                         "folder")
    _hub()
    model, sources, config, env_id, algo = _run_facts(run_dir, itr)
    parent = osp.dirname(osp.abspath(out))
    try:
        os.makedirs(parent, exist_ok=True)
        work = tempfile.mkdtemp(prefix=f".{osp.basename(osp.abspath(out))}.export-",
                                dir=parent)
    except OSError as e:
        raise ShareError(f"export: cannot write beside {out} ({_first_line(e)})") from None
    try:
        shutil.copyfile(model, osp.join(work, "model.pt"))
        for name, path in sources.items():
            shutil.copyfile(path, osp.join(work, name))
        try:
            measured = evaluate(work, episodes, seed)   # the folder itself must load and play
        except gym.error.Error as e:
            raise ShareError(f"export: cannot play the agent in {env_id} ({_first_line(e)})"
                             ) from None
        from spinup.version import __version__
        results = dict(env_id=env_id, algorithm=algo, itr=itr, deterministic=True, **measured,
                       date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
                       spinup=__version__, replay=None)
        if video:
            results["replay"] = _record_replay(work, seed)
            note = (f"`replay.mp4` shows the deterministic policy's episode reset with seed "
                    f"{seed} (return {results['replay']['return']:.2f}, "
                    f"{results['replay']['length']} steps)." if results["replay"] else
                    "No video: the environment could not be drawn when the folder was "
                    "exported.")
        else:
            note = "No video was recorded for this agent (exported with `--no_video`)."
        with open(osp.join(work, "results.json"), "w") as f:
            json.dump(results, f, indent=2)
        _card(config, results, note).save(osp.join(work, "README.md"))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(work, 0o777 & ~umask)   # mkdtemp made it private
        try:
            if osp.isdir(out):
                os.rmdir(out)   # empty (checked above)
            os.replace(work, out)
        except OSError as e:
            raise ShareError(f"export: cannot move the folder to {out} ({_first_line(e)}); "
                             "nothing was written") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def _record_replay(folder, seed):
    """Record the deterministic episode reset with ``seed`` to ``folder/replay.mp4`` with
    test_policy's video environment; returns ``{'seed', 'return', 'length'}``, or ``None``
    (and a one-line note on stderr) when the env cannot draw or a package is missing."""
    from spinup.utils import test_policy
    video_root = tempfile.mkdtemp(prefix=".video-", dir=folder)
    video_dir = osp.join(video_root, "episode")   # new: RecordVideo warns about a used one
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            get_action = test_policy.load_pytorch_policy(folder, deterministic=True)
            env = test_policy.video_env(folder, "last", video_dir, name_prefix="replay")
            if env is None:
                raise RuntimeError("the run recorded no environment")
            try:
                act, ep_ret, ep_len, over = test_policy._clipped(env, get_action), 0.0, 0, False
                o, _ = env.reset(seed=seed)
                while not over:
                    o, r, terminated, truncated, _ = env.step(act(o))
                    ep_ret, ep_len = ep_ret + float(r), ep_len + 1
                    over = terminated or truncated
            finally:
                env.close()   # writes the video
        videos = sorted(f for f in os.listdir(video_dir) if f.endswith(".mp4"))
        if not videos:
            raise RuntimeError("no video was written")
        os.replace(osp.join(video_dir, videos[0]), osp.join(folder, "replay.mp4"))
        return {"seed": seed, "return": ep_ret, "length": ep_len}
    except Exception as e:   # no renderer, no display driver, moviepy/ffmpeg failing ...
        print(f"export: note: no replay.mp4 ({_first_line(e)}); the folder is complete "
              "without it", file=sys.stderr)
        return None
    finally:
        shutil.rmtree(video_root, ignore_errors=True)


def check_folder(folder):
    """Check that ``folder`` is a complete exported folder: every file of
    :data:`FOLDER_FILES`, a ``model.pt`` this spinup reads (weights-only) and a README that
    ``huggingface_hub.ModelCard`` parses with a ``model-index`` result.

    Returns:
        the ``huggingface_hub.ModelCard``.

    Raises:
        ShareError: (code 2) naming what is wrong, or huggingface_hub is not installed.
    """
    from spinup.machinery.serialization_utils import read_model
    if not osp.isdir(folder):
        raise ShareError(f"push: {folder} is not a directory; make one with: python -m "
                         "spinup.run export RUN_DIR OUT")
    missing = [name for name in FOLDER_FILES if not osp.isfile(osp.join(folder, name))]
    if missing:
        raise ShareError(f"push: {folder} is not an exported folder (missing: "
                         f"{', '.join(missing)}); make one with: python -m spinup.run export "
                         "RUN_DIR OUT")
    hub = _hub()
    try:
        card = hub.ModelCard.load(osp.join(folder, "README.md"))
        results = card.data.eval_results or []
    except Exception as e:   # bad YAML header, bad model-index
        raise ShareError(f"push: {folder}/README.md is not a model card ({_first_line(e)}); "
                         "export the run again") from None
    if not any(r.metric_type == "mean_reward" for r in results):
        raise ShareError(f"push: {folder}/README.md has no model-index result (mean_reward); "
                         "export the run again")
    try:
        read_model(osp.join(folder, "model.pt"))
    except ValueError as e:
        raise ShareError(f"push: {e}") from None
    return card


def push(folder, repo_id, private=False, message=None):
    """Upload an exported folder to the Hub model repo ``repo_id`` (created if needed) in
    one commit, so a failure leaves the repo as it was.

    Nothing is sent before the folder and ``repo_id`` are checked; with ``HF_HUB_OFFLINE``
    set, or without a token (``hf auth login`` or ``HF_TOKEN``), it fails at once.

    Args:
        folder (str): a folder written by :func:`export`.
        repo_id (str): ``NAME/REPO`` (or ``REPO``, in the token owner's namespace).
        private (bool): create the repo private (an existing repo keeps its visibility).
        message (str): the commit message.

    Returns:
        str: the URL of the commit.

    Raises:
        ShareError: the folder is incomplete or ``repo_id`` malformed (code 2); offline, no
            token, the Hub unreachable or refusing (code 1, one line of advice).
    """
    check_folder(folder)
    hub = _hub()
    try:
        hub.utils.validate_repo_id(repo_id)
    except Exception as e:
        raise ShareError(f"push: {repo_id!r} is not a Hub repo id ({_first_line(e)}); give "
                         "NAME/REPO, e.g. your-name/ppo-CartPole-v1") from None
    from spinup.utils.test_policy import _env_flag
    if _env_flag("HF_HUB_OFFLINE") or hub.constants.HF_HUB_OFFLINE:
        raise ShareError(f"push: HF_HUB_OFFLINE is set, so nothing was sent; {folder} is "
                         "ready: push it where there is network", code=1)
    if not hub.get_token():
        raise ShareError("push: not logged in to the Hugging Face Hub: run `hf auth login` or "
                         f"set HF_TOKEN (a token with write access); {folder} is ready",
                         code=1)
    try:
        api = hub.HfApi(library_name="spinup")
        api.create_repo(repo_id, private=private, exist_ok=True)
        info = api.upload_folder(folder_path=folder, repo_id=repo_id,
                                 commit_message=message or "spinup agent (spinup.run export)")
    except hub.errors.HfHubHTTPError as e:   # the Hub answered, and said no
        status = getattr(getattr(e, "response", None), "status_code", None)
        if status == 401:
            advice = "the token was refused: run `hf auth login` again or set a valid HF_TOKEN"
        elif status == 403:
            advice = (f"this token may not write to {repo_id}: use a token with write "
                      "access, or a repo in your own namespace")
        else:
            advice = f"nothing was uploaded; {folder} is ready, push it again later"
        raise ShareError(f"push: {_first_line(e)} ({advice})", code=1) from None
    except Exception as e:   # no network, DNS, timeout, proxy
        raise ShareError(f"push: cannot reach the Hub ({_first_line(e)}); no network? "
                         f"{folder} is ready, push it later", code=1) from None
    return getattr(info, "commit_url", None) or str(info)


def _parser(cmd):
    if cmd == "export":
        parser = argparse.ArgumentParser(
            prog="python -m spinup.run export",
            description="Write a trained run as a Hugging Face Hub folder (model, model card, "
                        "results measured now, video). Needs no network.",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        parser.add_argument("run_dir", metavar="DIR", help="the run's output directory")
        parser.add_argument("out", metavar="OUT", help="the folder to write (new or empty)")
        parser.add_argument("--episodes", "-n", type=int, default=MIN_EPISODES,
                            help=f"deterministic test episodes for results.json "
                                 f"(>= {MIN_EPISODES})")
        parser.add_argument("--seed", type=int, default=0,
                            help="reset seed of the first test episode (episode i: seed + i) "
                                 "and of the replay")
        parser.add_argument("--itr", "-i", type=int, default=-1,
                            help="snapshot to export, pyt_save/model{I}.pt (-1: the last model)")
        parser.add_argument("--no_video", action="store_true", help="no replay.mp4")
        return parser
    parser = argparse.ArgumentParser(
        prog="python -m spinup.run push",
        description="Upload a folder made by 'spinup.run export' to a Hugging Face Hub model "
                    "repo, in one commit.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("folder", metavar="OUT", help="a folder written by export")
    parser.add_argument("repo_id", metavar="REPO_ID",
                        help="the Hub repo, e.g. your-name/ppo-CartPole-v1 (created if needed)")
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.add_argument("--message", "-m", default=None, help="the commit message")
    return parser


def main(argv=None, cmd="export"):
    """``python -m spinup.run export|push ...`` (``cmd``); returns the exit code: 0, 2 for
    bad input, 1 when the Hub failed; the reason is printed on one line."""
    parser = _parser(cmd)
    args = parser.parse_args(argv)
    if cmd == "export" and args.itr < -1:
        parser.error(f"--itr {args.itr}: give -1 (the last model) or a snapshot number >= 0")
    try:
        if cmd == "export":
            results = export(args.run_dir, args.out, args.episodes, args.seed,
                             not args.no_video, "last" if args.itr < 0 else args.itr)
            print(f"Exported {args.run_dir} to {args.out}: return {_metric(results)} over "
                  f"{results['episodes']} episodes. Upload it with: python -m spinup.run "
                  f"push {args.out} YOUR_NAME/{results['algorithm']}-{results['env_id']}")
        else:
            url = push(args.folder, args.repo_id, args.private, args.message)
            print(f"Pushed {args.folder} to {args.repo_id}: {url}")
    except ShareError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    except (FileNotFoundError, ValueError, ImportError, RuntimeError) as e:
        print(f"error: {cmd}: {_first_line(e) if str(e).count(chr(10)) else e}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
