"""Scheduling policies independent of pybatsim and of any clock.

A policy is a plain object fed with three calls:

- ``submit(job)`` when a job arrives (it may reject it at once),
- ``complete(job_id)`` when a running job terminates, whatever its final state,
- ``decide(now)`` once per batch of events, which returns the jobs to start at ``now`` with their allocations.

Time only enters through the ``now`` argument of :meth:`SchedulingPolicy.decide`, so a policy can be driven by
pybatsim (see :mod:`batreplay.schedulers.adapter`), by the embedded engine, or by a test loop alike.

Times are in seconds, resources are counted in nodes (Batsim compute resources, one id each).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from procset import ProcSet

from batreplay.schedulers.node_selection import SlotPool
from batreplay.schedulers.resource_pool import ResourcePool
from batreplay.schedulers.running_jobs import RunningJobs

#: Tolerance used when comparing times, in seconds. Batsim sends every time rounded to 1e-6 s, and sums such as
#: ``start + walltime`` carry binary rounding errors far below that; two times closer than this are equal.
TIME_EPSILON = 1e-7


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """What a policy knows about a job.

    Attributes:
        id: the job id as Batsim spells it (``workload!name``, e.g. ``w0!12`` or ``dyn!12``).
        requested_resources: number of nodes requested, an integer.
        walltime: requested time in seconds, or ``None`` when the job has none. A missing, non-positive or
            non-finite value given to the constructor is stored as ``None``.
        description: the job's Batsim JSON object as the scheduler received it (``id``, ``res``, ``subtime``,
            ``walltime``, ``profile`` and any other property of the workload), or ``None``; only policies that
            look at job properties read it (co-scheduling's speedup predictions). Not compared.

    Raises:
        TypeError: ``requested_resources`` is not an integer (booleans refused).
    """

    id: str
    requested_resources: int
    walltime: float | None = None
    description: Mapping[str, Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        res = self.requested_resources
        if isinstance(res, bool) or not isinstance(res, int):
            if isinstance(res, float) and res.is_integer():
                object.__setattr__(self, "requested_resources", int(res))
            else:
                raise TypeError(f"job {self.id}: requested_resources must be an integer, got {res!r}")
        wt = self.walltime
        if wt is not None:
            wt = float(wt)
            if not math.isfinite(wt) or wt <= 0:
                wt = None
        object.__setattr__(self, "walltime", wt)


def requested_time(job: QueuedJob) -> float:
    """The time ``job`` may run, seconds: its walltime, or ``math.inf`` when it has none."""
    return job.walltime if job.walltime is not None else math.inf


class Rejection(NamedTuple):
    """A job refused at submission: its id and a human-readable reason."""

    job_id: str
    reason: str


#: One decision: the job to start now and the resources given to it.
Start = tuple[QueuedJob, ProcSet]


class SchedulingPolicy(abc.ABC):
    """Common bookkeeping of the queue-based policies: free resources, running jobs, rejections.

    Args:
        resources: the compute resources, as a ProcSet of resource ids or as a count ``n`` meaning ids
            ``0..n-1``.

    Subclasses implement :meth:`_enqueue`, :meth:`decide` and the read-only :attr:`queue`; they start jobs with
    :meth:`_start`, which always gives the lowest free resource ids, so runs are reproducible.
    """

    #: Short name of the policy (``fcfs``, ``easy``, ...).
    name: str = "abstract"
    #: The policy places jobs of several slots on nodes of several slots exactly (one slot on each of as many
    #: distinct nodes): it asks the pool whether they fit (``fits``), not how many slots are free.
    places_spread_jobs: bool = False

    def __init__(self, resources: ProcSet | int):
        if isinstance(resources, int):
            if resources < 1:
                raise ValueError(f"a platform needs at least one resource, got {resources}")
            resources = ProcSet((0, resources - 1))
        self.pool: ResourcePool | SlotPool = ResourcePool(resources)
        self.one_slot_jobs = False  # jobs get one slot on each of their nodes, and only one-slot jobs are placed
        self.spread_slots = False  # jobs of several slots take one on each of several nodes (FCFS and EASY)
        self.running = RunningJobs()
        self.rejections: list[Rejection] = []
        self._queued_ids: set[str] = set()

    def use_pool(self, pool: SlotPool) -> None:
        """Place jobs with ``pool`` (:class:`~batreplay.schedulers.node_selection.SlotPool`: a node selection, job
        slots) instead of whole nodes, lowest ids first; call before any job is submitted. With several slots on
        a node, only one-slot jobs are placed: the others are rejected at submission (see
        :mod:`batreplay.schedulers.node_selection`), unless the policy places them on nodes of several slots
        (:attr:`places_spread_jobs`: FCFS and EASY)."""
        if self._queued_ids or len(self.running):
            raise ValueError("use_pool: jobs are already queued or running")
        self.pool = pool
        several = not pool.one_slot_per_node
        self.spread_slots = several and self.places_spread_jobs
        self.one_slot_jobs = several and not self.places_spread_jobs

    @property
    def nb_resources(self) -> int:
        """Number of compute resources of the platform (nodes; job slots with a slot pool)."""
        return self.pool.nb_total

    @property
    @abc.abstractmethod
    def queue(self) -> tuple[QueuedJob, ...]:
        """The waiting jobs in the policy's queue order (a snapshot)."""

    def submit(self, job: QueuedJob) -> Rejection | None:
        """Take a newly submitted job into the queue, or reject it.

        A job requesting more resources than the platform has (with jobs spread over nodes of several slots: more
        than its nodes), or fewer than one, can never run: it is rejected, the rejection is appended to
        :attr:`rejections` and returned. Otherwise returns ``None``.

        Raises:
            ValueError: a job with the same id is already waiting or running.
        """
        if job.id in self._queued_ids or job.id in self.running:
            raise ValueError(f"job {job.id} submitted twice (it is already waiting or running)")
        if self.one_slot_jobs and job.requested_resources > 1:
            reason = (f"requests {job.requested_resources} resources but {self.name} places one-slot jobs only on "
                      "nodes of several job slots (scheduler option slots; FCFS and EASY place wider ones)")
        elif job.requested_resources > self.nb_resources:
            reason = (
                f"requests {job.requested_resources} resources but the platform has only {self.nb_resources}"
            )
        elif self.spread_slots and job.requested_resources > len(self.pool.ids):
            reason = (f"requests {job.requested_resources} resources but the platform has only {len(self.pool.ids)} "
                      "nodes (a job takes one slot on each of distinct nodes)")
        elif job.requested_resources < 1:
            reason = f"requests {job.requested_resources} resources (at least 1 is needed)"
        else:
            self._queued_ids.add(job.id)
            self._enqueue(job)
            return None
        rejection = Rejection(job.id, reason)
        self.rejections.append(rejection)
        return rejection

    def complete(self, job_id: str) -> bool:
        """Release the resources of a running job that terminated (any final state).

        Returns ``True`` if the job was running and its resources were freed, ``False`` if the policy does not
        know it as running (never started by this policy, or already released): calling this twice for one job
        frees its resources once.
        """
        if job_id not in self.running:
            return False
        entry = self.running.remove(job_id)
        self.pool.release(entry.allocation)
        self._on_release(entry.job)
        return True

    @abc.abstractmethod
    def decide(self, now: float) -> list[Start]:
        """Choose the jobs to start at ``now`` (seconds), in start order, with their allocations.

        The policy records them as running (expected end = ``now`` + :meth:`_expected_duration`, by default the
        walltime). Call it once after each batch of submissions and completions; calling it again without new
        events starts nothing new.
        """

    # -- helpers for subclasses -------------------------------------------------------------------------------

    @abc.abstractmethod
    def _enqueue(self, job: QueuedJob) -> None:
        """Put an accepted job into the queue."""

    def _on_release(self, job: QueuedJob) -> None:
        """Called after a running job's resources were freed."""

    def _expected_duration(self, job: QueuedJob) -> float:
        """Seconds ``job`` is expected to run once started, which sets its expected end in :attr:`running`: its
        requested time (walltime, ``inf`` without one) unless a policy overrides it."""
        return requested_time(job)

    def _start(self, job: QueuedJob, now: float) -> ProcSet:
        """Start ``job`` at ``now`` on the lowest free resource ids and record it as running, expected to end at
        ``now`` + :meth:`_expected_duration`."""
        return self._record_start(job, self.pool.allocate(job.requested_resources), now)

    def _record_start(self, job: QueuedJob, allocation: ProcSet, now: float) -> ProcSet:
        """Record ``job``, given ``allocation`` at ``now``, as running (expected to end at ``now`` +
        :meth:`_expected_duration`); returns the allocation."""
        self._queued_ids.discard(job.id)
        self.running.add(job, allocation, now, self._expected_duration(job))
        return allocation
