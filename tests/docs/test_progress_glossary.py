"""Every column an algorithm writes to progress.txt is explained on its docs page.

Each algorithm runs one tiny epoch through the Python API; the header of its
``progress.txt``, with the ``Average``/``Std``/``Max``/``Min`` prefixes removed, gives
the column names. Each must appear as an inline literal (````Name````) inside the
page's section titled "Reading progress.txt". The page must also have a section
titled "Implementation details".
"""
import re
from pathlib import Path

import docutils.core
import docutils.nodes
import gymnasium as gym
import pandas as pd
import pytest

import spinup

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "algorithms"
SMALL_NET = dict(hidden_sizes=(8,))
OFF_POLICY = dict(steps_per_epoch=120, start_steps=40, update_after=40, update_every=40,
                  batch_size=16, num_test_episodes=1, max_ep_len=60, ac_kwargs=SMALL_NET)
# algorithm -> (environment, keyword arguments for one tiny epoch)
RUNS = {
    "vpg": ("CartPole-v1", dict(steps_per_epoch=120, train_v_iters=2, max_ep_len=60)),
    "trpo": ("CartPole-v1", dict(steps_per_epoch=120, train_v_iters=2, max_ep_len=60,
                                 cg_iters=2)),
    "ppo": ("CartPole-v1", dict(steps_per_epoch=120, train_pi_iters=2, train_v_iters=2,
                                max_ep_len=60)),
    "a2c": ("CartPole-v1", dict(steps_per_epoch=120, n_steps=20, max_ep_len=60)),
    "a3c": ("CartPole-v1", dict(steps_per_epoch=40, num_workers=1, n_steps=10,
                                num_test_episodes=1, max_ep_len=60)),
    "ddpg": ("Pendulum-v1", OFF_POLICY),
    "td3": ("Pendulum-v1", OFF_POLICY),
    "sac": ("Pendulum-v1", OFF_POLICY),
    "dqn": ("CartPole-v1", dict(OFF_POLICY, update_every=2, target_update_every=20)),
}
PREFIX = re.compile(r"^(Average|Std|Max|Min)(?=[A-Z])")


def columns(algo, out_dir):
    """The progress.txt column names of one tiny epoch of ``algo``, prefixes stripped."""
    env_id, kwargs = RUNS[algo]
    kwargs = dict(kwargs)
    kwargs.setdefault("ac_kwargs", SMALL_NET)
    getattr(spinup, algo)(lambda: gym.make(env_id), seed=0, epochs=1,
                          logger_kwargs=dict(output_dir=str(out_dir)), **kwargs)
    header = pd.read_table(Path(out_dir) / "progress.txt").columns
    return sorted({PREFIX.sub("", name) for name in header})


def sections(algo):
    """``{title: section node}`` of the page ``docs/algorithms/<algo>.rst``."""
    text = (PAGES / f"{algo}.rst").read_text(encoding="utf-8")
    tree = docutils.core.publish_doctree(
        text, settings_overrides=dict(report_level=5, halt_level=5, warning_stream=False))
    found = {}
    for sec in tree.findall(docutils.nodes.section):
        found.setdefault(sec.next_node(docutils.nodes.title).astext().strip(), sec)
    return found


@pytest.mark.parametrize("algo", list(RUNS))
def test_page_has_implementation_details(algo):
    assert "Implementation details" in sections(algo), \
        f"docs/algorithms/{algo}.rst has no section titled 'Implementation details'"


@pytest.mark.parametrize("algo", list(RUNS))
def test_every_logged_column_is_explained(algo, tmp_path):
    found = sections(algo)
    assert "Reading progress.txt" in found, \
        f"docs/algorithms/{algo}.rst has no section titled 'Reading progress.txt'"
    literals = {node.astext().strip()
                for node in found["Reading progress.txt"].findall(docutils.nodes.literal)}
    missing = [name for name in columns(algo, tmp_path) if name not in literals]
    assert not missing, (f"docs/algorithms/{algo}.rst, 'Reading progress.txt': no ``Name`` "
                         f"entry for columns {missing}")
