"""One simulation run: workload + platform + decision process -> a run directory of Batsim outputs.

The data path, end to end::

    SWF log (or Batsim JSON) --replay.swf/replay.workload--> Batsim workload
    platform XML --platforms.reader--> compute hosts
    scheduler name or file --schedulers.registry--> pybatsim decision process
    engine.simulator (embedded Batsim) <--engine.inprocess--> decision process
    --> out_jobs.csv, out_schedule.csv --analysis.metrics--> metrics.json

A run directory holds: ``out_jobs.csv`` and ``out_schedule.csv`` (Batsim's formats), on the embedded engine
when jobs read or write on storage hosts ``node_io_rates.csv`` (:mod:`batreplay.formats.node_io`),
``workload.json`` (the Batsim workload simulated, so that a real Batsim can replay it), ``jobs.csv`` (per-job
facts from the SWF log: user id, recorded submission and wait times; the recorded submission on the simulation
clock is ``recorded_submission_time``, the reference of lateness), ``metrics.json`` (the summary printed at the end) and
``run.json`` (parameters, input checksums, versions, wall time). It is written in a temporary sibling
directory and renamed at the end: a failed run leaves nothing half-written (Batsim's standard error excepted,
kept as ``NAME.failed-batsim.log`` when a real Batsim failed). ``force`` replaces only a directory holding a
previous run, atomically; leftovers of killed runs are cleaned by the next run in the same folder (protocol:
:mod:`batreplay.atomic`). ``RunSpec.timeout`` bounds a run in wall-clock time (:mod:`batreplay.deadline`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform as host_platform
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from batreplay.atomic import commit_directory, make_staging_directory, recover_interrupted, write_json_atomically
from batreplay.deadline import Deadline, WallClockTimeout, wall_clock_limit
from batreplay.engine.profiles import check_simulated_times
from batreplay.engine.simulate import SimulationError, simulate
from batreplay.formats.table_csv import write_csv_table
from batreplay.platforms.reader import read_platform
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.replay.protocol import ReplayError
from batreplay.replay.registry import replay_decision_process, user_model
from batreplay.run.spec import RunSpec
from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.registry import load_scheduler
from batreplay.workloads.loading import WorkloadError
from batreplay.workloads.loading import load_workload as load_any_workload
from batreplay.workloads.pwa import file_sha256
from batreplay.workloads.resolve import resolve_workload

if TYPE_CHECKING:  # pandas is imported by the metrics step (batreplay.analysis), after the simulation
    import pandas as pd

    from batreplay.engine.simulate import Simulation
    from batreplay.platforms.model import Platform

__all__ = ["RunError", "RunResult", "RunSpec", "check_master_route", "check_run_directory", "check_times",
           "failed_batsim_log", "is_run_directory", "load_workload", "resolve_platform", "run"]


#: Seconds of wall-clock time between two calls of a run's progress callback (a bar cannot show more).
PROGRESS_INTERVAL = 0.1


class RunError(RuntimeError):
    """A run that cannot start or did not finish; the message says why."""


@dataclass
class RunResult:
    """What a finished run produced: its directory, metrics and how long it took (wall seconds), and the SHA-256
    of its inputs (``{"workload": ..., "platform": ...}``, as in ``run.json``)."""

    out_dir: Path
    metrics: dict[str, Any]
    wall_seconds: float
    messages: int
    input_notes: list[str]
    inputs_sha256: dict[str, str]


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
    try:
        loaded = load_any_workload(spec.workload, spec.conversion, nb_res)
    except WorkloadError as err:
        raise RunError(str(err)) from None
    if loaded.job_table is None and spec.engine.name == "embedded":  # say now what the engine cannot run
        from batreplay.engine.profiles import validate_profiles

        try:
            validate_profiles(loaded.document["profiles"])
        except ValueError as err:
            raise RunError(f"{spec.workload}: {err}") from None
    return loaded.document, loaded.job_table, loaded.notes


def _workload_inputs(spec: RunSpec, nb_res: int) -> tuple[Any, dict, pd.DataFrame | None, list[str]]:
    """What a run's users replay: ``(site_model, document, job_table, notes)``, the site model None but for a user
    model whose users draw jobs from one as the run goes (``closed``; :func:`_load_site_model`, which also draws an
    open replay's workload), the rest as :func:`load_workload` gives them."""
    if user_model(spec.replay.model).source == "site-model":
        inputs = _load_site_model(spec, nb_res)
    else:
        inputs = None, *_load_log(spec, nb_res)
    if not spec.replay.dynamic:  # the submissions are known: a warm-up that leaves no job is told now
        _check_warm_up(spec, inputs[1])
    return inputs


def _load_log(spec: RunSpec, nb_res: int) -> tuple[dict, pd.DataFrame | None, list[str]]:
    """:func:`load_workload`, telling a site model given to a log's replay for what it is.

    Raises:
        RunError: as :func:`load_workload`, or a site model (the replays that take it named).
    """
    try:
        return load_workload(spec, nb_res=nb_res)
    except (RunError, ValueError):  # (a JSON document that is no Batsim workload: WorkloadFormatError)
        from batreplay.sitemodels.model_file import is_site_model_file

        if str(spec.workload).lower().endswith(".json") and is_site_model_file(spec.workload):
            raise RunError(f"{spec.workload} is a site model (batreplay model fit), whose jobs are drawn: replay it "
                           f"with --replay closed or --replay open, not {spec.replay.model}") from None
        raise


def _load_site_model(spec: RunSpec, nb_res: int) -> tuple[Any, dict, pd.DataFrame | None, list[str]]:
    """The site model of a closed or open replay's workload file, the Batsim workload simulated, its job table, and
    notes. A closed replay starts from a workload without jobs (they are registered as they are drawn) and no table;
    an open replay's jobs are drawn into it (:func:`batreplay.sitemodels.generate.open_workload`), with their table.

    Raises:
        RunError: a file that is not a site model (named), a conversion option given with it (it would be ignored:
            the model's jobs are drawn, not converted), or a model an open workload cannot be drawn from.
    """
    from batreplay.sitemodels.model_file import read_model
    from batreplay.workloads.loading import WorkloadOptions

    replay = spec.replay
    if spec.conversion != WorkloadOptions():
        raise RunError(f"--replay {replay.model}: the workload {spec.workload} is a site model whose jobs are "
                       "drawn, not converted: leave out the workload conversion options (--profile, --max-jobs...)")
    try:
        model = read_model(spec.workload)
    except ValueError as err:
        raise RunError(f"--replay {replay.model} draws jobs from a site model (batreplay model fit): "
                       f"{err}") from None
    notes = [f"site model {spec.workload}: {len(model.types)} job types fitted on {model.source.get('log', '?')}"]
    if replay.model != "open":
        return model, {"nb_res": nb_res, "jobs": [], "profiles": {}}, None, notes
    from batreplay.sitemodels.generate import open_workload

    try:
        drawn = open_workload(model, jobs=replay.open_jobs, seconds=replay.open_duration, seed=replay.model_seed,
                              nb_res=nb_res)
    except ValueError as err:  # types of several demand rounds; no job drawn in the duration
        raise RunError(f"--replay open, {spec.workload}: {err}") from None
    notes.append(f"open workload drawn with seed {replay.model_seed}: {len(drawn.document['jobs'])} jobs")
    return None, drawn.document, drawn.job_table, notes + drawn.notes


def _check_closed_times(spec: RunSpec, model: Any, slowest_speed: float, slots: int) -> None:
    """Refuse a closed replay that may pass :data:`~batreplay.engine.profiles.MAX_SIMULATED_SECONDS`, where the
    engines part ways. A bound, not the exact end: the model's longest job alone on the slowest host, ``closed_jobs``
    of them one after the other; or ``closed_duration`` then the population's jobs one after the other (``fill``:
    ``slots`` jobs), whichever is smaller. Compute sharing can make jobs slower still: not bounded here."""
    from batreplay.engine.profiles import MAX_SIMULATED_SECONDS

    longest = max(t.cpu_demand.support()[1] for t in model.types) / slowest_speed
    replay = spec.replay
    population = slots if replay.population == "fill" else int(replay.population)
    bounds = [replay.closed_jobs * longest if replay.closed_jobs is not None else float("inf"),
              replay.closed_duration + population * longest if replay.closed_duration is not None else float("inf")]
    if min(bounds) > MAX_SIMULATED_SECONDS:
        raise RunError(f"--replay closed: the model's longest job ({longest:g} s on the slowest host), times the jobs "
                       f"that may run one after the other, passes {MAX_SIMULATED_SECONDS:g} s, where the embedded "
                       "engine and Batsim no longer agree: give fewer --closed-jobs or a shorter --closed-duration")


def _check_warm_up(spec: RunSpec, document: dict) -> None:
    """Refuse, before the simulation, a warm-up after the last submission of a static workload (its metrics would
    have no job); a dynamic replay's submissions are known after it only (then :func:`_metrics` refuses it).

    Raises:
        RunError: the warm-up and the submissions' span, named.
    """
    submissions = [float(job["subtime"]) for job in document["jobs"]]
    warm_up = spec.metrics.warm_up
    if warm_up and submissions and min(submissions) + warm_up > max(submissions):
        raise RunError(f"warm_up (--warm-up) {warm_up:g} s: the last job is submitted "
                       f"{max(submissions) - min(submissions):g} s after the first, so no job would be left to "
                       "measure: give a shorter warm-up")


def _versions() -> dict[str, str]:
    versions = {"python": host_platform.python_version()}
    for package in ("batreplay", "pybatsim", "pyzmq", "pandas", "numpy", "procset"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def failed_batsim_log(out_dir: Path) -> Path:
    """Where Batsim's standard error is kept when a run of ``out_dir`` with a real Batsim fails:
    ``NAME.failed-batsim.log`` next to the run directory (the staging directory is removed)."""
    out_dir = Path(os.path.abspath(out_dir))
    return out_dir.with_name(f"{out_dir.name}.failed-batsim.log")


def run(spec: RunSpec, on_progress: Callable[[float, int, int], None] | None = None,
        on_notes: Callable[[list[str]], None] | None = None) -> RunResult:
    """Simulate ``spec`` and write the run directory.

    Args:
        spec: what to simulate; ``spec.engine`` chooses the embedded engine or a real Batsim. Its workload may be
            a catalogue name of the Parallel Workloads Archive, resolved to the fetched file
            (:func:`batreplay.workloads.resolve.resolve_workload`).
        on_progress: called as ``on_progress(simulated_time, jobs_done, jobs_total)`` for progress bars, after a
            Batsim message, at most once per :data:`PROGRESS_INTERVAL` seconds of wall-clock time, and once when
            the simulation has ended.
        on_notes: called with lines of notes as soon as they are known, before the simulation starts: the
            leftovers of killed runs that were cleaned, then what reading and converting the inputs counted
            (anomalies, dropped jobs) and the replay's summary. The same lines are in the result's ``input_notes``.

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
    try:  # a catalogue name (KTH-SP2-1996-2.1-cln) stands for the fetched log; run.json records the file
        spec = dataclasses.replace(spec, workload=resolve_workload(spec.workload))
    except (FileNotFoundError, ValueError) as err:
        raise RunError(str(err)) from None
    out_dir = Path(spec.out_dir)
    target = Path(os.path.abspath(out_dir))  # `--out .` gets a name and a parent folder
    if not target.name:
        raise RunError(f"--out {out_dir}: give a directory to create, not the root of the file system")
    recovered = recover_interrupted(target.parent)  # first: it may put back a run whose replacement was killed
    if recovered and on_notes is not None:
        on_notes(recovered)
    check_run_directory(target, spec.force)
    deadline = None if spec.timeout is None else Deadline(spec.timeout)
    staged: list[Path] = []
    try:
        with wall_clock_limit(deadline):
            manifest, metrics = _run_in_staging(spec, target, staged, deadline, on_progress, on_notes, started)
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
    return RunResult(out_dir, metrics, time.perf_counter() - started, manifest["messages"],
                     recovered + manifest["input_notes"], manifest["inputs_sha256"])


def check_master_route(spec: RunSpec, platform_path: Path, platform: Platform) -> None:
    """Refuse, on the embedded engine, a platform whose master host reaches itself over SimGrid's own loopback.

    Raises:
        RunError: naming the platform file and the ways out.
    """
    if spec.engine.name == "embedded" and platform.master_on_loopback:
        raise RunError(f"{platform_path}: the master host {platform.master_host!r} is a plain <host> without a <route> "
                       "to itself (or in a zone whose routing is not followed), so SimGrid carries its own messages "
                       "over its own loopback link or on links the embedded engine does not know (events of one instant may be "
                       "grouped otherwise): give it a <route> to itself (as batreplay platform --io-rate does), "
                       "declare it in a <cluster>, or run with --engine batsim")


def check_times(spec: RunSpec, platform_path: Path, platform: Platform, document: dict) -> None:
    """Refuse a platform too slow for the workload: simulated times where the embedded engine and Batsim part ways
    (:func:`~batreplay.engine.profiles.check_simulated_times`).

    Raises:
        RunError: naming the workload and the platform file.
    """
    try:
        io = None if platform.network is None else (platform.network.slowest_bandwidth(), platform.nb_compute)
        check_simulated_times(document, float(min(platform.speeds)), io)
    except ValueError as err:
        raise RunError(f"{spec.workload} on {platform_path}: {err}") from None


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


def _write_workload_files(staging: Path, document: dict, job_table: pd.DataFrame | None) -> None:
    """Write the run directory's ``workload.json`` (the Batsim workload simulated) and, for an SWF log,
    ``jobs.csv`` (its per-job table, ``submission_time`` renamed ``recorded_submission_time``: out_jobs.csv has the
    simulated one) into ``staging``. ``jobs.csv`` is written from the table's columns as pandas' ``to_csv`` wrote it
    (:func:`batreplay.formats.table_csv.write_csv_table`, faster)."""
    (staging / "workload.json").write_text(json.dumps(document))
    if job_table is not None:
        from batreplay.analysis.run_dir import RECORDED_SUBMISSION  # (an SWF log: pandas is already imported)

        columns = {RECORDED_SUBMISSION if name == "submission_time" else name: job_table[name]
                   for name in job_table.columns}
        with open(staging / "jobs.csv", "w", encoding="utf-8", newline="") as stream:
            write_csv_table(stream, columns)


def _metrics(spec: RunSpec, simulation: Simulation, nb_compute: int, staging: Path) -> dict[str, Any]:
    """The run's metrics (:func:`batreplay.analysis.metrics.summarize`, its warm-up left out) of the jobs the
    simulation wrote: the embedded engine's, kept in memory (let go of once in the table), or a real Batsim's
    ``out_jobs.csv``, read. The analysis computes them with pandas, which is imported here, not before: a run of a
    JSON workload simulates without it."""
    from batreplay.analysis.metrics import summarize, warm_up_window

    if simulation.jobs is not None:
        jobs = simulation.jobs.table()
        simulation.jobs = None
    else:
        from batreplay.formats.out_jobs import read_out_jobs

        jobs = read_out_jobs(staging / "out_jobs.csv")
    try:
        window = warm_up_window(jobs, spec.metrics.warm_up)
    except ValueError as err:
        raise RunError(f"{err}: give a shorter warm-up") from None
    return summarize(jobs, nb_resources=nb_compute, shared_hosts=spec.engine.shares_hosts, window=window)


def _run_in_staging(spec: RunSpec, target: Path, staged: list[Path], deadline: Deadline | None,
                    on_progress: Callable[[float, int, int], None] | None,
                    on_notes: Callable[[list[str]], None] | None,
                    started: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The work of :func:`run`: read the inputs, simulate, write every file of the run directory in a staging
    directory for ``target`` (appended to ``staged`` as soon as it exists). Returns the manifest written as
    ``run.json`` and the metrics."""
    if spec.engine.name == "batsim":
        from batreplay.realbatsim.process import check_batsim_version, find_batsim

        check_batsim_version(find_batsim(spec.engine.batsim))  # fail fast, before reading the inputs
    platform_path = resolve_platform(spec.platform)
    platform = read_platform(platform_path)
    check_master_route(spec, platform_path, platform)
    site_model, document, job_table, notes = _workload_inputs(spec, platform.nb_compute)
    if site_model is not None:
        _check_closed_times(spec, site_model, float(min(platform.speeds)), sum(host.slots for host in platform.hosts))
    check_times(spec, platform_path, platform, document)
    try:
        spec.engine.make_speedup_model()  # a bad speedup table is told now, before the simulation
    except ValueError as err:
        raise RunError(str(err)) from None
    scheduler = load_scheduler(spec.scheduler.name, spec.scheduler.options)
    if isinstance(scheduler, PolicyScheduler):  # built-in schedulers check the job fields their options name
        try:
            notes.extend(scheduler.check_workload(document["jobs"]))
        except ValueError as err:
            raise RunError(str(err)) from None
    try:
        decision_process, replay_notes = replay_decision_process(
            spec.replay, document, job_table, scheduler, site_model=site_model,
            slots=sum(host.slots for host in platform.hosts))
    except ReplayError as err:
        raise RunError(str(err)) from None
    notes.extend(replay_notes)
    if on_notes is not None:
        on_notes(list(notes))  # before the simulation: a long run shows its input anomalies at once
    dynamic = spec.replay.dynamic  # users submit through the broker: Batsim starts with no job
    simulated = {"nb_res": document["nb_res"], "jobs": [], "profiles": {}} if dynamic else document
    total = len(document["jobs"])
    done = 0

    shown = 0.0  # when on_progress was last called (time.monotonic)
    latest = 0.0  # the simulated time of the last message

    def progress(now: float, ended: int) -> None:
        nonlocal done, shown, latest
        done += ended
        latest = now
        if on_progress is not None:
            moment = time.monotonic()
            if moment - shown >= PROGRESS_INTERVAL:
                shown = moment
                on_progress(now, done, total)

    staging = make_staging_directory(target)
    staged.append(staging)
    try:
        _write_workload_files(staging, document, job_table)  # now: the table is not kept through the simulation
        del job_table
        try:
            simulation = simulate(platform_path, simulated, decision_process, staging, engine=spec.engine,
                                  dynamic_jobs=dynamic, on_progress=progress, deadline=deadline,
                                  batsim_log=failed_batsim_log(target),
                                  check_version=False,  # checked above, before the inputs were read
                                  compute=platform)
        except SimulationError as err:
            raise RunError(str(err)) from err
        if on_progress is not None:  # the last word, whatever the throttling (rejected jobs never complete)
            on_progress(latest, done, total)
        messages, driver = simulation.messages, simulation.driver
        metrics = _metrics(spec, simulation, platform.nb_compute, staging)
        del simulation
        write_json_atomically(staging / "metrics.json", metrics)
        manifest = {
            "spec": spec.to_dict(),
            "engine": spec.engine.name,
            "decision_driver": driver,  # direct, pybatsim or zeromq: the path the scheduler ran on (engine/direct.py)
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
    return manifest, metrics
