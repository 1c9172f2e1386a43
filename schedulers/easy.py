"""EASY backfilling (FCFS with aggressive backfilling and a single reservation).

Sources: EASY, the Extensible Argonne Scheduling sYstem, D. Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995
(LNCS 949); the formulation with a *shadow time* and *extra nodes* used here is that of A. W. Mu'alem and
D. G. Feitelson, "Utilization, predictability, workloads, and user runtime estimates in scheduling the IBM SP2
with backfilling", IEEE TPDS 12(6), 2001; Rauch 2022 ("HPC Scheduling Simulator", section "First Come First Serve
w/ EASY Backfilling" and its Fig. 3) describes the same two cases: the shadow space and the extra-processor space.

Rules applied at every decision, at time ``now``:

1. The queue is kept in submission order. Jobs are started from its head while the head fits in the free nodes.
2. If the head does not fit, it gets a reservation. Running jobs are expected to end at start + walltime; the
   *shadow time* is the earliest of these ends (never before ``now``) at which the free nodes plus the nodes of
   the jobs ended so far reach the head's request. *Extra nodes* = nodes free at the shadow time (all jobs
   expected to end by then counted as ended) minus the head's request.
3. The rest of the queue is scanned in order. A job is backfilled, i.e. started now, if it fits in the nodes
   free at that point of the scan and either ends by the shadow time (``now + walltime <= shadow``), or requests
   at most the extra nodes, in which case the extra nodes decrease by its request. The first criterion is
   checked first, so a job that ends before the shadow time does not use up extra nodes.

Choices and edge cases (documented, tested):

- A job with no walltime (missing, zero or negative requested time) cannot pass the time criterion; it can only
  be backfilled on extra nodes. A running job without walltime is expected to run forever: if the head can only
  start after such a job, the shadow time is ``inf``, every job with a walltime passes the time criterion and the
  extra nodes are 0.
- Times are compared with a tolerance of :data:`~batreplay.schedulers.policy.TIME_EPSILON` (1e-7 s, below
  Batsim's 1e-6 s resolution): a job ending at ``shadow + 1e-9`` ends "by the shadow time".
- Several jobs started at the same ``now`` are all recorded as running before the reservation is computed, so
  the reservation accounts for them.
- Allocations are the lowest free resource ids, in start order.

Cost: computing the reservation walks the running jobs by expected end (at most one per node). The backfill
scan stops as soon as no node is free. When neither the head, nor the number of free nodes, nor the extra nodes,
nor the time to the shadow time grew since the previous decision, every job that failed the test then still
fails it, and only the jobs submitted since are scanned; the result is the same as a full scan (tested).

Queue orders (reservation depth 1 of :mod:`~batreplay.schedulers.backfilling`): the rules above use the submission
order; ``order`` sorts the queue by another key of :mod:`~batreplay.schedulers.queue_order` (the head, its
reservation and the scan all follow it), and ``backfill_order`` scans the backfilling candidates in yet another order
while the head stays the head of ``order`` (SJBF: FCFS queue, candidates shortest first, Tsafrir, Etsion and
Feitelson 2007). A job inserted before the scanned part of the queue makes the next scan start at its position;
with a separate backfill order every decision scans every candidate.

Loadable by the plain pybatsim launcher: ``pybatsim schedulers/easy.py`` instantiates :class:`Easy`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.node_selection import PLACEMENT_OPTIONS
from batreplay.schedulers.policy import TIME_EPSILON, QueuedJob, SchedulingPolicy, Start
from batreplay.schedulers.queue_order import OrderedQueue, order_key


class Reservation(NamedTuple):
    """The head job's reservation: its id, the shadow time (s, may be ``inf``) and the extra nodes at that
    time, as computed at the last decision before any backfilling."""

    job_id: str
    shadow_time: float
    extra_nodes: int


@dataclass(slots=True)
class _ScanState:
    """What the last backfill scan ended with; the incremental scan is valid when nothing loosened since."""

    head_id: str
    nb_free: int
    extra_nodes: int
    slack: float  # shadow time minus decision time, s
    scanned: int  # queue positions [0, scanned) were scanned (and all failed)


class EasyPolicy(SchedulingPolicy):
    """EASY backfilling over a queue in submission order, or another order (see the module docstring for the
    rules).

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count).
        incremental: reuse the previous scan when it is provably still valid (default). ``False`` rescans the
            whole queue at every decision; both give the same decisions, the flag exists to test that.
        order: queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS` (default ``fcfs``).
        backfill_order: order in which the backfilling candidates (every waiting job but the head) are tried;
            ``None`` (default) for ``order``.

    Raises:
        ValueError: unknown order name.

    Attributes:
        reservation: the head's :class:`Reservation` after the last decision, ``None`` if the queue was empty.
    """

    name = "easy"
    places_spread_jobs = True

    def __init__(self, resources: ProcSet | int, *, incremental: bool = True, order: str = "fcfs",
                 backfill_order: str | None = None):
        super().__init__(resources)
        self.incremental = incremental
        self.reservation: Reservation | None = None
        self._queue = OrderedQueue(order)
        self._backfill_key = None if backfill_order in (None, order) else order_key(backfill_order)
        self._scan: _ScanState | None = None

    @property
    def queue(self) -> tuple[QueuedJob, ...]:
        return tuple(self._queue.jobs)

    def _enqueue(self, job: QueuedJob) -> None:
        position = self._queue.push(job)
        scan = self._scan
        if scan is not None and position < scan.scanned:
            scan.scanned = position  # the jobs from there on are not known to fail any more

    def shadow(self, head: QueuedJob, now: float) -> tuple[float, int]:
        """Shadow time (s, ``>= now``, ``inf`` possible) and extra nodes for ``head`` given the running jobs.

        Raises:
            ValueError: ``head`` requests more nodes than the platform has.
        """
        needed = head.requested_resources
        if needed > self.nb_resources:
            raise ValueError(f"job {head.id} requests {needed} nodes, more than the {self.nb_resources} of the platform")
        available = self.pool.nb_free
        if available >= needed:
            return now, available - needed
        ends = self.running.ends()
        count = len(ends)
        index = 0
        while index < count:
            end, _, nodes = ends[index]
            available += nodes
            index += 1
            if available >= needed:
                if end == math.inf:
                    return math.inf, 0
                shadow = end if end > now else now
                limit = shadow + TIME_EPSILON
                while index < count and ends[index][0] <= limit:
                    available += ends[index][2]
                    index += 1
                return shadow, available - needed
        raise AssertionError("running jobs and free nodes do not add up to the platform size")  # pragma: no cover

    def slot_shadow(self, head: QueuedJob, now: float) -> tuple[float, np.ndarray | None]:
        """On nodes of several job slots (:attr:`spread_slots`): the shadow time (s, ``>= now``, ``inf`` possible),
        the earliest expected end by which ``head``'s request of distinct nodes have a free slot, and the free slots
        of each node expected then (every job expected to end by then counted as ended; None with ``inf``)."""
        pool = self.pool
        needed = head.requested_resources
        free = pool.free_slots.copy()
        if np.count_nonzero(free) >= needed:
            return now, free
        entries = self.running.by_end()
        for entry in entries:
            free[pool.positions(entry.allocation)] += 1
            if np.count_nonzero(free) >= needed:
                if entry.expected_end == math.inf:
                    return math.inf, None
                shadow = max(entry.expected_end, now)
                for later in entries:
                    if later.expected_end > shadow + TIME_EPSILON:
                        break
                    free[pool.positions(later.allocation)] += 1
                return shadow, free
        raise AssertionError("running jobs and free slots do not add up to the platform")  # pragma: no cover

    def _decide_spread(self, now: float) -> list[Start]:
        """EASY on nodes of several job slots, for jobs of one slot on each of several nodes (see
        :mod:`batreplay.schedulers.node_selection`). The same rules, counted per node: a job fits when that many
        nodes have a free slot; the head's reservation is :meth:`slot_shadow`, and its *extra nodes* are the nodes
        with a free slot expected then, minus its request. A backfilled job that does not end by the shadow time
        may take a slot on a node expected to have two or more free then at no cost, and uses up one extra node
        for each node it takes whose last expected free slot it is. For one-slot jobs this is exactly the rule
        counted in slots. Every waiting job is tried at each decision (no incremental scan)."""
        started: list[Start] = []
        queue = self._queue.jobs
        pool = self.pool
        count = 0
        while count < len(queue) and pool.fits(queue[count].requested_resources):
            job = queue[count]
            started.append((job, self._start(job, now)))
            count += 1
        self._queue.remove_head(count)
        self._scan = None
        if not queue:
            self.reservation = None
            return started
        head = queue[0]
        shadow, expected = self.slot_shadow(head, now)
        extra = 0 if expected is None else int(np.count_nonzero(expected)) - head.requested_resources
        self.reservation = Reservation(head.id, shadow, extra)
        limit = shadow - now + TIME_EPSILON
        size = len(queue)
        if self._backfill_key is None:
            candidates: range | list[int] = range(1, size)
        else:
            key, rank_of = self._backfill_key, self._queue.rank_of
            candidates = sorted(range(1, size), key=lambda index: key(queue[index], rank_of[queue[index].id]))
        backfilled: list[int] = []
        for position in candidates:
            if not pool.nb_free:
                break
            job = queue[position]
            nodes = job.requested_resources
            if not pool.fits(nodes):
                continue
            walltime = job.walltime
            if walltime is not None and walltime <= limit:
                chosen = pool.choose(nodes)  # back by the shadow time: its slots are free again then
            elif expected is None:
                continue
            else:
                open_now = pool.free_slots > 0
                spare = open_now & (expected >= 2)  # a slot taken there still leaves one at the shadow time
                last = open_now & (expected == 1)
                if int(np.count_nonzero(spare)) + min(extra, int(np.count_nonzero(last))) < nodes:
                    continue
                chosen = pool.choose(nodes)
                if int(np.count_nonzero(expected[chosen] == 1)) > extra:  # the strategy's pick costs too much
                    taken = min(nodes, int(np.count_nonzero(spare)))
                    chosen = pool.choose(taken, spare) if taken else chosen[:0]
                    if taken < nodes:
                        chosen = np.concatenate((chosen, pool.choose(nodes - taken, last)))
                extra -= int(np.count_nonzero(expected[chosen] == 1))
                expected[chosen] -= 1
            started.append((job, self._record_start(job, pool.take(chosen), now)))
            backfilled.append(position)
        self._queue.remove_positions(sorted(backfilled))
        return started

    def decide(self, now: float) -> list[Start]:
        if self.spread_slots:
            return self._decide_spread(now)
        started: list[Start] = []
        queue = self._queue.jobs
        pool = self.pool

        # 1. FCFS part: start head jobs while they fit.
        count = 0
        while count < len(queue) and queue[count].requested_resources <= pool.nb_free:
            job = queue[count]
            started.append((job, self._start(job, now)))
            count += 1
        self._queue.remove_head(count)
        if not queue:
            self.reservation = None
            self._scan = None
            return started

        # 2. Reservation for the head.
        head = queue[0]
        shadow, extra = self.shadow(head, now)
        self.reservation = Reservation(head.id, shadow, extra)
        slack = shadow - now
        free = pool.nb_free
        previous = self._scan
        if (
            self.incremental
            and self._backfill_key is None
            and previous is not None
            and previous.head_id == head.id
            and free <= previous.nb_free
            and extra <= previous.extra_nodes
            and slack <= previous.slack
        ):
            position = max(previous.scanned, 1)  # every job before it failed under looser conditions
        else:
            position = 1

        # 3. Backfilling scan, in queue order (or backfill order).
        limit = slack + TIME_EPSILON
        backfilled: list[int] = []
        size = len(queue)
        if self._backfill_key is None:
            candidates: range | list[int] = range(position, size)
        else:
            key, rank_of = self._backfill_key, self._queue.rank_of
            candidates = sorted(range(1, size), key=lambda index: key(queue[index], rank_of[queue[index].id]))
        for position in candidates:
            if free <= 0:
                break
            job = queue[position]
            nodes = job.requested_resources
            if nodes <= free:
                walltime = job.walltime
                if walltime is not None and walltime <= limit:
                    backfilled.append(position)
                    free -= nodes
                elif nodes <= extra:
                    backfilled.append(position)
                    free -= nodes
                    extra -= nodes
        for index in backfilled:
            job = queue[index]
            started.append((job, self._start(job, now)))
        self._queue.remove_positions(sorted(backfilled))
        self._scan = _ScanState(head.id, free, extra, slack, len(queue))
        return started


class Easy(PolicyScheduler):
    """pybatsim scheduler running :class:`EasyPolicy` (see :class:`PolicyScheduler` for the event handling).

    Options (``--scheduler-options``): none; any key is refused by the registry.
    """

    policy_class = EasyPolicy
    #: Options this scheduler reads, ``{name: (default, doc)}`` (checked by the registry): none.
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = dict(PLACEMENT_OPTIONS)
