"""The built-in schedulers by name, without importing them (no pybatsim, no procset).

This is the one list of scheduler names: :mod:`batreplay.schedulers.registry` builds its classes from
:data:`FAMILY_MEMBERS` and :data:`OTHER_SCHEDULERS`, and the command line and campaign files check a name here
before any scheduler is imported, so that ``batreplay run --help`` or an unknown name costs no import of the
schedulers.

- :data:`FAMILY_MEMBERS`: members of the backfilling family (:mod:`batreplay.schedulers.backfilling`), each a
  queue order (a name of :data:`~batreplay.schedulers.queue_order.ORDERS`), a reservation depth (0 for none, 1 for
  EASY, ``"all"`` for conservative backfilling) and a backfilling order (None: the queue order).
- :data:`OTHER_SCHEDULERS`: schedulers with a class of their own, as ``"module:Class"`` (imported by the registry).
- :func:`sharing_problem`: what a scheduler's options need of the engine (nodes shared, a speedup model), checked
  by run descriptions and campaign files alike before anything runs.
"""

from __future__ import annotations

from pathlib import Path

#: Members of the backfilling family by name: ``(queue order, reservation depth, backfilling order)``, the arguments
#: of :class:`~batreplay.schedulers.backfilling.Backfilling`.
FAMILY_MEMBERS: dict[str, tuple[str, int | str, str | None]] = {
    "fcfs": ("fcfs", 0, None),
    "easy": ("fcfs", 1, None),
    "conservative": ("fcfs", "all", None),
    **{order: (order, 0, None) for order in ("sjf", "ljf", "saf", "laf")},
    **{f"easy-{order}": (order, 1, None) for order in ("sjf", "ljf", "saf", "laf")},
    **{f"conservative-{order}": (order, "all", None) for order in ("sjf", "ljf", "saf", "laf")},
    # SJBF (Tsafrir, Etsion & Feitelson 2007): FCFS queue and head reservation, candidates shortest first.
    "easy-sjbf": ("fcfs", 1, "sjf"),
}

#: Schedulers that are not a fixed family member, by name: ``"module:Class"`` of their pybatsim scheduler class.
OTHER_SCHEDULERS: dict[str, str] = {
    "backfilling": "batreplay.schedulers.backfilling:GenericBackfilling",
    "easy-schedulus": "batreplay.schedulers.schedulus:Schedulus",
    "easy-coscheduling": "batreplay.schedulers.coscheduling:Coscheduling",
    "agent": "batreplay.schedulers.agent:Agent",
}

#: Schedulers that predict speedups with a model of co-scheduling (scheduler options ``speedup_model`` and
#: ``speedup_options``): a run gives them the engine's model (``--speedup-model``) when they name none.
SPEEDUP_PREDICTING: tuple[str, ...] = ("easy-coscheduling",)


def sharing_problem(name: str, options: dict, *, shares_hosts: bool, engine_has_model: bool) -> tuple[str, str] | None:
    """What keeps scheduler ``name`` with ``options`` from running on an engine that lets jobs share hosts or not
    (``shares_hosts``: compute sharing or co-scheduling) and applies a speedup model or not: None when nothing, else
    ``(key, message)``, the campaign key to name (``compute_sharing``, ``speedup_model``) and one line.

    Job slots (option ``slots``) put several jobs on a node; easy-coscheduling too (unless ``jobs_per_node`` is 1),
    and it predicts with a speedup model: its option ``speedup_model``, or the engine's, which a run gives it.
    """
    if options.get("slots") is True and not shares_hosts:
        return "compute_sharing", ("scheduler option slots puts several jobs on a node: it needs compute sharing "
                                   "(--compute-sharing, or compute_sharing = true in a campaign experiment) or "
                                   "co-scheduling (--speedup-model, speedup_model)")
    if name in SPEEDUP_PREDICTING:
        if options.get("speedup_model") is None and not engine_has_model:
            return "speedup_model", (f"scheduler {name} predicts speedups with a model: give the engine's "
                                     "(--speedup-model, or speedup_model in a campaign experiment), which it then "
                                     "uses, or the scheduler option speedup_model")
        if options.get("jobs_per_node", 2) != 1 and not shares_hosts:
            return "compute_sharing", (f"scheduler {name} puts several jobs on a node: it needs co-scheduling "
                                       "(--speedup-model, speedup_model) or compute sharing (--compute-sharing, "
                                       "compute_sharing = true)")
    return None

#: Every built-in scheduler name, in registry order (the keys of :data:`batreplay.schedulers.registry.SCHEDULERS`).
SCHEDULER_NAMES: tuple[str, ...] = (*FAMILY_MEMBERS, *OTHER_SCHEDULERS)


def scheduler_help() -> str:
    """Help text of a ``--scheduler`` argument: every registered name, then the scheduler-file alternative."""
    return f"one of {', '.join(SCHEDULER_NAMES)}, or the path of a pybatsim scheduler file (.py)"


def names_a_file(name_or_path: str | Path) -> bool:
    """True when ``name_or_path`` is read as a scheduler file rather than a name: a :class:`~pathlib.Path`, or text
    ending in ``.py`` or holding a directory separator (a built-in name is checked first)."""
    text = str(name_or_path)
    return isinstance(name_or_path, Path) or text.endswith(".py") or "/" in text or "\\" in text


def check_scheduler_name(name_or_path: str | Path) -> None:
    """Check that ``name_or_path`` is a built-in scheduler name or is read as a file (see :func:`names_a_file`);
    whether such a file exists and holds a scheduler is checked when it is loaded.

    Raises:
        ValueError: an unknown name; the message lists the known ones.
    """
    text = str(name_or_path)
    if text in SCHEDULER_NAMES or names_a_file(name_or_path):
        return
    known = ", ".join(sorted(SCHEDULER_NAMES))
    raise ValueError(f"unknown scheduler {text!r}: known names are {known}, "
                     "or give the path of a pybatsim scheduler file")
