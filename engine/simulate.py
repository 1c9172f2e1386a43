"""One entry point for one simulation, on the embedded engine or next to a real Batsim: :func:`simulate`.

Both engines take the same inputs (a SimGrid platform file, a Batsim workload document, a pybatsim decision
process) and leave the same files, Batsim's ``out_jobs.csv`` and ``out_schedule.csv``, in the output directory;
:class:`~batreplay.engine.spec.EngineSpec` says which engine runs (:data:`~batreplay.engine.choices.ENGINES`,
defined once in :mod:`batreplay.engine.choices`: the command line derives its choices from it). On the embedded
engine, batreplay's own decision processes run through the direct driver (:mod:`.direct`), any other through
pybatsim (:mod:`.inprocess`). This module imports the engine's simulator and drivers, batreplay.realbatsim, batreplay.platforms,
batreplay.formats and batreplay.schedulers.failures; never pandas (the outputs are written from the engine's record
columns; whoever analyses them builds the jobs table), analysis, run, campaign or the command line.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batreplay.engine.direct import run_direct, runs_direct
from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.engine.spec import EngineSpec
from batreplay.formats.node_io import NODE_IO_FILE, write_node_io
from batreplay.formats.out_jobs_writer import WrittenJobs, write_out_jobs_text
from batreplay.formats.out_schedule import SUMMARY_COLUMNS, schedule_summary, write_out_schedule
from batreplay.platforms.model import Platform
from batreplay.platforms.reader import read_platform
from batreplay.realbatsim.launcher import run_with_batsim
from batreplay.schedulers.failures import DecisionProcessError, decision_process_guard

#: The name the embedded engine reports for the workload in SIMULATION_BEGINS (a run directory's copy of it).
WORKLOAD_FILE = "workload.json"
#: The workload file a real Batsim reads, written in the output directory and removed once it succeeded.
BATSIM_INPUT = "batsim-workload.json"


class SimulationError(RuntimeError):
    """The embedded simulation failed (the engine refused a decision, or the scheduler's answer was unusable);
    the message says when and why: ``simulation failed at t = T s: Type: reason``."""


@dataclass
class Simulation:
    """What a finished simulation produced.

    Attributes:
        engine: the engine's name (one of :data:`ENGINES`).
        messages: Batsim messages answered by the decision process.
        scheduler_seconds: wall-clock seconds spent in the decision process.
        wall_seconds: wall-clock seconds of the whole simulation.
        out_jobs, out_schedule: Batsim's output files in the output directory.
        jobs: what the embedded engine wrote into ``out_jobs``, kept in memory
            (:class:`~batreplay.formats.out_jobs_writer.WrittenJobs`): its ``table()`` is what
            :func:`batreplay.formats.out_jobs.read_out_jobs` reads from that file, checked (built with pandas, by the
            analysis); None with a real Batsim (read its file).
        driver: how the decision process was driven: ``"direct"`` (the embedded engine's direct driver,
            :mod:`batreplay.engine.direct`), ``"pybatsim"`` (pybatsim's message layer in this process,
            :mod:`batreplay.engine.inprocess`) or ``"zeromq"`` (pybatsim over ZeroMQ, next to a real Batsim).
    """

    engine: str
    messages: int
    scheduler_seconds: float
    wall_seconds: float
    out_jobs: Path
    out_schedule: Path
    jobs: WrittenJobs | None = None
    driver: str = "pybatsim"


def simulate(platform: str | os.PathLike[str], workload: dict, decision_process: Any,
             out_dir: str | os.PathLike[str], *, engine: EngineSpec = EngineSpec(), dynamic_jobs: bool = False,
             on_request: Callable[[dict], None] | None = None, deadline=None,
             batsim_log: str | os.PathLike[str] | None = None, check_version: bool = True,
             compute: Platform | None = None, on_progress: Callable[[float, int], None] | None = None,
             through_pybatsim: bool = False) -> Simulation:
    """Simulate ``workload`` on ``platform`` with ``decision_process`` deciding; write ``out_jobs.csv`` and
    ``out_schedule.csv`` into ``out_dir`` (created if needed). The embedded engine also writes
    ``node_io_rates.csv`` (:mod:`batreplay.formats.node_io`) when jobs read or write on storage hosts.

    Args:
        platform: a SimGrid platform file (the embedded engine reads its compute hosts with
            :func:`batreplay.platforms.reader.read_platform`).
        workload: a Batsim workload document (``{"nb_res", "jobs", "profiles"}``), simulated as ``w0``.
        decision_process: a pybatsim ``BatsimScheduler`` instance.
        engine: which engine (default: the embedded one).
        dynamic_jobs: run with Batsim's ``--enable-dynamic-jobs`` and ``--acknowledge-dynamic-jobs`` (what a
            decision process that registers jobs needs, such as the feedback broker).
        on_request: called with each Batsim message (a dict ``{"now", "events"}``) before the decision process.
            Building those dicts costs time on the embedded engine: use ``on_progress`` to follow a run.
        deadline: a wall-clock limit (:class:`batreplay.deadline.Deadline`), checked between messages.
        batsim_log: with a real Batsim, where its standard error stays when the run fails (error messages name
            it); after a success it is ``out_dir/batsim.stderr.log``. None: ``out_dir/batsim.stderr.log``.
        check_version: with a real Batsim, run ``batsim --version`` first (False when the caller already did,
            as :func:`batreplay.run.runner.run` does before reading the inputs).
        compute: the embedded engine's hosts when the caller has already read ``platform`` with
            :func:`batreplay.platforms.reader.read_platform` (as the runner does), so that it is not read twice;
            None: read here.
        on_progress: called after each Batsim message as ``on_progress(now, jobs_ended)``: the simulated time
            (s) and the number of JOB_COMPLETED events in that message.
        through_pybatsim: on the embedded engine, run even one of batreplay's own decision processes inside
            pybatsim's ``Batsim`` object instead of the direct driver (:mod:`batreplay.engine.direct`); the
            outputs are the same (for checks and comparisons).

    Returns:
        A :class:`Simulation`.

    Raises:
        SimulationError: the embedded simulation failed (``simulation failed at t = T s: Type: reason``; the
            original exception is the ``__cause__``); nothing is written then.
        DecisionProcessError: the decision process raised or exited (one line naming its file and line).
        EngineError, InvalidProfileError, UnsupportedProfileError: a workload the embedded engine refuses.
        PlatformError: an unreadable platform (embedded engine).
        BatsimLaunchError: a real Batsim missing, of another version, crashed, silent (see
            :mod:`batreplay.realbatsim.errors`).
        WallClockTimeout: ``deadline`` expired.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / NODE_IO_FILE).unlink(missing_ok=True)  # (an earlier simulation's rates in a folder reused, whichever
    # engine runs now, would be read as this one's)
    started = time.perf_counter()
    direct = engine.name == "embedded" and not through_pybatsim and runs_direct(decision_process)
    if on_progress is not None and not direct:
        on_request = _with_progress(on_request, on_progress)
    jobs = None  # a real Batsim's out_jobs.csv is read by whoever needs it
    if engine.name == "embedded":
        compute = read_platform(platform) if compute is None else compute
        messages, scheduler_seconds, jobs = _embedded(compute, workload, decision_process, out_dir, started,
                                                      dynamic_jobs, on_request, deadline, on_progress, direct,
                                                      engine)
    else:
        messages, scheduler_seconds = _real_batsim(Path(platform), workload, decision_process, out_dir, engine,
                                                   dynamic_jobs, on_request, deadline, batsim_log, check_version)
    driver = "zeromq" if engine.name != "embedded" else "direct" if direct else "pybatsim"
    return Simulation(engine.name, messages, scheduler_seconds, time.perf_counter() - started,
                      out_dir / "out_jobs.csv", out_dir / "out_schedule.csv", jobs, driver)


@contextmanager
def _objects_kept_out_of_collections() -> Iterator[None]:
    """Exempt the objects that exist now (the workload, the engine's jobs) from Python's cyclic garbage collections
    for the duration of the block: the simulation allocates millions of small objects, and each full collection
    would walk them all again. Nothing is leaked: they are collected normally afterwards."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _with_progress(on_request: Callable[[dict], None] | None,
                   on_progress: Callable[[float, int], None]) -> Callable[[dict], None]:
    """A callback for Batsim's messages as dicts that also reports progress to ``on_progress``."""
    def hook(request: dict) -> None:
        if on_request is not None:
            on_request(request)
        on_progress(request["now"], sum(1 for event in request["events"] if event["type"] == "JOB_COMPLETED"))
    return hook


def embedded_engine(compute: Platform, workload: dict, spec: EngineSpec = EngineSpec(),
                    dynamic_jobs: bool = False) -> BatsimEngine:
    """The embedded engine, its first message not yet taken, for ``workload`` (simulated as ``w0``) on the compute
    hosts of ``compute``, with the per-run features of ``spec`` (compute sharing, a speedup model) and, with
    ``dynamic_jobs``, Batsim's dynamic registration acknowledged (what the feedback broker needs)."""
    hosts = [(host.name, host.speed) for host in compute.hosts]
    options = EngineOptions(dynamic_jobs=dynamic_jobs, acknowledge_dynamic_jobs=dynamic_jobs,
                            compute_sharing=spec.compute_sharing, speedup_model=spec.make_speedup_model())
    return BatsimEngine(hosts, {"w0": workload}, {"w0": WORKLOAD_FILE}, options, cores=compute.cores,
                        host_properties=compute.host_properties, storage=compute.storage_resources,
                        network=compute.network, master_host=compute.master_host)


def _embedded(compute: Platform, workload: dict, decision_process: Any, out_dir: Path, started: float,
              dynamic_jobs: bool, on_request, deadline, on_progress,
              direct: bool, spec: EngineSpec) -> tuple[int, float, WrittenJobs]:
    """The embedded engine on the compute hosts of ``compute``, with the direct driver (``direct``) or through
    pybatsim; returns the number of messages, the decision process's seconds and the jobs written."""
    engine = embedded_engine(compute, workload, spec, dynamic_jobs)
    try:
        with _objects_kept_out_of_collections():
            if direct:
                connection = run_direct(engine, decision_process, on_progress, deadline, on_request)
            else:
                connection = run_scheduler(engine, decision_process, on_request=on_request, deadline=deadline)
    except DecisionProcessError:  # the scheduler failed or exited: its one-line message names file and line
        raise
    except Exception as err:  # the engine or the scheduler failed: say why, write nothing
        raise SimulationError(f"simulation failed at t = {engine.now:.6f} s: {type(err).__name__}: {err}") from err
    messages, scheduler_seconds = connection.messages, connection.scheduler_seconds
    columns = engine.record_columns()
    node_io = engine.io_columns()  # (None: no job read or wrote on a storage host)
    engine.forget_jobs()  # no longer needed: freed before the outputs are written
    connection.engine = None  # (the decision process, which the caller keeps, refers to its driver)
    del engine, connection
    jobs = write_out_jobs_text(columns, out_dir / "out_jobs.csv")  # jobs.table(): the table read_out_jobs would read
    needed = (*SUMMARY_COLUMNS, "allocated_resources") if spec.shares_hosts else SUMMARY_COLUMNS
    times = {name: columns[name] for name in needed}  # the engine's times, as Batsim sums them
    del columns
    write_out_schedule(schedule_summary(times, compute.nb_compute, scheduler_seconds, time.perf_counter() - started,
                                        check=False, shared_hosts=spec.shares_hosts, nb_storage=len(compute.storage)),
                       out_dir / "out_schedule.csv")
    if node_io is not None:
        write_node_io(node_io, out_dir / NODE_IO_FILE)
    return messages, scheduler_seconds, jobs


def _real_batsim(platform: Path, workload: dict, decision_process: Any, out_dir: Path, engine: EngineSpec,
                 dynamic_jobs: bool, on_request, deadline, batsim_log, check_version: bool) -> tuple[int, float]:
    """A real Batsim next to the decision process; returns the number of messages and the decision process's
    seconds. Batsim writes its own outputs into ``out_dir``."""
    batsim_input = out_dir / BATSIM_INPUT
    batsim_input.write_text(json.dumps(workload))
    with decision_process_guard():  # the scheduler's own exceptions become one line naming its file and line
        result = run_with_batsim(platform, batsim_input, decision_process, out_dir, batsim_path=engine.batsim,
                                 dynamic_jobs=dynamic_jobs, acknowledge_dynamic_jobs=dynamic_jobs,
                                 compute_sharing=engine.compute_sharing,
                                 timeout=engine.batsim_timeout, on_request=on_request, deadline=deadline,
                                 stderr_log=batsim_log, check_version=check_version)
    batsim_input.unlink()
    return result.messages, result.scheduler_seconds
