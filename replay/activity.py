"""When a user is at work: periods of activity (the fluid model) and daily and weekly activity windows (Schlagkamp).

Both answer one question for the replays of :mod:`batreplay.replay.batch_replay`: a batch of jobs is ready at time
``t``; when does its user submit it? At ``t`` if the user is active then, else when the user's next activity starts.

- :class:`ActivityPeriods` (Zakay and Feitelson 2015, the 'fluid' model, as Madon, Da Costa, Pierson 2024 section
  7.5 describe it): a user's periods of activity are the recorded spans of their sessions, from the first
  submission to the last recorded finish of the session's jobs. Periods that overlap are merged. After the end of
  the user's last period a ready batch is submitted at once: the log says nothing of the user beyond it.
- :class:`ActivityWindow` (Schlagkamp 2017, as Madon et al. 2024 section 2 describe it: "weekly and daily activity
  windows for users, fitted to the observations from the input log"): a set of hours of the day and a set of days
  of the week; the user is active in an hour of an active day. Fitted per user (:func:`fit_activity_windows`): the
  fewest hours of the day holding at least :data:`ACTIVITY_COVERAGE` of the user's recorded submissions, and the
  fewest days of the week likewise; a user with fewer than :data:`MIN_WINDOW_JOBS` jobs gets the windows fitted
  on all users' submissions together.

Times: the replay's simulated seconds, ``t``; the log's time is ``t + origin`` (``origin``, s: the recorded time of
simulated time 0). Hours and days are counted on the log's own time axis, from its time 0 (the SWF header's
``UnixStartTime``): hour ``h`` of day ``d`` is ``[86400 d + 3600 h, 86400 d + 3600 (h + 1))`` and day ``d`` is day
``d mod 7`` of the week. The windows are fitted and applied on that one axis, so the replay does not depend on the
log's time zone; hour 0 is the hour of the day the log starts in, not midnight.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Share of a user's recorded submissions the fitted daily (and weekly) window holds at least.
ACTIVITY_COVERAGE = 0.95
#: Fewest recorded jobs of a user for windows of their own; users with fewer get the windows of all users.
MIN_WINDOW_JOBS = 20
HOUR, DAY, WEEK = 3600.0, 86400.0, 604800.0


@dataclass(frozen=True)
class ActivityPeriods:
    """A user's periods of activity, ``[starts[i], ends[i]]`` in s of simulated time, sorted by start.

    Attributes:
        starts, ends: float ``(n,)`` arrays, ``ends[i] >= starts[i]``; periods may overlap.
    """

    starts: np.ndarray
    ends: np.ndarray

    def __post_init__(self) -> None:
        # latest end among the periods up to each one: the first period whose reach is >= t is the one t lies in,
        # or else the next one to start
        object.__setattr__(self, "_reach", np.maximum.accumulate(self.ends) if len(self.ends) else self.ends)

    def next_active(self, ready: float) -> float:
        """``ready`` (s) if it lies in a period (or after the last one), else the start of the next period."""
        k = int(np.searchsorted(self._reach, ready, side="left"))
        if k == len(self._reach):
            return ready
        return max(ready, float(self.starts[k]))


def activity_periods(sessions: pd.DataFrame, origin: float) -> dict[int, ActivityPeriods]:
    """The periods of activity of each user: the spans of their recorded sessions.

    Args:
        sessions: one row per session (``user_id``, ``first_submit``, ``last_finish``, s of the log), as
            :attr:`batreplay.replay.sessions.SessionPartition.sessions`.
        origin: the log's time of simulated time 0 (s).

    Returns:
        ``{user id: ActivityPeriods}`` in simulated seconds.
    """
    periods = {}
    for user, rows in sessions.sort_values(["user_id", "first_submit"]).groupby("user_id", sort=True):
        periods[int(user)] = ActivityPeriods(rows["first_submit"].to_numpy(dtype=float) - origin,
                                             rows["last_finish"].to_numpy(dtype=float) - origin)
    return periods


@dataclass(frozen=True)
class ActivityWindow:
    """A user's daily and weekly activity window (see the module).

    Attributes:
        hours: the active hours of the day, sorted, from 0 to 23 (non-empty).
        days: the active days of the week, sorted, from 0 to 6 (non-empty).
        origin: the log's time of simulated time 0 (s).
    """

    hours: tuple[int, ...]
    days: tuple[int, ...]
    origin: float = 0.0

    def is_active(self, log_time: float) -> bool:
        """True when ``log_time`` (s of the log) lies in an active hour of an active day."""
        return (int(log_time % DAY // HOUR) in self.hours) and (int(log_time // DAY % 7) in self.days)

    def next_active(self, ready: float) -> float:
        """``ready`` (s of simulated time) if the user is active then, else the start of the next active hour."""
        log_time = ready + self.origin
        if self.is_active(log_time):
            return ready
        hour = np.floor(log_time / HOUR)
        for step in range(1, 24 * 7 + 1):
            if self.is_active((hour + step) * HOUR):
                return (hour + step) * HOUR - self.origin
        raise AssertionError("a window with an active hour and an active day is active within a week")


def smallest_cover(counts: np.ndarray, coverage: float) -> tuple[int, ...]:
    """The fewest positions of ``counts`` (``(k,)``, counts >= 0, not all 0) whose counts sum to at least
    ``coverage`` (0 to 1) of the total, most counted first (ties: the lower position), sorted."""
    order = np.lexsort((np.arange(len(counts)), -counts))
    needed = coverage * counts.sum()
    cumulative = np.cumsum(counts[order])
    size = int(np.searchsorted(cumulative, needed - 1e-9 * counts.sum(), side="left")) + 1
    return tuple(sorted(int(i) for i in order[:min(size, len(counts))]))


def _window(log_times: np.ndarray, origin: float, coverage: float) -> ActivityWindow:
    hours = np.bincount((log_times % DAY // HOUR).astype(np.int64), minlength=24)
    days = np.bincount((log_times // DAY % 7).astype(np.int64), minlength=7)
    return ActivityWindow(smallest_cover(hours, coverage), smallest_cover(days, coverage), origin)


def fit_activity_windows(submissions: pd.DataFrame, origin: float, *, coverage: float = ACTIVITY_COVERAGE,
                         min_jobs: int = MIN_WINDOW_JOBS) -> tuple[dict[int, ActivityWindow], ActivityWindow]:
    """Each user's activity window, fitted on their recorded submissions (Schlagkamp 2017; see the module).

    Args:
        submissions: one row per job, ``user_id`` and ``submission_time`` (s of the log, >= 0).
        origin: the log's time of simulated time 0 (s).
        coverage, min_jobs: see :data:`ACTIVITY_COVERAGE` and :data:`MIN_WINDOW_JOBS`.

    Returns:
        ``(windows, shared)``: ``{user id: window}`` for every user, and the window fitted on all submissions
        (which users with fewer than ``min_jobs`` jobs get).

    Raises:
        ValueError: no submission at all.
    """
    times = submissions["submission_time"].to_numpy(dtype=float)
    if len(times) == 0:
        raise ValueError("no recorded submission to fit activity windows on")
    shared = _window(times, origin, coverage)
    windows: dict[int, ActivityWindow] = {}
    for user, rows in submissions.groupby("user_id", sort=True):
        own = rows["submission_time"].to_numpy(dtype=float)
        windows[int(user)] = _window(own, origin, coverage) if len(own) >= min_jobs else shared
    return windows, shared


def window_summary(windows: Mapping[int, ActivityWindow], shared: ActivityWindow) -> str:
    """One line: how many users have windows of their own, their mean active hours per day and days per week, and
    the shared window the others get."""
    own = [w for w in windows.values() if w is not shared]
    text = f"{len(own)} of {len(windows)} users with activity windows of their own"
    if own:
        text += (f" (on average {np.mean([len(w.hours) for w in own]):.1f} h a day and "
                 f"{np.mean([len(w.days) for w in own]):.1f} days a week)")
    return text + f"; the others share one of {len(shared.hours)} h a day and {len(shared.days)} days a week"
