"""spinup.machinery.arg_checks: the rules, and the algorithms' use of them from Python."""
import inspect
import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import spinup
from spinup.machinery import arg_checks as ac
from spinup.machinery import env_checks
from spinup.machinery.arg_checks import check_args, check_cli
from spinup.machinery.env_checks import check_spaces

ALGOS = sorted(spinup.ALGOS)


# ---- The rules ----

def _verdict(rule, value, config=None, procs=1, default_model=True):
    ctx = ac._Context(config or {}, procs, default_model)
    try:
        rule.check("algo", "x", value, ctx)
    except TypeError:
        return "type"
    except ValueError:
        return "value"
    return "ok"


@pytest.mark.parametrize("rule, value, verdict", [
    (ac.positive_int, 1, "ok"), (ac.positive_int, np.int64(3), "ok"),
    (ac.positive_int, 0, "value"), (ac.positive_int, -1, "value"),
    (ac.positive_int, 2.0, "type"), (ac.positive_int, True, "type"),
    (ac.positive_int, "4", "type"),
    (ac.nonneg_int, 0, "ok"), (ac.nonneg_int, -1, "value"),
    (ac.unit_interval, 0, "ok"), (ac.unit_interval, 1, "ok"), (ac.unit_interval, 0.5, "ok"),
    (ac.unit_interval, 1.0001, "value"), (ac.unit_interval, math.nan, "value"),
    (ac.unit_interval, "0.9", "type"), (ac.unit_interval, False, "type"),
    (ac.in_range(0, 1, low_open=True), 0.0, "value"),
    (ac.in_range(0, 1, low_open=True), 1.0, "ok"),
    (ac.in_range(0, 1, low_open=True, high_open=True), 1.0, "value"),
    (ac.positive, 1e-9, "ok"), (ac.positive, 0.0, "value"), (ac.positive, math.inf, "value"),
    (ac.nonneg, 0.0, "ok"), (ac.nonneg, -1e-9, "value"),
    (ac.in_range(), -math.inf, "value"), (ac.in_range(), -3.5, "ok"),
    (ac.optional(ac.nonneg), None, "ok"), (ac.optional(ac.nonneg), -1.0, "value"),
    (ac.optional(ac.nonneg), "x", "type"),
    (ac.hidden_sizes, [64, 64], "ok"), (ac.hidden_sizes, (32,), "ok"), (ac.hidden_sizes, [], "ok"),
    (ac.hidden_sizes, 64, "type"), (ac.hidden_sizes, "sixtyfour", "type"),
    (ac.hidden_sizes, [64, 2.5], "type"), (ac.hidden_sizes, [64, -1], "value"),
    (ac.hidden_sizes, [0], "value"),
    (ac.activation, torch.nn.ReLU, "ok"), (ac.activation, torch.nn.Tanh, "ok"),
    (ac.activation, "relu", "type"), (ac.activation, torch.nn.ReLU(), "type"),
    (ac.activation, torch.relu, "type"), (ac.activation, int, "type"),
    (ac.one_of("trpo", "npg"), "npg", "ok"), (ac.one_of("trpo", "npg"), "ppo", "value"),
    (ac.one_of("trpo", "npg"), 3, "type"),
    (ac.boolean, True, "ok"), (ac.boolean, 1, "type"),
    (ac.is_callable, len, "ok"), (ac.is_callable, "CartPole-v1", "type"),
    (ac.a_dict, {}, "ok"), (ac.a_dict, None, "type"),
])
def test_rule_verdicts(rule, value, verdict):
    assert _verdict(rule, value) == verdict


def test_steps_over_procs_and_single_process_read_the_process_count():
    rule = ac.steps_over_procs()
    assert _verdict(rule, 4000, procs=4) == "ok"
    assert _verdict(rule, 4001, procs=4) == "value"
    assert _verdict(rule, 2, procs=4) == "value"
    blocks = ac.steps_over_procs("n_steps")
    assert _verdict(blocks, 40, config=dict(n_steps=20), procs=2) == "ok"
    assert _verdict(blocks, 60, config=dict(n_steps=20), procs=2) == "value"
    one = ac.single_process("reason")
    assert _verdict(one, 1) == "ok" and _verdict(one, 2) == "value"


def test_model_kwargs_are_checked_only_for_the_default_actor_critic():
    rule = ac.mlp_ac_kwargs
    assert _verdict(rule, dict(hidden_sizes=64)) == "type"
    assert _verdict(rule, dict(hidden_sizes=64), default_model=False) == "ok"
    assert _verdict(rule, dict(activation="relu")) == "type"
    assert _verdict(rule, dict(something_else=1)) == "ok"
    assert _verdict(rule, [64]) == "type"


def test_message_is_one_line_naming_algorithm_argument_value_and_what_is_allowed():
    with pytest.raises(ValueError) as info:
        ac.unit_interval.check("ppo", "gamma", 1.5, ac._Context({}, 1, True))
    assert str(info.value) == "ppo: gamma=1.5 is not allowed: a number with 0 <= gamma <= 1"


@pytest.mark.parametrize("name", ALGOS)
def test_every_declared_rule_names_an_argument(name):
    fn = getattr(spinup, name)
    rules, spaces = ac._rules_of(fn)
    params = set(inspect.signature(fn).parameters)
    module_fn_params = set(inspect.signature(getattr(inspect.getmodule(fn), name)).parameters)
    assert rules and spaces and set(spaces) == {"obs", "act"}
    extra = set(rules) - params - {"num_cpu"}
    assert extra <= {"algo"} and extra <= module_fn_params | {"algo"}, extra
    # every int and float argument has a rule: the algorithm's own or a common one
    for pname, p in inspect.signature(fn).parameters.items():
        if isinstance(p.default, (int, float)) and pname not in {**rules, **ac.COMMON_RULES}:
            pytest.fail(f"{name}: argument {pname} has no rule")


# ---- The algorithms from Python: same lines as the CLI, nothing written ----

API_CASES = [
    ("ppo", "CartPole-v1", dict(epochs=0), ValueError,
     "ppo: epochs=0 is not allowed: an int with epochs >= 1"),
    ("ppo", "CartPole-v1", dict(epochs=-1), ValueError,
     "ppo: epochs=-1 is not allowed: an int with epochs >= 1"),
    ("ppo", "CartPole-v1", dict(gamma=1.5), ValueError,
     "ppo: gamma=1.5 is not allowed: a number with 0 <= gamma <= 1"),
    ("ppo", "CartPole-v1", dict(ac_kwargs=dict(hidden_sizes=64)), TypeError,
     "ppo: ac_kwargs['hidden_sizes']=64 is not allowed: a list or tuple of ints >= 1, "
     "e.g. [64, 64]"),
    ("ppo", "CartPole-v1", dict(ac_kwargs=dict(hidden_sizes="sixtyfour")), TypeError,
     "ppo: ac_kwargs['hidden_sizes']='sixtyfour' is not allowed: a list or tuple of ints "
     ">= 1, e.g. [64, 64]"),
    ("ppo", "CartPole-v1", dict(ac_kwargs=dict(hidden_sizes=[64, -1])), ValueError,
     "ppo: ac_kwargs['hidden_sizes']=[64, -1] is not allowed: a list or tuple of ints >= 1, "
     "e.g. [64, 64]"),
    ("ppo", "CartPole-v1", dict(ac_kwargs=dict(activation="relu")), TypeError,
     "ppo: ac_kwargs['activation']='relu' is not allowed: a torch.nn.Module subclass, "
     "e.g. torch.nn.ReLU, that takes no arguments (an activation; --act on the command line)"),
    ("ppo", "CartPole-v1", dict(pi_lr="fast"), TypeError,
     "ppo: pi_lr='fast' is not allowed: a finite number with pi_lr > 0"),
    ("dqn", "Pendulum-v1", {}, ValueError,
     "dqn: action space Box(-2.0, 2.0, (1,), float32) is not supported: DQN needs a "
     "Discrete action space; for continuous (Box) actions use sac, td3, ddpg, ppo, vpg, "
     "trpo, a2c or a3c"),
    ("sac", "CartPole-v1", {}, ValueError,
     "sac: action space Discrete(2) is not supported: SAC needs a continuous (Box) action "
     "space with finite low/high; for Discrete actions use dqn, ppo, vpg, trpo, a2c or a3c"),
]


@pytest.mark.parametrize("algo, env_id, kwargs, error, text", API_CASES)
def test_api_raises_the_cli_line_and_writes_nothing(tmp_path, algo, env_id, kwargs, error, text):
    out = tmp_path / "out"
    with pytest.raises(error) as info:
        getattr(spinup, algo)(lambda: gym.make(env_id), logger_kwargs=dict(output_dir=str(out)),
                              **kwargs)
    assert str(info.value) == text
    assert "\n" not in str(info.value)
    assert not out.exists()
    # check_cli (what the command line runs) gives the very same line
    with pytest.raises(error) as cli_info:
        check_cli(algo, getattr(spinup, algo), dict(kwargs, env_name=env_id, num_cpu=1))
    assert str(cli_info.value) == text


@pytest.mark.parametrize("name", ["ddpg", "td3", "sac", "dqn", "a3c"])
def test_single_process_algorithms_refuse_num_cpu(name):
    with pytest.raises(ValueError, match=rf"^{name}: num_cpu=2 is not allowed: 1 \("):
        check_cli(name, getattr(spinup, name), dict(env_name="CartPole-v1", num_cpu=2))


def test_mpi_split_is_checked_against_num_cpu():
    check_cli("ppo", spinup.ppo, dict(env_name="CartPole-v1", steps_per_epoch=4000, num_cpu=4))
    with pytest.raises(ValueError, match=r"steps_per_epoch=4001 .* MPI processes \(4\)"):
        check_cli("ppo", spinup.ppo, dict(env_name="CartPole-v1", steps_per_epoch=4001,
                                          num_cpu=4))
    with pytest.raises(ValueError, match="^npg: steps_per_epoch=3 "):
        check_cli("npg", spinup.npg, dict(env_name="CartPole-v1", steps_per_epoch=3,
                                          num_cpu=2))


def test_a_custom_actor_critic_gets_its_own_kwargs(tmp_path):
    class Custom(torch.nn.Module):
        pass
    # hidden_sizes=64 is not the default MLP's business here: no error from check_args
    check_args("ppo", spinup.ppo, dict(actor_critic=Custom, ac_kwargs=dict(hidden_sizes=64)))


def test_check_spaces_closes_the_env_and_points_to_flatten_observation():
    class Env(gym.Env):
        observation_space = gym.spaces.Box(0, 1, (2, 2), np.float32)
        action_space = gym.spaces.Discrete(2)
        closed = False

        def close(self):
            Env.closed = True
    with pytest.raises(ValueError, match=r"^ppo: observation space Box.*FlattenObservation"):
        check_spaces("ppo", Env(), **ac.SPACES["ppo"])
    assert Env.closed


def test_check_spaces_refuses_unbounded_actions_for_tanh_policies():
    class Env(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (3,), np.float32)
        action_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    with pytest.raises(ValueError, match="TD3 needs a continuous"):
        check_spaces("td3", Env(), obs=env_checks.FLAT_BOX, act=env_checks.BOUNDED_BOX)
    check_spaces("ppo", Env(), obs=env_checks.FLAT_BOX,
                 act=(env_checks.FLAT_BOX, env_checks.DISCRETE))  # Gaussian: fine


def test_check_cli_makes_each_env_once_and_closes_it(monkeypatch):
    made, closed = [], []
    real_make = gym.make

    def counting_make(env_id, **kwargs):
        env = real_make(env_id, **kwargs)
        made.append(env)
        real_close = env.close
        env.close = lambda: (closed.append(env_id), real_close())
        return env
    monkeypatch.setattr(gym, "make", counting_make)
    monkeypatch.setattr(ac, "_checked", set())
    for seed in (0, 1, 2):
        check_cli("ppo", spinup.ppo, dict(env_name="Acrobot-v1", seed=seed))
    # once per id, not per variant (make_env resets and steps a copy of it, also closed)
    assert len(made) == 1 and closed == ["Acrobot-v1"] * 2


# ---- One home per rule (issue 44) ----

# The algorithm rules that replace a common one on purpose: a stricter condition.
OVERRIDES = {("vpg", "steps_per_epoch"), ("trpo", "steps_per_epoch"), ("ppo", "steps_per_epoch"),
             ("a2c", "steps_per_epoch"), ("vpg", "train_v_iters"), ("ppo", "train_v_iters"),
             # whole batch steps of num_envs copies (issue 55)
             ("ddpg", "steps_per_epoch"), ("td3", "steps_per_epoch"), ("sac", "steps_per_epoch"),
             ("dqn", "steps_per_epoch"), ("ddpg", "replay_size"), ("td3", "replay_size"),
             ("sac", "replay_size"), ("dqn", "replay_size")}


@pytest.mark.parametrize("name", ["vpg", "trpo", "ppo", "a2c", "a3c", "ddpg", "td3", "sac", "dqn"])
def test_no_algorithm_repeats_a_common_rule(name):
    """An argument several algorithms share has its rule once, in COMMON_RULES; an
    algorithm's entry of RULES holds only its own (75 entries repeated them, 19 differently)."""
    rules = ac.RULES[name]
    repeated = {key for key in rules if key in ac.COMMON_RULES} - {k for a, k in OVERRIDES
                                                                  if a == name}
    assert not repeated


def test_an_algorithms_own_rule_replaces_the_common_one():
    # train_v_iters: 0 allowed by the common rule (TRPO), refused by VPG's own.
    check_args("trpo", spinup.trpo, dict(train_v_iters=0), procs=1)
    with pytest.raises(ValueError, match="vpg: train_v_iters=0"):
        check_args("vpg", spinup.vpg, dict(train_v_iters=0), procs=1)
    # The common rule still holds where the algorithm declares none.
    with pytest.raises(TypeError, match="sac: start_steps=1.5"):
        check_args("sac", spinup.sac, dict(start_steps=1.5), procs=1)


def test_ppo_documents_the_clip_ratio_it_enforces():
    """ppo's docstring said clip_ratio > 0 while the rule allowed only (0, 1)."""
    with pytest.raises(ValueError, match="ppo: clip_ratio=1.0"):
        check_args("ppo", spinup.ppo, dict(clip_ratio=1.0), procs=1)
    check_args("ppo", spinup.ppo, dict(clip_ratio=0.99), procs=1)
    assert "0 < clip_ratio < 1" in " ".join(inspect.getdoc(spinup.ppo).split())
