"""spinup: Spinning Up in Deep RL, rebuilt on PyTorch and gymnasium 1.x.

Every algorithm is a plain function::

    from spinup import ppo
    import gymnasium as gym
    ppo(lambda: gym.make("CartPole-v1"), epochs=10)

Algorithms are imported lazily (on first attribute access), so ``import spinup``
stays fast and never needs torch, gymnasium or MPI before you use them.
"""
import importlib
import importlib.util
import sys

from spinup.version import __version__

#: Public name -> (module, function) of every algorithm shipped with spinup.
ALGOS = {
    "vpg": ("spinup.algos.vpg.vpg", "vpg"),
    "trpo": ("spinup.algos.trpo.trpo", "trpo"),
    "npg": ("spinup.algos.trpo.trpo", "npg"),
    "ppo": ("spinup.algos.ppo.ppo", "ppo"),
    "ddpg": ("spinup.algos.ddpg.ddpg", "ddpg"),
    "td3": ("spinup.algos.td3.td3", "td3"),
    "sac": ("spinup.algos.sac.sac", "sac"),
    "dqn": ("spinup.algos.dqn.dqn", "dqn"),
    "a2c": ("spinup.algos.a2c.a2c", "a2c"),
    "a3c": ("spinup.algos.a3c.a3c", "a3c"),
}

__all__ = sorted(ALGOS) + ["__version__"]


def __getattr__(name):
    """Import ``spinup.<algo>`` on first use (PEP 562)."""
    if name in ALGOS:
        module, fn = ALGOS[name]
        try:
            value = getattr(importlib.import_module(module), fn)
        except ModuleNotFoundError as e:
            if e.name is not None and e.name.startswith("spinup.algos"):
                raise AttributeError(
                    f"spinup.{name} is not available in this version of spinup") from e
            raise
        globals()[name] = value
        return value
    raise AttributeError(f"module 'spinup' has no attribute {name!r}")


def __dir__():
    return __all__


# ---- MuJoCo's compiler note about gymnasium's own model files ----
# MuJoCo 3.3+ prints "compiler attribute 'settotalmass' is deprecated" each time it compiles
# some of gymnasium's MuJoCo XML files (several times per run: the env is probed, trained
# and tested). Nothing in it is for the user to act on, so spinup drops that one note and
# passes every other MuJoCo warning on as MuJoCo prints it. Installed when mujoco is
# imported, so that `import spinup` does not import it.

def _filter_mujoco_warnings(mujoco):
    if not hasattr(mujoco, "set_mju_user_warning"):   # another module of that name
        return
    previous = mujoco.get_mju_user_warning()

    def warning(msg):
        if "settotalmass" in msg:
            return
        if previous is not None:
            previous(msg)
        else:
            print(f"WARNING: {msg}", flush=True)
    mujoco.set_mju_user_warning(warning)


class _WhenMujocoIsImported:
    """A ``sys.meta_path`` finder that filters MuJoCo's warnings once mujoco has loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "mujoco":
            return None
        sys.meta_path.remove(self)   # find the real module, once
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return None
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _filter_mujoco_warnings(module)
        spec.loader.exec_module = exec_module
        return spec


if "mujoco" in sys.modules:
    _filter_mujoco_warnings(sys.modules["mujoco"])
else:
    sys.meta_path.insert(0, _WhenMujocoIsImported())
