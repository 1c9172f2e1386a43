"""Calibrating a site model from an SWF log: job selection, a seeded split, and per job type distributions.

Caspart et al. 2019 (Sect. 5-6) calibrate their GridKa model on a random half of the jobs and validate it on the
other half. :func:`fit_site_model` does the same on an SWF log:

1. *Selection*: the jobs whose fields have the values given (``select``, e.g. ``{"partition": [156, 157]}``, the
   GridKa sites of the LCG log). Jobs a model cannot describe are dropped and counted per reason: run time missing
   or 0 s, no processor count (allocated nor requested), submission time unknown or negative.
2. *Split*: a permutation seeded with ``seed`` (numpy's PCG64) puts ``round(split x n)`` of the kept jobs in the
   calibration set, the others in the test set; :func:`write_test_jobs` writes the test set's job numbers and lines.
3. *Per job type* (:mod:`batreplay.sitemodels.job_types`), from the calibration jobs: its share, and the
   distributions of :class:`~batreplay.sitemodels.model_file.JobTypeModel`. A job's CPU seconds ``C`` and run time
   ``R`` split as :mod:`batreplay.workloads.demand_rounds` does (``io_share``, else the log's average CPU time per
   processor capped at ``R``, else ``R``); CPU demand = ``C x node_speed`` flop per job slot, I/O demand =
   ``(R - C) x reference_io_rate`` bytes per job slot, demand rounds = ``demand_rounds``.
4. *Arrivals* of the calibration jobs, by hour of the week (:mod:`batreplay.sitemodels.arrivals`), their gaps scaled
   by the calibration share to the whole site's rate.

The distributions of one type are fitted independently of each other, but for CPU and I/O demand, whose rank
correlation is kept. SWF records one processor count per job: it gives the job slots (Batsim's ``res``); threads
per slot are not in SWF and not modelled. Imports numpy, pandas and the workload layer's SWF reader.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from batreplay.atomic import open_text_atomically
from batreplay.sitemodels.arrivals import ArrivalModel
from batreplay.sitemodels.choices import FIELD_COLUMNS
from batreplay.sitemodels.distributions import EmpiricalDistribution
from batreplay.sitemodels.fit_options import FitOptions
from batreplay.sitemodels.job_types import JobTypeRule
from batreplay.sitemodels.model_file import JobTypeModel, SiteModel, write_model
from batreplay.workloads.demand_rounds import CPU_TIME_NOTES, cpu_seconds
from batreplay.workloads.swf import SwfLog, read_swf

#: Why a selected job is dropped before the split -> the note's words.
DROP_REASONS = {"run_time": "run time missing or 0 s", "processors": "no processor count (allocated nor requested)",
                "submission_time": "submission time unknown or negative"}


@dataclass(frozen=True)
class FittedModel:
    """A fit's result: the model, the test set's jobs (``job_id``, ``swf_line``), the notes to print, and each
    type's mean recorded run time over its calibration jobs (s), to set beside the model's."""

    model: SiteModel
    test_jobs: pd.DataFrame
    notes: list[str]
    mean_run_times: dict[str, float]


def fit_site_model(log_path: str | Path, rule: JobTypeRule, options: FitOptions = FitOptions()) -> FittedModel:
    """Fit a site model on the SWF log at ``log_path`` (module docstring).

    Raises:
        SwfFormatError: a malformed log line (file, line and field named).
        ValueError: no job left after selection and drops, fewer than two calibration jobs, a mapping rule that
            misses values, or an unknown time zone in the log's header.
    """
    log = read_swf(log_path)
    jobs, counts = _usable_jobs(log, options)
    if len(jobs) == 0:
        raise ValueError(f"{log.path}: no job left to fit ({_count_text(counts)})")
    calibration, test = _split(len(jobs), options)
    if calibration.size < 2:
        raise ValueError(f"{log.path}: {calibration.size} calibration job(s): a model needs two or more")
    cal = jobs.iloc[calibration]
    codes, names = rule.assign(cal[rule.column()] if rule.column() else np.zeros(len(cal)))
    demands = _demands(cal, options)
    types = tuple(_type_model(name, np.flatnonzero(codes == k), demands, options) for k, name in enumerate(names))
    start, zone, clock_notes = _clock(log)
    try:
        arrivals = ArrivalModel.fit(cal["submission_time"].to_numpy(), start, zone, rate_scale=len(cal) / len(jobs),
                                    max_bins=options.max_bins)
    except ValueError as err:
        raise ValueError(f"{log.path}: arrivals (headers UnixStartTime, TimeZoneString): {err}") from None
    source = _source(log, options, len(jobs), counts, len(cal), len(test))
    model = SiteModel(source, {"node_speed": options.node_speed, "reference_io_rate": options.reference_io_rate,
                               "io_share": options.io_share}, rule, arrivals, types)
    span = (cal["submission_time"].max() - cal["submission_time"].min()) / 86_400
    notes = [log.anomalies.summary(),
             f"{log.path}: {len(jobs)} jobs kept ({_count_text(counts)}); "
             f"{len(cal)} to calibrate, {len(test)} to test (split {options.split}, seed {options.seed})",
             *clock_notes, *demands["notes"],
             f"arrivals: {len(cal)} calibration submissions over {span:.2f} days, the site's mean rate "
             f"{arrivals.mean_rate() * 86_400:.1f} jobs/day; hours of the week whose rate is their own, their hour "
             "of the day's, the mean: " + ", ".join(f"{v} {k}" for k, v in arrivals.sources().items())]
    run = cal["run_time"].to_numpy()
    means = {name: float(run[codes == k].mean()) for k, name in enumerate(names)}
    return FittedModel(model, jobs.iloc[test][["job_id", "line"]].rename(columns={"line": "swf_line"}), notes, means)


def _usable_jobs(log: SwfLog, options: FitOptions) -> tuple[pd.DataFrame, dict]:
    """The selected jobs a model can describe, with their ``processors`` column; and the counts: ``not_selected``,
    ``dropped`` per reason, ``requested_processors_used`` (kept jobs whose processors are the requested ones)."""
    frame = log.jobs
    selected = np.ones(len(frame), dtype=bool)
    for name, values in (options.select or {}).items():
        selected &= frame[FIELD_COLUMNS[name]].isin(list(values)).to_numpy()
    frame = frame[selected]
    allocated = frame["allocated_processors"]
    processors = job_processors(frame)
    bad = {"run_time": ~(frame["run_time"] > 0), "processors": ~(processors > 0),
           "submission_time": ~(frame["submission_time"] >= 0)}
    keep = ~(bad["run_time"] | bad["processors"] | bad["submission_time"])
    dropped = {reason: int(mask.sum()) for reason, mask in bad.items()}  # a job may count under several reasons
    counts = {"not_selected": int((~selected).sum()), "dropped": dropped,
              "requested_processors_used": int((keep & ~(allocated > 0)).sum())}  # kept, with a note
    return frame[keep].assign(processors=processors[keep]).reset_index(drop=True), counts


def job_processors(jobs: pd.DataFrame) -> pd.Series:
    """Each job's job slots: its allocated processors (SWF field 5), else its requested ones (field 8) where none
    were allocated; shape ``(n_jobs,)``, values <= 0 where neither is known."""
    allocated = jobs["allocated_processors"]
    return allocated.where(allocated > 0, jobs["requested_processors"])


def _count_text(counts: Mapping) -> str:
    dropped = ", ".join(f"{count} {DROP_REASONS[reason]}" for reason, count in counts["dropped"].items() if count)
    text = f"{counts['not_selected']} not selected; dropped: {dropped or 'none'}"
    if counts["requested_processors_used"]:
        text += f"; {counts['requested_processors_used']} kept jobs take their requested processors (none allocated)"
    return text


def _split(n: int, options: FitOptions) -> tuple[np.ndarray, np.ndarray]:
    """Row numbers of the calibration and test sets (each increasing), from a permutation seeded by ``seed``."""
    order = np.random.default_rng(options.seed).permutation(n)
    cut = int(round(options.split * n))
    return np.sort(order[:cut]), np.sort(order[cut:])


def _demands(cal: pd.DataFrame, options: FitOptions) -> dict:
    """Per calibration job: slots, CPU flop and I/O bytes per slot, requested time / run time (NaN if none)."""
    run = cal["run_time"].to_numpy(dtype=np.float64)
    cpu, noted = cpu_seconds(run, cal["average_cpu_time"].to_numpy(dtype=np.float64), options.io_share)
    requested = cal["requested_time"].to_numpy(dtype=np.float64)
    missing_request = int((requested <= 0).sum())
    return {"slots": cal["processors"].to_numpy(dtype=np.float64), "cpu": cpu * options.node_speed,
            "io": np.rint((run - cpu) * options.reference_io_rate),
            "ratio": np.where(requested > 0, requested / run, np.nan),
            "notes": [f"{int(mask.sum())} of {len(run)} calibration jobs {CPU_TIME_NOTES[reason]}"
                      for reason, mask in noted.items() if mask.any()]
            + ([f"{missing_request} of {len(run)} calibration jobs have no requested time (SWF field 9): each type "
                "keeps its share of them (requested_time_share)"] if missing_request else [])}


def _type_model(name: str, rows: np.ndarray, demands: dict, options: FitOptions) -> JobTypeModel:
    bins = options.max_bins
    cpu, io = demands["cpu"][rows], demands["io"][rows]
    ratio = demands["ratio"][rows]
    ratio = ratio[np.isfinite(ratio)]
    total = len(demands["cpu"])
    return JobTypeModel(
        name=name, share=rows.size / total, jobs=int(rows.size),
        job_slots=EmpiricalDistribution.fit(demands["slots"][rows], max_bins=bins, integer=True),
        cpu_demand=EmpiricalDistribution.fit(cpu, max_bins=bins),
        io_demand=EmpiricalDistribution.fit(io, max_bins=bins),
        cpu_io_correlation=_rank_correlation(cpu, io),
        demand_rounds=EmpiricalDistribution.fit(np.full(rows.size, options.demand_rounds), integer=True),
        requested_time_share=ratio.size / rows.size,
        requested_time_ratio=EmpiricalDistribution.fit(ratio, max_bins=bins) if ratio.size else None)


def _rank_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation of ``x`` and ``y``; 0 when either is constant (no order to keep)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(pd.Series(x).corr(pd.Series(y), method="spearman"))


def _clock(log: SwfLog) -> tuple[float, str, list[str]]:
    """The log's start (Unix time) and time zone, from its header; UTC and 0 when absent, with a note."""
    notes = []
    start = log.unix_start_time
    if start is None:
        notes.append(f"{log.path}: no UnixStartTime header: hours of the week counted from 1970-01-01 00:00 UTC "
                     "(a Thursday)")
    zone = log.header.get("TimeZoneString", "").strip()
    if not zone:
        notes.append(f"{log.path}: no TimeZoneString header: hours of the week in UTC")
    return float(start or 0), zone or "UTC", notes


def _source(log: SwfLog, options: FitOptions, kept: int, counts: dict, n_cal: int, n_test: int) -> dict:
    with open(log.path, "rb") as file:
        digest = hashlib.file_digest(file, "sha256").hexdigest()
    return {"log": log.path.name, "sha256": digest,
            "jobs_in_log": log.n_jobs, "max_procs": None if options.select else log.max_procs,
            "select": {k: list(v) for k, v in (options.select or {}).items()},
            **counts, "kept": kept, "split": options.split,
            "seed": options.seed, "calibration_jobs": n_cal, "test_jobs": n_test, "max_bins": options.max_bins}


def check_model_path(model_path: str | Path, force: bool = False) -> None:
    """Refuse (ValueError naming ``--out``) a model file name that does not end in ``.json``, in a folder that does
    not exist, or that exists, as its test jobs' file, unless ``force``: a fit never writes over a log or anything
    it was not asked to."""
    path = Path(model_path)
    if not path.name.endswith(".json"):
        raise ValueError(f"--out {model_path}: a model file is JSON: give a name ending in .json")
    if not path.parent.is_dir():
        raise ValueError(f"--out {model_path}: no folder {path.parent}")
    for existing in (path, held_out_path(path)):
        if existing.exists() and not force:
            raise ValueError(f"--out {model_path}: {existing} exists; give --force to replace it")


def held_out_path(model_path: str | Path) -> Path:
    """Where the test set of the model file ``model_path`` goes: beside it, ``NAME.test-jobs.csv``."""
    path = Path(model_path)
    return path.with_name(f"{path.name.removesuffix('.json')}.test-jobs.csv")


def save_fit(fitted: FittedModel, model_path: str | Path, force: bool = False) -> tuple[Path, Path]:
    """Write the test set (CSV: ``job_id``, ``swf_line``; :func:`held_out_path`) and then the model (its
    ``source.test_jobs_file`` names the CSV), each atomically; returns both paths.

    Raises:
        ValueError: as :func:`check_model_path`.
    """
    check_model_path(model_path, force)
    test_path = held_out_path(model_path)
    with open_text_atomically(test_path) as out:
        fitted.test_jobs.to_csv(out, index=False)
    model = replace(fitted.model, source={**fitted.model.source, "test_jobs_file": test_path.name})
    return write_model(model, model_path), test_path
