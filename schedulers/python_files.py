"""Importing a Python file given by its path (a pybatsim scheduler file, a policy file), failures told in one line.

Imports :mod:`batreplay.schedulers.failures` (the one-line messages) and the standard library only.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

from batreplay.schedulers.failures import load_failure

_LOADED = itertools.count()


def import_python_file(path: str | Path, kind: str) -> ModuleType:
    """Import the file at ``path`` as a module of its own (registered in :data:`sys.modules` under a unique name
    ``batreplay_loaded_<kind>_<n>_<stem>``, as dataclasses and pickling need).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not an importable Python file.
        SchedulerLoadError (a ValueError): the file cannot be imported (SyntaxError, ImportError, any exception or
            exit while it runs); the message names the file and the line.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{kind} file not found: {path}")
    module_name = f"batreplay_loaded_{kind}_{next(_LOADED)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # a file that exits is a broken file too
        del sys.modules[module_name]
        raise load_failure(path, error) from error
    except BaseException:  # KeyboardInterrupt, a wall-clock limit: not the file's fault, pass unchanged
        del sys.modules[module_name]
        raise
    return module
