"""The two sides of a site model's validation: the log's held-out jobs, and the jobs a simulation of the model ran.

The held-out (test) jobs are those ``batreplay model fit`` left out of the calibration, listed in the CSV beside the
model (:func:`batreplay.sitemodels.fit.held_out_path`) by their SWF line; the log must be the very file the model was
fitted on (its SHA-256 is checked). The simulation runs the model with :func:`batreplay.run.runner.run`:

- ``closed`` (Caspart et al. 2019, Sect. 6): ``--replay closed`` keeps a population of jobs in the system until the
  window's end; the population defaults to the whole site's mean number of jobs in the system over the window, the
  test jobs' divided by their share of the jobs (Little's law: then the throughputs agree when the run times and
  waits do);
- ``open``: ``--replay open``, a workload drawn from the model (as ``batreplay model generate`` draws it) up to the
  window's end, at the whole site's rate.

Both simulate the whole site, whose load sets the waits; the simulated side compared is then a random share of its
jobs, the test jobs' share of the log's (:func:`thinned`), as the test jobs are a random share of the site's.

Times are seconds from the log's ``UnixStartTime``, the model's time 0, on both sides. This module imports numpy,
pandas and the layers below (workloads, site models, replay, run).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from batreplay.sitemodels.fit import held_out_path, job_processors
from batreplay.sitemodels.model_file import SiteModel
from batreplay.validation.measures import JobTable
from batreplay.workloads.swf import read_swf


@dataclass(frozen=True)
class HeldOut:
    """The test jobs (their :class:`JobTable`), the window they span (s), their mean number in the system over it,
    and notes on what the log does not record."""

    jobs: JobTable
    window: tuple[float, float]
    mean_in_system: float
    notes: list[str] = field(default_factory=list)


def held_out_jobs(model: SiteModel, model_path: Path, log_path: Path, against: Path | None,
                  warm_up: float) -> HeldOut:
    """The held-out jobs of ``model`` in the log at ``log_path``, listed in ``against`` (default: beside the model);
    the window runs from their first submission + ``warm_up`` (s) to their last submission.

    Raises:
        ValueError: a log other than the model's (checksum), a test file naming lines that are not jobs of the log,
            no test job, or a warm-up that leaves less than an hour.
    """
    with open(log_path, "rb") as file:
        digest = hashlib.file_digest(file, "sha256").hexdigest()
    if digest != model.source.get("sha256"):
        raise ValueError(f"{log_path}: not the log {model.source.get('log')} the model was fitted on (its SHA-256 "
                         "differs)")
    against = against if against is not None else held_out_path(model_path)
    listed = pd.read_csv(against)
    if list(listed.columns) != ["job_id", "swf_line"] or listed.empty:
        raise ValueError(f"{against}: expected the columns job_id,swf_line and at least one job (a test jobs file of "
                         "batreplay model fit)")
    if len(listed) != model.source["test_jobs"]:
        raise ValueError(f"{against}: {len(listed)} jobs, but the model kept {model.source['test_jobs']} to test: a "
                         "test jobs file of another fit?")
    log = read_swf(log_path)
    jobs = log.jobs.set_index("line")
    missing = ~listed["swf_line"].isin(jobs.index)
    if missing.any() or not (jobs.loc[listed["swf_line"][~missing], "job_id"].to_numpy() == listed["job_id"][~missing]
                             ).all():
        raise ValueError(f"{against}: {int(missing.sum())} lines are not job lines of {log_path}, or job numbers "
                         "differ from the log's")
    return _held_out_table(model, jobs.loc[listed["swf_line"]].reset_index(), warm_up, log_path)


def _held_out_table(model: SiteModel, frame: pd.DataFrame, warm_up: float, log_path: Path) -> HeldOut:
    submit = frame["submission_time"].to_numpy(dtype=np.float64)
    run = frame["run_time"].to_numpy(dtype=np.float64)
    wait = frame["wait_time"].to_numpy(dtype=np.float64)
    notes = []
    waits_known = bool((wait >= 0).all())
    if not waits_known:
        notes.append(f"{int((wait < 0).sum())} of {len(wait)} test jobs record no waiting time ({log_path}): waits "
                     "are not compared, and those jobs are taken to start at their submission")
    start = submit + np.where(wait >= 0, wait, 0.0)
    processors = job_processors(frame)
    frame = frame.assign(processors=processors)  # (the column a thresholds rule on processors reads, as the fit's)
    processors = processors.to_numpy()
    rule = model.rule
    codes, names = rule.assign(frame[rule.column()] if rule.column() else np.zeros(len(frame)))
    cpu = frame["average_cpu_time"].to_numpy(dtype=np.float64)
    if not (cpu >= 0).any():
        notes.append(f"the test jobs record no CPU time ({log_path}): CPU efficiency is not compared")
    above = cpu > run
    if above.any():  # as the fit takes them (batreplay.workloads.demand_rounds.cpu_seconds)
        notes.append(f"{int(above.sum())} test jobs record a CPU time above their run time: cut to the run time, as "
                     "the fit does (an efficiency of 1)")
        cpu = np.where(above, run, cpu)
    table = JobTable(submit, start, start + run, processors, np.asarray(names, dtype=object)[codes],
                     np.where(cpu >= 0, cpu, np.nan), waits_known)
    window = (float(submit.min()) + warm_up, float(submit.max()))
    if window[1] - window[0] < 3600:
        raise ValueError(f"validation window from {window[0]:g} to {window[1]:g} s (the test jobs' submissions, "
                         f"after a warm-up of {warm_up:g} s): at least an hour is needed")
    in_system = np.clip(np.minimum(table.end, window[1]) - np.maximum(table.submit, window[0]), 0, None).sum()
    return HeldOut(table, window, float(in_system / (window[1] - window[0])), notes)


def simulated_jobs(out_jobs: pd.DataFrame, job_types: dict[int, str], cpu_flop: dict[int, float],
                   speed: float) -> tuple[JobTable, np.ndarray, int]:
    """The simulated side from a run's ``out_jobs.csv`` (:func:`batreplay.formats.out_jobs.read_out_jobs`), each
    job's type and CPU demand (flop per slot) by job number, and the platform's node speed (flop/s): CPU seconds =
    flop / speed, at most the job's execution time. Rejected jobs (no start) are left out. Returns the table, the
    job numbers of its rows and the count of rejected jobs."""
    ran = out_jobs[out_jobs["starting_time"].notna()]
    ids = ran["job_id"].astype(np.int64).tolist()
    cpu = np.asarray([cpu_flop[k] / speed for k in ids], dtype=np.float64)
    executed = ran["finish_time"].to_numpy() - ran["starting_time"].to_numpy()
    table = JobTable(ran["submission_time"].to_numpy(), ran["starting_time"].to_numpy(), ran["finish_time"].to_numpy(),
                     ran["requested_number_of_resources"].to_numpy(),
                     np.asarray([job_types[k] for k in ids], dtype=object),
                     np.minimum(cpu, executed))  # (a job killed at its walltime computed at most that long)
    return table, np.asarray(ids, dtype=np.int64), len(out_jobs) - len(ran)


#: Seconds an open simulation's arrivals go on past the window's end, so that one drawn at its very end is in.
OPEN_MARGIN = 1e-4


def thinned(jobs: JobTable, job_ids: np.ndarray, share: float, seed: int) -> JobTable:
    """A random ``share`` (0 < share <= 1) of ``jobs``: job number ``k`` (``job_ids``, shape ``(n,)``) is kept when the
    ``k``-th number of a stream of its own (numpy, seeded by ``[seed, 1]``, apart from the draws' ``seed``) is below
    ``share``; the same jobs whatever the order of ``out_jobs.csv`` or the scheduler."""
    ids = np.asarray(job_ids, dtype=np.int64)
    keep = np.random.default_rng([seed, 1]).random(int(ids.max()) + 1)[ids] < share
    return JobTable(jobs.submit[keep], jobs.start[keep], jobs.end[keep], jobs.processors[keep], jobs.job_type[keep],
                    jobs.cpu_seconds[keep], jobs.waits_known)


def run_options(mode: str, model_path: Path, held_out: HeldOut, population: str | None, seed: int,
                share: float) -> dict[str, Any]:
    """The run options (``batreplay run``'s, by name) of a simulation of the whole site (the test jobs' ``share`` of
    the jobs) up to the window's end: closed (its population ``population``, else the module's default) or open
    (the model's arrivals up to the window's end)."""
    if mode == "open":
        return {"workload": str(model_path), "replay": "open", "model_seed": seed,
                "open_duration": held_out.window[1] + OPEN_MARGIN}
    chosen = population if population is not None else str(max(1, round(held_out.mean_in_system / share)))
    return {"workload": str(model_path), "replay": "closed", "population": chosen,
            "closed_duration": held_out.window[1], "model_seed": seed}
