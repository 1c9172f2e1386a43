"""Batch schedulers for batreplay: the backfilling family (FCFS, EASY, conservative and their queue orders).

Each scheduler is a plain policy object (submit / complete / decide, no clock, no pybatsim: :mod:`.policy`) plus a
thin pybatsim ``BatsimScheduler`` adapter (:mod:`.adapter`), so the same code runs in the embedded engine and as a
Batsim decision process. The family (:mod:`.backfilling`) is parameterised by a queue order (:mod:`.queue_order`)
and a reservation depth: strict order (:mod:`.fcfs`), EASY (:mod:`.easy`, on the core of :mod:`.easy_core` that
:mod:`.schedulus` and :mod:`.coscheduling` share), k reservations (:mod:`.reservation_depth`) and conservative
(:mod:`.conservative`, on :mod:`.availability_profile`). Get one by name with
:func:`batreplay.schedulers.registry.load_scheduler`; :mod:`.names` is the one list of names. This package sits just
above the foundation: it may import only ``batreplay.atomic``, ``batreplay.deadline``, ``batreplay.formats`` and
pybatsim (with procset), never ``batreplay.engine``, ``run``, ``analysis``, ``campaign`` or the command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from batreplay.schedulers.conservative import Conservative, ConservativePolicy
    from batreplay.schedulers.easy import Easy, EasyPolicy, SlotEasyPolicy
    from batreplay.schedulers.easy_core import EasyCore
    from batreplay.schedulers.fcfs import Fcfs, FcfsPolicy
    from batreplay.schedulers.policy import QueuedJob, Rejection, SchedulingPolicy

#: Where each name below is defined; imported on first use (PEP 562), so that importing a light module of the
#: package (:mod:`.names`) does not import pybatsim.
_LAZY: dict[str, str] = {
    "Conservative": "conservative", "ConservativePolicy": "conservative", "Easy": "easy", "EasyPolicy": "easy",
    "SlotEasyPolicy": "easy", "EasyCore": "easy_core",
    "Fcfs": "fcfs", "FcfsPolicy": "fcfs", "QueuedJob": "policy", "Rejection": "policy", "SchedulingPolicy": "policy",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = sorted(_LAZY)
