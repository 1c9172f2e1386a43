"""Partition each user's recorded jobs into sessions (the first step of replay with feedback).

Sources
-------
* Madon, Da Costa, Pierson, "Replay with Feedback", FGCS 155 (2024), section 3.1, Definitions 1-4: a *user
  session* is a run of consecutive jobs of one user (jobs ordered by submission time), and a *session partition*
  cuts every user's jobs into disjoint sessions covering them all.  The paper's experiments use a threshold on the
  inter-arrival time: "a0" (0 min) and "a60" (60 min); the caption of its Fig. 1 states the rule: a new session
  starts when the inter-arrival time is *greater than* the threshold.
* Zakay and Feitelson, "On identifying user session boundaries in parallel workload logs", JSSPP 2012 (LNCS 7698):
  besides the inter-arrival rule they delimit sessions by a threshold on the *think time*, measured either from
  the end of the user's previous job ("last") or from the latest end among all the user's previous jobs ("max").

Rules implemented (for one user, jobs ``j_1 .. j_n`` in submission order, submission ``a_i``, finish ``f_i``,
threshold ``T`` in minutes, ``gap_i`` compared with ``60 * T`` seconds):

========= ============================================ =========================================================
method    gap_i (seconds, for i >= 2)                   new session at ``j_i`` when
========= ============================================ =========================================================
arrival   ``a_i - a_(i-1)`` (inter-arrival time)        ``gap_i > 60 T``
last      ``a_i - f_(i-1)`` (think time after the       ``gap_i > 60 T``; a negative gap (submitted while the
          previous job in submission order)             previous job was still queued or running) never cuts
max       ``a_i - max(f_1 .. f_(i-1))`` (think time     ``gap_i > 60 T``; a negative gap (some earlier job still
          after the latest end so far)                  unfinished) never cuts
========= ============================================ =========================================================

The first job of every user opens a session.  The comparison is strict, as in the paper (Fig. 1): a gap equal to
the threshold stays in the session.  Consequence for ``a0``: the paper says a0 "gives sessions of only one job",
which holds only when a user never submits two jobs in the same second; jobs of one user with *equal* submission
times have an inter-arrival time of 0, which is not greater than 0, so they share a session (KTH-SP2 has 299 such
ties, so a0 gives 28 177 sessions for its 28 476 jobs).  The number of ties is reported in
``SessionPartition.anomalies["equal_submit_times"]``.

Submission order: jobs are sorted by ``(user_id, submission_time)`` with a stable sort, so jobs of one user with equal
submission times keep their input order (the file order in an SWF log, i.e. increasing job number).

Recorded finish time: ``f = submission_time + wait_time + run_time`` (seconds).  SWF writes -1 for an unknown value: a
negative wait or run time is taken as 0 for the finish time (a cancelled job whose run time is unknown ends when it
left the queue) and counted in ``anomalies`` (``unknown_wait_time``, ``unknown_run_time``); an unknown (negative)
submission time is an error, because the job cannot be placed.

Unknown users (``user_id == -1`` in SWF): by default (``unknown_user="independent"``) every such job is its own
session and no dependency is inferred between them (they belong to unknown, possibly different, people); with
``unknown_user="as_one_user"`` they are partitioned like any other user.  Their count is in
``anomalies["unknown_user_jobs"]``.

The partition is vectorised (one stable sort plus pandas ``groupby().shift()`` / ``cummax()``), so a log of
200 000 jobs is partitioned in well under a second.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "METHODS",
    "UNKNOWN_USER_ID",
    "SessionPartition",
    "partition_sessions",
    "parse_session_spec",
    "session_spec_label",
]

#: Session delimitation methods (see the module docstring for their rules).
METHODS: tuple[str, ...] = ("arrival", "last", "max")

#: The SWF value of the user field when the user is unknown.
UNKNOWN_USER_ID = -1

_REQUIRED_COLUMNS = ("job_id", "user_id", "submission_time", "wait_time", "run_time")
_SPEC_PREFIX = {"a": "arrival", "l": "last", "m": "max"}
_SPEC_PATTERN = re.compile(r"^\s*([alm])\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)

SessionMethod = Literal["arrival", "last", "max"]
UnknownUserPolicy = Literal["independent", "as_one_user"]


@dataclass(frozen=True, eq=False)
class SessionPartition:
    """The sessions of every user of a recorded trace (Madon et al. 2024, Definition 4).

    Attributes
    ----------
    method, threshold_minutes:
        The delimitation rule used (see the module docstring).
    jobs:
        One row per input job (input index kept), sorted by ``user_id`` then submission order, with the input
        columns plus

        * ``finish_time`` (s): ``submission_time + wait_time + run_time``, unknown (negative) parts taken as 0;
        * ``gap`` (s): the quantity compared with the threshold (NaN for the first job of a user and for jobs of
          independent unknown users);
        * ``session_id`` (int): the session the job belongs to;
        * ``offset_in_session`` (s): ``submission_time`` minus the first submission of its session (>= 0).
    sessions:
        One row per session, ``session_id`` = 0, 1, ... in the order (user_id, first submission), columns
        ``session_id``, ``user_id``, ``first_submit`` (s), ``last_finish`` (s, the latest recorded finish of its
        jobs), ``nb_jobs``, ``job_ids`` (tuple of job ids in submission order).
    anomalies:
        Counts of things the partition had to interpret: ``unknown_wait_time``, ``unknown_run_time`` (negative
        values, taken as 0), ``unknown_user_jobs`` (jobs with user -1), ``equal_submit_times`` (consecutive jobs of
        one user submitted in the same second).
    unknown_user:
        The policy used for jobs of user -1 (``"independent"`` or ``"as_one_user"``).
    """

    method: str
    threshold_minutes: float
    jobs: pd.DataFrame
    sessions: pd.DataFrame
    anomalies: dict[str, int] = field(default_factory=dict)
    unknown_user: str = "independent"

    @property
    def label(self) -> str:
        """Short name of the rule, e.g. ``"a60"`` (see :func:`session_spec_label`)."""
        return session_spec_label(self.method, self.threshold_minutes)

    def sessions_per_user(self) -> pd.Series:
        """Number of sessions of each user (Series indexed by ``user_id``)."""
        return self.sessions.groupby("user_id").size().rename("nb_sessions")


def parse_session_spec(spec: str) -> tuple[str, float]:
    """Read a short session rule name such as ``"a60"``, ``"l60"``, ``"m30"``, ``"a0"``.

    The letter is the method (a = arrival, l = last, m = max) and the number the threshold in minutes; this is the
    naming of Madon et al. 2024, section 5.1 ("a0", "a60").  Returns ``(method, threshold_minutes)``.

    Raises ValueError when the text does not have that form.
    """
    match = _SPEC_PATTERN.match(spec)
    if match is None:
        raise ValueError(
            f"session rule {spec!r}: expected a letter a (arrival), l (last) or m (max) followed by a threshold "
            "in minutes, e.g. a60"
        )
    return _SPEC_PREFIX[match.group(1).lower()], float(match.group(2))


def session_spec_label(method: str, threshold_minutes: float) -> str:
    """Inverse of :func:`parse_session_spec`: ``("arrival", 60.0) -> "a60"``, ``("max", 7.5) -> "m7.5"``."""
    if method not in METHODS:
        raise ValueError(f"unknown session method {method!r}; expected one of {', '.join(METHODS)}")
    number = f"{threshold_minutes:g}"
    return f"{method[0]}{number}"


def partition_sessions(
    jobs: pd.DataFrame,
    method: SessionMethod = "arrival",
    threshold_minutes: float = 60.0,
    *,
    unknown_user: UnknownUserPolicy = "independent",
) -> SessionPartition:
    """Cut each user's jobs into sessions (Madon et al. 2024, Definitions 3-4; Zakay & Feitelson 2012).

    Parameters
    ----------
    jobs:
        Recorded jobs, one row each, with at least the columns ``job_id``, ``user_id``, ``submission_time``,
        ``wait_time``, ``run_time`` (times in seconds).  The frame of ``batreplay.workloads.swf.read_swf(path).jobs``
        is accepted as it is.
        If a ``line`` column is present, error messages name the line.
    method:
        ``"arrival"``, ``"last"`` or ``"max"`` (rules in the module docstring).
    threshold_minutes:
        Threshold in minutes (>= 0); a gap strictly greater than it starts a new session.
    unknown_user:
        ``"independent"`` (default): each job of user -1 is a session of its own; ``"as_one_user"``: user -1 is
        partitioned like any user.

    Returns
    -------
    SessionPartition

    Raises
    ------
    ValueError
        Unknown method or policy; negative, infinite or NaN threshold; a required column missing; a missing or
        non-numeric value, a non-integer user id, a negative user id other than -1, a negative submission time or a
        duplicated job id (the message names the job, its line when known, and the field).
    """
    if method not in METHODS:
        raise ValueError(f"unknown session method {method!r}; expected one of {', '.join(METHODS)}")
    if unknown_user not in ("independent", "as_one_user"):
        raise ValueError(f"unknown_user must be 'independent' or 'as_one_user', not {unknown_user!r}")
    threshold = float(threshold_minutes)
    if not math.isfinite(threshold) or threshold < 0:
        raise ValueError(f"session threshold must be a finite number of minutes >= 0, not {threshold_minutes!r}")

    frame = _validated(jobs)
    anomalies = {
        "unknown_wait_time": int((frame["wait_time"] < 0).sum()),
        "unknown_run_time": int((frame["run_time"] < 0).sum()),
        "unknown_user_jobs": int((frame["user_id"] == UNKNOWN_USER_ID).sum()),
    }

    # Stable order: user, then submission time, then input position.
    position = np.arange(len(frame))
    order = np.lexsort((position, frame["submission_time"].to_numpy(), frame["user_id"].to_numpy()))
    frame = frame.iloc[order].copy()

    submission = frame["submission_time"].astype(float)
    finish = submission + frame["wait_time"].clip(lower=0).astype(float) + frame["run_time"].clip(lower=0).astype(float)
    frame["finish_time"] = finish
    by_user = frame.groupby("user_id", sort=False)

    if method == "arrival":
        reference = by_user["submission_time"].shift(1).astype(float)
    elif method == "last":
        reference = by_user["finish_time"].shift(1)
    else:  # max: latest finish among all the user's previous jobs
        frame["_running_max_finish"] = by_user["finish_time"].cummax()
        reference = frame.groupby("user_id", sort=False)["_running_max_finish"].shift(1)
        frame = frame.drop(columns="_running_max_finish")
    gap = submission - reference

    same_user_before = frame["user_id"].eq(frame["user_id"].shift(1))
    anomalies["equal_submit_times"] = int((same_user_before & submission.eq(submission.shift(1))).sum())

    opens_session = gap.isna() | (gap > threshold * 60.0)
    if unknown_user == "independent":
        unknown = frame["user_id"] == UNKNOWN_USER_ID
        opens_session |= unknown
        gap = gap.mask(unknown)
    frame["gap"] = gap
    session_id = np.cumsum(opens_session.to_numpy()) - 1
    frame["session_id"] = session_id.astype(np.int64)

    frame["offset_in_session"] = offsets_in_session(frame)

    return SessionPartition(
        method=method,
        threshold_minutes=threshold,
        jobs=frame,
        sessions=session_table(frame),
        anomalies=anomalies,
        unknown_user=unknown_user,
    )


def offsets_in_session(frame: pd.DataFrame) -> pd.Series:
    """Each job's ``submission_time`` minus the first submission of its session (``session_id``), s (>= 0)."""
    submission = frame["submission_time"].astype(float)
    return submission - frame.groupby("session_id", sort=True)["submission_time"].transform("min").astype(float)


def session_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per session from the sorted per-job frame (session ids are 0..k-1 in frame order)."""
    grouped = frame.groupby("session_id", sort=True)
    table = pd.DataFrame(
        {
            "user_id": grouped["user_id"].first(),
            "first_submit": grouped["submission_time"].min().astype(float),
            "last_finish": grouped["finish_time"].max(),
            "nb_jobs": grouped.size(),
        }
    )
    job_ids = frame["job_id"].to_numpy()
    boundaries = np.flatnonzero(np.diff(frame["session_id"].to_numpy())) + 1
    table["job_ids"] = [tuple(chunk.tolist()) for chunk in np.split(job_ids, boundaries)] if len(frame) else []
    table.index.name = None
    table.insert(0, "session_id", table.index.astype(np.int64))
    return table.reset_index(drop=True)


def _validated(jobs: pd.DataFrame) -> pd.DataFrame:
    """Check the job frame and return a copy with numeric columns (errors name job, line and field)."""
    if not isinstance(jobs, pd.DataFrame):
        raise ValueError(f"jobs must be a pandas DataFrame, not {type(jobs).__name__}")
    missing = [name for name in _REQUIRED_COLUMNS if name not in jobs.columns]
    if missing:
        raise ValueError(f"jobs frame lacks the column(s) {', '.join(missing)} needed for session partitioning")
    frame = jobs.copy()
    for name in _REQUIRED_COLUMNS:
        values = pd.to_numeric(frame[name], errors="coerce")
        bad = values.isna() | ~np.isfinite(values.astype(float))
        if bad.any():
            raise ValueError(_row_error(frame, bad, name, f"missing or non-numeric value {_plain(frame[name][bad].iloc[0])!r}"))
        frame[name] = values
    for name in ("job_id", "user_id"):
        not_integer = frame[name].astype(float) % 1 != 0
        if not_integer.any():
            raise ValueError(_row_error(frame, not_integer, name, f"not an integer: {_plain(frame[name][not_integer].iloc[0])!r}"))
        frame[name] = frame[name].astype(np.int64)
    bad_user = (frame["user_id"] < 0) & (frame["user_id"] != UNKNOWN_USER_ID)
    if bad_user.any():
        raise ValueError(_row_error(frame, bad_user, "user_id", f"negative user id {frame['user_id'][bad_user].iloc[0]} (only -1, unknown, is allowed)"))
    bad_submission = frame["submission_time"] < 0
    if bad_submission.any():
        raise ValueError(_row_error(frame, bad_submission, "submission_time", "unknown (negative) submission time; the job cannot be placed in a session"))
    duplicated = frame["job_id"].duplicated(keep="first")
    if duplicated.any():
        raise ValueError(_row_error(frame, duplicated, "job_id", f"job id {frame['job_id'][duplicated].iloc[0]} appears more than once"))
    return frame


def _row_error(frame: pd.DataFrame, bad: pd.Series, column: str, what: str) -> str:
    """Message naming the first offending row: job id, line (when the frame has a ``line`` column) and field."""
    count = int(bad.sum())
    first = frame.index[bad.to_numpy()][0]
    where = []
    if "line" in frame.columns:
        where.append(f"line {frame.at[first, 'line']}")
    if column != "job_id" and "job_id" in frame.columns:
        where.append(f"job {_plain(frame.at[first, 'job_id'])}")
    location = ", ".join(where) if where else f"row {first!r}"
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    return f"{location}, field {column}: {what}{more}"


def _plain(value: object) -> object:
    """A numpy scalar as a plain Python number (integral floats as int) for messages."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
