"""The New-run form: its choices, taken from the registries, and its values turned into a run description.

:func:`form_choices` lists only what is valid: the cached Parallel Workloads Archive logs and the workload files
under the allowed folders, the shipped platforms and platform files, the scaled variants that
``batreplay platform --variants`` writes, node-type tables, the registered schedulers with their declared
options and defaults, the user models, and the engines (a real Batsim only when one is installed).

:func:`build_run` checks a filled form with the command line's own code (:class:`~batreplay.run.spec.RunSpec`,
:func:`~batreplay.schedulers.registry.check_scheduler_options`, the sandbox for every path: workload, platform, node
types, scheduler file, a speedup table in the scheduler options, a folder of session graphs) and returns the run
description with its identifier: the same form on the same input files gives the same identifier, so launching a
run twice reuses the first result. Scaled and node-type platforms are generated under the runs directory's
``platforms/`` folder, named by their content.

Generic fields: every run option declared with ``form=True`` (:func:`form_options`, from
:func:`batreplay.run.spec.run_options`: workload conversion, engine features...) gets a field that
:mod:`batreplay.ui.pages` builds from its declaration alone, and :func:`parse_option` reads its value with
:meth:`batreplay.options.Option.parse_text` (the command line's reading) before :class:`RunSpec` checks the whole
run: a new option declared for the form appears in it, and is checked, with no change here. The form sets the
other options (workload, platform, scheduler and its options, replay and sessions, engine) with controls of its
own.

:func:`save_upload` keeps an uploaded SWF or JSON workload under ``uploads/`` after reading it with the same
reader as ``batreplay run`` (a bad file is refused with that reader's one-line error, and not kept).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

from batreplay.campaign.spec import canonical_json
from batreplay.engine.choices import ENGINES
from batreplay.options import RUN_CONDUCT, Option, OptionError
from batreplay.platforms.generate import SCALED_VARIANTS, cluster_platform, scale_platform, write_platform_text
from batreplay.platforms.node_types import read_node_types_file
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.replay.registry import DEFAULT_SESSIONS, REGISTRY as USER_MODELS
from batreplay.run.spec import FLAT_FIELDS, RunSpec, RunSpecError, run_option, run_options
from batreplay.sitemodels.model_file import FORMAT_NAME as MODEL_FORMAT
from batreplay.sitemodels.model_file import is_site_model_file
from batreplay.ui.sandbox import MAX_PATH_CHARS, Sandbox, SandboxError
from batreplay.workloads.loading import WORKLOAD_SUFFIXES, WorkloadError, load_workload
from batreplay.workloads.pwa import PWA_CATALOGUE, cached_path, catalogue_entry

#: The platform as given (no scaling): the first choice of the variant list.
RECORDED = "recorded"
#: Largest uploaded workload, in bytes (the uncompressed HPC2N log is 22 MB; gzip logs are smaller).
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
UPLOADS = "uploads"
#: Where the Models page writes the site models it fits, under the runs directory.
MODELS = "models"
#: Largest JSON file read to tell whether it is a site model (a model of a hundred types of 50-bin histograms is
#: well under 1 MB); a larger one is taken for a Batsim workload.
MAX_MODEL_BYTES = 16 * 1024 * 1024
PLATFORMS = "platforms"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._+-]")
#: A whole number >= 1 as typed (at most 18 digits): the pattern the browser checks as the user types (the field
#: turns red) in an integer field whose option is at least 1 (:func:`number_pattern`), and in the Campaigns page's
#: workers field.
WHOLE_NUMBER = r"\s*0*[1-9][0-9]{0,17}\s*"
#: Longest JSON text of a field (the scheduler options, a JSON-object option such as speedup_options), in
#: characters. Its nesting is bounded by the JSON parser itself (:func:`batreplay.options.json_object`: too deep
#: is a one-line error).
MAX_OPTIONS_CHARS = 64 * 1024
#: Longest error message of a field, in characters (a message that quotes a long value is cut).
MAX_MESSAGE_CHARS = 400
#: Component id type of a generic field: ``{"type": OPTION_FIELD, "name": <option name>}`` (the launch callback
#: reads them all with Dash's ``ALL``).
OPTION_FIELD = "run-option"
#: The value of a ticked checkbox of a boolean option (Dash's Checklist sends the list of ticked values).
CHECKED = "on"
#: Largest .json file parsed (with :mod:`json`) to tell a Batsim workload from other JSON when the form lists files,
#: in bytes; a larger one is offered by its name, and the reader checks it when the form is sent.
JSON_PARSE_BYTES = 1024 * 1024
#: Top-level keys of a Batsim JSON workload (``{"nb_res": N, "jobs": [...], "profiles": {...}}``).
WORKLOAD_KEYS = frozenset({"nb_res", "jobs", "profiles"})
#: Largest TOML file read to tell a node-type table (those are a few lines long).
MAX_NODE_TYPES_BYTES = 1024 * 1024
#: The index of a folder of session graphs (``batreplay sessions``).
SESSIONS_INDEX = "index.json"
#: Names of JSON files that batreplay writes itself (a run's record and metrics, a campaign's manifest and
#: instances, a folder of session graphs' index and statistics): never offered as workloads.
OWN_JSON_NAMES = frozenset({"run.json", "metrics.json", "instance.json", "campaign.json", SESSIONS_INDEX,
                            "statistics.json"})
#: Endings of the JSON files batreplay writes beside run directories (failure records, progress).
OWN_JSON_ENDINGS = (".failed.json", ".progress.json")
#: Files that mark a folder batreplay wrote (a run directory, a campaign instance, a folder of session graphs):
#: none of its JSON files is offered (a run's ``workload.json``, the graphs' ``user_<id>.json``).
OWN_FOLDER_MARKERS = ("run.json", "instance.json", SESSIONS_INDEX)
#: How the form groups the generic fields: the part of a run each option belongs to, in words.
PART_TITLES = {"conversion": "Workload conversion", "scheduler": "Scheduler", "replay": "User model",
               "engine": "Engine features", "metrics": "Metrics", "run": "Run", "fit": "Fit options",
               "validation": "Validation"}


class FormError(ValueError):
    """A form value the run cannot use; the message names the field, in one line."""


@cache
def form_options() -> tuple[tuple[Option, str], ...]:
    """The run options the form shows as generic fields, ``(declaration, part)`` in the order of
    :func:`~batreplay.run.spec.run_options`: those declared ``form=True``; ``part`` is the part of the run that the
    option sets (``conversion``, ``engine``...: a key of :data:`PART_TITLES`; ``run`` for the run's own)."""
    return tuple((declaration, FLAT_FIELDS.get(declaration.name, ("run", ""))[0])
                 for declaration in run_options() if declaration.form)


def field_name(declaration: Option) -> str:
    """How the form and its messages name an option's field: its name in words (``max jobs``)."""
    return declaration.name.replace("_", " ")


def option_label(declaration: Option) -> str:
    """The label of an option's field: its name in words, capitalised, with the unit of a number (``Recorded speed
    (flop/s)``) or what a JSON field takes (``Speedup options (JSON object)``)."""
    label = field_name(declaration).capitalize()
    if declaration.unit:
        label += f" ({declaration.unit})"
    if declaration.kind is dict:
        label += " (JSON object)"
    return label


def option_tooltip(declaration: Option) -> str:
    """The tooltip of an option's field: its help text, with its unit, bounds and default (as ``--help`` says it)."""
    return declaration.help_text().replace("%%", "%")  # (help_text escapes % for argparse)


def number_pattern(declaration: Option) -> str | None:
    """The pattern (an HTML ``pattern``, a JavaScript regular expression matching the whole text) that the page
    checks a number field against as the user types, from the option's kind and lower bound: a whole number for an
    ``int`` (:data:`WHOLE_NUMBER` when it is at least 1, no sign when at least 0), a decimal number with an optional
    exponent for a ``float`` (no sign when the lower bound is 0 or more; a non-zero digit when it must be above 0);
    None for an option that is no number. The server checks the value again, bounds included
    (:meth:`~batreplay.options.Option.parse_text`): the pattern only turns the field red early."""
    if declaration.kind not in (int, float):
        return None
    low = max([bound for bound in (declaration.at_least, declaration.above) if bound is not None], default=None)
    positive = low is not None and (low > 0 or (declaration.above is not None and declaration.above >= 0))
    sign = "" if low is not None and low >= 0 else "-?"
    if declaration.kind is int:
        if positive:
            return WHOLE_NUMBER
        return rf"\s*{sign}[0-9]{{1,18}}\s*"
    nonzero = "(?=[0-9.]*[1-9])" if positive else ""
    return rf"\s*{sign}{nonzero}(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?:\+|-)?[0-9]+)?\s*"


@dataclass(frozen=True, init=False)
class RunForm:
    """The values of the New-run form, as the browser sends them (text, or None when left empty).

    Attributes:
        workload: a catalogue log name (cached), or a file path under the allowed folders (an uploaded file is
            one, under ``uploads/``).
        platform: a shipped platform name or a SimGrid file under the allowed folders (ignored with node_types).
        variant: :data:`RECORDED` or a key of :data:`batreplay.platforms.generate.SCALED_VARIANTS` (node count or
            speed x2, /2).
        node_types: a node-type table (TOML, ``batreplay platform --node-types``) under the allowed folders, or
            None.
        scheduler: a registered scheduler name, or a pybatsim scheduler file under the allowed folders.
        scheduler_options: the scheduler's options as a JSON object (text), or None for the defaults.
        replay: a user model name (``rigid``, ``feedback``).
        sessions: the session rule of a feedback replay (``arrival:60``...), or a folder of session graphs
            (``batreplay sessions``) under the allowed folders.
        engine: ``embedded`` or ``batsim``.
        options: the generic fields (:func:`form_options`) by option name: the text typed or chosen (``"2000"``,
            ``"table"``, ``'{"seed": 1}'``), True or False for a checkbox, None or blank for the option's default;
            an option left out takes its default too.

    ``RunForm(workload=..., max_jobs="500")`` is ``RunForm(workload=..., options={"max_jobs": "500"})``: the name of
    a generic field may be given as a keyword.

    Raises:
        TypeError: a keyword that is neither a field nor a generic field's option.
    """

    workload: str | None = None
    platform: str | None = "kth-sp2"
    variant: str | None = RECORDED
    node_types: str | None = None
    scheduler: str | None = "easy"
    scheduler_options: str | None = None
    replay: str | None = "rigid"
    sessions: str | None = DEFAULT_SESSIONS
    engine: str | None = "embedded"
    options: dict[str, str | bool | None] = field(default_factory=dict)

    def __init__(self, workload: str | None = None, *, options: dict[str, str | bool | None] | None = None,
                 **values: Any) -> None:
        special = {item.name: item.default for item in fields(RunForm) if item.name not in ("workload", "options")}
        generic = {declaration.name for declaration, _part in form_options()}
        unknown = sorted(set(values) - set(special) - generic)
        if unknown:
            raise TypeError(f"RunForm: no field or form option {', '.join(unknown)}")
        object.__setattr__(self, "workload", workload)
        for name, default in special.items():
            object.__setattr__(self, name, values.get(name, default))
        object.__setattr__(self, "options", {**(options or {}),
                                             **{name: value for name, value in values.items() if name in generic}})


def form_values(ids: Any, values: Any,
                declarations: tuple[Option, ...] | None = None) -> dict[str, str | bool | None]:
    """The generic fields' values as the browser sent them, for :attr:`RunForm.options` (or another form's fields).

    Args:
        ids: the fields' component ids, ``[{"type": OPTION_FIELD, "name": <option name>}, ...]``.
        values: their values, in the same order: a checkbox sends the list of its ticked values (``["on"]`` or
            ``[]``), which becomes True or False; anything else becomes text (None stays None).
        declarations: the options the form's fields are of; None: the New-run form's (:func:`form_options`).

    Ids that name no generic field are dropped, and ids or values that are no lists give no value (a browser can
    send anything).
    """
    if declarations is None:
        declarations = tuple(declaration for declaration, _part in form_options())
    declared = {declaration.name: declaration for declaration in declarations}
    found: dict[str, str | bool | None] = {}
    if not isinstance(ids, list) or not isinstance(values, list):
        return found
    for ident, value in zip(ids, values):
        name = ident.get("name") if isinstance(ident, dict) else None
        if name not in declared:
            continue
        if declared[name].kind is bool and isinstance(value, list):
            found[name] = CHECKED in value
        else:
            found[name] = value if value is None or isinstance(value, str) else str(value)
    return found


@dataclass(frozen=True)
class PlannedRun:
    """A checked form: the run's identifier (its directory's name under the runs directory) and description."""

    run_id: str
    spec: RunSpec


def scheduler_options_text(name: str) -> str:
    """The declared options of the registered scheduler ``name`` with their defaults, as the JSON text the form
    starts with (``{}`` for a scheduler file or one without options)."""
    from batreplay.schedulers.registry import SCHEDULERS

    declared = getattr(SCHEDULERS.get(name), "OPTIONS", {})
    return json.dumps({key: default for key, (default, _doc) in declared.items()}, indent=1)


def written_by_batreplay(path: Path) -> bool:
    """True when the JSON file ``path`` is one that batreplay writes itself: by its name (:data:`OWN_JSON_NAMES`,
    :data:`OWN_JSON_ENDINGS`), or by its folder, one that batreplay wrote (a run directory, a campaign instance, a
    folder of session graphs: :data:`OWN_FOLDER_MARKERS`)."""
    name = path.name.lower()
    if name in OWN_JSON_NAMES or name.endswith(OWN_JSON_ENDINGS):
        return True
    return any((path.parent / marker).is_file() for marker in OWN_FOLDER_MARKERS)


def is_workload_file(path: Path) -> bool:
    """True when ``path`` is a workload the form may offer: an SWF log by its name (``.swf``, ``.swf.gz``), or a
    ``.json`` file that batreplay did not write (:func:`written_by_batreplay`) and that is, when it has at most
    :data:`JSON_PARSE_BYTES`, a JSON object with a key of a Batsim workload (:data:`WORKLOAD_KEYS`), read with
    :mod:`json`. A larger ``.json`` file is offered by its name alone, unread: the workload reader
    (:func:`~batreplay.workloads.loading.load_workload`) checks it when the form is sent, and refuses anything that is
    no Batsim workload in one line."""
    name = path.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        return True
    if not name.endswith(".json") or written_by_batreplay(path):
        return False
    try:
        if path.stat().st_size > JSON_PARSE_BYTES:
            return True
        document = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # (unreadable, not JSON, nested too deeply for the parser)
        return False
    return isinstance(document, dict) and (bool(WORKLOAD_KEYS & document.keys())
                                           or document.get("format") == MODEL_FORMAT)


#: Bytes read from the start of a ``.json`` file to tell, for a list, whether it is a site model: the model files
#: batreplay writes begin with their ``format`` (:func:`looks_like_site_model`).
MODEL_PEEK_BYTES = 256


def looks_like_site_model(path: Path) -> bool:
    """True when the ``.json`` file ``path`` begins as a site model file written by batreplay (its first
    :data:`MODEL_PEEK_BYTES` bytes name its ``format``): a peek for the lists, which never parse a large workload.
    A model edited by hand in another key order is not listed, but is taken by path (:func:`is_site_model`)."""
    if not path.name.lower().endswith(".json"):
        return False
    try:
        with open(path, "rb") as stream:
            start = stream.read(MODEL_PEEK_BYTES)
    except OSError:
        return False
    return re.match(rb'\s*\{\s*"format"\s*:\s*"' + MODEL_FORMAT.encode() + rb'"', start) is not None


def is_site_model(path: Path) -> bool:
    """True when ``path`` is a ``.json`` file of at most :data:`MAX_MODEL_BYTES` that is a site model
    (:func:`~batreplay.sitemodels.model_file.is_site_model_file`); a larger one is taken for a Batsim workload,
    unread."""
    try:
        small = path.stat().st_size <= MAX_MODEL_BYTES
    except OSError:
        return False
    return small and path.name.lower().endswith(".json") and is_site_model_file(path)


def is_node_types_file(path: Path) -> bool:
    """True when ``path`` is a node-type table (``batreplay platform --node-types``): a TOML file of at most
    :data:`MAX_NODE_TYPES_BYTES` whose top level has ``node_types`` (a campaign file has not)."""
    try:
        if path.stat().st_size > MAX_NODE_TYPES_BYTES:
            return False
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(document.get("node_types"), list)


def form_choices(sandbox: Sandbox) -> dict[str, list[dict[str, str]]]:
    """Every choice of the form, as ``{field: [{"label": ..., "value": ...}]}`` lists (Dash's option format).

    Keys: ``workload`` (cached catalogue logs, then the workload files under the allowed folders:
    :func:`is_workload_file`), ``platform``, ``variant``, ``node_types`` (:func:`is_node_types_file`), ``scheduler``
    (the registry's, each with its one-line description, then the ``.py`` files under the allowed folders, as
    pybatsim scheduler files), ``replay``, ``engine``. Of the runs folder only the uploads are offered: the rest is
    the app's own output (run directories, failure records, generated platforms, campaigns)."""
    from batreplay.realbatsim.errors import BatsimNotFound
    from batreplay.realbatsim.process import find_batsim
    from batreplay.schedulers.registry import SCHEDULERS, describe

    workloads = [{"label": f"{entry.name} (cached log)", "value": entry.name} for entry in PWA_CATALOGUE.values()
                 if cached_path(entry).is_file()]
    workloads += [{"label": sandbox.shown(path) + (" (site model)" if looks_like_site_model(path) else ""),
                   "value": str(path)}
                  for path in sandbox.files(WORKLOAD_SUFFIXES, accept=is_workload_file, own=(UPLOADS, MODELS))]
    platforms = [{"label": f"{name} (shipped)", "value": name} for name in SHIPPED_PLATFORMS]
    platforms += [{"label": sandbox.shown(path), "value": str(path)} for path in sandbox.files((".xml",))]
    variants = [{"label": "as recorded", "value": RECORDED}]
    variants += [{"label": f"{name} (nodes x{nodes:g}, speed x{speed:g})", "value": name}
                 for name, (nodes, speed) in SCALED_VARIANTS.items()]
    node_types = [{"label": sandbox.shown(path), "value": str(path)}
                  for path in sandbox.files((".toml",), accept=is_node_types_file)]
    schedulers = [{"label": f"{name}: {describe(name)}", "value": name} for name in SCHEDULERS]
    schedulers += [{"label": f"scheduler file {sandbox.shown(path)}", "value": str(path)}
                   for path in sandbox.files((".py",))]  # pybatsim scheduler files (BatsimScheduler subclasses)
    replays = [{"label": f"{name}: {entry.summary}", "value": name} for name, entry in USER_MODELS.items()]
    engines = [{"label": "embedded (Batsim 4.2.1 exact, in-process)", "value": "embedded"}]
    try:
        engines.append({"label": f"real Batsim ({find_batsim()})", "value": "batsim"})
    except BatsimNotFound:
        pass
    return {"workload": workloads, "platform": platforms, "variant": variants, "node_types": node_types,
            "scheduler": schedulers, "replay": replays, "engine": engines}


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def whole_number(value: Any, field: str, *, empty: str) -> int | None:
    """``value`` as a whole number >= 1, or None when it is blank: an int, or text matching :data:`WHOLE_NUMBER`
    (the pattern the page's field has). For the fields that are no run option (the Campaigns page's workers).

    Raises:
        FormError: anything else (``2.5``, ``-5``, ``1e3``, ``0``), naming ``field`` and saying that ``empty`` is
            what a blank field means.
    """
    if _blank(value):
        return None
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(WHOLE_NUMBER, value):
        number = int(value)
    if number is None or number < 1:
        shown = value if isinstance(value, str) and len(value) <= 40 else f"{str(value)[:40]}..."
        raise FormError(f"{field}: {shown!r} is not a whole number >= 1: give one (or leave it empty for {empty})")
    return number


def _workload(form: RunForm, sandbox: Sandbox) -> Path:
    if _blank(form.workload):
        raise FormError("workload: choose a log, give a path or upload a file")
    entry = catalogue_entry(form.workload)
    if entry is not None and cached_path(entry).is_file():  # a log fetched with batreplay fetch
        return cached_path(entry)
    path = sandbox.resolve(form.workload, "workload")
    if not path.name.lower().endswith(WORKLOAD_SUFFIXES):
        raise FormError(f"workload: {path.name} is not a .swf, .swf.gz or .json file")
    return path


def _generated_platform(sandbox: Sandbox, stem: str, text: str) -> Path:
    """Write a generated platform under ``platforms/``, named by its content (written once)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    path = sandbox.runs_dir / PLATFORMS / f"{_SAFE_NAME.sub('-', stem)}-{digest}.xml"
    if not path.is_file():
        write_platform_text(path, text)  # (atomically, its folder created)
    return path


def _platform(form: RunForm, sandbox: Sandbox) -> str:
    """The platform of the run: a shipped name, or a file (given, or generated for node types or a variant)."""
    variant = form.variant if not _blank(form.variant) else RECORDED
    if variant != RECORDED and variant not in SCALED_VARIANTS:
        raise FormError(f"platform variant: {variant!r} is not one of {RECORDED}, {', '.join(SCALED_VARIANTS)}")
    if not _blank(form.node_types):
        table = sandbox.resolve(form.node_types, "node types")
        try:
            machine = read_node_types_file(table)  # the types, and [storage] for I/O
            source_text = cluster_platform(node_types=machine.node_types, storage_rate=machine.storage_rate)
        except ValueError as err:
            raise FormError(f"node types: {err}") from None
        source: str | Path = _generated_platform(sandbox, table.stem, source_text)
    elif _blank(form.platform):
        raise FormError("platform: choose a shipped platform or a platform file")
    elif form.platform in SHIPPED_PLATFORMS:
        source = form.platform
    else:
        source = sandbox.resolve(form.platform, "platform")
    if variant == RECORDED:
        return str(source)
    nodes, speed = SCALED_VARIANTS[variant]
    path = SHIPPED_PLATFORMS.get(str(source), source)
    try:
        text = scale_platform(path, nodes, speed)
    except ValueError as err:
        raise FormError(f"platform variant {variant}: {err}") from None
    return str(_generated_platform(sandbox, f"{Path(path).stem}-{variant}", text))


def _reason(err: OptionError, declaration: Option) -> str:
    """The message of ``err`` without the option's name and flag that it starts with (the form names the field
    its own way), cut to :data:`MAX_MESSAGE_CHARS`."""
    text = str(err)
    for prefix in (declaration.label, declaration.cli_flag):
        if text.startswith(prefix):
            text = text[len(prefix):].lstrip(": ")
            break
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."


def _speedup_table(options: dict[str, Any], what: str, sandbox: Sandbox) -> dict[str, Any]:
    """A speedup model's options (``{"table": "speedups.csv", ...}``) with the table file, when it names one,
    resolved under the allowed folders (its real path, absolute).

    Raises:
        SandboxError: a table outside the allowed folders or missing (the message names ``what``).
    """
    if not isinstance(options.get("table"), str):
        return options
    return {**options, "table": str(sandbox.resolve(options["table"], what))}


#: Options whose JSON object names files, and how the form holds them to the allowed folders: the value, and the
#: sandbox, to the value with its paths resolved.
PATHS_INSIDE = {
    "speedup_options": lambda value, sandbox: _speedup_table(value, "speedup options, table", sandbox),
}


def parse_option(declaration: Option, value: str | bool | None, sandbox: Sandbox) -> Any:
    """The value of a generic field, read as the command line reads its flag
    (:meth:`~batreplay.options.Option.parse_text`: a number, true or false, a JSON object, one of the choices);
    the file a ``Path`` option names, and those named inside a JSON object (:data:`PATHS_INSIDE`), resolved under
    the allowed folders. A blank field is not given to this function: the option then takes its default.

    Raises:
        FormError: a text longer than :data:`MAX_OPTIONS_CHARS` (a JSON object) or :data:`MAX_PATH_CHARS`
            (anything else), or a value the option refuses: one line, starting with the field's name
            (``max jobs: '2.5' is not an integer``); SandboxError: a path outside the allowed folders or missing.
    """
    name = field_name(declaration)
    limit = MAX_OPTIONS_CHARS if declaration.kind is dict else MAX_PATH_CHARS
    if isinstance(value, str) and len(value) > limit:
        raise FormError(f"{name}: {len(value):,} characters, more than the {limit:,} allowed")
    try:
        parsed = declaration.parse_text(value)
    except OptionError as err:
        raise FormError(f"{name}: {_reason(err, declaration)}") from None
    if declaration.kind is Path and parsed is not None:
        parsed = sandbox.resolve(str(parsed), name)
    if declaration.name in PATHS_INSIDE and isinstance(parsed, dict):
        parsed = PATHS_INSIDE[declaration.name](parsed, sandbox)
    return parsed


def read_fields(declarations: tuple[Option, ...], texts: dict[str, str | bool | None],
                sandbox: Sandbox) -> dict[str, Any]:
    """The values of the generic fields of ``declarations`` that are not blank in ``texts`` (:func:`form_values`),
    by option name (:func:`parse_option`).

    Raises:
        FormError: a value its option refuses (the field named); SandboxError: a path outside the allowed folders.
    """
    return {declaration.name: parse_option(declaration, texts[declaration.name], sandbox)
            for declaration in declarations if not _blank(texts.get(declaration.name))}


def _generic_options(form: RunForm, sandbox: Sandbox) -> dict[str, Any]:
    """The values of the New-run form's generic fields that are not blank, by option name (:func:`read_fields`)."""
    return read_fields(tuple(declaration for declaration, _part in form_options()), form.options, sandbox)


def _scheduler_options(text: str | None, sandbox: Sandbox) -> dict[str, Any]:
    """The scheduler options typed as a JSON object (``{}`` when blank), read as ``--scheduler-options`` is
    (:func:`batreplay.options.json_object`), with the speedup table a co-scheduling scheduler reads
    (``speedup_options.table``) resolved under the allowed folders.

    Raises:
        FormError: text longer than :data:`MAX_OPTIONS_CHARS`, not JSON, nested too deeply for the JSON parser,
            or no JSON object (one line, never a crash of the parser);
        SandboxError: a speedup table outside the allowed folders or missing.
    """
    if _blank(text):
        return {}
    if len(text) > MAX_OPTIONS_CHARS:
        raise FormError(f"scheduler options: {len(text):,} characters, more than the {MAX_OPTIONS_CHARS:,} allowed: "
                        "give a JSON object of the scheduler's options")
    declaration = run_option("scheduler_options")
    try:
        options = declaration.parse_text(text)
    except OptionError as err:
        raise FormError(f"scheduler options: {_reason(err, declaration)}") from None
    speedup = options.get("speedup_options")
    if isinstance(speedup, dict):
        options = {**options, "speedup_options": _speedup_table(speedup, "scheduler options, speedup_options table",
                                                                sandbox)}
    return options


def chosen_scheduler(scheduler: str | None, options_text: str | None, sandbox: Sandbox) -> tuple[str, dict[str, Any]]:
    """The scheduler a form names (a registered name, or a pybatsim scheduler file under the allowed folders) and its
    options (the JSON text of its field, :func:`_scheduler_options`), checked against what a built-in declares.

    Raises:
        FormError: no scheduler, or options it refuses; SandboxError: a file outside the allowed folders.
    """
    from batreplay.schedulers.names import SCHEDULER_NAMES
    from batreplay.schedulers.registry import check_scheduler_options

    name = (scheduler or "").strip()
    if not name:
        raise FormError("scheduler: choose one")
    if name not in SCHEDULER_NAMES:
        name = str(sandbox.resolve(name, "scheduler file"))
    options = _scheduler_options(options_text, sandbox)
    try:
        check_scheduler_options(name, options)
    except ValueError as err:
        raise FormError(f"scheduler options: {err}") from None
    return name, options


def _session_folder(text: str, sandbox: Sandbox) -> Path:
    """The folder of session graphs ``text`` names (or its ``index.json``), under the allowed folders, holding an
    ``index.json`` and no link that leads out of them.

    Raises:
        SandboxError: outside the allowed folders (the same message whether it exists or not), or missing;
            FormError: no ``index.json`` in it, or a file of it that is a link leading out.
    """
    if Path(text).name == SESSIONS_INDEX:
        folder = sandbox.resolve(text, "sessions").parent
    else:
        folder = sandbox.resolve(text, "sessions", kind="dir")
    index = folder / SESSIONS_INDEX
    if not (sandbox.contains(index) and index.is_file()):
        raise FormError(f"sessions: {text} has no {SESSIONS_INDEX}: give a folder written by 'batreplay sessions' "
                        "or a rule such as arrival:60")
    for entry in os.scandir(folder):
        if entry.is_symlink() and not sandbox.contains(Path(entry.path)):
            raise FormError(f"sessions: {text}/{entry.name} is a link leading outside the folders this app may "
                            "read: give a folder whose files are inside them")
    return folder


def _sessions(value: str | None, sandbox: Sandbox) -> str:
    """The sessions of a feedback replay: a rule (``arrival:60``, ``a60``) as typed, or the real path of a folder of
    session graphs under the allowed folders (a text with a separator, or one that is no rule).

    Raises:
        FormError, SandboxError: neither a rule nor such a folder (the message names the field ``sessions``).
    """
    from batreplay.replay.session_source import EXPECTED_SESSIONS, session_rule

    text = (value or "").strip()
    if not text:
        return DEFAULT_SESSIONS
    if len(text) > MAX_PATH_CHARS:
        raise FormError(f"sessions: {len(text):,} characters: {EXPECTED_SESSIONS}")
    rule_error = None
    if "/" not in text and "\\" not in text:
        try:
            session_rule(text)
            return text
        except ValueError as err:
            rule_error = err
    try:
        return str(_session_folder(text, sandbox))
    except SandboxError as err:
        if rule_error is not None and "not found" in str(err):  # (inside the allowed folders: nothing to hide)
            raise FormError(f"sessions: {text!r} is not a rule ({rule_error}) nor a folder of the allowed "
                            f"folders; {EXPECTED_SESSIONS}") from None
        raise


def speedup_tables(spec: RunSpec) -> list[str]:
    """The speedup table files a run reads (the engine's model's, the scheduler's own), each once, in that order."""
    own = spec.scheduler.options.get("speedup_options")  # (anything for a scheduler file)
    tables = [spec.engine.speedup_options.get("table"), own.get("table") if isinstance(own, dict) else None]
    return list(dict.fromkeys(table for table in tables if isinstance(table, str)))


def _check_source(workload: Path, replay: str, given: dict[str, Any]) -> None:
    """A site model's replays (closed, open) take a site model file, the others a log or workload; a site model's
    jobs are drawn, so it takes none of the workload conversion's fields away from their defaults (``given``: the
    generic fields filled in, read).

    Raises:
        FormError: the workload is not of the replay's kind (both named), or a conversion field given with a model.
    """
    if replay not in USER_MODELS:
        return  # (RunSpec names an unknown model)
    model = is_site_model(workload)
    conversion = [declaration for declaration, part in form_options()  # (a choice list always sends a value)
                  if part == "conversion" and given.get(declaration.name, declaration.default) != declaration.default]
    if model and conversion:
        raise FormError(f"{field_name(conversion[0])}: {workload.name} is a site model, whose jobs are drawn, not "
                        "converted: leave the workload conversion's fields empty")
    if model and USER_MODELS[replay].source == "log":
        drawn = ", ".join(name for name, entry in USER_MODELS.items() if entry.source == "site-model")
        raise FormError(f"workload: {workload.name} is a site model, whose jobs are drawn: choose the replay "
                        f"{' or '.join(drawn.split(', '))}")
    if not model and USER_MODELS[replay].source == "site-model":
        raise FormError(f"replay: {replay} draws its jobs from a site model (batreplay model fit, or the Models "
                        f"page): choose a model file as the workload, not {workload.name}")


def build_run(form: RunForm, sandbox: Sandbox) -> PlannedRun:
    """Check ``form`` and describe its run (directory ``<runs dir>/<run id>``).

    The identifier is ``<log>-<scheduler>-<hash>``: the hash (12 hex digits of a SHA-256) covers the run
    description and the SHA-256 of the workload and platform files (and of the speedup tables, when the run
    reads any), so the same form on the same files names the same run, and a changed file names a new one.
    The label (:attr:`RunSpec.label`) is no part of what is simulated and stays out of that hash: a labelled run
    is ``<log>-<scheduler>-<hash>-l<label hash>`` (8 hex digits of the label's SHA-256), so the same form with the
    same label reuses its run, and another label runs the same simulation again into a folder of its own (each
    ``run.json`` keeping its own label) rather than showing a finished run under a label it was not given.

    The generic fields (:attr:`RunForm.options`) are read by :func:`parse_option`, then the whole run is checked
    by :meth:`RunSpec.build`, as ``batreplay run`` checks its flags.

    Raises:
        FormError: a field the run cannot use (the message names it); SandboxError: a path outside the allowed
            folders or missing.
    """
    from batreplay.workloads.pwa import file_sha256

    workload = _workload(form, sandbox)
    platform = _platform(form, sandbox)
    scheduler, options = chosen_scheduler(form.scheduler, form.scheduler_options, sandbox)
    engine = form.engine or "embedded"
    if engine not in ENGINES:
        raise FormError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
    replay = form.replay or "rigid"
    flat: dict[str, Any] = {"replay": replay, "engine": engine, "scheduler_options": options,
                            **_generic_options(form, sandbox)}
    _check_source(workload, replay, flat)
    if replay in USER_MODELS and USER_MODELS[replay].uses_sessions:
        flat["sessions"] = _sessions(form.sessions, sandbox)
    try:
        draft = RunSpec.build(workload=workload, platform=platform, scheduler=scheduler, out_dir=sandbox.runs_dir,
                              **flat)
    except (RunSpecError, ValueError) as err:
        raise FormError(str(err)) from None
    platform_file = SHIPPED_PLATFORMS.get(platform, Path(platform))
    described = {key: value for key, value in draft.to_dict().items()
                 if key not in RUN_CONDUCT}
    described["inputs"] = [file_sha256(workload), file_sha256(platform_file)]
    described["inputs"] += [file_sha256(Path(table)) for table in speedup_tables(draft)]
    digest = hashlib.sha256(canonical_json(described).encode("ascii")).hexdigest()[:12]
    stem = workload.name.lower()
    for suffix in (".gz", ".swf", ".json"):
        stem = stem.removesuffix(suffix)
    run_id = _SAFE_NAME.sub("-", f"{stem}-{Path(scheduler).stem}-{digest}")
    if draft.label is not None:
        run_id += "-l" + hashlib.sha256(draft.label.encode("utf-8")).hexdigest()[:8]
    return PlannedRun(run_id, draft.replace(out_dir=str(sandbox.runs_dir / run_id), force=True))


def save_upload(sandbox: Sandbox, filename: str, contents: str, *, limit: int = MAX_UPLOAD_BYTES) -> Path:
    """Keep an uploaded workload (Dash's ``data:...;base64,...`` text) as ``uploads/<hash>-<name>`` after
    reading it with :func:`batreplay.workloads.loading.load_workload`, as ``batreplay run`` would.

    Raises:
        FormError: a name without a workload ending, a file above ``limit`` bytes, contents that are not base64,
            or a file the reader refuses (its one-line message, naming file, line and field).
    """
    name = Path(filename or "").name
    if not name.lower().endswith(WORKLOAD_SUFFIXES):
        raise FormError(f"upload {name or '(no name)'}: expected a .swf, .swf.gz or .json file")
    _header, _comma, payload = (contents or "").partition(",")
    if len(payload) * 3 // 4 > limit:
        raise FormError(f"upload {name}: larger than the limit of {limit // (1024 * 1024)} MB")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise FormError(f"upload {name}: the browser sent no readable file") from None
    if len(data) > limit:
        raise FormError(f"upload {name}: larger than the limit of {limit // (1024 * 1024)} MB")
    folder = sandbox.runs_dir / UPLOADS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(data).hexdigest()[:12]}-{_SAFE_NAME.sub('-', name)}"
    checking = folder / f".checking-{path.name}"  # hidden until read; same ending, so the same reader applies
    checking.write_bytes(data)
    try:
        load_workload(checking)
    except (WorkloadError, ValueError) as err:
        checking.unlink(missing_ok=True)
        raise FormError(f"upload {name}: {str(err).replace(str(checking), name)}") from None
    checking.replace(path)
    return path
