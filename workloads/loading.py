"""Any workload input -> the Batsim workload to simulate: the conversion options and the one loader.

A workload is an SWF log (``.swf``, ``.swf.gz``; converted by :func:`batreplay.workloads.batsim_workload.swf_to_workload`)
or a Batsim workload (``.json``; checked by :func:`batreplay.workloads.batsim_workload.read_workload_json`).
:class:`WorkloadOptions` holds how an SWF log is converted; its allowed values (:data:`PROFILE_TYPES`) are defined
with the converter (:mod:`batreplay.workloads.batsim_workload`), and the command line and campaign files take
theirs from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from batreplay.workloads.choices import (  # the allowed values and defaults, defined once in a light module
    DEFAULT_PROFILE,
    DEFAULT_RECORDED_SPEED,
    DEFAULT_RES_SOURCE,
    DEFAULT_ZERO_RUNTIME,
    PROFILE_TYPES,
    RES_SOURCE_CHOICES,
    ZERO_RUNTIME_CHOICES,
)

if TYPE_CHECKING:  # pandas, the SWF reader and the converter are imported by load_workload
    import pandas as pd

ProfileType = Literal["parallel_homogeneous", "delay"]
#: File endings a workload may have (lower-cased).
WORKLOAD_SUFFIXES: tuple[str, ...] = (".swf", ".swf.gz", ".json")


class WorkloadError(ValueError):
    """A workload input that cannot be loaded (missing file, unknown type, bad option); the message says which."""


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

    Raises:
        WorkloadError: a value out of range (the message names the command-line option).
    """

    profile: ProfileType = DEFAULT_PROFILE
    recorded_speed: float = DEFAULT_RECORDED_SPEED
    max_jobs: int | None = None
    walltime_factor: float | None = None
    zero_runtime: Literal["drop", "min"] = DEFAULT_ZERO_RUNTIME
    res_source: Literal["allocated", "requested"] = DEFAULT_RES_SOURCE

    def __post_init__(self) -> None:
        if self.profile not in PROFILE_TYPES:
            raise WorkloadError(f"--profile {self.profile!r}: expected one of {', '.join(PROFILE_TYPES)}")
        if self.res_source not in RES_SOURCE_CHOICES:
            raise WorkloadError(f"res_source (--res-source) {self.res_source!r}: expected one of "
                                f"{', '.join(RES_SOURCE_CHOICES)}")
        if self.zero_runtime not in ZERO_RUNTIME_CHOICES:
            raise WorkloadError(f"zero_runtime (--zero-runtime) {self.zero_runtime!r}: expected one of "
                                f"{', '.join(ZERO_RUNTIME_CHOICES)}")
        max_jobs = self.max_jobs
        if max_jobs is not None and (isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or max_jobs < 1):
            raise WorkloadError(f"max_jobs (--max-jobs) must be an integer >= 1 (or None for all jobs), got {max_jobs!r}")
        for name, value in (("recorded_speed", self.recorded_speed), ("walltime_factor", self.walltime_factor)):
            if value is None and name == "walltime_factor":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
                raise WorkloadError(f"{name} (--{name.replace('_', '-')}) must be a number > 0, got {value!r}")


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
        WorkloadError: missing file or unknown extension; SwfFormatError / WorkloadFormatError name file, line
            and field for malformed input.
    """
    from batreplay.workloads.batsim_workload import read_workload_json, swf_to_workload
    from batreplay.workloads.swf import read_swf

    path = Path(path)
    if not path.is_file():
        raise WorkloadError(f"workload {path}: no such file")
    name = path.name.lower()
    if not name.endswith(WORKLOAD_SUFFIXES):
        raise WorkloadError(f"workload {path}: expected a .swf, .swf.gz or .json file")
    if name.endswith(".json"):
        document = read_workload_json(path)
        if options.max_jobs is not None:
            document = dict(document, jobs=document["jobs"][: options.max_jobs])
        return LoadedWorkload(document, None, [])
    log = read_swf(path)
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
    return LoadedWorkload(converted.to_json_dict(), converted.job_table,
                          [log.anomalies.summary(), converted.report.summary()])
