"""Batched tasks: classic control written as torch tensor programs, and MuJoCo locomotion
simulated by MuJoCo Warp (:mod:`spinup.envs.mujoco_warp`, ``pip install "spinup[gpu]"``).

Each class steps N copies of one task at once on a CPU or CUDA device and follows
gymnasium 1.x's ``VectorEnv`` interface (same-step autoreset). Importing this package
registers the ids of :data:`TASK_IDS` with gymnasium::

    import gymnasium as gym
    import spinup.envs
    envs = gym.make_vec("spinup/CartPole-v1", num_envs=4096, device="cuda")  # ours
    env = gym.make("spinup/CartPole-v1")  # gymnasium's own single environment
"""
import gymnasium

from spinup.envs.acrobot import Acrobot
from spinup.envs.base import TensorVectorEnv
from spinup.envs.cartpole import CartPole
from spinup.envs.mountain_car import MountainCar, MountainCarContinuous
from spinup.envs.pendulum import Pendulum
from spinup.envs.pixels import atari, atari_vector  # Atari's env_fns (ale-py: an extra)

_CC = "gymnasium.envs.classic_control"
#: id -> (our batched class, gymnasium's single-environment class, time limit in steps)
_TASKS = {
    "spinup/CartPole-v1": (CartPole, f"{_CC}.cartpole:CartPoleEnv", 500),
    "spinup/Acrobot-v1": (Acrobot, f"{_CC}.acrobot:AcrobotEnv", 500),
    "spinup/MountainCar-v0": (MountainCar, f"{_CC}.mountain_car:MountainCarEnv", 200),
    "spinup/MountainCarContinuous-v0": (
        MountainCarContinuous, f"{_CC}.continuous_mountain_car:Continuous_MountainCarEnv", 999),
    "spinup/Pendulum-v1": (Pendulum, f"{_CC}.pendulum:PendulumEnv", 200),
}
_MJ = "gymnasium.envs.mujoco"
#: MuJoCo Warp tasks: (class name in spinup.envs.mujoco_warp, gymnasium's -v5 env, steps).
#: Named, not imported: mujoco-warp is an optional extra, needed only to make one.
_WARP_TASKS = {
    "spinup/HalfCheetah-v5": ("HalfCheetah", f"{_MJ}.half_cheetah_v5:HalfCheetahEnv", 1000),
    "spinup/Hopper-v5": ("Hopper", f"{_MJ}.hopper_v5:HopperEnv", 1000),
    "spinup/Walker2d-v5": ("Walker2d", f"{_MJ}.walker2d_v5:Walker2dEnv", 1000),
    "spinup/Ant-v5": ("Ant", f"{_MJ}.ant_v5:AntEnv", 1000),
    "spinup/Humanoid-v5": ("Humanoid", f"{_MJ}.humanoid_v5:HumanoidEnv", 1000),
}
#: The gymnasium ids of the classic-control tasks.
TASK_IDS = tuple(_TASKS)
#: The gymnasium ids of the MuJoCo Warp tasks.
WARP_TASK_IDS = tuple(_WARP_TASKS)

for _id, (_cls, _single, _steps) in _TASKS.items():
    if _id not in gymnasium.registry:  # importing twice must not re-register
        # by name, not by object: an EnvSpec that names its classes can be saved as JSON
        gymnasium.register(_id, entry_point=_single,
                           vector_entry_point=f"{_cls.__module__}:{_cls.__name__}",
                           max_episode_steps=_steps)
for _id, (_cls, _single, _steps) in _WARP_TASKS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(_id, entry_point=_single,
                           vector_entry_point=f"spinup.envs.mujoco_warp:{_cls}",
                           max_episode_steps=_steps)

__all__ = ["TASK_IDS", "WARP_TASK_IDS", "Acrobot", "atari", "atari_vector", "CartPole", "MountainCar", "MountainCarContinuous",
           "Pendulum", "TensorVectorEnv"]
