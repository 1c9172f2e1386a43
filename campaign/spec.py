"""Campaign specification files (TOML) and their expansion into simulation instances.

A campaign is the cross product, written once in a TOML file, of

    logs x platforms (the recorded machine and its scaled variants) x schedulers x replay models
    x session methods x seeds

(``[[experiments]]`` may replace the platforms x schedulers product by named pairs, as in Madon et al. 2024,
Sect. 5.2, where FCFS runs on the recorded machine only and the variants with EASY only). Each element is an
:class:`Instance`: one call of :func:`batreplay.run.runner.run`. Its id is a readable prefix and the first 8 hex
digits of the SHA-256 of the canonical JSON of its parameters (sorted keys, no spaces), for example
``kth-sp2__easy__speed-x2__a60__s0__1a2b3c4d``: the same parameters give the same id on every machine, and any
change of a parameter gives another id (hence another run directory).

Paths: every relative path in the file (logs, platform files, ``output_root``, ``report_dir``, the published
values) is resolved against the *campaign root*, which is ``[campaign] root`` taken relative to the folder of
the spec file (default: that folder itself). The shipped specs in ``expe/`` say ``root = ".."``, the
repository, so that logs are written ``../shared/workloads/...`` as everywhere else in the project. A log's
``workload`` may also be a Parallel Workloads Archive catalogue name (``KTH-SP2-1996-2.1-cln``), which stands
for the file ``batreplay fetch`` put in the cache (:func:`batreplay.workloads.resolve.resolve_workload`).
Parameters keep paths and names as written (relative to the root), so instance ids do not depend on where the
checkout or the cache is.

The file format, key by key, is documented in ``expe/README.md``; :func:`load_campaign` reports any unknown key,
missing key or bad value with the file name and the key's place (``[[logs]] #2, key 'workload'``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from fractions import Fraction
from pathlib import Path
from typing import Any

from batreplay.options import Option, OptionError, declared_options, recorded_values
from batreplay.platforms.node_types import NodeTypeError, read_node_types
from batreplay.platforms.reader import MAX_HOSTS, MIN_SPEED, read_platform
from batreplay.replay.registry import MODEL_OPTIONS, ReplaySpec, user_model
from batreplay.replay.registry import USER_MODELS as REPLAY_MODELS
from batreplay.replay.protocol import ReplayError
from batreplay.platforms.shipped import REFERENCE_NODE_SPEED, SHIPPED_PLATFORMS
from batreplay.replay.session_source import session_rule
from batreplay.schedulers.names import sharing_problem
from batreplay.replay.sessions import session_spec_label
from batreplay.run.spec import run_option, run_options
from batreplay.workloads.loading import WORKLOAD_SUFFIXES, WorkloadOptions
from batreplay.workloads.resolve import resolve_workload

#: Tables and figures the report knows (see :mod:`batreplay.reports.report`).
REPORT_TABLES: tuple[str, ...] = ("scheduling", "lateness", "user-lateness-percentiles", "scheduler-comparison",
                                  "co-scheduling", "user-model-comparison")
REPORT_FIGURES: tuple[str, ...] = ("submissions", "cumulative", "user-mean-lateness", "user-additional-lateness",
                                   "session-graphs", "submission-differences", "weekly-submissions",
                                   "throughput-utilisation", "user-arrivals", "additional-lateness-scaling")
#: Length of the parameter hash in instance ids (hex digits of SHA-256).
ID_HASH_LENGTH = 8
#: Keys of a campaign table that are run options read by the table's own rules (paths, names, the replay axes).
_OWN_RULES = ("workload", "platform", "scheduler", "scheduler_options", "replay", "sessions")
#: TOML type of each option kind (a path is written as a string; an integer is accepted for a number).
_TOML_KINDS: dict[type, type] = {str: str, int: int, float: float, bool: bool, dict: dict, Path: str}


def campaign_options(place: str) -> tuple[Option, ...]:
    """The run options a campaign file gives in ``place`` (``"log"``: a ``[[logs]]`` table or ``[defaults]``;
    ``"experiment"``: an ``[[experiments]]`` table; ``"campaign"``: the ``[campaign]`` table), read and checked
    from their declarations (:func:`batreplay.run.spec.run_options`) but for the keys the tables read by their
    own rules (the workload, platform, scheduler and replay)."""
    return tuple(declaration for declaration in run_options()
                 if declaration.campaign == place and declaration.name not in _OWN_RULES)


_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_VARIANT_TOKEN = re.compile(r"^(nodes|speed)-([xd])(\d+(?:\.\d+)?)$")


def rooted(path: str | Path, root: Path) -> Path:
    """A path of a campaign file as a usable path: ``~`` expanded, absolute ones as is, relative ones under ``root``
    (the campaign root)."""
    path = Path(os.path.expanduser(str(path)))
    return path if path.is_absolute() else root / path


class CampaignSpecError(ValueError):
    """A campaign file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class PlatformVariant:
    """A scaled variant of a log's recorded platform.

    Attributes:
        nodes_factor: multiplier of the node count (2.0 = twice as many nodes; "infra x2" in Madon, Da Costa,
            Pierson 2024, Sect. 5.2).
        speed_factor: multiplier of the node speed in flop/s (2.0 = jobs twice as fast with
            ``parallel_homogeneous`` profiles; "perf x2" in Madon, Da Costa, Pierson 2024).
    """

    nodes_factor: float = 1.0
    speed_factor: float = 1.0

    @property
    def is_recorded(self) -> bool:
        """True for the recorded machine itself (both factors 1)."""
        return self.nodes_factor == 1.0 and self.speed_factor == 1.0

    @property
    def label(self) -> str:
        """Canonical name: ``recorded``, ``nodes-x2``, ``speed-d2``, ``nodes-x2+speed-d2``, ``speed-x1.5``."""
        if self.is_recorded:
            return "recorded"
        parts = [f"{what}-{_factor_label(factor)}"
                 for what, factor in (("nodes", self.nodes_factor), ("speed", self.speed_factor)) if factor != 1.0]
        return "+".join(parts)


def _factor_label(factor: float) -> str:
    if factor < 1.0:
        inverse = 1.0 / factor
        if abs(inverse - round(inverse)) < 1e-9:
            return f"d{round(inverse):d}"
    return f"x{factor:g}"


def parse_variant(text: str) -> PlatformVariant:
    """Read a platform variant name: ``recorded``, or ``+``-joined tokens ``nodes-x<k>``, ``nodes-d<k>``,
    ``speed-x<k>``, ``speed-d<k>`` (``x`` multiplies by k, ``d`` divides by k; k > 0).

    Raises:
        ValueError: any other text, a factor of 0 or too large to be a finite number (its inverse then 0), or the
            same quantity scaled twice.
    """
    text = text.strip()
    if text == "recorded":
        return PlatformVariant()
    factors: dict[str, float] = {}
    for token in text.split("+"):
        match = _VARIANT_TOKEN.match(token.strip())
        if match is None:
            raise ValueError(f"platform variant {text!r}: expected 'recorded' or tokens like nodes-x2, nodes-d2, "
                             f"speed-x2, speed-d2 joined by '+'")
        what, how, number = match.group(1), match.group(2), float(match.group(3))
        if not (0 < number < math.inf):
            raise ValueError(f"platform variant {text!r}: factor must be > 0"
                             + ("" if number <= 0 else f" and below {sys.float_info.max:g}"))
        if what in factors:
            raise ValueError(f"platform variant {text!r}: {what} scaled twice")
        factors[what] = number if how == "x" else 1.0 / number
    return PlatformVariant(factors.get("nodes", 1.0), factors.get("speed", 1.0))


@dataclass(frozen=True)
class LogSpec:
    """One workload log of the campaign and the machine it was recorded on.

    Attributes:
        name: short name used in instance ids and tables (``kth-sp2``).
        workload: the log's file as runs use it: the path as written in the spec (relative to the campaign
            root, or absolute), or the cached file (absolute) of a Parallel Workloads Archive catalogue name
            (:func:`batreplay.workloads.resolve.resolve_workload`).
        platform: the recorded machine: a shipped platform name (``kth-sp2``), a platform file as written,
            or None when ``nodes`` or ``node_types`` is given.
        nodes: number of nodes of a generated machine: the homogeneous cluster's (``nodes``, instead of
            ``platform``), or the total count of the node types (``node_types``); None with ``platform``.
        node_speed: speed of the generated homogeneous cluster's nodes, flop/s (unused with ``platform`` or
            ``node_types``).
        label: how tables name the log (default ``name``).
        options: the run options the log's table (or ``[defaults]``) gives, by name, defaults filled in: those
            :func:`campaign_options` lists for ``"log"`` (the workload conversion: ``profile``, ``recorded_speed``,
            ``max_jobs``, ``walltime_factor``, ``zero_runtime``, ``res_source``; see
            :class:`batreplay.workloads.loading.WorkloadOptions`).
        written: the ``workload`` key as written when it is a catalogue name (``KTH-SP2-1996-2.1-cln``), None
            when it is a path (then ``workload`` is the text as written).
        node_types: the recorded machine as a node types file (:func:`batreplay.platforms.node_types.
            read_node_types`), the path as written (relative to the campaign root), from which the campaign
            generates the platform as ``batreplay platform --node-types`` does; None otherwise.
        site_model: True when ``workload`` is a site model file (``site_model`` key; ``batreplay model fit``), whose
            jobs the site models' user models (``closed``, ``open``) draw; its ``options`` then hold those models'
            options (``population``, ``closed_jobs``, ``open_jobs``...) instead of the workload conversion's.
    """

    name: str
    workload: str
    platform: str | None
    nodes: int | None
    node_speed: float
    label: str
    options: dict[str, Any] = field(default_factory=dict)
    written: str | None = None
    node_types: str | None = None
    site_model: bool = False

    @property
    def source(self) -> str:
        """What the log's user models replay: ``"site-model"`` or ``"log"`` (:attr:`UserModelEntry.source`)."""
        return "site-model" if self.site_model else "log"

    @property
    def as_written(self) -> str:
        """The ``workload`` key as written in the spec (a path or a catalogue name): what instance ids hash, so
        that they depend neither on the checkout's location nor on the cache's."""
        return self.workload if self.written is None else self.written

    @property
    def is_json(self) -> bool:
        """Whether the log is a Batsim JSON workload (rigid replays only; no SWF header, user ids or recorded
        schedule)."""
        return not self.site_model and self.workload.lower().endswith(".json")

    @property
    def platform_parameter(self) -> str | dict[str, Any]:
        """The recorded platform as it enters instance parameters: its name/path, ``{nodes, speed}`` (a
        generated cluster), or ``{node_types: path as written}`` (a node types file)."""
        if self.node_types is not None:
            return {"node_types": self.node_types}
        if self.platform is not None:
            return self.platform
        return {"nodes": int(self.nodes), "speed": float(self.node_speed)}


@dataclass(frozen=True)
class ExperimentSpec:
    """A scheduler on a platform variant, under a name (``EASY``, ``perf*2``, ``infra/2``), with its scheduler options
    and ``options``, the other run options an ``[[experiments]]`` table gives (:func:`campaign_options` for
    ``"experiment"``: ``compute_sharing``, ``speedup_model``, ``speedup_options``...), by name, as written in the file
    (a relative speedup ``table`` is relative to the campaign root, where instances run), defaults filled in."""

    name: str
    scheduler: str
    variant: PlatformVariant
    scheduler_options: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    def option(self, name: str) -> Any:
        """The value of the run option ``name`` in this experiment (its default when the table leaves it out)."""
        return self.options.get(name, run_option(name).default)


@dataclass(frozen=True)
class ReplayPoint:
    """One point of the replay axis of a campaign: a user model and, for feedback, its session method (``a60``);
    ``label`` is ``rigid`` or the method. It becomes the run's :class:`~batreplay.replay.registry.ReplaySpec`."""

    model: str
    sessions: str | None

    @property
    def label(self) -> str:
        """The model's name for a model without sessions (``rigid``), the session label for feedback (``a0``,
        ``a60``, as in Madon, Da Costa, Pierson 2024), ``<model>-<label>`` for another model on sessions."""
        if self.sessions is None:
            return self.model
        return self.sessions if self.model == "feedback" else f"{self.model}-{self.sessions}"


@dataclass(frozen=True)
class Instance:
    """One simulation of a campaign.

    Attributes:
        id: stable id (readable prefix + parameter hash), also the name of its run directory.
        params: the parameters the id is computed from (JSON types only).
        log, experiment, replay, seed: where it sits in the campaign.
    """

    id: str
    params: dict[str, Any]
    log: LogSpec
    experiment: ExperimentSpec
    replay: ReplayPoint
    seed: int

    @property
    def labels(self) -> dict[str, Any]:
        """Human-facing coordinates: log, experiment, scheduler, platform variant, replay, seed."""
        return {"log": self.log.name, "experiment": self.experiment.name, "scheduler": self.experiment.scheduler,
                "platform_variant": self.experiment.variant.label, "replay": self.replay.label, "seed": self.seed}


@dataclass
class ReportSpec:
    """What ``campaign report`` produces: table kinds, figure kinds, published values to show beside ours, and
    ``explanations``, a Markdown file (``[report] explanations``) included in the report, or None."""

    tables: list[str]
    figures: list[str]
    published: Path | None
    title: str
    notes: list[str]
    explanations: Path | None = None


@dataclass
class CampaignSpec:
    """A parsed campaign file.

    Attributes:
        name: campaign name.
        path: the spec file.
        root: folder relative paths are resolved against.
        output_root: folder of the run directories (one per instance).
        report_dir: default folder of ``campaign report``.
        engine: ``embedded`` or ``batsim``.
        logs, experiments, replays, seeds: the axes.
        report: what the report shows.
        description: free text.
    """

    name: str
    path: Path
    root: Path
    output_root: Path
    report_dir: Path
    engine: str
    logs: list[LogSpec]
    experiments: list[ExperimentSpec]
    replays: list[ReplayPoint]
    seeds: list[int]
    report: ReportSpec
    description: str = ""

    def resolve(self, path: str | Path) -> Path:
        """A path of the spec as a usable path: absolute ones as is, relative ones under :attr:`root`."""
        return rooted(path, self.root)

    def input_files(self) -> list[tuple[str, Path]]:
        """Every file the campaign reads, as ``(what, path)`` with relative paths under :attr:`root`: each log's
        workload (a catalogue name stands for its cached file), platform file (not a shipped platform's name) and
        node types, each experiment's scheduler file and speedup tables (the engine's, and easy-coscheduling's own
        in its scheduler options), and the report's published values and explanations."""
        from batreplay.schedulers.names import names_a_file  # (no pybatsim)

        found: list[tuple[str, Path]] = []
        for log in self.logs:
            platform = None if log.platform in SHIPPED_PLATFORMS else log.platform
            source = "site_model" if log.site_model else "workload"
            for key, value in ((source, log.workload), ("platform", platform), ("node_types", log.node_types)):
                if value is not None:
                    found.append((f"[[logs]] {log.name}, {key}", self.resolve(value)))
        for experiment in self.experiments:
            where = f"[[experiments]] {experiment.name}"
            if names_a_file(experiment.scheduler):
                found.append((f"{where}, scheduler", self.resolve(experiment.scheduler)))
            own = experiment.scheduler_options.get("speedup_options")
            for key, options in (("speedup_options", experiment.option("speedup_options")),
                                 ("scheduler_options speedup_options", own if isinstance(own, dict) else {})):
                if isinstance(options.get("table"), str):
                    found.append((f"{where}, {key} table", self.resolve(options["table"])))
        for key in ("published", "explanations"):
            value = getattr(self.report, key)
            if value is not None:
                found.append((f"[report] {key}", self.resolve(value)))
        return found

    def instances(self) -> list[Instance]:
        """Every instance, in the order logs x experiments x replays x seeds (ids unique, checked); a log is
        crossed with the replays of its source only (a log's with rigid and feedback, a site model's with closed and
        open: :attr:`LogSpec.source`)."""
        result: list[Instance] = []
        seen: dict[str, str] = {}
        for log in self.logs:
            for experiment in self.experiments:
                for replay in (replay for replay in self.replays if user_model(replay.model).source == log.source):
                    for seed in self.seeds:
                        instance = make_instance(log, experiment, replay, seed, self.engine)
                        where = f"{log.name} / {experiment.name} / {replay.label} / seed {seed}"
                        if instance.id in seen:
                            raise CampaignSpecError(f"{self.path}: {where} and {seen[instance.id]} are the same "
                                                    f"simulation (instance {instance.id}); remove one")
                        seen[instance.id] = where
                        result.append(instance)
        return result

    def select(self, pattern: str | None) -> list[Instance]:
        """Instances whose id matches the shell pattern ``pattern`` (``fnmatch``; ``*`` added around a
        pattern without wildcard), or all of them for None.

        Raises:
            CampaignSpecError: the pattern matches nothing (the message shows a few ids).
        """
        instances = self.instances()
        if pattern is None:
            return instances
        glob = pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"
        chosen = [i for i in instances if fnmatchcase(i.id, glob)]
        if not chosen:
            examples = ", ".join(i.id for i in instances[:3])
            raise CampaignSpecError(f"--only {pattern!r}: no instance of {self.name} matches (ids look like {examples})")
        return chosen


def canonical_json(params: dict[str, Any]) -> str:
    """The canonical JSON text of parameters: sorted keys, no spaces, floats in Python's shortest repr."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def instance_id(prefix_parts: list[str], params: dict[str, Any]) -> str:
    """``part1__part2__...__<hash>``: readable parts, then the first :data:`ID_HASH_LENGTH` hex digits of the
    SHA-256 of :func:`canonical_json` of ``params``. Characters other than letters, digits, ``.``, ``-``,
    ``+`` and ``_`` in the parts become ``-``."""
    digest = hashlib.sha256(canonical_json(params).encode("ascii")).hexdigest()[:ID_HASH_LENGTH]
    safe = [re.sub(r"[^A-Za-z0-9.+_-]", "-", part) for part in prefix_parts]
    return "__".join([*safe, digest])


def make_instance(log: LogSpec, experiment: ExperimentSpec, replay: ReplayPoint, seed: int, engine: str) -> Instance:
    """The :class:`Instance` of one point of the campaign (parameters and id). The run options of the log and the
    experiment enter the parameters as their declarations say (:meth:`batreplay.options.Option.is_recorded`: an
    option added later enters only when not at its default, so that older ids stay the same; see
    :func:`batreplay.options.recorded_values`). Of a site model's options, those the replay's user model reads. The
    seed of a model that draws (closed, open, distribution) is the seed of its draws (``model_seed``)."""
    params: dict[str, Any] = {
        "workload": log.as_written,
        "platform": log.platform_parameter,
        "nodes_factor": float(experiment.variant.nodes_factor),
        "speed_factor": float(experiment.variant.speed_factor),
        "scheduler": experiment.scheduler,
        "scheduler_options": experiment.scheduler_options,
        "replay": replay.model,
        "sessions": replay.sessions,
        "seed": int(seed),
        "engine": engine,
    }
    options = {**log.options, **experiment.options}
    reads = user_model(replay.model).options
    if log.site_model:
        options = {key: value for key, value in options.items() if key not in MODEL_OPTIONS or key in reads}
    if "model_seed" in reads:  # a model that draws (closed, open, distribution): the seed is its draws'
        options["model_seed"] = int(seed)
    params.update(recorded_values(run_options(), options))
    prefix = [log.name, experiment.scheduler.rsplit("/", 1)[-1].removesuffix(".py"), experiment.variant.label,
              replay.label, f"s{seed}"]
    return Instance(instance_id(prefix, params), params, log, experiment, replay, int(seed))


# ----------------------------------------------------------------------------------------------- parsing


class _Table:
    """A TOML table being read: typed getters that name the file and place on error, unknown keys refused."""

    def __init__(self, data: Any, where: str, source: Path) -> None:
        if not isinstance(data, dict):
            raise CampaignSpecError(f"{source}: {where}: expected a table, found {type(data).__name__}")
        self.data, self.where, self.source, self.used = data, where, source, set()

    def error(self, key: str, message: str) -> CampaignSpecError:
        return CampaignSpecError(f"{self.source}: {self.where}, key {key!r}: {message}")

    def get(self, key: str, kinds: type | tuple[type, ...], default: Any = ..., *, what: str = "") -> Any:
        self.used.add(key)
        if key not in self.data:
            if default is ...:
                raise CampaignSpecError(f"{self.source}: {self.where}: missing key {key!r}{' (' + what + ')' if what else ''}")
            return default
        value = self.data[key]
        kinds_tuple = kinds if isinstance(kinds, tuple) else (kinds,)
        if isinstance(value, bool) and bool not in kinds_tuple:
            raise self.error(key, f"expected {_kind_names(kinds_tuple)}, found a boolean")
        if float in kinds_tuple and isinstance(value, int) and not isinstance(value, bool):
            try:
                value = float(value)
            except OverflowError:  # TOML integers have no bound here
                raise self.error(key, f"{value} is beyond the range of a number ({sys.float_info.max:g})") from None
        if not isinstance(value, kinds_tuple):
            raise self.error(key, f"expected {_kind_names(kinds_tuple)}, found {type(value).__name__} {value!r}")
        return value

    def get_list(self, key: str, kind: type, default: Any = ...) -> list:
        values = self.get(key, list, default)
        if values is default and default is not ...:
            return list(default)
        if not values:
            raise self.error(key, "must not be empty")
        for value in values:
            if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
                raise self.error(key, f"expected a list of {kind.__name__}, found {value!r}")
        return list(values)

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise CampaignSpecError(f"{self.source}: {self.where}: unknown key(s) {', '.join(map(repr, unknown))}")


def _kind_names(kinds: tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table", bool: "a boolean"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _positive(table: _Table, key: str, value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise table.error(key, f"must be > 0, got {value!r}")


def _read_option(table: _Table, declaration: Option, default: Any) -> Any:
    """The value of a run option in a campaign table (``default`` when the key is absent), checked by its
    declaration; an error names the file, the table and the key."""
    value = table.get(declaration.name, _TOML_KINDS[declaration.kind], default)
    try:
        return declaration.check(value)
    except OptionError as err:
        raise table.error(declaration.name, str(err).removeprefix(f"{declaration.label} ")) from None


def default_output_root(name: str) -> Path:
    """Where run directories go when the spec gives no ``output_root``: ``$BATREPLAY_CACHE/campaigns/<name>``,
    else ``$XDG_CACHE_HOME/batreplay/campaigns/<name>``, else ``~/.cache/batreplay/campaigns/<name>``."""
    from batreplay.workloads.pwa import cache_root

    return cache_root() / "campaigns" / name


def scheduler_problem(scheduler: str, root: Path) -> str | None:
    """Why ``scheduler`` cannot name a scheduler of a campaign rooted at ``root``, or None if it can.

    As :func:`batreplay.schedulers.registry.load_scheduler` reads it: a name of the registry, or a file path
    (ending in ``.py`` or holding a directory separator), relative to the campaign root (instances run from
    there), that must exist.
    """
    from batreplay.schedulers.names import SCHEDULER_NAMES, check_scheduler_name, names_a_file  # (no pybatsim)

    if scheduler in SCHEDULER_NAMES:
        return None
    if names_a_file(scheduler):
        candidate = Path(scheduler)
        candidate = candidate if candidate.is_absolute() else root / candidate
        if not candidate.is_file():
            return f"scheduler file {scheduler!r} not found ({candidate})"
        return None
    try:
        check_scheduler_name(scheduler)
    except ValueError as err:
        return str(err)
    return None  # pragma: no cover - check_scheduler_name refuses what is neither a name nor a file


def _variant_problem(variant: PlatformVariant, log: LogSpec, groups: list[tuple[int, float]]) -> str | None:
    """Why ``variant`` of ``log``'s recorded machine (its ``(node count, speed)`` groups) cannot be generated, or
    None: campaigns scale node counts exactly (:func:`batreplay.campaign.platforms.prepare_platforms`), to at most
    :data:`~batreplay.platforms.reader.MAX_HOSTS` compute nodes in all, and speeds to ones SimGrid reads (finite,
    at least :data:`~batreplay.platforms.reader.MIN_SPEED`)."""
    factor = Fraction(variant.nodes_factor)
    where = f"variant {variant.label} of log {log.name!r}"
    for count, speed in groups:
        target = count * factor
        if target.denominator != 1 or target < 1:
            return (f"{where}: {count} nodes x {float(factor):g} = {float(target):g} is not a whole number >= 1 "
                    "(campaign platforms are never rounded)")
        scaled = speed * variant.speed_factor
        if not (math.isfinite(scaled) and scaled >= MIN_SPEED):
            return (f"{where}: nodes of {speed!r} flop/s x {variant.speed_factor:g} = {scaled!r} flop/s, not a "
                    f"finite speed >= {MIN_SPEED:.3g} (SimGrid's smallest): use another speed factor")
    total = sum(count * factor for count, _speed in groups)
    if total > MAX_HOSTS:
        return (f"{where}: {sum(count for count, _ in groups):,} nodes x {float(factor):g} = {int(total):,} compute "
                f"nodes, more than the {MAX_HOSTS:,} batreplay simulates: use a smaller node factor")
    return None


def _read_log(table: _Table, defaults: dict[str, Any], spec_root: Path) -> tuple[LogSpec, list[tuple[int, float]]]:
    """The log of a ``[[logs]]`` table and the ``(node count, speed)`` groups of its recorded machine."""
    name = table.get("name", str)
    if not _NAME_PATTERN.match(name):
        raise table.error("name", f"{name!r}: use letters, digits, '.', '_' and '-' only")
    site_model = "site_model" in table.data
    if site_model and "workload" in table.data:
        raise CampaignSpecError(f"{table.source}: {table.where}: give 'workload' (a log) or 'site_model' (a model "
                                "file of batreplay model fit), not both")
    workload, written = _read_site_model(table, spec_root) if site_model else _read_workload(table, spec_root)
    platform = table.get("platform", str, None)
    nodes = table.get("nodes", int, None)
    node_types = table.get("node_types", str, None)
    given = [key for key, value in (("platform", platform), ("nodes", nodes), ("node_types", node_types))
             if value is not None]
    if len(given) != 1:
        how = {0: "neither", 2: "both " + " and ".join(map(repr, given)), 3: "all three"}[len(given)]
        raise CampaignSpecError(f"{table.source}: {table.where}: give one of 'platform' (a shipped platform name "
                                f"or a file), 'nodes' (a generated cluster) or 'node_types' (a node types file), "
                                f"not {how}")
    groups: list[tuple[int, float]] = []
    if platform is not None:
        if platform in SHIPPED_PLATFORMS:
            candidate = SHIPPED_PLATFORMS[platform]
        else:
            candidate = rooted(platform, spec_root)
            if not candidate.is_file():
                raise table.error("platform", f"{platform!r} is neither a shipped platform "
                                              f"({', '.join(SHIPPED_PLATFORMS)}) nor a file ({candidate})")
        try:
            # the groups scale_platform scales one by one: equal speed, cores and properties (node types)
            groups = [(count, speed) for count, speed, _cores, _props in read_platform(candidate).host_groups()]
        except (OSError, ValueError) as err:  # PlatformError is a ValueError; it names the file and line
            raise table.error("platform", " ".join(str(err).split())) from None
    if node_types is not None:
        candidate = rooted(node_types, spec_root)
        try:
            types = read_node_types(candidate)
        except NodeTypeError as err:  # names the file, and the line or the type
            raise table.error("node_types", " ".join(str(err).split())) from None
        groups = [(t.count, t.speed) for t in types]  # variants scale each type (scale_platform's host groups)
        nodes = sum(t.count for t in types)
    if nodes is not None and nodes < 1:
        raise table.error("nodes", f"must be >= 1, got {nodes}")
    if nodes is not None and nodes > MAX_HOSTS:  # (node types are refused by read_node_types above)
        raise table.error("nodes", f"{nodes:,} nodes, more than the {MAX_HOSTS:,} compute nodes batreplay "
                                   "simulates: give fewer nodes")
    node_speed = table.get("node_speed", float, float(defaults.get("node_speed", REFERENCE_NODE_SPEED)))
    _positive(table, "node_speed", node_speed)  # checked, but used by 'nodes' only (as [defaults] node_speed)
    if nodes is not None and node_types is None:
        if node_speed < MIN_SPEED:  # (what the generated cluster would refuse)
            raise table.error("node_speed", f"{node_speed!r} flop/s, below {MIN_SPEED:.3g}, the smallest speed SimGrid "
                                            "reads")
        groups = [(nodes, node_speed)]
    label = table.get("label", str, name)
    options = _read_log_options(table, defaults, site_model)
    table.finish()
    log = LogSpec(name, workload, platform, nodes, node_speed, label, options, written=written, node_types=node_types,
                  site_model=site_model)
    return log, groups


def _read_workload(table: _Table, spec_root: Path) -> tuple[str, str | None]:
    """The ``workload`` key of a ``[[logs]]`` table, checked: ``(workload, written)`` as :class:`LogSpec` holds
    them (a path as written, relative to the root; a catalogue name as its cached file, the name as written)."""
    workload = table.get("workload", str, what="the SWF log, relative to the campaign root, or a Parallel "
                                               "Workloads Archive name (or 'site_model', a model file)")
    try:
        resolved = resolve_workload(workload, relative_to=spec_root, option="the workload key")
    except (FileNotFoundError, ValueError) as err:  # ChecksumMismatchError is a ValueError
        raise table.error("workload", " ".join(str(err).removeprefix("workload ").split())) from None
    # a path stays as written (runs name it relative to the root); a catalogue name becomes its cached file, the
    # name staying for the instance ids (LogSpec.as_written)
    written = None if resolved == rooted(workload, spec_root) else workload
    if not resolved.is_file():
        raise table.error("workload", f"{resolved}: not a file")
    if not resolved.name.lower().endswith(WORKLOAD_SUFFIXES):
        raise table.error("workload", f"{resolved}: expected a .swf, .swf.gz or .json file")
    if not os.access(resolved, os.R_OK):
        raise table.error("workload", f"{resolved}: not readable")
    return (workload, None) if written is None else (str(resolved), written)


def _read_site_model(table: _Table, spec_root: Path) -> tuple[str, None]:
    """The ``site_model`` key of a ``[[logs]]`` table: a model file (``batreplay model fit``), relative to the
    root, read and checked now (:func:`batreplay.sitemodels.model_file.read_model`); ``(path as written, None)``."""
    from batreplay.sitemodels.model_file import read_model  # (numpy: only for campaigns of site models)

    written = table.get("site_model", str)
    path = rooted(written, spec_root)
    if not path.is_file():
        raise table.error("site_model", f"{path}: no such file")
    try:
        read_model(path)
    except (OSError, ValueError) as err:  # names the file, and the field
        raise table.error("site_model", " ".join(str(err).split())) from None
    return written, None


def _conversion_options() -> set[str]:
    """The names of the workload conversion's options (``profile``, ``max_jobs``...): a log's, never a site model's."""
    return {declaration.name for declaration in declared_options(WorkloadOptions)}


def _population_as_text(table: _Table) -> None:
    """A whole number given as a closed replay's ``population`` (``population = 48``), read as its text (the option
    takes a number or ``"fill"``)."""
    population = table.data.get("population")
    if isinstance(population, int) and not isinstance(population, bool):
        table.data = {**table.data, "population": str(population)}


def _read_log_options(table: _Table, defaults: dict[str, Any], site_model: bool) -> dict[str, Any]:
    """The run options of a ``[[logs]]`` table, ``[defaults]`` filling in (:func:`campaign_options` for ``"log"``):
    a log takes the workload conversion's, a site model its user models' (``population``, ``closed_jobs``,
    ``open_jobs``...; a whole number of ``population`` is read as its text), both the warm-up. A key of the other
    kind in the table is refused; in ``[defaults]``, it applies to the logs it fits."""
    conversion = _conversion_options()
    foreign = conversion if site_model else set(MODEL_OPTIONS)
    clashing = sorted(foreign & set(table.data))
    if clashing:
        raise table.error(clashing[0], f"the site model's jobs are drawn, not converted from a log: leave it out"
                          if site_model else "an option of a site model's replays (site_model = ...), not of a log's")
    _population_as_text(table)
    return {declaration.name: _read_option(table, declaration, defaults.get(declaration.name, declaration.default))
            for declaration in campaign_options("log") if declaration.name not in foreign}


def _rooted_table(speedup_options: dict[str, Any], root: Path) -> dict[str, Any]:
    """Speedup model options with a relative ``table`` under ``root``, where instances run (for checks at load)."""
    checked = dict(speedup_options)
    written = checked.get("table")
    if isinstance(written, str) and not Path(written).is_absolute():
        checked["table"] = str(root / written)
    return checked


def _check_speedup(table: _Table, root: Path, engine: str, model: str | None, options: dict[str, Any]) -> None:
    """The co-scheduling keys of an experiment, ``speedup_model`` and ``speedup_options`` (their values checked by
    their declarations), checked together as the run checks them (:class:`~batreplay.engine.spec.EngineSpec`), and
    the model built once so that a missing or unusable table is reported now, not by every instance. A relative
    ``table`` option is looked for under ``root`` (instances run there)."""
    if model is None:
        if "speedup_options" in table.data:
            raise table.error("speedup_options", "given without a speedup model (speedup_model)")
        return
    if engine != "embedded":
        raise table.error("speedup_model", "co-scheduling speedup models are an extension of the embedded engine: "
                                           f"real Batsim cannot apply them ([campaign] engine = {engine!r}; use "
                                           '"embedded")')
    from batreplay.platforms.speedup import SpeedupModelError, make_speedup_model  # (imports pandas when it reads)

    try:
        make_speedup_model(model, _rooted_table(options, root))
    except (ValueError, TypeError) as err:  # SpeedupModelError, or an option's value the model cannot convert
        message = str(err) if isinstance(err, SpeedupModelError) else f"speedup model {model!r}: {err}"
        raise table.error("speedup_options", " ".join(message.split())) from None


def _check_scheduler_options(table: _Table, scheduler: str, options: dict[str, Any], root: Path) -> None:
    """A built-in scheduler's options, checked against what it declares (a speedup table of its own looked for
    under ``root``); no options: a built-in's defaults are valid, a scheduler file's are not checked."""
    if not options:
        return
    from batreplay.schedulers.registry import check_scheduler_options  # imports pybatsim: only when needed

    checked = dict(options)
    if isinstance(options.get("speedup_options"), dict):  # easy-coscheduling's own model: its table under root
        checked["speedup_options"] = _rooted_table(options["speedup_options"], root)
    try:
        check_scheduler_options(scheduler, checked)
    except ValueError as err:
        raise table.error("scheduler_options", str(err)) from None


def _read_experiment(table: _Table, root: Path, engine: str = "embedded") -> ExperimentSpec:
    """An ``[[experiments]]`` table: its name, scheduler and options, platform variant, and the run options
    :func:`campaign_options` lists for ``"experiment"`` (compute sharing, co-scheduling...), checked alone and
    together, as the run will."""
    name = table.get("name", str)
    scheduler = table.get("scheduler", str)
    problem = scheduler_problem(scheduler, root)
    if problem is not None:
        raise table.error("scheduler", problem)
    try:
        variant = parse_variant(table.get("platform", str, "recorded"))
    except ValueError as err:
        raise table.error("platform", str(err)) from None
    scheduler_options = table.get("scheduler_options", dict, {})
    _check_scheduler_options(table, scheduler, scheduler_options, root)
    options = {declaration.name: _read_option(table, declaration, declaration.default)
               for declaration in campaign_options("experiment")}
    experiment = ExperimentSpec(name, scheduler, variant, dict(scheduler_options), options)
    model = experiment.option("speedup_model")
    _check_speedup(table, root, engine, model, experiment.option("speedup_options"))
    problem = sharing_problem(scheduler, scheduler_options,
                              shares_hosts=experiment.option("compute_sharing") or model is not None,
                              engine_has_model=model is not None)  # what RunSpec checks, told at load
    if problem is not None:
        raise table.error(*problem)
    table.finish()
    return experiment


def _read_replays(matrix: _Table) -> list[ReplayPoint]:
    models = matrix.get_list("replay_models", str, ["rigid"])
    for model in models:
        if model not in REPLAY_MODELS:
            raise matrix.error("replay_models", f"{model!r}: expected {' or '.join(REPLAY_MODELS)}")
    methods = matrix.get_list("session_methods", str, ["a60"])
    labels = []
    for method in methods:
        try:
            labels.append(session_spec_label(*session_rule(method)))
        except ValueError as err:
            raise matrix.error("session_methods", f"{method!r}: {err}") from None
    if len(set(labels)) != len(labels):
        raise matrix.error("session_methods", f"the same method twice ({', '.join(labels)})")
    replays: list[ReplayPoint] = []
    for model in dict.fromkeys(models):
        if not user_model(model).uses_sessions:
            replays.append(ReplayPoint(model, None))  # sessions do not change a rigid replay: not crossed
        else:
            replays.extend(ReplayPoint(model, label) for label in labels)
    return replays


def _check_sources(matrix: _Table, log_tables: list[_Table], logs: list[LogSpec], replays: list[ReplayPoint],
                   root: Path) -> None:
    """Each log has a replay of its source and each replay model a log of its own (:attr:`LogSpec.source`); a site
    model's options make a replay of each of its user models (:class:`~batreplay.replay.registry.ReplaySpec`, e.g.
    a closed replay needs ``closed_jobs`` or ``closed_duration``), and a closed replay's model has no I/O demand."""
    models = list(dict.fromkeys(replay.model for replay in replays))
    for model in models:
        if not any(log.source == user_model(model).source for log in logs):
            what = "a site model ('site_model' key)" if user_model(model).source == "site-model" else "a log"
            raise matrix.error("replay_models", f"{model!r} replays {what}, and no [[logs]] table gives one")
    for table, log in zip(log_tables, logs):
        own = [model for model in models if user_model(model).source == log.source]
        if not own:
            expected = [name for name in REPLAY_MODELS if user_model(name).source == log.source]
            raise matrix.error("replay_models", f"none replays [[logs]] {log.name!r} ({log.source}): add one of "
                                                f"{', '.join(expected)}")
        if log.site_model:
            _check_site_model_replays(table, log, own, root)


def _check_defaults_apply(defaults: dict[str, Any], logs: list[LogSpec], replays: list[ReplayPoint],
                          path: Path) -> None:
    """Each ``[defaults]`` key applies to some log: a conversion option to a log's table, a site model's replay
    option to a site model replayed by a model that reads it.

    Raises:
        CampaignSpecError: a key no instance would read (the file and key named).
    """
    conversion = _conversion_options()
    read = {key for replay in replays if user_model(replay.model).source == "site-model"
            for key in user_model(replay.model).options} if any(log.site_model for log in logs) else set()
    for key in defaults:
        unread = ((key in conversion and all(log.site_model for log in logs))
                  or (key in MODEL_OPTIONS and key not in read))
        if unread:
            why = ("an option of a log's conversion, and every [[logs]] table gives a site model" if key in conversion
                   else "an option of a site model's replay, and no site model is replayed by one that reads it")
            raise CampaignSpecError(f"{path}: [defaults], key {key!r}: no instance would read it: {why}")


def _check_site_model_replays(table: _Table, log: LogSpec, models: list[str], root: Path) -> None:
    """The replays of the site model ``log`` under each of ``models`` (its table's options; the error names the
    table and, where one is at fault, the key); an option its table gives for a model none of ``models`` is refused
    (it would be read by no instance)."""
    unread = [key for key in MODEL_OPTIONS if key in table.data
              and not any(key in user_model(model).options for model in models)]
    if unread:
        owners = [name for name in REPLAY_MODELS if unread[0] in user_model(name).options]
        raise table.error(unread[0], f"an option of the {' and '.join(owners)} replay, which [matrix] replay_models "
                                     "does not give: no instance would read it")
    for model in models:
        reads = user_model(model).options
        try:
            ReplaySpec(model, **{key: value for key, value in log.options.items() if key in reads})
        except ReplayError as err:
            keys = ", ".join(key for key in reads if key != "model_seed")
            raise CampaignSpecError(f"{table.source}: {table.where}: {err} (the table's keys: {keys}; the seed of the "
                                    "draws is [matrix] seeds)") from None
    from batreplay.sitemodels.model_file import read_model

    site_model = read_model(rooted(log.workload, root))
    if "closed" in models:
        from batreplay.replay.closed import closed_replay_problem

        problem = closed_replay_problem(site_model)
        if problem is not None:
            raise table.error("site_model", problem)
    reads = site_model.reading_types
    if "open" in models and reads and not _has_storage(log, root):
        raise table.error("site_model", f"job types {', '.join(reads)} read from storage (I/O demand > 0): an open "
                                        "replay needs a platform with a storage host and I/O links (a platform file "
                                        "of batreplay platform --io-rate, or node types with a [storage] table)")


def _has_storage(log: LogSpec, root: Path) -> bool:
    """Whether ``log``'s recorded machine has a storage host: its platform file's, or one the campaign generates
    from its node types when they give I/O rates; a generated cluster (``nodes``) has none.

    Raises:
        OSError, ValueError: a platform or node types file that cannot be read (checked before, when the log was).
    """
    from batreplay.platforms.node_types import read_node_types_file

    if log.node_types is not None:
        return any(t.io_rate is not None for t in read_node_types_file(rooted(log.node_types, root)).node_types)
    if log.platform is not None:
        path = SHIPPED_PLATFORMS[log.platform] if log.platform in SHIPPED_PLATFORMS else rooted(log.platform, root)
        return bool(read_platform(path).storage_hosts)
    return False


def _read_experiments(top: _Table, matrix: _Table, read_logs: list[tuple[LogSpec, list[tuple[int, float]]]],
                      root: Path, engine: str) -> list[ExperimentSpec]:
    """The experiments of a campaign: its ``[[experiments]]`` tables, or the ``[matrix]`` product of platform
    variants and schedulers; every variant checked on every log's machine (:func:`_variant_problem`, the error
    naming the table and key that declares it), and their names checked distinct."""
    path = top.source
    raw_experiments = top.get("experiments", list, None)
    if raw_experiments is not None:
        if "platforms" in matrix.data or "schedulers" in matrix.data:
            raise CampaignSpecError(f"{path}: give either [[experiments]] or [matrix] platforms/schedulers, not both")
        if not raw_experiments:
            raise CampaignSpecError(f"{path}: [[experiments]]: none given (give at least one, or [matrix] schedulers)")
        experiment_tables = [_Table(raw, f"[[experiments]] #{k}", path) for k, raw in enumerate(raw_experiments, 1)]
        experiments = [_read_experiment(table, root, engine) for table in experiment_tables]
        variant_places = [(table, "platform") for table in experiment_tables]
    else:
        schedulers = matrix.get_list("schedulers", str)
        for scheduler in schedulers:
            problem = scheduler_problem(scheduler, root)
            if problem is not None:
                raise matrix.error("schedulers", problem)
        variants = []
        for text in matrix.get_list("platforms", str, ["recorded"]):
            try:
                variants.append(parse_variant(text))
            except ValueError as err:
                raise matrix.error("platforms", str(err)) from None
        experiments = [ExperimentSpec(s if v.is_recorded else f"{s} {v.label}", s, v)
                       for v in variants for s in schedulers]
        variant_places = [(matrix, "platforms")] * len(experiments)
    for log, groups in read_logs:
        for experiment, (table, key) in zip(experiments, variant_places):
            problem = None if experiment.variant.is_recorded else _variant_problem(experiment.variant, log, groups)
            if problem is not None:
                raise table.error(key, problem)
    exp_names = [e.name for e in experiments]
    if len(set(exp_names)) != len(exp_names):
        raise CampaignSpecError(f"{path}: experiments: duplicated name(s) "
                                f"{sorted({n for n in exp_names if exp_names.count(n) > 1})}")
    return experiments


def _read_report(top: _Table, name: str, root: Path) -> ReportSpec:
    """The ``[report]`` table of the campaign ``name``: known tables and figures, existing files (relative paths
    under the campaign ``root``)."""
    report_table = _Table(top.get("report", dict, {}), "[report]", top.source)
    tables = report_table.get_list("tables", str, ["scheduling"])
    figures = report_table.get_list("figures", str, ["submissions", "cumulative"])
    for key, values, known in (("tables", tables, REPORT_TABLES), ("figures", figures, REPORT_FIGURES)):
        for value in values:
            if value not in known:
                raise report_table.error(key, f"{value!r}: expected some of {', '.join(known)}")
    published_text = report_table.get("published", str, None)
    published = rooted(published_text, root) if published_text else None
    if published is not None and not published.is_file():
        raise report_table.error("published", f"no such file {published}")
    explanations_text = report_table.get("explanations", str, None)
    explanations = rooted(explanations_text, root) if explanations_text else None
    if explanations is not None and not explanations.is_file():
        raise report_table.error("explanations", f"no such file {explanations}")
    report = ReportSpec(tables, figures, published, report_table.get("title", str, f"Campaign {name}"),
                        list(report_table.get_list("notes", str, [])), explanations)
    report_table.finish()
    return report


def _read_defaults(top: _Table) -> dict[str, Any]:
    """The ``[defaults]`` table, checked (types and ranges): the log options it gives (:func:`campaign_options`
    for ``"log"``) and ``node_speed``, by name, for :func:`_read_log`."""
    defaults = top.get("defaults", dict, {})
    defaults_table = _Table(defaults, "[defaults]", top.source)
    _population_as_text(defaults_table)
    checked = {declaration.name: _read_option(defaults_table, declaration, declaration.default)
               for declaration in campaign_options("log") if declaration.name in defaults_table.data}
    node_speed = defaults_table.get("node_speed", float, None)
    _positive(defaults_table, "node_speed", node_speed)
    if node_speed is not None:
        checked["node_speed"] = node_speed
    defaults_table.finish()
    return checked


def load_campaign(path: str | Path, *, output_root: str | Path | None = None) -> CampaignSpec:
    """Read and check a campaign file.

    Args:
        path: the TOML file.
        output_root: use this folder for the run directories instead of the spec's ``output_root``.

    Returns:
        The :class:`CampaignSpec`. The whole file is checked before any instance runs: logs exist, are readable
        and have a known type (``.swf``, ``.swf.gz``, ``.json``; SWF only for feedback replay), platform files
        read as Batsim platforms, node types files read as node types, every scaled variant gives a whole number
        of nodes >= 1 on every log's machine (on each of its node types), machines and variants have at most
        :data:`~batreplay.platforms.reader.MAX_HOSTS` compute nodes and speeds SimGrid reads, schedulers are
        registry names or existing files (relative to the root), a built-in scheduler's options are ones it
        declares, numbers are in range, session thresholds are minutes >= 0, and an experiment's
        speedup model (co-scheduling; embedded engine only) is known and builds from its options (its table read).

    Raises:
        CampaignSpecError: one line naming the file and the table and key (``[[logs]] #2, key 'workload'``):
            unreadable TOML (line and column given), unknown / missing keys, bad values, missing files, unknown
            schedulers, or two points of the campaign that are the same simulation.
    """
    path = Path(path)
    if not path.is_file():
        raise CampaignSpecError(f"{path}: no such campaign file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise CampaignSpecError(f"{path}: not valid TOML: {err}") from None
    top = _Table(data, "top level", path)
    campaign = _Table(top.get("campaign", dict), "[campaign]", path)
    name = campaign.get("name", str)
    if not _NAME_PATTERN.match(name):
        raise campaign.error("name", f"{name!r}: use letters, digits, '.', '_' and '-' only")
    description = campaign.get("description", str, "")
    root = (path.parent / campaign.get("root", str, ".")).resolve()
    if not root.is_dir():
        raise campaign.error("root", f"no such folder {root}")

    spec_output = campaign.get("output_root", str, None)
    out = Path(output_root) if output_root is not None else (rooted(spec_output, root) if spec_output
                                                              else default_output_root(name))
    if out.exists() and not out.is_dir():
        if output_root is None and spec_output:
            raise campaign.error("output_root", f"{out} exists and is not a folder")
        raise CampaignSpecError(f"{path}: output folder {out} exists and is not a folder")
    report_dir = campaign.get("report_dir", str, None)
    engine = _read_option(campaign, run_option("engine"), run_option("engine").default)
    campaign.finish()

    defaults = _read_defaults(top)

    raw_logs = top.get("logs", list, what="one [[logs]] table per workload log")
    if not raw_logs:
        raise CampaignSpecError(f"{path}: no [[logs]]")
    log_tables = [_Table(raw, f"[[logs]] #{k}", path) for k, raw in enumerate(raw_logs, 1)]
    read_logs = [_read_log(table, defaults, root) for table in log_tables]
    logs = [log for log, _groups in read_logs]
    names = [log.name for log in logs]
    if len(set(names)) != len(names):
        raise CampaignSpecError(f"{path}: [[logs]]: duplicated name(s) {sorted({n for n in names if names.count(n) > 1})}")

    matrix = _Table(top.get("matrix", dict, {}), "[matrix]", path)
    experiments = _read_experiments(top, matrix, read_logs, root, engine)
    replays = _read_replays(matrix)
    _check_sources(matrix, log_tables, logs, replays, root)
    _check_defaults_apply(defaults, logs, replays, path)
    if any(user_model(replay.model).uses_sessions for replay in replays):  # users need user ids and recorded times
        for table, log in zip(log_tables, logs):
            if log.site_model:
                continue
            if log.is_json:
                raise table.error("workload", f"{log.workload}: feedback replay needs an SWF log (user ids and "
                                              "recorded times), not a Batsim JSON workload ([matrix] replay_models)")
            if log.options.get("demand_rounds") is not None:
                raise table.error("demand_rounds", "feedback replay registers its jobs' profiles, and Batsim 4.2.1 "
                                                   "never links a registered composed profile to its steps "
                                                   "([matrix] replay_models)")
    seeds = matrix.get_list("seeds", int, [0])
    if len(set(seeds)) != len(seeds) or any(s < 0 for s in seeds):
        raise matrix.error("seeds", f"expected distinct non-negative integers, got {seeds}")
    matrix.finish()

    report = _read_report(top, name, root)
    top.finish()

    spec = CampaignSpec(name=name, path=path.resolve(), root=root, output_root=out.resolve() if out.is_absolute()
                        else out.absolute(), report_dir=rooted(report_dir, root) if report_dir else out / "report",
                        engine=engine, logs=logs, experiments=experiments, replays=replays, seeds=seeds,
                        report=report, description=description)
    spec.instances()  # checks that no two points are the same simulation
    return spec
