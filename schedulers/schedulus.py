"""EASY backfilling as the Schedulus simulator applies it (Rauch 2022), the reading that gives its published tables.

Rauch's report ("HPC Scheduling Simulator", 2022, Sect. II-D and III-D/E) describes FCFS with EASY backfilling
after Mu'alem and Feitelson (2001); the author's public code (repository ``danjrauch/schedulus``, file
``src/schedulus.py``) differs from the EASY of :mod:`batreplay.schedulers.easy` in four ways, all kept here:

1. *When it backfills.* Schedulus handles one event at a time. After a submission it starts the queue's head if
   it fits, else it backfills; after a completion it starts head jobs while they fit and backfills only if it
   started none. The engine hands over all simultaneous events in one decision: a decision backfills when a job
   was submitted since the previous decision or when it started no head job.
2. *The shadow time.* The running jobs are walked by expected end (start + estimate, ties in start order) and
   their nodes added to the free nodes until the head fits: the extra nodes are counted at that point. But the
   walk goes on to the last running job, and the shadow time the time test uses is the *latest* expected end of
   all running jobs, not the head's start. A backfilled job may thus end after the head could have started: the
   head's reservation is not protected, and wide jobs can wait much longer than under EASY.
3. *The tests.* A waiting job (the queue scanned whole, in submission order) starts if it fits in the free nodes
   and ``now + estimate < shadow time`` (strictly), or else if it fits and asks at most the extra nodes (which
   then decrease by its request).
4. *Estimates.* Schedulus uses the SWF requested time, also when the job runs longer (it never kills a job) and
   when it is unknown (-1, used as a number). Here the estimate is the job's walltime by default; with the option
   ``estimate_field`` it is that number of the job's Batsim description (Batsim passes extra job fields on to the
   scheduler), so a workload carrying each job's SWF requested time, with walltimes long enough for every job to
   run in full, follows Schedulus' rules (not its exact numbers: see the ties below). A job without the field, or with a value that is not a
   number, falls back to its walltime (``inf`` without one); ``batreplay run`` counts such jobs in its notes, and
   refuses, before the simulation, a field that no job carries (:meth:`Schedulus.check_workload`).

Ties between simultaneous events are resolved by Batsim here, and by the order of Python object addresses in
Schedulus' event list (Simulus 2019), which is arbitrary: single runs of this variant therefore scatter around the
published values (see ``expe/explanations/fcfs-vs-easy.md``).

Loadable by the plain pybatsim launcher: ``pybatsim schedulers/schedulus.py`` instantiates :class:`Schedulus`;
the registry name is ``easy-schedulus``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from batsim.batsim import Job
from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.easy_core import EasyCore
from batreplay.schedulers.policy import QueuedJob, SchedulingPolicy, requested_time


class SchedulusEasyPolicy(EasyCore):
    """EASY backfilling with Schedulus' triggers, shadow time and tests (see the module docstring): the core of
    :class:`~batreplay.schedulers.easy_core.EasyCore` on whole nodes, lowest ids first, with its own hooks
    :meth:`_expected_duration` (the estimate), :meth:`_backfills` (the triggers), :meth:`shadow` (the latest
    expected end) and :meth:`_ends_by_shadow` (the strict test on the estimate).

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count of nodes).
        estimates: job id -> run time estimate in seconds used instead of the walltime (any finite number, -1
            included, as Schedulus uses it); the mapping is read when a job starts or is scanned, so it may be
            filled while jobs arrive. ``None``: walltimes only.

    Raises:
        ValueError: fewer than one resource.

    Attributes:
        reservation: ``(head id, shadow time, extra nodes)`` of the last decision that backfilled, else ``None``
            (not a reservation in EASY's sense: backfilled jobs may delay the head).
    """

    name = "easy-schedulus"

    def __init__(self, resources: ProcSet | int, estimates: dict[str, float] | None = None):
        super().__init__(resources)
        self._estimates = {} if estimates is None else estimates
        self._submitted = False

    def estimate(self, job: QueuedJob) -> float:
        """Seconds the scheduler expects ``job`` to run: its entry in ``estimates``, else its walltime
        (``inf`` without one)."""
        value = self._estimates.get(job.id)
        return requested_time(job) if value is None else value

    def _enqueue(self, job: QueuedJob) -> None:
        self._queue.push(job)
        self._submitted = True

    def _expected_duration(self, job: QueuedJob) -> float:
        """The running job's expected end is its start + :meth:`estimate`, so :attr:`running` walks the jobs as
        Schedulus does."""
        return self.estimate(job)

    def _backfills(self, started: int) -> bool:
        """Schedulus' triggers: a job was submitted since the previous decision, or no head job ``started``."""
        submitted, self._submitted = self._submitted, False
        return submitted or started == 0

    def shadow(self, head: QueuedJob, now: float | None = None) -> tuple[float, int]:
        """Schedulus' shadow time (s; the latest expected end of the running jobs, ``-inf`` if the head never
        fits; ``now`` is not used) and extra nodes (free nodes when the head first fits, minus its request) for
        ``head``."""
        needed = head.requested_resources
        available, extra, shadow = self.pool.nb_free, 0, -math.inf
        for end, _, nodes in self.running.ends():  # by expected end, ties in start order
            if available < needed:
                available += nodes
            if available >= needed:
                shadow, extra = end, available - needed
        return shadow, extra

    def _ends_by_shadow(self, job: QueuedJob, now: float, shadow: float) -> bool:
        """Schedulus' strict test on the estimate: ``now + estimate < shadow``."""
        return now + self.estimate(job) < shadow


class Schedulus(PolicyScheduler):
    """EASY backfilling as Schedulus applies it (Rauch 2022): the shadow time is the latest expected end.

    It backfills after submissions and after completions that started no job (see the module docstring).

    Options (``--scheduler-options``): ``estimate_field``, the name of a number in each job's Batsim description
    used as its run time estimate instead of the walltime (``null``, the default: walltimes).
    """

    policy_class = SchedulusEasyPolicy
    #: Options this scheduler reads, ``{name: (default, doc)}`` (checked by the registry).
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = {
        "estimate_field": (None, "job field giving the run time estimate, s (null: the walltime)"),
    }

    @classmethod
    def validate_options(cls, options: dict[str, Any]) -> None:
        """Raise ValueError unless ``estimate_field`` is null or a non-empty string."""
        field = options.get("estimate_field")
        if field is not None and (not isinstance(field, str) or not field):
            raise ValueError(f"estimate_field must be null or a job field name, got {field!r}")

    def __init__(self, options: dict[str, Any] | None = None):
        super().__init__(options)
        self._estimates: dict[str, float] = {}

    def check_workload(self, jobs: list[dict[str, Any]]) -> list[str]:
        """With ``estimate_field``: refuse a workload in which no job carries it as a finite number (the option
        would silently give the default run), and note how many jobs fall back to their walltime.

        Raises:
            ValueError: no job of ``jobs`` (Batsim JSON objects) has a finite number in the field.
        """
        field = self.options.get("estimate_field")
        if not field or not jobs:
            return []
        carried = sum(1 for job in jobs if _finite_number(job.get(field)))
        if carried == 0:
            numeric = sorted({key for job in jobs[:1000] for key, value in job.items() if _finite_number(value)})
            raise ValueError(f"scheduler easy-schedulus: option estimate_field {field!r}: no job of the workload "
                             f"carries it as a number (the jobs' numeric fields: {', '.join(numeric) or 'none'}); "
                             "name one of them, or leave the option out to use walltimes")
        if carried < len(jobs):
            return [f"easy-schedulus: {len(jobs) - carried:,} of {len(jobs):,} jobs have no number in "
                    f"{field!r}: their walltime is their run time estimate"]
        return []

    def make_policy(self, resources: ProcSet) -> SchedulingPolicy:
        return SchedulusEasyPolicy(resources, self._estimates)

    def onSimulationBegins(self) -> None:
        self._estimates.clear()
        super().onSimulationBegins()

    def onJobSubmission(self, job: Job) -> None:
        field = self.options.get("estimate_field")
        if field:
            value = (getattr(job, "json_dict", None) or {}).get(field)
            if _finite_number(value):
                self._estimates[job.id] = float(value)
        super().onJobSubmission(job)


def _finite_number(value: Any) -> bool:
    """True for an int or float (not a boolean) that is finite: a usable run time estimate, s."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
