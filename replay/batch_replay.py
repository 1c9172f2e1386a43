"""Replays by batches: Zakay and Feitelson's three user models and Schlagkamp's.

Madon, Da Costa, Pierson 2024 (sections 2 and 7.5) compare their replay with feedback (``feedback``,
:mod:`batreplay.replay.feedback`) with these models but found no code to run them. Each replays the batches of
:mod:`batreplay.replay.batches` (groups of a session's jobs that overlap in the log) on the engine of the feedback
replay, :class:`~batreplay.replay.feedback.ThinkTimeUsers`: a batch is *free* once the batches it depends on have
ended in the simulation; it then starts at the latest, over them, of (end + think time), and its jobs are
submitted at their recorded offsets from its start. Batches with no dependency start at their recorded time. What
each model changes:

- ``adjusted`` (Zakay and Feitelson 2015; Madon et al. 2024 section 7.5, item 1): nothing more; the recorded think
  times between batches are kept.
- ``distribution`` (Zakay and Feitelson 2015, distribution-based): each think time drawn from the log's think times,
  the user's own when they have enough, seeded (``--model-seed``;
  :func:`batreplay.replay.think_times.drawn_think_times`).
  Madon et al. 2024 (section 7.5, item 2) describe the distribution-based model as also shifting batches into
  periods of activity of a probabilistic model; that part is not in this model (``schlagkamp`` has activity windows).
- ``fluid`` (Zakay and Feitelson 2015; Madon et al. 2024 section 7.5, item 3: "preserve the session start and end
  times for users, they will be the periods of activity"): a batch is submitted only inside one of its user's
  periods of activity, the recorded spans of their sessions (:class:`batreplay.replay.activity.ActivityPeriods`),
  and never before the recorded start of its session: a batch free outside them waits for the next one. The recorded
  think times are kept, but those into the first batch of a session from an earlier session: the recorded session
  start replaces them. At the
  recorded pace every job is submitted at its recorded time; a user behind the log starts a session as soon as the
  previous one has ended if that is inside a period, else at the next period.
- ``schlagkamp`` (Schlagkamp 2017; Madon et al. 2024 section 2): inside a session, the think time after a batch is
  a linear function of the response time of its job that ended last, fitted on the log
  (:class:`batreplay.replay.think_times.ResponseTimeFit`); between sessions the recorded think time is kept; and
  every batch starts inside its user's daily and weekly activity window, fitted on the log
  (:class:`batreplay.replay.activity.ActivityWindow`).

Each builder has the signature of :data:`batreplay.replay.registry.Builder`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from batreplay.replay.activity import (ActivityPeriods, ActivityWindow, activity_periods, fit_activity_windows,
                                       window_summary)
from batreplay.replay.batches import Batches, batches_for
from batreplay.replay.feedback import ThinkTimeUsers
from batreplay.replay.feedback_setup import check_covered, job_requests, simulation_origin
from batreplay.replay.think_times import ResponseTimeFit, drawn_think_times, fit_response_time, within_session_pairs

if TYPE_CHECKING:
    from batreplay.replay.registry import ReplaySpec

Requests = dict[int, dict[str, Any]]


@dataclass
class BatchUsers(ThinkTimeUsers):
    """:class:`~batreplay.replay.feedback.ThinkTimeUsers` on batch graphs that know the session of each batch
    (``session_of_batch``: int64 ``(number of batches,)``, by batch id)."""

    session_of_batch: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def same_session(self, key: tuple[int, int], successor: int) -> bool:
        """True when batch ``key`` (``(user, batch id)``) and batch ``successor`` belong to one session."""
        return bool(self.session_of_batch[key[1]] == self.session_of_batch[successor])


@dataclass
class FluidUsers(BatchUsers):
    """The fluid model: a batch starts only inside its user's periods of activity, and never before the recorded
    start of its session.

    Args (besides those of BatchUsers):
        periods: ``{user id: ActivityPeriods}``, simulated s; a user without periods is always active.
        session_start: float ``(number of sessions,)``, s of simulated time: each session's recorded start, by
            session id.

    The recorded think times are kept, but on the dependencies of a batch that opens a session on batches of earlier
    sessions: it is ready when those it depends on have ended and its session's recorded start has come (the session
    start times are kept, the think times into them are not); a batch ready outside the periods waits for the next
    one. (Batch ids are consecutive inside a session, so a batch opens its session when the batch before it in id
    order belongs to another.)
    """

    periods: Mapping[int, ActivityPeriods] = field(default_factory=dict)
    session_start: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def think_time(self, key: tuple[int, int], successor: int, recorded: float, last_job: int | None,
                   now: float) -> float:
        """0 s into the first batch of a session from a batch of another session (the session's recorded start takes
        its place), else ``recorded`` (inside a session, and into a later batch of a session from an earlier one)."""
        opens = successor == 0 or self.session_of_batch[successor - 1] != self.session_of_batch[successor]
        return 0.0 if opens and not self.same_session(key, successor) else recorded

    def submission_start(self, key: tuple[int, int], ready: float) -> float:
        """The first time from ``ready`` on, and from the recorded start of the batch's session on, inside a
        period of its user (s)."""
        ready = max(ready, float(self.session_start[self.session_of_batch[key[1]]]))
        periods = self.periods.get(key[0])
        return ready if periods is None else periods.next_active(ready)


@dataclass
class SchlagkampUsers(BatchUsers):
    """The schlagkamp model: Schlagkamp's think times and activity windows.

    Args (besides those of BatchUsers):
        fit: think time as a function of response time, used between two batches of one session.
        windows: ``{user id: ActivityWindow}``; a user without window is always active.
    """

    fit: ResponseTimeFit | None = None
    windows: Mapping[int, ActivityWindow] = field(default_factory=dict)

    def think_time(self, key: tuple[int, int], successor: int, recorded: float, last_job: int | None,
                   now: float) -> float:
        """Inside a session: the fitted function of the response time of ``last_job`` (its simulated finish
        ``now`` minus its submission); between sessions, or after a batch with no job run, ``recorded``."""
        if self.fit is None or last_job is None or not self.same_session(key, successor):
            return recorded
        return self.fit.think_time(now - self.submitted[last_job])

    def submission_start(self, key: tuple[int, int], ready: float) -> float:
        """``ready`` if inside the activity window of the batch's user, else the start of its next active hour
        (s)."""
        window = self.windows.get(key[0])
        return ready if window is None else window.next_active(ready)


def _setup(document: dict, job_table: pd.DataFrame, spec: ReplaySpec) -> tuple[Batches, float, list[int], Requests]:
    """The batches of the log under ``spec.sessions``, the origin (s), the simulated job ids and their requests."""
    batches = batches_for(job_table, spec.sessions)
    return batches, simulation_origin(job_table), job_table["job_id"].astype("int64").tolist(), job_requests(document)


def _summary(model: str, users: ThinkTimeUsers, batches: Batches) -> str:
    return (f"{model} replay: {len(users.sessions)} batches in {len(batches.sessions.sessions)} sessions "
            f"({batches.label}) for {users.nb_jobs} jobs of {len(batches.graphs)} users")


def build_adjusted_users(document: dict, job_table: pd.DataFrame,
                         spec: ReplaySpec) -> tuple[ThinkTimeUsers, Requests, str]:
    """The ``adjusted`` model (see the module): the recorded think times between batches."""
    batches, origin, job_ids, requests = _setup(document, job_table, spec)
    users = ThinkTimeUsers(batches.graphs, origin=origin, job_ids=job_ids)
    check_covered(users, requests, "the batches")
    return users, requests, _summary("adjusted", users, batches)


def build_distribution_users(document: dict, job_table: pd.DataFrame,
                             spec: ReplaySpec) -> tuple[ThinkTimeUsers, Requests, str]:
    """The ``distribution`` model (see the module): think times drawn with ``spec.model_seed``."""
    batches, origin, job_ids, requests = _setup(document, job_table, spec)
    drawn = drawn_think_times(batches.graphs, spec.model_seed)
    users = ThinkTimeUsers(drawn.graphs, origin=origin, job_ids=job_ids)
    check_covered(users, requests, "the batches")
    return users, requests, (f"{_summary('distribution', users, batches)}; think times drawn with seed "
                             f"{spec.model_seed}: {drawn.own_users} users from their own, {drawn.shared_users} from "
                             f"all {drawn.pool_size} of the log")


def build_fluid_users(document: dict, job_table: pd.DataFrame, spec: ReplaySpec) -> tuple[FluidUsers, Requests, str]:
    """The ``fluid`` model (see the module): batches only inside the users' recorded periods of activity."""
    batches, origin, job_ids, requests = _setup(document, job_table, spec)
    sessions = batches.sessions.sessions  # (session ids are 0, 1, ... in row order)
    users = FluidUsers(batches.graphs, origin=origin, job_ids=job_ids, session_of_batch=batches.session_of_batch,
                       periods=activity_periods(sessions, origin),
                       session_start=sessions["first_submit"].to_numpy(dtype=float) - origin)
    check_covered(users, requests, "the batches")
    return users, requests, f"{_summary('fluid', users, batches)}; periods of activity: the recorded sessions"


def build_schlagkamp_users(document: dict, job_table: pd.DataFrame,
                           spec: ReplaySpec) -> tuple[SchlagkampUsers, Requests, str]:
    """The ``schlagkamp`` model (see the module): fitted think times inside sessions and activity windows.

    Raises:
        ReplayError: the log has too few pairs of batches inside a session to fit think times on.
    """
    batches, origin, job_ids, requests = _setup(document, job_table, spec)
    fit = fit_response_time(*within_session_pairs(batches.partition.jobs, batches.graphs, batches.session_of_batch))
    windows, shared = fit_activity_windows(batches.sessions.jobs, origin)
    users = SchlagkampUsers(batches.graphs, origin=origin, job_ids=job_ids, fit=fit,
                            session_of_batch=batches.session_of_batch, windows=windows)
    check_covered(users, requests, "the batches")
    return users, requests, (f"{_summary('schlagkamp', users, batches)}; think time inside a session = "
                             f"{fit.intercept:.1f} s + {fit.slope:.4f} x response time (r = {fit.r_value:.2f}, "
                             f"{fit.nb_pairs} pairs); {window_summary(windows, shared)}")
