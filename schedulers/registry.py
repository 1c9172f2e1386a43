"""Scheduler registry: the project's schedulers by name, and loading of any pybatsim scheduler file.

The scheduler names are defined once, in the light module :mod:`batreplay.schedulers.names` (it imports neither
pybatsim nor the schedulers, so that the command line's help and argument checks stay fast); this module builds
:data:`SCHEDULERS` and :data:`FAMILY` from it, and the documentation reads :func:`describe`. Adding a scheduler
takes one file and one line there, for instance ``schedulers/random_order.py`` defining
``class RandomOrder(PolicyScheduler)`` (a ``policy_class`` and an ``OPTIONS`` dict), then, in
:data:`~batreplay.schedulers.names.OTHER_SCHEDULERS`,
``"random-order": "batreplay.schedulers.random_order:RandomOrder",`` (its one-line description is the first line of
its docstring); a member of the backfilling family needs no file at all, only a line in
:data:`~batreplay.schedulers.names.FAMILY_MEMBERS` such as ``"easy-xyz": ("xyz", 1, None),`` once ``xyz`` is in
:data:`~batreplay.schedulers.queue_order.ORDERS`.

Options: each built-in scheduler declares the options it reads in a class attribute ``OPTIONS``
(``{name: (default, short doc)}``); :func:`load_scheduler` refuses any other key and fills in the defaults, for
the command line (``--scheduler-options``) and campaigns alike. A scheduler file gets its options unchecked, as
pybatsim's launcher passes them: it reads what it likes from ``self.options``.

Failures of a scheduler file (SyntaxError, ImportError, an exception or ``sys.exit`` while it is imported or
built) are one-line :class:`~batreplay.schedulers.failures.SchedulerLoadError` naming the file and the line.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from batsim.batsim import BatsimScheduler

from batreplay.schedulers.backfilling import Backfilling, family_scheduler
from batreplay.schedulers.conservative import Conservative
from batreplay.schedulers.easy import Easy
from batreplay.schedulers.failures import load_failure
from batreplay.schedulers.fcfs import Fcfs
from batreplay.schedulers.names import FAMILY_MEMBERS, OTHER_SCHEDULERS, check_scheduler_name
from batreplay.schedulers.python_files import import_python_file

#: Members of the backfilling family (:mod:`batreplay.schedulers.backfilling`) by name. ``fcfs``, ``easy`` and
#: ``conservative`` keep their own classes (:class:`Fcfs`, :class:`Easy`, :class:`Conservative`, loadable by
#: pybatsim's launcher from their files); the others get a generated class named after them (``EasySjf``...).
#: Built from :data:`batreplay.schedulers.names.FAMILY_MEMBERS`.
FAMILY: dict[str, Backfilling] = {name: Backfilling(*member) for name, member in FAMILY_MEMBERS.items()}

_OWN_CLASSES: dict[str, type[BatsimScheduler]] = {"fcfs": Fcfs, "easy": Easy, "conservative": Conservative}


def _import_class(target: str) -> type[BatsimScheduler]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


#: The project's schedulers, by the name used on the command line and in campaign files (the names of
#: :data:`batreplay.schedulers.names.SCHEDULER_NAMES`, in that order).
SCHEDULERS: dict[str, type[BatsimScheduler]] = {
    **{name: _OWN_CLASSES.get(name) or family_scheduler(name, member, __name__) for name, member in FAMILY.items()},
    **{name: _import_class(target) for name, target in OTHER_SCHEDULERS.items()},
}
globals().update({cls.__name__: cls for name, cls in SCHEDULERS.items() if name not in _OWN_CLASSES})


def describe(name: str) -> str:
    """One line saying what the registered scheduler ``name`` does (for help texts and documentation).

    Raises:
        KeyError: ``name`` is not registered.
    """
    if name in FAMILY:
        return FAMILY[name].describe()
    doc = SCHEDULERS[name].__doc__ or name
    return doc.strip().splitlines()[0].rstrip(".")


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
        SchedulerLoadError (a ValueError): the file cannot be imported (SyntaxError, ImportError, any exception or
            exit while it runs); the message names the file and the line.
        ValueError: the file has no such class, or it is not a ``BatsimScheduler`` subclass.
    """
    path = Path(path)
    class_name = scheduler_class_name(path)
    module = import_python_file(path, "scheduler")
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ValueError(f"{path}: no class named {class_name!r} (pybatsim expects the file name, capitalised)")
    if not (inspect.isclass(cls) and issubclass(cls, BatsimScheduler)):
        raise ValueError(f"{path}: {class_name} is not a pybatsim BatsimScheduler subclass")
    return cls


def check_scheduler_options(name_or_path: str | Path, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options a scheduler will be built with: for a built-in scheduler (a name of :data:`SCHEDULERS`),
    ``options`` checked against the scheduler's ``OPTIONS`` declaration, with the declared defaults filled in;
    for anything else (a scheduler file), ``options`` as given, unchecked.

    Args:
        name_or_path: a registry name or a scheduler file path.
        options: option names to values (the ``--scheduler-options`` JSON object); None for none.

    Raises:
        ValueError: ``options`` is not a mapping, or has a key the built-in scheduler does not declare (the
            message lists the known keys).
    """
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ValueError(f"scheduler options must be a JSON object (option names to values), "
                         f"not {type(options).__name__} {options!r}")
    scheduler = SCHEDULERS.get(str(name_or_path))
    if scheduler is None:
        return dict(options)
    declared: dict[str, tuple[Any, str]] = getattr(scheduler, "OPTIONS", {})
    unknown = [key for key in options if key not in declared]
    if unknown:
        keys = ", ".join(repr(key) for key in unknown)
        plural = "s" if len(unknown) > 1 else ""
        if declared:
            known = "; ".join(f"{key} (default {default!r}): {doc}" for key, (default, doc) in declared.items())
            hint = f"known options: {', '.join(declared)} ({known})"
        else:
            hint = f"{name_or_path} takes no options"
        raise ValueError(f"scheduler {name_or_path}: unknown option{plural} {keys}; {hint}")
    checked = {**{key: default for key, (default, _doc) in declared.items()}, **options}
    validate = getattr(scheduler, "validate_options", None)
    if validate is not None:
        try:
            validate(checked)
        except ValueError as error:
            raise ValueError(f"scheduler {name_or_path}: {error}") from None
    return checked


def load_scheduler(name_or_path: str | Path, options: Mapping[str, Any] | None = None) -> BatsimScheduler:
    """A new scheduler instance, from a registry name (see :data:`SCHEDULERS`) or a path to a pybatsim scheduler
    file (a ``.py`` file, or any existing file path containing a directory separator).

    Args:
        name_or_path: a name of :data:`SCHEDULERS` (``"fcfs"``, ``"easy"``, ``"conservative"``, ``"easy-sjf"``...)
            or a file path.
        options: passed to the scheduler's constructor (pybatsim's options dict); ``{}`` by default. Checked
            for built-in schedulers (see :func:`check_scheduler_options`), passed unchecked to scheduler files.

    Raises:
        ValueError: an unknown name (the message lists the known ones), bad options for a built-in scheduler,
            or a file without a suitable class.
        SchedulerLoadError (a ValueError): the file cannot be imported, or its class's constructor raised or
            exited; the message names the file and the line.
        FileNotFoundError: a path that does not exist.
    """
    options = check_scheduler_options(name_or_path, options)
    text = str(name_or_path)
    if text in SCHEDULERS:
        return SCHEDULERS[text](options)
    check_scheduler_name(name_or_path)  # an unknown name: ValueError listing the known ones
    cls = load_scheduler_class(text)
    try:
        return cls(options)
    except (Exception, SystemExit) as error:  # the user's constructor raised or exited
        raise load_failure(text, error) from error
