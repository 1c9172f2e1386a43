"""The backfilling family: one scheduler per (queue order, reservation depth, backfill order).

A member is described by a :class:`Backfilling` value: the queue order (:mod:`~batreplay.schedulers.queue_order`:
the order in which jobs are started, reserved and backfilled), the reservation depth (how many waiting jobs, from
the head of that order, hold a reservation that backfilled jobs must not delay) and, optionally, another order for
trying the backfilling candidates. Depth 0 is no backfilling at all: jobs start strictly in queue order
(:class:`~batreplay.schedulers.fcfs.FcfsPolicy`); depth 1 is EASY (:class:`~batreplay.schedulers.easy.EasyPolicy`,
Mu'alem & Feitelson 2001); depth :data:`ALL` is conservative backfilling, whose reservations persist and are never
delayed (:class:`~batreplay.schedulers.conservative.ConservativePolicy`); any other depth k recomputes k
reservations at each decision (:class:`~batreplay.schedulers.reservation_depth.ReservationDepthPolicy`). The first
three keep their dedicated fast implementations, so ``fcfs``, ``easy`` and ``conservative`` decide exactly as they
always did. :func:`family_scheduler` turns a member into a pybatsim scheduler class for the registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.conservative import ConservativePolicy
from batreplay.schedulers.easy import EasyPolicy
from batreplay.schedulers.fcfs import FcfsPolicy
from batreplay.schedulers.node_selection import PLACEMENT_OPTIONS
from batreplay.schedulers.policy import SchedulingPolicy
from batreplay.schedulers.queue_order import ORDERS, order_key
from batreplay.schedulers.reservation_depth import ReservationDepthPolicy

#: Reservation depth of conservative backfilling: every waiting job holds a reservation.
ALL: Literal["all"] = "all"


@dataclass(frozen=True)
class Backfilling:
    """One member of the backfilling family.

    Attributes:
        order: queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS`.
        depth: number of waiting jobs holding a reservation: 0 (strict order, no backfilling), an integer >= 1, or
            :data:`ALL` (conservative backfilling).
        backfill_order: order in which backfilling candidates are tried, ``None`` for ``order``; only with depth
            >= 1 and not :data:`ALL` (conservative reserves every job in queue order).

    Raises:
        ValueError: unknown order, or a depth that is neither a non-negative integer nor ``"all"``, or a
            backfill order with depth 0 or ``"all"``.
    """

    order: str = "fcfs"
    depth: int | Literal["all"] = 1
    backfill_order: str | None = None

    def __post_init__(self) -> None:
        order_key(self.order)
        if self.backfill_order is not None:
            order_key(self.backfill_order)
        depth = self.depth
        if depth != ALL and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
            raise ValueError(f"reservation depth must be an integer >= 0 or {ALL!r}, got {depth!r}")
        if self.backfill_order not in (None, self.order) and depth in (0, ALL):
            raise ValueError(f"a backfill order needs a reservation depth >= 1 other than {ALL!r}, got {depth!r}")

    def policy(self, resources: ProcSet | int) -> SchedulingPolicy:
        """A new policy of this member for the platform's compute ``resources``."""
        if self.depth == 0:
            return FcfsPolicy(resources, order=self.order)
        if self.depth == 1:
            return EasyPolicy(resources, order=self.order, backfill_order=self.backfill_order)
        if self.depth == ALL:
            return ConservativePolicy(resources, order=self.order)
        return ReservationDepthPolicy(resources, depth=self.depth, order=self.order,
                                      backfill_order=self.backfill_order)

    def describe(self) -> str:
        """One line: what this member does."""
        order = ORDERS[self.order][1]
        if self.depth == 0:
            text = f"no backfilling, jobs start strictly in queue order: {order}"
        elif self.depth == 1:
            text = f"EASY backfilling (the head of the queue holds a reservation), queue order: {order}"
        elif self.depth == ALL:
            text = f"conservative backfilling (every waiting job holds a reservation), queue order: {order}"
        else:
            text = f"backfilling with reservations for the first {self.depth} jobs, queue order: {order}"
        if self.backfill_order not in (None, self.order):
            text += f"; backfilling candidates tried by {ORDERS[self.backfill_order][1]}"
        return text


def _class_name(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", name) if part)


def family_scheduler(name: str, member: Backfilling, module: str = __name__) -> type[PolicyScheduler]:
    """A pybatsim scheduler class running ``member``, named after ``name`` (``easy-sjf`` -> ``EasySjf``), taking the
    placement options only (:data:`~batreplay.schedulers.node_selection.PLACEMENT_OPTIONS`), documented by
    ``member.describe()``. ``module`` is the module that will hold the class as an
    attribute of that name (so that pickle finds it)."""
    policy = member.policy(1)
    attributes: dict[str, Any] = {
        "__doc__": member.describe() + ".",
        "__module__": module,
        "policy_class": type(policy),
        "member": member,
        "OPTIONS": dict(PLACEMENT_OPTIONS),
        "make_policy": lambda self, resources: member.policy(resources),
    }
    return type(_class_name(name), (PolicyScheduler,), attributes)


class GenericBackfilling(PolicyScheduler):
    """Any member of the backfilling family, chosen by the options reservation_depth, order and backfill_order.

    The registry's ``backfilling`` entry.

    Options (``--scheduler-options``): ``reservation_depth`` (0, an integer, or ``"all"``; default 1),
    ``order`` and ``backfill_order`` (names of :data:`~batreplay.schedulers.queue_order.ORDERS`; defaults
    ``fcfs`` and ``null``, the queue order). With the defaults it decides as ``easy``.
    """

    policy_class = EasyPolicy
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = {
        "reservation_depth": (1, "waiting jobs holding a reservation: 0 (no backfilling), k >= 1, or \"all\""),
        "order": ("fcfs", f"queue order, one of {', '.join(ORDERS)}"),
        "backfill_order": (None, "order of the backfilling candidates (null: the queue order)"),
        **PLACEMENT_OPTIONS,
    }

    @classmethod
    def member_of(cls, options: dict[str, Any]) -> Backfilling:
        """The family member that ``options`` (with defaults filled in) select.

        Raises:
            ValueError: an invalid depth or order.
        """
        defaults = {key: default for key, (default, _doc) in cls.OPTIONS.items()}
        values = {**defaults, **options}
        return Backfilling(values["order"], values["reservation_depth"], values["backfill_order"])

    @classmethod
    def validate_options(cls, options: dict[str, Any]) -> None:
        """Raise ValueError if ``options`` select no member or a bad placement (called by the registry before a
        run)."""
        super().validate_options(options)
        cls.member_of(options)

    def make_policy(self, resources: ProcSet) -> SchedulingPolicy:
        return self.member_of(self.options).policy(resources)
