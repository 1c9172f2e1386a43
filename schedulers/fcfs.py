"""First-come first-served (FCFS) scheduling, without backfilling, and its strict-order variants (SJF, LJF, ...).

Definition (Rauch 2022, "HPC Scheduling Simulator", section "First Come First Serve w/ EASY Backfilling"): jobs run in the order they were received, when enough resources are free; otherwise they
wait in a queue for their turn. The head of the queue is never overtaken, so a wide job at the head keeps the
jobs behind it waiting even if they would fit (the fragmentation the EASY policy addresses). The same rule over another queue order
(:mod:`~batreplay.schedulers.queue_order`: shortest or longest requested time, smallest or largest area first) gives
the strict-order, no-backfilling members of the backfilling family (reservation depth 0,
:mod:`~batreplay.schedulers.backfilling`).

Loadable by the plain pybatsim launcher: ``pybatsim schedulers/fcfs.py`` instantiates :class:`Fcfs`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.node_selection import PLACEMENT_OPTIONS
from batreplay.schedulers.policy import QueuedJob, SchedulingPolicy, Start
from batreplay.schedulers.queue_order import OrderedQueue, QueuedInOrder


class FcfsPolicy(QueuedInOrder, SchedulingPolicy):
    """Strict queue order without backfilling: start jobs from the head while the head fits.

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count).
        order: the queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS` (``fcfs``, the
            submission order, by default).

    Raises:
        ValueError: unknown order.

    Each decision costs O(number of jobs started + 1).
    """

    name = "fcfs"
    places_spread_jobs = True

    def __init__(self, resources: ProcSet | int, *, order: str = "fcfs"):
        super().__init__(resources)
        self._queue = OrderedQueue(order)

    def decide(self, now: float) -> list[Start]:
        started: list[Start] = []
        jobs = self._queue.jobs
        count = 0
        fits = self.pool.fits  # on job slots: that many nodes have a free slot
        while count < len(jobs) and fits(jobs[count].requested_resources):
            job = jobs[count]
            started.append((job, self._start(job, now)))
            count += 1
        self._queue.remove_head(count)
        return started


class Fcfs(PolicyScheduler):
    """pybatsim scheduler running :class:`FcfsPolicy` (see :class:`PolicyScheduler` for the event handling).

    Options (``--scheduler-options``, see :data:`OPTIONS`), the placement ones of
    :data:`~batreplay.schedulers.node_selection.PLACEMENT_OPTIONS`: ``node_selection`` (which nodes a starting job
    gets: ``lowest-id``, the default, ``least-loaded``, ``best-fit``, ``round-robin``, ``random``,
    ``fastest-first``), ``slots`` (``false``, the default: whole nodes; ``true``: the job slots of each host's
    property ``slots``, a job taking one slot on each of as many nodes; needs compute sharing) and ``seed``
    (integer >= 0, default 0, of the ``random`` selection). Any other key is refused by the registry.
    """

    policy_class = FcfsPolicy
    #: Options this scheduler reads, ``{name: (default, doc)}`` (checked by the registry): the placement ones.
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = dict(PLACEMENT_OPTIONS)
