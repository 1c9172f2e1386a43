"""Scheduler registry: the project's schedulers by name, and loading of any pybatsim scheduler file."""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import sys
from pathlib import Path
from typing import Any

from batsim.batsim import BatsimScheduler

from batreplay.schedulers.conservative import Conservative
from batreplay.schedulers.easy import Easy
from batreplay.schedulers.fcfs import Fcfs

_LOADED = itertools.count()

#: The project's schedulers, by the name used on the command line and in campaign files.
SCHEDULERS: dict[str, type[BatsimScheduler]] = {
    "fcfs": Fcfs,
    "easy": Easy,
    "conservative": Conservative,
}


def scheduler_class_name(path: str | Path) -> str:
    """The class pybatsim's launcher expects in a scheduler file: the file's stem with its first letter
    upper-cased (``myScheduler.py`` -> ``MyScheduler``)."""
    stem = Path(path).stem
    return stem[:1].upper() + stem[1:]


def load_scheduler_class(path: str | Path) -> type[BatsimScheduler]:
    """Import a pybatsim scheduler file (by path, with :mod:`importlib`) and return its scheduler class, named
    as :func:`scheduler_class_name` says.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file has no such class, or it is not a ``BatsimScheduler`` subclass.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"scheduler file not found: {path}")
    class_name = scheduler_class_name(path)
    module_name = f"batreplay_loaded_scheduler_{next(_LOADED)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ValueError(f"{path}: no class named {class_name!r} (pybatsim expects the file name, capitalised)")
    if not (inspect.isclass(cls) and issubclass(cls, BatsimScheduler)):
        raise ValueError(f"{path}: {class_name} is not a pybatsim BatsimScheduler subclass")
    return cls


def load_scheduler(name_or_path: str | Path, options: dict[str, Any] | None = None) -> BatsimScheduler:
    """A new scheduler instance, from a registry name (see :data:`SCHEDULERS`) or a path to a pybatsim scheduler
    file (a ``.py`` file, or any existing file path containing a directory separator).

    Args:
        name_or_path: ``"fcfs"``, ``"easy"``, ``"conservative"`` or a file path.
        options: passed to the scheduler's constructor (pybatsim's options dict); ``{}`` by default.

    Raises:
        ValueError: an unknown name (the message lists the known ones), or a file without a suitable class.
        FileNotFoundError: a path that does not exist.
    """
    options = {} if options is None else dict(options)
    text = str(name_or_path)
    if text in SCHEDULERS:
        return SCHEDULERS[text](options)
    if isinstance(name_or_path, Path) or text.endswith(".py") or "/" in text or "\\" in text:
        return load_scheduler_class(text)(options)
    known = ", ".join(sorted(SCHEDULERS))
    raise ValueError(f"unknown scheduler {text!r}: known names are {known}, or give the path of a pybatsim scheduler file")
