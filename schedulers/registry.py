"""Scheduler registry: the project's schedulers by name, and loading of any pybatsim scheduler file.

This is the one place where scheduler names are defined: the command line's help, campaign-spec validation and the
documentation read :data:`SCHEDULERS` and :func:`describe`. Adding a scheduler takes one file and one line here,
for instance ``schedulers/random_order.py`` defining ``class RandomOrder(PolicyScheduler)`` (a ``policy_class``
and an ``OPTIONS`` dict), then, in :data:`SCHEDULERS`, ``"random-order": RandomOrder,`` (its one-line description
is the first line of its docstring); a member of the backfilling family needs no file at all, only a line in
:data:`FAMILY` such as ``"easy-xyz": Backfilling(order="xyz", depth=1),`` once ``xyz`` is in
:data:`~batreplay.schedulers.queue_order.ORDERS`.

Options: each built-in scheduler declares the options it reads in a class attribute ``OPTIONS``
(``{name: (default, short doc)}``); :func:`load_scheduler` refuses any other key and fills in the defaults, for
the command line (``--scheduler-options``) and campaigns alike. A scheduler file gets its options unchecked, as
pybatsim's launcher passes them: it reads what it likes from ``self.options``.

Failures of a scheduler file (SyntaxError, ImportError, an exception or ``sys.exit`` while it is imported or
built) are one-line :class:`~batreplay.schedulers.failures.SchedulerLoadError` naming the file and the line.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from batsim.batsim import BatsimScheduler

from batreplay.schedulers.backfilling import ALL, Backfilling, GenericBackfilling, family_scheduler
from batreplay.schedulers.conservative import Conservative
from batreplay.schedulers.easy import Easy
from batreplay.schedulers.failures import load_failure
from batreplay.schedulers.fcfs import Fcfs
from batreplay.schedulers.schedulus import Schedulus

_LOADED = itertools.count()

#: Members of the backfilling family (:mod:`batreplay.schedulers.backfilling`) by name. ``fcfs``, ``easy`` and
#: ``conservative`` keep their own classes (:class:`Fcfs`, :class:`Easy`, :class:`Conservative`, loadable by
#: pybatsim's launcher from their files); the others get a generated class named after them (``EasySjf``...).
FAMILY: dict[str, Backfilling] = {
    "fcfs": Backfilling("fcfs", 0),
    "easy": Backfilling("fcfs", 1),
    "conservative": Backfilling("fcfs", ALL),
    **{order: Backfilling(order, 0) for order in ("sjf", "ljf", "saf", "laf")},
    **{f"easy-{order}": Backfilling(order, 1) for order in ("sjf", "ljf", "saf", "laf")},
    **{f"conservative-{order}": Backfilling(order, ALL) for order in ("sjf", "ljf", "saf", "laf")},
    # SJBF (Tsafrir, Etsion & Feitelson 2007): FCFS queue and head reservation, candidates shortest first.
    "easy-sjbf": Backfilling("fcfs", 1, backfill_order="sjf"),
}

_OWN_CLASSES: dict[str, type[BatsimScheduler]] = {"fcfs": Fcfs, "easy": Easy, "conservative": Conservative}

#: The project's schedulers, by the name used on the command line and in campaign files.
SCHEDULERS: dict[str, type[BatsimScheduler]] = {
    **{name: _OWN_CLASSES.get(name) or family_scheduler(name, member, __name__) for name, member in FAMILY.items()},
    "backfilling": GenericBackfilling,
    "easy-schedulus": Schedulus,
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


def scheduler_help() -> str:
    """Help text of a ``--scheduler`` argument: every registered name, then the scheduler-file alternative."""
    return f"one of {', '.join(SCHEDULERS)}, or the path of a pybatsim scheduler file (.py)"


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
    except (Exception, SystemExit) as error:  # a file that exits is a broken scheduler file too
        del sys.modules[module_name]
        raise load_failure(path, error) from error
    except BaseException:  # KeyboardInterrupt, a wall-clock limit: not the file's fault, pass unchanged
        del sys.modules[module_name]
        raise
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
    if isinstance(name_or_path, Path) or text.endswith(".py") or "/" in text or "\\" in text:
        cls = load_scheduler_class(text)
        try:
            return cls(options)
        except (Exception, SystemExit) as error:  # the user's constructor raised or exited
            raise load_failure(text, error) from error
    known = ", ".join(sorted(SCHEDULERS))
    raise ValueError(f"unknown scheduler {text!r}: known names are {known}, or give the path of a pybatsim scheduler file")
