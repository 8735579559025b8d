"""Exercise 1.3: the computations at the heart of TD3.

Everything TD3 needs is here already (replay buffer, networks, optimizers, the loop over
environment steps) except five small pieces: target policy smoothing, the clipped
double-Q target, the two losses and the timing of the delayed policy update. Each is a
function below marked "YOUR CODE HERE"; the TD3 page of the docs has the pseudocode and
the `[TD3 line N]` numbers the solution refers to.

Running the file checks the five functions on random tensors (a few seconds) and, if
they pass, trains TD3 with them::

    python -m spinup.exercises.problem_set_1.exercise1_3 --env HalfCheetah-v5

The training run is deliberately small: networks with hidden sizes [128, 128], episodes
cut at 150 steps, 10 epochs. Try HalfCheetah-v5, InvertedPendulum-v5 and a MuJoCo task of
your own choice. ``--use_soln`` trains spinup's own TD3 for comparison. As a rough guide
(not a guarantee), after 10 epochs HalfCheetah's test return tends to exceed 300, and
InvertedPendulum tends to reach its ceiling of 150 (one point per step survived).
"""
import time
from copy import deepcopy

import numpy as np
import torch

from spinup.utils import logx


# ------------------------------------------------------------------------------------
# The five holes: fill these in.
# ------------------------------------------------------------------------------------


def target_actions(pi_targ, target_noise, noise_clip):
    """Target policy smoothing.

    Args:
        pi_targ: Tensor [batch, act_dim], the target policy's actions mu_targ(s'),
            in [-1, 1].
        target_noise (float): standard deviation sigma of the smoothing noise.
        noise_clip (float): the noise is clipped to [-noise_clip, noise_clip].

    Returns:
        Tensor [batch, act_dim]: the smoothed target actions a'(s'), in [-1, 1].
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


def bellman_backup(r, d, q1_pi_targ, q2_pi_targ, gamma):
    """Clipped double-Q learning target.

    Args:
        r, d: Tensors [batch], rewards and done flags (1.0 for a terminal state).
        q1_pi_targ, q2_pi_targ: Tensors [batch], the two target Q-networks at
            (s', a'(s')).
        gamma (float): discount factor.

    Returns:
        Tensor [batch]: the target y(r, s', d) both Q-functions regress to.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


def q_loss(q1, q2, backup):
    """
    Args:
        q1, q2: Tensors [batch], Q1(s, a) and Q2(s, a) (with gradients).
        backup: Tensor [batch], the target (no gradient).

    Returns:
        A scalar Tensor: the loss for both Q-functions, the sum of their mean
        squared errors.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


def pi_loss(q1_pi):
    """
    Args:
        q1_pi: Tensor [batch], Q1(s, mu(s)) (with gradients through mu).

    Returns:
        A scalar Tensor whose minimisation improves the policy.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


def policy_update_due(timer, policy_delay):
    """
    Args:
        timer (int): how many Q-updates came before this one, counted over the
            whole run (0, 1, 2, ...), not restarted at each update phase.
        policy_delay (int): how many Q-updates per policy update.

    Returns:
        bool: whether the policy and the target networks are updated after this
        Q-update (the first one of each group of ``policy_delay`` updates).
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


# ------------------------------------------------------------------------------------
# The given part of TD3: nothing to edit below this line.
# ------------------------------------------------------------------------------------


class ReplayBuffer:
    """Fixed-size store of transitions; once full, the oldest row is overwritten.

    Args:
        obs_dim (int), act_dim (int): sizes of one observation and one action.
        size (int): how many transitions it holds.
    """

    FIELDS = ("obs", "act", "rew", "obs2", "done")

    def __init__(self, obs_dim, act_dim, size):
        widths = dict(obs=(obs_dim,), act=(act_dim,), rew=(), obs2=(obs_dim,), done=())
        self.arrays = {key: np.zeros((size,) + widths[key], np.float32) for key in self.FIELDS}
        self.capacity, self.filled, self.cursor = size, 0, 0

    def store(self, obs, act, rew, next_obs, done):
        """Write one transition (``done`` is 1.0 only for a true terminal state)."""
        for key, value in zip(self.FIELDS, (obs, act, rew, next_obs, done)):
            self.arrays[key][self.cursor] = value
        self.cursor = (self.cursor + 1) % self.capacity
        self.filled = min(self.capacity, self.filled + 1)

    def sample_batch(self, batch_size=32):
        """``batch_size`` rows drawn uniformly with replacement, as float32 tensors."""
        rows = np.random.randint(self.filled, size=batch_size)
        return {key: torch.from_numpy(arr[rows]) for key, arr in self.arrays.items()}


def td3(env_fn, actor_critic=None, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99,
        polyak=0.995, pi_lr=1e-3, q_lr=1e-3, batch_size=100, start_steps=10000,
        update_after=1000, update_every=50, act_noise=0.1, target_noise=0.2,
        noise_clip=0.5, policy_delay=2, num_test_episodes=10,
        max_ep_len=1000, logger_kwargs=dict(), save_freq=1):
    """TD3 built on the five functions above; the arguments mean what they mean for
    ``spinup.td3`` (see its docstring). ``actor_critic`` defaults to
    ``spinup.algos.td3.core.MLPActorCritic``, whose ``pi(obs)`` returns actions in [-1, 1]
    and whose ``q1(obs, act)``, ``q2(obs, act)`` return Q-values of shape [batch].
    Returns the trained actor-critic."""
    if actor_critic is None:
        from spinup.algos.td3.core import MLPActorCritic as actor_critic

    epoch_log = logx.EpochLogger(**logger_kwargs)
    epoch_log.save_config(locals())
    torch.set_num_threads(1)  # the batches are small: one thread is quickest
    torch.manual_seed(seed)
    np.random.seed(seed)

    env, eval_env = env_fn(), env_fn()
    n_obs, n_act = env.observation_space.shape[0], env.action_space.shape[0]
    # The networks work in [-1, 1]; map their actions onto the env's [low, high].
    mid = (env.action_space.high + env.action_space.low) / 2
    half_width = (env.action_space.high - env.action_space.low) / 2

    ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
    ac_targ = deepcopy(ac).requires_grad_(False)  # moved only by polyak averaging
    critic_params = [*ac.q1.parameters(), *ac.q2.parameters()]
    pi_opt = torch.optim.Adam(ac.pi.parameters(), lr=pi_lr)
    q_opt = torch.optim.Adam(critic_params, lr=q_lr)
    buffer = ReplayBuffer(n_obs, n_act, replay_size)

    def critic_step(batch):
        q1 = ac.q1(batch["obs"], batch["act"])
        q2 = ac.q2(batch["obs"], batch["act"])
        with torch.no_grad():
            next_act = target_actions(ac_targ.pi(batch["obs2"]), target_noise, noise_clip)
            y = bellman_backup(batch["rew"], batch["done"], ac_targ.q1(batch["obs2"], next_act),
                               ac_targ.q2(batch["obs2"], next_act), gamma)
        loss = q_loss(q1, q2, y)
        q_opt.zero_grad()
        loss.backward()
        q_opt.step()
        epoch_log.store(LossQ=loss.item(), Q1Vals=q1.detach().numpy(),
                        Q2Vals=q2.detach().numpy())

    def actor_step(batch):
        critic_params_frozen(True)  # the policy step must not move the critics
        loss = pi_loss(ac.q1(batch["obs"], ac.pi(batch["obs"])))
        pi_opt.zero_grad()
        loss.backward()
        pi_opt.step()
        critic_params_frozen(False)
        epoch_log.store(LossPi=loss.item())
        with torch.no_grad():  # targ <- polyak * targ + (1 - polyak) * online
            for online, targ in zip(ac.parameters(), ac_targ.parameters()):
                targ.lerp_(online, 1 - polyak)

    def critic_params_frozen(frozen):
        for param in critic_params:
            param.requires_grad_(not frozen)

    def act(obs, noise_scale):
        with torch.no_grad():
            action = ac.pi(torch.as_tensor(obs, dtype=torch.float32)).numpy()
        action = action + noise_scale * np.random.randn(n_act)
        return np.clip(action, -1.0, 1.0)

    def evaluate():
        for _ in range(num_test_episodes):
            obs, _ = eval_env.reset()
            ret, length, over = 0.0, 0, False
            while not over and length < max_ep_len:
                obs, rew, term, trunc, _ = eval_env.step(mid + half_width * act(obs, 0.0))
                ret, length, over = ret + rew, length + 1, term or trunc
            epoch_log.store(TestEpRet=ret, TestEpLen=length)

    start = time.time()
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    eval_env.reset(seed=seed + 1)
    ep_ret, ep_len = 0.0, 0
    q_updates = 0  # Q-updates over the whole run: the timer policy_update_due reads

    for step in range(1, steps_per_epoch * epochs + 1):
        explore = step > start_steps  # before that, uniform random actions
        action = act(obs, act_noise) if explore else np.random.uniform(-1, 1, n_act)
        next_obs, rew, term, trunc, _ = env.step(mid + half_width * action)
        ep_ret, ep_len = ep_ret + rew, ep_len + 1
        # A time limit is not a terminal state: only `term` stops the bootstrap.
        buffer.store(obs, action, rew, next_obs, float(term))
        obs = next_obs
        if term or trunc or ep_len == max_ep_len:
            epoch_log.store(EpRet=ep_ret, EpLen=ep_len)
            (obs, _), ep_ret, ep_len = env.reset(), 0.0, 0

        if step - 1 >= update_after and (step - 1) % update_every == 0:
            for _ in range(update_every):
                batch = buffer.sample_batch(batch_size)
                critic_step(batch)
                if policy_update_due(q_updates, policy_delay):
                    actor_step(batch)
                q_updates += 1

        if step % steps_per_epoch == 0:
            evaluate()
            epoch_log.log_tabular("Epoch", step // steps_per_epoch)
            for key in ("EpRet", "TestEpRet"):
                epoch_log.log_tabular(key, with_min_and_max=True)
            for key in ("EpLen", "TestEpLen"):
                epoch_log.log_tabular(key, average_only=True)
            epoch_log.log_tabular("TotalEnvInteracts", step)
            for key in ("Q1Vals", "Q2Vals"):
                epoch_log.log_tabular(key, with_min_and_max=True)
            for key in ("LossPi", "LossQ"):
                epoch_log.log_tabular(key, average_only=True)
            epoch_log.log_tabular("Time", time.time() - start)
            epoch_log.dump_tabular()
    return ac


if __name__ == "__main__":
    from spinup.exercises.problem_set_1.exercise1_3_auxiliary import main
    main(globals())
