"""The runs under the GUI's runs directory, one row each, for the Runs page; the folder of a run id.

A finished run is a run directory (``run.json``, ``metrics.json``; see :func:`batreplay.run.runner.run`); a failed
one is the failure record ``<run id>.failed.json`` its process left (see :mod:`batreplay.run.isolated`); runs
waiting or under way come from the :class:`~batreplay.ui.launcher.Launcher`. Everything is read from the files,
so a restarted app lists every finished run again. A folder or record that cannot be read is listed as
``unreadable`` with the reason, never skipped silently.

Run ids: a run directory of the runs folder is named by its folder's name (``kth-sp2-...-easy-1a2b3c4d5e6f``); a
campaign instance (``<runs dir>/campaigns/<campaign>/<instance id>/``, where the Campaigns page runs campaigns, see
:mod:`batreplay.ui.campaigns`) by ``campaigns/<campaign>/<instance id>`` (:func:`instance_id`): each of the two
parts a plain name of letters, digits, ``.``, ``_``, ``+`` and ``-`` that starts with a letter or digit
(:data:`ID_PART`; campaign keys and instance ids are made so), and never ``..``. An instance is finished when its
folder holds ``instance.json`` (written last, :mod:`batreplay.campaign.worker`); a failed one left
``<instance id>.failed.json`` beside it; an instance under way (no ``instance.json`` yet) is not listed, nor is a
folder that is a symbolic link (as a run directory that is a link is not). :func:`run_directory` is the only way
from a run id (a URL's part) to a folder: it refuses anything else, and every folder on the way that is a link.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from batreplay.analysis.run_dir import MANIFEST_NAME
from batreplay.campaign.worker import INSTANCE_MANIFEST
from batreplay.run.isolated import FAILED_SUFFIX
from batreplay.ui.campaigns import CAMPAIGNS
from batreplay.ui.launcher import DONE, FAILED, RunState
from batreplay.ui.messages import one_line
from batreplay.ui.runs_table import describe

_METRICS = ("nb_jobs", "makespan", "mean_waiting_time", "mean_bounded_slowdown", "utilisation")
#: Endings of the files of a run directory that the app reads (run.json, metrics.json, instance.json, out_jobs.csv,
#: jobs.csv, out_schedule.csv, platform.xml...): none of them may be a link leading out of the runs folder.
READ_ENDINGS = (".json", ".csv", ".xml")
UNREADABLE = "unreadable"
#: Each part of a campaign instance's run id: the campaign's folder (a campaign key,
#: :data:`batreplay.ui.campaigns.KEY`) and the instance's id (:func:`batreplay.campaign.spec.instance_id`).
ID_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def instance_id(campaign: str, instance: str) -> str:
    """The run id of the campaign instance ``instance`` of ``campaign``: ``campaigns/<campaign>/<instance>``."""
    return f"{CAMPAIGNS}/{campaign}/{instance}"


def id_parts(run_id: Any) -> tuple[str, ...] | None:
    """The folders of the run id ``run_id`` under the runs folder, or None when it is no run id the app serves.

    ``(name,)`` for a run directory of the runs folder: any name but a hidden one (``.x``, ``..``), one with a
    separator or a NUL, and ``campaigns`` (the campaigns' folder); ``("campaigns", campaign, instance)`` for a
    campaign instance, each part matching :data:`ID_PART` and holding no ``..``. Anything else (not a text, empty,
    more parts) is None."""
    if not isinstance(run_id, str) or not run_id or "\\" in run_id or "\0" in run_id:
        return None
    parts = tuple(run_id.split("/"))
    if len(parts) == 1:
        name = parts[0]
        return None if name.startswith(".") or name == CAMPAIGNS or name != Path(name).name else parts
    if (len(parts) == 3 and parts[0] == CAMPAIGNS
            and all(ID_PART.fullmatch(part) and ".." not in part for part in parts[1:])):
        return parts
    return None


def _when(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _read_json(path: Path) -> Any:
    """The JSON document of ``path``.

    Raises:
        OSError: it cannot be read; ValueError: it is no JSON (the message names the file).
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ValueError(f"{path}: not JSON ({err})") from None


def read_metrics(folder: Path) -> dict[str, Any]:
    """The ``metrics.json`` of a run directory.

    Raises:
        OSError, ValueError: it cannot be read (the message names the file).
    """
    return _read_json(Path(folder) / "metrics.json")


def finished_row(folder: Path, run_id: str | None = None, campaign: str | None = None) -> dict[str, Any]:
    """The row of a run directory: its choices in words (:func:`batreplay.ui.runs_table.describe`: label,
    workload, platform, scheduler, user model, engine, other options, seeds), its key metrics (``metrics.json``'s
    values: seconds, a ratio), wall time (s) and end time (UTC text).

    Args:
        folder: the run directory.
        run_id: its run id (default: the folder's name).
        campaign: the campaign of an instance (its ``instance.json`` is read too), or None.

    A folder whose ``run.json``, ``instance.json`` or ``metrics.json`` cannot be read gives an ``unreadable`` row
    with the reason."""
    row: dict[str, Any] = {"run_id": run_id or folder.name, "status": DONE, "campaign": campaign}
    try:
        manifest = _read_json(folder / MANIFEST_NAME)
        instance = _read_json(folder / INSTANCE_MANIFEST) if campaign else None
        metrics = read_metrics(folder)
        row.update(describe(manifest["spec"], instance))
        row.update({key: metrics.get(key) for key in _METRICS})
        row["wall_seconds"] = manifest.get("wall_seconds")
        row["finished"] = _when(folder / "metrics.json")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:  # (a JSON value of another shape)
        row.update(status=UNREADABLE, error=f"{type(err).__name__}: {err}")
    return row


def failed_row(record: Path, run_id: str | None = None, campaign: str | None = None) -> dict[str, Any]:
    """The row of a failure record: the run's choices (from its ``spec``, or a campaign instance's ``params`` and
    ``labels``) and its one-line error.

    Args:
        record: the failure record ``<name>.failed.json``.
        run_id: the run's id (default: the record's name without ``.failed.json``).
        campaign: the campaign of a failed instance, or None."""
    run_id = run_id or record.name.removesuffix(FAILED_SUFFIX)
    try:
        document = _read_json(record)
        described = describe(document.get("spec") or document.get("params") or {}, document if campaign else None)
        row = {"run_id": run_id, "status": FAILED, "campaign": campaign, **described,
               "error": one_line(document.get("error")), "wall_seconds": document.get("wall_seconds"),
               "finished": _when(record)}
    except (OSError, ValueError, AttributeError, TypeError) as err:  # (a JSON value of another shape)
        row = {"run_id": run_id, "status": UNREADABLE, "campaign": campaign, "error": f"{type(err).__name__}: {err}"}
    return row


def _entries(folder: Path) -> list[os.DirEntry]:
    """The entries of ``folder`` that are not hidden, by name (none when it cannot be listed)."""
    try:
        return sorted((entry for entry in os.scandir(folder) if not entry.name.startswith(".")),
                      key=lambda entry: entry.name)
    except OSError:
        return []


def _run_row(path: Path, runs_dir: Path, run_id: str, campaign: str | None = None) -> dict[str, Any]:
    """:func:`finished_row` of a run directory, or an ``unreadable`` row when a file of it is a link leading out of
    the runs folder (:func:`link_out`) or ``run_id`` is no id the app serves (:func:`id_parts`)."""
    link = link_out(path, runs_dir)
    if link is not None:
        return {"run_id": run_id, "status": UNREADABLE, "campaign": campaign,
                "error": f"{link} is a link leading out of the runs folder: not read"}
    if id_parts(run_id) is None:
        return {"run_id": run_id, "status": UNREADABLE, "campaign": campaign,
                "error": f"{run_id}: a name this app does not serve (a campaign's folder and its instances are named "
                         "with letters, digits, '.', '_', '+' and '-')"}
    return finished_row(path, run_id, campaign)


def _instance_rows(runs_dir: Path) -> dict[str, dict[str, Any]]:
    """The rows of the campaign instances under ``<runs dir>/campaigns/``: finished ones (a folder with
    ``instance.json``) and failed ones (a failure record, unless the instance has finished since). A folder without
    ``instance.json`` (an instance under way, or interrupted) is not listed, nor are links."""
    root = runs_dir / CAMPAIGNS
    if root.is_symlink() or not root.is_dir():
        return {}
    rows: dict[str, dict[str, Any]] = {}
    for campaign in _entries(root):
        if not campaign.is_dir(follow_symlinks=False):
            continue
        for entry in _entries(Path(campaign.path)):
            path = Path(entry.path)
            run_id = instance_id(campaign.name, entry.name.removesuffix(FAILED_SUFFIX))
            if entry.is_dir(follow_symlinks=False) and os.path.lexists(path / INSTANCE_MANIFEST):
                rows[run_id] = _run_row(path, runs_dir, run_id, campaign.name)
            elif entry.name.endswith(FAILED_SUFFIX) and entry.is_file(follow_symlinks=False):
                rows.setdefault(run_id, failed_row(path, run_id, campaign.name))
    return rows


def list_runs(runs_dir: Path, launched: Iterable[RunState] = ()) -> list[dict[str, Any]]:
    """Every run under ``runs_dir`` (finished, failed; campaign instances included) and those of ``launched``
    still waiting or running, newest first.

    Each row has ``run_id`` (:func:`id_parts`), ``status`` and ``campaign`` (None but for an instance), and those
    keys of :data:`batreplay.ui.runs_table.COLUMNS` that apply: the choices in words
    (:func:`~batreplay.ui.runs_table.describe`), the metrics as ``metrics.json`` has them (seconds), ``nb_jobs``,
    ``max_jobs``, ``wall_seconds`` (s), ``finished`` (UTC text), ``error`` (one line)."""
    rows: dict[str, dict[str, Any]] = {}
    for entry in _entries(runs_dir) if runs_dir.is_dir() else []:
        path = Path(entry.path)
        if entry.name == CAMPAIGNS:
            continue  # (the campaigns' folder: its instances are listed below)
        if entry.is_dir(follow_symlinks=False) and os.path.lexists(path / MANIFEST_NAME):
            rows[entry.name] = _run_row(path, runs_dir, entry.name)
        elif entry.name.endswith(FAILED_SUFFIX) and entry.is_file(follow_symlinks=False):
            row = failed_row(path)
            rows.setdefault(row["run_id"], row)
    rows.update(_instance_rows(runs_dir))
    for state in launched:
        if state is not None and state.status not in (DONE, FAILED):
            rows[state.run_id] = {"run_id": state.run_id, "status": state.status, "campaign": None,
                                  "nb_jobs": state.total or None, "jobs": f"{state.total:,}" if state.total else "",
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


def _folder_of(runs_dir: Path, run_id: Any) -> Path | None:
    """``<runs dir>/<parts of run_id>`` when ``run_id`` is a run id (:func:`id_parts`) and no folder on the way (the
    campaigns' folder, a campaign's) nor the last one is a symbolic link; else None. Nothing is read."""
    parts = id_parts(run_id)
    if parts is None:
        return None
    for depth in range(1, len(parts) + 1):
        if runs_dir.joinpath(*parts[:depth]).is_symlink():
            return None
    return runs_dir.joinpath(*parts)


def run_directory(runs_dir: Path, run_id: Any) -> Path | None:
    """The directory of the finished run ``run_id`` under ``runs_dir``, or None.

    ``run_id`` is a run directory's name or a campaign instance's ``campaigns/<campaign>/<instance>``
    (:func:`id_parts`: a name with another separator, a hidden name or ``..`` is never looked up); a folder on the
    way that is a link, a run directory whose files the app reads include a link leading out of the runs folder
    (:func:`link_out`), a folder without ``run.json``, and an instance without ``instance.json`` (not finished) are
    no run the app shows."""
    folder = _folder_of(runs_dir, run_id)
    if folder is None or not folder.is_dir() or link_out(folder, runs_dir) is not None:
        return None
    if not (folder / MANIFEST_NAME).is_file():
        return None
    if _is_instance(run_id) and not (folder / INSTANCE_MANIFEST).is_file():
        return None
    return folder


def _is_instance(run_id: Any) -> bool:
    """Whether ``run_id`` is a campaign instance's (``campaigns/<campaign>/<instance>``)."""
    return len(id_parts(run_id) or ()) == 3


def run_parameters(runs_dir: Path, run_id: Any) -> dict[str, Any] | None:
    """The description of the run ``run_id``, for comparing runs: a finished run's ``run.json`` ``spec`` (an
    instance's with its ``campaign`` and ``seed``), a failed run's recorded ``spec`` (or a failed instance's
    ``params``); None for a run id the app does not serve, a run with neither (waiting, running), or files that
    cannot be read."""
    folder = run_directory(runs_dir, run_id)
    try:
        if folder is not None:
            spec = dict(_read_json(folder / MANIFEST_NAME)["spec"])
            if _is_instance(run_id):
                instance = _read_json(folder / INSTANCE_MANIFEST)
                spec.update(campaign=instance.get("campaign"), seed=instance.get("seed"))
            return spec
        place = _folder_of(runs_dir, run_id)
        record = None if place is None else place.with_name(place.name + FAILED_SUFFIX)
        if record is None or record.is_symlink() or not record.is_file():
            return None
        document = _read_json(record)
        found = document.get("spec") or document.get("params")
        return dict(found) if isinstance(found, dict) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def run_files(folder: Path) -> list[str]:
    """The names of the files of a run directory that may be downloaded: regular files only, never a symbolic
    link (which could lead out of the runs folder), sorted."""
    return sorted(entry.name for entry in os.scandir(folder) if entry.is_file(follow_symlinks=False))
