"""ExperimentGrid naming and variants against the spec's examples; setup_logger_kwargs."""
import os.path as osp

import pytest
import torch

from spinup.launch.run_utils import ExperimentGrid, setup_logger_kwargs


def test_setup_logger_kwargs_paths(tmp_path):
    kw = setup_logger_kwargs("exp", data_dir=str(tmp_path))
    assert kw == dict(output_dir=osp.join(str(tmp_path), "exp"), exp_name="exp")
    kw = setup_logger_kwargs("exp", seed=10, data_dir=str(tmp_path))
    assert kw["output_dir"] == osp.join(str(tmp_path), "exp", "exp_s10")
    kw = setup_logger_kwargs("exp", seed=10, data_dir=str(tmp_path), datestamp=True)
    outer, inner = kw["output_dir"].split(osp.sep)[-2:]
    assert outer.endswith("_exp") and len(outer) == len("YYMMDD_exp")
    assert inner.endswith("-exp_s10") and len(inner) == len("YYMMDD_HHMMSS-exp_s10")


def test_spec_ddpg_suffixes():
    # Spec: --hid[h] [300] [128,128] --act tanh relu  gives _h128128_acactrelu etc.
    # (the spec's rendering dropped upstream's '-' separators, which we keep).
    eg = ExperimentGrid()
    eg.add("ac_kwargs:hidden_sizes", [[300], [128, 128]], "h")
    eg.add("ac_kwargs:activation", [torch.nn.Tanh, torch.nn.ReLU])
    names = sorted("_" + eg.variant_name(v) for v in eg.variants())
    assert names == ["_h128-128_ac-actrelu", "_h128-128_ac-acttanh",
                     "_h300_ac-actrelu", "_h300_ac-acttanh"]
    assert sorted(n.replace("-", "") for n in names) == [
        "_h128128_acactrelu", "_h128128_acacttanh", "_h300_acactrelu", "_h300_acacttanh"]


def test_spec_ppo_ant_name_and_nesting():
    eg = ExperimentGrid(name="ppo_ant")
    eg.add("env_name", "Ant-v5")
    eg.add("clip_ratio", [0.1, 0.2])
    eg.add("ac_kwargs:hidden_sizes", [[32, 32], [64, 32]], "h")
    eg.add("ac_kwargs:activation", torch.nn.Tanh)
    eg.add("seed", [0, 10, 20])
    variants = eg.variants()
    assert len(variants) == 12
    v = variants[0]
    assert v["ac_kwargs"] == {"hidden_sizes": [32, 32], "activation": torch.nn.Tanh}
    assert eg.variant_name(v) == "ppo_ant_cli0-1_h32-32"   # seed never in the name
    kw = setup_logger_kwargs(eg.variant_name(v), seed=10, data_dir="path/to/data")
    assert kw["output_dir"] == "path/to/data/ppo_ant_cli0-1_h32-32/ppo_ant_cli0-1_h32-32_s10"


def test_in_name_bools_and_errors():
    eg = ExperimentGrid(name="g")
    eg.add("env_name", "CartPole-v1", "", True)
    eg.add("double", [True, False])
    names = [eg.variant_name(v) for v in eg.variants()]
    assert names == ["g_cartpole-v1_dou", "g_cartpole-v1"]
    with pytest.raises(ValueError, match="already"):
        eg.add("double", [True])
    bad = ExperimentGrid()
    bad.add("ac_kwargs", dict(hidden_sizes=[4]))
    bad.add("ac_kwargs:activation", torch.nn.ReLU)
    with pytest.raises(ValueError, match="given whole and ac_kwargs:activation sets one of"):
        bad.variants()
