"""Shared helpers for the exercise checkers: calling student code safely, running a
list of checks with readable messages, and printing the final verdict."""
import sys
import traceback


class Incorrect(Exception):
    """A check failed; the message tells the student what is wrong."""


def print_result(correct=False, message=""):
    """Print the final verdict of an exercise check (and ``message`` if given).

    Returns:
        ``correct`` (so ``sys.exit(0 if print_result(ok) else 1)`` reads well).
    """
    print("\n" + "=" * 60 + "\n")
    if correct:
        print("Congratulations! Your answer is correct.")
    else:
        print("Your answer appears to be incorrect. Try again!")
    if message:
        print("\n" + message)
    print("\n" + "=" * 60, flush=True)
    return correct


def call_student(fn, *args, name=None, **kwargs):
    """Call ``fn(*args, **kwargs)``; turn the usual ways of "not done yet" into
    :class:`Incorrect` with a helpful message.

    - ``NotImplementedError`` or a ``None`` result: the hole is not filled in.
    - any other exception: reported with its type, message and the failing line.
    """
    name = name or getattr(fn, "__qualname__", repr(fn))
    try:
        out = fn(*args, **kwargs)
    except NotImplementedError:
        raise Incorrect(f"you have not filled in {name} yet (it raises NotImplementedError): "
                        "look for 'YOUR CODE HERE'") from None
    except Incorrect:
        raise
    except Exception as e:  # the student's code crashed: show where
        tb = traceback.extract_tb(e.__traceback__)[-1]
        raise Incorrect(f"{name} raised {type(e).__name__}: {e}\n    at {tb.filename}:"
                        f"{tb.lineno}: {tb.line}") from None
    if out is None:
        raise Incorrect(f"you have not filled in {name} yet (it returns None): "
                        "look for 'YOUR CODE HERE'")
    return out


def require(cond, message):
    """Raise :class:`Incorrect` with ``message`` unless ``cond``."""
    if not cond:
        raise Incorrect(message)


def run_checks(title, checks, verbose=True):
    """Run ``checks``, a list of ``(description, fn)``; each ``fn()`` raises
    :class:`Incorrect` (or anything else) to fail. Every check runs, even after a
    failure, so the student sees the whole picture.

    Returns:
        ``(correct, messages)``: whether all passed, and the failure messages.
    """
    if verbose:
        print(f"\nChecking {title}\n")
    failures = []
    for desc, fn in checks:
        try:
            fn()
        except Incorrect as e:
            failures.append(f"{desc}: {e}")
            ok = False
        except Exception as e:  # a bug in student code not caught by call_student
            failures.append(f"{desc}: {type(e).__name__}: {e}")
            ok = False
        else:
            ok = True
        if verbose:
            print(f"  [{'ok' if ok else 'FAIL'}] {desc}")
            if not ok:
                print("         " + failures[-1][len(desc) + 2:].replace("\n", "\n         "))
    return not failures, failures


def finish(correct, message=""):
    """Print the verdict (plus ``message``) and exit with status 0 (correct) or 1."""
    print_result(correct, message)
    sys.exit(0 if correct else 1)
