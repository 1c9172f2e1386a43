"""A closed workload drawn from a site model: a population of jobs kept in the system (Caspart et al. 2019, Sect. 6).

A closed workload keeps the number of jobs in the system (waiting or running) constant: the ``population`` jobs are
submitted at time 0, and each job that ends (completed, killed at its walltime, or rejected) is replaced at that very
time by a new one, whose type is drawn by the model's shares and whose demands are drawn from that type
(:mod:`batreplay.sitemodels.sampling`). Caspart et al. model GridKa so: its batch system always has jobs waiting.

Replacements stop after ``max_jobs`` jobs in all, or for the jobs that end at or after ``duration`` seconds, or
both, whichever comes first; the jobs in the system then end and the simulation with them. Until then there are
exactly ``population`` jobs in the system at every moment (``tests/replay/test_closed_population.py`` checks it on
``out_jobs.csv``, on the embedded engine and a real Batsim).

Job ``k`` (numbered from 1 in submission order) is the ``k``-th job drawn with the ``seed``: the same run gives the
same jobs whatever the engine or the scheduler. Jobs reach the engine by dynamic registration, through the feedback
broker (:class:`batreplay.replay.broker.FeedbackBroker`), so a closed run is the same on the embedded engine and on
a real Batsim. Each job is a ``parallel_homogeneous`` profile: CPU demand flop on each of its job slots; a model
with I/O demand is refused (demand rounds are ``composed`` profiles, which Batsim 4.2.1 does not link when they are
registered dynamically: replay the model open instead, ``--replay open``). A job's walltime is its
requested-time ratio x its CPU seconds at the model's node speed, rounded up to whole seconds (so that a ratio of 1
or more never kills a job alone on a node of that speed), or none (-1) for a type without ratios.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from batreplay.replay.protocol import ReplayError
from batreplay.sitemodels.model_file import SiteModel
from batreplay.sitemodels.sampling import draw_jobs, draw_types
from batreplay.workloads.batsim_workload import json_flop

if TYPE_CHECKING:
    from batreplay.replay.registry import ReplaySpec

#: Replacements at one instant, per job of the population, after which a closed replay stops with an error: jobs
#: that end as soon as they are submitted (rejected by the scheduler) would otherwise be replaced forever.
STALL_LIMIT = 100
#: Jobs drawn at once when more are needed (draws are made in blocks, from one generator: block size does not
#: change the jobs, see :class:`DrawnRequests`).
BLOCK = 1024


def closed_replay_problem(model: SiteModel) -> str | None:
    """Why ``model``'s jobs cannot be replayed closed, or None: job types that read from storage (I/O demand > 0;
    module docstring)."""
    reads = model.reading_types
    if not reads:
        return None
    return (f"closed replay: job types {', '.join(reads)} read from storage (I/O demand > 0): Batsim 4.2.1 cannot "
            "run demand rounds registered dynamically; fit the model without --io-share on a log without CPU times, "
            "or replay it open (--replay open)")


class DrawnRequests(Mapping[int, dict[str, Any]]):
    """Job number (from 1) -> what the job asks for, ``{"res": job slots, "walltime": s, "profile": {...}}``,
    drawn from ``model`` when first asked, in blocks of :data:`BLOCK` jobs from one generator seeded by ``seed``;
    :attr:`job_types` holds the type of each job drawn so far (its name in the model).

    Raises:
        ReplayError: the model has I/O demand (module docstring), or a job's CPU demand is out of the flop range
            both engines read exactly.
    """

    def __init__(self, model: SiteModel, seed: int) -> None:
        problem = closed_replay_problem(model)
        if problem is not None:
            raise ReplayError(problem)
        self.model = model
        self.rng = np.random.default_rng(seed)
        self.requests: list[dict[str, Any]] = []
        self.job_types: list[str] = []  # the type of each job drawn, in job order

    def __getitem__(self, job: int) -> dict[str, Any]:
        if job < 1:
            raise KeyError(job)
        while len(self.requests) < job:
            self._draw_block()
        return self.requests[job - 1]

    def __iter__(self) -> Iterator[int]:
        return iter(range(1, len(self.requests) + 1))

    def __len__(self) -> int:
        return len(self.requests)

    def _draw_block(self) -> None:
        jobs = draw_jobs(self.model, draw_types(self.model, self.rng, BLOCK), self.rng)
        speed = self.model.reference["node_speed"]
        self.job_types += [self.model.types[k].name for k in jobs.type_index.tolist()]
        for slots, cpu, ratio in zip(jobs.slots.tolist(), jobs.cpu.tolist(), jobs.ratio.tolist()):
            flop = json_flop(max(cpu, 1.0))  # (at least 1 flop: both engines' smallest amount)
            walltime = -1.0 if math.isnan(ratio) else max(1.0, math.ceil(ratio * flop / speed))
            self.requests.append({"res": int(slots), "walltime": walltime,
                                  "profile": {"type": "parallel_homogeneous", "cpu": flop, "com": 0}})


class ClosedPopulation:
    """The closed workload's users (module docstring); a :class:`~batreplay.replay.protocol.UserModel`.

    Args:
        population: jobs kept in the system (>= 1).
        max_jobs: jobs in all (>= ``population``), or None.
        duration: seconds after which ended jobs are not replaced (> 0), or None. One of the two is given.

    Raises:
        ReplayError: a bad value, or neither ``max_jobs`` nor ``duration``.
    """

    def __init__(self, population: int, *, max_jobs: int | None = None, duration: float | None = None) -> None:
        if population < 1 or (max_jobs is None and duration is None):
            raise ReplayError("closed replay: a population >= 1, and a number of jobs or a duration, are needed")
        if max_jobs is not None and max_jobs < population:
            raise ReplayError(f"closed replay: {max_jobs} jobs in all is fewer than the population {population}")
        self.population, self.max_jobs, self.duration = population, max_jobs, duration
        self._submitted = 0
        self._due: list[int] = []
        self._due_at = 0.0
        self._stopped = False
        self._same_instant = 0
        self._refill(population, 0.0)

    def _refill(self, count: int, now: float) -> None:
        if self.max_jobs is not None:
            count = min(count, self.max_jobs - self._submitted - len(self._due))
        if self.duration is not None and now >= self.duration:
            count = 0
        first = self._submitted + len(self._due) + 1
        self._due.extend(range(first, first + max(count, 0)))
        self._due_at = now

    def next_submission_time(self) -> float | None:
        if self._due:
            return self._due_at
        if not self.all_submitted and self.duration is not None:
            return self.duration  # a wake-up then, to say that registration is over
        return None

    def pop_due(self, now: float) -> list[int]:
        if self.duration is not None and now >= self.duration and not self._due:
            self._stopped = True
        due, self._due = self._due, []
        self._submitted += len(due)
        return due

    def job_terminated(self, job_id: int, now: float) -> None:
        if not 1 <= job_id <= self._submitted:
            raise KeyError(job_id)
        self._same_instant = self._same_instant + 1 if now == self._due_at else 1
        if self._same_instant > STALL_LIMIT * self.population:
            raise ReplayError(f"closed replay: {self._same_instant} jobs ended one after the other at t = {now:g} s "
                              "(rejected by the scheduler?): time does not advance")
        self._refill(1, now)

    @property
    def all_submitted(self) -> bool:
        if self._due:
            return False
        return self._stopped or (self.max_jobs is not None and self._submitted >= self.max_jobs)

    @property
    def nb_jobs(self) -> int:
        """``max_jobs`` when given, else the jobs submitted so far (a duration does not tell in advance)."""
        return self.max_jobs if self.max_jobs is not None else self._submitted


def build_closed_users(model: SiteModel, nb_res: int, slots: int,
                       spec: ReplaySpec) -> tuple[ClosedPopulation, DrawnRequests, str]:
    """The ``closed`` entry of :data:`batreplay.replay.registry.REGISTRY`: the population of ``spec`` (``fill``:
    the platform's ``slots`` job slots) and the jobs drawn from ``model`` with ``spec.model_seed``.

    Raises:
        ReplayError: a model with I/O demand, or a job type whose jobs may ask for more job slots than the
            platform's ``nb_res`` compute hosts (they would be rejected), named.
    """
    requests = DrawnRequests(model, spec.model_seed)
    too_wide = [f"{t.name} (up to {t.job_slots.support()[1]:g})" for t in model.types
                if t.job_slots.support()[1] > nb_res]
    if too_wide:
        raise ReplayError(f"closed replay: job types {', '.join(too_wide)} ask for more job slots than the platform's "
                          f"{nb_res} hosts")
    population = slots if spec.population == "fill" else int(spec.population)
    users = ClosedPopulation(population, max_jobs=spec.closed_jobs, duration=spec.closed_duration)
    until = " and ".join(part for part in (f"{spec.closed_jobs} jobs" if spec.closed_jobs else "",
                                           f"{spec.closed_duration:g} s" if spec.closed_duration else "") if part)
    filled = " (the platform's job slots)" if spec.population == "fill" else ""
    note = (f"closed replay: {population} jobs kept in the system{filled}, replaced until {until}; "
            f"{len(model.types)} job types drawn from {model.source.get('log', 'a model')} (seed {spec.model_seed})")
    return users, requests, note
