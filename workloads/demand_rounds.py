"""Demand rounds: an SWF job becomes rounds of reading and computing (Caspart et al. 2019, GridKa, Sections 4-5).

In Caspart et al.'s site model a job has a CPU demand, an I/O demand and a number of *demand rounds*: in each round it
does its share of I/O, then its share of computing, so that I/O is spread over the job's life. This module turns the
jobs of a converted SWF log (:func:`batreplay.workloads.batsim_workload.swf_to_workload`) into such jobs, as Batsim
4.2.1 expresses them: a ``composed`` profile repeating ``rounds`` times a ``parallel_homogeneous_pfs`` step (every
node of the job reads its share of bytes from the storage host) and a compute step (``parallel_homogeneous``, or
``delay`` when the log is converted with delay profiles).

The mapping, for a job of recorded run time ``R`` seconds (the converted duration: zero run times already dropped or
raised) on ``n`` nodes:

- CPU time ``C``: with ``io_share`` given, ``(1 - io_share) x R``; otherwise the log's average CPU time per
  processor (SWF field 6) when it is recorded (>= 0), at most ``R``; otherwise ``R`` (the job only computes; such
  jobs are counted in a note).
- I/O time: ``R - C``, turned into bytes at ``reference_io_rate``: each node reads ``(R - C) x reference_io_rate``
  bytes in all, ``1 / rounds`` of it per round, rounded to whole bytes (a round reading 0 bytes has no I/O step).
- Computing: ``C x node_speed`` flop per node (``C`` seconds with delay profiles), ``1 / rounds`` per round.

What it assumes: the recorded run time was spent computing or doing I/O, nothing else (no waiting on other jobs);
CPU time per processor measures the computing; I/O went at ``reference_io_rate`` per node when the job ran. On a
platform whose nodes have the recorded speed and an I/O rate equal to ``reference_io_rate``, a 1-node job alone
lasts its recorded run time (to within rounding); a job of ``n`` nodes moves ``n`` times the bytes over the storage
link, which the default storage rate of ``batreplay platform`` (the sum of the nodes' I/O rates) carries at full
speed for one job alone. Jobs read only (Batsim's ``bytes_to_write`` stays 0). This module imports numpy and the
converter's number helpers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from batreplay.workloads.batsim_workload import MIN_FLOP, json_flop, value_label
from batreplay.workloads.choices import DEFAULT_REFERENCE_IO_RATE



@dataclass(frozen=True)
class DemandRounds:
    """The demand-round options (module docstring): ``rounds`` (>= 1), ``io_share`` (0 <= share < 1, or None: from
    the log's CPU times), ``reference_io_rate`` (bytes/s, > 0)."""

    rounds: int
    io_share: float | None = None
    reference_io_rate: float = DEFAULT_REFERENCE_IO_RATE

    def __post_init__(self) -> None:
        if type(self.rounds) is not int or self.rounds < 1:
            raise ValueError(f"demand rounds: rounds must be an integer >= 1, got {self.rounds!r}")
        if self.io_share is not None and not 0 <= self.io_share < 1:
            raise ValueError(f"demand rounds: io_share must be from 0 to below 1, got {self.io_share!r}")
        if not 0 < self.reference_io_rate < float("inf"):
            raise ValueError(f"demand rounds: reference_io_rate must be finite and > 0, got {self.reference_io_rate!r}")


def cpu_seconds(run: np.ndarray, average_cpu: np.ndarray, io_share: float | None) -> tuple[np.ndarray, dict]:
    """Each job's CPU time (s) from its run time ``run`` and the log's average CPU time ``average_cpu`` (-1: not
    recorded), shape ``(n_jobs,)``; and the jobs to note, as bool arrays by reason: ``missing`` (no CPU time: all
    computing), ``capped`` (a CPU time above the run time: all computing), ``zero`` (a CPU time of 0: all reading);
    none with ``io_share``."""
    if io_share is not None:
        return run * (1.0 - io_share), {}
    missing = ~(average_cpu >= 0)
    noted = {"missing": missing, "capped": ~missing & (average_cpu > run), "zero": ~missing & (average_cpu == 0)}
    return np.where(missing, run, np.minimum(average_cpu, run)), noted


#: The notes of :func:`cpu_seconds`'s reasons: what became of those jobs (also in a site model's fit).
CPU_TIME_NOTES = {"missing": "have no CPU time in the log (SWF field 6): they only compute (give --io-share for an I/O share)",
          "capped": "have a CPU time above their run time: it is cut to the run time, they only compute",
          "zero": "have a CPU time of 0: they only read"}


def apply_demand_rounds(document: dict, job_table: Any, average_cpu: np.ndarray, options: DemandRounds,
                        node_speed: float | None) -> tuple[dict, list[str]]:
    """The workload ``document`` (a converted SWF log, its jobs in the order of ``job_table``'s rows) with each job's
    profile replaced by its demand rounds; and the notes to print (jobs without a CPU time).

    Args:
        job_table: the converter's job table (``run_time`` in seconds, ``profile``); its ``profile`` column is
            updated in place.
        average_cpu: SWF field 6 of each job (seconds per processor, -1 when not recorded), shape ``(n_jobs,)``.
        node_speed: flop/s of a node of the recorded machine (``parallel_homogeneous`` profiles), None for delay
            profiles.

    Raises:
        ValueError: a flop amount out of the converter's range (see
            :func:`batreplay.workloads.batsim_workload.json_flop`).
    """
    run = job_table["run_time"].to_numpy(dtype=np.float64)
    cpu, noted = cpu_seconds(run, np.asarray(average_cpu, dtype=np.float64), options.io_share)
    rounds = options.rounds
    read = np.rint((run - cpu) * options.reference_io_rate / rounds)  # whole bytes per node and round
    work = cpu / rounds if node_speed is None else cpu * node_speed / rounds
    smallest = 0.0 if node_speed is None else MIN_FLOP  # (a computation below 1 flop is left out: under 1 ns)
    work = np.array([float(json_flop(w)) if w >= smallest and w > 0 else 0.0 for w in work.tolist()])
    _check_amounts(job_table, read, work, options)
    pairs, inverse = np.unique(np.stack([work, read], axis=1), axis=0, return_inverse=True)
    profiles: dict[str, dict] = {}
    names = [_round_profile(profiles, float(w), float(r), rounds, node_speed is None) for w, r in pairs]
    job_profiles = [names[k] for k in np.asarray(inverse).reshape(-1)]
    for job, name in zip(document["jobs"], job_profiles):
        job["profile"] = name
    job_table["profile"] = job_profiles
    notes = [f"demand rounds: {int(mask.sum())} of {len(run)} jobs {CPU_TIME_NOTES[reason]}"
             for reason, mask in noted.items() if mask.any()]
    return dict(document, profiles=profiles), notes


def _check_amounts(job_table: Any, read: np.ndarray, work: np.ndarray, options: DemandRounds) -> None:
    """Refuse rounds Batsim would not read exactly (more than 2**53 bytes) or that would do nothing (under 1 byte
    and under 1 flop, or a delay of 0 s, per round), naming the first such job (ValueError)."""
    too_big = ~(read < 2.0**53)
    empty = (read < 1) & (work <= 0)
    for bad, why in ((too_big, "reads more than 2**53 bytes per round: give a smaller --reference-io-rate"),
                     (empty, "neither computes 1 flop (or a delay above 0 s) nor reads 1 byte per round: give fewer "
                             "rounds or a larger --reference-io-rate")):
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(f"job {job_table['job_id'].iloc[first]} (SWF line {job_table['swf_line'].iloc[first]}) "
                             f"in {options.rounds} rounds {why} ({int(bad.sum())} jobs)")


def _round_profile(profiles: dict, work: float, read: float, rounds: int, delay: bool) -> str:
    """Add the composed profile of one (work, bytes) pair per round and its steps to ``profiles``; its name."""
    steps = []
    if read > 0:
        io_name = f"io_{value_label(read)}"
        profiles[io_name] = {"type": "parallel_homogeneous_pfs", "bytes_to_read": int(read), "bytes_to_write": 0}
        steps.append(io_name)
    if work > 0:  # (amounts below 1 flop are 0 here: see apply_demand_rounds)
        if delay:
            cpu_name = f"delay_{value_label(work)}"
            profiles[cpu_name] = {"type": "delay", "delay": json_flop(work)}
        else:
            cpu_name = f"ph_{value_label(work)}"
            profiles[cpu_name] = {"type": "parallel_homogeneous", "cpu": json_flop(work), "com": 0}
        steps.append(cpu_name)
    name = f"rounds{rounds}_" + "_".join(steps)
    profiles[name] = {"type": "composed", "seq": steps, "repeat": rounds}
    return name
