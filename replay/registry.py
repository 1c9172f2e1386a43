"""User models by name, and the serialisable replay specification.

A replay says *when* each job of a log is submitted. The models, by name (:data:`USER_MODELS`, the one list the
command line and campaign files take their choices from):

- ``rigid``: every job at its recorded submission time. Nothing dynamic is built: the jobs stay in the static
  Batsim workload and no broker is involved (the entry has no builder).
- ``feedback``: think-time feedback (Madon, Da Costa, Pierson 2024, Algorithm 1): users replay their session
  graphs, each session submitted once those it depends on have finished in the simulation, after the recorded
  think time (:class:`batreplay.replay.feedback.ThinkTimeUsers`, behind the feedback broker).
- ``adjusted``, ``distribution``, ``fluid`` (Zakay and Feitelson 2015) and ``schlagkamp`` (Schlagkamp 2017): the
  same feedback loop on *batches* of overlapping jobs instead of sessions, with the recorded think times, think
  times drawn from the log's, periods of activity, or fitted think times and activity windows
  (:mod:`batreplay.replay.batch_replay`).
- ``closed`` and ``open`` replay a site model (``batreplay model fit``; Caspart et al. 2019) given as the workload
  instead of a log: ``closed`` keeps a population of drawn jobs in the system, behind the broker
  (:mod:`batreplay.replay.closed`); ``open`` draws the jobs and their arrival times into the static workload
  (:func:`batreplay.sitemodels.generate.open_workload`), with no broker.

Adding a user model takes one new file and one line here. The file defines the model (any object with the
methods of :class:`batreplay.replay.protocol.UserModel`) and a builder ``(document, job_table, spec) -> (users,
requests, note)``; e.g. users who submit every job at once, at time 0::

    # replay/eager.py
    from batreplay.replay.feedback_setup import job_requests

    class EagerUsers:
        def __init__(self, job_ids):
            self._due, self._nb_jobs = list(job_ids), len(job_ids)
        def next_submission_time(self):
            return 0.0 if self._due else None
        def pop_due(self, now):
            due, self._due = self._due, []
            return due
        def job_terminated(self, job_id, now):
            pass
        @property
        def all_submitted(self):
            return not self._due
        @property
        def nb_jobs(self):
            return self._nb_jobs

    def build(document, job_table, spec):
        requests = job_requests(document)
        return EagerUsers(list(requests)), requests, f"eager replay: {len(requests)} jobs at t = 0"

and the registry line, in :data:`REGISTRY` below::

    "eager": UserModelEntry("every job at time 0", "batreplay.replay.eager:build"),

Builders are named by ``"module:function"`` and imported only when a replay uses them. The models of a site model
(``closed``, ``open``) are read by the run itself (:func:`batreplay.run.runner.run` loads the model file), so a new
model of that source takes more than its line here.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from batreplay.options import check_fields, option
from batreplay.replay.protocol import ReplayError, UserModel

if TYPE_CHECKING:  # this module stays light (the command line reads USER_MODELS): pandas and sessions when used
    import pandas as pd

#: ``builder(document, job_table, spec) -> (users, requests, note)``: the user model of a converted SWF workload
#: (Batsim document, per-job SWF table), the per-job requests the broker registers (``{job number: {"res",
#: "walltime", "profile"}}``) and a one-line summary.
Builder = Callable[[dict, "pd.DataFrame", "ReplaySpec"], tuple[UserModel, dict[int, dict[str, Any]], str]]


@dataclass(frozen=True)
class UserModelEntry:
    """A registered user model.

    Attributes:
        summary: one line for help texts.
        builder: None for a model that needs no decision process of its own (``rigid``: the jobs stay in the
            static workload), else a :data:`Builder` or its ``"module:function"`` name (imported when used).
        report_kinds: the campaign report's table and figure kinds (names of ``[report] tables`` and ``figures``)
            that are about this model's replays: a kind some models declare shows the replays of those models
            only, a kind no model declares shows every replay (:mod:`batreplay.reports.user_models`). Plain names:
            this layer does not import the reports.
        source: what the model replays: ``"log"`` (a workload log's jobs; a dynamic model among them uses sessions)
            or ``"site-model"`` (jobs drawn from a site model file, given as the workload; its builder is called
            ``builder(site_model, nb_res, slots, spec)``, see :func:`batreplay.replay.closed.build_closed_users`;
            a site model without builder, ``open``, is drawn into the static workload by the run).
        options: the options of :class:`ReplaySpec` that this model reads among those of some models only
            (:data:`MODEL_OPTIONS`, e.g. ``model_seed`` for closed and open); set with a model that does not read them,
            they are refused.
    """

    summary: str
    builder: str | Builder | None = None
    report_kinds: tuple[str, ...] = ()
    source: str = "log"
    options: tuple[str, ...] = ()

    @property
    def dynamic(self) -> bool:
        """True when jobs reach Batsim by dynamic registration through the feedback broker."""
        return self.builder is not None

    @property
    def uses_sessions(self) -> bool:
        """True for the models that submit a log's jobs through the broker, by sessions (``feedback``)."""
        return self.dynamic and self.source == "log"

    def build(self, *inputs: Any):
        """Call the builder with ``inputs`` (see :data:`Builder`, and :attr:`source`), the replay's spec last.
        Raises ReplayError for a model without one."""
        spec = inputs[-1]
        builder = self.builder
        if builder is None:
            raise ReplayError(f"user model {spec.model!r} builds no users: its jobs stay in the static workload")
        if isinstance(builder, str):
            module, _, name = builder.partition(":")
            builder = getattr(importlib.import_module(module), name)
        return builder(*inputs)


#: Most jobs a replay draws from a site model (closed: its population included; they are held in memory).
MAX_MODEL_JOBS = 10_000_000
#: The session rule of feedback replays when none is given (Madon, Da Costa, Pierson 2024: arrival, 60 min).
DEFAULT_SESSIONS = "arrival:60"

#: The report's tables and figures about replays whose users react to the simulated schedule (Madon, Da Costa,
#: Pierson 2024: lateness, Table 2, Figs. 3-5, 7 and 11; submissions, Figs. 2 and 8), declared by each such model.
REACTIVE_REPORT_KINDS = ("lateness", "user-lateness-percentiles", "submissions", "user-mean-lateness",
                         "user-additional-lateness", "weekly-submissions", "submission-differences",
                         "additional-lateness-scaling")
#: The user models, by name.
REGISTRY: dict[str, UserModelEntry] = {
    # Rauch 2022 compares schedulers on the recorded submission times
    "rigid": UserModelEntry("every job at its recorded submission time (static workload, no broker)",
                            report_kinds=("scheduler-comparison",)),
    # Madon, Da Costa, Pierson 2024: lateness (Table 2, Figs. 4, 5), submissions (Figs. 2, 8), session graphs (Fig. 6)
    "feedback": UserModelEntry("think-time feedback on session graphs (Madon, Da Costa, Pierson 2024)",
                               "batreplay.replay.feedback_setup:build_feedback_users",
                               report_kinds=(*REACTIVE_REPORT_KINDS, "session-graphs")),
    # Zakay and Feitelson 2015, Schlagkamp 2017 (Madon, Da Costa, Pierson 2024, sections 2 and 7.5): replays by batches
    "adjusted": UserModelEntry("batches of overlapping jobs, each submitted once those it depends on have finished, "
                               "after the recorded think time (Zakay and Feitelson 2015)",
                               "batreplay.replay.batch_replay:build_adjusted_users",
                               report_kinds=REACTIVE_REPORT_KINDS),
    "distribution": UserModelEntry("batches as in adjusted, think times drawn from the log's (the user's own when "
                                   "enough), seeded (Zakay and Feitelson 2015, distribution-based)",
                                   "batreplay.replay.batch_replay:build_distribution_users", options=("model_seed",),
                                   report_kinds=REACTIVE_REPORT_KINDS),
    "fluid": UserModelEntry("batches as in adjusted, submitted only inside the user's recorded sessions, the "
                            "periods of activity (Zakay and Feitelson 2015, fluid)",
                            "batreplay.replay.batch_replay:build_fluid_users",
                            report_kinds=REACTIVE_REPORT_KINDS),
    "schlagkamp": UserModelEntry("batches whose think time is a linear function of the response time before, "
                                 "inside daily and weekly activity windows, both fitted on the log (Schlagkamp 2017)",
                                 "batreplay.replay.batch_replay:build_schlagkamp_users",
                                 report_kinds=REACTIVE_REPORT_KINDS),
    # Caspart et al. 2019, Sect. 6: GridKa's batch system kept full; jobs drawn from a site model (batreplay model fit)
    "closed": UserModelEntry("a closed workload: a population of jobs drawn from a site model (the --workload), each "
                             "job that ends replaced at once (Caspart et al. 2019)",
                             "batreplay.replay.closed:build_closed_users", source="site-model",
                             options=("population", "closed_jobs", "closed_duration", "model_seed")),
    # Lublin and Feitelson 2003, AccaSim: jobs arrive whatever the system does (batreplay model generate, then rigid)
    "open": UserModelEntry("an open workload: jobs drawn from a site model (the --workload) and submitted at the "
                           "model's arrival times, whatever the system does (Caspart et al. 2019's model, open)",
                           source="site-model", options=("open_jobs", "open_duration", "model_seed")),
}
#: The options of :class:`ReplaySpec` that belong to some models only: those the entries declare
#: (:attr:`UserModelEntry.options`), in order.
MODEL_OPTIONS: tuple[str, ...] = tuple(dict.fromkeys(name for entry in REGISTRY.values() for name in entry.options))
#: Allowed user model names, in registry order: the choices of ``--replay`` and of campaign files.
USER_MODELS: tuple[str, ...] = tuple(REGISTRY)
#: The user model of a replay when none is named: rigid replay.
DEFAULT_USER_MODEL: str = "rigid"


class UnknownUserModelError(ReplayError):
    """A user model name that is not in :data:`REGISTRY`; the message lists the allowed ones."""


def user_model(name: str) -> UserModelEntry:
    """The registry entry of ``name``.

    Raises:
        UnknownUserModelError: not a registered name.
    """
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownUserModelError(f"unknown user model {name!r}; expected one of {', '.join(REGISTRY)}") from None


@dataclass(frozen=True)
class ReplaySpec:
    """How a log is replayed: a user model and, for models built on sessions, where the sessions come from.

    Plain strings only, so ``dataclasses.asdict`` and ``ReplaySpec(**d)`` round-trip through JSON or TOML.

    Attributes:
        model: a name of :data:`USER_MODELS`.
        sessions: ``method:minutes`` (``arrival:60``), a label (``a60``) or a directory of session graphs (see
            :mod:`batreplay.replay.session_source`), for a model that uses sessions (see :meth:`applies_sessions`);
            None (the default) gives such a model :data:`DEFAULT_SESSIONS`. A model that uses no sessions
            (``rigid``) keeps None, and a run's ``run.json`` does not record it.
        population, closed_jobs, closed_duration: the closed replay's (:mod:`batreplay.replay.closed`): jobs kept in
            the system (``"fill"`` or a whole number as text), jobs in all, seconds after which ended jobs are not
            replaced.
        open_jobs, open_duration: the open replay's: jobs drawn, or seconds of arrivals drawn (exactly one).
        model_seed: the seed of a model's draws: the jobs of a site model's replay (closed or open), the think times
            of a distribution replay.
            Each is refused with a model that does not read it (:attr:`UserModelEntry.options`); recorded when set.

    Raises:
        UnknownUserModelError: ``model`` is not registered.
        ReplayError: ``sessions`` given (not None) to a model that uses no sessions (it would be ignored); or
            ``sessions`` is not a non-empty string, or is meant as a rule (contains ``:`` or starts like ``a60``),
            is not an existing directory, and does not parse. A directory is only read when the replay is built.
    """

    # (choices read when asked: a model registered later is a valid name too)
    model: str = option(DEFAULT_USER_MODEL, name="replay", choices=lambda: tuple(REGISTRY), campaign="matrix",
                        recorded="always", form=False,
                        help="the user model: " + "; ".join(f"{name}: {entry.summary}"
                                                           for name, entry in REGISTRY.items()))
    sessions: str | None = option(
        None, optional=True, campaign="matrix", form=False,
        help="sessions of a user model that uses them (feedback): method:minutes (arrival:60, last:60, max:60), "
             "a60-style label, or a directory written by 'batreplay sessions'; refused with a model that uses "
             "none (rigid)", default_text=f"{DEFAULT_SESSIONS} with a model that uses sessions")

    population: str | None = option(
        None, optional=True, campaign="log", metavar="N|fill",
        help="closed replay: jobs kept in the system, a whole number or 'fill' (the platform's job slots, the host "
             "property slots, else 1 per host)", default_text="fill with --replay closed")
    closed_jobs: int | None = option(None, kind=int, at_least=1, at_most=MAX_MODEL_JOBS, optional=True,
                                     campaign="log",
                                     help="closed replay: jobs in all (the population included)",
                                     default_text="none")
    closed_duration: float | None = option(
        None, kind=float, above=0, at_most=1e10, optional=True, unit="s", campaign="log",
        help="closed replay: seconds after which jobs that end are not replaced", default_text="none",
        range_note="beyond 1e10 s the two engines' times no longer agree")
    open_jobs: int | None = option(None, kind=int, at_least=1, at_most=MAX_MODEL_JOBS, optional=True,
                                   campaign="log",
                                   help="open replay: jobs drawn from the site model", default_text="none")
    open_duration: float | None = option(
        None, kind=float, above=0, at_most=1e10, optional=True, unit="s", campaign="log",
        help="open replay: seconds of the model's arrivals drawn (from its start)", default_text="none",
        range_note="beyond 1e10 s the two engines' times no longer agree")
    model_seed: int = option(0, kind=int, at_least=0,
                             help="seed of a user model's draws: the jobs drawn from the site model (closed, open), "
                                  "the think times drawn from the log (distribution)")

    def __post_init__(self) -> None:
        user_model(self.model)
        check_fields(self, ReplayError)
        self._check_model_options()
        if not self.applies_sessions:
            if self.sessions is not None:
                users = ", ".join(name for name, entry in REGISTRY.items() if entry.uses_sessions)
                raise ReplayError(f"--sessions {self.sessions!r}: the user model {self.model!r} (--replay) uses no "
                                  f"sessions; leave --sessions out, or replay with a model that uses them ({users})")
            return
        if self.sessions is None:
            object.__setattr__(self, "sessions", DEFAULT_SESSIONS)
        from batreplay.replay.session_source import is_session_directory, looks_like_rule, parse_session_rule

        if not isinstance(self.sessions, str):
            raise ReplayError(f"--sessions must be text, not {type(self.sessions).__name__}")
        if not self.sessions.strip() or (looks_like_rule(self.sessions) and not is_session_directory(self.sessions)):
            parse_session_rule(self.sessions)

    def _check_model_options(self) -> None:
        """The options of some models only (:data:`MODEL_OPTIONS`): refused with another model (they would be
        ignored). A closed replay's population is a whole number >= 1 or ``fill`` (the default), and it needs a
        number of jobs or a duration; an open replay needs one of its number of jobs and duration."""
        given = [name for name in MODEL_OPTIONS
                 if getattr(self, name) is not None and (name != "model_seed" or self.model_seed != 0)]
        reads = user_model(self.model).options
        for name in given:
            if name not in reads:
                owners = " or ".join(f"--replay {model}" for model, entry in REGISTRY.items() if name in entry.options)
                raise ReplayError(f"--{name.replace('_', '-')}: an option of {owners}; the user model {self.model!r} "
                                  "does not use it")
        if self.model == "open" and (self.open_jobs is None) == (self.open_duration is None):
            raise ReplayError("--replay open: give --open-jobs N or --open-duration SECONDS (one of them): how many "
                              "of the model's arrivals are drawn")
        if self.model != "closed":
            return
        if self.population is None:
            object.__setattr__(self, "population", "fill")
        if self.population != "fill" and not (re.fullmatch(r"[0-9]+", self.population)
                                               and 1 <= int(self.population) <= MAX_MODEL_JOBS):
            raise ReplayError(f"--population {self.population!r}: expected 'fill' or a whole number from 1 to "
                              f"{MAX_MODEL_JOBS:,}")
        if self.closed_jobs is None and self.closed_duration is None:
            raise ReplayError("--replay closed: give --closed-jobs N or --closed-duration SECONDS (or both): when "
                              "jobs that end stop being replaced")

    @property
    def applies_sessions(self) -> bool:
        """True when the user model reads :attr:`sessions` (the models that submit a log's jobs through the
        broker)."""
        return user_model(self.model).uses_sessions

    @property
    def dynamic(self) -> bool:
        """True when the model submits jobs through the feedback broker (see :attr:`UserModelEntry.dynamic`)."""
        return user_model(self.model).dynamic

    @property
    def label(self) -> str:
        """Short name: the model for ``rigid``; for feedback the session rule (``a60``) or the directory's name,
        for another model on sessions ``<model>-<that>`` (``adjusted-a60``), as campaigns name their replays."""
        if not self.dynamic:
            return self.model
        if self.model == "closed":
            return f"{self.model}-{self.population}"
        if not self.applies_sessions:
            return self.model
        from batreplay.replay.session_source import is_session_directory, looks_like_rule, parse_session_rule
        from batreplay.replay.sessions import session_spec_label

        if looks_like_rule(self.sessions) and not is_session_directory(self.sessions):
            label = session_spec_label(*parse_session_rule(self.sessions))
        else:
            label = Path(self.sessions).name or self.sessions
        return label if self.model == "feedback" else f"{self.model}-{label}"


def replay_decision_process(spec: ReplaySpec, document: dict, job_table: pd.DataFrame | None,
                            inner, *, site_model: Any = None, slots: int | None = None) -> tuple[Any, list[str]]:
    """The decision process that replays a workload under ``spec``, around the scheduler ``inner``.

    For a model without builder (``rigid``) it is ``inner`` itself and the workload is simulated as it is. For the
    others it is a :class:`~batreplay.replay.broker.FeedbackBroker` owning the model's users: the caller then
    gives Batsim a workload without jobs and enables dynamic registration
    (:data:`batreplay.replay.broker.REQUIRED_BATSIM_FLAGS`). A model of source ``site-model`` (``closed``) draws its
    jobs from ``site_model`` (a :class:`~batreplay.sitemodels.model_file.SiteModel`) on a platform of
    ``document["nb_res"]`` compute hosts holding ``slots`` job slots.

    Returns:
        ``(decision_process, notes)``: notes are one line each, for the run's input notes.

    Raises:
        ReplayError: a dynamic model of a log on a JSON workload (``job_table`` None: no user ids nor
            recorded times), a closed model without a site model, or what the model's builder raises (see
            :func:`batreplay.replay.feedback_setup.feedback_users`).
        TypeError: a builder that returned something that is not a :class:`~batreplay.replay.protocol.UserModel`.
    """
    entry = user_model(spec.model)
    if not entry.dynamic:
        return inner, []
    if entry.source == "site-model":
        if site_model is None or slots is None:
            raise ReplayError(f"{spec.model} replay draws its jobs from a site model: give a model file (batreplay "
                              "model fit) as the workload")
        return _broker(entry, spec, inner, site_model, document["nb_res"], slots)
    if job_table is None:
        raise ReplayError(f"{spec.model} replay needs an SWF log (user ids and recorded times), not a JSON workload")
    return _broker(entry, spec, inner, document, job_table)


def _broker(entry: UserModelEntry, spec: ReplaySpec, inner, *inputs: Any) -> tuple[Any, list[str]]:
    """The feedback broker around ``inner`` with the users ``entry``'s builder makes of ``inputs``."""
    from batreplay.replay.broker import FeedbackBroker

    users, requests, note = entry.build(*inputs, spec)
    if not isinstance(users, UserModel):
        raise TypeError(f"user model {spec.model!r}: its builder returned {type(users).__name__}, which lacks the "
                        "methods of batreplay.replay.protocol.UserModel")
    return FeedbackBroker(inner, users, requests), [note]
