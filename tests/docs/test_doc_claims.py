"""Statements of the docs pages that the code can contradict, checked against the code.

A review of the pages (issue 28) found claims that had drifted from the code: the value
``StopIter`` takes when PPO never stops early, which action the ``test_policy`` command
takes, how often the "trajectory cut off by epoch" warning is printed, where DQN's n-step
sum ends, and the starting value of SAC's ``log_alpha``. Each test below reads the claim
from the page (or the pseudocode) and compares it with what the code does or defaults to,
so the next such drift fails here.
"""
import inspect
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

from spinup import ppo
from spinup.algos.dqn.dqn import ReplayBuffer
from spinup.utils import test_policy as tp

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def paragraphs(path):
    """Blocks of ``path`` separated by blank lines, each with its whitespace collapsed."""
    text = path.read_text(encoding="utf-8")
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", text) if block.strip()]


def all_pages():
    return sorted(DOCS.rglob("*.rst"))


# ---- PPO's StopIter ----

def stop_iter_row():
    """The description cell of the ``StopIter`` row in ppo.rst's progress.txt table."""
    text = (DOCS / "algorithms" / "ppo.rst").read_text(encoding="utf-8")
    start = text.index("* - ``StopIter``")
    end = text.index("* - ", start + 5)
    return " ".join(text[start:end].split())


def test_stop_iter_row_matches_a_run_that_never_stops(tmp_path):
    row = stop_iter_row()
    m = re.search(r"or ``([^`]+)`` (?:\([^)]*\) )?if it never did", row)
    assert m, f"ppo.rst StopIter row no longer says what a run without early stop logs: {row}"
    train_pi_iters = 3
    claimed = eval(m.group(1), {}, {"train_pi_iters": train_pi_iters})  # e.g. 'train_pi_iters'
    ppo(lambda: gym.make("CartPole-v1"), epochs=1, steps_per_epoch=100, train_pi_iters=3,
        train_v_iters=1, max_ep_len=50, target_kl=1e9, seed=0,
        ac_kwargs=dict(hidden_sizes=(8,)), logger_kwargs=dict(output_dir=str(tmp_path)))
    logged = pd.read_table(tmp_path / "progress.txt")["StopIter"].tolist()
    assert logged == [claimed], (logged, claimed)


def test_stop_iter_row_states_the_default():
    default = inspect.signature(ppo).parameters["train_pi_iters"].default
    m = re.search(r"\((\d+) by default\)", stop_iter_row())
    assert m and int(m.group(1)) == default


# ---- which action test_policy takes ----

def test_policy_cli_samples_unless_d_and_watch_policy_defaults_to_the_mode():
    args = tp._parser().parse_args(["somewhere"])
    assert args.deterministic is False
    assert tp._parser().parse_args(["somewhere", "-d"]).deterministic is True
    assert inspect.signature(tp.watch_policy).parameters["deterministic"].default is True
    assert inspect.signature(tp.load_policy_and_env).parameters["deterministic"].default is False


MODE_WORDS = re.compile(r"(?<![-_])\b(mode|most likely|mean action|argmax)\b", re.IGNORECASE)


@pytest.mark.parametrize("page", all_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_pages_tie_test_policys_mode_to_the_d_flag(page):
    """A paragraph saying ``test_policy`` acts with the mode must name ``-d``: the command
    samples by default."""
    for para in paragraphs(page):
        if "test_policy" in para and MODE_WORDS.search(para) and "deterministic=" not in para:
            assert re.search(r"``(?:test_policy )?-d``|--deterministic|watch_policy", para), \
                f"{page.name}: says test_policy acts deterministically without -d: {para[:200]}"


# ---- the cut-off warning ----

@pytest.mark.parametrize("algo", ["vpg", "ppo", "trpo"])
def test_cut_off_warning_is_once_per_run(algo):
    source = (ROOT / "spinup" / "algos" / algo / f"{algo}.py").read_text(encoding="utf-8")
    assert 'warn_once("cut_off"' in source
    text = " ".join((DOCS / "algorithms" / f"{algo}.rst").read_text(encoding="utf-8").split())
    sentences = re.findall(r"[^.]*cut off by epoch[^.]*\.", text)
    assert sentences, f"{algo}.rst no longer mentions the cut-off warning"
    for sentence in sentences:
        assert "per epoch" not in sentence and "once per run" in sentence, sentence


# ---- DQN's n-step sum ----

def test_n_step_sum_includes_the_newest_entry():
    buf = ReplayBuffer(obs_dim=1, size=10, gamma=0.5, n_step=5)
    for r in (1.0, 2.0, 4.0):  # three transitions, none ends an episode
        buf.store(np.zeros(1), 0, r, np.zeros(1), False, False)
    batch = buf.get(np.array([0]))
    assert batch["ret"].item() == pytest.approx(1.0 + 0.5 * 2.0 + 0.25 * 4.0)
    assert batch["disc"].item() == pytest.approx(0.5 ** 3)
    for path in (DOCS / "algorithms" / "dqn.rst", ROOT / "spinup" / "algos" / "dqn" / "dqn.py"):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert "before the newest" not in text, path.name


def test_dqn_priority_symbol_has_one_meaning():
    """``p_i`` is ``|delta| + eps`` in the math; the pseudocode must not raise it to alpha."""
    for path in (DOCS / "algorithms" / "dqn.rst", ROOT / "spinup" / "algos" / "dqn" / "dqn.py"):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert "+ per_eps)^per_alpha" not in text and "P(i) = p_i / Σ_k p_k" not in text, path


# ---- SAC's log_alpha ----

def test_sac_log_alpha_start_matches_the_code():
    source = (ROOT / "spinup" / "algos" / "sac" / "sac.py").read_text(encoding="utf-8")
    assert 'alpha_0 = 1.0 if alpha == "auto"' in source
    assert "np.log(alpha_0)" in source
    text = " ".join((DOCS / "algorithms" / "sac.rst").read_text(encoding="utf-8").split())
    assert "starts at 0 (:math:`\\alpha = 1`) for ``alpha='auto'``" in text


def test_sac_pendulum_claim_names_the_settings_of_the_runs_it_cites():
    """The -200 claim quotes benchmark runs made with ``--start_steps 1000``, not the default."""
    from spinup import sac
    assert inspect.signature(sac).parameters["start_steps"].default == 10000
    text = " ".join((DOCS / "algorithms" / "sac.rst").read_text(encoding="utf-8").split())
    claim = re.search(r"- ``TestEpRet``: .*?- ``EpLen``", text)
    assert claim and "−200" in claim.group(0), "sac.rst TestEpRet bullet moved"
    assert "``--start_steps 1000``" in claim.group(0)
    bench = " ".join((DOCS / "benchmarks" / "offpolicy.rst").read_text(encoding="utf-8").split())
    assert "--start_steps 1000" in bench
