"""Load a trained policy and watch it act (spec: "Experiment Outputs").

    python -m spinup.run test_policy path/to/output_dir [-l L] [-n N] [-nr] [-i I] [-d]

Models are loaded with ``torch.load(..., weights_only=True)``: no code is
unpickled. The actor-critic is rebuilt from its class's dotted path, its
``ac_kwargs`` and the saved observation/action spaces, then given the saved
``state_dict``; the environment is rebuilt from ``vars.json``.
"""
import argparse
import json
import os
import os.path as osp
import re
import sys
import time

import numpy as np

from spinup.utils.logx import MODEL_FORMAT_VERSION, EpochLogger

ENV_NOT_FOUND = ("Environment not found!\n\n It looks like the environment wasn't saved, "
                 "and we can't run the agent in it. :(\n\n Check out the docs page on "
                 "Experiment Outputs for how to handle this situation: build the env "
                 "yourself and call\n   env, get_action = load_policy_and_env(fpath)  # env is None\n"
                 "   run_policy(your_env, get_action)")


def _snapshot_suffix(fpath, itr):
    """``''`` for the last snapshot (``model.pt``), else ``str(itr)``."""
    save_dir = osp.join(fpath, "pyt_save")
    if not osp.isdir(save_dir):
        raise FileNotFoundError(f"no saved model in {fpath!r} (expected {save_dir}/model.pt); "
                                "is this the output directory of a spinup run?")
    if itr != "last":
        if not osp.exists(osp.join(save_dir, f"model{itr}.pt")):
            raise FileNotFoundError(f"no snapshot {itr} in {save_dir}")
        return str(itr)
    if osp.exists(osp.join(save_dir, "model.pt")):
        return ""
    saves = [int(m.group(1)) for m in (re.fullmatch(r"model(\d+)\.pt", x)
                                       for x in os.listdir(save_dir)) if m]
    if not saves:
        raise FileNotFoundError(f"no model*.pt in {save_dir}")
    return str(max(saves))


def _build_space(desc):
    import gymnasium as gym
    if desc is None:
        return None
    if desc["type"] == "Box":
        return gym.spaces.Box(low=desc["low"].numpy(), high=desc["high"].numpy(),
                              dtype=np.dtype(desc["dtype"]))
    if desc["type"] == "Discrete":
        return gym.spaces.Discrete(desc["n"], start=desc.get("start", 0))
    raise ValueError(f"cannot rebuild a {desc['type']} space from a saved model")


def _undotted(kwargs):
    """Inverse of the saver's ``{'__dotted__': name}`` encoding of classes/functions."""
    from spinup.utils.serialization_utils import import_dotted
    if isinstance(kwargs, dict):
        if set(kwargs) == {"__dotted__"}:
            return import_dotted(kwargs["__dotted__"])
        return {k: _undotted(v) for k, v in kwargs.items()}
    if isinstance(kwargs, list):
        return [_undotted(v) for v in kwargs]
    return kwargs


def load_pytorch_policy(fpath, itr="last", deterministic=False):
    """Rebuild the saved actor-critic of run ``fpath`` and return ``get_action``.

    Args:
        fpath (str): the run's output directory.
        itr: ``'last'`` or the int of a snapshot saved with ``save_state(..., itr)``.
        deterministic (bool): ask the policy for its deterministic action (the
            Gaussian mean / argmax; SAC's mean action through the tanh).

    Returns:
        ``get_action(obs) -> action`` (numpy in, numpy out).

    Raises:
        FileNotFoundError: no saved model. ImportError: the actor-critic class
        cannot be imported (e.g. it was defined in a script's ``__main__``).
    """
    import torch
    from spinup.utils.serialization_utils import import_dotted
    suffix = _snapshot_suffix(fpath, itr)
    fname = osp.join(fpath, "pyt_save", "model" + suffix + ".pt")
    print("\n\nLoading from %s.\n\n" % fname)
    try:
        saved = torch.load(fname, weights_only=True)
    except Exception as e:  # truncated, corrupted, or not written by spinup
        raise ValueError(f"{fname} is corrupted or is not a spinup model "
                         f"({type(e).__name__})") from None
    if not isinstance(saved, dict):
        raise ValueError(f"{fname} is not a spinup model")
    if saved.get("format_version") != MODEL_FORMAT_VERSION:
        raise ValueError(f"{fname} has model format {saved.get('format_version')}, this spinup "
                         f"reads format {MODEL_FORMAT_VERSION}")
    try:
        ac_class = import_dotted(saved["ac_class"])
    except ImportError as e:
        raise ImportError(f"cannot import the actor-critic class {saved['ac_class']!r} to rebuild "
                          f"the policy; make it importable, or load the weights yourself: "
                          f"torch.load({fname!r}, weights_only=True)['state_dict']") from e
    ac = ac_class(_build_space(saved["observation_space"]), _build_space(saved["action_space"]),
                  **_undotted(saved["ac_kwargs"]))
    ac.load_state_dict(saved["state_dict"])
    ac.eval()

    def get_action(o):
        with torch.no_grad():
            return ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic=deterministic)
    get_action.ac = ac
    return get_action


def load_env(fpath, itr="last", render_mode=None):
    """Rebuild the run's environment from ``vars.json``; ``None`` if none was saved."""
    import gymnasium as gym
    fname = osp.join(fpath, "vars.json" if itr == "last" else f"vars{itr}.json")
    if not osp.exists(fname):
        fname = osp.join(fpath, "vars.json")
    if not osp.exists(fname):
        return None
    with open(fname) as f:
        spec_json = json.load(f).get("env_spec")
    if not spec_json:
        return None
    spec = gym.envs.registration.EnvSpec.from_json(spec_json)
    return gym.make(spec, render_mode=render_mode) if render_mode else gym.make(spec)


def load_policy_and_env(fpath, itr="last", deterministic=False, render_mode=None):
    """Load a policy from save, along with RL env.

    Args:
        fpath (str): output directory of a run.
        itr: ``'last'`` (default) or the snapshot number.
        deterministic (bool): use the deterministic action (see :func:`load_pytorch_policy`).
        render_mode (str): passed to ``gymnasium.make`` (e.g. ``'human'``).

    Returns:
        ``(env, get_action)``; ``env`` is ``None`` when no environment was saved.
    """
    get_action = load_pytorch_policy(fpath, itr, deterministic)
    env = load_env(fpath, itr, render_mode)
    return env, get_action


def run_policy(env, get_action, max_ep_len=None, num_episodes=100, render=True):
    """Run ``get_action`` in ``env`` for ``num_episodes`` and log EpRet/EpLen.

    Actions for a ``Box`` action space are clipped to its bounds (a Gaussian
    policy's sample may leave them). ``max_ep_len`` of ``None`` or 0 means no
    limit beyond the env's own time limit.

    Raises:
        RuntimeError: ``env`` is ``None`` (the spec's "Environment not found!").
    """
    if env is None:
        raise RuntimeError(ENV_NOT_FOUND)
    logger = EpochLogger()
    is_box = type(env.action_space).__name__ == "Box"
    o, _ = env.reset()
    ep_ret, ep_len, n = 0, 0, 0
    while n < num_episodes:
        if render and env.render_mode == "human":
            env.render()
            time.sleep(1e-3)
        a = get_action(o)
        if is_box:
            a = np.clip(a, env.action_space.low, env.action_space.high)
        o, r, terminated, truncated, _ = env.step(a)
        ep_ret += r
        ep_len += 1
        if terminated or truncated or (max_ep_len and ep_len == max_ep_len):
            logger.store(EpRet=ep_ret, EpLen=ep_len)
            print("Episode %d \t EpRet %.3f \t EpLen %d" % (n, ep_ret, ep_len))
            o, _ = env.reset()
            ep_ret, ep_len = 0, 0
            n += 1
    logger.log_tabular("EpRet", with_min_and_max=True)
    logger.log_tabular("EpLen", average_only=True)
    logger.dump_tabular()
    return logger


def main(argv=None):
    """``python -m spinup.run test_policy``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m spinup.run test_policy",
                                     description="Run a trained spinup policy.")
    parser.add_argument("fpath", type=str, help="output directory of a run")
    parser.add_argument("--len", "-l", type=int, default=0,
                        help="max episode length (0: only the env's own limit)")
    parser.add_argument("--episodes", "-n", type=int, default=100)
    parser.add_argument("--norender", "-nr", action="store_true",
                        help="do not render (no display needed)")
    parser.add_argument("--itr", "-i", type=int, default=-1,
                        help="snapshot to load (-1: the last)")
    parser.add_argument("--deterministic", "-d", action="store_true",
                        help="use the deterministic action (SAC: the mean action)")
    args = parser.parse_args(argv)
    itr = args.itr if args.itr >= 0 else "last"
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    render_mode = None if args.norender else "human"
    try:
        try:
            env, get_action = load_policy_and_env(args.fpath, itr, args.deterministic,
                                                  render_mode)
        except Exception as e:
            if render_mode is None or isinstance(e, (FileNotFoundError, ImportError, ValueError)):
                raise
            print("Rendering is not available here (%s); running without it. Use -nr to "
                  "silence this." % e, file=sys.stderr)
            env, get_action = load_policy_and_env(args.fpath, itr, args.deterministic)
        run_policy(env, get_action, args.len, args.episodes, not args.norender)
    except (FileNotFoundError, ImportError, ValueError, RuntimeError) as e:
        print(f"test_policy: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
