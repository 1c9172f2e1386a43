"""The engine's job record and the out_jobs.csv row Batsim 4.2.1 writes for it.

:class:`Job` is what the engine tracks of one job from its description to its end (a slotted object that refers to
its description, never copies it); :func:`job_from_json` checks a workload's (or a REGISTER_JOB's) job description
and makes one; :func:`job_columns` turns the finished jobs into the rows of ``out_jobs.csv``, column by column, once
the simulation is over (:func:`job_records`: as :class:`batreplay.formats.out_jobs_writer.JobRecord` rows), their
times computed as Batsim computes them (:func:`batsim_job_times`, C ``long double``, for all jobs at once). It
imports the engine's options and kernel (for :func:`~batreplay.engine.kernel.printed_time`), procset, numpy and
batreplay.formats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from procset import ProcSet

from batreplay.engine.kernel import printed_time, wire_numbers
from batreplay.engine.options import EngineError
from batreplay.formats.out_jobs_writer import RECORD_FIELDS, JobRecord

SUCCESS, WALLTIME_REACHED = "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"
#: A job whose profile (or one of its steps) ended with a positive return code (``ret``).
FAILED = "COMPLETED_FAILED"


@dataclass(slots=True)
class Job:
    """One job as the engine tracks it (times in seconds, ``res`` in nodes).

    ``description`` is the job's JSON object as the workload (or the REGISTER_JOB) gave it, not copied: a static
    job's ``id`` may lack the workload prefix, which :meth:`wire_description` adds; ``full_id`` is Batsim's id,
    ``workload!name``; ``registered``: the job came from a REGISTER_JOB, whose description is echoed as it is."""

    workload: str
    name: str
    full_id: str
    description: Mapping
    profile_name: str
    subtime: float
    walltime: float
    res: int
    order: int
    state: str = "SUBMITTED"
    start: float | None = None
    end: float | None = None  # the clock when it completed or was killed (unrounded, as SimGrid's)
    timeout: Any = None  # the walltime sleep racing a parallel task whose duration is close to its walltime
    allocation: ProcSet | None = None  # while it runs
    allocated_resources: str = ""  # once it ended: its allocation as Batsim writes it (the ProcSet is let go)
    kill_requested: bool = False
    metadata: str = ""
    completion_token: int | None = None
    activity: Any = None
    task: Any = None  # its parallel task on shared hosts, while it runs (compute sharing only)
    registered: bool = False
    steps: Any = None  # the steps of its composed profile, while it runs (engine.execution.Steps)
    storage_mapping: dict | None = None  # its EXECUTE_JOB's storage labels -> storage host ids, if any
    executors: list[int] | None = None  # the host of each executor, from its EXECUTE_JOB's mapping, if any
    # Batsim's return code once it ended: its profile's (or failed step's) ``ret``, 0 by default; -1 at its walltime
    # or killed in a sleep, -2 killed in a computation
    return_code: int = -1

    def wire_description(self) -> dict:
        """The job's JSON object as Batsim sends it in JOB_SUBMITTED: a static job's description with ``id`` =
        ``full_id``, a registered job's description as the decision process gave it; every non-integer number
        printed as Batsim prints it (:func:`~batreplay.engine.kernel.wire_numbers`: a walltime of 4.000000001 s is
        sent as 4.0)."""
        description = wire_numbers(self.description)
        if not self.registered:
            description["id"] = self.full_id
        return description



def job_from_json(jobs: dict[str, Job], profiles: Mapping[str, Mapping], wname: str, description: Mapping,
                  origin: str, order: int) -> Job:
    """A new job of workload ``wname`` (state ``NOT_SUBMITTED``), added to ``jobs`` (by Batsim id).

    Args:
        jobs: the jobs known so far, by ``workload!name``.
        profiles: the profiles of every workload, by workload then profile name.
        description: Batsim's job JSON (``id``, ``profile``, ``res``, ``subtime``, optional ``walltime``).
        origin: what the description came from, for messages (``workload``, ``REGISTER_JOB``).
        order: the job's rank among all jobs created (ties of submission times keep it).

    Raises:
        EngineError: a missing field, an unknown profile, ``res <= 0`` or a job id already taken.
    """
    try:
        raw_id = str(description["id"])
        name = raw_id.split("!", 1)[1] if "!" in raw_id else raw_id
        profile_name = str(description["profile"])
        res = int(description["res"])
        subtime = float(description["subtime"])
    except KeyError as missing:
        raise EngineError(f"{origin}: job {description.get('id', '?')!r} lacks the field {missing}") from None
    walltime = float(description.get("walltime", -1))
    if profile_name not in profiles.get(wname, {}):
        raise EngineError(f"{origin}: job '{wname}!{name}' uses the unknown profile '{profile_name}'")
    if res <= 0:
        raise EngineError(f"{origin}: job '{wname}!{name}' requests {res} resources (must be > 0)")
    full_id = f"{wname}!{name}"
    if full_id in jobs:
        raise EngineError(f"{origin}: job id '{full_id}' is not unique")
    job = Job(wname, name, full_id, description, profile_name, subtime, walltime, res, order)
    job.state = "NOT_SUBMITTED"
    jobs[full_id] = job
    return job


def allocation_string(alloc: ProcSet) -> str:
    """Batsim's textual interval set: ``"0-3 7"``."""
    return str(alloc)


#: The time columns :func:`batsim_job_times` computes (empty for a rejected job).
_TIME_COLUMNS = ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time", "stretch")


def job_columns(ended: Sequence[tuple[Job, str]]) -> dict[str, Sequence]:
    """The out_jobs.csv rows of ended jobs (completed, killed or rejected), in the order given, as columns: each
    field of :class:`~batreplay.formats.out_jobs_writer.JobRecord` -> one value per job. The numbers are float64 arrays
    (times in seconds, NaN for a rejected job; ``requested_time`` -1 without a walltime), the others lists
    (``requested_number_of_resources`` in nodes). No object per job is built.

    Args:
        ended: ``(job, metadata)`` pairs: the job and its metadata when it ended (SET_JOB_METADATA may change a
            job's metadata later, which Batsim does not write).
    """
    started = np.array([job.start is not None for job, _ in ended], dtype=bool)
    ran = [job for job, _ in ended if job.start is not None]
    times = batsim_job_times(np.array([job.subtime for job in ran]), np.array([job.start for job in ran]),
                             np.array([job.end for job in ran]))
    columns: dict[str, Sequence] = {
        "job_id": [job.name for job, _ in ended],
        "workload_name": [job.workload for job, _ in ended],
        "profile": [job.profile_name for job, _ in ended],
        "submission_time": np.array([job.subtime for job, _ in ended], dtype=np.float64),
        "requested_number_of_resources": [job.res for job, _ in ended],
        "requested_time": np.array([job.walltime for job, _ in ended], dtype=np.float64),
        "success": [1 if job.state == SUCCESS else 0 for job, _ in ended],
        "final_state": [job.state for job, _ in ended],
    }
    for name, values in times.items():  # rejected jobs have no times
        column = np.full(len(ended), np.nan)
        column[started] = values
        columns[name] = column
    columns["allocated_resources"] = [job.allocated_resources for job, _ in ended]
    columns["metadata"] = [metadata for _, metadata in ended]
    return {name: columns[name] for name in RECORD_FIELDS}


def job_records(ended: Sequence[tuple[Job, str]]) -> list[JobRecord]:
    """:func:`job_columns` as :class:`~batreplay.formats.out_jobs_writer.JobRecord` rows (Python numbers; the times of a
    rejected job None)."""
    columns = {name: values.tolist() if isinstance(values, np.ndarray) else values
               for name, values in job_columns(ended).items()}
    for name in _TIME_COLUMNS:
        columns[name] = [None if value != value else value for value in columns[name]]  # NaN -> None
    return [JobRecord(*row) for row in zip(*columns.values())]


def batsim_job_times(submission_time: np.ndarray, start: np.ndarray, end: np.ndarray) -> dict[str, np.ndarray]:
    """The time columns of out_jobs.csv rows (:data:`_TIME_COLUMNS`, seconds, float64 arrays: one value per job of
    the float64 arrays ``submission_time``, ``start``, ``end``), computed as Batsim 4.2.1 computes them: its job keeps
    submission, start and run time as C ``long double`` (x87 80-bit extended precision, numpy's ``longdouble`` on
    x86-64 Linux) taken from SimGrid's ``double`` clock; each column is a long-double expression cast to ``double``
    and printed with six decimals (:func:`~batreplay.engine.kernel.printed_time`).
    Deriving them from the printed values instead can move the last printed digit (the stretch of job 1885 of
    golden case ``kth2000``: 1855.476191, not 1855.476190)."""
    submitted, started = submission_time.astype(np.longdouble), start.astype(np.longdouble)
    runtime = end.astype(np.longdouble) - started
    runtime[runtime == 0] = np.longdouble("1e-5")  # Batsim gives an instantaneous job a run time of 1e-5 s
    finished = started + runtime
    columns = {
        "starting_time": started,
        "execution_time": runtime,
        "finish_time": finished,
        "waiting_time": started - submitted,
        "turnaround_time": finished - submitted,
        "stretch": (finished - submitted) / runtime,
    }
    return {name: np.array([printed_time(value) for value in column.astype(np.float64).tolist()], dtype=np.float64)
            for name, column in columns.items()}
