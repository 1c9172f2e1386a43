"""The names of Batsim's output formats, in a light module (no numpy, no pandas): the Batsim release reproduced,
the columns of ``out_jobs.csv`` and the final job states it writes.

The writers of :mod:`batreplay.formats.out_jobs_writer` and :mod:`batreplay.formats.out_schedule`, which the
embedded engine imports, take them from here, so that a simulation imports no table library; the reader and
validator (:mod:`batreplay.formats.out_jobs`, pandas) re-exports them.
"""

from __future__ import annotations

#: The Batsim release whose output formats (and behaviour) batreplay reproduces.
BATSIM_VERSION = "4.2.1"

#: Columns in the order Batsim 4.2.1 writes them.
BATSIM_COLUMNS: tuple[str, ...] = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
)

#: Columns read and written as text.
TEXT_COLUMNS = ("job_id", "workload_name", "profile", "final_state", "allocated_resources", "metadata")

REJECTED = "REJECTED"
SUCCESS = "COMPLETED_SUCCESSFULLY"
FAILED = "COMPLETED_FAILED"
WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
KILLED = "COMPLETED_KILLED"
#: Every ``final_state`` Batsim 4.2.1 writes.
FINAL_STATES: frozenset[str] = frozenset({SUCCESS, FAILED, WALLTIME_REACHED, KILLED, REJECTED})
#: States Batsim counts as killed in ``nb_jobs_killed`` of ``out_schedule.csv``.
KILLED_STATES: frozenset[str] = frozenset({WALLTIME_REACHED, KILLED})
