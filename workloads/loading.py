"""Any workload input -> the Batsim workload to simulate: the conversion options and the one loader.

A workload is an SWF log (``.swf``, ``.swf.gz``; converted by :func:`batreplay.workloads.batsim_workload.swf_to_workload`)
or a Batsim workload (``.json``; checked by :func:`batreplay.workloads.batsim_workload.read_workload_json`).
:class:`WorkloadOptions` holds how an SWF log is converted; its allowed values (:data:`PROFILE_TYPES`) are defined
with the converter (:mod:`batreplay.workloads.batsim_workload`), and the command line and campaign files take
theirs from here.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from batreplay.options import Option, check_fields, declared_options, option
from batreplay.workloads.choices import (  # the allowed values and defaults, defined once in a light module
    DEFAULT_PROFILE,
    DEFAULT_REFERENCE_IO_RATE,
    DEFAULT_RECORDED_SPEED,
    DEFAULT_RES_SOURCE,
    DEFAULT_ZERO_RUNTIME,
    PROFILE_TYPES,
    RES_SOURCE_CHOICES,
    ZERO_RUNTIME_CHOICES,
)

if TYPE_CHECKING:  # pandas, the SWF reader and the converter are imported by load_workload
    import pandas as pd

    from batreplay.workloads.swf import SwfLog

ProfileType = Literal["parallel_homogeneous", "delay"]
#: Range of ``--recorded-speed`` (flop/s): a 1 s job gets that many flop per node, which must be from 1 to below
#: 2**64 for a real Batsim 4.2.1 and the embedded engine to agree (see
#: :data:`batreplay.workloads.batsim_workload.MIN_FLOP` and ``FLOP_LIMIT``; each job's amount is checked too).
MIN_RECORDED_SPEED, RECORDED_SPEED_LIMIT = 1.0, 2.0**64
#: File endings a workload may have (lower-cased).
WORKLOAD_SUFFIXES: tuple[str, ...] = (".swf", ".swf.gz", ".json")


class WorkloadError(ValueError):
    """A workload input that cannot be loaded (missing file, unknown type, bad option); the message says which."""


def not_a_file_reason(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a workload file, or None when it is a regular file (or a link to one):
    ``"no such file"``, ``"is a folder"``, or ``"is not a regular file (a FIFO, a socket or a device)"``. A FIFO is
    never opened (reading one would wait for a writer)."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such file"
    except NotADirectoryError:  # a file used as a folder in the path
        return "no such file"
    if stat.S_ISDIR(mode):
        return "is a folder"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a FIFO, a socket or a device)"
    return None


@dataclass(frozen=True)
class WorkloadOptions:
    """How a workload log is turned into the Batsim workload simulated.

    Attributes:
        profile: one of :data:`PROFILE_TYPES` (SWF logs only).
        recorded_speed: node speed of the recorded machine, flop/s > 0 (``parallel_homogeneous`` only).
        max_jobs: simulate only the first jobs of the log (file order), an integer >= 1; None for all.
        walltime_factor: walltime = max(requested time, factor x run time), as Batsim's SWF converter (2 in
            Madon, Da Costa, Pierson 2024); None keeps the requested time.
        zero_runtime: one of :data:`ZERO_RUNTIME_CHOICES`: jobs whose recorded run time is 0 s are dropped
            (``drop``, the default; counted in the notes) or run for 1 s (``min``).
        res_source: one of :data:`RES_SOURCE_CHOICES`: the SWF processor count a job requests.
        demand_rounds: None (off), or the number of rounds of reading and computing each SWF job becomes
            (:mod:`batreplay.workloads.demand_rounds`; SWF logs only, rigid replay only).
        io_share: with ``demand_rounds``, the share (0 to below 1) of each job's run time spent reading; None: the
            run time minus the log's CPU time.
        reference_io_rate: with ``demand_rounds``, bytes/s a node read at when the log was recorded.
        overheads: None (off), or the largest launch (and completion) overhead, s, drawn for every job
            (:mod:`batreplay.workloads.overheads`; SWF logs only, not with ``demand_rounds``).
        overhead_seed: with ``overheads``, the seed of the draws.

    Raises:
        WorkloadError: a value out of range (the message names the command-line option); the options are declared
            with :func:`batreplay.options.option`, which the command line, campaign files and the web GUI read.
    """

    profile: ProfileType = option(
        DEFAULT_PROFILE, choices=PROFILE_TYPES, campaign="log", recorded="always",
        help="how SWF run times become Batsim profiles: parallel_homogeneous (run time x recorded speed flop per "
             "node: jobs follow the node speed of the platform) or delay (run time in seconds)")
    recorded_speed: float = option(
        DEFAULT_RECORDED_SPEED, kind=float, at_least=MIN_RECORDED_SPEED, below=RECORDED_SPEED_LIMIT, unit="flop/s",
        campaign="log", recorded="always",
        help="node speed of the recorded machine (parallel_homogeneous profiles)",
        range_note="a job computes its run time x this speed flop per node, and below 1 flop SimGrid's rate (host "
                   "speed / flop) can overflow (a real Batsim 4.2.1 then stops answering), from 2**64 flop on "
                   "Batsim's JSON parser no longer reads the amount exactly")
    max_jobs: int | None = option(None, kind=int, at_least=1, optional=True, campaign="log", recorded="always",
                                  help="simulate only the first N jobs of the log",
                                  default_text="all jobs")
    walltime_factor: float | None = option(
        None, kind=float, above=0, optional=True, campaign="log", recorded="always",
        help="walltime = max(requested time, FACTOR x run time), as Batsim's SWF converter (2 in Madon, Da Costa, "
             "Pierson 2024)", default_text="the requested time")
    zero_runtime: Literal["drop", "min"] = option(
        DEFAULT_ZERO_RUNTIME, choices=ZERO_RUNTIME_CHOICES, campaign="log",
        help="SWF jobs whose run time is 0 s: drop them (counted in the notes) or run them for 1 s (min)")
    res_source: Literal["allocated", "requested"] = option(
        DEFAULT_RES_SOURCE, choices=RES_SOURCE_CHOICES, campaign="log",
        help="SWF processor count that a job requests: the allocated processors (field 5) or the requested ones "
             "(field 8, as Rauch 2022); the other one fills in when missing")

    demand_rounds: int | None = option(
        None, kind=int, at_least=1, at_most=1_000_000, optional=True, campaign="log", recorded="when-set",
        help="turn each SWF job into this many rounds of reading from the storage host and computing (Caspart et "
             "al. 2019); jobs that read need a platform with I/O (batreplay platform --io-rate)", default_text="off")
    io_share: float | None = option(
        None, kind=float, at_least=0, below=1, optional=True, campaign="log", recorded_with="demand_rounds",
        help="with --demand-rounds: the share of each job's run time spent reading, instead of the run time minus "
             "the log's CPU time (SWF field 6)", default_text="from the log's CPU times")
    reference_io_rate: float = option(
        DEFAULT_REFERENCE_IO_RATE, kind=float, above=0, below=1e15, unit="bytes/s", campaign="log",
        recorded_with="demand_rounds", range_note="a job reads up to its run time x this rate bytes per node, which "
        "must stay a whole number Batsim's JSON parser reads exactly",
        help="with --demand-rounds: bytes/s a node read at when the log was recorded (I/O seconds become bytes)")

    overheads: float | None = option(
        None, kind=float, above=0, at_most=86400, optional=True, unit="s", campaign="log", recorded="when-set",
        help="add to every job a launch and a completion overhead, each drawn uniformly on [0, SECONDS] s (Baranov et "
             "al. 2018): two runs that differ only by --overhead-seed are two repetitions of one experiment, whose "
             "adequacy measure P is the reference P_ideal; SWF logs only", default_text="none")
    overhead_seed: int = option(0, kind=int, at_least=0, campaign="log", recorded_with="overheads",
                                help="with --overheads: seed of the overheads drawn")

    def __post_init__(self) -> None:
        check_fields(self, WorkloadError)
        if self.overheads is None and self.overhead_seed != 0:
            raise WorkloadError("overhead_seed (--overhead-seed) needs overheads (--overheads)")
        if self.overheads is not None and self.demand_rounds is not None:
            raise WorkloadError("overheads (--overheads) and demand_rounds (--demand-rounds) do not combine: demand "
                                "rounds split the recorded run time, overheads lengthen it; give one of them")
        if self.demand_rounds is None and self.io_share is not None:
            raise WorkloadError("io_share (--io-share) needs demand_rounds (--demand-rounds)")
        if self.demand_rounds is None and self.reference_io_rate != DEFAULT_REFERENCE_IO_RATE:
            raise WorkloadError("reference_io_rate (--reference-io-rate) needs demand_rounds (--demand-rounds)")


#: The options that turn each converted job's profile into a composed one (demand rounds; launch and completion
#: overheads): SWF logs only, and rigid replays only (Batsim 4.2.1 does not link a registered composed profile).
COMPOSING_OPTIONS = ("demand_rounds", "overheads")


def composing_options() -> tuple[Option, ...]:
    """The declarations of :data:`COMPOSING_OPTIONS`, in that order."""
    return tuple(d for d in declared_options(WorkloadOptions) if d.name in COMPOSING_OPTIONS)


@dataclass
class LoadedWorkload:
    """A workload ready to simulate.

    Attributes:
        document: the Batsim workload (``{"nb_res", "jobs", "profiles"}``), jobs in file order.
        job_table: one row per converted SWF job (user id, recorded times; see
            :class:`~batreplay.workloads.batsim_workload.BatsimWorkload`), or None for a JSON workload.
        notes: one line per thing the reading and conversion counted (anomalies, dropped jobs): nothing is
            dropped without a line saying so.
    """

    document: dict
    job_table: pd.DataFrame | None
    notes: list[str] = field(default_factory=list)


def load_workload(path: str | Path, options: WorkloadOptions = WorkloadOptions(),
                  nb_res: int | None = None) -> LoadedWorkload:
    """Read the workload at ``path`` and convert it with ``options``.

    ``nb_res`` (the platform's compute nodes) is the size SWF jobs are checked against, whatever the log's
    MaxProcs says; wider jobs are kept and noted (the scheduler rejects them). Without it, MaxProcs of the
    header decides and wider jobs are dropped (and counted).

    Raises:
        WorkloadError: missing file, a folder or a file that is not a regular one (a FIFO...), or an unknown
            extension; SwfFormatError / WorkloadFormatError name file, line and field for malformed input (a flop
            amount out of range included); NoJobsError (a ValueError): no job to simulate, an empty log or JSON
            ``jobs`` list, or every job dropped by the conversion (the message counts them per reason).
    """
    from batreplay.workloads.batsim_workload import NoJobsError, read_workload_json
    from batreplay.workloads.swf import read_swf

    path = Path(path)
    problem = not_a_file_reason(path)
    if problem is not None:
        suffix = "" if problem == "no such file" else ", not a workload file: give a .swf, .swf.gz or .json file"
        raise WorkloadError(f"workload {path}: {problem}{suffix}")
    name = path.name.lower()
    if not name.endswith(WORKLOAD_SUFFIXES):
        raise WorkloadError(f"workload {path}: expected a .swf, .swf.gz or .json file")
    if name.endswith(".json"):
        for declaration in composing_options():
            if getattr(options, declaration.field) is not None:
                raise WorkloadError(f"workload {path}: {declaration.label} converts SWF logs; this is a Batsim "
                                    "JSON workload, whose profiles are used as they are")
        document = read_workload_json(path)
        if not document["jobs"]:
            raise NoJobsError(path, "its 'jobs' list is empty")
        if options.max_jobs is not None:
            document = dict(document, jobs=document["jobs"][: options.max_jobs])
        return LoadedWorkload(document, None, [])
    return convert_swf_log(read_swf(path), options, nb_res)


def convert_swf_log(log: SwfLog, options: WorkloadOptions = WorkloadOptions(),
                    nb_res: int | None = None) -> LoadedWorkload:
    """The workload simulated from a parsed SWF log, converted with ``options`` (``nb_res`` as
    :func:`load_workload`); the conversion ``batreplay run`` applies to an SWF file, for a log built in memory too
    (:mod:`batreplay.sitemodels.generate`).

    Raises:
        NoJobsError, SwfFormatError, WorkloadError: as :func:`load_workload`.
    """
    from batreplay.workloads.batsim_workload import swf_to_workload

    converted = swf_to_workload(
        log,
        profile=options.profile,
        node_speed=options.recorded_speed if options.profile == "parallel_homogeneous" else None,
        max_jobs=options.max_jobs,
        walltime_factor=options.walltime_factor,
        zero_runtime=options.zero_runtime,
        res_source=options.res_source,
        nb_res=nb_res,
        oversized="drop" if nb_res is None else "keep",
    )
    document, notes = converted.to_json_dict(), [log.anomalies.summary(), converted.report.summary()]
    if options.demand_rounds is not None:
        document, round_notes = _with_demand_rounds(document, converted.job_table, log, options)
        notes.extend(round_notes)
    if options.overheads is not None:
        from batreplay.workloads.overheads import JobOverheads, apply_overheads

        document, overhead_notes = apply_overheads(document, converted.job_table,
                                                   JobOverheads(options.overheads, options.overhead_seed))
        notes.extend(overhead_notes)
    return LoadedWorkload(document, converted.job_table, notes)


def _with_demand_rounds(document: dict, job_table: pd.DataFrame, log: SwfLog,
                        options: WorkloadOptions) -> tuple[dict, list]:
    """``document`` with its jobs turned into demand rounds (:mod:`batreplay.workloads.demand_rounds`), each job's
    CPU time read from the log line it came from; and the notes."""
    from batreplay.workloads.demand_rounds import DemandRounds, apply_demand_rounds

    cpu_by_line = dict(zip(log.jobs["line"].tolist(), log.jobs["average_cpu_time"].tolist()))
    average_cpu = [cpu_by_line[line] for line in job_table["swf_line"].tolist()]
    rounds = DemandRounds(options.demand_rounds, options.io_share, options.reference_io_rate)
    speed = options.recorded_speed if options.profile == "parallel_homogeneous" else None
    try:
        return apply_demand_rounds(document, job_table, average_cpu, rounds, speed)
    except ValueError as err:
        raise WorkloadError(f"workload {log.path}: demand rounds: {err}") from None
