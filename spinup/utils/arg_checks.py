"""Checking an algorithm's arguments and its env before anything is written.

Each algorithm module declares ``ARG_RULES = dict(BASIC_RULES, epochs=positive_int, ...)``
and ``SPACES = dict(obs=FLAT_BOX, act=(BOX, DISCRETE))``; its function starts with
``check_args("ppo", ppo, dict(locals()))`` and ``make_env("ppo", env_fn, **SPACES)``.
The command line calls :func:`check_cli` for every variant of a grid first.

A failed check raises one line, ``<algo>: <name>=<value!r> is not allowed: <what is
allowed>``: ``TypeError`` for a value of the wrong kind, ``ValueError`` for a wrong
value or an unsupported env. Only the standard library is imported at import time.
"""
import inspect
import math
import numbers

from spinup.utils import mpi_tools


def _message(algo, name, value, allowed):
    return f"{algo}: {name}={value!r} is not allowed: {allowed}"


class _Context:
    """What a rule may look at besides its own value.

    Attributes:
        config (dict): every argument of the call, defaults filled in.
        procs (int): number of MPI processes the run has (or will have).
        default_model (bool): ``actor_critic`` is the function's default class,
            so ``ac_kwargs`` are known to be ``hidden_sizes``/``activation``.
    """

    def __init__(self, config, procs, default_model):
        self.config, self.procs, self.default_model = config, procs, default_model


# ---- Rules ----

class Rule:
    """The allowed values of one argument.

    Args:
        allowed (str or callable): the allowed values in words; ``{name}`` is
            replaced by the argument's name. A callable gets ``(name, ctx)`` and
            returns the words (for rules that depend on other arguments).
        kind (callable): ``value -> bool``; False raises ``TypeError``.
        within (callable or None): ``(value, ctx) -> bool``, asked only for a
            value of the right kind; False raises ``ValueError``.
        late (bool): the rule reads other arguments, so it runs after the
            rules that check those.
    """

    def __init__(self, allowed, kind, within=None, late=False):
        self.allowed, self.kind, self.within, self.late = allowed, kind, within, late

    def describe(self, name, ctx=None):
        """The allowed values in words, for argument ``name``."""
        if callable(self.allowed):
            return self.allowed(name, ctx)
        return self.allowed.replace("{name}", name)

    def check(self, algo, name, value, ctx):
        """Raise TypeError/ValueError (one line, see the module docstring) unless
        ``value`` is allowed for argument ``name`` of ``algo``."""
        if not self.kind(value):
            raise TypeError(_message(algo, name, value, self.describe(name, ctx)))
        if self.within is not None and not self.within(value, ctx):
            raise ValueError(_message(algo, name, value, self.describe(name, ctx)))


def is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def int_at_least(low):
    """An int (not a bool) that is ``>= low``."""
    return Rule(f"an int with {{name}} >= {low}", is_int, lambda v, ctx: v >= low)


#: An int >= 1: sizes, counts of steps, epochs and iterations.
positive_int = int_at_least(1)
#: An int >= 0: counts that may be zero (``start_steps``, ``num_test_episodes``).
nonneg_int = int_at_least(0)
#: Any int.
any_int = Rule("an int", is_int)


def in_range(low=None, high=None, low_open=False, high_open=False):
    """A real number (not a bool) between ``low`` and ``high``.

    Args:
        low, high: the bounds; ``None`` leaves that side unbounded, but the
            number must still be finite.
        low_open, high_open: exclude the bound itself (``<`` instead of ``<=``).

    NaN fails every comparison, so it is always refused.
    """
    def within(v, ctx):
        above = low is None or (v > low if low_open else v >= low)
        below = v < high if high_open else v <= high if high is not None else True
        return above and below and math.isfinite(v)

    below_words = "" if high is None else f" {'<' if high_open else '<='} {high}"
    if low is None and high is None:
        words = "a finite number"
    elif low is None:
        words = f"a finite number with {{name}}{below_words}"
    elif high is None:
        words = f"a finite number with {{name}} {'>' if low_open else '>='} {low}"
    else:
        words = f"a number with {low} {'<' if low_open else '<='} {{name}}{below_words}"
    return Rule(words, is_number, within)


#: A finite number > 0: learning rates, KL and step sizes.
positive = in_range(0, low_open=True)
#: A finite number >= 0: coefficients that may be switched off with 0.
nonneg = in_range(0)
#: A number in [0, 1]: discount factors, polyak, probabilities.
unit_interval = in_range(0, 1)


def optional(rule):
    """``None``, or a value that ``rule`` allows."""
    return Rule(lambda name, ctx: "None or " + rule.describe(name, ctx),
                lambda v: v is None or rule.kind(v),
                lambda v, ctx: v is None or rule.within is None or rule.within(v, ctx),
                late=rule.late)


def one_of(*choices):
    """One of the given strings (or ``None`` if it is among them)."""
    words = "one of " + ", ".join(repr(c) for c in choices)
    return Rule(words, lambda v: isinstance(v, str) or (v is None and None in choices),
                lambda v, ctx: v in choices)


#: True or False.
boolean = Rule("True or False", lambda v: isinstance(v, bool))
#: A callable, e.g. ``env_fn`` or ``actor_critic``.
is_callable = Rule("a callable", callable)
#: A dict, e.g. ``logger_kwargs``.
a_dict = Rule("a dict", lambda v: isinstance(v, dict))

#: ``hidden_sizes`` of an MLP: a list or tuple of ints >= 1 (empty: no hidden layer).
hidden_sizes = Rule("a list or tuple of ints >= 1, e.g. [64, 64]",
                    lambda v: isinstance(v, (list, tuple)) and all(map(is_int, v)),
                    lambda v, ctx: all(size >= 1 for size in v))


def _is_activation(value):
    import torch
    if not (isinstance(value, type) and issubclass(value, torch.nn.Module)):
        return False
    try:  # made without arguments (torch.nn.Linear needs two)
        return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in inspect.signature(value).parameters.values())
    except (TypeError, ValueError):
        return True


#: ``activation``: a ``torch.nn.Module`` subclass made without arguments (not an instance).
activation = Rule("a torch.nn.Module subclass, e.g. torch.nn.ReLU, that takes no arguments "
                  "(an activation; --act on the command line)", _is_activation)


class _ModelKwargs(Rule):
    """``ac_kwargs``: a dict; with the default actor-critic its ``hidden_sizes``
    and ``activation`` entries (when given) must satisfy their rules."""

    def __init__(self):
        super().__init__("a dict", lambda v: isinstance(v, dict))

    def check(self, algo, name, value, ctx):
        super().check(algo, name, value, ctx)
        check_model_keys(algo, name, value, ctx.config.get("actor_critic"))
        if not ctx.default_model:
            return  # a user's class: the values of its keyword arguments are its business
        for key, rule in (("hidden_sizes", hidden_sizes), ("activation", activation)):
            if key in value:
                rule.check(algo, f"{name}[{key!r}]", value[key], ctx)
        check_model_memory(algo, name, value, ctx)


#: ``ac_kwargs`` of the default MLP actor-critic.
mlp_ac_kwargs = _ModelKwargs()


def steps_over_procs(block=None):
    """``steps_per_epoch``: an int >= 1 that splits evenly over the MPI processes,
    and, with ``block`` (the name of another argument, e.g. ``'n_steps'``), into
    whole rollouts of that many steps on every process."""
    def factor(ctx):
        each = ctx.config[block] if block else 1
        return ctx.procs * (each if is_int(each) and each >= 1 else 1)

    def words(name, ctx):
        procs = "the number of MPI processes" + ("" if ctx is None else f" ({ctx.procs})")
        if block:
            each = "" if ctx is None else f" ({ctx.config[block]!r})"
            return f"an int >= 1 that is a multiple of {block}{each} times {procs}"
        return f"an int >= 1 that is a multiple of {procs}"

    return Rule(words, is_int, lambda v, ctx: v >= 1 and v % factor(ctx) == 0, late=True)


def single_process(why):
    """For the key ``num_cpu``: the run must be one process; ``why`` says why."""
    return Rule(f"1 ({why})", is_int, lambda v, ctx: v == 1, late=True)


def _seed_processes(ctx):
    """How many seeds ``seed + 10000 * k`` a run derives: one per MPI process, or per
    A3C worker (``num_workers``; ``None`` means one per CPU)."""
    import os
    workers = ctx.config.get("num_workers", inspect.Parameter.empty)
    if workers is inspect.Parameter.empty:
        return max(ctx.procs, 1)
    return workers if is_int(workers) and workers >= 1 else (os.cpu_count() or 1)


def _highest_seed(ctx):
    # numpy takes seeds below 2**32; process k adds 10000 * k and a test env adds 1.
    return 2 ** 32 - 2 - 10000 * (_seed_processes(ctx) - 1)


#: ``seed``: an int that numpy accepts for every process, worker and test env of the run.
seed_range = Rule(lambda name, ctx: (f"an int with 0 <= {name} <= "
                                     f"{_highest_seed(ctx) if ctx else 2 ** 32 - 2} (numpy "
                                     "seeds are below 2**32; each extra process adds 10000)"),
                  is_int, lambda v, ctx: 0 <= v <= _highest_seed(ctx), late=True)

# ---- Legal values that would silently do nothing useful (issue 19, part B) ----

#: PPO's ``clip_ratio``: strictly between 0 and 1 (at 1 or above the lower clip bound
#: ``1 - clip_ratio`` is 0 or negative, so the objective is not clipped from below).
clip_fraction = in_range(0, 1, low_open=True, high_open=True)


def _int_or(value, fallback):
    return value if is_int(value) else fallback


def replay_holds_a_batch():
    """``replay_size``: an int >= ``batch_size``, so a batch never repeats one
    transition for want of others (``replay_size=1`` trains on a single one)."""
    def words(name, ctx):
        batch = "" if ctx is None else f" ({ctx.config.get('batch_size')!r})"
        return f"an int >= batch_size{batch}: the buffer must hold at least one batch"
    return Rule(words, is_int,
                lambda v, ctx: v >= max(1, _int_or(ctx.config.get("batch_size"), 1)), late=True)


#: Bytes per replay transition with one-dimensional observations and actions: the least
#: any buffer takes (DDPG/TD3/SAC: obs, next obs, act, rew, done as float32 = 20; DQN's
#: entries are larger).
_LEAST_TRANSITION_BYTES = 20


def replay_fits_memory():
    """``replay_size``: a buffer that can fit in the available memory even with the
    smallest transitions (:data:`_LEAST_TRANSITION_BYTES`); an absurd size is refused
    before anything is written, not by numpy once the run directory exists."""
    def need(v):
        return v * _LEAST_TRANSITION_BYTES

    def words(name, ctx):
        avail, size = available_memory(), ctx.config["replay_size"]
        return (f"the replay buffer would take at least {_gigabytes(need(size))} "
                f"({_LEAST_TRANSITION_BYTES} bytes per transition with one-dimensional "
                f"observations and actions) but {_gigabytes(avail or 0)} of memory is "
                "available; use a smaller replay_size")

    def within(v, ctx):
        avail = available_memory()
        return avail is None or need(v) <= avail
    return Rule(words, is_int, within, late=True)


def _first_update_step(ctx):
    """The env step of an off-policy run's first update, and the run's total steps:
    updates happen at steps ``t >= update_after`` with ``t % update_every == 0``."""
    after = _int_or(ctx.config.get("update_after"), 0)
    every = max(1, _int_or(ctx.config.get("update_every"), 1))
    total = (_int_or(ctx.config.get("epochs"), 1) * _int_or(ctx.config.get("steps_per_epoch"), 1))
    return -(-after // every) * every, total


def update_happens():
    """``update_after``: an int >= 0 small enough that the run (``epochs *
    steps_per_epoch`` env steps) makes at least one update."""
    def words(name, ctx):
        if ctx is None:
            return "an int >= 0 below epochs * steps_per_epoch"
        first, total = _first_update_step(ctx)
        return (f"the run has epochs * steps_per_epoch = {total} env steps and the first "
                f"update would come at step {first} (update_after rounded up to a multiple "
                "of update_every), so no update would ever happen; lower update_after or "
                "raise epochs/steps_per_epoch")
    def within(v, ctx):
        first, total = _first_update_step(ctx)
        return v >= 0 and first < total
    return Rule(words, is_int, within, late=True)


class _DeviceRule(Rule):
    """``device``: what :func:`spinup.utils.torch_tools.resolve_device` accepts for this
    algorithm and number of processes; its own one-line errors (torch is imported only
    when an algorithm's arguments are checked)."""

    def __init__(self):
        super().__init__("'cpu', 'cuda', 'cuda:N' or 'auto'", lambda value: True)

    def check(self, algo, name, value, ctx):
        from spinup.utils.torch_tools import resolve_device
        resolve_device(algo, value, ctx.procs)


#: Rules :func:`check_args` applies, after ``ARG_RULES``, to every algorithm taking an
#: argument of that name: whole-number counts and the cross-argument rules above.
COMMON_RULES = dict(
    {name: positive_int for name in (
        "steps_per_epoch", "epochs", "replay_size", "batch_size", "update_every",
        "target_update_every", "n_step", "n_steps", "max_ep_len", "save_freq",
        "train_pi_iters", "policy_delay", "cg_iters")},
    **{name: nonneg_int for name in (
        "start_steps", "update_after", "eps_decay_steps", "num_test_episodes",
        "train_v_iters", "backtrack_iters")},
    num_workers=optional(positive_int), device=_DeviceRule(),
    clip_ratio=clip_fraction, replay_size_vs_batch=replay_holds_a_batch(),
    replay_size_vs_memory=replay_fits_memory(), update_after_vs_budget=update_happens())

#: Cross-argument entries of :data:`COMMON_RULES`: rule key -> the argument it checks.
_CROSS_KEYS = {"replay_size_vs_batch": "replay_size", "replay_size_vs_memory": "replay_size",
               "update_after_vs_budget": "update_after"}


#: Rules every algorithm shares: spread into its ``ARG_RULES`` with ``dict(BASIC_RULES, ...)``.
BASIC_RULES = dict(env_fn=is_callable, actor_critic=is_callable, ac_kwargs=mlp_ac_kwargs,
                   seed=seed_range, logger_kwargs=a_dict)


# ---- Checking a call ----

def _rules_of(fn):
    """The ``ARG_RULES`` and ``SPACES`` declared in the module of algorithm ``fn``."""
    module = inspect.getmodule(fn)
    return getattr(module, "ARG_RULES", {}), getattr(module, "SPACES", None)


def check_args(algo, fn, kwargs, procs=None):
    """Check the arguments of a call of algorithm ``fn`` against its ``ARG_RULES``.

    Arguments not in ``kwargs`` take ``fn``'s defaults; keywords ``fn`` does not take
    are ignored (the CLI refuses them). A rule under the key ``num_cpu`` checks the
    number of processes. ``kwargs['_algorithm']`` is set to ``algo`` (unless set), so
    the ``config.json`` written from it records the algorithm; resuming another
    algorithm's run is refused (:func:`check_resume_algorithm`).

    Args:
        algo (str): the name used in messages, e.g. ``'ppo'``.
        fn (callable): the algorithm function; its module holds ``ARG_RULES``.
        kwargs (dict): the arguments, e.g. ``dict(locals())`` inside ``fn``.
        procs (int or None): the number of MPI processes; ``None`` asks MPI.

    Raises:
        TypeError, ValueError: the first argument that is not allowed, in one line.
    """
    params = inspect.signature(fn).parameters
    config = {name: p.default for name, p in params.items()
              if p.default is not inspect.Parameter.empty}
    config.update((k, v) for k, v in kwargs.items() if k in params)
    default_ac = params["actor_critic"].default if "actor_critic" in params else None
    ctx = _Context(config, mpi_tools.num_procs() if procs is None else procs,
                   config.get("actor_critic") is default_ac)
    rules, _ = _rules_of(fn)
    kwargs.setdefault("_algorithm", algo)   # recorded in config.json (save_config)
    check_resume_algorithm(algo, fn, config.get("logger_kwargs"))
    ordered = sorted(rules.items(), key=lambda item: item[1].late)  # stable: keeps order
    for name, rule in ordered:
        if name == "num_cpu":
            rule.check(algo, name, ctx.procs, ctx)
        elif name in config:
            rule.check(algo, name, config[name], ctx)
    common = sorted(COMMON_RULES.items(), key=lambda item: item[1].late)
    for key, rule in common:
        name = _CROSS_KEYS.get(key, key)
        if name in config and name in params:
            rule.check(algo, name, config[name], ctx)


# ---- Spaces ----

class SpaceKind:
    """A kind of gymnasium space an algorithm supports.

    Args:
        words (str): its name in messages, e.g. ``'a flat Box'``.
        test (callable): ``space -> bool``.
        condition (str): what else it needs, said after "action space", e.g.
            ``' with finite low/high'``.
    """

    def __init__(self, words, test, condition=""):
        self.words, self.test, self.condition = words, test, condition

    def __repr__(self):
        return f"SpaceKind({self.words!r})"


def _box(space, flat=False, bounded=False):
    from gymnasium.spaces import Box
    if not isinstance(space, Box) or (flat and len(space.shape) != 1):
        return False
    import numpy as np
    return not bounded or bool(np.isfinite(space.low).all() and np.isfinite(space.high).all())


def _discrete(space):
    from gymnasium.spaces import Discrete
    return isinstance(space, Discrete)


#: A one-dimensional Box (vector observations).
FLAT_BOX = SpaceKind("a flat Box", lambda s: _box(s, flat=True))
#: A one-dimensional Box of any bounds (Gaussian actions are clipped to them).
BOX = SpaceKind("a flat (1-D) Box", lambda s: _box(s, flat=True))
#: A one-dimensional Box with finite low/high (a tanh policy is scaled to them).
BOUNDED_BOX = SpaceKind("a continuous (Box)", lambda s: _box(s, flat=True, bounded=True),
                        " with finite low/high")
#: A Discrete space.
DISCRETE = SpaceKind("a Discrete", _discrete)

_DISCRETE_ALGOS = "dqn, ppo, vpg, trpo, a2c or a3c"
_BOX_ALGOS = "sac, td3, ddpg, ppo, vpg, trpo, a2c or a3c"


def check_spaces(algo, env, obs=FLAT_BOX, act=(BOX, DISCRETE)):
    """Refuse an env whose spaces ``algo`` does not support.

    Args:
        algo (str): the name used in messages.
        env: a gymnasium env (anything with ``observation_space`` and ``action_space``).
        obs (SpaceKind): the supported observation space.
        act (SpaceKind or tuple of them): the supported action spaces.

    Raises:
        TypeError: ``env`` is not an env (``env_fn`` returned something else).
        ValueError: naming the algorithm, the space, what is supported and what to do
            instead; ``env`` is closed first, so the caller has nothing to clean up.
    """
    if not (hasattr(env, "observation_space") and hasattr(env, "action_space")):
        import reprlib
        raise TypeError(f"{algo}: env_fn() returned {reprlib.repr(env)}, not a gymnasium "
                        "environment: env_fn must take no arguments and return a "
                        "gymnasium.Env, e.g. lambda: gymnasium.make('CartPole-v1')")
    act = act if isinstance(act, tuple) else (act,)
    problem = None
    obs_space, act_space = env.observation_space, env.action_space
    if not obs.test(obs_space):
        problem = (f"observation space {obs_space} is not supported: {algo.upper()} needs "
                   f"{obs.words} observation space (wrap the env in "
                   "gymnasium.wrappers.FlattenObservation)")
    elif not any(kind.test(act_space) for kind in act):
        needs = (" or ".join(kind.words for kind in act) + " action space"
                 + "".join(kind.condition for kind in act))
        if _discrete(act_space):
            hint = f"for Discrete actions use {_DISCRETE_ALGOS}"
        elif _box(act_space) and len(act_space.shape) != 1 and (BOX in act or BOUNDED_BOX in act):
            hint = (f"its shape {act_space.shape} is not 1-D; give the agent a flat Box, e.g. "
                    "with gymnasium.wrappers.TransformAction reshaping a vector to that shape")
        elif _box(act_space) and BOUNDED_BOX in act:
            hint = "its tanh policy is scaled to the action bounds"
        elif _box(act_space):
            hint = f"for continuous (Box) actions use {_BOX_ALGOS}"
        elif act == (DISCRETE,):   # e.g. MultiDiscrete for DQN: one index per combination
            hint = ("wrap the env so that one Discrete index stands for each combination of "
                    "actions (gymnasium.wrappers.TransformAction with a Discrete space)")
        else:
            hint = ("wrap the env to turn its actions into "
                    + " or ".join(kind.words for kind in act) + " space")
        problem = (f"action space {act_space} is not supported: {algo.upper()} needs "
                   f"{needs}; {hint}")
    if problem:
        close = getattr(env, "close", None)
        if close is not None:
            close()
        raise ValueError(f"{algo}: {problem}")


def _attempt(where, what, call, hint=""):
    """``call()``; an exception becomes one line, ``where: what raised <type>: <text>``
    (a ``ValueError`` with the original as its cause)."""
    try:
        return call()
    except Exception as e:
        text = (str(e).strip().splitlines() or [""])[0]
        raise ValueError(f"{where}: {what} raised {type(e).__name__}: {text}{hint}") from e


def make_env(algo, env_fn, obs=FLAT_BOX, act=(BOX, DISCRETE)):
    """The run's env ``env_fn()``, checked before the logger writes anything.

    Its spaces are checked (:func:`check_spaces`), then a copy (``copy.deepcopy``, so
    that no ``env_fn()`` side effect such as a counter changes; ``env_fn()`` if it cannot
    be copied) is reset and stepped once with a fixed action (no random draw): a reset
    that raises (a missing render dependency included), a first observation of the
    wrong shape or not finite and a non-finite first reward are refused; a step that
    raises is left to the run. The run's env is never reset here and the global
    ``random``/``numpy`` states are put back, so valid runs are bit-identical.

    Raises:
        TypeError, ValueError: one line naming the algorithm, the env and the problem
            (``env_fn()`` raising included).
    """
    import copy
    import random
    import warnings

    import numpy as np
    env = _attempt(algo, "env_fn()", env_fn)
    check_spaces(algo, env, obs, act)
    states = random.getstate(), np.random.get_state()
    try:
        probe = copy.deepcopy(env)
    except Exception:
        probe = _attempt(algo, "env_fn()", env_fn)
    try:
        if probe is env:
            return env
        label, obs_space, space = env_label(algo, env), env.observation_space, env.action_space
        hint = "" if getattr(probe, "render_mode", None) is None else " (the env was made " \
            f"with render_mode={probe.render_mode!r}; leave it out for training)"
        action = space.start if _discrete(space) else np.clip(
            np.zeros(space.shape, space.dtype), space.low, space.high)
        with warnings.catch_warnings():   # gymnasium's checker: left to the run's own env
            warnings.simplefilter("ignore")
            seen = [("reset()", _attempt(label, "reset()", probe.reset, hint)[0], 0.0)]
            try:
                seen.append(("the first step()", *probe.step(action)[:2]))
            except Exception:
                pass   # the run's own step() reports it, with the env's traceback
        for what, obs, rew in seen:
            try:
                values = np.asarray(obs, dtype=np.float64)
            except (TypeError, ValueError):
                values = None
            if values is None or values.shape != obs_space.shape:
                raise ValueError(f"{label}: {what} returned an observation of shape "
                                 f"{getattr(values, 'shape', '(not an array)')} but its "
                                 f"observation space {obs_space} has shape {obs_space.shape}; "
                                 "the env must return observations of that shape")
            if not np.isfinite(values).all():
                raise ValueError(f"{label}: {what} returned a non-finite observation "
                                 f"{_short(values)}; observations must be finite numbers")
            if not np.isfinite(np.asarray(rew, dtype=np.float64)).all():
                raise ValueError(f"{label}: {what} returned a non-finite reward ({rew}); "
                                 "rewards must be finite numbers")
    finally:
        if probe is not env:
            probe.close()
        random.setstate(states[0])
        np.random.set_state(states[1])
    return env


def report_env_step_error(algo):
    """Decorate algorithm ``algo`` (``None``: named by its ``algo`` argument) so that an
    exception from inside the env's ``step()`` is preceded by one line saying so, with
    the epoch and step read from the algorithm's frame (nothing runs per step); the
    exception and its traceback then go on."""
    import functools

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                _say_if_env_step_raised(algo, e)
                raise
        return wrapper
    return decorate


def _say_if_env_step_raised(algo, exc):
    import sys
    import traceback
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    inner = frames[2:]   # below the decorator's wrapper and the algorithm's own frame
    if not any(f.f_code.co_name == "step" and hasattr(f.f_locals.get("self"), "action_space")
               for f in inner):
        return
    here = frames[1].f_locals
    at = ", ".join(f"{word}{here[k]}" for k, word in (("epoch", "epoch "), ("t", "step t="))
                   if isinstance(here.get(k), int))
    testing = " while testing the agent" * any(f.f_code.co_name.startswith("test_") for f in inner)
    print(f"{algo or here.get('algo')}: your env raised {type(exc).__name__} inside step()"
          f"{testing}{' at ' * bool(at)}{at}; its traceback follows", file=sys.stderr, flush=True)
    exc.spinup_keep_traceback = True   # the CLI's one-line form must not swallow it


# ---- The command line ----

_checked = set()  # (algo, env id) made and tried by check_cli in this process
_handed_over = {}  # env id -> an env the command line already made, for check_cli to probe


def hand_over_env(env_name, env):
    """Keep ``env`` (made from the id ``env_name`` to check the id) for :func:`check_cli`,
    which probes it instead of making another: one env per id in the launching process.
    An env handed over for the same id before is closed."""
    old = _handed_over.pop(env_name, None)
    if old is not None:
        old.close()
    _handed_over[env_name] = env


def check_cli(algo, fn, kwargs):
    """Everything the command line checks in the parent process before a launch: the
    arguments (:func:`check_args`, ``num_cpu`` being the number of processes) and, once
    per algorithm and id, the env ``env_name`` (:func:`make_env` with the ``SPACES``).

    Args:
        algo (str): the command, e.g. ``'ppo'``.
        fn (callable): the algorithm function.
        kwargs (dict): one experiment of the grid as the CLI builds it: the algorithm's
            keyword arguments with ``env_name`` instead of ``env_fn``, plus ``num_cpu``
            (an int or ``'auto'``).

    Raises:
        TypeError, ValueError: the one-line message of the check that failed.
    """
    args = dict(kwargs)
    num_cpu = args.pop("num_cpu", 1)
    if num_cpu == "auto":
        num_cpu = mpi_tools._physical_cores()
    env_name = args.pop("env_name", None)
    check_args(algo, fn, args, procs=num_cpu)
    _, spaces = _rules_of(fn)
    if env_name is not None and spaces is not None and (algo, env_name) not in _checked:
        import gymnasium   # made and tried here too: with --jobs, output.log comes early
        made = _handed_over.pop(env_name, None)
        make_env(algo, (lambda: made) if made is not None else (lambda: gymnasium.make(env_name)),
                 **spaces).close()
        _checked.add((algo, env_name))


# ---- Launch-time limits: legal values that cannot work here (one line, nothing written) ----

def check_model_keys(algo, name, value, actor_critic):
    """Refuse a key of ``value`` (argument ``name`` of ``algo``, i.e. ``ac_kwargs``) that
    ``actor_critic(observation_space, action_space, **value)`` does not take. A class
    taking ``**kwargs``, or whose signature cannot be read, is not checked.

    Raises:
        TypeError: naming the first unknown key and the keys that are allowed.
    """
    try:
        params = list(inspect.signature(actor_critic).parameters.values())
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    named = [p for p in params if p.kind is not p.VAR_POSITIONAL]
    allowed = [p.name for p in named[2:] if p.kind is not p.POSITIONAL_ONLY]
    for key in value:
        if key not in allowed:
            who = getattr(actor_critic, "__name__", "the actor-critic")
            keys = ", ".join(allowed) if allowed else "none"
            raise TypeError(_message(algo, f"{name}[{key!r}]", value[key],
                                     f"{who} takes no argument {key!r}; its keys are: {keys}"))


# Networks of the default actor-critic of each algorithm: (trained with Adam,
# copies without gradients such as target networks).
_NETWORKS = dict(vpg=(2, 0), ppo=(2, 0), trpo=(2, 0), npg=(2, 0), a2c=(2, 0), a3c=(2, 0),
                 ddpg=(2, 2), td3=(3, 3), sac=(3, 3), dqn=(1, 1))

_FLOAT_BYTES = 4  # float32 parameters


def hidden_parameters(sizes):
    """Parameters of an MLP's hidden part: the weights between consecutive hidden
    layers and the biases of the hidden layers. The input and output layers are
    left out (they depend on the env), so this is a lower bound of the MLP's size.
    """
    sizes = [int(size) for size in sizes]
    return sum(a * b for a, b in zip(sizes, sizes[1:])) + sum(sizes)


def available_memory():
    """Bytes of memory this process can still get, or ``None`` if unknown.

    ``psutil.virtual_memory().available`` when psutil is installed, else
    ``MemAvailable`` of ``/proc/meminfo``, else free pages (``os.sysconf``); the
    lower of that and a cgroup v2 limit (``memory.max - memory.current``) if any.
    """
    import os
    from pathlib import Path
    avail = None
    try:
        import psutil
        avail = int(psutil.virtual_memory().available)
    except (ImportError, OSError, AttributeError):
        try:
            avail = next(int(line.split()[1]) * 1024 for line in
                         Path("/proc/meminfo").read_text().splitlines()
                         if line.startswith("MemAvailable:"))
        except (OSError, ValueError, IndexError, StopIteration):
            try:
                avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            except (ValueError, OSError, AttributeError):
                pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        if limit.isdigit():
            room = max(int(limit) - used, 0)
            avail = room if avail is None else min(avail, room)
    except (OSError, ValueError):
        pass
    return avail


def _gigabytes(n):
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def estimate_training_bytes(algo, sizes, workers=1):
    """A lower bound of the memory that training ``algo``'s default model needs.

    Each network of the default actor-critic (:data:`_NETWORKS`) has at least
    :func:`hidden_parameters` float32 parameters. A trained network costs 4 times
    its parameters (weights, gradients, Adam's two moments); a target network once.
    A3C's workers each add a local copy of the trained networks with gradients
    (2 times). Activations, buffers and the env are not counted.

    Returns:
        (int, int): the bytes, and the parameters of one network.
    """
    trained, copies = _NETWORKS.get(algo, (2, 0))
    per_net = hidden_parameters(sizes)
    weights = per_net * _FLOAT_BYTES
    total = trained * 4 * weights + copies * weights
    if algo == "a3c":
        total += workers * trained * 2 * weights
    return total, per_net


def check_model_memory(algo, name, value, ctx):
    """Refuse default-model ``hidden_sizes`` whose :func:`estimate_training_bytes` exceeds
    :func:`available_memory`.

    Raises:
        ValueError: one line with the estimated bytes, how they were counted, and
            the bytes available.
    """
    import os
    sizes = value.get("hidden_sizes")
    if sizes is None:
        try:
            sizes = inspect.signature(ctx.config["actor_critic"]).parameters[
                "hidden_sizes"].default
        except (KeyError, TypeError, ValueError):
            return
    if not isinstance(sizes, (list, tuple)) or not all(map(is_int, sizes)):
        return
    workers = ctx.config.get("num_workers") or os.cpu_count() or 1
    need, per_net = estimate_training_bytes(algo, sizes, workers if is_int(workers) else 1)
    avail = available_memory()
    if avail is None or need <= avail:
        return
    trained, copies = _NETWORKS.get(algo, (2, 0))
    how = (f"{trained} trained networks" + (f" and {copies} target networks" if copies else "")
           + f" of at least {per_net:,} parameters each, 4 bytes per parameter, x4 for "
           "gradients and Adam's moments" + (f", plus {workers} workers' copies"
                                              if algo == "a3c" else ""))
    raise ValueError(_message(algo, f"{name}['hidden_sizes']", list(sizes),
                              f"training needs at least {_gigabytes(need)} ({how}) but only "
                              f"{_gigabytes(avail)} of memory is available; use smaller "
                              "hidden layers"))


def check_saved_model_memory(path, ac_class, ac_kwargs, state_dict=None):
    """Refuse to rebuild a saved model (``test_policy``) whose ``hidden_sizes`` cannot fit
    in memory: the networks of the algorithm in ``ac_class`` (2 if unknown),
    :func:`hidden_parameters` each, 4 bytes per parameter, twice (model and loaded
    weights). With ``state_dict``, kwargs needing more parameters than the weights hold
    are refused too.

    Raises:
        ValueError: one line naming the file, the sizes, the bytes and what is available.
    """
    import re
    sizes = ac_kwargs.get("hidden_sizes") if isinstance(ac_kwargs, dict) else None
    if not isinstance(sizes, (list, tuple)) or not all(map(is_int, sizes)):
        return
    found = re.match(r"spinup\.algos\.(\w+)\.", str(ac_class))
    nets = _NETWORKS.get(found.group(1) if found else None, (2, 0))[0]
    if found and isinstance(state_dict, dict):
        held = sum(int(t.numel()) for t in state_dict.values() if hasattr(t, "numel"))
        wanted = nets * hidden_parameters(sizes)
        if wanted > held:
            raise ValueError(f"{path}: its ac_kwargs ask for hidden_sizes={list(sizes)}, at "
                             f"least {wanted:,} parameters, but its weights hold {held:,}; "
                             "the kwargs and the weights of the file disagree")
    need = nets * hidden_parameters(sizes) * _FLOAT_BYTES * 2
    avail = available_memory()
    if avail is not None and need > avail:
        raise ValueError(f"{path}: its ac_kwargs ask for hidden_sizes={list(sizes)}, which needs "
                         f"at least {_gigabytes(need)} to build ({nets} networks, 4 bytes per "
                         f"parameter, model and loaded weights) but only {_gigabytes(avail)} "
                         "of memory is available; the file is damaged or not meant for "
                         "this machine")


def check_workers(algo, num_workers, oversubscribe=False):
    """Refuse more worker processes (A3C's ``num_workers``) than there are cores,
    as ``--cpu`` is refused (see :func:`~spinup.utils.mpi_tools.check_num_cpu`).

    Raises:
        ValueError: ``num_workers`` exceeds the available cores and ``oversubscribe``
            is False.
    """
    if oversubscribe or not is_int(num_workers):
        return
    cores = mpi_tools.available_cores()
    if num_workers > cores:
        raise ValueError(f"{algo}: --num_workers {num_workers} asks for more worker processes "
                         f"than the {cores} CPU cores available here; use --num_workers {cores} "
                         "or less, or add --oversubscribe to start them anyway")


def run_algorithm(config):
    """The algorithm that wrote a run's ``config.json``, or ``None`` if it cannot be told.

    It is the ``_algorithm`` entry (recorded by :func:`check_args`); for runs from
    before that entry, the module of the default actor-critic
    (``spinup.algos.<algo>.core...``), with TRPO's ``algo='npg'`` as ``npg``.
    """
    import re
    if not isinstance(config, dict):
        return None
    if isinstance(config.get("_algorithm"), str):
        return config["_algorithm"]
    found = re.match(r"spinup\.algos\.(\w+)\.core\.", str(config.get("actor_critic", "")))
    if found is None:
        return None
    return "npg" if found.group(1) == "trpo" and config.get("algo") == "npg" else found.group(1)


def check_same_algorithm(algo, fn, run_dir, config):
    """Refuse to resume, with algorithm ``fn`` (named ``algo``), a run another algorithm wrote.

    Args:
        config (dict): the run's ``config.json``.

    Raises:
        ValueError: one line naming both algorithms (or, when the run does not
            say which algorithm wrote it, the arguments ``fn`` does not take).
    """
    other = run_algorithm(config)
    if other is None and isinstance(config, dict):
        params = inspect.signature(fn).parameters
        foreign = sorted(k for k in config
                         if k not in params and not k.startswith("_") and k != "exp_name")
        if foreign:
            raise ValueError(f"{algo}: cannot resume {run_dir}: its config.json has arguments "
                             f"that {algo} does not take ({', '.join(foreign)}), so another "
                             "algorithm wrote it; nothing was changed")
    elif other is not None and other != algo:
        raise ValueError(f"{algo}: cannot resume {run_dir}: it is a {other} run (its "
                         f"config.json says so), not a {algo} run; nothing was changed. Resume "
                         f"it with {other}: python -m spinup.run {other} --resume {run_dir}")


def check_resume_algorithm(algo, fn, logger_kwargs):
    """For ``logger_kwargs=dict(output_dir=D, resume=True)``: :func:`check_same_algorithm`
    on ``D/config.json``. Nothing is checked when it cannot be read (the logger then
    says that there is no run to resume)."""
    import json
    import os.path as osp
    if not isinstance(logger_kwargs, dict) or not logger_kwargs.get("resume"):
        return
    run_dir = logger_kwargs.get("output_dir")
    if not isinstance(run_dir, str):
        return
    try:
        with open(osp.join(run_dir, "config.json")) as f:
            config = json.load(f)
    except (OSError, ValueError):
        return
    check_same_algorithm(algo, fn, run_dir, config)


def check_data_dir(data_dir, default):
    """The base directory of runs: ``default`` for ``None``, ``~`` expanded.

    Raises:
        ValueError: ``data_dir`` is empty or not a path.
    """
    import os
    import os.path as osp
    if data_dir is None:
        data_dir = default
    if not isinstance(data_dir, (str, os.PathLike)) or not os.fspath(data_dir):
        raise ValueError(f"data_dir={data_dir!r} is not allowed: a directory path (leave "
                         f"--data_dir out for the default, {default})")
    return osp.expanduser(os.fspath(data_dir))


def check_run_name(exp_name):
    """Refuse an ``exp_name`` that is not one directory name inside ``data_dir``.

    Raises:
        ValueError: ``exp_name`` is not a string, is empty, ``.`` or ``..``, or holds
            a path separator (``a/b``, ``../escape``, ``/abs``) or a control character
            (NUL, newline, tab ...).
    """
    import os
    bad = (not isinstance(exp_name, str) or exp_name in ("", ".", "..") or min(exp_name) < " "
           or any(sep in exp_name for sep in filter(None, ("/", os.sep, os.altsep))))
    if bad:
        raise ValueError(f"exp_name={exp_name!r} is not allowed: a non-empty name without "
                         "'/' or control characters such as a newline (it becomes a "
                         "directory inside data_dir; choose the base directory with --data_dir)")


def check_name_lengths(exp_name, data_dir, names):
    """Refuse directory ``names`` (made from ``exp_name``, to be created under
    ``data_dir``) longer than the file system allows: ``PC_NAME_MAX`` of the nearest
    existing ancestor of ``data_dir``, 255 if it cannot say.

    Raises:
        ValueError: the first name whose UTF-8 length exceeds the limit.
    """
    import os
    import os.path as osp
    probe = osp.abspath(data_dir)
    while not osp.exists(probe) and osp.dirname(probe) != probe:
        probe = osp.dirname(probe)
    try:
        limit = os.pathconf(probe, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    for name in names:
        size = len(name.encode("utf-8", "surrogateescape"))
        if size > limit:
            short = exp_name if len(exp_name) <= 40 else exp_name[:37] + "..."
            raise ValueError(f"exp_name={short!r} ({len(exp_name)} characters) is not allowed: "
                             f"the directory name made from it would be {size} bytes and the "
                             f"file system allows {limit}; use a shorter --exp_name")

# ---- Non-finite rewards and observations, checked where they already sit in arrays ----

def env_label(algo, env):
    """``'<algo>: env <id>'`` for messages about data ``env`` produced (its spec's id,
    else its class name)."""
    spec = getattr(env, "spec", None)
    name = spec.id if spec is not None else type(getattr(env, "unwrapped", env)).__name__
    return f"{algo}: env {name}"


def _short(values):
    import numpy as np
    flat = np.asarray(values).ravel()
    text = np.array2string(flat[:6], precision=4, separator=", ")
    return text[:-1] + ", ...]" if flat.size > 6 else text


def check_finite_path(buf, path, last_val, obs=None, rew=None):
    """Refuse a trajectory holding NaN or infinite observations or rewards.

    Called by an on-policy buffer's ``finish_path`` (once per trajectory, on arrays),
    before the returns are computed, so the run stops at the step where the bad
    value appeared instead of failing epochs later inside ``torch.distributions``.

    Args:
        buf: the buffer, with optionally ``source`` (e.g. ``'ppo: env CartPole-v1'``,
            see :func:`env_label`).
        path (slice): the rows of the trajectory within the buffer.
        last_val (float): the value that closes the trajectory.
        obs, rew (numpy.ndarray): the buffer's observation and reward arrays
            (default: ``buf.obs_buf`` and ``buf.rew_buf``).

    Raises:
        ValueError: one line naming the env, the step (counted from the start
            of the epoch on this process) and whether the observation or the reward
            was not finite.
    """
    import numpy as np
    rew = (buf.rew_buf if rew is None else rew)[path]
    obs = (buf.obs_buf if obs is None else obs)[path]
    bad_rew = ~np.isfinite(rew)
    bad_obs = ~np.isfinite(obs.reshape(len(obs), -1)).all(axis=1)
    source = getattr(buf, "source", "the environment")
    if bad_rew.any() or bad_obs.any():
        i = int(np.argmax(bad_rew | bad_obs))
        step = path.start + i
        if bad_obs[i]:
            what = f"observation {_short(obs[i])} (the one the agent acted on at step {step}"
        else:
            what = f"reward ({rew[i]}) (at step {step}"
        raise ValueError(f"{source} returned a non-finite {what} of the current rollout, "
                         f"step {i} of the trajectory); rewards and observations must be "
                         "finite numbers")
    if not math.isfinite(float(last_val)):
        raise ValueError(f"{source}: the value closing the trajectory after step "
                         f"{path.stop - 1} of the current rollout is {float(last_val)}: the "
                         "observation after that step is not finite, or the value network "
                         "has diverged")


def check_finite_reward(rew, buf, step=None, obs=None, act=None):
    """Refuse a NaN or infinite reward (``math.isfinite``: cheap enough for every step).

    Args:
        rew (float): the reward.
        buf: the replay buffer, with optionally ``source`` (see :func:`env_label`).
        step (int): its replay slot, for the message.
        obs: the observation the agent acted on; when it is the non-finite one (the
            likely cause of the reward), the error names it instead.
        act: the action taken; when it is not finite, the policy produced it (a diverged
            network) and the env only passed it on, so the error says that instead.

    Raises:
        ValueError: one line naming the env (or the action) and, if given, the slot.
    """
    if not math.isfinite(rew):
        if obs is not None:
            check_finite_obs(obs, buf, step, where="stored in replay slot")
        import numpy as np
        if act is not None and not np.isfinite(np.asarray(act, dtype=np.float64)).all():
            at = "" if step is None else f" for replay slot {step}"
            raise ValueError(f"the agent's action{at} is not finite ({_short(act)}), and "
                             f"{getattr(buf, 'source', 'the environment')} answered it with "
                             f"the reward {rew}: the policy network has diverged (NaN or "
                             "infinite weights); lower the learning rates or check the "
                             "rewards' scale")
        source = getattr(buf, "source", "the environment")
        at = "" if step is None else f" at replay slot {step}"
        raise ValueError(f"{source} returned a non-finite reward ({rew}){at}; rewards and "
                         "observations must be finite numbers")


def check_finite_rows(obs, obs2, rows, buf):
    """Refuse a replay batch whose observations are NaN or infinite.

    Off-policy buffers call this on every sampled batch (a vectorised test of a few
    hundred numbers), so a bad observation stops the run before it reaches a loss.

    Args:
        obs, obs2 (numpy.ndarray): the batch's observations and next observations.
        rows (numpy.ndarray): their replay slots.
        buf: the replay buffer, with optionally ``source`` (e.g. ``'sac: env
            Pendulum-v1'``, see :func:`env_label`).

    Raises:
        ValueError: one line naming the env and the replay slot.
    """
    import numpy as np
    good = np.isfinite(obs.reshape(len(obs), -1)).all(axis=1)
    good2 = np.isfinite(obs2.reshape(len(obs2), -1)).all(axis=1)
    if good.all() and good2.all():
        return
    i = int(np.argmin(good & good2))
    source = getattr(buf, "source", "the environment")
    which, value = ("observation", obs[i]) if not good[i] else ("next observation", obs2[i])
    raise ValueError(f"{source} returned a non-finite {which} {_short(value)} (stored in "
                     f"replay slot {int(rows[i])}, i.e. env step {int(rows[i])} if the buffer "
                     "has not wrapped yet); rewards and observations must be finite numbers")


def check_finite_obs(obs, buf, step, where=None):
    """Refuse a NaN or infinite observation; nothing happens for a finite one.

    Called only after acting on ``obs`` failed (a categorical policy cannot sample
    from NaN logits), so that the error names the env and the step rather than
    ``torch.multinomial``.

    Args:
        obs: the observation the agent was to act on.
        buf: the algorithm's buffer, with optionally ``source`` (see :func:`env_label`).
        step (int): the step of the current rollout, for the message.
        where (str): how ``step`` is counted, if not in the current rollout (e.g.
            ``'stored in replay slot'``).

    Raises:
        ValueError: ``obs`` holds NaN or inf.
    """
    import numpy as np
    values = np.asarray(obs, dtype=np.float64)
    if not np.isfinite(values).all():
        source = getattr(buf, "source", "the environment")
        at = (f"{where} {step}" if where else
              f"the one the agent was to act on at step {step} of the current rollout")
        raise ValueError(f"{source} returned a non-finite observation {_short(values)} ({at}); "
                         "rewards and observations must be finite numbers")
