"""The one description of a simulation run, shared by the command line, campaign instances and their worker.

A :class:`RunSpec` is composed of the parts each layer defines, with their allowed values, once:

- the workload and how it is converted: :class:`~batreplay.workloads.loading.WorkloadOptions` (profile types,
  recorded speed, first jobs only, walltime factor);
- the replay user model: :class:`~batreplay.replay.registry.ReplaySpec` (rigid, or think-time feedback with its
  sessions; Madon, Da Costa, Pierson 2024);
- the platform: a shipped platform name or a SimGrid file;
- the scheduler and its options: :class:`SchedulerSpec` (a name of :mod:`batreplay.schedulers.registry` or a pybatsim
  scheduler file);
- the engine: :class:`~batreplay.engine.spec.EngineSpec` (embedded, or a real Batsim and its timeout);
- what the metrics cover: :class:`MetricsSpec` (a warm-up left out);
- where the run directory goes, whether it may replace a previous run, a wall-clock limit, and the label the user
  gives the run (shown by the web GUI; no part of what is simulated).

Each option is declared once, as a field of its part made by :func:`batreplay.options.option` (name, type,
default, allowed values or range, unit, help, campaign key). :func:`run_options` lists them all, in the order of
``batreplay run --help``: the command line's flags, campaign files' keys, the web GUI's form fields and ``run.json``
are derived from that list, and adding an option to a part adds it everywhere.

Serialised form (:meth:`RunSpec.to_dict`, :meth:`RunSpec.from_dict`): one flat JSON object whose keys are the
options' names (``workload``, ``platform``, ``scheduler``, ``out_dir``, ``profile``, ``walltime_factor``,
``replay``, ``engine``, ``compute_sharing``, ...: the command-line flags without dashes, but ``out_dir`` for
``--out``). ``run.json`` stores it under ``spec``, a campaign instance's parameters are built from it, and
:func:`flat_fields` says which part and field each key sets.

This module is light (no pandas, numpy or pybatsim): the command line builds its parser from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batreplay.deadline import MAX_SECONDS
from batreplay.engine.spec import EngineSpec
from batreplay.options import MISSING, Option, check_fields, declared_options, option, recorded_values
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.replay.registry import MODEL_OPTIONS, REGISTRY, ReplaySpec, user_model
from batreplay.schedulers.names import SPEEDUP_PREDICTING, scheduler_help, sharing_problem
from batreplay.workloads.loading import WorkloadOptions, composing_options


#: Longest label of a run (:attr:`RunSpec.label`), in characters.
MAX_LABEL_CHARS = 120


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

    name: str = option(MISSING, name="scheduler", required=True, campaign="experiment", recorded="always", form=False,
                       help=scheduler_help())
    options: dict[str, Any] = option(
        {}, name="scheduler_options", kind=dict, campaign="experiment", recorded="always", form=False,
        help="JSON object of options for the scheduler: checked against what a built-in scheduler declares (its "
             "OPTIONS), passed unchecked to a scheduler file (self.options)")

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise RunSpecError(f"scheduler (--scheduler) must be a scheduler name or file, got {self.name!r}")
        check_fields(self, RunSpecError)


@dataclass(frozen=True)
class MetricsSpec:
    """What the run's metrics (``metrics.json``, the printed table, and ``batreplay analyze`` of the run without a
    ``--window``) cover: the simulated time from the first submission + ``warm_up`` (s) to the last finish
    (:func:`batreplay.analysis.metrics.warm_up_window`): the job statistics count the jobs submitted in it, the
    utilisation and throughput the time in it (jobs running then, whenever submitted). A simulation starts on an
    idle machine, a log's replay with its first jobs (Madon, Da Costa, Pierson 2024, Fig. 9, leave out two weeks), a
    closed replay with its whole population submitted at once (Caspart et al. 2019, Sect. 6, leave out a ramp-up of
    about 200,000 s).

    Raises:
        RunSpecError: a warm-up that is not a number of seconds from 0 to 1e10.
    """

    warm_up: float = option(
        0.0, kind=float, at_least=0, at_most=1e10, unit="s", campaign="log", metavar="SECONDS",
        help="leave the first SECONDS after the first submission out of the run's metrics: the jobs submitted in "
             "them leave the job statistics, and the utilisation and throughput count the time after them only")

    def __post_init__(self) -> None:
        check_fields(self, RunSpecError)


_PARTS = {"conversion": WorkloadOptions, "scheduler": SchedulerSpec, "replay": ReplaySpec, "engine": EngineSpec,
          "metrics": MetricsSpec}


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
        replay: the user model (``rigid``, ``feedback`` with its sessions, or a site model's ``closed`` or ``open``).
        engine: the embedded engine or a real Batsim.
        metrics: what the run's metrics cover (a warm-up left out).
        force: replace an existing run directory (only one that holds a previous run, atomically).
        timeout: wall-clock limit of the whole run in seconds, or None for no limit (see :mod:`batreplay.deadline`).
        label: what the user calls the run (one line of at most :data:`MAX_LABEL_CHARS` characters), or None. It is
            no part of what is simulated: :func:`batreplay.analysis.run_adequacy.setting_of` leaves it out, campaign
            files do not give it, and the web GUI names a labelled run by its simulation's hash and the label's
            (:func:`batreplay.ui.run_form.build_run`).

    Raises:
        RunSpecError: ``timeout`` is not None or a number of seconds > 0; job slots (scheduler option ``slots``)
            without compute sharing; a scheduler that predicts speedups (``easy-coscheduling``) without a model
            (its option ``speedup_model`` or the engine's, which it is given when it names none) or, sharing
            nodes, without co-scheduling or compute sharing; the parts check their own values.
    """

    workload: Path = option(
        MISSING, kind=Path, required=True, campaign="log", recorded="always", form=False,
        help="SWF log (.swf, .swf.gz) or Batsim workload (.json), or the name of a Parallel Workloads Archive log "
             "fetched with 'batreplay fetch' (e.g. KTH-SP2-1996-2.1-cln)")
    platform: str = option(
        MISSING, required=True, campaign="log", recorded="always", form=False,
        help=f"SimGrid platform file, or a shipped platform name ({', '.join(SHIPPED_PLATFORMS)})")
    out_dir: Path = option(MISSING, kind=Path, flag="--out", metavar="RUN_DIR", required=True, recorded="always",
                           form=False,
                           help="run directory to create")
    scheduler: SchedulerSpec = field(default=None)  # (required: checked below)
    conversion: WorkloadOptions = field(default_factory=WorkloadOptions)
    replay: ReplaySpec = field(default_factory=ReplaySpec)
    engine: EngineSpec = field(default_factory=EngineSpec)
    metrics: MetricsSpec = field(default_factory=MetricsSpec)
    force: bool = option(False, kind=bool, recorded="always", form=False,
                         help="replace an existing run directory (only one holding a previous run, atomically)")
    timeout: float | None = option(
        None, kind=float, above=0, at_most=MAX_SECONDS, optional=True, unit="s", metavar="SECONDS", recorded="always",
        form=False,
        help="stop the run with an error after SECONDS of wall-clock time, even if the scheduler never answers",
             default_text="no limit")
    label: str | None = option(
        None, optional=True, max_chars=MAX_LABEL_CHARS, metavar="TEXT", default_text="no label",
        help="a name for the run, kept in run.json and shown by the web GUI's Runs page instead of its id; it changes "
             "nothing of what is simulated")

    def __post_init__(self) -> None:
        if not isinstance(self.scheduler, SchedulerSpec):
            raise RunSpecError(f"scheduler (--scheduler): expected a SchedulerSpec, got {self.scheduler!r}")
        object.__setattr__(self, "platform", str(self.platform))
        check_fields(self, RunSpecError)
        name, options = self.scheduler.name, self.scheduler.options
        if name in SPEEDUP_PREDICTING and options.get("speedup_options") and options.get("speedup_model") is None:
            raise RunSpecError(f"scheduler {name}: option speedup_options given without speedup_model")
        for declaration in composing_options():
            if getattr(self.conversion, declaration.field) is not None and user_model(self.replay.model).dynamic:
                raise RunSpecError(f"{declaration.label} with the {self.replay.model} replay: its users submit jobs by "
                                   "registering their profiles, and Batsim 4.2.1 never links a registered composed "
                                   "profile to its steps; use a rigid replay")
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
              force: bool = False, timeout: float | None = None, label: str | None = None,
              **options: Any) -> RunSpec:
        """A run from flat options, named as the serialised form (and ``batreplay run``'s options); options not
        given take their parts' defaults.

        Raises:
            RunSpecError: an unknown option name, or a value a part refuses (the message names it).
        """
        fields = flat_fields()
        unknown = sorted(set(options) - set(fields))
        if unknown:
            raise RunSpecError(f"unknown run option(s) {', '.join(unknown)}; known: "
                               f"{', '.join([*_TOP_LEVEL, *fields])}")
        values: dict[str, dict[str, Any]] = {part: {} for part in _PARTS}
        values["scheduler"]["name"] = scheduler
        for key, value in options.items():
            part, name = fields[key]
            values[part][name] = value
        try:
            parts = {part: kind(**values[part]) for part, kind in _PARTS.items()}
        except RunSpecError:
            raise
        except (TypeError, ValueError) as err:
            raise RunSpecError(str(err)) from None
        return cls(workload=workload, platform=str(platform), out_dir=out_dir, force=force, timeout=timeout,
                   label=label, **parts)

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
        An option declared ``recorded="when-set"`` is left out when it is off (``sessions`` of a rigid replay,
        ``compute_sharing`` when off, no speedup model and its options): the run descriptions written before it
        existed stay the same. So is ``label`` when there is none."""
        flat: dict[str, Any] = {"workload": str(self.workload), "platform": self.platform,
                                "out_dir": str(self.out_dir)}
        values = {declaration.name: getattr(getattr(self, part), declaration.field)
                  for declaration, part in _part_options()}
        for name, value in recorded_values(run_options(), values, leave_out="off").items():
            flat[name] = dict(value) if isinstance(value, dict) else value
        flat.update(force=self.force, timeout=self.timeout)
        if self.label is not None:
            flat["label"] = self.label
        return flat

    def replace(self, **options: Any) -> RunSpec:
        """A copy with some flat options changed (``spec.replace(max_jobs=100, out_dir=...)``); a replay changed to
        another user model drops the sessions and the options of some models only (``population``, ``open_jobs``...)
        that the new model does not read, unless they are given too.

        Raises:
            RunSpecError: as :meth:`from_dict`.
        """
        document = {**self.to_dict(), **options}
        if "replay" in options and "sessions" not in options:
            document.pop("sessions", None)  # the new model's own default, or none for a model without sessions
        if "replay" in options:  # the options of some models only that the new model does not read, unless given
            reads = REGISTRY[options["replay"]].options if options["replay"] in REGISTRY else ()  # (else refused below)
            for name in MODEL_OPTIONS:
                if name not in reads and name not in options:
                    document.pop(name, None)
        return RunSpec.from_dict(document)


def _part_options() -> tuple[tuple[Option, str], ...]:
    """Every option of a part, with the part's name in :class:`RunSpec` (``conversion``, ``scheduler``, ``replay``,
    ``engine``, ``metrics``), in that order (read from the part classes at each call: cheap,
    :func:`declared_options` caches)."""
    return tuple((declaration, part) for part, kind in _PARTS.items() for declaration in declared_options(kind))


def flat_fields() -> dict[str, tuple[str, str]]:
    """Flat key of the serialised form -> (part of :class:`RunSpec`, field of that part), for the parts' options
    (``"walltime_factor"`` -> ``("conversion", "walltime_factor")``, ``"replay"`` -> ``("replay", "model")``,
    ``"warm_up"`` -> ``("metrics", "warm_up")``)."""
    return {declaration.name: (part, declaration.field) for declaration, part in _part_options()}


#: :func:`flat_fields` of the shipped parts (for readers that need no option added at run time).
FLAT_FIELDS: dict[str, tuple[str, str]] = flat_fields()
#: The options of the run itself (workload, platform, run directory, force, timeout).
_TOP_LEVEL: tuple[str, ...] = tuple(declaration.name for declaration in declared_options(RunSpec))


def run_options() -> tuple[Option, ...]:
    """Every run option, in the order of ``batreplay run --help``: the workload, platform, scheduler and run
    directory, then the parts' options (conversion, scheduler options, user model, engine, metrics), then ``force``,
    ``timeout`` and ``label``. The command line, campaign files and the web GUI's form are built from this list."""
    own = {declaration.name: declaration for declaration in declared_options(RunSpec)}
    parts = [declaration for declaration, _part in _part_options()]
    scheduler = next(declaration for declaration in parts if declaration.name == "scheduler")
    rest = [declaration for declaration in parts if declaration is not scheduler]
    return (own["workload"], own["platform"], scheduler, own["out_dir"], *rest, own["force"], own["timeout"],
            own["label"])


def run_option(name: str) -> Option:
    """The declaration of the run option ``name`` (``walltime_factor``...).

    Raises:
        KeyError: no such option (the message lists the known ones).
    """
    for declaration in run_options():
        if declaration.name == name:
            return declaration
    raise KeyError(f"no run option {name!r}; known: {', '.join(d.name for d in run_options())}")


def part_defaults() -> dict[str, Any]:
    """Default value of every option of a part (``profile``, ``sessions``...), from its declaration: the command
    line and campaign files show these, so a default is written once, in its part."""
    return {declaration.name: declaration.default for declaration, _part in _part_options()
            if declaration.name != "scheduler"}
