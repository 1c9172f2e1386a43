"""Batsim's ``out_schedule.csv``: its columns, the aggregates Batsim computes over ``out_jobs.csv``, and writing it.

One row of aggregates over the jobs of ``out_jobs.csv`` (see :mod:`batreplay.formats.out_jobs`), with Batsim's
conventions (:func:`batsim_schedule_summary`), plus the platform's idle time and the run's wall-clock times.

A jobs table here is a pandas DataFrame (:func:`~batreplay.formats.out_jobs.read_out_jobs`) or any mapping of column
name -> values (lists, numpy arrays), such as the embedded engine's record columns: the aggregates are numpy
operations on columns, and pandas is imported only to check a table (``schedule_summary(check=True)``) or to return
one (:func:`job_times`). ``out_schedule.csv`` is written as pandas' ``to_csv`` wrote it
(:mod:`batreplay.formats.table_csv`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from batreplay.atomic import open_text_atomically
from batreplay.formats.names import BATSIM_VERSION, REJECTED, SUCCESS
from batreplay.formats.table_csv import write_csv_table

if TYPE_CHECKING:
    import pandas as pd

OUT_SCHEDULE_COLUMNS = [
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time", "nb_computing_machines",
    "nb_grouped_switches", "nb_jobs", "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_rejected",
    "nb_jobs_success", "nb_machine_switches", "scheduling_time", "simulation_time", "success_rate",
    "time_computing", "time_idle", "time_sleeping", "time_switching_off", "time_switching_on",
    "time_unavailable",
]


#: The columns :func:`batsim_schedule_summary` reads.
SUMMARY_COLUMNS = ("submission_time", "requested_number_of_resources", "final_state", "starting_time", "finish_time")


def _column(jobs: pd.DataFrame | Mapping[str, Any], name: str, dtype: Any) -> np.ndarray:
    """Column ``name`` of ``jobs`` as a numpy array of ``dtype`` (a DataFrame's through ``to_numpy``; None in a
    float column is NaN)."""
    values = jobs[name]
    return values.to_numpy(dtype=dtype) if hasattr(values, "to_numpy") else np.asarray(values, dtype=dtype)


def _job_time_columns(jobs: pd.DataFrame | Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The columns of :func:`job_times`, as float64 arrays."""
    submission = _column(jobs, "submission_time", "float64")
    start = _column(jobs, "starting_time", "float64")
    finish = _column(jobs, "finish_time", "float64")
    execution = finish - start
    turnaround = finish - submission
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = np.where(execution > 0, turnaround / execution, np.nan)
    return {"waiting_time": start - submission, "execution_time": execution, "turnaround_time": turnaround,
            "slowdown": slowdown}


def job_times(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per-job times recomputed from ``submission_time``, ``starting_time`` and ``finish_time`` (seconds).

    Returns:
        Frame on ``jobs``'s index, float64: ``waiting_time`` (start - submission), ``execution_time``
        (finish - start), ``turnaround_time`` (finish - submission) and ``slowdown`` (turnaround / execution,
        dimensionless, NaN when the execution time is 0). NaN for rejected jobs.
    """
    import pandas as pd

    return pd.DataFrame(_job_time_columns(jobs), index=jobs.index)


def _ran(jobs: pd.DataFrame | Mapping[str, Any]) -> np.ndarray:
    """The jobs that ran (a ``starting_time``), as a boolean mask."""
    return ~np.isnan(_column(jobs, "starting_time", "float64"))


def running_intervals(jobs: pd.DataFrame | Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, finish, width)`` of the jobs that ran, in table order: float64 arrays of seconds, seconds and
    nodes (``requested_number_of_resources``: Batsim jobs are rigid, the allocation has exactly that many)."""
    ran = _ran(jobs)
    start = _column(jobs, "starting_time", "float64")[ran]
    finish = _column(jobs, "finish_time", "float64")[ran]
    width = _column(jobs, "requested_number_of_resources", "float64")[ran]
    return start, finish, width


def _running_max_per_host(host: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The running maximum of ``values`` (float64, no NaN) within each run of equal ids of ``host`` (int64 >= 0,
    sorted), exactly: each value is replaced by its rank among the distinct values, offset by host so that the
    ranks of a host exceed all those of the hosts before it; one running maximum over the whole array then never
    carries a value from one host to the next."""
    if not len(values):
        return values.copy()
    levels, rank = np.unique(values, return_inverse=True)
    offset = host * len(levels)
    return levels[np.maximum.accumulate(offset + rank) - offset]


def busy_periods(jobs: pd.DataFrame | Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(host, start, finish)`` of every maximal period in which a host computes at least one job (int64 resource
    ids, float64 seconds), sorted by host then start: under compute sharing several jobs run on one host, and
    Batsim counts the host as computing once while any of them runs (its ``time_computing`` and
    ``out_machine_states.csv``; golden ``batsim-golden-sharing/sharing``: 158 host-seconds where jobs x hosts add up
    to 293).

    Raises:
        ValueError: a job that ran has an ``allocated_resources`` value that is not an interval set.
    """
    from procset import ProcSet

    ran = _ran(jobs)
    began = _column(jobs, "starting_time", "float64")[ran]
    ended = _column(jobs, "finish_time", "float64")[ran]
    allocations = [str(text) for text in _column(jobs, "allocated_resources", object)[ran]]
    hosts_of = {text: np.fromiter(ProcSet.from_str(text), dtype=np.int64) for text in set(allocations)}
    hosts = [hosts_of[text] for text in allocations]
    sizes = np.array([len(h) for h in hosts], dtype=np.int64)
    host = np.concatenate(hosts) if hosts else np.empty(0, dtype=np.int64)
    start, finish = np.repeat(began, sizes), np.repeat(ended, sizes)
    order = np.lexsort((start, host))
    host, start, finish = host[order], start[order], finish[order]
    # per host, in start order: a period opens where a job starts after every earlier job of the host ended
    new_host = np.ones(len(host), dtype=bool)
    new_host[1:] = host[1:] != host[:-1]
    latest = _running_max_per_host(host, finish)  # latest end so far on the host
    opens = new_host.copy()
    opens[1:] |= start[1:] > latest[:-1]
    period = np.cumsum(opens) - 1
    period_end = np.zeros(int(opens.sum()))
    np.maximum.at(period_end, period, finish)
    return host[opens], start[opens], period_end


def busy_host_intervals(jobs: pd.DataFrame | Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, finish, width)`` as :func:`running_intervals`, but host by host and with the times each host
    computes merged (:func:`busy_periods`): one row per maximal busy period of one host (``width`` = 1); without
    sharing, the same total as :func:`running_intervals`.

    Raises:
        ValueError: a job that ran has an ``allocated_resources`` value that is not an interval set.
    """
    _host, start, finish = busy_periods(jobs)
    return start, finish, np.ones(len(start))


def busy_node_seconds(jobs: pd.DataFrame | Mapping[str, Any], start: float | None = None,
                      end: float | None = None, *, shared_hosts: bool = False) -> float:
    """Node-seconds used by the jobs that ran (width x time running, :func:`running_intervals`), clipped to
    ``[start, end]`` when given; without bounds this is Batsim's ``time_computing``. With ``shared_hosts``
    (compute sharing), a host computing several jobs at once counts once (:func:`busy_host_intervals`)."""
    began, ended, width = busy_host_intervals(jobs) if shared_hosts else running_intervals(jobs)
    if start is not None or end is not None:
        began, ended = np.clip(began, start, end), np.clip(ended, start, end)
    return float(np.sum(width * np.maximum(ended - began, 0.0)))


def batsim_schedule_summary(jobs: pd.DataFrame | Mapping[str, Any], *,
                            shared_hosts: bool = False) -> dict[str, float | int]:
    """The job-related aggregates of Batsim's ``out_schedule.csv``, with Batsim's conventions.

    Conventions, determined by comparing with every golden run of ``../shared/batsim-golden/``:
    ``makespan`` = last finish time (simulation clock, not minus the first submission);
    ``*_slowdown`` = turnaround / execution time; means = (sum over the jobs that ran) / ``nb_jobs``
    where ``nb_jobs`` counts rejected jobs too; maxima over the jobs that ran; ``nb_jobs_finished`` =
    jobs not rejected; ``nb_jobs_killed`` = walltime reached + killed; ``success_rate`` =
    ``nb_jobs_success / nb_jobs``; ``time_computing`` = busy node-seconds, a host computing several jobs at once
    (``shared_hosts``: compute sharing; golden ``../shared/batsim-golden-sharing/``) counted once.

    Returns:
        dict with ``makespan``, ``max_slowdown``, ``max_turnaround_time``, ``max_waiting_time``,
        ``mean_slowdown``, ``mean_turnaround_time``, ``mean_waiting_time``, ``nb_jobs``,
        ``nb_jobs_finished``, ``nb_jobs_killed``, ``nb_jobs_rejected``, ``nb_jobs_success``,
        ``success_rate``, ``time_computing`` (seconds / node-seconds / counts). Zeros for an empty table.
    """
    per_job = _job_time_columns(jobs)
    ran = _ran(jobs)
    states = _column(jobs, "final_state", object)
    nb_jobs = len(states)
    nb_success = int((states == SUCCESS).sum())

    def total_over_all(column: str) -> float:
        values = per_job[column][ran]
        return float(np.nansum(values)) / nb_jobs if nb_jobs else 0.0

    def largest(column: str) -> float:
        values = per_job[column][ran]
        return float(np.nanmax(values)) if values.size else 0.0

    return {
        "makespan": float(np.nanmax(_column(jobs, "finish_time", "float64"))) if ran.any() else 0.0,
        "max_slowdown": largest("slowdown"),
        "max_turnaround_time": largest("turnaround_time"),
        "max_waiting_time": largest("waiting_time"),
        "mean_slowdown": total_over_all("slowdown"),
        "mean_turnaround_time": total_over_all("turnaround_time"),
        "mean_waiting_time": total_over_all("waiting_time"),
        "nb_jobs": nb_jobs,
        "nb_jobs_finished": int(ran.sum()),
        # Batsim counts as killed every job that ran and did not succeed (failed ones too: export.cpp, write_job)
        "nb_jobs_killed": int(ran.sum()) - nb_success,
        "nb_jobs_rejected": int((states == REJECTED).sum()),
        "nb_jobs_success": nb_success,
        "success_rate": nb_success / nb_jobs if nb_jobs else 0.0,
        "time_computing": busy_node_seconds(jobs, shared_hosts=shared_hosts),
    }


def schedule_summary(jobs: pd.DataFrame | Mapping[str, Any], nb_machines: int, scheduling_time: float,
                     simulation_time: float, *, check: bool = True, shared_hosts: bool = False,
                     nb_storage: int = 0) -> dict:
    """Batsim's ``out_schedule.csv`` row for a jobs table of :func:`~batreplay.formats.out_jobs_writer.jobs_frame`
    (or of the engine's record columns).

    The job aggregates follow Batsim's conventions (see
    :func:`batsim_schedule_summary`: makespan = last finish time, slowdown =
    turnaround / execution time, means divided by all jobs including rejected ones); ``time_idle`` is the
    node-seconds left idle up to the makespan; energy and power-state columns are zero (compute-only jobs).
    ``scheduling_time`` and ``simulation_time`` are wall-clock seconds of this run, as in Batsim. Batsim
    aggregates its own unrounded times: give the records' times (``jobs_frame``), not the printed ones read back.

    Args:
        jobs: a DataFrame, or (with ``check=False``) column name -> values such as the engine's record columns.
        check: validate ``jobs`` first (:func:`~batreplay.formats.out_jobs.validate_out_jobs`, a DataFrame); False
            when the rows are checked elsewhere (as :meth:`~batreplay.formats.out_jobs_writer.WrittenJobs.table`
            does), so that ``jobs`` needs only the columns of :data:`SUMMARY_COLUMNS` (NaN times for rejected jobs).
        shared_hosts: compute sharing was on: ``time_computing`` counts a host once while any job runs on it
            (``jobs`` then needs ``allocated_resources`` too).
        nb_storage: storage hosts of the platform: Batsim counts them in ``nb_computing_machines`` (all its
            machines), not in ``time_idle``.

    Raises:
        OutJobsError: with ``check``, an invalid table.
    """
    if check:
        from batreplay.formats.out_jobs import validate_out_jobs

        jobs = validate_out_jobs(jobs, source="embedded engine jobs")
    summary = batsim_schedule_summary(jobs, shared_hosts=shared_hosts)
    summary.update(
        batsim_version=f"{BATSIM_VERSION} (batreplay embedded engine)",
        consumed_joules=0.0,
        nb_computing_machines=nb_machines + nb_storage,
        nb_grouped_switches=0,
        nb_machine_switches=0,
        scheduling_time=scheduling_time,
        simulation_time=simulation_time,
        time_idle=max(nb_machines * summary["makespan"] - summary["time_computing"], 0.0),
        time_sleeping=0.0,
        time_switching_off=0.0,
        time_switching_on=0.0,
        time_unavailable=0.0,
    )
    return {column: summary[column] for column in OUT_SCHEDULE_COLUMNS}


def write_out_schedule(summary: dict, path: Path) -> None:
    """Write ``out_schedule.csv`` atomically (one row, Batsim's columns): numbers with six decimals, counts as
    integers, as ``pandas.DataFrame([summary]).to_csv(index=False, float_format="%.6f")`` wrote it (see
    :mod:`batreplay.formats.table_csv`)."""
    with open_text_atomically(Path(path)) as stream:
        write_csv_table(stream, {name: np.asarray([summary.get(name)]) for name in OUT_SCHEDULE_COLUMNS},
                        float_format="%.6f")
