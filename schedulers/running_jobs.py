"""The jobs in execution, kept ordered by expected end time (start + the policy's expected duration, by default
the walltime)."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from procset import ProcSet

if TYPE_CHECKING:
    from batreplay.schedulers.policy import QueuedJob


@dataclass(frozen=True, slots=True)
class RunningJob:
    """A started job: its request, allocation, start time (s) and expected end time (s: start + the expected
    duration the policy gave, by default the walltime, ``inf`` without one)."""

    job: QueuedJob
    allocation: ProcSet
    start: float
    expected_end: float
    sequence: int


class RunningJobs:
    """Running jobs indexed by id and ordered by expected end.

    The order is a list sorted with :mod:`bisect` on ``(expected_end, start sequence)``; insertion and removal
    cost one binary search plus a memory move, which stays small because at most one job per resource runs.
    """

    def __init__(self) -> None:
        self._by_id: dict[str, RunningJob] = {}
        self._by_sequence: dict[int, RunningJob] = {}
        self._order: list[tuple[float, int, int]] = []  # (expected end, sequence, nb resources)
        self._sequence = 0

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._by_id

    def __iter__(self) -> Iterator[RunningJob]:
        return iter(self._by_id.values())

    def get(self, job_id: str) -> RunningJob | None:
        """The running job of that id, or ``None``."""
        return self._by_id.get(job_id)

    def add(self, job: QueuedJob, allocation: ProcSet, start: float, duration: float) -> RunningJob:
        """Record ``job`` as started at ``start`` (s), expected to run ``duration`` seconds (any number except
        NaN: ``inf`` for a job expected to run forever, a negative estimate is kept as it is); its expected end
        is ``start + duration``.

        Raises:
            ValueError: the job is already running.
        """
        if job.id in self._by_id:
            raise ValueError(f"job {job.id} is already running")
        end = start + duration
        entry = RunningJob(job, allocation, start, end, self._sequence)
        self._sequence += 1
        self._by_id[job.id] = entry
        self._by_sequence[entry.sequence] = entry
        insort(self._order, (end, entry.sequence, job.requested_resources))
        return entry

    def remove(self, job_id: str) -> RunningJob:
        """Forget a running job and return its record.

        Raises:
            KeyError: the job is not running.
        """
        entry = self._by_id.pop(job_id)
        del self._by_sequence[entry.sequence]
        key = (entry.expected_end, entry.sequence, entry.job.requested_resources)
        index = bisect_left(self._order, key)
        del self._order[index]
        return entry

    def by_end(self) -> Iterator[RunningJob]:
        """The running jobs by increasing expected end (then start order); do not start or end jobs meanwhile."""
        by_sequence = self._by_sequence
        return (by_sequence[sequence] for _end, sequence, _nodes in self._order)

    def ends(self) -> list[tuple[float, int, int]]:
        """``(expected end, start sequence, nb resources)`` of every running job, by increasing expected end.

        The list is the internal one: read it, do not modify it.
        """
        return self._order
