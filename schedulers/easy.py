"""EASY backfilling (FCFS with aggressive backfilling and a single reservation).

Sources: EASY, the Extensible Argonne Scheduling sYstem, D. Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995
(LNCS 949); the formulation with a *shadow time* and *extra nodes* used here is that of A. W. Mu'alem and
D. G. Feitelson, "Utilization, predictability, workloads, and user runtime estimates in scheduling the IBM SP2
with backfilling", IEEE TPDS 12(6), 2001; Rauch 2022 ("HPC Scheduling Simulator", section "First Come First Serve
w/ EASY Backfilling" and its Fig. 3) describes the same two cases: the shadow space and the extra-processor space.

The rules are written once, in :class:`~batreplay.schedulers.easy_core.EasyCore`; this module gives EASY on whole
nodes (:class:`EasyPolicy`, the core's defaults plus an incremental scan) and on nodes of several job slots
(:class:`SlotEasyPolicy`, the same rules counted per node). Rules applied at every decision, at time ``now``:

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
- Allocations are the lowest free resource ids, in start order (with the option ``node_selection``: the nodes the
  strategy of :mod:`~batreplay.schedulers.node_selection` picks).

Cost: computing the reservation walks the running jobs by expected end (at most one per node). The backfill
scan stops as soon as no node is free. When neither the head, nor the number of free nodes, nor the extra nodes,
nor the time to the shadow time grew since the previous decision, every job that failed the test then still
fails it, and only the jobs submitted since are scanned; the result is the same as a full scan (tested). On nodes
of several job slots every waiting job is tried at each decision.

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
from typing import Any, ClassVar

import numpy as np
from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.easy_core import EasyCore, Reservation
from batreplay.schedulers.node_selection import PLACEMENT_OPTIONS, SlotPool
from batreplay.schedulers.policy import TIME_EPSILON, QueuedJob

__all__ = ["Easy", "EasyPolicy", "Reservation", "SlotEasyPolicy"]


@dataclass(slots=True)
class _ScanState:
    """What the last backfill scan ended with; the incremental scan is valid when nothing loosened since."""

    head_id: str
    nb_free: int
    extra_nodes: int
    slack: float  # shadow time minus decision time, s
    scanned: int  # queue positions [0, scanned) were scanned (and all failed)


class EasyPolicy(EasyCore):
    """EASY backfilling over a queue in submission order, or another order (see the module docstring for the
    rules): :class:`~batreplay.schedulers.easy_core.EasyCore` on whole nodes, with an incremental scan.

    On nodes of several job slots (:meth:`use_pool` with a :class:`~batreplay.schedulers.node_selection.SlotPool`
    of several slots somewhere) the policy becomes a :class:`SlotEasyPolicy`: same state, the per-node hooks.

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count of nodes).
        incremental: reuse the previous scan when it is provably still valid (default). ``False`` rescans the
            whole queue at every decision; both give the same decisions, the flag exists to test that.
        order: queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS` (default ``fcfs``).
        backfill_order: order in which the backfilling candidates (every waiting job but the head) are tried;
            ``None`` (default) for ``order``.

    Raises:
        ValueError: unknown order name, fewer than one resource.

    Attributes:
        reservation: the head's :class:`Reservation` after the last decision, ``None`` if the queue was empty.
    """

    name = "easy"
    places_spread_jobs = True

    def __init__(self, resources: ProcSet | int, *, incremental: bool = True, order: str = "fcfs",
                 backfill_order: str | None = None):
        super().__init__(resources, order=order, backfill_order=backfill_order)
        self.incremental = incremental
        self._scan: _ScanState | None = None

    def use_pool(self, pool: SlotPool) -> None:
        """Place jobs with ``pool`` (see :meth:`SchedulingPolicy.use_pool`); with jobs spread over nodes of several
        slots, this policy's class becomes :class:`SlotEasyPolicy` (and back to :class:`EasyPolicy` otherwise).

        Raises:
            ValueError: jobs are already queued or running.
        """
        super().use_pool(pool)
        if type(self) in (EasyPolicy, SlotEasyPolicy):
            self.__class__ = SlotEasyPolicy if self.spread_slots else EasyPolicy
        elif self.spread_slots and not isinstance(self, SlotEasyPolicy):
            raise TypeError(f"{type(self).__name__} subclasses EasyPolicy, whose rules count whole nodes: subclass "
                            "SlotEasyPolicy to place jobs spread over nodes of several job slots")

    def _enqueue(self, job: QueuedJob) -> None:
        position = self._queue.push(job)
        scan = self._scan
        if scan is not None and position < scan.scanned:
            scan.scanned = position  # the jobs from there on are not known to fail any more

    def _first_candidate(self, head: QueuedJob, free: int, extra: int, slack: float) -> int:
        """The incremental scan: past the jobs the previous scan tried when it is still valid (same head, and
        neither the free nodes, the extra nodes nor the slack to the shadow time grew: every job that failed then
        fails now), else 1."""
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
            return max(previous.scanned, 1)  # every job before it failed under looser conditions
        return 1

    def _end_scan(self, head: QueuedJob | None, free: int, extra: int, slack: float) -> None:
        """Keep how the scan ended (every job left in the queue was tried and failed), for :meth:`_first_candidate`;
        forget it when nothing was scanned."""
        self._scan = None if head is None else _ScanState(head.id, free, extra, slack, len(self._queue.jobs))


class SlotEasyPolicy(EasyPolicy):
    """EASY on nodes of several job slots, for jobs of one slot on each of several nodes (see
    :mod:`batreplay.schedulers.node_selection`); what :class:`EasyPolicy` becomes on such a pool.

    The same rules, counted per node: a job fits when that many nodes have a free slot; the head's reservation is
    :meth:`slot_shadow`, and its *extra nodes* are the nodes with a free slot expected then, minus its request. A
    backfilled job that does not end by the shadow time may take a slot on a node expected to have two or more free
    then at no cost, and uses up one extra node for each node it takes whose last expected free slot it is. For
    one-slot jobs this is exactly the rule counted in slots. Every waiting job is tried at each decision (no
    incremental scan). Arguments, errors and attributes: those of :class:`EasyPolicy`, which turns into this class
when given a slot pool (its hooks read the pool's slots: build it that way, not on whole nodes).
    """

    pool: SlotPool
    _at_shadow: np.ndarray | None = None  # free slots of each node expected at the shadow time, set by shadow()

    def _nodes_free(self) -> int:
        """Nodes with a free slot."""
        return int(np.count_nonzero(self.pool.free_slots))

    def _start_now(self, job: QueuedJob, now: float) -> ProcSet | None:
        """One slot on each of the nodes the node selection picks, when that many nodes have a free slot."""
        if not self.pool.fits(job.requested_resources):
            return None
        return self._start(job, now)

    def shadow(self, head: QueuedJob, now: float) -> tuple[float, int]:
        """Shadow time (s) of :meth:`slot_shadow` and the extra nodes: nodes with a free slot expected then, minus
        the head's request (0 with ``inf``). Keeps the free slots expected then for :meth:`_start_on_extra`."""
        shadow, expected = self.slot_shadow(head, now)
        self._at_shadow = expected
        return shadow, 0 if expected is None else int(np.count_nonzero(expected)) - head.requested_resources

    def slot_shadow(self, head: QueuedJob, now: float) -> tuple[float, np.ndarray | None]:
        """The shadow time (s, ``>= now``, ``inf`` possible), the earliest expected end by which ``head``'s request
        of distinct nodes have a free slot, and the free slots of each node expected then (int array by node
        position; every job expected to end by then counted as ended; None with ``inf``)."""
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

    def _start_on_extra(self, job: QueuedJob, now: float, shadow: float, extra: int) -> tuple[ProcSet, int] | None:
        """Slots on nodes expected to keep a free slot at the shadow time cost nothing; a node whose last expected
        free slot the job takes costs one extra node. The node selection's pick is kept when it costs at most
        ``extra``; otherwise the spare nodes are taken first (the selection choosing among them), then nodes of
        one expected slot."""
        expected = self._at_shadow
        if expected is None:
            return None
        pool = self.pool
        nodes = job.requested_resources
        open_now = pool.free_slots > 0
        spare = open_now & (expected >= 2)  # a slot taken there still leaves one at the shadow time
        last = open_now & (expected == 1)
        if int(np.count_nonzero(spare)) + min(extra, int(np.count_nonzero(last))) < nodes:
            return None
        chosen = pool.choose(nodes)
        if int(np.count_nonzero(expected[chosen] == 1)) > extra:  # the strategy's pick costs too much
            taken = min(nodes, int(np.count_nonzero(spare)))
            chosen = pool.choose(taken, spare) if taken else chosen[:0]
            if taken < nodes:
                chosen = np.concatenate((chosen, pool.choose(nodes - taken, last)))
        extra -= int(np.count_nonzero(expected[chosen] == 1))
        expected[chosen] -= 1
        return self._record_start(job, pool.take(chosen), now), extra

    def _first_candidate(self, head: QueuedJob, free: int, extra: int, slack: float) -> int:
        """1: every candidate is tried (no incremental scan per node)."""
        return 1

    def _end_scan(self, head: QueuedJob | None, free: int, extra: int, slack: float) -> None:
        """Nothing kept."""
        self._scan = None


class Easy(PolicyScheduler):
    """pybatsim scheduler running :class:`EasyPolicy` (see :class:`PolicyScheduler` for the event handling).

    Options (``--scheduler-options``, see :data:`OPTIONS`), the placement ones of
    :data:`~batreplay.schedulers.node_selection.PLACEMENT_OPTIONS`: ``node_selection`` (which nodes a starting job
    gets: ``lowest-id``, the default, ``least-loaded``, ``best-fit``, ``round-robin``, ``random``,
    ``fastest-first``), ``slots`` (``false``, the default: whole nodes; ``true``: the job slots of each host's
    property ``slots``, jobs spread over nodes per :class:`SlotEasyPolicy`; needs compute sharing) and ``seed``
    (integer >= 0, default 0, of the ``random`` selection). Any other key is refused by the registry.
    """

    policy_class = EasyPolicy
    #: Options this scheduler reads, ``{name: (default, doc)}`` (checked by the registry): the placement ones.
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = dict(PLACEMENT_OPTIONS)
