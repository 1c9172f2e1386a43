"""Scheduling metrics over a jobs table (Batsim's ``out_jobs.csv`` as read by :mod:`batreplay.formats.out_jobs`).

Definitions and where they come from:

- waiting time of a job = start - submission (Madon et al. 2024, Def. 12, eq. 2:
  ``f_i - d_i - a_i``);
- makespan = ``max(f_i) - min(a_i)``, last finish minus first submission (Madon et al. 2024, Def. 11, eq. 1);
- turnaround = finish - submission (the residence time ``f_i = q_i + w_i`` of Baranov et al. 2018, Sect. VI);
- slowdown = turnaround / execution time, which is what Batsim calls slowdown (and ``stretch`` in
  ``out_jobs.csv``);
- bounded slowdown = ``max((T_w + T_r) / max(T_r, tau), 1)`` with ``T_w`` the waiting time, ``T_r`` the
  execution time and ``tau`` the interactive threshold, 10 s by default (Rauch 2022, Sect. IV);
- average number of running jobs: Rauch 2022 (Sect. IV) sums the number of running jobs each time an
  event fires and divides by the number of events; the time-weighted average is also given;
- throughput = jobs finished per week (Madon et al. 2024, Sect. 6.1); utilisation = busy node-seconds over
  available node-seconds in a window; Madon et al. 2024's Fig. 9 computes both on a window starting two weeks
  after the beginning of the simulation, 4, 6 or 8 months long (:func:`paper_windows`).

How Batsim's ``out_schedule.csv`` relates (established on every golden run in ``../shared/batsim-golden/``,
see :func:`batsim_schedule_summary`): Batsim's ``makespan`` is the last finish time counted from the
simulation's time 0 (its documentation: "the completion time of the last job"), which equals Def. 11 when
the first job is submitted at t = 0, as in every golden run; Batsim's slowdown is turnaround / execution
time; and Batsim's means (waiting time, turnaround, slowdown) divide the sum over the jobs that ran by the
number of *all* jobs, rejected ones included (case ``dynamic``: 64.5 s of waiting over 10 jobs that ran,
written as 64.5 / 11 = 5.863636). :func:`summarize` instead averages over the jobs that ran.

Each metric of :func:`summarize` is one line of :data:`SCHEDULE_METRICS` (name, unit, label, format and the
function computing it from the :class:`ScheduleFacts` of the run); see
:mod:`batreplay.analysis.metric_registry` for adding one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from batreplay.analysis.metric import Metric
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
from batreplay.formats.out_schedule import busy_host_intervals, job_times, running_intervals
from batreplay.formats.out_schedule import busy_node_seconds as node_seconds

SECONDS_PER_DAY = 86_400.0
SECONDS_PER_WEEK = 7 * SECONDS_PER_DAY
#: An average Gregorian month (365.25 / 12 days), used for the window lengths of Madon et al. 2024's Fig. 9.
SECONDS_PER_MONTH = 365.25 / 12 * SECONDS_PER_DAY
#: Default interactive threshold of the bounded slowdown (Rauch 2022, Sect. IV), seconds.
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


def warm_up_window(jobs: pd.DataFrame, warm_up: float) -> TimeWindow | None:
    """The span a run's metrics cover when its first ``warm_up`` seconds are left out (``batreplay run --warm-up``):
    from the first submission + ``warm_up`` to the last finish (the last submission when no job finishes later),
    or None for no warm-up (``warm_up`` 0: the whole run, as :func:`summarize` takes it without a window).

    Raises:
        ValueError: a warm-up that leaves no job to measure: it ends after the last submission, or leaves an empty
            span (the times named).
    """
    if warm_up == 0:
        return None
    first, last = float(jobs["submission_time"].min()), float(jobs["submission_time"].max())
    end = float(np.nanmax([jobs["finish_time"].max(), last]))
    if not (first + warm_up <= last and first + warm_up < end):
        raise ValueError(f"warm_up (--warm-up) {warm_up:g} s: the last job is submitted {last - first:g} s after the "
                         f"first and the run ends {end - first:g} s after it, so no job is left to measure")
    return TimeWindow(first + warm_up, end)


def paper_windows(jobs: pd.DataFrame, *, months: tuple[float, ...] = (4, 6, 8),
                  warmup_days: float = 14.0) -> list[TimeWindow]:
    """Windows of Madon et al. 2024's Fig. 9: start ``warmup_days`` after the first submission, ``months`` long each.

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
        Madon et al. 2024), ``execution_time`` (finish - start), ``turnaround_time`` (finish - submission),
        ``slowdown`` (turnaround / execution, dimensionless; NaN when the execution time is 0),
        ``bounded_slowdown`` (Rauch 2022, dimensionless, >= 1). All NaN for rejected jobs.

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


def busy_node_seconds(jobs: pd.DataFrame, window: TimeWindow | None = None, *, shared_hosts: bool = False) -> float:
    """Node-seconds used by jobs (``requested_number_of_resources`` x time running), clipped to ``window``;
    without a window, Batsim's ``time_computing`` (see :func:`batreplay.formats.out_schedule.busy_node_seconds`).
    With ``shared_hosts`` (compute sharing), a host computing several jobs at once counts once."""
    if window is None:
        return node_seconds(jobs, shared_hosts=shared_hosts)
    return node_seconds(jobs, window.start, window.end, shared_hosts=shared_hosts)


def _percentile(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if values.size else float("nan")


def _stat(values: np.ndarray, how: str) -> float:
    return float(getattr(np, how)(values)) if values.size else float("nan")


@dataclass(frozen=True)
class ScheduleFacts:
    """What the metrics of :data:`SCHEDULE_METRICS` are computed from, built once by :func:`schedule_facts`.

    Job arrays (shape (k,), float64 seconds unless said) are over the jobs selected by the window (all jobs
    without one); time-based arrays are over every job that ran, clipped to the span.

    Attributes:
        nb_resources: compute nodes of the platform.
        states: final state of each selected job (strings, shape (n,)).
        submissions: submission time of each selected job, shape (n,).
        finishes: finish time of each selected job that ran, shape (r,).
        waiting, turnaround, slowdown, bounded_slowdown: per selected job that ran, shape (r,) (slowdown
            NaN when the execution time is 0; see :func:`job_metrics`).
        all_submissions: submission time of every job (window ignored), shape (N,).
        starts, ends, widths: start, finish and node count of every job that ran (window ignored).
        span_start, span_end: the span of the time-based metrics (s): the window, or first submission to
            last finish.
        running_time: time each job that ran spent running inside the span (s), shape like ``starts``.
        busy_node_seconds: node-seconds the hosts spent computing inside the span; under compute sharing
            (``shared_hosts``) a host computing several jobs at once counts once, as Batsim counts it.
    """

    nb_resources: int
    states: np.ndarray
    submissions: np.ndarray
    finishes: np.ndarray
    waiting: np.ndarray
    turnaround: np.ndarray
    slowdown: np.ndarray
    bounded_slowdown: np.ndarray
    all_submissions: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    widths: np.ndarray
    span_start: float
    span_end: float
    running_time: np.ndarray
    busy_node_seconds: float

    @property
    def span(self) -> float:
        """``span_end - span_start`` (s; NaN when no job ran)."""
        return self.span_end - self.span_start

    @property
    def valid_span(self) -> bool:
        """True when the span is a positive length (time-based metrics are NaN otherwise)."""
        return bool(self.span > 0)


def schedule_facts(jobs: pd.DataFrame, *, nb_resources: int, tau: float = DEFAULT_TAU,
                   window: TimeWindow | None = None, shared_hosts: bool = False) -> ScheduleFacts:
    """The :class:`ScheduleFacts` of a jobs table (arguments as :func:`summarize`).

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
    ran = ~np.isnan(jobs["starting_time"].to_numpy(dtype="float64")) & selected
    finish_ran = jobs["finish_time"].to_numpy(dtype="float64")[ran]
    if window is not None:
        span_start, span_end = window.start, window.end
    else:
        span_start = float(np.min(sub_all)) if len(jobs) else float("nan")
        span_end = float(np.max(finish_ran)) if finish_ran.size else float("nan")
    start, finish, width = running_intervals(jobs)
    clip_start = np.clip(start, span_start, span_end)
    clip_finish = np.clip(finish, span_start, span_end)
    return ScheduleFacts(
        nb_resources=nb_resources, states=jobs["final_state"].to_numpy()[selected], submissions=sub_all[selected],
        finishes=finish_ran, waiting=per_job["waiting_time"].to_numpy()[ran],
        turnaround=per_job["turnaround_time"].to_numpy()[ran], slowdown=per_job["slowdown"].to_numpy()[ran],
        bounded_slowdown=per_job["bounded_slowdown"].to_numpy()[ran], all_submissions=sub_all, starts=start,
        ends=finish, widths=width, span_start=span_start, span_end=span_end,
        running_time=np.maximum(clip_finish - clip_start, 0.0),
        busy_node_seconds=(node_seconds(jobs, span_start, span_end, shared_hosts=True) if shared_hosts
                           else float(np.sum(width * np.maximum(clip_finish - clip_start, 0.0)))),
    )


def summarize(jobs: pd.DataFrame, *, nb_resources: int, tau: float = DEFAULT_TAU,
              window: TimeWindow | None = None, shared_hosts: bool = False) -> dict[str, float | int]:
    """Usual scheduling metrics of one run: every metric of :data:`SCHEDULE_METRICS`, in its order.

    Which jobs and which span: job statistics (counts, waiting time, turnaround, slowdowns, makespan)
    are over the jobs *submitted* in ``window`` (all jobs without a window). Time-based figures
    (utilisation, throughput, running jobs) use every job, clipped to the span: ``window``, or without
    one ``[first submission, last finish]`` (the makespan span). Spans are closed intervals.

    Args:
        jobs: a validated jobs table (:func:`batreplay.formats.out_jobs.read_out_jobs`).
        nb_resources: number of compute resources of the platform (nodes), > 0.
        tau: interactive threshold of the bounded slowdown, seconds.
        window: optional :class:`TimeWindow` to leave out warm-up and drain (Madon et al. 2024, Fig. 9).
        shared_hosts: the run had compute sharing on (several jobs per host): busy node-seconds, utilisation
            and mean busy nodes count a host once while any job runs on it, as Batsim's ``time_computing`` and
            ``out_machine_states.csv`` do (``jobs`` then needs ``allocated_resources``).

    Returns:
        A dict with
        ``nb_jobs``, ``nb_rejected``, ``nb_started`` (jobs that ran), ``nb_finished`` (= ``nb_started``:
        every job in ``out_jobs.csv`` is in a final state), ``nb_success``, ``nb_failed``,
        ``nb_walltime_reached``, ``nb_killed_by_scheduler``, ``nb_killed`` (walltime reached + killed, as
        Batsim's ``nb_jobs_killed``);
        ``first_submission``, ``last_finish``, ``makespan`` (Def. 11 of Madon et al. 2024: last finish - first
        submission of the selected jobs, s);
        ``mean_waiting_time``, ``max_waiting_time``, ``median_waiting_time``, ``p90_waiting_time``,
        ``p99_waiting_time`` (Def. 12 of Madon et al. 2024, s, over the jobs that ran; percentiles
        interpolate linearly);
        ``mean_turnaround_time``, ``max_turnaround_time`` (s);
        ``mean_slowdown``, ``max_slowdown`` (turnaround / execution time over jobs with a positive
        execution time; ``nb_zero_execution_time`` counts the others);
        ``mean_bounded_slowdown`` (Rauch 2022, with ``tau``);
        ``span_start``, ``span_end``, ``span_length`` (s), ``busy_node_seconds``,
        ``available_node_seconds`` (= ``nb_resources`` x span length), ``utilisation`` (their ratio, in
        [0, 1] when no two jobs share a node), ``mean_busy_nodes`` (= utilisation x ``nb_resources``);
        ``nb_finished_in_span``, ``throughput_per_week``, ``throughput_per_day`` (jobs whose finish
        time is in the span, divided by its length);
        ``mean_running_jobs`` (time-weighted average over the span) and ``mean_running_jobs_per_event``
        (Rauch 2022: at each event in the span, one per job submission, rejected jobs included, and one per
        job finish, the number of jobs running once everything at that instant happened, i.e. with
        ``start <= t < finish``; averaged over events).
        Means over an empty set are NaN.

    Raises:
        ValueError: ``nb_resources`` < 1 or ``tau`` <= 0.
    """
    facts = schedule_facts(jobs, nb_resources=nb_resources, tau=tau, window=window, shared_hosts=shared_hosts)
    return {metric.name: metric.compute(facts) for metric in SCHEDULE_METRICS}


def _mean_running_per_event(submissions: np.ndarray, start: np.ndarray, finish: np.ndarray,
                            span_start: float, span_end: float) -> float:
    """Rauch 2022's average: number of running jobs at each event (submission or finish) in the span, averaged."""
    events = np.concatenate([submissions, finish])
    events = events[(events >= span_start) & (events <= span_end)]
    if events.size == 0:
        return float("nan")
    started = np.searchsorted(np.sort(start), events, side="right")
    ended = np.searchsorted(np.sort(finish), events, side="right")
    return float(np.mean(started - ended))


def _busy(facts: ScheduleFacts) -> float:
    return facts.busy_node_seconds


def _per_span(value: float, facts: ScheduleFacts, unit: float = 1.0) -> float:
    return value / (facts.span / unit) if facts.valid_span else float("nan")


def _finished_in_span(facts: ScheduleFacts) -> int:
    return int(np.count_nonzero((facts.ends >= facts.span_start) & (facts.ends <= facts.span_end)))


def _positive_slowdowns(facts: ScheduleFacts) -> np.ndarray:
    return facts.slowdown[~np.isnan(facts.slowdown)]


def _state_count(*states: str) -> Callable[[ScheduleFacts], int]:
    return lambda facts: int(np.isin(facts.states, list(states)).sum())


_WAIT = "Madon et al. 2024, Def. 12"
_SPAN = "span: window, or first submission to last finish"
#: Every metric of :func:`summarize`, in the order of its dict (and of ``metrics.json``, ``metrics.csv``).
SCHEDULE_METRICS: tuple[Metric, ...] = (
    Metric("nb_jobs", "", "jobs", "{:d}", lambda f: int(f.states.size)),
    Metric("nb_rejected", "", "rejected", "{:d}", _state_count(REJECTED)),
    Metric("nb_started", "", "jobs started", "{:d}", lambda f: int(f.waiting.size)),
    Metric("nb_finished", "", "jobs finished", "{:d}", lambda f: int(f.waiting.size)),
    Metric("nb_success", "", "jobs succeeded", "{:d}", _state_count(SUCCESS)),
    Metric("nb_failed", "", "jobs failed", "{:d}", _state_count(FAILED)),
    Metric("nb_walltime_reached", "", "jobs killed at their walltime", "{:d}", _state_count(WALLTIME_REACHED)),
    Metric("nb_killed_by_scheduler", "", "jobs killed by the scheduler", "{:d}", _state_count(KILLED)),
    Metric("nb_killed", "", "killed (walltime or kill)", "{:d}", _state_count(*KILLED_STATES)),
    Metric("first_submission", "s", "first submission", "{:.1f}", lambda f: _stat(f.submissions, "min")),
    Metric("last_finish", "s", "last finish", "{:.1f}", lambda f: _stat(f.finishes, "max")),
    Metric("makespan", "s", "makespan", "{:.1f}",
           lambda f: _stat(f.finishes, "max") - _stat(f.submissions, "min"), source="Madon et al. 2024, Def. 11"),
    Metric("mean_waiting_time", "s", "mean waiting time", "{:.1f}", lambda f: _stat(f.waiting, "mean"), source=_WAIT),
    Metric("max_waiting_time", "s", "max waiting time", "{:.1f}", lambda f: _stat(f.waiting, "max"), source=_WAIT),
    Metric("median_waiting_time", "s", "median waiting time", "{:.1f}", lambda f: _percentile(f.waiting, 50),
           source=_WAIT),
    Metric("p90_waiting_time", "s", "90th percentile of the waiting time", "{:.1f}",
           lambda f: _percentile(f.waiting, 90), source=_WAIT),
    Metric("p99_waiting_time", "s", "99th percentile of the waiting time", "{:.1f}",
           lambda f: _percentile(f.waiting, 99), source=_WAIT),
    Metric("mean_turnaround_time", "s", "mean turnaround time", "{:.1f}", lambda f: _stat(f.turnaround, "mean"),
           source="residence time, Baranov et al. 2018, Sect. VI"),
    Metric("max_turnaround_time", "s", "max turnaround time", "{:.1f}", lambda f: _stat(f.turnaround, "max")),
    Metric("mean_slowdown", "", "mean slowdown", "{:.3f}", lambda f: _stat(_positive_slowdowns(f), "mean")),
    Metric("max_slowdown", "", "max slowdown", "{:.3f}", lambda f: _stat(_positive_slowdowns(f), "max")),
    Metric("nb_zero_execution_time", "", "jobs with a zero execution time", "{:d}",
           lambda f: int(np.isnan(f.slowdown).sum())),
    Metric("mean_bounded_slowdown", "", "mean bounded slowdown", "{:.3f}",
           lambda f: _stat(f.bounded_slowdown, "mean"), parameter=("tau", "s"), source="Rauch 2022, Sect. IV"),
    Metric("span_start", "s", "span start", "{:.1f}", lambda f: f.span_start, source=_SPAN),
    Metric("span_end", "s", "span end", "{:.1f}", lambda f: f.span_end, source=_SPAN),
    Metric("span_length", "s", "span length", "{:.1f}", lambda f: f.span, source=_SPAN),
    Metric("busy_node_seconds", "node-s", "busy node-seconds", "{:.0f}", _busy),
    Metric("available_node_seconds", "node-s", "available node-seconds", "{:.0f}",
           lambda f: f.nb_resources * f.span),
    Metric("utilisation", "", "utilisation", "{:.4f}",
           lambda f: _busy(f) / (f.nb_resources * f.span) if f.valid_span else float("nan")),
    Metric("mean_busy_nodes", "nodes", "mean busy nodes", "{:.2f}", lambda f: _per_span(_busy(f), f)),
    Metric("nb_finished_in_span", "", "jobs finished in the span", "{:d}", _finished_in_span),
    Metric("throughput_per_week", "jobs/week", "throughput", "{:.1f}",
           lambda f: _per_span(_finished_in_span(f), f, SECONDS_PER_WEEK), source="Madon et al. 2024, Sect. 6.1"),
    Metric("throughput_per_day", "jobs/day", "throughput", "{:.2f}",
           lambda f: _per_span(_finished_in_span(f), f, SECONDS_PER_DAY)),
    Metric("mean_running_jobs", "", "mean running jobs", "{:.2f}",
           lambda f: _per_span(float(np.sum(f.running_time)), f)),
    Metric("mean_running_jobs_per_event", "", "mean running jobs per event", "{:.2f}",
           lambda f: _mean_running_per_event(f.all_submissions, f.starts, f.ends, f.span_start, f.span_end),
           source="Rauch 2022, Sect. IV"),
)


def running_jobs_over_time(jobs: pd.DataFrame, *, shared_hosts: bool = False) -> pd.DataFrame:
    """Step function of the number of running jobs and busy nodes.

    Args:
        shared_hosts: the run had compute sharing on: a node running several jobs at once is one busy node.

    Returns:
        Frame with columns ``time`` (s, increasing, one row per distinct start or finish instant),
        ``running_jobs`` and ``busy_nodes``: the values holding from ``time`` until the next row.
    """
    start, finish, width = running_intervals(jobs)
    busy_start, busy_finish, busy_width = busy_host_intervals(jobs) if shared_hosts else (start, finish, width)
    times = np.concatenate([start, finish, busy_start, busy_finish])
    jobs_delta = np.concatenate([np.ones_like(start), -np.ones_like(finish), np.zeros(2 * len(busy_start))])
    nodes_delta = np.concatenate([np.zeros(2 * len(start)), busy_width, -busy_width])
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


def time_weighted_means(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Average of a step function over each bin ``[edges[k], edges[k+1]]``.

    The step function is ``values[i]`` on ``[times[i], times[i+1])``, 0 before ``times[0]`` and
    ``values[-1]`` after the last time. Exact: the integral of a step function is piecewise linear, so it is
    interpolated at the bin edges.

    Args:
        times: increasing instants (s), shape (n,).
        values: value from each instant on, shape (n,).
        edges: increasing bin edges (s), shape (m + 1,), m >= 1.

    Returns:
        Shape (m,): mean value over each bin.

    Raises:
        ValueError: shapes differ, fewer than two edges, or edges not increasing.
    """
    times = np.asarray(times, dtype="float64")
    values = np.asarray(values, dtype="float64")
    edges = np.asarray(edges, dtype="float64")
    if times.shape != values.shape:
        raise ValueError(f"times and values differ in shape: {times.shape} vs {values.shape}")
    if edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("bin edges must be at least two increasing values")
    if times.size == 0:
        return np.zeros(edges.size - 1)
    integral = np.concatenate([[0.0], np.cumsum(values[:-1] * np.diff(times))])

    def primitive(t: np.ndarray) -> np.ndarray:
        inside = np.interp(t, times, integral)
        after = integral[-1] + values[-1] * np.maximum(t - times[-1], 0.0)
        return np.where(t < times[0], 0.0, np.where(t > times[-1], after, inside))

    cumulative = primitive(edges)
    return np.diff(cumulative) / np.diff(edges)
