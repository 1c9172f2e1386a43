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
directory and renamed at the end: a failed run leaves nothing half-written (Batsim's standard error excepted,
kept as ``NAME.failed-batsim.log`` when a real Batsim failed). ``force`` replaces only a directory holding a
previous run, atomically; leftovers of killed runs are cleaned by the next run in the same folder (protocol:
:mod:`batreplay.atomic`). ``RunSpec.timeout`` bounds a run in wall-clock time (:mod:`batreplay.deadline`).
"""

from __future__ import annotations

import json
import math
import os
import platform as host_platform
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from batreplay.analysis.metrics import summarize
from batreplay.formats.out_jobs import read_out_jobs
from batreplay.atomic import commit_directory, make_staging_directory, recover_interrupted, write_json_atomically
from batreplay.engine.batsim_launcher import DEFAULT_TIMEOUT as DEFAULT_BATSIM_TIMEOUT
from batreplay.deadline import Deadline, WallClockTimeout, wall_clock_limit
from batreplay.engine.inprocess import run_scheduler
from batreplay.formats.out_jobs import write_out_jobs
from batreplay.formats.out_schedule import schedule_summary, write_out_schedule
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.platforms.reader import read_platform
from batreplay.platforms.shipped import REFERENCE_NODE_SPEED, SHIPPED_PLATFORMS
from batreplay.workloads.pwa import file_sha256
from batreplay.workloads.loading import WorkloadError, WorkloadOptions
from batreplay.workloads.loading import load_workload as load_any_workload
from batreplay.schedulers.failures import DecisionProcessError, decision_process_guard
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
        out_dir: the run directory to create. It must not exist, or, with ``force``, hold a previous run
            (a ``run.json`` written by :func:`run`): anything else is never replaced.
        profile: SWF conversion: ``delay`` (run time in seconds, independent of node speed) or
            ``parallel_homogeneous`` (``run time x recorded_speed`` flop per node, so faster nodes shorten
            jobs by the speed ratio).
        recorded_speed: node speed of the recorded machine, flop/s (only for ``parallel_homogeneous``).
        max_jobs: simulate only the first jobs of the log (file order), an integer >= 1; None for all.
        walltime_factor: walltime = max(requested time, factor x run time) (see
            :func:`~batreplay.workloads.batsim_workload.swf_to_workload`); None keeps the requested time.
        scheduler_options: options passed to the scheduler (pybatsim's ``-o`` JSON).
        replay: ``rigid`` (jobs submitted at their recorded times) or ``feedback`` (users replay their
            session graphs, Madon et al. 2024; needs an SWF log).
        sessions: for feedback: a ``method:threshold`` pair (``arrival:60``; also ``a60``, ``l60``, ``m60``)
            or a directory of session graphs written by ``batreplay sessions``.
        engine: ``embedded`` (default, in-process) or ``batsim`` (a real Batsim 4.2 over ZeroMQ).
        batsim: path of the ``batsim`` executable (default: found on PATH).
        batsim_timeout: seconds Batsim may stay silent (while a message is awaited, including its start-up, and
            after the end before it exits) before the run is stopped (``--batsim-timeout``; default 600 s).
        force: replace an existing run directory (only one that holds a previous run; the replacement is atomic,
            see :mod:`batreplay.atomic`).
        timeout: wall-clock limit of the whole run, seconds (``--timeout``; default None: no limit); when it
            expires the run stops with a :class:`RunError`, nothing written, no process left (see
            :mod:`batreplay.deadline`).

    Raises:
        RunError: ``max_jobs`` not an integer >= 1, or a timeout that is not a number of seconds > 0 (also
            checked again by :func:`run`).
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
    batsim_timeout: float = DEFAULT_BATSIM_TIMEOUT
    force: bool = False
    timeout: float | None = None

    def __post_init__(self) -> None:
        check_spec_values(self)


def check_spec_values(spec: RunSpec) -> None:
    """Check the numbers of ``spec`` that no input file can correct: ``max_jobs`` (None or an integer >= 1),
    ``timeout`` (None or seconds > 0) and ``batsim_timeout`` (seconds > 0).

    Raises:
        RunError: the one-line message names the field and its command-line option.
    """
    max_jobs = spec.max_jobs
    if max_jobs is not None and (isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or max_jobs < 1):
        raise RunError(f"max_jobs (--max-jobs) must be an integer >= 1 (or None for all jobs), got {max_jobs!r}")
    for value, option in ((spec.timeout, "--timeout"), (spec.batsim_timeout, "--batsim-timeout")):
        if value is None and option == "--timeout":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
            raise RunError(f"{option} must be a number of seconds > 0, got {value!r}")


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


def load_workload(spec: RunSpec, nb_res: int | None = None) -> tuple[dict, pd.DataFrame | None, list[str]]:
    """The Batsim workload document of ``spec``, its per-job SWF table (None for JSON) and notes (see
    :func:`batreplay.workloads.loading.load_workload`); a JSON workload's profiles are checked against what the
    embedded engine runs, naming the file.

    Raises:
        RunError: a missing or unknown file, or a profile the embedded engine cannot run.
    """
    options = WorkloadOptions(spec.profile, spec.recorded_speed, spec.max_jobs, spec.walltime_factor)
    try:
        loaded = load_any_workload(spec.workload, options, nb_res)
    except WorkloadError as err:
        raise RunError(str(err)) from None
    if loaded.job_table is None and spec.engine == "embedded":  # say now what the engine cannot run
        from batreplay.engine.profiles import validate_profile

        for profile_name, profile in loaded.document["profiles"].items():
            try:
                validate_profile(profile_name, profile)
            except ValueError as err:
                raise RunError(f"{spec.workload}: {err}") from None
    return loaded.document, loaded.job_table, loaded.notes


def session_graphs_for(job_table: pd.DataFrame, sessions: str):
    """Session graphs of the jobs of ``job_table`` (a converted workload's per-job table).

    ``sessions`` is a ``method:threshold`` pair (``arrival:60``), a short label (``a60``, ``l0``, ``m60``)
    or a directory written by ``batreplay sessions``.

    Raises:
        RunError: an empty or unreadable specification, a directory without ``index.json``, or session graphs
            that cannot be read (missing or malformed file: the message names it).
    """
    from batreplay.replay.session_graph import SessionGraphFormatError, build_session_graphs, load_session_graphs
    from batreplay.replay.sessions import parse_session_spec, partition_sessions

    expected = ("expected method:minutes (arrival:60, last:60, max:60), a label such as a60/l60/m60, "
                "or a directory written by 'batreplay sessions'")
    if not sessions.strip():
        raise RunError(f"--sessions is empty: {expected}")
    folder = Path(sessions)
    if folder.is_dir() or (folder.is_file() and folder.name == "index.json"):
        if folder.is_dir() and not (folder / "index.json").is_file():
            raise RunError(f"--sessions {sessions}: the directory has no index.json; expected a directory written "
                           "by 'batreplay sessions' (index.json and one JSON graph per user)")
        try:
            return load_session_graphs(folder)
        except (OSError, SessionGraphFormatError) as err:
            reason = str(err)
            if isinstance(err, OSError) and err.strerror:  # no "[Errno 2]": the reason, and the file if not named
                named = err.filename is None or Path(err.filename).name in err.strerror
                reason = err.strerror if named else f"{err.strerror}: {err.filename}"
            raise RunError(f"--sessions {sessions}: {reason}") from err
    try:
        if ":" in sessions:
            method, threshold = sessions.split(":", 1)
            method, threshold = method.strip(), float(threshold)
        else:
            method, threshold = parse_session_spec(sessions)
    except ValueError as err:
        raise RunError(f"--sessions {sessions!r}: {expected} ({err})") from None
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
                       progress, deadline: Deadline | None = None) -> int:
    """Run on the embedded engine; write out_jobs.csv and out_schedule.csv into ``staging``."""
    started = time.perf_counter()
    engine = BatsimEngine(hosts, workloads, {name: "workload.json" for name in workloads}, options)
    try:
        connection = run_scheduler(engine, scheduler, on_request=progress, deadline=deadline)
    except DecisionProcessError:  # the scheduler failed or exited: its one-line message names file and line
        raise
    except Exception as err:  # the engine or the scheduler failed: say why, write nothing
        raise RunError(f"simulation failed at t = {engine.now:.6f} s: {type(err).__name__}: {err}") from err
    jobs = write_out_jobs(engine.records, staging / "out_jobs.csv")
    write_out_schedule(
        schedule_summary(jobs, nb_hosts, connection.scheduler_seconds, time.perf_counter() - started),
        staging / "out_schedule.csv",
    )
    return connection.messages


def _simulate_batsim(spec: RunSpec, platform_path: Path, static: dict, options: EngineOptions, scheduler,
                     staging: Path, progress, deadline: Deadline | None = None) -> int:
    """Run next to a real Batsim (``batsim`` on PATH or ``spec.batsim``); its outputs land in ``staging``.
    If it fails, Batsim's standard error is kept next to the run directory (:func:`_keep_batsim_log`)."""
    from batreplay.engine.batsim_launcher import run_with_batsim

    batsim_input = staging / "batsim-workload.json"
    batsim_input.write_text(json.dumps(static))
    try:
        with decision_process_guard():  # the scheduler's own exceptions become one line naming its file and line
            result = run_with_batsim(platform_path, batsim_input, scheduler, staging, batsim_path=spec.batsim,
                                     dynamic_jobs=options.dynamic_jobs,
                                     acknowledge_dynamic_jobs=options.acknowledge_dynamic_jobs,
                                     timeout=spec.batsim_timeout, on_request=progress,
                                     check_version=False,  # run() checked it before reading the inputs
                                     deadline=deadline)
    except BaseException as error:
        _keep_batsim_log(staging, Path(spec.out_dir), error)
        raise
    batsim_input.unlink()
    return result.messages


def failed_batsim_log(out_dir: Path) -> Path:
    """Where Batsim's standard error is kept when a run of ``out_dir`` with a real Batsim fails:
    ``NAME.failed-batsim.log`` next to the run directory (the staging directory is removed)."""
    out_dir = Path(os.path.abspath(out_dir))
    return out_dir.with_name(f"{out_dir.name}.failed-batsim.log")


def _keep_batsim_log(staging: Path, out_dir: Path, error: BaseException) -> None:
    """Move Batsim's standard error out of ``staging`` to :func:`failed_batsim_log` and make ``error``'s
    message name the new place (the launcher's messages say ``see .../batsim.stderr.log``)."""
    from batreplay.engine.batsim_launcher import STDERR_LOG

    log = staging / STDERR_LOG
    if not log.is_file():
        return
    kept = failed_batsim_log(out_dir)
    try:
        os.replace(log, kept)
    except OSError:
        return
    for old in {str(log), str(log.resolve(strict=False)), str(staging.resolve() / STDERR_LOG)}:
        if error.args and isinstance(error.args[0], str) and old in error.args[0]:
            error.args = (error.args[0].replace(old, str(kept)), *error.args[1:])


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
        DecisionProcessError: the scheduler raised or exited during the simulation (one line naming its file
            and line); SchedulerLoadError: its file could not be imported (see :mod:`batreplay.schedulers.failures`).

    The run directory is written in a hidden staging sibling and moved into place at the end (replacing a
    previous run atomically with ``force``); leftovers of killed runs in the same folder are cleaned first
    (see :mod:`batreplay.atomic`; what was done is among the returned notes). With ``spec.timeout``, the whole
    run is bounded in wall-clock time (see :mod:`batreplay.deadline`).
    """
    started = time.perf_counter()
    check_spec_values(spec)
    out_dir = Path(spec.out_dir)
    target = Path(os.path.abspath(out_dir))  # `--out .` gets a name and a parent folder
    if not target.name:
        raise RunError(f"--out {out_dir}: give a directory to create, not the root of the file system")
    recovered = recover_interrupted(target.parent)  # first: it may put back a run whose replacement was killed
    check_run_directory(target, spec.force)
    deadline = None if spec.timeout is None else Deadline(spec.timeout)
    staged: list[Path] = []
    try:
        with wall_clock_limit(deadline):
            metrics, messages, notes = _run_in_staging(spec, target, staged, deadline, on_progress, started)
        check_run_directory(target, spec.force)  # again: the folder may have changed during the simulation
        commit_directory(staged[0], target, replace=spec.force)
    except BaseException as error:
        for staging in staged:
            shutil.rmtree(staging, ignore_errors=True)
        timeout = None if isinstance(error, (KeyboardInterrupt, SystemExit)) else _wall_clock_timeout(error)
        if timeout is not None:
            raise RunError(str(timeout)) from error
        raise
    failed_batsim_log(target).unlink(missing_ok=True)  # a failure of an earlier run of this directory
    return RunResult(out_dir, metrics, time.perf_counter() - started, messages, recovered + notes)


def is_run_directory(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a run written by :func:`run`: a ``run.json`` that is a JSON object with
    ``spec``. Only such a directory may be replaced (``force``)."""
    try:
        document = json.loads((Path(path) / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and "spec" in document


def check_run_directory(path: Path, force: bool) -> None:
    """Check that the run directory ``path`` may be written: it does not exist, or it holds a previous run
    and ``force`` is set.

    Raises:
        RunError: it exists without ``force``; it is a symbolic link, not a directory, or a directory that
            does not hold a run (``--force`` never replaces those).
    """
    if not os.path.lexists(path):
        return
    if path.is_symlink():
        raise RunError(f"run directory {path} is a symbolic link: give the directory itself or a new one "
                       "(nothing was changed)")
    if not path.is_dir():
        raise RunError(f"run directory {path} exists and is not a directory (nothing was changed)")
    if not is_run_directory(path):
        raise RunError(f"run directory {path} exists and is not a batreplay run (no run.json of a previous run in "
                       "it): --force replaces only a previous run; choose another --out (nothing was changed)")
    if not force:
        raise RunError(f"run directory {path} already exists (use --force to replace it)")


def _wall_clock_timeout(error: BaseException) -> WallClockTimeout | None:
    """The :class:`WallClockTimeout` behind ``error`` (itself, or a cause that wrappers kept), or None."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, WallClockTimeout):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _run_in_staging(spec: RunSpec, target: Path, staged: list[Path], deadline: Deadline | None,
                    on_progress: Callable[[float, int, int], None] | None,
                    started: float) -> tuple[dict[str, Any], int, list[str]]:
    """The work of :func:`run`: read the inputs, simulate, write every file of the run directory in a staging
    directory for ``target`` (appended to ``staged`` as soon as it exists). Returns metrics, the number of
    Batsim messages and the input notes."""
    if spec.engine not in ("embedded", "batsim"):
        raise RunError(f"unknown engine {spec.engine!r} (embedded or batsim)")
    if spec.engine == "batsim":
        from batreplay.engine.batsim_launcher import check_batsim_version, find_batsim

        check_batsim_version(find_batsim(spec.batsim))  # fail fast, before reading the inputs
    platform_path = resolve_platform(spec.platform)
    platform = read_platform(platform_path)
    document, job_table, notes = load_workload(spec, nb_res=platform.nb_compute)
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

    staging = make_staging_directory(target)
    staged.append(staging)
    try:
        if spec.engine == "embedded":
            messages = _simulate_embedded(hosts, {"w0": static}, options, scheduler, staging,
                                          platform.nb_compute, progress, deadline)
        else:
            messages = _simulate_batsim(spec, platform_path, static, options, scheduler, staging, progress,
                                        deadline)
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
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return metrics, messages, notes
