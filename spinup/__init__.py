"""spinup: Spinning Up in Deep RL, rebuilt on PyTorch and gymnasium 1.x.

Every algorithm is a plain function::

    from spinup import ppo
    import gymnasium as gym
    ppo(lambda: gym.make("CartPole-v1"), epochs=10)

Algorithms are imported lazily (on first attribute access), so ``import spinup``
stays fast and never needs torch, gymnasium or MPI before you use them.
"""
import importlib

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
