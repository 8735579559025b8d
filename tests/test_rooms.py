"""The shape of the code (issue 54, docs/dev/rooms.rst): three rooms whose imports run one way,
no import circle, one door from an algorithm into the machinery, reading sets near Spinning
Up's and algorithm files that read as their pseudocode.

The import graph is read from the source (``ast``: module-level imports and those inside
functions alike), as ``../shared/tools/reading-set`` reads it.
"""
import ast
import importlib.util
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
ALGOS = "vpg trpo ppo ddpg td3 sac dqn a2c a3c".split()
ON_POLICY = {"vpg", "trpo", "ppo", "a2c", "a3c"}
#: The teaching core: what an algorithm may import besides its own files and the door.
TEACHING_CORE = {"spinup.utils.logx", "spinup.utils.mpi_tools", "spinup.utils.mpi_pytorch",
                 "spinup.utils.torch_tools", "spinup.utils.advantages"}
DOOR = "spinup.machinery.door"
#: The one circle allowed: an exercise and its solution import each other on purpose.
EXERCISE_PAIR = {"spinup.exercises.problem_set_1.exercise1_2_auxiliary",
                 "spinup.exercises.problem_set_1_solutions.exercise1_2_soln"}


def _modules():
    found = {}
    for path in (ROOT / "spinup").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def imports_of(name):
    """The spinup modules that module ``name`` imports (a package's ``__init__`` only when it
    is imported by name)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    found.add(f"{base}.{alias.name}")
                elif base in MODULES and MODULES[base].name != "__init__.py":
                    found.add(base)
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def _circles():
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(part)

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle():
    """Issue 54: four circles (arg_checks -> run_dir -> checkpoint -> serialization_utils ->
    arg_checks; grid_launch <-> ray_launch; mpi_tools <-> run_entrypoint) are gone."""
    circles = [sorted(c) for c in _circles() if c != EXERCISE_PAIR]
    assert circles == []


def room(name):
    if name in TEACHING_CORE:
        return "core"
    if name.startswith("spinup.machinery."):
        return "machinery"
    if name.startswith("spinup.launch.") or name == "spinup.run":
        return "launch"
    return None


@pytest.mark.parametrize("name", sorted(n for n in MODULES if room(n) in ("core", "machinery")))
def test_imports_run_one_way(name):
    """launch -> machinery -> teaching core: the machinery never imports a launcher, and the
    teaching core imports no machinery module but the door (the logger's files go through it)."""
    rooms = {other: room(other) for other in GRAPH[name]}
    if room(name) == "machinery":
        assert [o for o, r in rooms.items() if r == "launch"] == []
    else:
        assert [o for o, r in rooms.items() if r == "launch"] == []
        assert [o for o, r in rooms.items() if r == "machinery" and o != DOOR] == []


def reading_set(algo):
    """The files a student reads to follow ``algo`` (the walk of ../shared/tools/reading-set
    with ``--machinery spinup/machinery``): name -> lines, and the machinery modules entered."""
    seen, doors, todo = {}, set(), [f"spinup.algos.{algo}.{algo}"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen[name] = len(MODULES[name].read_text().splitlines())
        if name.startswith("spinup.machinery."):
            doors.add(name)
            continue
        todo.extend(GRAPH[name])
    return seen, doors


@pytest.mark.parametrize("algo", ALGOS)
def test_reading_set(algo):
    """PPO's reading set stays within 1,700 lines (Spinning Up's: 1,640), every algorithm's
    within 2,000, and the machinery is entered through the door alone."""
    seen, doors = reading_set(algo)
    assert doors == {DOOR}, f"{algo} enters the machinery through {sorted(doors)}"
    assert set(seen) - {DOOR} <= TEACHING_CORE | {n for n in seen if n.startswith(
        f"spinup.algos.{algo}.")}
    assert sum(seen.values()) <= (1700 if algo == "ppo" else 2000), seen


def test_the_door_is_short():
    assert len(MODULES[DOOR].read_text().splitlines()) <= 200


def _support_lines():
    spec = importlib.util.spec_from_file_location("support_lines",
                                                  ROOT / "benchmarks" / "support_lines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.support_lines


@pytest.mark.parametrize("algo", ALGOS)
def test_algorithm_files_read_as_pseudocode(algo):
    """At most 21 lines that are not the algorithm in an on-policy file, 35 in an off-policy
    one (benchmarks/support_lines.py counts them; 21 since run.epoch_end)."""
    lines = _support_lines()(os.fspath(MODULES[f"spinup.algos.{algo}.{algo}"]))
    assert len(lines) <= (21 if algo in ON_POLICY else 35)
