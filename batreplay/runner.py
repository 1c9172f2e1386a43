"""One simulation run: workload + platform + decision process -> a run directory of Batsim outputs.

The data path, end to end::

    SWF log (or Batsim JSON) --replay.swf/replay.workload--> Batsim workload
    platform XML --platforms.reader--> compute hosts
    scheduler name or file --schedulers.registry--> pybatsim decision process
    engine.simulator (embedded Batsim) <--engine.inprocess--> decision process
    --> out_jobs.csv, out_schedule.csv --analysis.metrics--> metrics.json

A run directory holds: ``out_jobs.csv`` and ``out_schedule.csv`` (Batsim's formats), ``workload.json`` (the
Batsim workload simulated, so that a real Batsim can replay it), ``jobs.csv`` (per-job facts from the
SWF log: user id, recorded submission and wait times), ``metrics.json`` (the summary printed at the end) and
``run.json`` (parameters, input checksums, versions, wall time). It is written in a temporary sibling
directory and renamed at the end: a failed run leaves nothing half-written.
"""

from __future__ import annotations

import json
import os
import platform as host_platform
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from batreplay.analysis.metrics import summarize
from batreplay.analysis.out_jobs import read_out_jobs
from batreplay.atomic import write_json_atomically
from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.outputs import schedule_summary, write_out_jobs, write_out_schedule
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.platforms.reader import read_platform
from batreplay.platforms.shipped import REFERENCE_NODE_SPEED, SHIPPED_PLATFORMS
from batreplay.replay.pwa import file_sha256
from batreplay.replay.swf import read_swf
from batreplay.replay.workload import read_workload_json, swf_to_workload
from batreplay.schedulers.registry import load_scheduler

ProfileMode = Literal["delay", "parallel_homogeneous"]
ReplayMode = Literal["rigid", "feedback"]


class RunError(RuntimeError):
    """A run that cannot start or did not finish; the message says why."""


@dataclass
class RunSpec:
    """What to simulate.

    Attributes:
        workload: an SWF log (``.swf`` or ``.swf.gz``) or a Batsim workload (``.json``).
        platform: a SimGrid platform file, or the name of a shipped platform (``kth-sp2``, ``sdsc-sp2``).
        scheduler: a registered scheduler name (``fcfs``, ``easy``, ...) or the path of a pybatsim
            scheduler file.
        out_dir: the run directory to create.
        profile: SWF conversion: ``delay`` (run time in seconds, independent of node speed) or
            ``parallel_homogeneous`` (``run time x recorded_speed`` flop per node, so faster nodes shorten
            jobs by the speed ratio).
        recorded_speed: node speed of the recorded machine, flop/s (only for ``parallel_homogeneous``).
        max_jobs: simulate only the first jobs of the log (file order); None for all.
        walltime_factor: walltime = max(requested time, factor x run time) (see
            :func:`~batreplay.replay.workload.swf_to_workload`); None keeps the requested time.
        scheduler_options: options passed to the scheduler (pybatsim's ``-o`` JSON).
        replay: ``rigid`` (jobs submitted at their recorded times) or ``feedback`` (users replay their
            session graphs, Madon et al. 2024; needs an SWF log).
        sessions: for feedback: a ``method:threshold`` pair (``arrival:60``; also ``a60``, ``l60``, ``m60``)
            or a directory of session graphs written by ``batreplay sessions``.
        engine: ``embedded`` (default, in-process) or ``batsim`` (a real Batsim 4.2 over ZeroMQ).
        batsim: path of the ``batsim`` executable (default: found on PATH).
        batsim_timeout: seconds Batsim may stay silent before the run is stopped.
        force: replace an existing run directory.
    """

    workload: Path
    platform: Path | str
    scheduler: str
    out_dir: Path
    profile: ProfileMode = "parallel_homogeneous"
    recorded_speed: float = REFERENCE_NODE_SPEED
    max_jobs: int | None = None
    walltime_factor: float | None = None
    scheduler_options: dict[str, Any] = field(default_factory=dict)
    replay: ReplayMode = "rigid"
    sessions: str = "arrival:60"
    engine: Literal["embedded", "batsim"] = "embedded"
    batsim: str | None = None
    batsim_timeout: float = 600.0
    force: bool = False


@dataclass
class RunResult:
    """What a finished run produced: its directory, metrics and how long it took (wall seconds)."""

    out_dir: Path
    metrics: dict[str, Any]
    wall_seconds: float
    messages: int
    input_notes: list[str]


def resolve_platform(platform: Path | str) -> Path:
    """A platform path, accepting the names of shipped platforms.

    Raises:
        RunError: neither an existing file nor a shipped platform name.
    """
    if str(platform) in SHIPPED_PLATFORMS:
        return SHIPPED_PLATFORMS[str(platform)]
    path = Path(platform)
    if not path.is_file():
        raise RunError(f"platform {platform}: no such file (shipped platforms: {', '.join(SHIPPED_PLATFORMS)})")
    return path


def load_workload(spec: RunSpec) -> tuple[dict, pd.DataFrame | None, list[str]]:
    """The Batsim workload document to simulate, the per-job SWF table (None for JSON input) and notes.

    Notes are human-readable lines about what the SWF reading and conversion counted (anomalies, dropped
    jobs): nothing is dropped without a line saying so.

    Raises:
        RunError: missing file or unknown extension; SwfFormatError / WorkloadFormatError name file, line
            and field for malformed input.
    """
    path = Path(spec.workload)
    if not path.is_file():
        raise RunError(f"workload {path}: no such file")
    name = path.name.lower()
    if name.endswith(".json"):
        document = read_workload_json(path)
        if spec.max_jobs is not None:
            document = dict(document, jobs=document["jobs"][: spec.max_jobs])
        return document, None, []
    if not (name.endswith(".swf") or name.endswith(".swf.gz")):
        raise RunError(f"workload {path}: expected a .swf, .swf.gz or .json file")
    log = read_swf(path)
    converted = swf_to_workload(
        log,
        profile=spec.profile,
        node_speed=spec.recorded_speed if spec.profile == "parallel_homogeneous" else None,
        max_jobs=spec.max_jobs,
        walltime_factor=spec.walltime_factor,
    )
    notes = [log.anomalies.summary(), converted.report.summary()]
    return converted.to_json_dict(), converted.job_table, notes


def session_graphs_for(job_table: pd.DataFrame, sessions: str):
    """Session graphs of the jobs of ``job_table`` (a converted workload's per-job table).

    ``sessions`` is a ``method:threshold`` pair (``arrival:60``), a short label (``a60``, ``l0``, ``m60``)
    or a directory written by ``batreplay sessions``.

    Raises:
        RunError: an unreadable specification.
    """
    from batreplay.replay.session_graph import build_session_graphs, load_session_graphs
    from batreplay.replay.sessions import parse_session_spec, partition_sessions

    if Path(sessions).is_dir():
        return load_session_graphs(sessions)
    try:
        if ":" in sessions:
            method, threshold = sessions.split(":", 1)
            method, threshold = method.strip(), float(threshold)
        else:
            method, threshold = parse_session_spec(sessions)
    except ValueError as err:
        raise RunError(f"--sessions {sessions!r}: expected method:minutes (arrival:60), a60/l60/m60 "
                       f"or a directory of session graphs ({err})") from None
    recorded = pd.DataFrame({
        "job_id": job_table["job_id"].astype("int64"),
        "user_id": job_table["user_id"],
        "submit_time": job_table["swf_submit_time"],
        "wait_time": job_table["swf_wait_time"],
        "run_time": job_table["run_time"],
    })
    return build_session_graphs(partition_sessions(recorded, method, threshold))


def feedback_users(document: dict, job_table: pd.DataFrame, sessions: str):
    """The users of a converted SWF workload and what each of their jobs requests.

    Returns ``(users, requests, note)``: a :class:`~batreplay.replay.feedback.ThinkTimeUsers`, the per-job
    requests the broker registers (``{job number: {"res", "walltime", "profile"}}``) and a one-line summary.

    Raises:
        RunError: session graphs that do not cover the workload's jobs.
    """
    from batreplay.replay.feedback import ThinkTimeUsers

    graphs = session_graphs_for(job_table, sessions)
    origin = float((job_table["swf_submit_time"] - job_table["subtime"]).iloc[0]) if len(job_table) else 0.0
    job_ids = job_table["job_id"].astype("int64").tolist()
    users = ThinkTimeUsers(graphs, origin=origin, job_ids=job_ids)
    profiles = document["profiles"]
    requests = {int(job["id"]): {"res": job["res"], "walltime": job["walltime"], "profile": profiles[job["profile"]]}
                for job in document["jobs"]}
    missing = set(requests) - set(users.session_of_job)
    if missing:
        raise RunError(f"session graphs do not cover {len(missing)} jobs of the workload (e.g. {sorted(missing)[:5]}); "
                       "were they computed from another log?")
    note = (f"feedback replay: {len(users.sessions)} sessions ({graphs.label}) for {users.nb_jobs} jobs of "
            f"{len(graphs)} users; {len(users.ignored_jobs)} jobs of the graphs not in the workload")
    return users, requests, note


def feedback_decision_process(document: dict, job_table: pd.DataFrame, sessions: str, inner):
    """The feedback broker around ``inner`` for a converted SWF workload, and notes on what it contains."""
    from batreplay.replay.broker import FeedbackBroker

    users, requests, note = feedback_users(document, job_table, sessions)
    return FeedbackBroker(inner, users, requests), [note]


def _versions() -> dict[str, str]:
    versions = {"python": host_platform.python_version()}
    for package in ("batreplay", "pybatsim", "pyzmq", "pandas", "numpy", "procset"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def _simulate_embedded(hosts, workloads: dict, options: EngineOptions, scheduler, staging: Path, nb_hosts: int,
                       progress) -> int:
    """Run on the embedded engine; write out_jobs.csv and out_schedule.csv into ``staging``."""
    started = time.perf_counter()
    engine = BatsimEngine(hosts, workloads, {name: "workload.json" for name in workloads}, options)
    try:
        connection = run_scheduler(engine, scheduler, on_request=progress)
    except Exception as err:  # the engine or the scheduler failed: say why, write nothing
        raise RunError(f"simulation failed at t = {engine.now:.6f} s: {type(err).__name__}: {err}") from err
    jobs = write_out_jobs(engine.records, staging / "out_jobs.csv")
    write_out_schedule(
        schedule_summary(jobs, nb_hosts, connection.scheduler_seconds, time.perf_counter() - started),
        staging / "out_schedule.csv",
    )
    return connection.messages


def _simulate_batsim(spec: RunSpec, platform_path: Path, static: dict, options: EngineOptions, scheduler,
                     staging: Path, progress) -> int:
    """Run next to a real Batsim (``batsim`` on PATH or ``spec.batsim``); its outputs land in ``staging``."""
    from batreplay.batsim_launcher import run_with_batsim

    batsim_input = staging / "batsim-workload.json"
    batsim_input.write_text(json.dumps(static))
    result = run_with_batsim(platform_path, batsim_input, scheduler, staging, batsim_path=spec.batsim,
                             dynamic_jobs=options.dynamic_jobs,
                             acknowledge_dynamic_jobs=options.acknowledge_dynamic_jobs,
                             timeout=spec.batsim_timeout, on_request=progress,
                             check_version=False)  # run() checked it before reading the inputs
    batsim_input.unlink()
    return result.messages


def run(spec: RunSpec, on_progress: Callable[[float, int, int], None] | None = None) -> RunResult:
    """Simulate ``spec`` and write the run directory.

    Args:
        spec: what to simulate; ``spec.engine`` chooses the embedded engine or a real Batsim.
        on_progress: called as ``on_progress(simulated_time, jobs_done, jobs_total)`` after each Batsim
            message, for progress bars.

    Raises:
        RunError: bad inputs, an existing run directory without ``force``, or a failed simulation (the
            engine's reason is kept); nothing is left in ``out_dir`` then. With ``engine="batsim"``, the
            launcher's errors (Batsim missing, of another version, crashed, silent) come through as they are.
    """
    started = time.perf_counter()
    out_dir = Path(spec.out_dir)
    if out_dir.exists() and not spec.force:
        raise RunError(f"run directory {out_dir} already exists (use --force to replace it)")
    if spec.engine not in ("embedded", "batsim"):
        raise RunError(f"unknown engine {spec.engine!r} (embedded or batsim)")
    if spec.engine == "batsim":
        from batreplay.batsim_launcher import check_batsim_version, find_batsim

        check_batsim_version(find_batsim(spec.batsim))  # fail fast, before reading the inputs
    platform_path = resolve_platform(spec.platform)
    platform = read_platform(platform_path)
    document, job_table, notes = load_workload(spec)
    scheduler = load_scheduler(spec.scheduler, spec.scheduler_options)
    if job_table is not None:
        job_table = job_table.assign(original_submission_time=job_table["subtime"])

    hosts = [(h.name, h.speed) for h in platform.hosts]
    total = len(document["jobs"])
    if spec.replay == "feedback":
        if job_table is None:
            raise RunError("feedback replay needs an SWF log (user ids and recorded times), not a JSON workload")
        scheduler, notes_feedback = feedback_decision_process(document, job_table, spec.sessions, scheduler)
        notes.extend(notes_feedback)
        static = {"nb_res": document["nb_res"], "jobs": [], "profiles": {}}
        options = EngineOptions(dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    elif spec.replay == "rigid":
        static = document
        options = EngineOptions()
    else:
        raise RunError(f"unknown replay mode {spec.replay!r} (rigid or feedback)")
    done = 0

    def progress(request: dict) -> None:
        nonlocal done
        done += sum(1 for e in request["events"] if e["type"] == "JOB_COMPLETED")
        if on_progress is not None:
            on_progress(request["now"], done, total)

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}.", suffix=".tmp"))
    try:
        if spec.engine == "embedded":
            messages = _simulate_embedded(hosts, {"w0": static}, options, scheduler, staging,
                                          platform.nb_compute, progress)
        else:
            messages = _simulate_batsim(spec, platform_path, static, options, scheduler, staging, progress)
        jobs = read_out_jobs(staging / "out_jobs.csv")
        (staging / "workload.json").write_text(json.dumps(document))
        if job_table is not None:
            job_table.to_csv(staging / "jobs.csv", index=False)
        metrics = summarize(jobs, nb_resources=platform.nb_compute)
        write_json_atomically(staging / "metrics.json", metrics)
        manifest = {
            "spec": asdict(spec),
            "engine": spec.engine,
            "platform_file": str(platform_path),
            "inputs_sha256": {"workload": file_sha256(spec.workload), "platform": file_sha256(platform_path)},
            "versions": _versions(),
            "wall_seconds": time.perf_counter() - started,
            "messages": messages,
            "input_notes": notes,
        }
        write_json_atomically(staging / "run.json", manifest)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return RunResult(out_dir, metrics, time.perf_counter() - started, messages, notes)
