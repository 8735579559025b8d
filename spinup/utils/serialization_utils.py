"""Turn configs into JSON (for ``config.json``) and back into Python objects."""
import importlib
import inspect
import json


def dotted_name(obj):
    """``module.QualName`` of a class or function, e.g. ``'torch.nn.modules.activation.Tanh'``."""
    return f"{obj.__module__}.{obj.__qualname__}"


def import_dotted(name):
    """Import the object named by a dotted path such as ``'torch.nn.Tanh'``.

    Raises:
        ImportError: the module or attribute does not exist.
    """
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
            return obj
        except AttributeError:
            break
    raise ImportError(f"cannot import {name!r}")


def convert_json(obj):
    """Convert ``obj`` to something ``json.dump`` accepts, keeping as much meaning as possible.

    Dicts, lists and tuples (tuples become lists) are converted recursively;
    classes and functions become their dotted name; lambdas a readable
    ``"<lambda> at file:line: source"`` string; other objects their attribute
    dict or, failing that, ``str(obj)``.
    """
    if isinstance(obj, dict):
        return {str(convert_json(k)): convert_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [convert_json(x) for x in obj]
    if is_json_serializable(obj):
        return obj
    if inspect.isclass(obj):
        return dotted_name(obj)
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        if obj.__name__ == "<lambda>":
            try:
                src = inspect.getsource(obj).strip()
            except (OSError, TypeError):
                src = ""
            return f"<lambda> {src}".strip()
        return dotted_name(obj)
    if hasattr(obj, "item") and callable(obj.item):  # numpy / torch scalars
        try:
            return obj.item()
        except (ValueError, RuntimeError):
            pass
    if hasattr(obj, "__dict__") and obj.__dict__:
        return {str(obj): convert_json({k: v for k, v in vars(obj).items()
                                        if not k.startswith("_")})}
    return str(obj)


def is_json_serializable(v):
    try:
        json.dumps(v, allow_nan=True)
        return True
    except (TypeError, ValueError, OverflowError):
        return False
