"""Open workloads drawn from a site model: ``batreplay model generate``.

An open workload's jobs arrive whatever the system does (Feitelson, "Workload Modeling", ch. 9; the generators of
Lublin and Feitelson 2003 and of AccaSim work so): submission times follow the model's arrival process
(:mod:`batreplay.sitemodels.arrivals`), each job's type is drawn by the types' shares and its demands from its type
(:mod:`batreplay.sitemodels.sampling`). One seed gives one workload.

The workload is an SWF log (:func:`generated_log`), whose fields are those a log records, in whole seconds as logs
are: submission time (seconds from the model's start), run time = the job's time alone on a recorded node
(:func:`~batreplay.sitemodels.sampling.alone_seconds`, at least 1 s), average CPU time = its CPU seconds (so that
``--demand-rounds`` turns the rest back into I/O at the model's reference rate), allocated and requested processors =
its job slots, requested time = its ratio x run time (at least 1 s; -1 when the type records none), status 1, and the
rule's field set so that the rule puts each job back in its type (:meth:`JobTypeRule.swf_value`). The header gives
the model's ``UnixStartTime``, ``TimeZoneString`` and ``MaxProcs``, and the model file, seed and rate it came from.

As Batsim JSON (:func:`generated_workload`), it is that log converted as ``batreplay run`` converts one:
``parallel_homogeneous`` profiles at the model's node speed, and, when a job reads, demand rounds at the model's
reference I/O rate (a platform with I/O links runs it: ``batreplay platform --io-rate``). Imports numpy, pandas and
the workload layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from batreplay.sitemodels.arrivals import MAX_JOBS
from batreplay.sitemodels.model_file import SiteModel
from batreplay.sitemodels.sampling import alone_seconds, draw_jobs, draw_types
from batreplay.workloads.loading import LoadedWorkload, WorkloadOptions, convert_swf_log
from batreplay.workloads.swf import MISSING, SWF_COLUMNS, SwfLog, swf_log_from_frame

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class GenerateOptions:
    """What to draw: ``jobs`` (a count) or ``days`` (a length of simulated time), exactly one; the ``seed``; and
    ``rate_scale`` (> 0), which divides every inter-arrival time (2: twice the site's arrival rate).

    Raises:
        ValueError: both or neither of ``jobs`` and ``days``, or a value <= 0 (naming the option).
    """

    jobs: int | None = None
    days: float | None = None
    seed: int = 0
    rate_scale: float = 1.0

    def __post_init__(self) -> None:
        if (self.jobs is None) == (self.days is None):
            raise ValueError("model generate: give --jobs N or --days D (one of them)")
        if self.jobs is not None and not 1 <= self.jobs <= MAX_JOBS:
            raise ValueError(f"--jobs {self.jobs}: expected an integer from 1 to {MAX_JOBS:,}")
        if self.seed < 0:
            raise ValueError(f"--seed {self.seed}: expected an integer >= 0")
        if self.days is not None and not 0 < self.days < np.inf:
            raise ValueError(f"--days {self.days}: expected a number of days > 0")
        if not 0 < self.rate_scale < np.inf:
            raise ValueError(f"--rate-scale {self.rate_scale}: expected a number > 0")


def generated_log(model: SiteModel, options: GenerateOptions, name: str = "generated.swf") -> SwfLog:
    """An SWF log drawn from ``model`` (module docstring); ``name`` names it in notes."""
    return drawn_log(model, options, name)[0]


def drawn_log(model: SiteModel, options: GenerateOptions, name: str = "generated.swf") -> tuple[SwfLog, list[str]]:
    """:func:`generated_log`, and the type each job was drawn from (names, in job order: a thresholds rule's
    field may put a drawn job in another type, see :mod:`batreplay.sitemodels.job_types`)."""
    rng = np.random.default_rng(options.seed)
    horizon = None if options.days is None else options.days * SECONDS_PER_DAY
    times = model.arrivals.submission_times(rng, jobs=options.jobs, horizon=horizon, rate_scale=options.rate_scale)
    jobs = draw_jobs(model, draw_types(model, rng, times.size), rng)
    run = np.maximum(1.0, np.rint(alone_seconds(model, jobs)))
    cpu = np.clip(np.rint(jobs.cpu / model.reference["node_speed"]), 0, run)
    requested = np.where(np.isnan(jobs.ratio), MISSING, np.maximum(1.0, np.rint(jobs.ratio * run)))
    frame = pd.DataFrame({name: np.full(times.size, MISSING, dtype=np.int64) for name in SWF_COLUMNS})
    frame["job_id"] = np.arange(1, times.size + 1)
    frame["submission_time"] = np.floor(times).astype(np.int64)
    frame["run_time"], frame["average_cpu_time"] = run.astype(np.int64), cpu.astype(np.int64)
    frame["allocated_processors"] = frame["requested_processors"] = jobs.slots.astype(np.int64)
    frame["requested_time"], frame["status"] = requested.astype(np.int64), 1
    if model.rule.kind in ("field", "mapping"):  # (a thresholds rule reads the drawn values themselves)
        names = [t.name for t in model.types]
        frame[model.rule.column()] = [model.rule.swf_value(names[k]) for k in jobs.type_index.tolist()]
    header = _header(model, options, times.size)
    frame["line"] = np.arange(len(header) + 1, len(header) + 1 + times.size)
    return swf_log_from_frame(name, header, frame), [model.types[k].name for k in jobs.type_index.tolist()]


def _header(model: SiteModel, options: GenerateOptions, n_jobs: int) -> list[tuple[str, str]]:
    source = model.source
    entries = [("Version", "2.2"), ("Computer", "batreplay site model"),
               ("Note", f"drawn from a site model of {source.get('log', '?')} (sha256 {source.get('sha256', '?')}), "
                        f"seed {options.seed}, rate scale {options.rate_scale:g}"),
               ("Note", f"as drawn: --profile parallel_homogeneous --recorded-speed "
                        f"{model.reference['node_speed']:g}, and for jobs that read (CPU time below the run time) "
                        f"--demand-rounds {model_rounds(model)} --reference-io-rate "
                        f"{model.reference['reference_io_rate']:g}"),
               ("MaxJobs", str(n_jobs)), ("MaxRecords", str(n_jobs)),
               ("UnixStartTime", str(int(model.arrivals.unix_start_time))),
               ("TimeZoneString", model.arrivals.time_zone)]
    if source.get("max_procs"):
        entries.append(("MaxProcs", str(source["max_procs"])))
    return entries


def swf_text(log: SwfLog) -> str:
    """The text of an SWF file holding ``log``'s header lines and jobs (18 space-separated fields a line)."""
    head = "".join(f"; {key}: {value}\n" for key, value in log.header_entries)
    return head + log.jobs[list(SWF_COLUMNS)].to_csv(sep=" ", header=False, index=False, lineterminator="\n",
                                                       float_format="%.17g")


def model_rounds(model: SiteModel) -> int:
    """The one number of demand rounds of every job of the model.

    Raises:
        ValueError: types whose rounds are not all one same number (one conversion gives every job the same
            rounds; an SWF log records none).
    """
    rounds = {t.demand_rounds.values[0] if t.demand_rounds.kind == "discrete" and len(t.demand_rounds.values) == 1
              else None for t in model.types}
    if len(rounds) != 1 or None in rounds:
        raise ValueError("model generate: the job types do not all have one same number of demand rounds; a drawn "
                         "workload gives every job the same rounds")
    return int(rounds.pop())


def generated_workload(model: SiteModel, log: SwfLog, nb_res: int | None = None) -> LoadedWorkload:
    """The Batsim workload of a generated log (module docstring), with the conversion's notes; ``nb_res`` as
    :func:`batreplay.workloads.loading.convert_swf_log` takes it (the platform's compute hosts: jobs wider are kept,
    for the scheduler to reject; None: dropped and counted).

    Raises:
        ValueError: types whose demand rounds differ (one conversion gives every job the same number of rounds).
    """
    rounds = model_rounds(model)
    reads = bool((log.jobs["average_cpu_time"] < log.jobs["run_time"]).any())
    options = WorkloadOptions(profile="parallel_homogeneous", recorded_speed=model.reference["node_speed"],
                              demand_rounds=rounds if reads else None,
                              reference_io_rate=model.reference["reference_io_rate"] if reads else
                              WorkloadOptions().reference_io_rate)
    return convert_swf_log(log, options, nb_res)


def open_workload(model: SiteModel, *, jobs: int | None = None, seconds: float | None = None, seed: int = 0,
                  nb_res: int | None = None) -> LoadedWorkload:
    """The workload of an open replay (``batreplay run --replay open``): ``jobs`` jobs, or the arrivals of the
    model's first ``seconds`` s, drawn with ``seed`` (:func:`drawn_log`) and converted for a platform of ``nb_res``
    compute hosts (:func:`generated_workload`). Its job table gains ``job_type``, the name of the type each job was
    drawn from, and ``average_cpu_time``, its CPU seconds on a node of the model's speed (the SWF field), which the
    run writes to ``jobs.csv``.

    Raises:
        ValueError: as :class:`GenerateOptions` and :func:`generated_workload`.
    """
    days = None if seconds is None else seconds / SECONDS_PER_DAY
    options = GenerateOptions(jobs=jobs, days=days, seed=seed)  # (notes name the lines of model generate's log)
    log, types = drawn_log(model, options, name=f"the log drawn with seed {seed} (as model generate writes it)")
    workload = generated_workload(model, log, nb_res)
    drawn = pd.DataFrame({"job_type": types, "average_cpu_time": log.jobs["average_cpu_time"].to_numpy()},
                         index=log.jobs["job_id"].astype(np.int64).to_numpy())
    table = workload.job_table
    rows = drawn.loc[table["job_id"].astype(np.int64).to_numpy()]
    table["job_type"], table["average_cpu_time"] = rows["job_type"].to_numpy(), rows["average_cpu_time"].to_numpy()
    return workload


def write_generated(model: SiteModel, options: GenerateOptions, out: str | Path,
                    model_path: str | Path | None = None, force: bool = False) -> tuple[Path, SwfLog, list[str]]:
    """Draw a workload and write it at ``out``: SWF for ``.swf``, Batsim JSON for ``.json`` (atomically); returns
    the path, the log drawn and the notes of its conversion (JSON) or none.

    Raises:
        ValueError: another file ending, ``out`` is the model file ``model_path``, exists (without ``force``) or
            its folder does not; and as :func:`model_rounds`.
    """
    from batreplay.atomic import write_json_atomically, write_text_atomically

    out = Path(out)
    if not out.name.endswith((".swf", ".json")):
        raise ValueError(f"--out {out}: expected a .swf (SWF log) or .json (Batsim workload) file name")
    if model_path is not None and out.resolve() == Path(model_path).resolve():
        raise ValueError(f"--out {out}: that is the model file; give another name")
    if out.exists() and not force:
        raise ValueError(f"--out {out}: the file exists; give --force to replace it")
    if not out.parent.is_dir():
        raise ValueError(f"--out {out}: no folder {out.parent}")
    rounds = model_rounds(model)
    log = generated_log(model, options, name=out.name)
    if out.name.endswith(".swf"):
        reads = model.reference["reference_io_rate"], model.reference["node_speed"]
        note = (f"jobs that read: run with --demand-rounds {rounds} --reference-io-rate {reads[0]:g} "
                f"--recorded-speed {reads[1]:g} --profile parallel_homogeneous")
        return write_text_atomically(out, swf_text(log)), log, [log.anomalies.summary(), note]
    workload = generated_workload(model, log)
    return write_json_atomically(out, workload.document), log, workload.notes
