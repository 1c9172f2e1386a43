"""The EASY backfilling core: the rules written once, their variation points as small overridable methods.

Sources: EASY, the Extensible Argonne Scheduling sYstem (Lifka 1995, "The ANL/IBM SP scheduling system", JSSPP,
LNCS 949); the formulation with a *shadow time* and *extra nodes* is that of Mu'alem & Feitelson 2001 ("Utilization,
predictability, workloads, and user runtime estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6)).

:meth:`EasyCore.decide` applies, at time ``now`` (s), with the queue in its order (:attr:`EasyCore.queue`):

1. *Heads.* Jobs are started from the head of the queue while the head can start now (:meth:`~EasyCore._start_now`).
2. *Reservation.* If jobs still wait and the variant backfills at this decision (:meth:`~EasyCore._backfills`),
   :meth:`~EasyCore.shadow` gives the head's *shadow time* (the earliest time it is expected to be able to start,
   from the running jobs' expected ends: start + :meth:`~EasyCore._expected_duration`) and its *extra nodes* (the
   nodes expected free then beyond its request); both are kept as :attr:`EasyCore.reservation`.
3. *Backfilling.* The other waiting jobs are tried in queue order (or in the backfill order), from
   :meth:`~EasyCore._first_candidate` on, while :meth:`~EasyCore._nodes_free` is not 0. A job asking more nodes than
   that is skipped. Otherwise it starts now (:meth:`~EasyCore._start_now`) if it ends by the shadow time
   (:meth:`~EasyCore._ends_by_shadow`), or else if it uses only extra nodes (:meth:`~EasyCore._start_on_extra`, which
   says how many extra nodes are left). The time criterion comes first, so a job that ends by the shadow time uses
   up no extra node. :meth:`~EasyCore._end_scan` sees how the scan ended (an incremental scan keeps it).

The hooks (:data:`EasyCore.HOOKS`) and who overrides them:

================================  ===========================================================================
hook                              default (EASY on whole nodes) / overridden by
================================  ===========================================================================
``_expected_duration(job)``       the walltime (``inf`` without one) / Schedulus: its run time estimate
``_nodes_free()``                 free nodes / slots: nodes with a free slot; co-scheduling: nodes with room
``_start_now(job, now)``          lowest free ids if it fits / slots: the node selection; co-scheduling: free
                                  nodes, then the partly used ones its kind may share
``shadow(head, now)``             the first expected end by which the head fits / slots: per node;
                                  Schedulus: the latest expected end; co-scheduling: per node, latest job end
``_ends_by_shadow(job, now, s)``  ``walltime <= s - now + 1e-7`` / Schedulus: ``now + estimate < s``
``_start_on_extra(job, ...)``     its request <= the extra nodes / slots: nodes whose last expected slot it
                                  takes; co-scheduling: nodes the head counts on
``_backfills(started)``           always / Schedulus: after a submission, or when no head job started
``_first_candidate(...)``,        position 1, nothing kept / whole-node EASY: the incremental scan
``_end_scan(...)``
================================  ===========================================================================

Units: times in seconds (floats, ``inf`` for "never"), resources in nodes (integers; job slots of a node count as
that node once, see :mod:`batreplay.schedulers.node_selection`). The order of the floating-point operations is
part of the definition: outputs must stay byte-identical (``shadow - now + TIME_EPSILON`` is not ``shadow - (now -
TIME_EPSILON)``).
"""

from __future__ import annotations

import math
from typing import ClassVar, NamedTuple

from procset import ProcSet

from batreplay.schedulers.policy import TIME_EPSILON, QueuedJob, SchedulingPolicy, Start
from batreplay.schedulers.queue_order import OrderedQueue, QueuedInOrder, order_key


class Reservation(NamedTuple):
    """The head job's reservation: its id, the shadow time (s, may be ``inf``) and the extra nodes at that
    time, as computed at the last decision before any backfilling."""

    job_id: str
    shadow_time: float
    extra_nodes: int


class EasyCore(QueuedInOrder, SchedulingPolicy):
    """EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001) over an ordered queue; the defaults of the hooks
    are EASY on whole nodes, lowest ids first (see the module docstring for the rules and the hooks).

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count of nodes).
        order: queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS` (default ``fcfs``).
        backfill_order: order in which the backfilling candidates (every waiting job but the head) are tried;
            ``None`` (default) for ``order``.

    Raises:
        ValueError: fewer than one resource, an unknown order name.

    Attributes:
        reservation: the head's :class:`Reservation` after the last decision, ``None`` if no job waited after the
            heads were started (or the variant did not backfill then).
    """

    name = "easy-core"
    #: The variation points: the only methods of the core a variant overrides (with the queue bookkeeping of
    #: :class:`~batreplay.schedulers.policy.SchedulingPolicy`: ``__init__``, ``_enqueue``, ``complete``,
    #: ``use_pool``).
    HOOKS: ClassVar[tuple[str, ...]] = (
        "_expected_duration", "_nodes_free", "_start_now", "shadow", "_ends_by_shadow", "_start_on_extra",
        "_backfills", "_first_candidate", "_end_scan",
    )

    def __init__(self, resources: ProcSet | int, *, order: str = "fcfs", backfill_order: str | None = None):
        super().__init__(resources)
        self.reservation: Reservation | None = None
        self._queue = OrderedQueue(order)
        self._backfill_key = None if backfill_order in (None, order) else order_key(backfill_order)

    # -- the rules ----------------------------------------------------------------------------------------------

    def decide(self, now: float) -> list[Start]:
        """Heads, reservation, backfilling at ``now`` (s), as the module docstring says; the jobs started, heads
        first, then backfilled jobs in the order they were tried.

        Raises:
            ValueError: the head requests more nodes than the platform has (:meth:`shadow`; submissions reject such
                jobs, so only a policy driven around :meth:`submit` sees it).
        """
        queue = self._queue.jobs
        started: list[Start] = []
        count = 0
        while count < len(queue):
            job = queue[count]
            allocation = self._start_now(job, now)
            if allocation is None:
                break
            started.append((job, allocation))
            count += 1
        self._queue.remove_head(count)
        self.reserve_and_backfill(now, started, self._backfills(count))
        return started

    def reserve_and_backfill(self, now: float, started: list[Start], backfill: bool = True) -> None:
        """Steps 2 and 3 of :meth:`decide` at ``now`` (s), the heads having been started: when jobs wait and
        ``backfill``, the head of the queue gets its reservation and the jobs behind it are backfilled (appended to
        ``started`` and taken out of the queue); otherwise :attr:`reservation` becomes ``None``."""
        queue = self._queue.jobs
        if not queue or not backfill:
            self.reservation = None
            self._end_scan(None, 0, 0, 0.0)
            return
        head = queue[0]
        shadow, extra = self.shadow(head, now)
        self.reservation = Reservation(head.id, shadow, extra)
        self._backfill(head, now, shadow, extra, started)

    def _backfill(self, head: QueuedJob, now: float, shadow: float, extra: int, started: list[Start]) -> None:
        """Step 3 of :meth:`decide`: try the candidates behind ``head``, given its ``shadow`` time (s) and
        ``extra`` nodes; append the jobs started to ``started`` and take them out of the queue."""
        queue = self._queue.jobs
        free = self._nodes_free()
        slack = shadow - now
        size = len(queue)
        if self._backfill_key is None:
            candidates: range | list[int] = range(self._first_candidate(head, free, extra, slack), size)
        else:
            key, rank_of = self._backfill_key, self._queue.rank_of
            candidates = sorted(range(1, size), key=lambda index: key(queue[index], rank_of[queue[index].id]))
        backfilled: list[int] = []
        for position in candidates:
            if free <= 0:
                break
            job = queue[position]
            if job.requested_resources > free:
                continue
            if self._ends_by_shadow(job, now, shadow):
                allocation = self._start_now(job, now)
                if allocation is None:
                    continue
            else:
                placed = self._start_on_extra(job, now, shadow, extra)
                if placed is None:
                    continue
                allocation, extra = placed
            started.append((job, allocation))
            backfilled.append(position)
            free = self._nodes_free()
        if backfilled:
            self._queue.remove_positions(sorted(backfilled))
        self._end_scan(head, free, extra, slack)

    # -- hooks: defaults of EASY on whole nodes ---------------------------------------------------------------

    def _nodes_free(self) -> int:
        """Nodes a job could get now, an upper bound used to skip candidates and stop the scan at 0 (whole
        nodes: the free ones)."""
        return self.pool.nb_free

    def _start_now(self, job: QueuedJob, now: float) -> ProcSet | None:
        """Start ``job`` at ``now`` (s) on nodes free now and record it as running; its allocation, or ``None``
        (nothing changed) when it does not fit. Whole nodes: the lowest free ids."""
        if job.requested_resources > self.pool.nb_free:
            return None
        return self._start(job, now)

    def shadow(self, head: QueuedJob, now: float) -> tuple[float, int]:
        """Shadow time (s, ``>= now``, ``inf`` possible) and extra nodes for ``head`` given the running jobs: the
        earliest expected end (never before ``now``) at which the free nodes and those of the jobs ended so far
        reach the head's request; the extra nodes are the nodes free then, every job expected to end by then
        (within :data:`~batreplay.schedulers.policy.TIME_EPSILON`) counted as ended, minus the request. A head
        that can only start after a job without walltime gets ``(inf, 0)``.

        Raises:
            ValueError: ``head`` requests more nodes than the platform has.
        """
        needed = head.requested_resources
        if needed > self.nb_resources:
            raise ValueError(f"job {head.id} requests {needed} nodes, more than the {self.nb_resources} of the "
                             "platform")
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

    def _ends_by_shadow(self, job: QueuedJob, now: float, shadow: float) -> bool:
        """The time criterion: ``job``, started at ``now`` (s), ends by the ``shadow`` time (s). Default: it has a
        walltime and ``walltime <= shadow - now + TIME_EPSILON`` (a job without walltime never passes, not even
        with ``shadow = inf``)."""
        walltime = job.walltime
        return walltime is not None and walltime <= shadow - now + TIME_EPSILON

    def _start_on_extra(self, job: QueuedJob, now: float, shadow: float, extra: int) -> tuple[ProcSet, int] | None:
        """The extra-node criterion, for a job that fits now but does not end by the ``shadow`` time (s): start it
        if it delays the head on none of the nodes it counts on. Returns its allocation and the extra nodes left,
        or ``None`` (nothing changed). Whole nodes: its request is at most ``extra``, which it uses up."""
        nodes = job.requested_resources
        if nodes > extra:
            return None
        return self._start(job, now), extra - nodes

    def _backfills(self, started: int) -> bool:
        """Whether this decision backfills, ``started`` head jobs having just started (called at every decision,
        once). Default: always."""
        return True

    def _first_candidate(self, head: QueuedJob, free: int, extra: int, slack: float) -> int:
        """The queue position the backfilling scan (in queue order) starts from, given the ``head``, the free
        nodes (:meth:`_nodes_free`), its extra nodes and the ``slack`` to its shadow time (s). Default: 1, every
        candidate."""
        return 1

    def _end_scan(self, head: QueuedJob | None, free: int, extra: int, slack: float) -> None:
        """Called after each decision: the scan for ``head`` ended with ``free`` nodes (:meth:`_nodes_free`) and
        ``extra`` extra nodes left, ``slack`` s before the shadow time; ``head`` is ``None`` when nothing was
        scanned. Default: nothing kept."""
