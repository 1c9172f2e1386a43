"""The runs under the GUI's runs directory, one row each, for the Runs page.

A finished run is a run directory (``run.json``, ``metrics.json``; see :func:`batreplay.run.runner.run`); a failed
one is the failure record ``<run id>.failed.json`` its process left (see :mod:`batreplay.run.isolated`); runs
waiting or under way come from the :class:`~batreplay.ui.launcher.Launcher`. Everything is read from the files,
so a restarted app lists every finished run again. A folder or record that cannot be read is listed as
``unreadable`` with the reason, never skipped silently.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from batreplay.analysis.run_dir import MANIFEST_NAME
from batreplay.run.isolated import FAILED_SUFFIX
from batreplay.ui.launcher import DONE, FAILED, RunState
from batreplay.ui.messages import one_line

#: Columns of the Runs table, in order: (key, title). Times are seconds of simulated time.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "run"),
    ("status", "status"),
    ("workload", "workload"),
    ("platform", "platform"),
    ("scheduler", "scheduler"),
    ("replay", "replay"),
    ("engine", "engine"),
    ("nb_jobs", "jobs"),
    ("makespan", "makespan (s)"),
    ("mean_waiting_time", "mean wait (s)"),
    ("mean_bounded_slowdown", "mean bounded slowdown"),
    ("utilisation", "utilisation"),
    ("wall_seconds", "wall time (s)"),
    ("finished", "finished (UTC)"),
    ("error", "error"),
)
_METRICS = ("nb_jobs", "makespan", "mean_waiting_time", "mean_bounded_slowdown", "utilisation")
#: Endings of the files of a run directory that the app reads (run.json, metrics.json, out_jobs.csv, jobs.csv,
#: out_schedule.csv, platform.xml...): none of them may be a link leading out of the runs folder.
READ_ENDINGS = (".json", ".csv", ".xml")
UNREADABLE = "unreadable"


def _when(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _spec_columns(spec: dict[str, Any]) -> dict[str, Any]:
    replay = spec.get("replay", "rigid")
    if spec.get("sessions"):
        replay = f"{replay} ({spec['sessions']})"
    return {"workload": Path(str(spec.get("workload", ""))).name, "platform": Path(str(spec.get("platform", ""))).name,
            "scheduler": Path(str(spec.get("scheduler", ""))).name, "replay": replay,
            "engine": spec.get("engine", "")}


def read_metrics(folder: Path) -> dict[str, Any]:
    """The ``metrics.json`` of a run directory.

    Raises:
        OSError, ValueError: it cannot be read (the message names the file).
    """
    path = Path(folder) / "metrics.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ValueError(f"{path}: not JSON ({err})") from None


def finished_row(folder: Path) -> dict[str, Any]:
    """The row of a run directory: its spec's main choices, its key metrics, wall time and end time.

    A folder whose ``run.json`` or ``metrics.json`` cannot be read gives an ``unreadable`` row with the reason."""
    row: dict[str, Any] = {"run_id": folder.name, "status": DONE}
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
        metrics = read_metrics(folder)
        row.update(_spec_columns(manifest["spec"]))
        row.update({key: metrics.get(key) for key in _METRICS})
        row["wall_seconds"] = manifest.get("wall_seconds")
        row["finished"] = _when(folder / "metrics.json")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:  # (a JSON value of another shape)
        row.update(status=UNREADABLE, error=f"{type(err).__name__}: {err}")
    return row


def failed_row(record: Path) -> dict[str, Any]:
    """The row of a failure record: the run's choices (from its parameters) and its one-line error."""
    run_id = record.name.removesuffix(FAILED_SUFFIX)
    try:
        document = json.loads(record.read_text(encoding="utf-8"))
        row = {"run_id": run_id, "status": FAILED, **_spec_columns(document.get("spec") or document.get("params", {})),
               "error": one_line(document.get("error")),
               "wall_seconds": document.get("wall_seconds"), "finished": _when(record)}
    except (OSError, ValueError, AttributeError, TypeError) as err:  # (a JSON value of another shape)
        row = {"run_id": run_id, "status": UNREADABLE, "error": f"{type(err).__name__}: {err}"}
    return row


def list_runs(runs_dir: Path, launched: Iterable[RunState] = ()) -> list[dict[str, Any]]:
    """Every run under ``runs_dir`` (finished, failed) and those of ``launched`` still waiting or running,
    newest first; each row has the keys of :data:`COLUMNS` that apply."""
    rows: dict[str, dict[str, Any]] = {}
    for entry in sorted(os.scandir(runs_dir), key=lambda item: item.name) if runs_dir.is_dir() else []:
        path = Path(entry.path)
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False) and os.path.lexists(path / MANIFEST_NAME):
            link = link_out(path, runs_dir)
            rows[entry.name] = finished_row(path) if link is None else {
                "run_id": entry.name, "status": UNREADABLE,
                "error": f"{link} is a link leading out of the runs folder: not read"}
        elif entry.name.endswith(FAILED_SUFFIX) and entry.is_file(follow_symlinks=False):
            row = failed_row(path)
            rows.setdefault(row["run_id"], row)
    for state in launched:
        if state is not None and state.status not in (DONE, FAILED):
            rows[state.run_id] = {"run_id": state.run_id, "status": state.status, "nb_jobs": state.total or None,
                                  "error": state.error}
    return sorted(rows.values(), key=lambda row: row.get("finished") or "9999", reverse=True)


def link_out(folder: Path, runs_dir: Path) -> str | None:
    """The name of a file of the run directory ``folder`` that the app would read (:data:`READ_ENDINGS`) and that
    is a symbolic link leading out of ``runs_dir``, or None (also when ``folder`` cannot be listed)."""
    runs = Path(os.path.realpath(runs_dir))
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    for entry in entries:
        if entry.name.endswith(READ_ENDINGS) and entry.is_symlink():
            real = Path(os.path.realpath(entry.path))
            if not (real == runs or real.is_relative_to(runs)):
                return entry.name
    return None


def run_directory(runs_dir: Path, run_id: str) -> Path | None:
    """The directory of the finished run ``run_id`` under ``runs_dir``, or None: a name with a path separator, a
    hidden name or ``..`` is never looked up, and a folder that is a link, or whose files the app reads include a
    link leading out of the runs folder (:func:`link_out`), is no run the app shows."""
    if (not isinstance(run_id, str) or not run_id or run_id.startswith(".") or "\\" in run_id
            or run_id != Path(run_id).name):  # (a separator, or "..", makes the name differ from its last part)
        return None
    folder = runs_dir / run_id
    if folder.is_symlink() or not folder.is_dir() or link_out(folder, runs_dir) is not None:
        return None
    if not (folder / MANIFEST_NAME).is_file():
        return None
    return folder


def run_files(folder: Path) -> list[str]:
    """The names of the files of a run directory that may be downloaded: regular files only, never a symbolic
    link (which could lead out of the runs folder), sorted."""
    return sorted(entry.name for entry in os.scandir(folder) if entry.is_file(follow_symlinks=False))
