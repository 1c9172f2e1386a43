"""``batreplay model validate``: simulate a site model and compare it with the log's held-out jobs.

:func:`validate_model` reads the model and its test jobs (:mod:`batreplay.validation.sides`), simulates the model on
the platform with the scheduler given (closed or open:
:class:`~batreplay.validation.validation_options.ValidationOptions`), compares the two sides
(:mod:`batreplay.validation.measures`) and writes, in the output folder: ``validation.csv`` and
``validation.json`` (the table; the JSON also holds the options, the window, the notes and what a held-out half can
tell), the figures (:mod:`batreplay.validation.figures`) and the simulation's run directory, ``simulation/``. The
folder is written in a hidden sibling and moved into place at the end: a failed validation leaves nothing.

What the held-out half can tell: whether jobs drawn from the model, on this platform and scheduler, end at the rate,
with the run times, types and platform use that the log's other half recorded. What it cannot: a log records one
schedule on one machine, so the measured side includes that machine's scheduler and load; a model validated on it
is validated on what the log measures (no I/O in an SWF log, for instance), not on what the site would do otherwise.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from batreplay.atomic import commit_directory, make_staging_directory, write_json_atomically
from batreplay.formats.out_jobs import read_out_jobs
from batreplay.platforms.reader import read_platform
from batreplay.replay.closed import DrawnRequests
from batreplay.run.runner import RunError, failed_batsim_log, resolve_platform, run
from batreplay.run.spec import RunSpec
from batreplay.sitemodels.model_file import read_model
from batreplay.validation.measures import Comparison, JobTable, compare
from batreplay.validation.sides import HeldOut, held_out_jobs, run_options, simulated_jobs, thinned
from batreplay.validation.validation_options import ValidationOptions

#: What a held-out half can and cannot tell, written in every validation.json (module docstring).
SCOPE = ("The held-out jobs tell whether jobs drawn from the model, on this platform and scheduler, end at the rate, "
         "with the run times, types and platform use that the log's other half recorded. A log records one schedule "
         "on one machine: the measured side includes that machine's scheduler and load, and the model is validated "
         "on what the log measures (an SWF log records no I/O), not on what the site would do otherwise.")


@dataclass(frozen=True)
class Validation:
    """A validation's result: the table, the window (s), the notes, and the folder written."""

    rows: list[Comparison]
    window: tuple[float, float]
    notes: list[str]
    out_dir: Path


def validate_model(model_path: str | Path, log_path: str | Path, platform: str | Path, out_dir: str | Path,
                   options: ValidationOptions = ValidationOptions(), *, against: str | Path | None = None,
                   on_notes: Callable[[list[str]], None] | None = None) -> Validation:
    """Validate the model at ``model_path`` on its held-out jobs of ``log_path`` (module docstring).

    Raises:
        ValueError: as :func:`batreplay.validation.sides.held_out_jobs`; a folder ``out_dir`` that exists;
            RunError from the simulation.
    """
    model_path, out_dir = Path(model_path), Path(out_dir)
    if out_dir.exists():
        raise ValueError(f"--out {out_dir}: the folder exists; give another")
    model = read_model(model_path)
    held = held_out_jobs(model, model_path, Path(log_path), None if against is None else Path(against),
                         options.warm_up)
    if on_notes is not None:
        on_notes(list(held.notes))
    hosts = read_platform(resolve_platform(platform)).hosts
    slots, speeds = sum(host.slots for host in hosts), np.array([host.speed for host in hosts])
    staging = make_staging_directory(out_dir)
    try:
        try:
            simulated, notes = _simulate(model, model_path, held, platform, speeds, staging, options)
        except RunError as err:  # keep a real Batsim's log beside --out, where the message then points
            raise _moved_batsim_log(err, staging, out_dir) from None
        rows = compare(held.jobs, simulated, held.window, slots)
        notes = held.notes + notes
        _write(staging, rows, held, options, notes, model_path, log_path, platform)
        from batreplay.validation.figures import write_figures  # matplotlib, once the simulation is done

        write_figures(staging, held, simulated, slots)
    except BaseException:
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
        raise
    commit_directory(staging, out_dir)
    manifest = json.loads((out_dir / "simulation" / "run.json").read_text(encoding="utf-8"))
    manifest["spec"]["out_dir"] = str(out_dir / "simulation")  # (it ran in the staging folder, now moved)
    write_json_atomically(out_dir / "simulation" / "run.json", manifest)
    return Validation(rows, held.window, notes, out_dir)


def _moved_batsim_log(err: RunError, staging: Path, out_dir: Path) -> RunError:
    """``err`` of the simulation, its real Batsim's log (if any) moved out of the staging folder beside ``out_dir``
    and the message pointing there."""
    log = failed_batsim_log(staging / "simulation")
    if not log.exists():
        return err
    kept = out_dir.with_name(f"{out_dir.name}.failed-batsim.log")
    log.replace(kept)
    return RunError(str(err).replace(str(log), str(kept)))


def _simulate(model, model_path: Path, held: HeldOut, platform, speeds: np.ndarray, staging: Path,
              options: ValidationOptions) -> tuple[JobTable, list[str]]:
    """Run the model (closed or open) into ``staging / "simulation"`` on ``platform`` (its hosts' ``speeds``,
    flop/s); the simulated job table and notes."""
    common: dict[str, Any] = {"scheduler": "easy", **options.run, "platform": str(platform),
                              "out_dir": str(staging / "simulation")}
    share = model.source["test_jobs"] / model.source["kept"]
    run(RunSpec.build(**run_options(options.mode, model_path, held, options.population, options.seed, share),
                      **common))
    out_jobs = read_out_jobs(staging / "simulation" / "out_jobs.csv")
    if options.mode == "closed":
        requests = DrawnRequests(model, options.seed)
        last = int(out_jobs["job_id"].astype(np.int64).max())
        flop = {k: float(requests[k]["profile"]["cpu"]) for k in range(1, last + 1)}
        types = dict(enumerate(requests.job_types[:last], start=1))
    else:  # the open run's jobs.csv holds each job's type and CPU seconds (sitemodels.generate.open_workload)
        drawn = pd.read_csv(staging / "simulation" / "jobs.csv", usecols=["job_id", "job_type", "average_cpu_time"],
                            dtype={"job_type": str}, keep_default_na=False)  # (a type may be named "NA")
        ids = drawn["job_id"].astype(np.int64).tolist()
        cpu = drawn["average_cpu_time"].to_numpy(dtype=np.float64) * model.reference["node_speed"]
        flop, types = dict(zip(ids, cpu.tolist())), dict(zip(ids, drawn["job_type"].tolist()))
    notes = [] if np.ptp(speeds) == 0 else [f"hosts of several speeds: CPU seconds counted at their mean, "
                                            f"{speeds.mean():g} flop/s"]
    table, ids, rejected = simulated_jobs(out_jobs, types, flop, float(speeds.mean()))
    if rejected:
        notes.append(f"{rejected} simulated jobs were rejected (never ran): left out of the comparison")
    notes.append(f"the whole site simulated ({len(out_jobs)} jobs); compared: a random {share:.3g} of its jobs, the "
                 "held-out jobs' share of the log's")
    return thinned(table, ids, share, options.seed), notes


def _write(folder: Path, rows: list[Comparison], held: HeldOut, options: ValidationOptions, notes: list[str],
           model_path, log_path, platform) -> None:
    """``validation.json`` and ``validation.csv`` (module docstring)."""
    import pandas as pd

    table = pd.DataFrame([dataclasses.asdict(row) for row in rows])
    table.to_csv(folder / "validation.csv", index=False)
    document = {"model": str(model_path), "log": str(log_path), "platform": str(platform),
                "options": dataclasses.asdict(options), "window": list(held.window),
                "test_jobs_mean_in_system": held.mean_in_system, "notes": notes, "scope": SCOPE,
                "comparisons": [dataclasses.asdict(row) for row in rows]}
    (folder / "validation.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
