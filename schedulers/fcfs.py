"""First-come first-served (FCFS) scheduling, without backfilling.

Definition (Rauch 2022, "HPC Scheduling Simulator", section "First Come First Serve w/ EASY Backfilling"; the
project's seed ``001``): jobs run in the order they were received, when enough resources are free; otherwise they
wait in a queue for their turn. The head of the queue is never overtaken, so a wide job at the head keeps the
jobs behind it waiting even if they would fit (the fragmentation the EASY policy addresses).

Loadable by the plain pybatsim launcher: ``pybatsim schedulers/fcfs.py`` instantiates :class:`Fcfs`.
"""

from __future__ import annotations

from collections import deque
from typing import Any, ClassVar

from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.policy import QueuedJob, SchedulingPolicy, Start


class FcfsPolicy(SchedulingPolicy):
    """FCFS over a queue in submission order: start jobs from the head while the head fits.

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count).

    Each decision costs O(number of jobs started + 1).
    """

    name = "fcfs"

    def __init__(self, resources: ProcSet | int):
        super().__init__(resources)
        self._queue: deque[QueuedJob] = deque()

    @property
    def queue(self) -> tuple[QueuedJob, ...]:
        return tuple(self._queue)

    def _enqueue(self, job: QueuedJob) -> None:
        self._queue.append(job)

    def decide(self, now: float) -> list[Start]:
        started: list[Start] = []
        queue = self._queue
        while queue and queue[0].requested_resources <= self.pool.nb_free:
            job = queue.popleft()
            started.append((job, self._start(job, now)))
        return started


class Fcfs(PolicyScheduler):
    """pybatsim scheduler running :class:`FcfsPolicy` (see :class:`PolicyScheduler` for the event handling).

    Options (``--scheduler-options``): none; any key is refused by the registry.
    """

    policy_class = FcfsPolicy
    #: Options this scheduler reads, ``{name: (default, doc)}`` (checked by the registry): none.
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = {}
