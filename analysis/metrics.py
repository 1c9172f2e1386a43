"""Scheduling metrics over a jobs table (Batsim's ``out_jobs.csv`` as read by :mod:`batreplay.formats.out_jobs`).

Definitions and where they come from (seeds in ``../shared/seeds/``):

- waiting time of a job = start - submission (seed 004, Madon et al. 2024, Def. 12, eq. 2:
  ``f_i - d_i - a_i``);
- makespan = ``max(f_i) - min(a_i)``, last finish minus first submission (seed 004, Def. 11, eq. 1);
- turnaround = finish - submission (the residence time ``f_i = q_i + w_i`` of seed 000, Sect. VI);
- slowdown = turnaround / execution time, which is what Batsim calls slowdown (and ``stretch`` in
  ``out_jobs.csv``);
- bounded slowdown = ``max((T_w + T_r) / max(T_r, tau), 1)`` with ``T_w`` the waiting time, ``T_r`` the
  execution time and ``tau`` the interactive threshold, 10 s by default (seed 001, Rauch 2022, Sect. IV);
- average number of running jobs: seed 001 (Sect. IV) sums the number of running jobs each time an
  event fires and divides by the number of events; the time-weighted average is also given;
- throughput = jobs finished per week (seed 004, Sect. 6.1); utilisation = busy node-seconds over
  available node-seconds in a window; seed 004's Fig. 9 computes both on a window starting two weeks
  after the beginning of the simulation, 4, 6 or 8 months long (:func:`paper_windows`).

How Batsim's ``out_schedule.csv`` relates (established on every golden run in ``../shared/batsim-golden/``,
see :func:`batsim_schedule_summary`): Batsim's ``makespan`` is the last finish time counted from the
simulation's time 0 (its documentation: "the completion time of the last job"), which equals Def. 11 when
the first job is submitted at t = 0, as in every golden run; Batsim's slowdown is turnaround / execution
time; and Batsim's means (waiting time, turnaround, slowdown) divide the sum over the jobs that ran by the
number of *all* jobs, rejected ones included (case ``dynamic``: 64.5 s of waiting over 10 jobs that ran,
written as 64.5 / 11 = 5.863636). :func:`summarize` instead averages over the jobs that ran.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from batreplay.formats.out_jobs import (
    FAILED,
    FULL_ID,
    KILLED,
    KILLED_STATES,
    REJECTED,
    SUCCESS,
    WALLTIME_REACHED,
    attach_job_table,
)
from batreplay.formats.out_schedule import job_times
from batreplay.formats.out_schedule import busy_node_seconds as node_seconds

SECONDS_PER_DAY = 86_400.0
SECONDS_PER_WEEK = 7 * SECONDS_PER_DAY
#: An average Gregorian month (365.25 / 12 days), used for the window lengths of seed 004's Fig. 9.
SECONDS_PER_MONTH = 365.25 / 12 * SECONDS_PER_DAY
#: Default interactive threshold of the bounded slowdown (seed 001, Sect. IV), seconds.
DEFAULT_TAU = 10.0


@dataclass(frozen=True)
class TimeWindow:
    """A closed interval ``[start, end]`` of simulated time, in seconds (same origin as the jobs table).

    Raises:
        ValueError: ``end <= start`` or a bound is not finite.
    """

    start: float
    end: float

    def __post_init__(self) -> None:
        if not (np.isfinite(self.start) and np.isfinite(self.end)) or self.end <= self.start:
            raise ValueError(f"time window needs finite start < end, got [{self.start}, {self.end}]")

    @property
    def length(self) -> float:
        """``end - start``, seconds."""
        return self.end - self.start


def paper_windows(jobs: pd.DataFrame, *, months: tuple[float, ...] = (4, 6, 8),
                  warmup_days: float = 14.0) -> list[TimeWindow]:
    """Windows of seed 004's Fig. 9: start ``warmup_days`` after the first submission, ``months`` long each.

    The beginning of the simulation is taken as the first submission time; a month is 365.25 / 12 days.

    Returns:
        One :class:`TimeWindow` per entry of ``months``, in the same order.

    Raises:
        ValueError: ``jobs`` is empty.
    """
    if len(jobs) == 0:
        raise ValueError("paper_windows: empty jobs table")
    origin = float(jobs["submission_time"].min()) + warmup_days * SECONDS_PER_DAY
    return [TimeWindow(origin, origin + m * SECONDS_PER_MONTH) for m in months]


def job_metrics(jobs: pd.DataFrame, *, tau: float = DEFAULT_TAU) -> pd.DataFrame:
    """Per-job times and slowdowns, computed from ``submission_time``, ``starting_time`` and ``finish_time``.

    Args:
        jobs: a validated jobs table (see :mod:`batreplay.formats.out_jobs`).
        tau: interactive threshold of the bounded slowdown, seconds (> 0).

    Returns:
        Frame on ``jobs``'s index with float64 columns (seconds unless said): ``waiting_time`` (Def. 12 of
        seed 004), ``execution_time`` (finish - start), ``turnaround_time`` (finish - submission),
        ``slowdown`` (turnaround / execution, dimensionless; NaN when the execution time is 0),
        ``bounded_slowdown`` (seed 001, dimensionless, >= 1). All NaN for rejected jobs.

    Raises:
        ValueError: ``tau`` is not a positive number.
    """
    if not tau > 0:
        raise ValueError(f"bounded slowdown threshold tau must be > 0 s, got {tau}")
    times = job_times(jobs)
    turnaround = times["turnaround_time"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        bounded = np.maximum(turnaround / np.maximum(times["execution_time"].to_numpy(), tau), 1.0)
    bounded[np.isnan(turnaround)] = np.nan
    return times.assign(bounded_slowdown=bounded)


def _running_intervals(jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ran = jobs["starting_time"].notna().to_numpy()
    start = jobs["starting_time"].to_numpy(dtype="float64")[ran]
    finish = jobs["finish_time"].to_numpy(dtype="float64")[ran]
    width = jobs["requested_number_of_resources"].to_numpy(dtype="float64")[ran]
    return start, finish, width


def busy_node_seconds(jobs: pd.DataFrame, window: TimeWindow | None = None) -> float:
    """Node-seconds used by jobs (``requested_number_of_resources`` x time running), clipped to ``window``;
    without a window, Batsim's ``time_computing`` (see :func:`batreplay.formats.out_schedule.busy_node_seconds`)."""
    if window is None:
        return node_seconds(jobs)
    return node_seconds(jobs, window.start, window.end)


def _percentile(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if values.size else float("nan")


def _stat(values: np.ndarray, how: str) -> float:
    return float(getattr(np, how)(values)) if values.size else float("nan")


def summarize(jobs: pd.DataFrame, *, nb_resources: int, tau: float = DEFAULT_TAU,
              window: TimeWindow | None = None) -> dict[str, float | int]:
    """Usual scheduling metrics of one run.

    Which jobs and which span: job statistics (counts, waiting time, turnaround, slowdowns, makespan)
    are over the jobs *submitted* in ``window`` (all jobs without a window). Time-based figures
    (utilisation, throughput, running jobs) use every job, clipped to the span: ``window``, or without
    one ``[first submission, last finish]`` (the makespan span). Spans are closed intervals.

    Args:
        jobs: a validated jobs table (:func:`batreplay.formats.out_jobs.read_out_jobs`).
        nb_resources: number of compute resources of the platform (nodes), > 0.
        tau: interactive threshold of the bounded slowdown, seconds.
        window: optional :class:`TimeWindow` to leave out warm-up and drain (seed 004, Fig. 9).

    Returns:
        A dict with
        ``nb_jobs``, ``nb_rejected``, ``nb_started`` (jobs that ran), ``nb_finished`` (= ``nb_started``:
        every job in ``out_jobs.csv`` is in a final state), ``nb_success``, ``nb_failed``,
        ``nb_walltime_reached``, ``nb_killed_by_scheduler``, ``nb_killed`` (walltime reached + killed, as
        Batsim's ``nb_jobs_killed``);
        ``first_submission``, ``last_finish``, ``makespan`` (Def. 11 of seed 004: last finish - first
        submission of the selected jobs, s);
        ``mean_waiting_time``, ``max_waiting_time``, ``median_waiting_time``, ``p90_waiting_time``,
        ``p99_waiting_time`` (Def. 12 of seed 004, s, over the jobs that ran; percentiles interpolate
        linearly);
        ``mean_turnaround_time``, ``max_turnaround_time`` (s);
        ``mean_slowdown``, ``max_slowdown`` (turnaround / execution time over jobs with a positive
        execution time; ``nb_zero_execution_time`` counts the others);
        ``mean_bounded_slowdown`` (seed 001, with ``tau``);
        ``span_start``, ``span_end``, ``span_length`` (s), ``busy_node_seconds``,
        ``available_node_seconds`` (= ``nb_resources`` x span length), ``utilisation`` (their ratio, in
        [0, 1] when no two jobs share a node), ``mean_busy_nodes`` (= utilisation x ``nb_resources``);
        ``nb_finished_in_span``, ``throughput_per_week``, ``throughput_per_day`` (jobs whose finish
        time is in the span, divided by its length);
        ``mean_running_jobs`` (time-weighted average over the span) and ``mean_running_jobs_per_event``
        (seed 001: at each event in the span, one per job submission, rejected jobs included, and one per
        job finish, the number of jobs running once everything at that instant happened, i.e. with
        ``start <= t < finish``; averaged over events).
        Means over an empty set are NaN.

    Raises:
        ValueError: ``nb_resources`` < 1 or ``tau`` <= 0.
    """
    if not nb_resources >= 1:
        raise ValueError(f"nb_resources must be >= 1, got {nb_resources}")
    per_job = job_metrics(jobs, tau=tau)
    sub_all = jobs["submission_time"].to_numpy(dtype="float64")
    if window is not None:
        selected = (sub_all >= window.start) & (sub_all <= window.end)
    else:
        selected = np.ones(len(jobs), dtype=bool)
    states = jobs["final_state"].to_numpy()[selected]
    ran = ~np.isnan(jobs["starting_time"].to_numpy(dtype="float64")) & selected
    result: dict[str, float | int] = {
        "nb_jobs": int(selected.sum()),
        "nb_rejected": int((states == REJECTED).sum()),
        "nb_started": int(ran.sum()),
        "nb_finished": int(ran.sum()),
        "nb_success": int((states == SUCCESS).sum()),
        "nb_failed": int((states == FAILED).sum()),
        "nb_walltime_reached": int((states == WALLTIME_REACHED).sum()),
        "nb_killed_by_scheduler": int((states == KILLED).sum()),
        "nb_killed": int(np.isin(states, list(KILLED_STATES)).sum()),
    }
    sub_sel = sub_all[selected]
    finish_ran = jobs["finish_time"].to_numpy(dtype="float64")[ran]
    result["first_submission"] = _stat(sub_sel, "min")
    result["last_finish"] = _stat(finish_ran, "max")
    result["makespan"] = result["last_finish"] - result["first_submission"]

    waiting = per_job["waiting_time"].to_numpy()[ran]
    turnaround = per_job["turnaround_time"].to_numpy()[ran]
    slowdown = per_job["slowdown"].to_numpy()[ran]
    defined = ~np.isnan(slowdown)
    result.update({
        "mean_waiting_time": _stat(waiting, "mean"),
        "max_waiting_time": _stat(waiting, "max"),
        "median_waiting_time": _percentile(waiting, 50),
        "p90_waiting_time": _percentile(waiting, 90),
        "p99_waiting_time": _percentile(waiting, 99),
        "mean_turnaround_time": _stat(turnaround, "mean"),
        "max_turnaround_time": _stat(turnaround, "max"),
        "mean_slowdown": _stat(slowdown[defined], "mean"),
        "max_slowdown": _stat(slowdown[defined], "max"),
        "nb_zero_execution_time": int((~defined).sum()),
        "mean_bounded_slowdown": _stat(per_job["bounded_slowdown"].to_numpy()[ran], "mean"),
    })

    if window is not None:
        span_start, span_end = window.start, window.end
    else:
        span_start = float(np.min(sub_all)) if len(jobs) else float("nan")
        span_end = float(np.max(finish_ran)) if finish_ran.size else float("nan")
    span = span_end - span_start
    start, finish, width = _running_intervals(jobs)
    clip_start = np.clip(start, span_start, span_end)
    clip_finish = np.clip(finish, span_start, span_end)
    running_time = np.maximum(clip_finish - clip_start, 0.0)
    busy = float(np.sum(width * running_time))
    available = nb_resources * span
    finished_in_span = int(np.count_nonzero((finish >= span_start) & (finish <= span_end)))
    valid_span = bool(span > 0)
    result.update({
        "span_start": span_start,
        "span_end": span_end,
        "span_length": span,
        "busy_node_seconds": busy,
        "available_node_seconds": available,
        "utilisation": busy / available if valid_span else float("nan"),
        "mean_busy_nodes": busy / span if valid_span else float("nan"),
        "nb_finished_in_span": finished_in_span,
        "throughput_per_week": finished_in_span / (span / SECONDS_PER_WEEK) if valid_span else float("nan"),
        "throughput_per_day": finished_in_span / (span / SECONDS_PER_DAY) if valid_span else float("nan"),
        "mean_running_jobs": float(np.sum(running_time)) / span if valid_span else float("nan"),
        "mean_running_jobs_per_event": _mean_running_per_event(sub_all, start, finish, span_start, span_end),
    })
    return result


def _mean_running_per_event(submissions: np.ndarray, start: np.ndarray, finish: np.ndarray,
                            span_start: float, span_end: float) -> float:
    """Seed 001's average: number of running jobs at each event (submission or finish) in the span, averaged."""
    events = np.concatenate([submissions, finish])
    events = events[(events >= span_start) & (events <= span_end)]
    if events.size == 0:
        return float("nan")
    started = np.searchsorted(np.sort(start), events, side="right")
    ended = np.searchsorted(np.sort(finish), events, side="right")
    return float(np.mean(started - ended))


def running_jobs_over_time(jobs: pd.DataFrame) -> pd.DataFrame:
    """Step function of the number of running jobs and busy nodes.

    Returns:
        Frame with columns ``time`` (s, increasing, one row per distinct start or finish instant),
        ``running_jobs`` and ``busy_nodes``: the values holding from ``time`` until the next row.
    """
    start, finish, width = _running_intervals(jobs)
    times = np.concatenate([start, finish])
    jobs_delta = np.concatenate([np.ones_like(start), -np.ones_like(finish)])
    nodes_delta = np.concatenate([width, -width])
    frame = pd.DataFrame({"time": times, "running_jobs": jobs_delta, "busy_nodes": nodes_delta})
    steps = frame.groupby("time", sort=True).sum().cumsum().reset_index()
    steps["running_jobs"] = steps["running_jobs"].round().astype("int64")
    return steps


def per_user_summary(jobs: pd.DataFrame, users: pd.DataFrame, *, tau: float = DEFAULT_TAU) -> pd.DataFrame:
    """Scheduling metrics per user.

    Args:
        jobs: a validated jobs table.
        users: side table with columns ``job_id`` (full ``workload!job_id`` or bare Batsim id, see
            :func:`batreplay.formats.out_jobs.attach_job_table`) and ``user_id``, one row per job.
        tau: interactive threshold of the bounded slowdown, seconds.

    Returns:
        Frame indexed by ``user_id`` (sorted) with ``nb_jobs``, ``nb_rejected``, ``nb_killed``,
        ``mean_waiting_time``, ``max_waiting_time``, ``mean_turnaround_time``, ``mean_slowdown``,
        ``mean_bounded_slowdown`` (same definitions as :func:`summarize`, over the user's jobs that ran;
        NaN when none ran) and ``node_seconds`` (busy node-seconds of the user's jobs).

    Raises:
        ValueError: as :func:`batreplay.formats.out_jobs.attach_job_table` (jobs missing on either
            side, named), or ``tau`` <= 0.
    """
    merged = attach_job_table(jobs, users, columns=["user_id"], table_name="user table")
    per_job = job_metrics(merged, tau=tau)
    per_job["user_id"] = merged["user_id"].to_numpy()
    per_job["rejected"] = (merged["final_state"] == REJECTED).to_numpy()
    per_job["killed"] = merged["final_state"].isin(KILLED_STATES).to_numpy()
    per_job["node_seconds"] = (per_job["execution_time"] * merged["requested_number_of_resources"]).fillna(0.0)
    per_job[FULL_ID] = merged[FULL_ID].to_numpy()
    grouped = per_job.groupby("user_id", sort=True)
    return pd.DataFrame({
        "nb_jobs": grouped[FULL_ID].count(),
        "nb_rejected": grouped["rejected"].sum().astype("int64"),
        "nb_killed": grouped["killed"].sum().astype("int64"),
        "mean_waiting_time": grouped["waiting_time"].mean(),
        "max_waiting_time": grouped["waiting_time"].max(),
        "mean_turnaround_time": grouped["turnaround_time"].mean(),
        "mean_slowdown": grouped["slowdown"].mean(),
        "mean_bounded_slowdown": grouped["bounded_slowdown"].mean(),
        "node_seconds": grouped["node_seconds"].sum(),
    })
