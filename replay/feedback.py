"""The "think time only" feedback user model (Madon, Da Costa, Pierson, FGCS 2024, section 4, Algorithm 1).

Each user replays their session graph (:mod:`batreplay.replay.session_graph`) against the simulated
platform instead of the recorded clock:

- a session is *dependent* while one of the sessions it depends on has not finished, *free* once all have
  finished (Definition 10), and it *starts* at the latest, over its predecessors, of (that predecessor's
  simulated finish + the think time on the edge) — the paper's 'adjusted' replay. Sessions that hang from
  the fictive root start at their recorded start (the root edge's think time);
- once started, a session submits its jobs at their recorded offsets from the session start (jobs inside a
  session are neither delayed nor brought forward);
- a session *finishes* when the last of its jobs terminates (completed, killed at its walltime, or rejected).

Users may thus submit earlier or later than recorded. Times are seconds of simulated time; submission times
are rounded to the microsecond, the resolution at which Batsim reports time to the decision process.

:class:`ThinkTimeUsers` is the ``feedback`` user model of :mod:`batreplay.replay.registry` and implements
:class:`batreplay.replay.protocol.UserModel`, all the broker relies on. Session graphs must be transitively
reduced: an extra edge would change when its target starts (see :mod:`batreplay.replay.session_graph`).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from batreplay.replay.session_graph import SessionGraphs

#: Batsim prints times with six decimals: a submission is due when its time is within this of ``now``.
TIME_RESOLUTION = 1e-6


@dataclass
class _Session:
    user_id: int
    jobs: list[tuple[int, float]]
    successors: list[tuple[int, float]]
    waiting_for: int
    earliest_start: float
    unfinished: int
    start: float | None = None
    finish: float | None = None


@dataclass
class ThinkTimeUsers:
    """All users of a log replaying their session graphs with feedback.

    Args:
        graphs: the users' session graphs (recorded times, seconds).
        origin: the recorded time that is simulated time 0 (for an SWF log converted by
            :func:`batreplay.workloads.batsim_workload.swf_to_workload`, its ``submission_origin``). A session hanging from
            the root starts at its recorded start minus ``origin``.
        job_ids: the jobs that will really be simulated; sessions only count those (jobs the conversion
            dropped are ignored, and reported in :attr:`ignored_jobs`).

    Raises:
        ValueError: a job id belongs to two sessions.
    """

    graphs: SessionGraphs
    origin: float = 0.0
    job_ids: Iterable[int] | None = None
    sessions: dict[tuple[int, int], _Session] = field(init=False, default_factory=dict)
    session_of_job: dict[int, tuple[int, int]] = field(init=False, default_factory=dict)
    ignored_jobs: list[int] = field(init=False, default_factory=list)
    submitted: dict[int, float] = field(init=False, default_factory=dict)
    _pending: list = field(init=False, default_factory=list)
    _order: itertools.count = field(init=False, default_factory=itertools.count)

    def __post_init__(self) -> None:
        keep = None if self.job_ids is None else {int(j) for j in self.job_ids}
        for user, graph in self.graphs.items():
            successors: dict[int, list[tuple[int, float]]] = {}
            waiting: dict[int, int] = {}
            for src, dst, think in zip(graph.dependency_source, graph.dependency_target,
                                       graph.dependency_think_time):
                successors.setdefault(int(src), []).append((int(dst), float(think)))
                waiting[int(dst)] = waiting.get(int(dst), 0) + 1
            for position, sid in enumerate(graph.session_ids):
                sid = int(sid)
                jobs = graph.jobs_of(sid)
                if keep is not None:
                    self.ignored_jobs.extend(j for j, _ in jobs if j not in keep)
                    jobs = [(j, o) for j, o in jobs if j in keep]
                key = (int(user), sid)
                self.sessions[key] = _Session(
                    user_id=int(user), jobs=jobs, successors=successors.get(sid, []),
                    waiting_for=waiting.get(sid, 0),
                    # a root session starts at its recorded start; others at their latest predecessor's
                    # finish + think time, accumulated as predecessors finish
                    earliest_start=(float(graph.first_submit[position]) - self.origin
                                    if sid not in waiting else float("-inf")),
                    unfinished=len(jobs))
                for job_id, _ in jobs:
                    if job_id in self.session_of_job:
                        raise ValueError(f"job {job_id} belongs to two sessions")
                    self.session_of_job[job_id] = key
        for key, session in self.sessions.items():
            if session.waiting_for == 0:
                self._start(key, session.earliest_start)

    # ------------------------------------------------------------------ session life cycle
    def _start(self, key: tuple[int, int], when: float) -> None:
        session = self.sessions[key]
        when = self.submission_start(key, when)
        session.start = when
        if not session.jobs:  # every job of the session was dropped: it finishes at once
            self._finish(key, when)
            return
        for job_id, offset in session.jobs:
            due = round(when + offset, 6)
            heapq.heappush(self._pending, (due, next(self._order), job_id))

    def _finish(self, key: tuple[int, int], when: float, last_job: int | None = None) -> None:
        session = self.sessions[key]
        session.finish = when
        user = key[0]
        for successor, think in session.successors:
            target = self.sessions[(user, successor)]
            think = self.think_time(key, successor, think, last_job, when)
            target.earliest_start = max(target.earliest_start, when + think)
            target.waiting_for -= 1
            if target.waiting_for == 0:
                self._start((user, successor), target.earliest_start)

    # ------------------------------------------------------------------ what the broker calls
    def next_submission_time(self) -> float | None:
        """Seconds at which the next job is due, or None when no submission is planned now."""
        return self._pending[0][0] if self._pending else None

    def pop_due(self, now: float) -> list[int]:
        """Job ids due at ``now`` (or before), in due-time order; they count as submitted at ``now``."""
        due = []
        while self._pending and self._pending[0][0] <= now + TIME_RESOLUTION / 2:
            _time, _order, job_id = heapq.heappop(self._pending)
            self.submitted[job_id] = now
            due.append(job_id)
        return due

    def job_terminated(self, job_id: int, now: float) -> None:
        """A job finished, was killed, or was rejected at ``now``; may free dependent sessions.

        Raises:
            KeyError: a job this model never submitted.
        """
        if job_id not in self.submitted:
            raise KeyError(f"job {job_id} terminated but was not submitted by the user model")
        key = self.session_of_job[job_id]
        session = self.sessions[key]
        session.unfinished -= 1
        if session.unfinished == 0:
            self._finish(key, now, job_id)

    # ------------------------------------------------------------------ what other models change
    def think_time(self, key: tuple[int, int], successor: int, recorded: float, last_job: int | None,
                   now: float) -> float:
        """Seconds between the end of session ``key`` (``(user, session id)``, finished at ``now`` when its job
        ``last_job`` ended; None when it had no job to run) and the start of its successor session ``successor``:
        here the think time of the graph's edge, ``recorded``. Models built on this one may change it
        (:mod:`batreplay.replay.batch_replay`)."""
        return recorded

    def submission_start(self, key: tuple[int, int], ready: float) -> float:
        """When session ``key`` (``(user, session id)``), free at ``ready`` (seconds of simulated time), starts: at
        once here. Models built on this one may move it later, never earlier (:mod:`batreplay.replay.batch_replay`)."""
        return ready

    @property
    def all_submitted(self) -> bool:
        """True when every session has started and every job has been handed out."""
        return not self._pending and all(s.start is not None for s in self.sessions.values())

    @property
    def nb_jobs(self) -> int:
        """Number of jobs the users will submit."""
        return len(self.session_of_job)


def recorded_starts(graphs: SessionGraphs, origin: float = 0.0,
                    job_ids: Mapping[int, object] | None = None) -> dict[int, float]:
    """Recorded submission time of every job of the graphs minus ``origin`` (seconds): the submission times
    a rigid replay uses, in simulated time."""
    times = {}
    for graph in graphs.values():
        for position, sid in enumerate(graph.session_ids):
            start = float(graph.first_submit[position]) - origin
            for job_id, offset in graph.jobs_of(int(sid)):
                if job_ids is None or job_id in job_ids:
                    times[job_id] = start + offset
    return times
