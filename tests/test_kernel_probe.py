"""benchmarks/kernel_probe.py names the torch operations that make two runs differ
(issue 42: which kernel makes the first epochs differ across CPUs)."""
import os.path as osp

from conftest import load_benchmark

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


def test_compare_names_the_op_that_introduces_a_difference():
    probe = load_benchmark("kernel_probe")
    a = [["aten.mm", "i1", "o1"], ["aten.softplus", "i2", "o2"], ["aten.add", "o2", "o3"],
         ["aten.tanh", "i4", "o4"]]
    b = [["aten.mm", "i1", "o1"], ["aten.softplus", "i2", "X2"], ["aten.add", "X2", "X3"],
         ["aten.tanh", "i4", "o4"]]
    introduced, n, first = probe.compare(a, b)
    # add's output differs too, but only because its input did: softplus is the cause
    assert dict(introduced) == {"aten.softplus": 1} and n == 4 and first == 1
    assert probe.compare(a, a) == ({}, 4, None)
    # where the two runs take other paths, nothing after the fork is compared
    introduced, n, first = probe.compare(a, a[:2] + [["aten.mul", "o2", "o5"]] + a[3:])
    assert n == 2 and first is None


def test_two_runs_with_the_same_settings_are_identical(capsys):
    # Uninitialised memory (empty, set_) must not count as a difference.
    probe = load_benchmark("kernel_probe")
    assert probe.main(["--algo", "sac", "--steps", "120", "--set", "SPINUP_UNUSED=1"]) == 0
    assert "identical" in capsys.readouterr().out
