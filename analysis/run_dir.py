"""Loading one simulation's outputs for analysis: a batreplay run directory or a real Batsim output folder.

A batreplay run directory (written by :func:`batreplay.run.runner.run`) holds ``out_jobs.csv``,
``out_schedule.csv``, ``workload.json``, ``jobs.csv`` (per-job SWF facts: ``job_id``, ``user_id``, recorded
times, among them ``recorded_submission_time``, the recorded submission on the simulation clock), ``metrics.json``
and ``run.json`` (the run's spec and the platform file used). Run directories of older versions name some
``jobs.csv`` columns differently; they are renamed when read (:data:`LEGACY_JOB_TABLE_COLUMNS`). A real Batsim's
output folder holds at least ``out_jobs.csv`` (or ``<prefix>_jobs.csv`` for another ``-e`` prefix), often
``out_schedule.csv`` and sometimes the ``platform.xml`` it ran on.

The number of compute resources (nodes) is needed for utilisation. It is taken, first found wins, from: an
explicit value (``--nb-resources``); the platform of ``run.json`` (its ``platform_file``, else its spec's
``platform``, a file or a shipped platform name), read with :func:`batreplay.platforms.reader.read_platform`;
``nb_computing_machines`` of Batsim's ``out_schedule.csv``; a ``platform.xml`` in the folder. When it is known, every
job that ran must fit in it: its width and the resource ids of its ``allocated_resources`` (0 to N - 1).

Whether several jobs shared hosts (compute sharing or co-scheduling, which changes how busy nodes are counted):
``compute_sharing`` or a ``speedup_model`` in the spec of ``run.json``; for a Batsim output folder, its ``out_schedule.csv`` tells: Batsim's
``time_computing`` counts a host once while any job runs on it, so a sum of jobs x hosts x run time above it means
the jobs shared hosts (said in the run's notes).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from batreplay.formats.out_jobs import (FULL_ID, OutJobsError, attach_job_table, check_allocations_within,
                                        read_out_jobs)
from batreplay.formats.out_schedule import busy_node_seconds
from batreplay.platforms.model import Platform
from batreplay.platforms.reader import read_platform
from batreplay.platforms.shipped import SHIPPED_PLATFORMS

OUT_JOBS_NAME = "out_jobs.csv"
OUT_SCHEDULE_NAME = "out_schedule.csv"
JOB_TABLE_NAME = "jobs.csv"
MANIFEST_NAME = "run.json"
#: Columns a job side table must have to be used (per-user metrics need the user).
JOB_TABLE_REQUIRED: tuple[str, ...] = ("job_id", "user_id")
#: Column of the job side table holding each job's recorded submission time (s, simulation clock).
RECORDED_SUBMISSION = "recorded_submission_time"
#: ``jobs.csv`` columns of older versions -> today's name, applied in this order when reading. Older runs wrote
#: the recorded submission twice (``subtime`` and ``original_submission_time``, equal): a legacy column whose
#: new name is already taken is a duplicate and is dropped.
LEGACY_JOB_TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("original_submission_time", RECORDED_SUBMISSION),
    ("subtime", RECORDED_SUBMISSION),
    ("swf_submit_time", "swf_submission_time"),
)


class RunDirError(ValueError):
    """A run directory or Batsim output folder that cannot be analysed; the message names the file and why."""


@dataclass
class RunData:
    """One simulation's outputs, validated.

    Attributes:
        name: short label of the run in tables and figures (the folder name, made unique by the caller).
        path: the folder read.
        jobs: validated jobs table (:func:`batreplay.formats.out_jobs.read_out_jobs`), one row per job.
        job_table: the job side table (``jobs.csv``) with at least ``job_id`` and ``user_id``, one row per
            job of ``jobs`` (checked), or None for a plain Batsim output folder.
        nb_resources: number of compute resources of the platform (nodes), or None when nothing tells.
        nb_resources_source: where ``nb_resources`` came from (human readable), or None.
        spec: the ``spec`` object of ``run.json`` (workload, platform, scheduler, ...), or ``{}``.
        manifest: the whole ``run.json``, or ``{}`` for a Batsim output folder.
        notes: human-readable facts noticed while loading (nothing is dropped silently).
        shared_hosts: jobs shared hosts (compute sharing): busy nodes count a host once while any job runs on it
            (pass it to :func:`batreplay.analysis.metrics.summarize`).
        platform: the platform the run used, when its file was found (node types, slots, speeds), else None.
    """

    name: str
    path: Path
    jobs: pd.DataFrame
    job_table: pd.DataFrame | None = None
    nb_resources: int | None = None
    nb_resources_source: str | None = None
    spec: dict[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    shared_hosts: bool = False
    platform: Platform | None = None

    @property
    def has_users(self) -> bool:
        """True when a job side table with ``user_id`` is attached."""
        return self.job_table is not None

    @property
    def has_recorded_submissions(self) -> bool:
        """True when the job side table gives each job's recorded submission time (needed for lateness)."""
        return self.job_table is not None and RECORDED_SUBMISSION in self.job_table.columns

    @property
    def scheduler(self) -> str:
        """Scheduler name from ``run.json``, or ``"?"`` (a Batsim output folder does not say)."""
        return str(self.spec.get("scheduler", "?"))

    @property
    def label(self) -> str:
        """One-line description: name, scheduler and platform when known."""
        platform = self.spec.get("platform")
        parts = [self.name]
        if self.spec:
            parts.append(f"{self.scheduler} on {Path(str(platform)).stem if platform else '?'}")
        if self.spec.get("replay"):
            parts.append(str(self.spec["replay"]))
        return ", ".join(parts)


def _find_jobs_file(folder: Path) -> Path:
    direct = folder / OUT_JOBS_NAME
    if direct.is_file():
        return direct
    candidates = sorted(folder.glob("*_jobs.csv"))
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        raise RunDirError(f"{folder}: several Batsim jobs files ({', '.join(p.name for p in candidates)}); "
                          f"pass the folder of one run")
    raise RunDirError(f"{folder}: no {OUT_JOBS_NAME} (neither a batreplay run directory nor a Batsim output "
                      f"folder)")


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise RunDirError(f"{path}, line {err.lineno}: not valid JSON: {err.msg}") from err
    if not isinstance(manifest, dict):
        raise RunDirError(f"{path}: expected a JSON object, found {type(manifest).__name__}")
    spec = manifest.get("spec", {})
    if not isinstance(spec, dict):
        raise RunDirError(f"{path}, field 'spec': expected a JSON object, found {type(spec).__name__}")
    return manifest


def upgrade_legacy_columns(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rename the ``jobs.csv`` columns of older versions (:data:`LEGACY_JOB_TABLE_COLUMNS`).

    Returns:
        ``(table, origins)``: the table with today's column names (duplicate legacy columns dropped) and,
        for each renamed column, new name -> the name in the file (to name it in error messages).
    """
    origins: dict[str, str] = {}
    for old, new in LEGACY_JOB_TABLE_COLUMNS:
        if old not in table.columns:
            continue
        if new in table.columns:
            table = table.drop(columns=old)
        else:
            table = table.rename(columns={old: new})
            origins[new] = old
    return table, origins


def read_job_table(path: Path, jobs: pd.DataFrame) -> pd.DataFrame:
    """Read a job side table (``jobs.csv``) and check it describes exactly the jobs of ``jobs``.

    Args:
        path: the CSV file; needs columns ``job_id`` and ``user_id``; ``recorded_submission_time`` (s), when
            present, must be a finite number on every row. Columns of older versions are renamed
            (:func:`upgrade_legacy_columns`).
        jobs: the validated jobs table of the same run.

    Returns:
        The table with today's column names (``job_id`` as text), one row per job.

    Raises:
        RunDirError: unreadable file, missing columns (listed), a bad ``recorded_submission_time`` (line
            named), or jobs present on one side only (named, see
            :func:`batreplay.formats.out_jobs.attach_job_table`).
    """
    try:
        table = pd.read_csv(path, dtype={"job_id": str})
    except pd.errors.EmptyDataError as err:
        raise RunDirError(f"{path}: empty file, expected a header with {', '.join(JOB_TABLE_REQUIRED)}") from err
    except pd.errors.ParserError as err:
        raise RunDirError(f"{path}: not a readable CSV file: {err}") from err
    missing = [c for c in JOB_TABLE_REQUIRED if c not in table.columns]
    if missing:
        raise RunDirError(f"{path}: missing column(s) {', '.join(missing)} "
                          f"(found: {', '.join(map(str, table.columns))})")
    table, origins = upgrade_legacy_columns(table)
    if RECORDED_SUBMISSION in table.columns:
        values = pd.to_numeric(table[RECORDED_SUBMISSION], errors="coerce").to_numpy(dtype="float64")
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            column = origins.get(RECORDED_SUBMISSION, RECORDED_SUBMISSION)  # as named in the file
            raise RunDirError(f"{path}, line {row + 2}, column {column!r}: "
                              f"{table[RECORDED_SUBMISSION].iloc[row]!r} is not a finite number "
                              f"({int(bad.sum())} such row(s))")
        table[RECORDED_SUBMISSION] = values
    try:
        attach_job_table(jobs, table, columns=["user_id"], table_name=str(path))
    except ValueError as err:
        raise RunDirError(str(err)) from err
    return table


def _platform_from_manifest(folder: Path, manifest: dict[str, Any],
                            may_read: Callable[[Path], bool] | None = None) -> tuple[Path | None, list[str]]:
    """The platform file a run used, trying run.json's ``platform_file`` then its spec's ``platform`` (a shipped
    platform's name, or a file ``may_read`` allows: a path it refuses is skipped, without looking whether it
    exists, and said so in the second element)."""
    tried: list[str] = []
    for key, text in (("platform_file", manifest.get("platform_file")),
                      ("platform", manifest.get("spec", {}).get("platform"))):
        if not text:
            continue
        if key == "platform" and str(text) in SHIPPED_PLATFORMS:
            return SHIPPED_PLATFORMS[str(text)], tried
        candidates = [Path(str(text)), folder / str(text)]
        allowed = [path for path in candidates if may_read is None or may_read(path)]
        for path in allowed:
            if path.is_file():
                return path, tried
        tried.append(str(text) if allowed else f"{text}: not a file this reader may open")
    return None, tried


def _nb_from_schedule(path: Path) -> int | None:
    try:
        schedule = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as err:
        raise RunDirError(f"{path}: not a readable CSV file: {err}") from err
    if "nb_computing_machines" not in schedule.columns or len(schedule) == 0:
        return None
    value = pd.to_numeric(schedule["nb_computing_machines"], errors="coerce").iloc[0]
    if not (np.isfinite(value) and value >= 1 and value == round(value)):
        raise RunDirError(f"{path}, line 2, column 'nb_computing_machines': "
                          f"{schedule['nb_computing_machines'].iloc[0]!r} is not a positive whole number")
    return int(value)


def _shares_hosts(folder: Path, manifest: dict[str, Any], jobs: pd.DataFrame, notes: list[str]) -> bool:
    """Whether the run had compute sharing on (see the module docstring); a detection is noted in ``notes``."""
    if manifest:
        spec = manifest.get("spec", {})
        return bool(spec.get("compute_sharing", False)) or spec.get("speedup_model") is not None
    schedule = folder / OUT_SCHEDULE_NAME
    if not schedule.is_file():
        return False
    try:
        batsim = pd.to_numeric(pd.read_csv(schedule).get("time_computing"), errors="coerce")
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as err:
        raise RunDirError(f"{schedule}: not a readable CSV file: {err}") from err
    if batsim is None or len(batsim) == 0 or not np.isfinite(batsim.iloc[0]):
        return False
    counted = busy_node_seconds(jobs)
    if counted - float(batsim.iloc[0]) > 1e-6 * max(float(batsim.iloc[0]), 1.0):
        notes.append(f"jobs shared hosts (compute sharing): jobs x hosts x run time add up to {counted:.0f} "
                     f"node-seconds but {schedule.name} counts {float(batsim.iloc[0]):.0f}; busy nodes are counted "
                     "as Batsim counts them, a host once while any job runs on it")
        return True
    return False


def _platform_of(folder: Path, manifest: dict[str, Any], notes: list[str],
                 may_read: Callable[[Path], bool] | None = None) -> Platform | None:
    """The platform a run used (run.json's, else a platform.xml in the folder), or None: also when it cannot be
    read, which ``notes`` then says (only the tables per node type need it)."""
    platform, _tried = _platform_from_manifest(folder, manifest, may_read) if manifest else (None, [])
    if platform is None and (folder / "platform.xml").is_file():
        platform = folder / "platform.xml"
    if platform is None:
        return None
    try:
        return read_platform(platform)
    except (OSError, ValueError) as err:  # PlatformError is a ValueError naming file and line
        notes.append(f"platform not read ({' '.join(str(err).split())}): no table per node type")
        return None


def _shown(path: Path | str) -> str:
    """``path`` as tables show it: relative to the current folder when it lies under it (a checkout's shipped
    platform, a run directory's file), so that committed results name no folder of the machine; as given otherwise."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _resolve_nb_resources(folder: Path, manifest: dict[str, Any], explicit: int | None,
                          may_read: Callable[[Path], bool] | None = None
                          ) -> tuple[int | None, str | None, list[str], Platform | None]:
    """The number of resources, where it comes from, notes, and the platform when it was read for it (the one
    :func:`_platform_of` would read)."""
    notes: list[str] = []
    if explicit is not None:
        if not (isinstance(explicit, (int, np.integer)) and explicit >= 1):
            raise RunDirError(f"number of resources must be a whole number >= 1, got {explicit!r}")
        return int(explicit), "given explicitly", notes, None
    if manifest:
        platform, tried = _platform_from_manifest(folder, manifest, may_read)
        if platform is not None:
            read = read_platform(platform)
            return read.nb_compute, f"platform {_shown(platform)}", notes, read
        if tried:
            notes.append(f"platform named in {MANIFEST_NAME} not found ({', '.join(tried)})")
    schedule = folder / OUT_SCHEDULE_NAME
    if schedule.is_file():
        value = _nb_from_schedule(schedule)
        if value is not None:
            return value, f"nb_computing_machines of {schedule.name}", notes, None
    platform_xml = folder / "platform.xml"
    if platform_xml.is_file():
        read = read_platform(platform_xml)
        return read.nb_compute, f"platform {_shown(platform_xml)}", notes, read
    return None, None, notes, None


def load_run(path: str | Path, *, nb_resources: int | None = None, name: str | None = None,
             may_read: Callable[[Path], bool] | None = None) -> RunData:
    """Load and validate one run directory or Batsim output folder.

    Args:
        path: the folder (a batreplay run directory or a Batsim output folder); a path to a Batsim jobs file
            (``out_jobs.csv``) is taken as its folder.
        nb_resources: number of compute resources to use (overrides what the folder says), or None to find
            it (see the module docstring).
        name: label of the run; default the folder's name.
        may_read: which platform files named by ``run.json`` may be opened (the web GUI passes its folder check,
            :meth:`batreplay.ui.sandbox.Sandbox.contains`); None: any. A refused one is never looked at: the
            number of resources then comes from ``out_schedule.csv``, with a note.

    Returns:
        A :class:`RunData`. ``nb_resources`` may be None when nothing tells (the caller decides).

    Raises:
        RunDirError: no such folder, no jobs file, unreadable ``run.json`` / ``jobs.csv`` /
            ``out_schedule.csv``, a side table that does not match the jobs, a job that ran on more resources
            than the platform has (file and line named).
        batreplay.formats.out_jobs.OutJobsError: ``out_jobs.csv`` missing columns, holding bad values or
            inconsistent rows (:func:`~batreplay.formats.out_jobs.read_out_jobs`), or a job allocated a resource
            beyond the platform when its size is known (file, line and column named).
        batreplay.platforms.reader.PlatformError: a malformed platform file.
    """
    folder = Path(path)
    if folder.is_file() and folder.name.endswith("jobs.csv"):
        folder = folder.parent
    if not folder.exists():
        raise RunDirError(f"{folder}: no such run directory")
    if not folder.is_dir():
        raise RunDirError(f"{folder}: not a directory (expected a run directory or a Batsim output folder)")
    jobs_file = _find_jobs_file(folder)
    jobs = read_out_jobs(jobs_file)
    if len(jobs) == 0:
        raise OutJobsError(f"{jobs_file}: no job in the file")
    manifest_path = folder / MANIFEST_NAME
    manifest = _read_manifest(manifest_path) if manifest_path.is_file() else {}
    job_table_path = folder / JOB_TABLE_NAME
    job_table = read_job_table(job_table_path, jobs) if job_table_path.is_file() else None
    value, source, notes, platform = _resolve_nb_resources(folder, manifest, nb_resources, may_read)
    if job_table is None:
        notes.append(f"no {JOB_TABLE_NAME}: no per-user metrics or lateness for this run")
    ran = jobs["starting_time"].notna().to_numpy()
    if value is not None and ran.any():
        # a rejected job may be wider than the platform (that is often why it was rejected)
        widths = np.where(ran, jobs["requested_number_of_resources"].to_numpy(), 0)
        widest = int(widths.max())
        if widest > value:
            row = int(widths.argmax())
            raise RunDirError(f"{jobs_file}, line {row + 2}, column 'requested_number_of_resources': job "
                              f"{jobs[FULL_ID].iloc[row]} requests {widest} resources but the platform has {value} "
                              f"({source}): analyse the run with the platform it ran on (--nb-resources N)")
        check_allocations_within(jobs, value, source=str(jobs_file), platform=source)
    shared = _shares_hosts(folder, manifest, jobs, notes)
    return RunData(name=name or folder.resolve().name, path=folder, jobs=jobs, job_table=job_table,
                   nb_resources=value, nb_resources_source=source, spec=dict(manifest.get("spec", {})),
                   manifest=manifest, notes=notes, shared_hosts=shared,
                   platform=platform if platform is not None else _platform_of(folder, manifest, notes,
                                                                                 may_read))


def unique_run_names(paths: Sequence[str | Path]) -> list[str]:
    """Short distinct labels for run folders: the folder name, with parent folders added until all differ.

    Raises:
        RunDirError: the same folder is given twice.
    """
    resolved = [Path(p).resolve() for p in paths]
    seen: dict[Path, int] = {}
    for index, folder in enumerate(resolved):
        if folder in seen:
            raise RunDirError(f"{paths[index]}: the same run is given twice (also as {paths[seen[folder]]})")
        seen[folder] = index
    depths = [1] * len(resolved)
    while True:
        names = ["/".join(folder.parts[-depth:]) for folder, depth in zip(resolved, depths)]
        clashing = [i for i, n in enumerate(names) if names.count(n) > 1 and depths[i] < len(resolved[i].parts)]
        if not clashing:
            return names
        for i in clashing:
            depths[i] += 1
