"""The Models page of the web GUI: fit a site model on a log, validate it on the log's held-out jobs, and run it.

A site model (Caspart et al. 2019; ``docs/site-models.md``) is fitted as ``batreplay model fit`` fits it and
validated as ``batreplay model validate`` validates it: the page's fields are built from the same declarations
(:class:`~batreplay.sitemodels.fit_options.FitOptions`, :class:`~batreplay.validation.validation_options.
ValidationOptions`, and the scheduler's and engine's run options), read by the same parser, and checked by the same
classes. Running a model is the New-run form's: the model is a workload there, with the closed or open replay.

- :func:`fit_from_form` writes ``<runs dir>/models/<name>.json`` and its held-out jobs beside it (never over an
  existing model: another name is asked for).
- :func:`plan_validation` checks a validation form and names its folder, ``<runs dir>/validations/<id>``, by the
  SHA-256 of its description and inputs (the same form on the same files names the same folder, whose result is
  then shown again); :class:`Validations` runs them one at a time in a background thread.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batreplay.campaign.spec import canonical_json
from batreplay.options import Option, declared_options
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.run.spec import FLAT_FIELDS, run_options
from batreplay.sitemodels.fit_options import FitOptions, fit_options
from batreplay.ui.launcher import DONE, FAILED, QUEUED, RUNNING
from batreplay.ui.messages import one_line
from batreplay.ui.run_form import (MODELS, FormError, chosen_scheduler, is_site_model, looks_like_site_model,
                                  read_fields)
from batreplay.ui.sandbox import Sandbox
from batreplay.validation.cli import RUN_PARTS
from batreplay.validation.validation_options import ValidationOptions
from batreplay.workloads.pwa import PWA_CATALOGUE, cached_path, catalogue_entry

#: Where validations are written, under the runs directory.
VALIDATIONS = "validations"
#: The types of the pattern-matching ids of the generic fields of the fit and validation forms.
FIT_FIELD, VALIDATE_FIELD = "fit-option", "validate-option"
#: A model's name: letters, digits, ``.``, ``_``, ``-``.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: A validation's folder name, as :func:`plan_validation` makes it.
VALIDATION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,150}")


def fit_fields() -> tuple[Option, ...]:
    """The fit form's generic fields: the declared fit options, ``model fit``'s flags (:func:`~batreplay.sitemodels.
    fit_options.fit_options`)."""
    return fit_options()


def validation_fields() -> tuple[Option, ...]:
    """The validation form's generic fields: the validation's declared options (mode, population, seed, warm-up),
    then the scheduler's and the engine's run options the New-run form shows as generic fields (compute sharing,
    speedup model...); the scheduler, its options and the engine have controls of their own."""
    run = tuple(declaration for declaration in run_options()
                if FLAT_FIELDS.get(declaration.name, ("",))[0] in RUN_PARTS and declaration.form)
    return (*declared_options(ValidationOptions), *run)


def log_choices(sandbox: Sandbox) -> list[dict[str, str]]:
    """The SWF logs a model may be fitted on or validated against: cached catalogue logs, then the ``.swf`` and
    ``.swf.gz`` files under the allowed folders (Dash's ``{"label", "value"}`` options)."""
    logs = [{"label": f"{entry.name} (cached log)", "value": entry.name} for entry in PWA_CATALOGUE.values()
            if cached_path(entry).is_file()]
    return logs + [{"label": sandbox.shown(path), "value": str(path)}
                   for path in sandbox.files((".swf", ".swf.gz"), own=("uploads",))]


def model_choices(sandbox: Sandbox) -> list[dict[str, str]]:
    """The site model files under the allowed folders and those the page fitted (``<runs dir>/models``)."""
    return [{"label": sandbox.shown(path), "value": str(path)}
            for path in sandbox.files((".json",), accept=looks_like_site_model, own=(MODELS,))]


def platform_choices(sandbox: Sandbox) -> list[dict[str, str]]:
    """The shipped platforms, then the platform files under the allowed folders."""
    return ([{"label": f"{name} (shipped)", "value": name} for name in SHIPPED_PLATFORMS]
            + [{"label": sandbox.shown(path), "value": str(path)} for path in sandbox.files((".xml",))])


def _log(text: str | None, sandbox: Sandbox) -> Path:
    """The SWF log a field names: a cached catalogue log, or a file under the allowed folders."""
    if not text or not text.strip():
        raise FormError("log: choose an SWF log")
    entry = catalogue_entry(text)
    if entry is not None and cached_path(entry).is_file():
        return cached_path(entry)
    path = sandbox.resolve(text, "log")
    if not path.name.lower().endswith((".swf", ".swf.gz")):
        raise FormError(f"log: {path.name} is not an SWF log (.swf, .swf.gz)")
    return path


def _selection(text: str | None) -> dict[str, list[int]] | None:
    """``partition=156,157; queue=2`` -> ``{"partition": [156, 157], "queue": [2]}`` (as ``--select``, repeated).

    Raises:
        FormError: a part that is not ``FIELD=V1,V2`` with a known field and whole numbers.
    """
    import argparse

    from batreplay.sitemodels.cli import selection

    chosen: dict[str, list[int]] = {}
    for part in (text or "").replace(";", " ").split():
        try:
            name, values = selection(part)
        except argparse.ArgumentTypeError as err:
            raise FormError(f"select: {err}") from None
        chosen.setdefault(name, []).extend(values)
    return chosen or None


@dataclass(frozen=True)
class FittedOnPage:
    """A model the page fitted: its file, its held-out jobs' file, the fit's notes and one row per job type
    (``type``, ``share``, ``jobs``, ``mean slots``, ``mean CPU s`` alone on a recorded node)."""

    path: Path
    test_jobs: Path
    notes: list[str]
    types: list[dict[str, Any]]


def fit_from_form(sandbox: Sandbox, *, log: str | None, job_types: str | None, select: str | None,
                  name: str | None, options: dict[str, Any]) -> FittedOnPage:
    """Fit a model as ``batreplay model fit LOG --job-types RULE --select ... --out <runs dir>/models/NAME.json``
    with the fit options of ``options`` (the generic fields' texts by option name).

    Raises:
        FormError: a bad name, a name already used, a rule, selection or option the fit refuses (named), or a log
            the fit cannot use; SandboxError: a path outside the allowed folders.
    """
    name = (name or "").strip().removesuffix(".json")
    if not MODEL_NAME.fullmatch(name):
        raise FormError(f"name: {name!r}: use letters, digits, '.', '_' and '-' (at most 100)")
    with _FITTING_LOCK:  # one fit of a name at a time (a second click, another browser)
        if name in _FITTING:
            raise FormError(f"name: a model {name} is being fitted: wait for it, or give another name")
        _FITTING.add(name)
    try:
        return _fit(sandbox, name, log=log, job_types=job_types, select=select, options=options)
    finally:
        with _FITTING_LOCK:
            _FITTING.discard(name)


#: The names of the models being fitted, and the lock that guards the set.
_FITTING: set[str] = set()
_FITTING_LOCK = threading.Lock()


def _fit(sandbox: Sandbox, name: str, *, log: str | None, job_types: str | None, select: str | None,
         options: dict[str, Any]) -> FittedOnPage:
    """:func:`fit_from_form` once the name is reserved."""
    from batreplay.sitemodels.fit import fit_site_model, held_out_path, save_fit
    from batreplay.sitemodels.job_types import JobTypeRule

    out = sandbox.runs_dir / MODELS / f"{name}.json"
    if out.exists() or held_out_path(out).exists():
        raise FormError(f"name: a model {name} exists already ({sandbox.shown(out)}): give another name")
    rule_text = (job_types or "all").strip()
    if rule_text.lower().endswith(".toml"):
        rule_text = str(sandbox.resolve(rule_text, "job types"))
    given = read_fields(fit_fields(), options, sandbox)
    try:
        rule = JobTypeRule.parse(rule_text)
    except ValueError as err:
        raise FormError(f"job types: {one_line(err).removeprefix('--job-types ')}") from None
    try:
        fit_options = FitOptions(select=_selection(select), **{declaration.field: given[declaration.name]
                                                               for declaration in fit_fields()
                                                               if declaration.name in given})
        fitted = fit_site_model(_log(log, sandbox), rule, fit_options)
        out.parent.mkdir(parents=True, exist_ok=True)
        model_path, test_path = save_fit(fitted, out)
    except (ValueError, OSError) as err:
        raise FormError(one_line(err)) from None
    speed = fitted.model.reference["node_speed"]
    types = [{"type": t.name, "share": round(t.share, 4), "jobs": t.jobs, "mean slots": round(t.job_slots.mean(), 2),
              "mean CPU s": round(t.cpu_demand.mean() / speed)} for t in fitted.model.types]
    return FittedOnPage(model_path, test_path, list(fitted.notes), types)


@dataclass(frozen=True)
class PlannedValidation:
    """A checked validation form: its id (folder name under ``<runs dir>/validations``) and what
    :func:`batreplay.validation.validate.validate_model` is called with, every file checked under the allowed
    folders (``platform``: a shipped platform's name or the checked file; ``held_out``: the model's held-out jobs)."""

    validation_id: str
    model: Path
    log: Path
    platform: str
    options: ValidationOptions
    out_dir: Path
    held_out: Path


def plan_validation(sandbox: Sandbox, *, model: str | None, log: str | None, platform: str | None,
                    scheduler: str | None, scheduler_options: str | None, engine: str | None,
                    options: dict[str, Any]) -> PlannedValidation:
    """Check a validation form as ``model validate`` checks its flags (the validation's options and the scheduler's
    and engine's run options, :func:`validation_fields`) and name its folder: ``<model>-<mode>-s<seed>-<hash>``,
    the hash (12 hex digits of a SHA-256) covering the options and the SHA-256 of every file read: the model, its
    held-out jobs, the log, the platform, a scheduler file and speedup tables.

    Raises:
        FormError: a field the validation refuses (named); SandboxError: a path outside the allowed folders.
    """
    from batreplay.run.spec import RunSpec
    from batreplay.sitemodels.fit import held_out_path
    from batreplay.ui.run_form import speedup_tables
    from batreplay.workloads.pwa import file_sha256

    if not model or not model.strip():
        raise FormError("model: choose a site model (fit one above)")
    model_path = sandbox.resolve(model, "model")
    if not is_site_model(model_path):
        raise FormError(f"model: {model_path.name} is not a site model (batreplay model fit)")
    held_out = sandbox.resolve(str(held_out_path(model_path)), "the model's held-out jobs")
    log_path = _log(log, sandbox)
    if not platform or not platform.strip():
        raise FormError("platform: choose a platform")
    platform = platform if platform in SHIPPED_PLATFORMS else str(sandbox.resolve(platform, "platform"))
    values = read_fields(validation_fields(), options, sandbox)
    own = {declaration.name for declaration in declared_options(ValidationOptions)}
    name, chosen_options = chosen_scheduler(scheduler, scheduler_options, sandbox)
    run = {"scheduler": name, "scheduler_options": chosen_options, "engine": engine or "embedded",
           **{key: value for key, value in values.items() if key not in own}}
    try:
        checked = ValidationOptions(run=run, **{key: value for key, value in values.items() if key in own})
        # the scheduler's and the engine's options, checked together as a run checks them
        draft = RunSpec.build(workload=model_path, platform=platform, out_dir=sandbox.runs_dir, **run)
    except ValueError as err:
        raise FormError(one_line(err)) from None
    files = [model_path, held_out, log_path, Path(SHIPPED_PLATFORMS.get(platform, platform)),
             *([Path(name)] if Path(name).is_absolute() else []), *map(Path, speedup_tables(draft))]
    described = {"options": {**{key: getattr(checked, key) for key in own}, "run": run},
                 "inputs": [file_sha256(path) for path in files]}
    digest = hashlib.sha256(canonical_json(described).encode("ascii")).hexdigest()[:12]
    stem = re.sub(r"[^A-Za-z0-9._+-]", "-", model_path.stem).lstrip("._+-")[:80] or "model"
    validation_id = f"{stem}-{checked.mode}-s{checked.seed}-{digest}"
    return PlannedValidation(validation_id, model_path, log_path, platform, checked,
                             sandbox.runs_dir / VALIDATIONS / validation_id, held_out)


@dataclass
class ValidationState:
    """Where a validation stands: ``status`` (queued, running, done, failed) and the one-line error of a failure."""

    validation_id: str
    status: str
    error: str = ""


def _validate_in_child(planned: PlannedValidation, send) -> None:
    """The validation, in a process of its own; its one-line error, if any, sent on the pipe ``send``."""
    from batreplay.validation.validate import validate_model

    try:
        validate_model(planned.model, planned.log, planned.platform, planned.out_dir, planned.options,
                       against=planned.held_out)
    except Exception as err:  # noqa: BLE001 - sent to the page
        send.send(one_line(err, kind=not isinstance(err, (ValueError, OSError))))
    finally:
        send.close()


@dataclass
class Validations:
    """Runs validations one at a time, each in a process of its own (:func:`batreplay.validation.validate.
    validate_model`, whose output folder appears whole or not at all) started from a background thread, and tells
    where each stands; :meth:`shutdown` stops the one under way."""

    _pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="batreplay-ui-validation"))
    _states: dict[str, ValidationState] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _child: Any = None

    def submit(self, planned: PlannedValidation) -> ValidationState:
        """Start ``planned`` unless it is under way or its folder holds its result already (then ``done``)."""
        with self._lock:
            current = self._states.get(planned.validation_id)
            if current is not None and current.status in (QUEUED, RUNNING):
                return current
            if (planned.out_dir / "validation.csv").is_file():
                state = self._states[planned.validation_id] = ValidationState(planned.validation_id, DONE)
                return state
            state = self._states[planned.validation_id] = ValidationState(planned.validation_id, QUEUED)
        self._pool.submit(self._validate, state, planned)
        return state

    def _validate(self, state: ValidationState, planned: PlannedValidation) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # (a fresh interpreter: the server's threads stay here)
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_validate_in_child, args=(planned, send), daemon=True)
        with self._lock:
            if self._stopping.is_set():
                state.status, state.error = FAILED, "the app stopped before it ran"
                return
            planned.out_dir.parent.mkdir(parents=True, exist_ok=True)
            child.start()
            self._child, state.status = child, RUNNING
        send.close()
        child.join()
        try:
            error = receive.recv()  # (sent by a failed validation; a finished one closed the pipe)
        except EOFError:
            error = None
        finally:
            receive.close()
        with self._lock:
            self._child = None
            if child.exitcode == 0 and error is None:
                state.status = DONE
                return
            for leftover in planned.out_dir.parent.glob(f".{planned.out_dir.name}.*-{child.pid}-*.tmp"):
                shutil.rmtree(leftover, ignore_errors=True)  # (a stopped process leaves its staging folder)
            state.error, state.status = error or f"stopped (exit code {child.exitcode})", FAILED

    def state(self, validation_id: str) -> ValidationState | None:
        """The state of a validation submitted since the app started, or None."""
        with self._lock:
            return self._states.get(validation_id)

    def shutdown(self) -> None:
        """Stop the validation under way (its process terminated, nothing of it kept) and drop those queued."""
        with self._lock:
            self._stopping.set()
            child = self._child
        if child is not None:
            child.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)


def validation_result(sandbox: Sandbox, validation_id: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The table of a finished validation (``validation.csv``'s rows, numbers rounded to 4 significant digits, the
    deviation in %) and its figures' file names (PNG).

    Raises:
        SandboxError: an id that is no validation's folder name; OSError, ValueError: no readable result.
    """
    import pandas as pd

    from batreplay.ui.sandbox import SandboxError

    if not VALIDATION_ID.fullmatch(validation_id or ""):
        raise SandboxError(f"validation {validation_id!r}: not a validation's name")
    folder = sandbox.runs_dir / VALIDATIONS / validation_id
    table = pd.read_csv(folder / "validation.csv")
    rows = []
    for row in table.to_dict("records"):
        shown = {key: (f"{value:.4g}" if isinstance(value, float) and value == value else
                       ("-" if isinstance(value, float) else value)) for key, value in row.items()}
        if isinstance(row.get("deviation"), float) and row["deviation"] == row["deviation"]:
            shown["deviation"] = f"{100 * row['deviation']:+.1f} %"
        rows.append(shown)
    figures = sorted(path.name for path in (folder / "figures").glob("*.png"))
    return rows, figures
