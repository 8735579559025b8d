"""EpochLogger statistics and files, config serialization, model save/load round trip."""
import json
import os

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

from spinup.utils.logx import EpochLogger, Logger
from spinup.machinery.serialization_utils import convert_json


def test_epoch_logger_stats_match_numpy(tmp_path, capsys):
    logger = EpochLogger(output_dir=str(tmp_path))
    vals = np.arange(10.0)
    for v in vals:
        logger.store(Test=v)
    logger.store(Arr=np.array([1.0, 2.0]))
    logger.store(Arr=np.array([3.0]))
    logger.log_tabular("Test", with_min_and_max=True)
    logger.log_tabular("Arr", average_only=True)
    row = dict(logger.log_current_row)
    logger.dump_tabular()
    assert row["AverageTest"] == pytest.approx(vals.mean())
    assert row["StdTest"] == pytest.approx(vals.std())
    assert (row["MaxTest"], row["MinTest"]) == (9, 0)
    assert row["Arr"] == pytest.approx(2.0)
    assert "AverageTest" in capsys.readouterr().out


def test_empty_key_logs_nan_and_table_is_flushed(tmp_path):
    logger = EpochLogger(output_dir=str(tmp_path))
    for epoch in range(2):
        if epoch == 0:
            logger.store(EpRet=1.0)
        logger.log_tabular("Epoch", epoch)
        logger.log_tabular("EpRet", with_min_and_max=True)
        logger.dump_tabular()
        # flushed at every dump: readable while the run goes on
        df = pd.read_table(tmp_path / "progress.txt")
        assert len(df) == epoch + 1
    assert list(df.columns) == ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet"]
    assert np.isnan(df["AverageEpRet"].iloc[1]) and df["AverageEpRet"].iloc[0] == 1.0


def test_new_key_after_first_row_is_a_clear_error(tmp_path):
    logger = Logger(output_dir=str(tmp_path))
    logger.log_tabular("A", 1)
    logger.dump_tabular()
    with pytest.raises(ValueError, match="new key B"):
        logger.log_tabular("B", 2)


def test_save_config_is_readable_json(tmp_path):
    logger = EpochLogger(output_dir=str(tmp_path), exp_name="cfg")
    logger.save_config(dict(hid=(64, 64), act=torch.nn.ReLU, fn=lambda: 3, seed=1,
                            nested=dict(t=(1, 2)), logger=logger))
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["hid"] == [64, 64] and cfg["nested"] == {"t": [1, 2]}
    assert cfg["act"] == "torch.nn.modules.activation.ReLU"
    assert cfg["fn"].startswith("<lambda>") and cfg["exp_name"] == "cfg"
    assert "logger" not in cfg
    assert convert_json((1, (2, 3))) == [1, [2, 3]]


def test_model_round_trip_weights_only(tmp_path):
    from spinup.algos.ppo.core import MLPActorCritic
    from spinup.utils.test_policy import load_policy_and_env
    env = gym.make("Pendulum-v1")
    kwargs = dict(hidden_sizes=[8, 8], activation=torch.nn.ReLU)
    ac = MLPActorCritic(env.observation_space, env.action_space, **kwargs)
    logger = EpochLogger(output_dir=str(tmp_path))
    logger.setup_pytorch_saver(ac, ac_kwargs=kwargs)
    logger.save_state({"env": env}, None)
    logger.save_state({"env": env}, itr=3)
    saved = torch.load(tmp_path / "pyt_save" / "model.pt", weights_only=True)
    assert saved["ac_class"] == "spinup.algos.ppo.core.MLPActorCritic"
    assert saved["ac_kwargs"]["activation"] == {"__dotted__": "torch.nn.modules.activation.ReLU"}
    assert not [f for f in os.listdir(tmp_path / "pyt_save") if ".tmp" in f]
    env2, get_action = load_policy_and_env(str(tmp_path), deterministic=True)
    assert env2.spec.id == "Pendulum-v1"
    o = np.random.randn(3).astype(np.float32)
    expected = ac.act(torch.as_tensor(o), deterministic=True)
    np.testing.assert_allclose(get_action(o), expected)
    _, get_action3 = load_policy_and_env(str(tmp_path), itr=3, deterministic=True)
    np.testing.assert_allclose(get_action3(o), expected)


def test_env_not_found_error(tmp_path):
    from spinup.utils.test_policy import run_policy
    with pytest.raises(RuntimeError, match="Environment not found"):
        run_policy(None, lambda o: 0)


def test_corrupted_model_is_one_clear_error(tmp_path):
    from conftest import run_cli
    (tmp_path / "pyt_save").mkdir()
    (tmp_path / "pyt_save" / "model.pt").write_text("garbage")
    proc = run_cli("test_policy", tmp_path, "-nr", check=False)
    assert proc.returncode == 1 and "corrupted" in proc.stderr
    assert "Traceback" not in proc.stderr


def _snapshot(directory):
    """{relative path: bytes} of every file under ``directory``."""
    return {p.relative_to(directory): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def test_logger_refuses_to_overwrite_a_finished_run(tmp_path):
    first = EpochLogger(output_dir=str(tmp_path), exp_name="one")
    first.save_config(dict(seed=0))
    first.log_tabular("Epoch", 0)
    first.dump_tabular()
    first.output_file.close()
    before = _snapshot(tmp_path)
    with pytest.raises(FileExistsError, match="--overwrite") as info:
        EpochLogger(output_dir=str(tmp_path), exp_name="two")
    assert "\n" not in str(info.value) and str(tmp_path) in str(info.value)
    assert _snapshot(tmp_path) == before  # nothing written before the refusal
    again = EpochLogger(output_dir=str(tmp_path), overwrite=True)
    again.log_tabular("Epoch", 5)
    again.dump_tabular()
    assert (tmp_path / "progress.txt").read_text() == "Epoch\n5\n"


def test_setup_logger_kwargs_passes_overwrite_only_when_set(tmp_path):
    from spinup.launch.run_utils import setup_logger_kwargs
    assert "overwrite" not in setup_logger_kwargs("e", 0, str(tmp_path))  # config.json unchanged
    kwargs = setup_logger_kwargs("e", 0, str(tmp_path), overwrite=True)
    assert kwargs["overwrite"] is True
    first = EpochLogger(**kwargs)
    first.log_tabular("Epoch", 0)   # a table without rows holds no run (run_dir.holds_run)
    first.dump_tabular()
    first.output_file.close()
    second = EpochLogger(**kwargs)  # allowed a second time
    second.log_tabular("Epoch", 0)
    second.dump_tabular()
    second.output_file.close()
    with pytest.raises(FileExistsError):
        EpochLogger(**setup_logger_kwargs("e", 0, str(tmp_path)))


def test_test_policy_summary_writes_nothing(tmp_path, monkeypatch):
    # run_policy used to create an EpochLogger without output_dir: /tmp/experiments/<time>/
    from spinup.utils import logx
    from spinup.utils.test_policy import run_policy
    made = []
    monkeypatch.setattr(logx.os, "makedirs", lambda *a, **k: made.append(a))
    summary = run_policy(gym.make("CartPole-v1"), lambda o: 0, num_episodes=2, render=False)
    assert made == [] and set(summary) == {"AverageEpRet", "StdEpRet", "MaxEpRet",
                                           "MinEpRet", "EpLen"}


def test_save_epoch_state_copies_the_latest_model_every_save_freq(tmp_path):
    from spinup.algos.ppo.core import MLPActorCritic
    env = gym.make("Pendulum-v1")
    ac = MLPActorCritic(env.observation_space, env.action_space, hidden_sizes=[4])
    logger = EpochLogger(output_dir=str(tmp_path))
    logger.setup_pytorch_saver(ac, ac_kwargs=dict(hidden_sizes=[4]))
    pyt = tmp_path / "pyt_save"
    for epoch in range(1, 6):
        with torch.no_grad():
            ac.pi.mu_net[0].bias.fill_(epoch)   # every epoch's model is different
        logger.save_epoch_state({"env": env}, epoch, save_freq=2)
        if epoch % 2 == 0:   # the snapshot is the latest model, byte for byte
            assert (pyt / f"model{epoch}.pt").read_bytes() == (pyt / "model.pt").read_bytes()
            assert (tmp_path / f"vars{epoch}.json").read_text() == \
                (tmp_path / "vars.json").read_text()
    assert sorted(os.listdir(pyt)) == ["model.pt", "model2.pt", "model4.pt"]
    assert sorted(f for f in os.listdir(tmp_path) if f.startswith("vars")) == \
        ["vars.json", "vars2.json", "vars4.json"]
    latest = torch.load(pyt / "model.pt", weights_only=True)
    snap = torch.load(pyt / "model4.pt", weights_only=True)
    key = next(k for k in latest["state_dict"] if k.endswith("mu_net.0.bias"))
    assert latest["state_dict"][key][0] == 5 and snap["state_dict"][key][0] == 4


def _probe(run_dir):
    """Run check_run_dir_free in another process; its stderr ('' when free)."""
    import subprocess
    import sys
    code = ("import sys; from spinup.machinery.run_dir import check_run_dir_free; "
            "check_run_dir_free(sys.argv[1])")
    return subprocess.run([sys.executable, "-c", code, str(run_dir)], capture_output=True,
                          text=True).stderr


def test_a_run_directory_belongs_to_one_live_logger(tmp_path):
    import gc
    from spinup.machinery.run_dir import LOCK_NAME
    logger = EpochLogger(output_dir=str(tmp_path / "run"))
    assert (tmp_path / "run" / LOCK_NAME).read_text() == f"{os.getpid()}\n"
    assert f"in use by another running process (pid {os.getpid()})" in _probe(tmp_path / "run")
    # a second logger of this process shares the claim (runs one after another)
    again = EpochLogger(output_dir=str(tmp_path / "run"), overwrite=True)
    del logger, again
    gc.collect()
    assert _probe(tmp_path / "run") == ""   # released with the last logger
    assert _probe(tmp_path / "never_made") == ""


def test_overwrite_clears_only_after_the_directory_is_claimed(tmp_path, monkeypatch):
    """Issue 44: the Logger checked the lock, cleared the directory, then took the lock, so
    two simultaneous --overwrite runs could both clear it. The claim now comes first, and a
    refused run gives it back."""
    from spinup.utils import logx
    from spinup.machinery import run_dir
    out = str(tmp_path / "run")
    first = logx.EpochLogger(output_dir=out)
    first.log_tabular("Epoch", 0)
    first.dump_tabular()
    del first
    seen = []
    from spinup.machinery import record
    real_clear = record._clear_run
    monkeypatch.setattr(record, "_clear_run", lambda d, name: (
        seen.append(run_dir._lock_path(d) in run_dir._held_locks), real_clear(d, name)))
    with pytest.raises(FileExistsError):
        logx.EpochLogger(output_dir=out)   # refused: the claim is dropped again
    assert run_dir._lock_path(out) not in run_dir._held_locks
    assert not (tmp_path / "run" / run_dir.LOCK_NAME).exists()
    logx.EpochLogger(output_dir=out, overwrite=True)
    assert seen == [True]
