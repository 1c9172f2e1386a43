"""Batsim's output files, written from the embedded engine's records.

``out_jobs.csv`` has the columns Batsim 4.2.1 writes, in its order (see Batsim's ``docs/output-jobs.rst``
and ``../shared/docs/batsim-protocol-notes.md``): one row per job, in the order jobs were rejected or
terminated; rejected jobs have empty time fields; times in seconds with six decimals (``%f``).
``stretch`` is turnaround time over execution time. ``out_schedule.csv`` carries Batsim's aggregate columns.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from batreplay.atomic import write_text_atomically
from batreplay.analysis.metrics import batsim_schedule_summary
from batreplay.analysis.out_jobs import validate_out_jobs
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
    """The ``out_jobs.csv`` table as a DataFrame (one row per record, Batsim's columns and order).

    Times are the records' own (computed as Batsim computes them, see the engine's ``_batsim_job_times``),
    not derived here from printed values; ``consumed_energy`` is -1 (no energy model), empty when rejected."""
    frame = pd.DataFrame([r.__dict__ for r in records], columns=[c for c in OUT_JOBS_COLUMNS if c != "consumed_energy"])
    frame["consumed_energy"] = frame["starting_time"].where(frame["starting_time"].isna(), -1.0)
    return frame[OUT_JOBS_COLUMNS]


def schedule_summary(jobs: pd.DataFrame, nb_machines: int, scheduling_time: float,
                     simulation_time: float) -> dict:
    """Batsim's ``out_schedule.csv`` row for a jobs table written by :func:`jobs_frame`.

    The job aggregates follow Batsim's conventions (see
    :func:`batreplay.analysis.metrics.batsim_schedule_summary`: makespan = last finish time, slowdown =
    turnaround / execution time, means divided by all jobs including rejected ones); ``time_idle`` is the
    node-seconds left idle up to the makespan; energy and power-state columns are zero (compute-only jobs).
    ``scheduling_time`` and ``simulation_time`` are wall-clock seconds of this run, as in Batsim.
    """
    summary = batsim_schedule_summary(validate_out_jobs(jobs, source="embedded engine jobs"))
    summary.update(
        batsim_version=f"{BATSIM_VERSION} (batreplay embedded engine)",
        consumed_joules=0.0,
        nb_computing_machines=nb_machines,
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


def _atomic_csv(frame: pd.DataFrame, path: Path) -> None:
    write_text_atomically(path, frame.to_csv(index=False, float_format="%.6f"))


def write_out_jobs(records: Sequence[JobRecord], path: Path) -> pd.DataFrame:
    """Write ``out_jobs.csv`` atomically (temporary file, then rename); return the table written.

    The file is byte for byte what Batsim 4.2.1 writes: fields as they are, unquoted, except ``metadata``,
    which Batsim always writes between double quotes (``""`` when empty) without escaping its content.

    Raises:
        csv.Error: a field holds a comma (a job id, say), which Batsim would write as is, breaking the CSV.
    """
    frame = jobs_frame(records)
    text = frame.assign(metadata='"' + frame["metadata"].fillna("").astype(str) + '"').to_csv(
        index=False, float_format="%.6f", quoting=csv.QUOTE_NONE, quotechar=None)
    write_text_atomically(Path(path), text)
    return frame


def write_out_schedule(summary: dict, path: Path) -> None:
    """Write ``out_schedule.csv`` atomically (one row, Batsim's columns)."""
    _atomic_csv(pd.DataFrame([summary], columns=OUT_SCHEDULE_COLUMNS), Path(path))
