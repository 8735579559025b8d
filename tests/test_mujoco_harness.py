"""The command line of ``benchmarks/mujoco.py`` (issue 45): its messages name only what
the subcommand accepts, a --data_dir to read must exist, and every --help documents its
options. Nothing here trains: the grid launcher's processes are replaced by stand-ins."""
import argparse
import json
import os.path as osp
import re
import subprocess
import sys

import pytest

from conftest import load_benchmark

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
SCRIPT = osp.join(ROOT, "benchmarks", "mujoco.py")


def _subparsers(harness):
    parser = harness.build_parser()
    return next(a for a in parser._actions
                if isinstance(a, argparse._SubParsersAction)).choices


def _unaccepted(text, subparser):
    """The ``--options`` that ``text`` names and ``subparser`` does not take."""
    accepted = {s for a in subparser._actions for s in a.option_strings}
    return set(re.findall(r"(?<![\w-])--[a-z][\w-]*", text)) - accepted


# One run of the protocol (VPG, Hopper, seed 0), nothing committed: the run goes to the
# grid launcher.
ONE_RUN = ["run", "--part", "onpolicy", "--algos", "vpg", "--envs", "Hopper", "--seeds", "0",
           "--jobs", "1"]


@pytest.fixture
def harness(tmp_path, monkeypatch):
    module = load_benchmark("mujoco")
    monkeypatch.setattr(module, "RUNS_DIR", str(tmp_path / "committed"))
    return module


class _Handle:
    """Stands in for the grid launcher's experiment process: ``start`` raises
    ``raise_on_start`` if given; ``poll`` says the process ended with ``code``."""
    raise_on_start, code, started = None, 0, True

    def __init__(self, *args, **kwargs):
        pass

    def start(self):
        if self.raise_on_start is not None:
            raise self.raise_on_start

    def poll(self):
        return self.code

    def interrupt(self):
        pass

    def kill(self):
        pass


def _run_with_handle(harness, monkeypatch, capsys, data, **behaviour):
    from spinup.launch import grid_launch
    monkeypatch.setattr(grid_launch, "_LocalHandle", type("Handle", (_Handle,), behaviour))
    monkeypatch.setattr(grid_launch, "POLL_SECONDS", 0)
    argv = ONE_RUN + ["--data_dir", data]
    code = harness.main(argv)
    out = capsys.readouterr().out
    return code, out, "python benchmarks/mujoco.py " + " ".join(argv)


def test_interrupted_run_names_the_command_that_continues_it(harness, tmp_path, monkeypatch,
                                                             capsys):
    """Ctrl-C during ``run``: the advice was the launcher's "the same command and
    --resume", an option ``run`` refuses; it is now the command line itself."""
    from spinup.launch.grid_launch import Interrupted
    code, out, command = _run_with_handle(harness, monkeypatch, capsys, str(tmp_path / "d"),
                                          raise_on_start=Interrupted(), code=130)
    assert code == 130
    assert "--resume" not in out
    assert "Continue with the same command" in out and command in out
    assert out.rstrip().endswith(
        f"mujoco: interrupted; the same command continues where the runs stopped: {command}")
    assert not _unaccepted(out, _subparsers(harness)["run"])


def test_failed_run_names_the_command_that_continues_it(harness, tmp_path, monkeypatch,
                                                        capsys):
    """A variant that fails: the launcher's advice ("the same command with --resume")
    becomes the command line to give again."""
    code, out, command = _run_with_handle(harness, monkeypatch, capsys, str(tmp_path / "d"),
                                          code=1)
    assert code == 1
    assert "--resume" not in out
    assert f"the same command continues it: {command}" in out
    assert "mujoco: 1 variant(s) of the grid failed" in out
    assert not _unaccepted(out, _subparsers(harness)["run"])


@pytest.mark.parametrize("seed_in_config", [0, 7])
def test_run_that_cannot_continue_names_no_foreign_option(harness, tmp_path, capsys,
                                                          seed_in_config):
    """A run in --data_dir with epochs logged but no checkpoint (or started with other
    arguments) cannot be continued: the refusal said to give a new --exp_name (or that
    only --epochs may change), options of spinup.run that ``run`` lacks."""
    data = tmp_path / "d"
    run_dir = data / "vpg_hopper-v5" / "vpg_hopper-v5_s0"
    run_dir.mkdir(parents=True)
    (run_dir / "progress.txt").write_text("Epoch\tAverageEpRet\n1\t1.0\n2\t2.0\n")
    (run_dir / "config.json").write_text(json.dumps(
        {"_algorithm": "vpg", "seed": seed_in_config, "env_fn": "gym.make('Hopper-v5')"}))
    assert harness.main(ONE_RUN + ["--data_dir", str(data)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"mujoco: {run_dir} ") and out.count("\n") == 1
    assert "move that directory out of --data_dir (or delete it)" in out.lower()
    assert not _unaccepted(out, _subparsers(harness)["run"]), out
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.json", "progress.txt"]


def test_run_jobs_above_the_cores_names_no_foreign_option(harness, tmp_path, capsys):
    """``run --jobs N`` above the cores: the launcher suggested --cpu and --oversubscribe,
    which ``run`` does not take; now the refusal is the harness's, before anything runs."""
    data = tmp_path / "d"
    argv = ONE_RUN[:-1] + ["999", "--data_dir", str(data)]
    assert harness.main(argv) == 1
    out = capsys.readouterr().out
    assert out.startswith("mujoco: run: --jobs 999 is more than the ") and out.count("\n") == 1
    assert not _unaccepted(out, _subparsers(harness)["run"])
    assert not data.exists()


def test_refusal_to_overwrite_is_worded_for_the_harness(harness, tmp_path):
    """The logger's refusal of a directory that holds a run (reached by the experiments
    that train, tfinit for one) names only --data_dir once reworded."""
    from spinup.machinery.run_dir import refusal_to_overwrite
    (tmp_path / "progress.txt").write_text("Epoch\n1\n")
    text = harness.in_harness_terms(refusal_to_overwrite(str(tmp_path / "progress.txt")),
                                    "python benchmarks/mujoco.py tfinit")
    assert "refusing to overwrite it" in text and "--data_dir" in text
    assert not _unaccepted(text, _subparsers(harness)["tfinit"]), text


def test_messages_written_by_the_harness_name_only_accepted_options(harness):
    """Every ``--option`` that a string of a subcommand's function names (its messages:
    text with spaces; docstrings, pip's command lines and their items aside) is one the
    subcommand takes."""
    import ast
    subs = _subparsers(harness)
    with open(SCRIPT) as f:
        tree = ast.parse(f.read())
    for fn in tree.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name[4:] in subs
                and fn.name.startswith("cmd_")):
            continue
        docstrings = {id(node.body[0].value) for node in ast.walk(fn)
                      if isinstance(node, (ast.FunctionDef, ast.ClassDef))
                      and ast.get_docstring(node) is not None}
        for node in ast.walk(fn):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and " " in node.value and id(node) not in docstrings):
                text = re.sub(r"pip install .*", "", node.value)
                assert not _unaccepted(text, subs[fn.name[4:]]), (fn.name, node.value)


@pytest.mark.parametrize("kind", ["missing", "file"])
@pytest.mark.parametrize("command", ["collect", "sb3"])
def test_data_dir_to_read_must_be_a_directory(harness, tmp_path, capsys, kind, command):
    """``collect --data_dir /does/not/exist`` reported "0 new finished run(s)" with exit
    0; a --data_dir that a subcommand reads must now be a directory: one line on stderr,
    exit 2, nothing written."""
    data = tmp_path / "nowhere"
    if kind == "file":
        data.write_text("")
    with pytest.raises(SystemExit) as info:
        harness.main([command, "--data_dir", str(data)])
    captured = capsys.readouterr()
    assert info.value.code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"mujoco {command}: --data_dir {data} ")
    assert ("is not a directory" if kind == "file" else "does not exist") in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["nowhere"] if kind == "file" else [])


def test_data_dir_check_as_a_script(tmp_path):
    """The same from the shell: exit status 2 and one line on stderr."""
    proc = subprocess.run([sys.executable, SCRIPT, "collect", "--data_dir",
                           str(tmp_path / "missing")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"mujoco collect: --data_dir {tmp_path / 'missing'} does not exist\n"


def test_subcommands_that_create_the_data_dir_do_not_require_it(harness, tmp_path, capsys):
    """``run`` (like the experiments that train) makes its --data_dir: a missing one is
    no error of its own."""
    assert harness.main(["run", "--scale", "spec", "--part", "long",
                         "--data_dir", str(tmp_path / "new")]) == 1
    assert "selects no run" in capsys.readouterr().out


def _option_blocks(text):
    """Each option of a ``--help`` text: its first option string -> its entry, one line."""
    blocks, current = {}, None
    for line in text.split("\noptions:\n", 1)[1].splitlines():
        if line.startswith("  -"):
            current = line.split()[0].rstrip(",")
            blocks[current] = line
        elif current is not None:
            blocks[current] += " " + line
    return {k: " ".join(v.split()) for k, v in blocks.items()}


def test_every_subcommand_help_describes_it_and_its_options(harness, capsys):
    """Each subcommand's --help had no description and options without help or defaults:
    now it has a description, every option a help text, and each option with a default
    shows it."""
    subs = _subparsers(harness)
    assert set(subs) == set(harness.COMMANDS)
    for command, sub in subs.items():
        with pytest.raises(SystemExit) as info:
            harness.main([command, "--help"])
        assert info.value.code == 0
        text = capsys.readouterr().out
        assert sub.description, command
        words = " ".join(sub.description.split()[:6])
        assert words in " ".join(text.split()), (command, words)
        blocks = _option_blocks(text)
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue        # --help itself, and old names kept for old commands
            key = action.option_strings[0]
            assert action.help, (command, key)
            assert key in blocks, (command, key)
            assert " ".join(action.help.split()[:4]) in blocks[key], (command, key)
            if action.default not in (None, False):
                assert "(default: " in blocks[key], (command, key, blocks[key])
