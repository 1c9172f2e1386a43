"""Conservative backfilling: every waiting job holds a reservation.

Source: A. W. Mu'alem and D. G. Feitelson, "Utilization, predictability, workloads, and user runtime estimates in
scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001, where conservative backfilling is set against
EASY: a job may start out of order only if it delays *no* earlier job, which every job's reservation guarantees.

Rules applied at every decision, at time ``now``:

1. An availability profile (:class:`~batreplay.schedulers.availability_profile.AvailabilityProfile`) gives the
   free nodes over future time, from the running jobs' expected ends (start + walltime) and the reservations.
2. Each newly submitted job, in submission order, gets a reservation at the earliest time at which its request
   fits in the profile for its whole walltime; the reservation is then entered in the profile. Reservations of
   earlier jobs are never moved later by this.
3. When a job terminates (often earlier than its walltime), the profile is rebuilt from the running jobs and the
   reservations are compressed in queue order: each job's reservation is taken out and put back at the earliest
   time it fits, which is never later than where it was, since that place is still free.
4. Jobs whose reservation is due (``<= now``) are started, in queue order, on the lowest free resource ids.

Edge cases: a job without walltime reserves its nodes forever from its start, so jobs behind it may only use the
other nodes; if no finite start exists (nodes held forever by other jobs), the reservation is ``inf`` and the job
is placed again at the next compression. Times are compared with a tolerance of
:data:`~batreplay.schedulers.policy.TIME_EPSILON`. A due job whose nodes are still held (a job terminating at
``now`` whose completion has not arrived yet, as Batsim delivers submissions before completions of one instant)
is started by a later decision of the same instant. A job may also start later than its reservation, when the
job before it ends after its walltime (Batsim can report a job stopped at its walltime a microsecond late); the
reservations behind it then overlap its real interval, so the next compression first keeps, in queue order, the
reservations that still fit and places the others again, possibly later (the only case where a reservation moves
later).

Cost: placing a job walks the profile (O(profile breakpoints)); a compression places every waiting job, so it is
O(queue x breakpoints), done at most once per message that carried a termination. This is inherent to compressing
every reservation at every early termination and makes conservative backfilling several times slower than EASY
on logs with long queues (HPC2N): prefer EASY for whole-log campaigns there.

Queue orders (reservation depth "all" of :mod:`~batreplay.schedulers.backfilling`): the rules above use the
submission order; ``order`` (a name of :mod:`~batreplay.schedulers.queue_order`) replaces it wherever the queue
order is used: the jobs submitted since the last decision are placed in that order, compressions take the
reservations in that order, and due jobs start in that order. A reservation, once made, is still never delayed
by a later arrival, whatever its place in the order (the guarantee that defines conservative backfilling).

Loadable by the plain pybatsim launcher: ``pybatsim schedulers/conservative.py`` instantiates
:class:`Conservative`.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, ClassVar

from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.node_selection import PLACEMENT_OPTIONS
from batreplay.schedulers.availability_profile import AvailabilityProfile
from batreplay.schedulers.policy import TIME_EPSILON, QueuedJob, SchedulingPolicy, Start, requested_time
from batreplay.schedulers.queue_order import order_key



class ConservativePolicy(SchedulingPolicy):
    """Conservative backfilling over a queue in submission order, or another order (see the module docstring
    for the rules).

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count).
        order: queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS` (default ``fcfs``).

    Raises:
        ValueError: unknown order name.
    """

    name = "conservative"

    def __init__(self, resources: ProcSet | int, *, order: str = "fcfs"):
        super().__init__(resources)
        self._key = None if order == "fcfs" else order_key(order)  # None: submission rank, the dict's order
        self._queue: dict[str, QueuedJob] = {}  # waiting jobs in submission order
        self._order: dict[str, object] = {}  # sort key of each waiting job (its submission rank under fcfs)
        self._rank = 0
        self._unplaced: list[QueuedJob] = []  # submitted since the last decision
        self._reserved: dict[str, float] = {}  # reservation start of each placed waiting job, s
        self._due: list[tuple[float, int, str]] = []  # heap of (reservation start, rank, job id)
        self._profile: AvailabilityProfile | None = None
        self._stale = True  # the profile must be rebuilt from the running jobs

    @property
    def queue(self) -> tuple[QueuedJob, ...]:
        return tuple(self._in_order(self._queue.values()))

    def _in_order(self, jobs) -> list[QueuedJob]:
        """``jobs`` (an iterable in submission order) sorted by the queue order."""
        if self._key is None:
            return list(jobs)
        order = self._order
        return sorted(jobs, key=lambda job: order[job.id])

    def reservation_of(self, job_id: str) -> float | None:
        """Start time (s) reserved for a waiting job at the last decision (``inf`` if none could be found),
        ``None`` if the job is not waiting or was submitted after the last decision."""
        return self._reserved.get(job_id)

    def _enqueue(self, job: QueuedJob) -> None:
        self._queue[job.id] = job
        self._order[job.id] = self._rank if self._key is None else self._key(job, self._rank)
        self._rank += 1
        self._unplaced.append(job)

    def _on_release(self, job: QueuedJob) -> None:
        self._stale = True

    def _place(self, profile: AvailabilityProfile, job: QueuedJob, now: float) -> None:
        duration = requested_time(job)
        start = profile.earliest_fit(job.requested_resources, duration, now)
        if start != math.inf:
            profile.add(start, start + duration, -job.requested_resources)
        self._reserved[job.id] = start

    def _readmit(
        self, now: float, running_steps: list[tuple[float, int]], placed: list[QueuedJob]
    ) -> AvailabilityProfile:
        """Profile of the running jobs plus the reservations that still fit, taken in queue order; the others are
        marked unplaced (``inf``), so that the compression places them again where they fit.

        Reservations stop fitting when a job started later than its reservation: its completion came after its
        walltime (Batsim may report a job stopped at its walltime a microsecond late; LANL-CM5 has many), or its
        predecessor's did. Its nodes are then held past the reservations made for the planned end. Earlier jobs in
        the queue keep their place; a later job that collides with them is moved, possibly later.
        """
        profile = AvailabilityProfile.from_steps(now, self.pool.nb_free, running_steps)
        reserved = self._reserved
        for job in placed:
            start = reserved[job.id]
            if start == math.inf:
                continue
            start = max(start, now)
            end = start + requested_time(job)
            nodes = job.requested_resources
            if profile.min_free(start, end) >= nodes:
                profile.add(start, end, -nodes)
            else:
                reserved[job.id] = math.inf
        return profile

    def _rebuild(self, now: float) -> AvailabilityProfile:
        """New profile from the running jobs and the reservations, then compression in queue order."""
        steps: list[tuple[float, int]] = []
        for entry in self.running:
            if entry.expected_end != math.inf:
                steps.append((entry.expected_end, entry.job.requested_resources))
        nb_running_steps = len(steps)
        reserved = self._reserved
        placed = self._in_order(job for job in self._queue.values() if job.id in reserved)
        for job in placed:
            start = reserved[job.id]
            if start != math.inf:
                start = max(start, now)
                steps.append((start, -job.requested_resources))
                steps.append((start + requested_time(job), job.requested_resources))
        profile = AvailabilityProfile.from_steps(now, self.pool.nb_free, steps)
        if min(profile.free) < 0:
            profile = self._readmit(now, steps[:nb_running_steps], placed)
        limit = now + TIME_EPSILON
        for job in placed:
            old = reserved[job.id]
            if old == math.inf:
                self._place(profile, job, now)
            elif old > limit:
                nodes = job.requested_resources
                duration = requested_time(job)
                new = profile.earliest_fit(nodes, duration, now, before=old, ignoring=(old, old + duration, nodes))
                if new < old:
                    profile.add(old, old + duration, nodes)
                    profile.add(new, new + duration, -nodes)
                    reserved[job.id] = new
        self._due = [(reserved[job.id], self._order[job.id], job.id) for job in placed]
        heapq.heapify(self._due)
        return profile

    def decide(self, now: float) -> list[Start]:
        if self._stale or self._profile is None:
            profile = self._profile = self._rebuild(now)
            self._stale = False
        else:
            profile = self._profile
            profile.drop_before(now)
        for job in self._in_order(self._unplaced):
            self._place(profile, job, now)
            heapq.heappush(self._due, (self._reserved[job.id], self._order[job.id], job.id))
        self._unplaced.clear()

        due = self._due
        ready: list[tuple[float, int, str]] = []
        while due and due[0][0] <= now + TIME_EPSILON:
            ready.append(heapq.heappop(due))
        ready.sort(key=lambda item: item[1])
        started: list[Start] = []
        for item in ready:
            reserved_start, _, job_id = item
            job = self._queue[job_id]
            if job.requested_resources > self.pool.nb_free:
                heapq.heappush(due, item)  # nodes still held by a job ending now: retry at the next decision
                continue
            if now - reserved_start > TIME_EPSILON:
                self._stale = True  # started later than reserved: its profile interval is wrong
            del self._queue[job_id]
            del self._order[job_id]
            del self._reserved[job_id]
            started.append((job, self._start(job, now)))
        return started


class Conservative(PolicyScheduler):
    """pybatsim scheduler running :class:`ConservativePolicy` (see :class:`PolicyScheduler` for the event
    handling).

    Options (``--scheduler-options``, see :data:`OPTIONS`), the placement ones of
    :data:`~batreplay.schedulers.node_selection.PLACEMENT_OPTIONS`: ``node_selection`` (which nodes a starting job
    gets: ``lowest-id``, the default, ``least-loaded``, ``best-fit``, ``round-robin``, ``random``,
    ``fastest-first``), ``slots`` (``false``, the default: whole nodes; ``true``: the job slots of each host's
    property ``slots``, one-slot jobs only, wider ones rejected; needs compute sharing) and ``seed``
    (integer >= 0, default 0, of the ``random`` selection). Any other key is refused by the registry.
    """

    policy_class = ConservativePolicy
    #: Options this scheduler reads, ``{name: (default, doc)}`` (checked by the registry): the placement ones.
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = dict(PLACEMENT_OPTIONS)
