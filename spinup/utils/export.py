"""A trained run as a folder for the Hugging Face Hub, and that folder uploaded.

``python -m spinup.run export DIR OUT`` writes OUT with what someone else needs to use, judge
and reproduce the agent of run DIR:

===================  ==========================================================================
``model.pt``         the saved actor-critic, as the run saved it (weights and how to rebuild
                     the network; loaded weights-only, no pickled code)
``vars.json``        the environment's gymnasium spec (``test_policy`` makes the env from it)
``config.json``      the run's arguments; ``provenance.json`` what produced its numbers
``progress.txt``     the training table
``results.json``     mean and std of the return over N deterministic test episodes, measured
                     at export with seeds ``seed, seed+1, ...``
``replay.mp4``       one deterministic episode (left out with ``--no_video``, or when the env
                     cannot draw)
``README.md``        a model card: the Hub's metadata (``model-index`` with the result), what
                     was trained, and how to load it
===================  ==========================================================================

``python -m spinup.run push OUT REPO_ID`` uploads such a folder in one commit
(``huggingface_hub.upload_folder``). ``test_policy`` and :func:`load_policy_and_env` read the
folder, a downloaded copy, or ``hf://REPO_ID`` (``hf://REPO_ID@REVISION``) directly.
"""
import argparse
import datetime
import json
import os
import os.path as osp
import shutil
import sys
import tempfile

import numpy as np

#: The files every exported folder has (``replay.mp4`` may be missing).
FOLDER_FILES = ("model.pt", "vars.json", "config.json", "provenance.json", "progress.txt",
                "results.json", "README.md")


class ShareError(Exception):
    """Export or push refused: one line, exit code 2 (bad input) or 1 (the Hub failed)."""

    def __init__(self, message, code=2):
        super().__init__(message)
        self.code = code


def _hub():
    try:
        import huggingface_hub
    except ImportError:
        raise ShareError('the Hugging Face Hub needs the huggingface_hub package; install it '
                         'with: pip install "spinup[hub]" (from a clone: pip install -e '
                         '".[hub]")') from None
    return huggingface_hub


def evaluate(folder, episodes=10, seed=0):
    """Mean and std of the return of the deterministic policy in ``folder`` (a run or an
    exported folder) over ``episodes`` episodes, episode ``i`` reset with seed ``seed + i``.

    Returns:
        dict: ``mean_reward``, ``std_reward``, ``episodes``, ``seeds``, ``returns``,
        ``lengths``.

    Raises:
        FileNotFoundError, ValueError, ImportError: as :func:`load_policy_and_env`;
        RuntimeError: the run recorded no environment.
    """
    import contextlib
    import io

    from spinup.utils.test_policy import ENV_NOT_FOUND, _clipped, load_policy_and_env
    with contextlib.redirect_stdout(io.StringIO()):   # not its "Loading from ..." line
        env, get_action = load_policy_and_env(folder, deterministic=True)
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
            "episodes": episodes, "seeds": [seed, seed + episodes - 1],
            "returns": returns, "lengths": lengths}


def _card(config, results, env_id, algo, has_video):
    """The model card (``huggingface_hub.ModelCard``) of an exported run."""
    hub = _hub()
    value = f"{results['mean_reward']:.2f} +/- {results['std_reward']:.2f}"
    data = hub.ModelCardData(
        library_name="spinup", model_name=f"{algo}-{env_id}",
        tags=["reinforcement-learning", "deep-reinforcement-learning", "spinup", algo, env_id],
        eval_results=[hub.EvalResult(
            task_type="reinforcement-learning", task_name="reinforcement-learning",
            dataset_type=env_id, dataset_name=env_id, metric_type="mean_reward",
            metric_name="mean_reward", metric_value=value)])
    settings = {k: v for k, v in config.items()
                if k not in ("logger_kwargs", "env_fn", "exp_name", "_algorithm")
                and not isinstance(v, dict)}
    rows = "\n".join(f"| `{k}` | `{json.dumps(v)}` |" for k, v in settings.items())
    hidden = (config.get("ac_kwargs") or {}).get("hidden_sizes")
    video = ("The file `replay.mp4` shows one episode of the deterministic policy."
             if has_video else "No video was recorded for this agent.")
    body = f"""
# {algo.upper()} on {env_id}

An agent trained by `{algo}` of spinup (a PyTorch rebuild of OpenAI's Spinning Up in Deep
RL) on the gymnasium task `{env_id}`.

**Result:** {value} (mean +/- std of the return over {results['episodes']} episodes of the
deterministic policy, reset with seeds {results['seeds'][0]} to {results['seeds'][1]},
measured when the folder was exported; `results.json` has each episode).
{video}

## Use it

With spinup installed (and `pip install "spinup[hub]"` for the Hub); `REPO_ID` is this
repository's id:

```bash
python -m spinup.run test_policy hf://REPO_ID -n 10 -d     # downloads this folder
python -m spinup.run test_policy path/to/this/folder -n 10 -d
```

```python
from spinup.utils.test_policy import load_policy_and_env
env, get_action = load_policy_and_env("hf://REPO_ID", deterministic=True)
obs, _ = env.reset(seed=0)
action = get_action(obs)
```

`model.pt` is read weights-only: loading it rebuilds spinup's own network classes and runs
no code from the file.

## How it was trained

`config.json` has every argument of the run and `provenance.json` the versions and machine
that produced it; `progress.txt` is the training table, one row per epoch (plot it with
`python -m spinup.run plot path/to/this/folder`).{f" Hidden layers: `{hidden}`." if hidden else ""}

| argument | value |
|---|---|
{rows}
"""
    return hub.ModelCard(f"---\n{data.to_yaml()}\n---\n{body}")


def _run_facts(run_dir):
    """``(config, env_id, algorithm)`` of a run directory (ShareError if it is none)."""
    from spinup.machinery.run_dir import saved_env_id
    from spinup.utils.test_policy import _model_path
    try:
        _model_path(run_dir, "last")
    except FileNotFoundError as e:
        raise ShareError(f"export: {e}") from None
    try:
        with open(osp.join(run_dir, "config.json")) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise ShareError(f"export: {run_dir} has no readable config.json ({e})") from None
    env_id = saved_env_id(config)
    if env_id is None:
        with open(osp.join(run_dir, "vars.json")) as f:
            spec = json.load(f).get("env_spec")
        env_id = json.loads(spec)["id"] if spec else None
    if env_id is None:
        raise ShareError(f"export: {run_dir} records no gymnasium env id, so the agent could "
                         "not be evaluated or loaded elsewhere")
    return config, env_id, config.get("_algorithm", "agent")


def export(run_dir, out, episodes=10, seed=0, video=True):
    """Write the Hub folder of ``run_dir`` to ``out`` (see the module docstring).

    The folder is built next to ``out`` and renamed into place at the end, so ``out`` is
    either complete or absent.

    Args:
        run_dir (str): a run's output directory (its last saved model is exported).
        out (str): the folder to create (absent, or an empty directory).
        episodes (int): test episodes for ``results.json`` (>= 10).
        seed (int): the first test episode's reset seed.
        video (bool): record ``replay.mp4``.

    Returns:
        dict: the contents of ``results.json``.

    Raises:
        ShareError: ``out`` is not empty, ``run_dir`` is not a run with a saved model and an
            env id, ``episodes`` < 10, or huggingface_hub is missing.
    """
    from spinup.utils.test_policy import _model_path
    if episodes < 10:
        raise ShareError(f"export: --episodes {episodes}: give at least 10 (the result on the "
                         "model card is their mean and std)")
    if osp.exists(out) and not (osp.isdir(out) and not os.listdir(out)):
        raise ShareError(f"export: {out} exists and is not an empty directory; give a new "
                         "folder")
    _hub()
    config, env_id, algo = _run_facts(run_dir)
    parent = osp.dirname(osp.abspath(out))
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".export-", dir=parent)
    try:
        shutil.copyfile(_model_path(run_dir, "last"), osp.join(work, "model.pt"))
        for name in ("vars.json", "config.json", "provenance.json", "progress.txt"):
            if osp.exists(osp.join(run_dir, name)):
                shutil.copyfile(osp.join(run_dir, name), osp.join(work, name))
        results = evaluate(work, episodes, seed)
        from spinup.version import __version__
        results = dict(env_id=env_id, algorithm=algo, deterministic=True, **results,
                       date=datetime.date.today().isoformat(), spinup=__version__)
        with open(osp.join(work, "results.json"), "w") as f:
            json.dump(results, f, indent=2)
        has_video = video and _record_replay(work)
        _card(config, results, env_id, algo, has_video).save(osp.join(work, "README.md"))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(work, 0o777 & ~umask)   # mkdtemp made it private
        if osp.isdir(out):
            os.rmdir(out)
        os.replace(work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def _record_replay(folder):
    """Record one deterministic episode to ``folder/replay.mp4``; False (with a note) when
    the env cannot draw or the video packages are missing."""
    import contextlib
    import io

    from spinup.utils import test_policy
    video_root = tempfile.mkdtemp(prefix=".video-", dir=folder)
    video_dir = osp.join(video_root, "episode")   # new: RecordVideo warns about a used one
    try:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = test_policy.main([folder, "--video", video_dir, "-n", "1", "-d",
                                     "--no_track"])
        videos = sorted(f for f in os.listdir(video_dir) if f.endswith(".mp4"))
        if code != 0 or not videos:
            reason = err.getvalue().strip().splitlines()
            print(f"export: note: no replay.mp4 ({reason[-1] if reason else 'no video'})")
            return False
        os.replace(osp.join(video_dir, videos[0]), osp.join(folder, "replay.mp4"))
        return True
    finally:
        shutil.rmtree(video_root, ignore_errors=True)


def check_folder(folder):
    """ShareError unless ``folder`` is a complete exported folder whose README is a model
    card with a ``model-index`` result."""
    missing = [name for name in FOLDER_FILES if not osp.isfile(osp.join(folder, name))]
    if missing:
        raise ShareError(f"push: {folder} is not an exported folder (missing: "
                         f"{', '.join(missing)}); make one with: python -m spinup.run export "
                         "RUN_DIR OUT")
    card = _hub().ModelCard.load(osp.join(folder, "README.md"))
    if not card.data.eval_results:
        raise ShareError(f"push: {folder}/README.md has no model-index result; export the "
                         "run again")


def push(folder, repo_id, private=False, message=None):
    """Upload an exported folder to the Hub repo ``repo_id`` (created if needed) in one
    commit; returns the commit's URL.

    Raises:
        ShareError: the folder is incomplete (code 2), or the Hub cannot be reached, the
            token is missing or refused (code 1, one line of advice).
    """
    check_folder(folder)
    hub = _hub()
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on"):
        raise ShareError(f"push: HF_HUB_OFFLINE is set, so nothing was uploaded; {folder} is "
                         "ready: push it from a machine with network", code=1)
    try:
        api = hub.HfApi()
        api.create_repo(repo_id, private=private, exist_ok=True)
        info = api.upload_folder(folder_path=folder, repo_id=repo_id,
                                 commit_message=message or f"spinup agent from {folder}")
    except Exception as e:   # the Hub's errors: no token, no network, refused
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        login = "not logged in" in text.lower() or "token" in text.lower() or "401" in text
        advice = ("log in with `hf auth login` or set HF_TOKEN" if login else
                  "check the network and the repo id; the folder is ready, push it later")
        raise ShareError(f"push: {type(e).__name__}: {text} ({advice})", code=1) from None
    return getattr(info, "commit_url", str(info))


def _parser(cmd):
    if cmd == "export":
        parser = argparse.ArgumentParser(
            prog="python -m spinup.run export",
            description="Write a trained run as a Hugging Face Hub folder (model, model card, "
                        "results, video).",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        parser.add_argument("run_dir", help="the run's output directory")
        parser.add_argument("out", help="the folder to write (new or empty)")
        parser.add_argument("--episodes", "-n", type=int, default=10,
                            help="deterministic test episodes for results.json (>= 10)")
        parser.add_argument("--seed", type=int, default=0,
                            help="reset seed of the first test episode")
        parser.add_argument("--no_video", action="store_true", help="no replay.mp4")
        return parser
    parser = argparse.ArgumentParser(
        prog="python -m spinup.run push",
        description="Upload an exported folder to a Hugging Face Hub model repo.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("folder", help="a folder written by export")
    parser.add_argument("repo_id", help="the Hub repo, e.g. your-name/ppo-CartPole-v1")
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.add_argument("--message", default=None, help="the commit message")
    return parser


def main(argv=None, cmd="export"):
    """``python -m spinup.run export|push ...``; returns the exit code (0, 1 when the Hub
    failed, 2 for bad input), the reason in one line."""
    args = _parser(cmd).parse_args(argv)
    try:
        if cmd == "export":
            results = export(args.run_dir, args.out, args.episodes, args.seed,
                             not args.no_video)
            print(f"Exported {args.run_dir} to {args.out}: mean return "
                  f"{results['mean_reward']:.2f} +/- {results['std_reward']:.2f} over "
                  f"{results['episodes']} episodes. Upload it with: python -m spinup.run "
                  f"push {args.out} YOUR_NAME/{results['algorithm']}-{results['env_id']}")
        else:
            url = push(args.folder, args.repo_id, args.private, args.message)
            print(f"Pushed {args.folder} to {args.repo_id}: {url}")
    except ShareError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    except (FileNotFoundError, ValueError, ImportError, RuntimeError) as e:
        print(f"error: {cmd}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
