"""The engine's job record and the out_jobs.csv row Batsim 4.2.1 writes for it.

:class:`Job` is what the engine tracks of one job from its description to its end; :func:`job_from_json`
checks a workload's (or a REGISTER_JOB's) job description and makes one; :func:`job_record` turns a finished job
into the row of ``out_jobs.csv`` (:class:`batreplay.formats.out_jobs.JobRecord`), its times computed as Batsim
computes them (:func:`batsim_job_times`, C ``long double``). It imports the engine's options and kernel (for
:func:`~batreplay.engine.kernel.printed_time`), procset, numpy and batreplay.formats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from procset import ProcSet

from batreplay.engine.kernel import printed_time
from batreplay.engine.options import EngineError
from batreplay.formats.out_jobs import JobRecord

SUCCESS, WALLTIME_REACHED = "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"


@dataclass
class Job:
    """One job as the engine tracks it (times in seconds, ``res`` in nodes)."""

    workload: str
    name: str
    description: dict
    profile_name: str
    subtime: float
    walltime: float
    res: int
    order: int
    state: str = "SUBMITTED"
    start: float | None = None
    end: float | None = None  # the clock when it completed or was killed (unrounded, as SimGrid's)
    timeout: Any = None  # the walltime sleep racing a parallel task whose duration is close to its walltime
    allocation: ProcSet | None = None
    kill_requested: bool = False
    metadata: str = ""
    completion_token: int | None = None
    activity: Any = None

    @property
    def full_id(self) -> str:
        """Batsim's job id, ``workload!name``."""
        return f"{self.workload}!{self.name}"


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
    job_json = dict(description)
    job_json["id"] = full_id
    job = Job(wname, name, job_json, profile_name, subtime, walltime, res, order)
    job.state = "NOT_SUBMITTED"
    jobs[full_id] = job
    return job


def allocation_string(alloc: ProcSet) -> str:
    """Batsim's textual interval set: ``"0-3 7"``."""
    return str(alloc)


_NO_TIMES = dict.fromkeys(("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
                           "stretch"))


def job_record(job: Job) -> JobRecord:
    """The out_jobs.csv row of ``job`` once it has ended (completed, killed or rejected)."""
    ran = job.start is not None
    times = batsim_job_times(job.subtime, job.start, job.end) if ran else _NO_TIMES
    return JobRecord(
        job_id=job.name,
        workload_name=job.workload,
        profile=job.profile_name,
        submission_time=job.subtime,
        requested_number_of_resources=job.res,
        requested_time=job.walltime,
        success=1 if job.state == SUCCESS else 0,
        final_state=job.state,
        allocated_resources=allocation_string(job.allocation) if ran else "",
        metadata=job.metadata,
        **times,
    )


def batsim_job_times(submission_time: float, start: float, end: float) -> dict[str, float]:
    """The time columns of a job's out_jobs.csv row (seconds), computed as Batsim 4.2.1 computes them: its job
    keeps submission, start and run time as C ``long double`` (x87 80-bit extended precision, numpy's
    ``longdouble`` on x86-64 Linux) taken from SimGrid's ``double`` clock; each column is a long-double
    expression cast to ``double`` and printed with six decimals. Deriving them from the printed values instead
    can move the last printed digit (the stretch of job 1885 of golden case ``kth2000``: 1855.476191, not
    1855.476190)."""
    submitted, started = np.longdouble(submission_time), np.longdouble(start)
    runtime = np.longdouble(end) - started
    if runtime == 0:  # Batsim gives an instantaneous job a run time of 1e-5 s
        runtime = np.longdouble("1e-5")
    finished = started + runtime
    return {
        "starting_time": printed_time(float(started)),
        "execution_time": printed_time(float(runtime)),
        "finish_time": printed_time(float(finished)),
        "waiting_time": printed_time(float(started - submitted)),
        "turnaround_time": printed_time(float(finished - submitted)),
        "stretch": printed_time(float((finished - submitted) / runtime)),
    }
