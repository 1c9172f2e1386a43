"""Batsim's output files, written from the embedded engine's records.

``out_jobs.csv`` has the columns Batsim 4.2.1 writes, in its order (see Batsim's ``docs/output-jobs.rst``
and ``../shared/docs/batsim-protocol-notes.md``): one row per job, in the order jobs were rejected or
terminated; rejected jobs have empty time fields; times in seconds with six decimals (``%f``).
``stretch`` is turnaround time over execution time. ``out_schedule.csv`` carries Batsim's aggregate columns.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from batreplay.engine.simulator import BATSIM_VERSION, JobRecord

OUT_JOBS_COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
]

OUT_SCHEDULE_COLUMNS = [
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time", "nb_computing_machines",
    "nb_grouped_switches", "nb_jobs", "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_rejected",
    "nb_jobs_success", "nb_machine_switches", "scheduling_time", "simulation_time", "success_rate",
    "time_computing", "time_idle", "time_sleeping", "time_switching_off", "time_switching_on",
    "time_unavailable",
]


def jobs_frame(records: Sequence[JobRecord]) -> pd.DataFrame:
    """The ``out_jobs.csv`` table as a DataFrame (one row per record, Batsim's columns and order)."""
    frame = pd.DataFrame([r.__dict__ for r in records], columns=[
        "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
        "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
        "allocated_resources", "metadata"])
    frame["waiting_time"] = frame["starting_time"] - frame["submission_time"]
    frame["turnaround_time"] = frame["finish_time"] - frame["submission_time"]
    frame["stretch"] = frame["turnaround_time"] / frame["execution_time"]
    frame["consumed_energy"] = frame["starting_time"].where(frame["starting_time"].isna(), -1.0)
    return frame[OUT_JOBS_COLUMNS]


def schedule_summary(jobs: pd.DataFrame, nb_machines: int, busy_node_seconds: float,
                     scheduling_time: float, simulation_time: float) -> dict:
    """Batsim's ``out_schedule.csv`` aggregates computed from the jobs table.

    ``makespan`` is the last finish time (seconds since the simulation start); slowdowns are Batsim's
    stretch (turnaround / execution time); means are over the jobs that ran. ``time_computing`` is the
    busy node-seconds; ``time_idle`` the remaining node-seconds up to the makespan.
    """
    ran = jobs[jobs["starting_time"].notna()]
    makespan = float(ran["finish_time"].max()) if len(ran) else 0.0
    nb_jobs = len(jobs)
    nb_success = int((jobs["final_state"] == "COMPLETED_SUCCESSFULLY").sum())
    killed = jobs["final_state"].isin(["COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED"])

    def stat(column: str, how: str) -> float:
        return float(getattr(ran[column], how)()) if len(ran) else 0.0

    return {
        "batsim_version": f"{BATSIM_VERSION} (batreplay embedded engine)",
        "consumed_joules": 0.0,
        "makespan": makespan,
        "max_slowdown": stat("stretch", "max"),
        "max_turnaround_time": stat("turnaround_time", "max"),
        "max_waiting_time": stat("waiting_time", "max"),
        "mean_slowdown": stat("stretch", "mean"),
        "mean_turnaround_time": stat("turnaround_time", "mean"),
        "mean_waiting_time": stat("waiting_time", "mean"),
        "nb_computing_machines": nb_machines,
        "nb_grouped_switches": 0,
        "nb_jobs": nb_jobs,
        "nb_jobs_finished": len(ran),
        "nb_jobs_killed": int(killed.sum()),
        "nb_jobs_rejected": int((jobs["final_state"] == "REJECTED").sum()),
        "nb_jobs_success": nb_success,
        "nb_machine_switches": 0,
        "scheduling_time": scheduling_time,
        "simulation_time": simulation_time,
        "success_rate": nb_success / nb_jobs if nb_jobs else 0.0,
        "time_computing": busy_node_seconds,
        "time_idle": max(nb_machines * makespan - busy_node_seconds, 0.0),
        "time_sleeping": 0.0,
        "time_switching_off": 0.0,
        "time_switching_on": 0.0,
        "time_unavailable": 0.0,
    }


def _atomic_csv(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        frame.to_csv(tmp, index=False, float_format="%.6f")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_out_jobs(records: Sequence[JobRecord], path: Path) -> pd.DataFrame:
    """Write ``out_jobs.csv`` atomically (temporary file, then rename); return the table written."""
    frame = jobs_frame(records)
    _atomic_csv(frame, Path(path))
    return frame


def write_out_schedule(summary: dict, path: Path) -> None:
    """Write ``out_schedule.csv`` atomically (one row, Batsim's columns)."""
    _atomic_csv(pd.DataFrame([summary], columns=OUT_SCHEDULE_COLUMNS), Path(path))
