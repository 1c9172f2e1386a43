"""Backfilling with a reservation depth of k jobs, recomputed at every decision (between EASY and conservative).

At each decision, at time ``now``: jobs are started from the head of the queue while they fit; an availability
profile (:class:`~batreplay.schedulers.availability_profile.AvailabilityProfile`) is built from the free nodes and
the running jobs' expected ends (start + walltime; an end already passed counts at ``now``, its nodes being still
held until the completion arrives); the first ``depth`` waiting jobs, in queue order, get a reservation at the
earliest time they fit for their whole walltime, and start now if that time is ``now`` and their nodes are free;
the other jobs, in backfill order, start now if they fit in the free nodes and in the profile over
``[now, now + walltime)``, i.e. if they delay none of the reservations. Nothing is kept between decisions, so a
reservation may move later when a job is inserted before it in the queue order; conservative backfilling, which
never moves one later, is :class:`~batreplay.schedulers.conservative.ConservativePolicy`. It is the middle ground
between EASY's single reservation and conservative's reservation for every job (Mu'alem & Feitelson 2001, IEEE TPDS
12(6)). Cost: O(queue x profile breakpoints) per decision.
"""

from __future__ import annotations

import math

from procset import ProcSet

from batreplay.schedulers.availability_profile import AvailabilityProfile
from batreplay.schedulers.fcfs import FcfsPolicy
from batreplay.schedulers.policy import TIME_EPSILON, Start, requested_time
from batreplay.schedulers.queue_order import order_key



class ReservationDepthPolicy(FcfsPolicy):
    """Backfilling with reservations for the first ``depth`` waiting jobs (see the module docstring).

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count).
        depth: number of jobs holding a reservation, an integer >= 1.
        order: queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS`.
        backfill_order: order in which the other jobs are tried; ``None`` for ``order``.

    Raises:
        ValueError: ``depth`` < 1 or not an integer, or an unknown order.
    """

    name = "backfilling"
    places_spread_jobs = False  # its backfilling counts free slots as one number (FcfsPolicy's head loop would not)

    def __init__(self, resources: ProcSet | int, *, depth: int, order: str = "fcfs",
                 backfill_order: str | None = None):
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"reservation depth must be an integer >= 1, got {depth!r}")
        super().__init__(resources, order=order)  # the strict-order start of the queue's head: FCFS's
        self.depth = depth
        self._backfill_key = None if backfill_order in (None, order) else order_key(backfill_order)
        self.reservations: dict[str, float] = {}  # of the last decision: job id -> reserved start (s, inf possible)

    def decide(self, now: float) -> list[Start]:
        started = super().decide(now)  # jobs at the head of the queue while they fit
        jobs = self._queue.jobs
        self.reservations = {}
        if not jobs:
            return started
        steps = [(max(entry.expected_end, now), entry.job.requested_resources)
                 for entry in self.running if entry.expected_end != math.inf]
        profile = AvailabilityProfile.from_steps(now, self.pool.nb_free, steps)
        chosen: list[int] = []
        reserved = min(self.depth, len(jobs))
        for position in range(reserved):
            job = jobs[position]
            nodes, duration = job.requested_resources, requested_time(job)
            start = profile.earliest_fit(nodes, duration, now)
            self.reservations[job.id] = start
            if start == math.inf:
                continue
            profile.add(start, start + duration, -nodes)
            if start <= now + TIME_EPSILON and nodes <= self.pool.nb_free:
                chosen.append(position)
                started.append((job, self._start(job, now)))
        candidates = list(range(reserved, len(jobs)))
        if self._backfill_key is not None:
            key, rank_of = self._backfill_key, self._queue.rank_of
            candidates.sort(key=lambda index: key(jobs[index], rank_of[jobs[index].id]))
        for position in candidates:
            if self.pool.nb_free == 0:
                break
            job = jobs[position]
            nodes, duration = job.requested_resources, requested_time(job)
            if nodes <= self.pool.nb_free and profile.min_free(now, now + duration) >= nodes:
                profile.add(now, now + duration, -nodes)
                chosen.append(position)
                started.append((job, self._start(job, now)))
        self._queue.remove_positions(sorted(chosen))
        return started
