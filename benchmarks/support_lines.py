"""Count the lines of each algorithm file that are support code, not the algorithm.

Issue 44 asks that no algorithm file hold more than 45 lines that are not the
algorithm. This script makes the count reproducible. A line counts as support when
it belongs to a statement (its whole extent: continuation lines too) that uses one of
the support mechanisms below; for a compound statement (``with``, ``try``, ``if``,
``for``) only its header lines count, and its body is judged statement by statement.
Docstrings, comments and blank lines never count.

Support mechanisms: the door into the machinery (``spinup.machinery.door``): its import,
every name imported from it and the ``run`` object it hands out; imports of ``spinup.utils``;
argument rules (``ARG_RULES``,
``SPACES``, ``check_args``); making, recording and closing envs (``make_env``,
``recorded``, ``closing``, ``.close()``); thread and MPI setup (``torch_threads``,
``setup_pytorch_for_mpi``); device placement (``Placement``, ``resolve_device``,
``placed``); checkpoints (``Checkpoint``, ``ckpt``, ``load_checkpoint``,
``save_checkpoint``, ``run_dir``, ``resuming``, and the whole of a local
``checkpoint_state`` or ``restore`` function, as earlier versions had); error reports and finite checks
(``report_env_step_error``, ``check_finite_*``, ``env_label``, ``except``). Usage::

    python benchmarks/support_lines.py [FILE ...]   # default: the nine algorithm files
"""
import ast
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SUPPORT = re.compile(
    r"\b(ARG_RULES|SPACES|check_args|make_env|recorded|closing|torch_threads|RUN_THREADS|"
    r"setup_pytorch_for_mpi|Placement|resolve_device|placed|Checkpoint|ckpt|"
    r"load_checkpoint|save_checkpoint|run_dir|resuming|report_env_step_error|"
    r"check_finite_\w+|env_label|except|run)\b|\.close\(\)|from spinup\.(utils|machinery)")


def machinery_names(tree):
    """The names a module imports from ``spinup.machinery`` (the door and what is behind it)."""
    return {alias.asname or alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("spinup.machinery")
            for alias in node.names}


# Local functions that only save or restore a run (the closures of earlier versions).
SUPPORT_FUNCTIONS = {"checkpoint_state", "restore"}


def docstring_lines(node):
    """Line numbers of ``node``'s docstring (empty if it has none)."""
    first = node.body[0] if node.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return set(range(first.lineno, first.end_lineno + 1))
    return set()


def support_lines(path):
    """The set of line numbers of ``path`` that are support code (rule above)."""
    source = open(path).read()
    lines = source.splitlines()
    found = set()
    tree = ast.parse(source)
    names = machinery_names(tree)
    door = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b") if names else None

    def support(text):
        return SUPPORT.search(text) or (door is not None and door.search(text))

    def visit(body):
        for node in body:
            if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                continue  # a docstring
            if isinstance(node, ast.FunctionDef) and node.name in SUPPORT_FUNCTIONS:
                found.update(n for n in range(node.lineno, node.end_lineno + 1)
                             if lines[n - 1].strip() and not lines[n - 1].strip().startswith(
                                 ("#", '"""')) and n not in docstring_lines(node))
                continue
            inner = [getattr(node, name) for name in ("body", "orelse", "finalbody")
                     if isinstance(getattr(node, name, None), list)]
            inner += [h.body for h in getattr(node, "handlers", [])]
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) or inner:
                first_inner = min((b[0].lineno for b in inner if b), default=node.end_lineno + 1)
                header = range(node.lineno, first_inner)
                for b in inner:
                    visit(b)
                for h in getattr(node, "handlers", []):  # an except clause is support
                    found.add(h.lineno)
            else:
                header = range(node.lineno, node.end_lineno + 1)
            decorators = [d.lineno for d in getattr(node, "decorator_list", [])]
            for number in list(header) + decorators:
                text = lines[number - 1].split("#")[0]
                if text.strip() and support(" ".join(
                        lines[n - 1].split("#")[0] for n in header) if not inner and not
                        isinstance(node, (ast.FunctionDef, ast.ClassDef)) else text):
                    found.add(number)

    visit(tree.body)
    return found


def default_files():
    """The algorithm files of this checkout (core, worker and package files aside)."""
    return sorted(p for p in glob.glob(os.path.join(ROOT, "spinup", "algos", "*", "*.py"))
                  if not p.endswith(("core.py", "__init__.py", "workers.py")))


def main(argv=None):
    sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    from benchmarks import _cli
    parser = _cli.parser(__file__, __doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="Python files to count (default: the algorithm files of this "
                             "checkout, whatever the current folder)")
    args = parser.parse_args(argv)
    paths = args.files or default_files()
    if not paths:
        parser.error(f"no algorithm files under {os.path.join(ROOT, 'spinup', 'algos')}")
    for path in paths:
        try:
            count = len(support_lines(path))
        except OSError as error:
            parser.error(f"{path}: {error.strerror}")
        except (SyntaxError, UnicodeDecodeError, ValueError) as error:
            parser.error(f"{path}: not a Python file ({error.__class__.__name__})")
        print(f"{count:4d}  {path if args.files else os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
