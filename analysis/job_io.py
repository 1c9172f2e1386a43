"""What each job computed and moved: CPU time, I/O time, CPU efficiency and bytes, per job and per node type.

Caspart et al. 2019 (sections 4-5) describe a grid job by its CPU demand and its I/O demand, spread over demand
rounds, and judge a node type by how efficiently its jobs use their CPUs while they also read and write. Batsim's
``out_jobs.csv`` gives each job's run time and hosts only; the rest comes from the job's profile (the run's
``workload.json``: its steps, :func:`batreplay.engine.profiles.leaves_of`) and the hosts' speeds:

- ``cpu_time`` (s): the CPU time the job consumed, summed over its hosts: each computing step's flop on a host
  over that host's speed (flop/s per core; a Batsim task uses one core of each host). It does not depend on how
  long the job waited for its bytes or for a share of its hosts;
- ``compute_time`` (s): the run time its computing steps would take alone (each step lasts as long as its slowest
  host's part), and ``sleep_time`` (s) that of its ``delay`` steps;
- ``io_time`` (s): the rest of its run time, ``execution_time - compute_time - sleep_time`` (0 when the printed
  times make it slightly negative): the time it spent moving bytes beyond its computing; under compute sharing it
  also holds the time the job waited for its share of the hosts;
- ``cpu_efficiency``: ``cpu_time / (execution_time * hosts)``, Caspart's CPU time over wall time times threads
  (one thread, Batsim's executor, per allocated host: see below);
- ``bytes_read``, ``bytes_written`` (bytes, every host counted): what its ``parallel_homogeneous_pfs`` steps read
  from and wrote to storage; ``bytes_sent`` what its communication matrices sent (between its hosts, and from a
  host to itself on a ``parallel`` matrix's diagonal; a task of one host sends nothing: SimGrid runs it as a
  computation); ``bytes_staged`` what its ``data_staging`` steps moved between storage hosts.

Only jobs that completed successfully are measured: a job stopped by its walltime, killed or failed ran an
unknown part of its steps, and gets no values (counted in the notes), as does a job whose profile the workload
does not hold (a job registered by the decision process) or whose number of executors differs from its hosts (a
decision process's EXECUTE_JOB ``mapping``, which ``out_jobs.csv`` does not record; a mapping that kept their
number cannot be told apart: batreplay's own schedulers never map). :func:`run_io` measures a run directory
(``batreplay analyze``, the report, the web GUI's run page). This module imports pandas, procset, the engine's
profile helpers and :mod:`batreplay.analysis.node_types`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from procset import ProcSet

from batreplay.analysis.node_types import UNTYPED
from batreplay.engine.profiles import DATA_STAGING, PFS, host_flops, leaves_of, may_take_other_sizes
from batreplay.engine.transfers import moves_bytes

#: The file of a run directory holding the Batsim workload it simulated (its profiles).
WORKLOAD_NAME = "workload.json"

#: Columns of :func:`job_io`'s table, after ``job_id``.
JOB_COLUMNS = ("hosts", "execution_time", "cpu_time", "compute_time", "sleep_time", "io_time", "cpu_efficiency",
               "bytes_read", "bytes_written", "bytes_sent", "bytes_staged")
#: Columns of :func:`node_type_io`'s table.
NODE_TYPE_COLUMNS = ("node_type", "nb_jobs", "host_seconds", "cpu_time", "io_host_seconds", "cpu_efficiency",
                     "bytes_read", "bytes_written")
_SUCCESS = "COMPLETED_SUCCESSFULLY"


@dataclass
class JobIO:
    """:func:`job_io`'s result.

    Attributes:
        jobs: one row per job (``job_id`` then :data:`JOB_COLUMNS`; NaN for a job not measured).
        notes: what was left unmeasured, counted.
        per_host: for each measured job, ``(hosts, cpu seconds per host, [read, written] bytes per host, I/O time,
            run time)`` (what :func:`node_type_io` sums).
    """

    jobs: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    per_host: list[tuple] = field(default_factory=list)


def _step_demands(profile: Mapping, speeds: Sequence[float]) -> tuple[np.ndarray, float, float, np.ndarray,
                                                                      float, float]:
    """``(cpu seconds per host, compute time, sleep time, [read, written] bytes per host, sent, staged)`` of one
    step (a profile that is not composed) on hosts of ``speeds`` (allocation order)."""
    n = len(speeds)
    kind = profile["type"]
    cpu, io = np.zeros(n), np.zeros((n, 2))
    if kind == "delay":
        return cpu, 0.0, float(profile["delay"]), io, 0.0, 0.0
    if kind == PFS:
        io[:, 0], io[:, 1] = float(profile.get("bytes_to_read", 0)), float(profile.get("bytes_to_write", 0))
        return cpu, 0.0, 0.0, io, 0.0, 0.0
    if kind == DATA_STAGING:
        return cpu, 0.0, 0.0, io, 0.0, float(profile["nb_bytes"])
    cpu = np.asarray(host_flops(profile, n)) / np.asarray(speeds, dtype=float)
    sent = 0.0
    if n > 1 and kind == "parallel":
        sent = float(sum(float(value) for value in profile["com"]))
    elif n > 1 and float(profile.get("com", 0)) > 0:  # every ordered pair of hosts
        per_pair = float(profile["com"]) / (n if kind == "parallel_homogeneous_total" else 1)
        sent = per_pair * n * (n - 1)
    return cpu, float(cpu.max(initial=0.0)), 0.0, io, sent, 0.0


def _job_demands(profiles: Mapping[str, Mapping], name: str, speeds: tuple[float, ...]) -> tuple:
    """The sums of :func:`_step_demands` over the steps of a job of profile ``name`` on hosts of ``speeds``."""
    cpu, io = np.zeros(len(speeds)), np.zeros((len(speeds), 2))
    compute = sleep = sent = staged = 0.0
    for leaf in leaves_of(profiles, name):
        step = _step_demands(leaf.profile, speeds)
        cpu, io = cpu + step[0], io + step[3]
        compute, sleep, sent, staged = compute + step[1], sleep + step[2], sent + step[4], staged + step[5]
    return cpu, compute, sleep, io, sent, staged


#: Why a job is not measured -> the note that counts such jobs.
_LEFT_OUT = {
    "not completed": "that did not complete successfully (stopped by their walltime, killed or failed: the part of "
                     "their steps they ran is not known)",
    "unknown profile": "whose profile the workload file does not hold (registered by the decision process)",
    "mapped": "whose number of executors differs from their hosts (a decision process's executor mapping, which "
              "out_jobs.csv does not record)",
    "unreadable": "whose profile does not fit their hosts (a parallel vector of another length)",
}


def _left_out(job, profiles: Mapping[str, Mapping], hosts: list[int]) -> str | None:
    """Why ``job`` (a row of the jobs table) on ``hosts`` cannot be measured, or None."""
    if job.final_state != _SUCCESS:
        return "not completed"
    if job.profile not in profiles:
        return "unknown profile"
    if job.requested_number_of_resources != len(hosts) and not may_take_other_sizes(profiles, job.profile):
        return "mapped"
    return None


def job_io(jobs: pd.DataFrame, profiles: Mapping[str, Mapping], host_speeds: Sequence[float]) -> JobIO:
    """Per job, what it computed and moved (see the module docstring for each column and its unit), one executor per
    allocated host (batreplay's schedulers never map executors otherwise; a job whose executors differ in number
    from its hosts is left out, but one whose mapping kept their number cannot be told from ``out_jobs.csv``).

    Args:
        jobs: a validated jobs table (:func:`batreplay.formats.out_jobs.read_out_jobs`).
        profiles: the workload's profiles (``workload.json``'s ``profiles``), validated by Batsim's rules.
        host_speeds: flop/s per core of each host, by resource id.

    Returns:
        a :class:`JobIO` whose ``jobs`` has one row per job of ``jobs``; the jobs left out counted in its notes.

    Raises:
        ValueError: a job ran on a host id beyond ``host_speeds``.
    """
    rows, per_host, cache = [], [], {}
    left_out: dict[str, int] = {}
    for job in jobs.itertuples(index=False):
        hosts = list(ProcSet.from_str(str(job.allocated_resources))) if job.final_state == _SUCCESS else []
        if hosts and hosts[-1] >= len(host_speeds):
            raise ValueError(f"job {job.job_id} ran on resource {hosts[-1]} but the platform has "
                             f"{len(host_speeds)} hosts")
        why = _left_out(job, profiles, hosts)
        key = (job.profile, tuple(host_speeds[h] for h in hosts))
        if why is None and key not in cache:
            try:
                cache[key] = _job_demands(profiles, job.profile, key[1])
            except (ValueError, KeyError, TypeError):
                cache[key] = None
        if why is None and cache[key] is None:
            why = "unreadable"
        if why is not None:
            left_out[why] = left_out.get(why, 0) + 1
            rows.append((job.job_id, len(hosts) or np.nan, job.execution_time) + (np.nan,) * 9)
            continue
        cpu, compute, sleep, io, sent, staged = cache[key]
        wall = float(job.execution_time)
        io_time = max(wall - compute - sleep, 0.0)
        efficiency = cpu.sum() / (wall * len(hosts)) if wall > 0 else np.nan
        rows.append((job.job_id, len(hosts), wall, cpu.sum(), compute, sleep, io_time, efficiency,
                     io[:, 0].sum(), io[:, 1].sum(), sent, staged))
        per_host.append((hosts, cpu, io, io_time, wall))
    notes = [f"CPU and I/O times left out for {count} job(s) {_LEFT_OUT[why]}" for why, count in left_out.items()]
    return JobIO(pd.DataFrame(rows, columns=["job_id", *JOB_COLUMNS]), notes, per_host)


def node_type_io(measured: JobIO, host_types: Sequence[str]) -> pd.DataFrame:
    """Per node type (in order of first host id), the sums over the jobs :func:`job_io` measured:
    ``nb_jobs`` that ran on at least one host of the type, ``host_seconds`` (run time x hosts of the type),
    ``cpu_time`` (s), ``io_host_seconds`` (each job's I/O time x its hosts of the type), ``cpu_efficiency``
    (``cpu_time / host_seconds``), ``bytes_read`` and ``bytes_written`` by the hosts of the type.

    Args:
        measured: :func:`job_io`'s result.
        host_types: the node type of each host, by resource id.
    """
    names = list(dict.fromkeys(host_types))
    index = {name: k for k, name in enumerate(names)}
    type_of = np.array([index[name] for name in host_types], dtype=np.int64)
    sums = np.zeros((len(names), 6))  # nb_jobs, host_seconds, cpu, io, read, written
    for hosts, cpu, io, io_time, wall in measured.per_host:
        types = type_of[hosts]
        counts = np.bincount(types, minlength=len(names))
        sums[:, 0] += counts > 0
        sums[:, 1] += counts * wall
        sums[:, 2] += np.bincount(types, weights=cpu, minlength=len(names))
        sums[:, 3] += counts * io_time
        sums[:, 4] += np.bincount(types, weights=io[:, 0], minlength=len(names))
        sums[:, 5] += np.bincount(types, weights=io[:, 1], minlength=len(names))
    with np.errstate(invalid="ignore", divide="ignore"):
        efficiency = np.where(sums[:, 1] > 0, sums[:, 2] / sums[:, 1], np.nan)
    return pd.DataFrame({"node_type": names, "nb_jobs": sums[:, 0].astype(np.int64), "host_seconds": sums[:, 1],
                         "cpu_time": sums[:, 2], "io_host_seconds": sums[:, 3], "cpu_efficiency": efficiency,
                         "bytes_read": sums[:, 4], "bytes_written": sums[:, 5]}, columns=list(NODE_TYPE_COLUMNS))


def _moves_bytes(profiles: Mapping[str, Mapping], names: Sequence[str]) -> bool:
    """Whether a step of one of the profiles ``names`` (those the jobs ran) reads, writes, sends or stages bytes."""
    for name in set(names) & profiles.keys():
        try:
            if any(moves_bytes(leaf.profile) for leaf in leaves_of(profiles, name)):
                return True
        except (KeyError, TypeError, ValueError):  # (a profile Batsim would refuse: job_io leaves its jobs out)
            continue
    return False


def run_io(run) -> tuple[JobIO, pd.DataFrame] | None:
    """:func:`job_io` and :func:`node_type_io` of ``run`` (a :class:`batreplay.analysis.run_dir.RunData`), or None
    when its ``workload.json`` or its platform is unknown (a real Batsim's output folder), or none of the profiles
    its jobs ran moves bytes (compute-only jobs: their I/O time is 0 and their efficiency 1, nothing to tell).

    Raises:
        ValueError: ``workload.json`` is not a JSON object with ``profiles``, naming the file; a job ran on a host
            the platform lacks."""
    path = run.path / WORKLOAD_NAME
    if run.platform is None or not path.is_file():
        return None
    try:
        profiles = json.loads(path.read_text()).get("profiles")
    except (OSError, ValueError, AttributeError) as err:
        raise ValueError(f"{path}: not a Batsim workload ({err})") from None
    if not isinstance(profiles, dict):
        raise ValueError(f"{path}: field 'profiles' must be an object")
    if not _moves_bytes(profiles, list(run.jobs["profile"].astype(str))):
        return None
    hosts = run.platform.hosts
    measured = job_io(run.jobs, profiles, [host.speed for host in hosts])
    return measured, node_type_io(measured, [host.node_type or UNTYPED for host in hosts])
