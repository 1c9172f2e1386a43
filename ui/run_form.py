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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batreplay.campaign.spec import canonical_json
from batreplay.engine.choices import ENGINES
from batreplay.platforms.generate import SCALED_VARIANTS, cluster_platform, scale_platform, write_platform_text
from batreplay.platforms.node_types import read_node_types
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.replay.registry import DEFAULT_SESSIONS, REGISTRY as USER_MODELS
from batreplay.run.spec import RunSpec, RunSpecError
from batreplay.ui.sandbox import MAX_PATH_CHARS, Sandbox, SandboxError
from batreplay.workloads.loading import WORKLOAD_SUFFIXES, WorkloadError, load_workload
from batreplay.workloads.pwa import PWA_CATALOGUE, cached_path, catalogue_entry

#: The platform as given (no scaling): the first choice of the variant list.
RECORDED = "recorded"
#: Largest uploaded workload, in bytes (the uncompressed HPC2N log is 22 MB; gzip logs are smaller).
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
UPLOADS = "uploads"
PLATFORMS = "platforms"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._+-]")
#: A whole number >= 1 as typed (at most 18 digits): the pattern the browser checks as the user types
#: (the field turns red) and the server checks again when the form is sent.
WHOLE_NUMBER = r"\s*0*[1-9][0-9]{0,17}\s*"
#: Longest scheduler options text, in characters, and deepest nesting of its JSON arrays and objects.
MAX_OPTIONS_CHARS = 64 * 1024
MAX_OPTIONS_DEPTH = 32
#: How much of a .json file is read to tell a Batsim workload (the file is never read whole to list it).
JSON_PEEK_BYTES = 64 * 1024
#: Top-level keys of a Batsim JSON workload (``{"nb_res": N, "jobs": [...], "profiles": {...}}``).
WORKLOAD_KEYS = frozenset({"nb_res", "jobs", "profiles"})
#: Largest TOML file read to tell a node-type table (those are a few lines long).
MAX_NODE_TYPES_BYTES = 1024 * 1024
#: The index of a folder of session graphs (``batreplay sessions``).
SESSIONS_INDEX = "index.json"
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_JSON_COLON = re.compile(r"\s*:")


class FormError(ValueError):
    """A form value the run cannot use; the message names the field, in one line."""


@dataclass(frozen=True)
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
        max_jobs: simulate only the first jobs (a whole number >= 1: :data:`WHOLE_NUMBER` as text), or None for
            all.
        engine: ``embedded`` or ``batsim``.
    """

    workload: str | None
    platform: str | None = "kth-sp2"
    variant: str | None = RECORDED
    node_types: str | None = None
    scheduler: str | None = "easy"
    scheduler_options: str | None = None
    replay: str | None = "rigid"
    sessions: str | None = DEFAULT_SESSIONS
    max_jobs: int | float | str | None = None
    engine: str | None = "embedded"


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


def json_top_level_keys(path: Path, limit: int = JSON_PEEK_BYTES) -> set[str]:
    """The keys of the top-level JSON object of ``path`` seen in its first ``limit`` bytes (a peek: a large file
    is not read whole); empty when the file does not start with an object or cannot be read."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(limit).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    except OSError:
        return set()
    if not head.startswith("{"):
        return set()
    keys: set[str] = set()
    depth = 0
    for token in _JSON_TOKEN.finditer(head):
        text = token.group()
        if text in ("{", "["):
            depth += 1
        elif text in ("}", "]"):
            depth -= 1
            if depth == 0:
                break  # the end of the top-level object
        elif depth == 1 and _JSON_COLON.match(head, token.end()):
            try:
                keys.add(json.loads(text))
            except ValueError:
                pass
    return keys


def is_workload_file(path: Path) -> bool:
    """True when ``path`` is a workload the form may offer: an SWF log by its name (``.swf``, ``.swf.gz``), or a
    ``.json`` file whose top-level object has a key of a Batsim workload (:data:`WORKLOAD_KEYS`) in its first
    :data:`JSON_PEEK_BYTES` (a run's ``metrics.json`` or ``instance.json`` has none)."""
    name = path.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        return True
    return name.endswith(".json") and bool(WORKLOAD_KEYS & json_top_level_keys(path))


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
    from batreplay.engine.batsim_launcher import BatsimNotFound, find_batsim
    from batreplay.schedulers.registry import SCHEDULERS, describe

    workloads = [{"label": f"{entry.name} (cached log)", "value": entry.name} for entry in PWA_CATALOGUE.values()
                 if cached_path(entry).is_file()]
    workloads += [{"label": sandbox.shown(path), "value": str(path)}
                  for path in sandbox.files(WORKLOAD_SUFFIXES, accept=is_workload_file, own=(UPLOADS,))]
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
    (the pattern the page's field has).

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


def _max_jobs(value: int | float | str | None) -> int | None:
    return whole_number(value, "max jobs", empty="every job")


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
            source_text = cluster_platform(node_types=read_node_types(table))
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


def _nesting(value: Any) -> int:
    """How deeply JSON arrays and objects nest in ``value`` (0 for a scalar), counted without recursion; the count
    stops once above :data:`MAX_OPTIONS_DEPTH`."""
    deepest, stack = 0, [(value, 1)]
    while stack and deepest <= MAX_OPTIONS_DEPTH:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _scheduler_options(text: str | None, sandbox: Sandbox) -> Any:
    """The scheduler options typed as JSON (``{}`` when blank), with the speedup table a co-scheduling scheduler
    reads (``speedup_options.table``) resolved under the allowed folders.

    Raises:
        FormError: text longer than :data:`MAX_OPTIONS_CHARS`, not JSON, or nested deeper than
            :data:`MAX_OPTIONS_DEPTH` (as a one-line message, never a crash of the parser);
        SandboxError: a speedup table outside the allowed folders or missing.
    """
    if _blank(text):
        return {}
    if len(text) > MAX_OPTIONS_CHARS:
        raise FormError(f"scheduler options: {len(text):,} characters, more than the {MAX_OPTIONS_CHARS:,} allowed: "
                        "give a JSON object of the scheduler's options")
    too_deep = False
    try:
        options = json.loads(text)
        too_deep = _nesting(options) > MAX_OPTIONS_DEPTH
    except json.JSONDecodeError as err:
        raise FormError(f"scheduler options: not JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    except RecursionError:  # (nested too deeply for the parser itself)
        too_deep = True
    if too_deep:
        raise FormError(f"scheduler options: arrays and objects nested more than {MAX_OPTIONS_DEPTH} deep: give a "
                        "JSON object of the scheduler's options")
    speedup = options.get("speedup_options") if isinstance(options, dict) else None
    if isinstance(speedup, dict) and isinstance(speedup.get("table"), str):
        table = sandbox.resolve(speedup["table"], "scheduler options, speedup_options table")
        options = {**options, "speedup_options": {**speedup, "table": str(table)}}
    return options


def _scheduler(form: RunForm, sandbox: Sandbox) -> tuple[str, dict[str, Any]]:
    from batreplay.schedulers.names import SCHEDULER_NAMES
    from batreplay.schedulers.registry import check_scheduler_options

    name = (form.scheduler or "").strip()
    if not name:
        raise FormError("scheduler: choose one")
    if name not in SCHEDULER_NAMES:
        name = str(sandbox.resolve(name, "scheduler file"))
    options = _scheduler_options(form.scheduler_options, sandbox)
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


def build_run(form: RunForm, sandbox: Sandbox) -> PlannedRun:
    """Check ``form`` and describe its run (directory ``<runs dir>/<run id>``).

    The identifier is ``<log>-<scheduler>-<hash>``: the hash (12 hex digits of a SHA-256) covers the run
    description and the SHA-256 of the workload and platform files, so the same form on the same files names
    the same run, and a changed file names a new one.

    Raises:
        FormError: a field the run cannot use (the message names it); SandboxError: a path outside the allowed
            folders or missing.
    """
    from batreplay.workloads.pwa import file_sha256

    workload = _workload(form, sandbox)
    platform = _platform(form, sandbox)
    scheduler, options = _scheduler(form, sandbox)
    engine = form.engine or "embedded"
    if engine not in ENGINES:
        raise FormError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
    replay = form.replay or "rigid"
    flat: dict[str, Any] = {"replay": replay, "engine": engine, "scheduler_options": options,
                            "max_jobs": _max_jobs(form.max_jobs)}
    if replay in USER_MODELS and USER_MODELS[replay].dynamic:
        flat["sessions"] = _sessions(form.sessions, sandbox)
    try:
        draft = RunSpec.build(workload=workload, platform=platform, scheduler=scheduler, out_dir=sandbox.runs_dir,
                              **flat)
    except (RunSpecError, ValueError) as err:
        raise FormError(str(err)) from None
    platform_file = SHIPPED_PLATFORMS.get(platform, Path(platform))
    described = {key: value for key, value in draft.to_dict().items() if key not in ("out_dir", "force", "timeout")}
    described["inputs"] = [file_sha256(workload), file_sha256(platform_file)]
    digest = hashlib.sha256(canonical_json(described).encode("ascii")).hexdigest()[:12]
    stem = workload.name.lower()
    for suffix in (".gz", ".swf", ".json"):
        stem = stem.removesuffix(suffix)
    run_id = _SAFE_NAME.sub("-", f"{stem}-{Path(scheduler).stem}-{digest}")
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
