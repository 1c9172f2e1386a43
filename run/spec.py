"""The one description of a simulation run, shared by the command line, campaign instances and their worker.

A :class:`RunSpec` is composed of the parts each layer defines, with their allowed values, once:

- the workload and how it is converted: :class:`~batreplay.workloads.loading.WorkloadOptions` (profile types,
  recorded speed, first jobs only, walltime factor);
- the replay user model: :class:`~batreplay.replay.registry.ReplaySpec` (rigid, or think-time feedback with its
  sessions; Madon, Da Costa, Pierson 2024);
- the platform: a shipped platform name or a SimGrid file;
- the scheduler and its options: :class:`SchedulerSpec` (a name of :mod:`batreplay.schedulers.registry` or a pybatsim
  scheduler file);
- the engine: :class:`~batreplay.engine.simulate.EngineSpec` (embedded, or a real Batsim and its timeout);
- where the run directory goes, whether it may replace a previous run, and a wall-clock limit.

Serialised form (:meth:`RunSpec.to_dict`, :meth:`RunSpec.from_dict`): one flat JSON object whose keys are the
command-line options of ``batreplay run`` without dashes (``workload``, ``platform``, ``scheduler``, ``out_dir``,
``profile``, ``recorded_speed``, ``max_jobs``, ``walltime_factor``, ``scheduler_options``, ``replay``,
``sessions``, ``engine``, ``batsim``, ``batsim_timeout``, ``compute_sharing``, ``speedup_model``,
``speedup_options``, ``force``, ``timeout``). ``run.json`` stores it under
``spec``, a campaign instance's parameters are built from it, and :data:`FLAT_FIELDS` says which part each key
belongs to.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batreplay.deadline import check_seconds
from batreplay.engine.simulate import EngineSpec
from batreplay.replay.registry import ReplaySpec
from batreplay.schedulers.names import SPEEDUP_PREDICTING, sharing_problem
from batreplay.workloads.loading import WorkloadOptions


class RunSpecError(ValueError):
    """A run description with a bad or unknown value; the message names the field (and its command-line option)."""


@dataclass(frozen=True)
class SchedulerSpec:
    """The decision process of a run: a registered scheduler name (``easy``, ``conservative-sjf``...) or the path
    of a pybatsim scheduler file, and its options (pybatsim's ``-o`` JSON object; a built-in scheduler checks them
    against what it declares, see :func:`batreplay.schedulers.registry.check_scheduler_options`).

    Raises:
        RunSpecError: an empty name or options that are not a JSON object.
    """

    name: str
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise RunSpecError(f"scheduler (--scheduler) must be a scheduler name or file, got {self.name!r}")
        if not isinstance(self.options, dict):
            raise RunSpecError(f"scheduler_options (--scheduler-options) must be a JSON object, got {self.options!r}")


#: Flat key of the serialised form -> (part of :class:`RunSpec`, field of that part).
FLAT_FIELDS: dict[str, tuple[str, str]] = {
    "profile": ("conversion", "profile"),
    "recorded_speed": ("conversion", "recorded_speed"),
    "max_jobs": ("conversion", "max_jobs"),
    "walltime_factor": ("conversion", "walltime_factor"),
    "zero_runtime": ("conversion", "zero_runtime"),
    "res_source": ("conversion", "res_source"),
    "scheduler": ("scheduler", "name"),
    "scheduler_options": ("scheduler", "options"),
    "replay": ("replay", "model"),
    "sessions": ("replay", "sessions"),
    "engine": ("engine", "name"),
    "batsim": ("engine", "batsim"),
    "batsim_timeout": ("engine", "batsim_timeout"),
    "compute_sharing": ("engine", "compute_sharing"),
    "speedup_model": ("engine", "speedup_model"),
    "speedup_options": ("engine", "speedup_options"),
}
_PARTS = {"conversion": WorkloadOptions, "scheduler": SchedulerSpec, "replay": ReplaySpec, "engine": EngineSpec}
_TOP_LEVEL = ("workload", "platform", "out_dir", "force", "timeout")


@dataclass(frozen=True)
class RunSpec:
    """What to simulate, and where the run directory goes.

    Attributes:
        workload: an SWF log (``.swf``, ``.swf.gz``) or a Batsim workload (``.json``).
        platform: a SimGrid platform file, or the name of a shipped platform (``kth-sp2``, ``sdsc-sp2``).
        out_dir: the run directory to create. It must not exist, or, with ``force``, hold a previous run (a
            ``run.json`` written by :func:`batreplay.run.runner.run`): anything else is never replaced.
        scheduler: the scheduler and its options.
        conversion: how an SWF log becomes the Batsim workload (ignored for a JSON workload but ``max_jobs``).
        replay: the user model (``rigid`` or ``feedback`` with its sessions).
        engine: the embedded engine or a real Batsim.
        force: replace an existing run directory (only one that holds a previous run, atomically).
        timeout: wall-clock limit of the whole run in seconds, or None for no limit (see :mod:`batreplay.deadline`).

    Raises:
        RunSpecError: ``timeout`` is not None or a number of seconds > 0; job slots (scheduler option ``slots``)
            without compute sharing; a scheduler that predicts speedups (``easy-coscheduling``) without a model
            (its option ``speedup_model`` or the engine's, which it is given when it names none) or, sharing
            nodes, without co-scheduling or compute sharing; the parts check their own values.
    """

    workload: Path
    platform: str
    out_dir: Path
    scheduler: SchedulerSpec
    conversion: WorkloadOptions = field(default_factory=WorkloadOptions)
    replay: ReplaySpec = field(default_factory=ReplaySpec)
    engine: EngineSpec = field(default_factory=EngineSpec)
    force: bool = False
    timeout: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "workload", Path(self.workload))
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        object.__setattr__(self, "platform", str(self.platform))
        if self.timeout is not None:
            try:
                check_seconds(self.timeout, "--timeout")
            except ValueError as err:
                raise RunSpecError(str(err)) from None
        name, options = self.scheduler.name, self.scheduler.options
        if name in SPEEDUP_PREDICTING and options.get("speedup_options") and options.get("speedup_model") is None:
            raise RunSpecError(f"scheduler {name}: option speedup_options given without speedup_model")
        problem = sharing_problem(name, options, shares_hosts=self.engine.shares_hosts,
                                  engine_has_model=self.engine.speedup_model is not None)
        if problem is not None:
            raise RunSpecError(problem[1])
        if name in SPEEDUP_PREDICTING and options.get("speedup_model") is None:
            # the scheduler predicts with the engine's model (recorded in run.json as its options)
            options = {**options, "speedup_model": self.engine.speedup_model,
                       "speedup_options": dict(self.engine.speedup_options)}
            object.__setattr__(self, "scheduler", SchedulerSpec(name, options))

    @classmethod
    def build(cls, *, workload: str | Path, platform: str | Path, scheduler: str, out_dir: str | Path,
              force: bool = False, timeout: float | None = None, **options: Any) -> RunSpec:
        """A run from flat options, named as the serialised form (and ``batreplay run``'s options); options not
        given take their parts' defaults.

        Raises:
            RunSpecError: an unknown option name, or a value a part refuses (the message names it).
        """
        unknown = sorted(set(options) - set(FLAT_FIELDS))
        if unknown:
            raise RunSpecError(f"unknown run option(s) {', '.join(unknown)}; known: "
                               f"{', '.join([*_TOP_LEVEL, *FLAT_FIELDS])}")
        values: dict[str, dict[str, Any]] = {part: {} for part in _PARTS}
        values["scheduler"]["name"] = scheduler
        for key, value in options.items():
            part, name = FLAT_FIELDS[key]
            values[part][name] = value
        try:
            parts = {part: kind(**values[part]) for part, kind in _PARTS.items()}
        except RunSpecError:
            raise
        except (TypeError, ValueError) as err:
            raise RunSpecError(str(err)) from None
        return cls(workload=Path(workload), platform=str(platform), out_dir=Path(out_dir), force=force,
                   timeout=timeout, **parts)

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> RunSpec:
        """The run of a serialised form (:meth:`to_dict`).

        Raises:
            RunSpecError: a missing required key (workload, platform, scheduler, out_dir), an unknown key or a bad
                value.
        """
        missing = [key for key in ("workload", "platform", "scheduler", "out_dir") if key not in document]
        if missing:
            raise RunSpecError(f"run description without {', '.join(missing)}")
        return cls.build(**document)

    def to_dict(self) -> dict[str, Any]:
        """The serialised form: a flat JSON object (see the module docstring); ``from_dict(to_dict())`` is equal.
        Options that do not apply are left out (``sessions`` of a rigid replay; ``compute_sharing`` when off and the
        speedup model and its options when there is none: the run descriptions written before they existed stay the
        same)."""
        flat: dict[str, Any] = {"workload": str(self.workload), "platform": self.platform,
                                "out_dir": str(self.out_dir)}
        for key, (part, name) in FLAT_FIELDS.items():
            if key == "sessions" and not self.replay.applies_sessions:
                continue  # record only what applied: a rigid replay has no sessions
            if key == "compute_sharing" and not self.engine.compute_sharing:
                continue
            if key in ("speedup_model", "speedup_options") and self.engine.speedup_model is None:
                continue
            value = getattr(getattr(self, part), name)
            flat[key] = dict(value) if isinstance(value, dict) else value
        flat.update(force=self.force, timeout=self.timeout)
        return flat

    def replace(self, **options: Any) -> RunSpec:
        """A copy with some flat options changed (``spec.replace(max_jobs=100, out_dir=...)``); a replay changed to
        a user model without sessions drops the sessions it no longer uses, unless ``sessions`` is given too."""
        document = {**self.to_dict(), **options}
        if "replay" in options and "sessions" not in options:
            document.pop("sessions", None)  # the new model's own default, or none for a model without sessions
        return RunSpec.from_dict(document)


def part_defaults() -> dict[str, Any]:
    """Default value of every flat option (``profile``, ``sessions``...), read from the parts' own defaults: the
    command line and campaign files show these, so a default is written once, in its part."""
    defaults: dict[str, Any] = {}
    for key, (part, name) in FLAT_FIELDS.items():
        for item in dataclasses.fields(_PARTS[part]):
            if item.name == name and item.default is not dataclasses.MISSING:
                defaults[key] = item.default
    return defaults
