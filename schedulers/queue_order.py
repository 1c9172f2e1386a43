"""Queue orders of the backfilling family: in which order waiting jobs are started, reserved and backfilled.

An order is a sort key on a waiting job and its submission rank (0, 1, 2, ... in the order the scheduler received
the jobs: by submission time, and jobs submitted at the same instant in the order Batsim delivers them, which is
the workload's order). ``fcfs`` is the submission order; ``sjf`` / ``ljf`` sort by requested time (the walltime,
shortest / longest first); ``saf`` / ``laf`` by area, requested nodes x requested time (smallest / largest first),
the orders compared by Tsafrir, Etsion and Feitelson 2007 (IEEE TPDS 18(6)) and Srinivasan et al. 2002. Ties are
broken by submission rank, then by job id (the rank is unique within one policy, so the id never decides; it is
there so that the key is a total order on its own). A job without walltime counts as infinitely long: last under
``sjf`` and ``saf``, first under ``ljf`` and ``laf``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator

from batreplay.schedulers.policy import QueuedJob, requested_time

#: A sort key: smaller keys come first in the queue.
OrderKey = tuple

KeyFunction = Callable[[QueuedJob, int], OrderKey]



def _fcfs(job: QueuedJob, rank: int) -> OrderKey:
    return (rank, job.id)


def _sjf(job: QueuedJob, rank: int) -> OrderKey:
    return (requested_time(job), rank, job.id)


def _ljf(job: QueuedJob, rank: int) -> OrderKey:
    return (-requested_time(job), rank, job.id)


def _saf(job: QueuedJob, rank: int) -> OrderKey:
    return (job.requested_resources * requested_time(job), rank, job.id)


def _laf(job: QueuedJob, rank: int) -> OrderKey:
    return (-job.requested_resources * requested_time(job), rank, job.id)


#: The queue orders by name, with a one-line description each.
ORDERS: dict[str, tuple[KeyFunction, str]] = {
    "fcfs": (_fcfs, "submission order (first come, first served)"),
    "sjf": (_sjf, "shortest requested time (walltime) first"),
    "ljf": (_ljf, "longest requested time (walltime) first"),
    "saf": (_saf, "smallest area (requested nodes x requested time) first"),
    "laf": (_laf, "largest area (requested nodes x requested time) first"),
}


def order_key(name: str) -> KeyFunction:
    """The key function of the order ``name`` (see :data:`ORDERS`).

    Raises:
        ValueError: unknown order name (the message lists the known ones).
    """
    try:
        return ORDERS[name][0]
    except KeyError:
        raise ValueError(f"unknown queue order {name!r}: known orders are {', '.join(ORDERS)}") from None


class OrderedQueue:
    """Waiting jobs kept sorted by an order (:data:`ORDERS`), with their submission ranks.

    Under ``fcfs`` an insertion is an append; otherwise a binary search plus a list insertion (O(n) memory move).

    Args:
        order: an order name of :data:`ORDERS`.

    Raises:
        ValueError: unknown order name.
    """

    def __init__(self, order: str = "fcfs"):
        self._key = order_key(order)
        self._keys: list[OrderKey] = []
        self.jobs: list[QueuedJob] = []  # in queue order; read it, change it only through this class
        self.rank_of: dict[str, int] = {}  # submission rank of each waiting job
        self._rank = 0

    def __iter__(self) -> Iterator[QueuedJob]:
        return iter(self.jobs)

    def push(self, job: QueuedJob) -> int:
        """Insert a newly submitted job at its place; returns its position (0 = head)."""
        key = self._key(job, self._rank)
        self.rank_of[job.id] = self._rank
        self._rank += 1
        keys = self._keys
        if not keys or key > keys[-1]:
            keys.append(key)
            self.jobs.append(job)
            return len(keys) - 1
        index = bisect_right(keys, key)
        keys.insert(index, key)
        self.jobs.insert(index, job)
        return index

    def remove_positions(self, positions: list[int]) -> None:
        """Remove the jobs at ``positions`` (increasing positions)."""
        for index in reversed(positions):
            del self.rank_of[self.jobs[index].id]
            del self.jobs[index]
            del self._keys[index]

    def remove_head(self, count: int) -> None:
        """Remove the first ``count`` jobs."""
        if count:
            for job in self.jobs[:count]:
                del self.rank_of[job.id]
            del self.jobs[:count]
            del self._keys[:count]


class QueuedInOrder:
    """What a policy whose waiting jobs are an :class:`OrderedQueue` (its ``_queue``) gives
    :class:`~batreplay.schedulers.policy.SchedulingPolicy`: the ``queue`` property (the waiting jobs, in queue order)
    and ``_enqueue`` (a push). Put it before ``SchedulingPolicy`` among the bases."""

    _queue: OrderedQueue

    @property
    def queue(self) -> tuple[QueuedJob, ...]:
        return tuple(self._queue.jobs)

    def _enqueue(self, job: QueuedJob) -> None:
        self._queue.push(job)
