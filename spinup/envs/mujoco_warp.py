"""MuJoCo locomotion tasks simulated by MuJoCo Warp, thousands of copies in one call.

HalfCheetah, Hopper, Walker2d, Ant and Humanoid, each the task gymnasium's ``-v5`` env
defines -- the same model file, frame skip, observation, reward terms, termination, reset
noise and time limit -- but stepped as one batch on a CPU or a CUDA GPU by MuJoCo Warp
(``pip install "spinup[gpu]"``). The simulator's arrays are read and written as torch
tensors that share its memory, so observations, rewards and actions never leave the
device that simulates them.

What differs from gymnasium's envs, and why (the parity tests in
``tests/envs/test_mujoco_warp.py`` measure it):

* the physics is float32 (gymnasium's MuJoCo: float64), so one step from the same state
  and action agrees to about 1e-4 relative, and two trajectories drift apart over many
  steps as any chaotic system's do;
* Humanoid's model asks for the PGS solver, which MuJoCo Warp does not have: it is solved
  with Newton here (the same constraint problem, solved by another method);
* reset noise is drawn from a torch generator (same distribution, other numbers);
* observations are float32.

Each class follows gymnasium 1.x's ``VectorEnv`` with same-step autoreset, like the
classic-control tasks of :mod:`spinup.envs`::

    import gymnasium as gym, spinup.envs
    envs = gym.make_vec("spinup/Ant-v5", num_envs=4096, device="cuda")
"""
import os.path as osp
from typing import ClassVar

import gymnasium
import numpy as np
import torch
from gymnasium.spaces import Box

from spinup.envs.base import TensorVectorEnv

_ASSETS = osp.join(osp.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
#: Room per copy for contacts and constraint rows. Random and trained policies on these
#: tasks stay under 8 contacts and 32 rows (measured with gymnasium's envs); the margin
#: keeps a copy that piles up from dropping contacts.
NCONMAX, NJMAX = 32, 128
#: The friction cones a task may be built with, and MuJoCo's names for them.
CONES = {"pyramidal": "mjCONE_PYRAMIDAL", "elliptic": "mjCONE_ELLIPTIC"}


def _import_warp():
    """MuJoCo Warp's modules, or an ImportError that names the extra to install."""
    try:
        import warp as wp
        # no banner or per-kernel lines in a run's output (warp >= 1.19 has log_level)
        wp.config.log_level = getattr(wp, "LOG_WARNING", 30)
        import mujoco
        import mujoco_warp as mjw
    except ImportError as e:
        raise ImportError(
            f"the MuJoCo Warp tasks (spinup/HalfCheetah-v5, ...) need mujoco-warp: "
            f"pip install \"spinup[gpu]\" ({e})") from None
    return wp, mujoco, mjw


def _warp_device(device):
    """Warp's name for a torch device: 'cpu' or 'cuda:N' (N the current one if unnamed)."""
    if device.type == "cpu":
        return "cpu"
    if device.type == "cuda":
        index = torch.cuda.current_device() if device.index is None else device.index
        return f"cuda:{index}"
    raise ValueError(f"MuJoCo Warp runs on 'cpu' or 'cuda' devices, not {device}")


class MujocoWarpTask(TensorVectorEnv):
    """N copies of a gymnasium ``-v5`` MuJoCo task stepped together by MuJoCo Warp.

    Args:
        num_envs: number of copies N (int >= 1).
        device: torch device (or its name), ``cpu`` or ``cuda[:N]``; the simulation and
            every tensor it returns live there.
        max_episode_steps: time limit in steps (default 1000, as gymnasium registers them).
        render_mode: only ``None``.
        cone: the friction cone, ``"pyramidal"`` (the task's own, as in gymnasium) or
            ``"elliptic"``. The two engines orient a plane contact's friction pyramid
            differently (MuJoCo along the geom, MuJoCo Warp along the world axes), so a
            sliding contact of Ant or Humanoid pushes a little differently here; an
            elliptic cone looks the same from every side and removes that difference.
        cuda_graph: on a CUDA device, record each of the simulator's passes (the
            ``frame_skip`` steps, the restart, the forward pass) as a CUDA graph the first
            time and replay it afterwards: one launch instead of hundreds of small kernels.
            A pass that cannot be recorded runs as plain launches (one warning).

    The simulator's kernels run on torch's current CUDA stream, so torch's writes before a
    step (the actions) and reads after it (observations) are ordered with them.

    Raises:
        ImportError: mujoco-warp is not installed (names ``spinup[gpu]``).
        ValueError: num_envs < 1, a bad max_episode_steps, a render mode, an unknown cone,
            or a device that is neither CPU nor CUDA.

    A subclass sets ``xml_file``, ``frame_skip``, ``ctrl_cost_weight``, the reset noise
    (``reset_noise_scale``, ``qvel_noise``: ``"uniform"`` or ``"normal"``) and writes
    ``_observe``, ``_position`` (what forward progress is measured on) and
    ``_reward_terms``.
    """

    name = "MujocoWarpTask"
    default_max_episode_steps = 1000
    xml_file = ""
    frame_skip = 5
    ctrl_cost_weight = 0.1
    reset_noise_scale = 0.1
    qvel_noise = "uniform"
    needs_contact_forces = False   # cfrc_ext (Ant, Humanoid): one more pass after a step
    solver_override = None         # a mujoco.mjtSolver when Warp lacks the model's solver

    def __init__(self, num_envs=1, device="cpu", max_episode_steps=None, render_mode=None,
                 cone="pyramidal", cuda_graph=True):
        if cone not in CONES:
            raise ValueError(f"{self.name}: cone must be one of {sorted(CONES)}, got {cone!r}")
        wp, mujoco, mjw = _import_warp()
        self._wp, self._mjw = wp, mjw
        device = torch.device(device)
        wdevice = _warp_device(device)
        model = mujoco.MjModel.from_xml_path(osp.join(_ASSETS, self.xml_file))
        if self.solver_override is not None:
            model.opt.solver = self.solver_override
        model.opt.cone = getattr(mujoco.mjtCone, CONES[cone])
        self.mj_model = model
        self.single_action_space = Box(model.actuator_ctrlrange[:, 0].astype(np.float32),
                                       model.actuator_ctrlrange[:, 1].astype(np.float32))
        # the observation's size, from the host model (what _observe will stack)
        self.single_observation_space = Box(-np.inf, np.inf, (self._obs_dim(model),),
                                            np.float32)
        super().__init__(num_envs, device, max_episode_steps, render_mode)
        self.dt = float(model.opt.timestep) * self.frame_skip   # seconds per env step
        with wp.ScopedDevice(wdevice):
            self.model = mjw.put_model(model)
            self.data = mjw.make_data(model, nworld=self.num_envs, nconmax=NCONMAX,
                                      njmax=NJMAX)
        # torch views of the simulator's arrays (shared memory, no copies)
        view = wp.to_torch
        d = self.data
        self.qpos, self.qvel, self.ctrl = view(d.qpos), view(d.qvel), view(d.ctrl)
        self.xpos, self.xipos = view(d.xpos), view(d.xipos)
        self.cinert, self.cvel = view(d.cinert), view(d.cvel)
        self.cfrc_ext, self.qfrc_actuator = view(d.cfrc_ext), view(d.qfrc_actuator)
        self.qacc_warmstart = view(d.qacc_warmstart)
        self.init_qpos = torch.as_tensor(model.qpos0, dtype=torch.float32, device=device)
        self.body_mass = torch.as_tensor(model.body_mass, dtype=torch.float32,
                                         device=device)
        self._reset_mask = torch.zeros(self.num_envs, dtype=torch.bool, device=device)
        self._reset_mask_wp = wp.from_torch(self._reset_mask, dtype=wp.bool)
        self._position_before = None   # (N, k): what _position gave after the last step
        self.cuda_graph = bool(cuda_graph) and device.type == "cuda"
        self._graphs, self._streams = {}, {}

    # -- what each task defines --------------------------------------------------------
    def _obs_dim(self, model):
        raise NotImplementedError

    def _observe(self):
        """The observation of every copy, (N, obs_dim) float32, a new tensor."""
        raise NotImplementedError

    def _position(self):
        """(N, k) positions whose first column's change per second is the forward speed."""
        return self.qpos[:, :1].clone()

    def _reward_terms(self, x_velocity, actions):
        """``(reward (N,), terminated (N,) bool)`` after a step (gymnasium's ``_get_rew``
        and ``is_healthy``)."""
        raise NotImplementedError

    # -- simulation --------------------------------------------------------------------
    def _scope(self):
        """Where Warp launches: the CPU, or torch's current stream on the CUDA device."""
        if self.device.type == "cpu":
            return self._wp.ScopedDevice("cpu")
        stream = torch.cuda.current_stream(self.device)
        if stream.cuda_stream not in self._streams:
            self._streams[stream.cuda_stream] = self._wp.stream_from_torch(stream)
        return self._wp.ScopedStream(self._streams[stream.cuda_stream])

    def _launch(self, key, fn):
        """Run the Warp pass ``fn`` (no torch operations inside): as plain launches, or on
        CUDA as a graph recorded the first time (:attr:`cuda_graph`)."""
        with self._scope():
            if not self.cuda_graph:
                return fn()
            graph = self._graphs.get(key)
            if graph is None:
                try:
                    with self._wp.ScopedCapture() as capture:
                        fn()
                    graph = self._graphs[key] = capture.graph
                except Exception as e:   # a pass the driver cannot record: plain launches
                    import warnings
                    warnings.warn(f"{self.name}: recording the simulator's '{key}' pass as a "
                                  f"CUDA graph failed ({type(e).__name__}: {e}); every pass "
                                  "runs as plain launches", RuntimeWarning, stacklevel=3)
                    self.cuda_graph = False
                    return fn()
            self._wp.capture_launch(graph)

    def _physics(self):
        for _ in range(self.frame_skip):
            self._mjw.step(self.model, self.data)
        if self.needs_contact_forces:
            self._mjw.rne_postconstraint(self.model, self.data)

    def _simulate(self, actions):
        """``frame_skip`` MuJoCo steps of every copy with ``ctrl = actions`` (as
        gymnasium's ``do_simulation``: mj_step n times, then the contact forces)."""
        self.ctrl.copy_(actions)
        self._launch("physics", self._physics)

    def _start(self, mask):
        """Restart the copies where ``mask`` (N,) is True: clear their data (as
        ``mj_resetData``), put ``qpos0`` plus noise in qpos and noise in qvel (each task's
        ``reset_model``), and recompute the derived quantities (``mj_forward``).

        The forward pass runs for every copy (no host sync to ask which ended); for the
        others it only recomputes positions the next step recomputes anyway.
        """
        n, s = self.num_envs, self.reset_noise_scale
        self._reset_mask.copy_(mask)
        self._launch("reset", lambda: self._mjw.reset_data(self.model, self.data,
                                                           reset=self._reset_mask_wp))
        u = torch.rand(n, self.qpos.shape[1], generator=self.rng, device=self.device)
        qpos = self.init_qpos + s * (2 * u - 1)
        if self.qvel_noise == "normal":
            qvel = s * torch.randn(n, self.qvel.shape[1], generator=self.rng,
                                   device=self.device)
        else:
            v = torch.rand(n, self.qvel.shape[1], generator=self.rng, device=self.device)
            qvel = s * (2 * v - 1)
        self.qpos.copy_(torch.where(mask[:, None], qpos, self.qpos))
        self.qvel.copy_(torch.where(mask[:, None], qvel, self.qvel))
        self._launch("forward", lambda: self._mjw.forward(self.model, self.data))

    # -- the VectorEnv interface -------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        """Start new episodes; returns ``(obs, {})``, obs float32 (N, obs_dim).

        Args:
            seed: int seeding the reset-noise generator; ``None`` keeps it going (or seeds
                it from OS entropy the first time).
            options: ``{"reset_mask": bool (N,)}`` restarts only those copies.

        Raises:
            ValueError: a reset_mask of the wrong shape.
        """
        if seed is not None:
            self.rng.manual_seed(int(seed))
        elif not self._seeded:
            self.rng.manual_seed(int(np.random.SeedSequence().entropy % 2**63))
        self._seeded = True
        mask = (options or {}).get("reset_mask")
        if mask is None or self.state is None:
            mask = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        else:
            mask = torch.as_tensor(mask, device=self.device).to(torch.bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"{self.name}: reset_mask must have shape "
                                 f"({self.num_envs},), got {tuple(mask.shape)}")
        obs_before = None if self.state is None else self._observe()
        position_before = self._position_before
        self._start(mask)
        self.elapsed = self.elapsed.masked_fill(mask, 0)
        obs, position = self._observe(), self._position()
        if obs_before is not None:     # copies not restarted keep what they had
            obs = torch.where(mask[:, None], obs, obs_before)
            position = torch.where(mask[:, None], position, position_before)
        self._position_before = position
        self.state = obs               # marks "reset was called" for TensorVectorEnv
        return obs, {}

    def step(self, actions):
        """Advance every copy one env step (``frame_skip`` simulator steps).

        Args:
            actions: (N, act_dim) floats, tensor or array; passed to the actuators
                unclipped, as gymnasium does (MuJoCo clamps them to ``ctrlrange``).

        Returns:
            ``(obs, reward, terminated, truncated, info)`` as torch tensors on the device:
            obs (N, obs_dim) float32, reward (N,) float32, terminated and truncated (N,)
            bool; ``info["final_obs"]`` the observation each copy ended on and
            ``info["_final_obs"]`` which copies ended and were restarted.

        Raises:
            RuntimeError: step before reset. ValueError: actions of the wrong shape.
        """
        if self.state is None:
            raise RuntimeError(f"{self.name}: call reset() before step()")
        actions = torch.as_tensor(actions, device=self.device, dtype=torch.float32)
        if tuple(actions.shape) != self._action_shape:
            raise ValueError(f"{self.name}: actions must have shape {self._action_shape}, "
                             f"got {tuple(actions.shape)}")
        self._simulate(actions)
        position = self._position()
        x_velocity = (position[:, 0] - self._position_before[:, 0]) / self.dt
        final_obs = self._observe()
        reward, terminated = self._reward_terms(x_velocity, actions)
        elapsed = self.elapsed + 1
        truncated = elapsed >= self.max_episode_steps
        done = terminated | truncated
        self._start(done)
        obs = torch.where(done[:, None], self._observe(), final_obs)
        self._position_before = torch.where(done[:, None], self._position(), position)
        self.elapsed = elapsed.masked_fill(done, 0)
        self.state = obs
        info = {"final_obs": final_obs, "_final_obs": done}
        return obs, reward.to(torch.float32), terminated, truncated, info

    def set_state(self, qpos, qvel):
        """Put every copy in the given physical state (as gymnasium's ``set_state``):
        qpos (N, nq), qvel (N, nv). The next step starts from there. For tests and
        demonstrations; an episode's step count is not changed."""
        self.qpos.copy_(torch.as_tensor(qpos, dtype=torch.float32, device=self.device))
        self.qvel.copy_(torch.as_tensor(qvel, dtype=torch.float32, device=self.device))
        self._launch("forward", lambda: self._mjw.forward(self.model, self.data))
        self._position_before = self._position()
        self.state = self._observe()

    def state_dict(self):
        """Clones of what decides the future: positions, velocities, the solver's warm
        start, the last positions, step counts and the generator."""
        d = {"elapsed": self.elapsed.clone(), "rng": self.rng.get_state(),
             "seeded": self._seeded, "started": self.state is not None}
        if self.state is not None:
            d.update(qpos=self.qpos.clone(), qvel=self.qvel.clone(),
                     qacc_warmstart=self.qacc_warmstart.clone(),
                     position_before=self._position_before.clone())
        return d

    def load_state_dict(self, d):
        """Restore a :meth:`state_dict` (the same physics state and random stream)."""
        self.elapsed = d["elapsed"].to(self.device, copy=True)
        self.rng.set_state(d["rng"])
        self._seeded = d["seeded"]
        if d["started"]:
            self.set_state(d["qpos"], d["qvel"])
            self.qacc_warmstart.copy_(d["qacc_warmstart"])
            self._position_before = d["position_before"].to(self.device, copy=True)
        else:
            self.state = None

    def close(self, **kwargs):
        self.closed = True


def _control_cost(weight, actions):
    return weight * (actions ** 2).sum(dim=1)


class HalfCheetah(MujocoWarpTask):
    """HalfCheetah-v5: obs = qpos[1:], qvel (17); reward = forward speed - 0.1 |a|^2;
    never terminates."""

    name = "HalfCheetah"
    xml_file, frame_skip = "half_cheetah.xml", 5
    ctrl_cost_weight, reset_noise_scale, qvel_noise = 0.1, 0.1, "normal"

    def _obs_dim(self, model):
        return model.nq - 1 + model.nv

    def _observe(self):
        return torch.cat([self.qpos[:, 1:], self.qvel], dim=1)

    def _reward_terms(self, x_velocity, actions):
        reward = x_velocity - _control_cost(self.ctrl_cost_weight, actions)
        return reward, torch.zeros_like(reward, dtype=torch.bool)


class _Walker(MujocoWarpTask):
    """Hopper and Walker2d: obs = qpos[1:], clip(qvel, -10, 10); reward = forward speed
    + 1 while healthy - 1e-3 |a|^2; the episode ends when the body leaves its healthy
    height or angle range."""

    frame_skip, ctrl_cost_weight, reset_noise_scale, qvel_noise = 4, 1e-3, 5e-3, "uniform"
    healthy_z = healthy_angle = healthy_state = None   # open intervals (low, high)

    def _obs_dim(self, model):
        return model.nq - 1 + model.nv

    def _observe(self):
        return torch.cat([self.qpos[:, 1:], self.qvel.clamp(-10, 10)], dim=1)

    def _healthy(self):
        z, angle = self.qpos[:, 1], self.qpos[:, 2]
        healthy = (self.healthy_z[0] < z) & (z < self.healthy_z[1])
        healthy &= (self.healthy_angle[0] < angle) & (angle < self.healthy_angle[1])
        if self.healthy_state is not None:   # Hopper: every state entry but x and z
            state = torch.cat([self.qpos, self.qvel], dim=1)[:, 2:]
            low, high = self.healthy_state
            healthy &= ((low < state) & (state < high)).all(dim=1)
        return healthy

    def _reward_terms(self, x_velocity, actions):
        healthy = self._healthy()
        reward = x_velocity + healthy.float() - _control_cost(self.ctrl_cost_weight, actions)
        return reward, ~healthy


class Hopper(_Walker):
    """Hopper-v5: healthy while z > 0.7, |angle| < 0.2 and |state[2:]| < 100 (obs 11)."""

    name = "Hopper"
    xml_file = "hopper.xml"
    healthy_z, healthy_angle, healthy_state = (0.7, float("inf")), (-0.2, 0.2), (-100., 100.)


class Walker2d(_Walker):
    """Walker2d-v5: healthy while 0.8 < z < 2 and |angle| < 1 (obs 17)."""

    name = "Walker2d"
    xml_file = "walker2d_v5.xml"
    healthy_z, healthy_angle = (0.8, 2.0), (-1.0, 1.0)


class Ant(MujocoWarpTask):
    """Ant-v5: obs = qpos[2:], qvel, clip(cfrc_ext[1:], -1, 1) (105); reward = torso's
    forward speed + 1 while healthy - 0.5 |a|^2 - 5e-4 |clip(cfrc_ext)|^2; ends when the
    state is not finite or the torso's z leaves [0.2, 1]."""

    name = "Ant"
    xml_file, frame_skip = "ant.xml", 5
    ctrl_cost_weight, reset_noise_scale, qvel_noise = 0.5, 0.1, "normal"
    needs_contact_forces = True
    contact_cost_weight, healthy_z = 5e-4, (0.2, 1.0)

    def _obs_dim(self, model):
        return model.nq - 2 + model.nv + 6 * (model.nbody - 1)

    def _contact_forces(self):
        return self.cfrc_ext.clamp(-1.0, 1.0)           # (N, nbody, 6)

    def _observe(self):
        return torch.cat([self.qpos[:, 2:], self.qvel,
                          self._contact_forces()[:, 1:].flatten(1)], dim=1)

    def _position(self):
        return self.xpos[:, 1, :2].clone()              # body 1, the torso

    def _reward_terms(self, x_velocity, actions):
        state = torch.cat([self.qpos, self.qvel], dim=1)
        z = self.qpos[:, 2]
        healthy = torch.isfinite(state).all(dim=1) & (self.healthy_z[0] <= z) \
            & (z <= self.healthy_z[1])
        contact_cost = self.contact_cost_weight * (self._contact_forces() ** 2).sum(dim=(1, 2))
        reward = x_velocity + healthy.float() \
            - _control_cost(self.ctrl_cost_weight, actions) - contact_cost
        return reward, ~healthy


class Humanoid(MujocoWarpTask):
    """Humanoid-v5: obs = qpos[2:], qvel, cinert[1:], cvel[1:], qfrc_actuator[6:],
    cfrc_ext[1:] (348); reward = 1.25 x centre-of-mass forward speed + 5 while healthy
    - 0.1 |ctrl|^2 - min(5e-7 |cfrc_ext|^2, 10); ends when z leaves (1, 2).

    Solved with Newton instead of the model's PGS (MuJoCo Warp has no PGS solver).
    """

    name = "Humanoid"
    xml_file, frame_skip = "humanoid.xml", 5
    ctrl_cost_weight, reset_noise_scale, qvel_noise = 0.1, 1e-2, "uniform"
    needs_contact_forces = True
    forward_reward_weight, healthy_reward, contact_cost_weight = 1.25, 5.0, 5e-7
    healthy_z = (1.0, 2.0)

    @property
    def solver_override(self):
        import mujoco
        return mujoco.mjtSolver.mjSOL_NEWTON

    def _obs_dim(self, model):
        nb = model.nbody - 1
        return model.nq - 2 + model.nv + 10 * nb + 6 * nb + (model.nv - 6) + 6 * nb

    def _observe(self):
        return torch.cat([self.qpos[:, 2:], self.qvel, self.cinert[:, 1:].flatten(1),
                          self.cvel[:, 1:].flatten(1), self.qfrc_actuator[:, 6:],
                          self.cfrc_ext[:, 1:].flatten(1)], dim=1)

    def _position(self):     # the centre of mass (gymnasium's mass_center), (N, 2)
        m = self.body_mass
        return (m[None, :, None] * self.xipos).sum(dim=1)[:, :2] / m.sum()

    def _reward_terms(self, x_velocity, actions):
        z = self.qpos[:, 2]
        healthy = (self.healthy_z[0] < z) & (z < self.healthy_z[1])
        contact_cost = (self.contact_cost_weight * (self.cfrc_ext ** 2).sum(dim=(1, 2))
                        ).clamp(max=10.0)
        reward = self.forward_reward_weight * x_velocity \
            + self.healthy_reward * healthy.float() \
            - _control_cost(self.ctrl_cost_weight, self.ctrl) - contact_cost
        return reward, ~healthy
