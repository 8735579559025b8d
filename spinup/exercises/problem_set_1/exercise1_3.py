"""Exercise 1.3: TD3 Computation.

As starter code you are given the entirety of the TD3 algorithm except for its core
computations: target policy smoothing, the clipped double-Q target, the Q- and policy
losses and the delayed policy update. Find "YOUR CODE HERE" to begin (five small
functions right below). The pseudocode is on the TD3 page of the docs.

Run this file to check the functions and then train::

    python -m spinup.exercises.problem_set_1.exercise1_3 --env HalfCheetah-v5

The functions are checked on random inputs first (seconds). Then TD3 trains with small
networks (hidden sizes [128, 128]), episodes capped at 150 steps, for 10 epochs:
evaluate your code on HalfCheetah-v5, InvertedPendulum-v5 and one other MuJoCo env
of your choosing. ``--use_soln`` runs spinup's TD3 instead of yours. Anecdotally,
within 10 epochs the test score in HalfCheetah should go over 300, and the score in
InvertedPendulum should max out at 150.
"""
import time
from copy import deepcopy

import numpy as np
import torch
from torch.optim import Adam

from spinup.utils.logx import EpochLogger


"""

Exercise 1.3: TD3 computations

"""


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


"""

The rest of TD3 (given: no need to edit below here).

"""


class ReplayBuffer:
    """A simple FIFO experience replay buffer for TD3 agents."""

    def __init__(self, obs_dim, act_dim, size):
        self.obs_buf = np.zeros((size, obs_dim), dtype=np.float32)
        self.obs2_buf = np.zeros((size, obs_dim), dtype=np.float32)
        self.act_buf = np.zeros((size, act_dim), dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done):
        self.obs_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.done_buf[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_batch(self, batch_size=32):
        idxs = np.random.randint(0, self.size, size=batch_size)
        batch = dict(obs=self.obs_buf[idxs], obs2=self.obs2_buf[idxs], act=self.act_buf[idxs],
                     rew=self.rew_buf[idxs], done=self.done_buf[idxs])
        return {k: torch.as_tensor(v, dtype=torch.float32) for k, v in batch.items()}


def td3(env_fn, actor_critic=None, ac_kwargs=dict(), seed=0, steps_per_epoch=4000, epochs=100,
        replay_size=int(1e6), gamma=0.99, polyak=0.995, pi_lr=1e-3, q_lr=1e-3, batch_size=100,
        start_steps=10000, update_after=1000, update_every=50, act_noise=0.1, target_noise=0.2,
        noise_clip=0.5, policy_delay=2, num_test_episodes=10, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=1):
    """TD3 with the computations above; arguments as in ``spinup.td3`` (see its
    docstring). ``actor_critic`` defaults to ``spinup.algos.td3.core.MLPActorCritic``:
    ``pi(obs)`` gives actions in [-1, 1], ``q1(obs, act)`` and ``q2(obs, act)`` give
    [batch] Q-values."""
    if actor_critic is None:
        from spinup.algos.td3.core import MLPActorCritic as actor_critic

    logger = EpochLogger(**logger_kwargs)
    logger.save_config(locals())
    torch.set_num_threads(1)  # small-batch updates are fastest on one thread
    torch.manual_seed(seed)
    np.random.seed(seed)

    env, test_env = env_fn(), env_fn()
    obs_dim = env.observation_space.shape[0]
    act_dim = env.action_space.shape[0]
    # The policy acts in [-1, 1]; the env wants [low, high].
    low, high = env.action_space.low, env.action_space.high
    act_scale, act_bias = (high - low) / 2, (high + low) / 2

    # Create actor-critic module and target networks
    ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
    ac_targ = deepcopy(ac)
    for p in ac_targ.parameters():
        p.requires_grad = False
    q_params = list(ac.q1.parameters()) + list(ac.q2.parameters())

    replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=replay_size)

    def compute_loss_q(data):
        o, a, r, o2, d = data["obs"], data["act"], data["rew"], data["obs2"], data["done"]
        q1 = ac.q1(o, a)
        q2 = ac.q2(o, a)
        with torch.no_grad():
            a2 = target_actions(ac_targ.pi(o2), target_noise, noise_clip)
            backup = bellman_backup(r, d, ac_targ.q1(o2, a2), ac_targ.q2(o2, a2), gamma)
        loss_info = dict(Q1Vals=q1.detach().numpy(), Q2Vals=q2.detach().numpy())
        return q_loss(q1, q2, backup), loss_info

    def compute_loss_pi(data):
        o = data["obs"]
        return pi_loss(ac.q1(o, ac.pi(o)))

    pi_optimizer = Adam(ac.pi.parameters(), lr=pi_lr)
    q_optimizer = Adam(q_params, lr=q_lr)

    def update(data, timer):
        q_optimizer.zero_grad()
        loss_q, loss_info = compute_loss_q(data)
        loss_q.backward()
        q_optimizer.step()
        logger.store(LossQ=loss_q.item(), **loss_info)

        if policy_update_due(timer, policy_delay):
            for p in q_params:  # freeze Q during the policy step
                p.requires_grad = False
            pi_optimizer.zero_grad()
            loss_pi = compute_loss_pi(data)
            loss_pi.backward()
            pi_optimizer.step()
            for p in q_params:
                p.requires_grad = True
            logger.store(LossPi=loss_pi.item())

            with torch.no_grad():  # polyak averaging of the target networks
                for p, p_targ in zip(ac.parameters(), ac_targ.parameters()):
                    p_targ.mul_(polyak)
                    p_targ.add_((1 - polyak) * p)

    def get_action(o, noise_scale):
        with torch.no_grad():
            a = ac.pi(torch.as_tensor(o, dtype=torch.float32)).numpy()
        a += noise_scale * np.random.randn(act_dim)
        return np.clip(a, -1.0, 1.0)

    def test_agent():
        for j in range(num_test_episodes):
            o, _ = test_env.reset()
            done, ep_ret, ep_len = False, 0, 0
            while not (done or (ep_len == max_ep_len)):
                o, r, terminated, truncated, _ = test_env.step(
                    act_bias + act_scale * get_action(o, 0))
                done = terminated or truncated
                ep_ret += r
                ep_len += 1
            logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)

    total_steps = steps_per_epoch * epochs
    start_time = time.time()
    o, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    test_env.reset(seed=seed + 1)
    ep_ret, ep_len = 0, 0
    q_updates = 0  # Q-updates so far, over the whole run: the timer of policy_update_due

    for t in range(total_steps):
        if t >= start_steps:
            a = get_action(o, act_noise)
        else:
            a = np.random.uniform(-1.0, 1.0, size=act_dim)

        o2, r, terminated, truncated, _ = env.step(act_bias + act_scale * a)
        ep_ret += r
        ep_len += 1
        # Only a true terminal state stops the bootstrap (not a time limit).
        replay_buffer.store(o, a, r, o2, float(terminated))
        o = o2

        if terminated or truncated or ep_len == max_ep_len:
            logger.store(EpRet=ep_ret, EpLen=ep_len)
            o, _ = env.reset()
            ep_ret, ep_len = 0, 0

        if t >= update_after and t % update_every == 0:
            for _ in range(update_every):
                update(data=replay_buffer.sample_batch(batch_size), timer=q_updates)
                q_updates += 1

        if (t + 1) % steps_per_epoch == 0:
            epoch = (t + 1) // steps_per_epoch
            test_agent()
            logger.log_tabular("Epoch", epoch)
            logger.log_tabular("EpRet", with_min_and_max=True)
            logger.log_tabular("TestEpRet", with_min_and_max=True)
            logger.log_tabular("EpLen", average_only=True)
            logger.log_tabular("TestEpLen", average_only=True)
            logger.log_tabular("TotalEnvInteracts", t + 1)
            logger.log_tabular("Q1Vals", with_min_and_max=True)
            logger.log_tabular("Q2Vals", with_min_and_max=True)
            logger.log_tabular("LossPi", average_only=True)
            logger.log_tabular("LossQ", average_only=True)
            logger.log_tabular("Time", time.time() - start_time)
            logger.dump_tabular()
    return ac


if __name__ == "__main__":
    from spinup.exercises.problem_set_1.exercise1_3_auxiliary import main
    main(globals())
