"""Which engine simulates a run, and its per-run features: :class:`EngineSpec`, its options declared once.

A light module (no numpy, no ZeroMQ): the command line builds ``batreplay run``'s engine flags from these
declarations (:func:`batreplay.options.declared_options`), as campaign files and the web GUI do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from batreplay.deadline import MAX_SECONDS
from batreplay.engine.choices import DEFAULT_ENGINE, DEFAULT_TIMEOUT, ENGINES, SPEEDUP_MODEL_NAMES
from batreplay.options import check_fields, option


class EngineSpecError(ValueError):
    """An engine specification that names no engine of :data:`~batreplay.engine.choices.ENGINES`, a timeout that
    is not > 0 s, or a feature the engine cannot apply; the message names the option."""


@dataclass(frozen=True)
class EngineSpec:
    """Which engine simulates.

    Attributes:
        name: one of :data:`~batreplay.engine.choices.ENGINES`.
        batsim: the real ``batsim`` executable (a path or a command on PATH); None: ``batsim`` on PATH. Ignored
            by the embedded engine.
        batsim_timeout: seconds a real Batsim may stay silent (its start-up included) or take to exit.
        compute_sharing: several jobs may run on one host at once, sharing its flop rate (Batsim's
            ``--enable-compute-sharing``; the embedded engine plays SimGrid's sharing, see
            :mod:`batreplay.engine.sharing`). Both engines honour it.
        speedup_model: co-scheduling, an extension of the embedded engine (:mod:`batreplay.engine.coscheduling`):
            the name of a speedup model (:data:`batreplay.platforms.speedup.SPEEDUP_MODELS`), or None (off).
        speedup_options: the model's options (see :func:`batreplay.platforms.speedup.make_speedup_model`).

    Raises:
        EngineSpecError: a value its option refuses (an unknown engine or speedup model, a ``batsim_timeout`` that
            is not a number of seconds > 0 and <= :data:`~batreplay.deadline.MAX_SECONDS`), a speedup model with
            a real Batsim, or speedup options without a model.
    """

    name: str = option(DEFAULT_ENGINE, name="engine", choices=ENGINES, campaign="campaign", recorded="always",
                       form=False,  # (the form offers a real Batsim only where one is installed)
                       help="embedded: the in-process Batsim-exact engine; batsim: a real Batsim 4.2 over ZeroMQ")
    batsim: str | None = option(None, optional=True, recorded="always", form=False,
                                help="path of the batsim executable", default_text="found on PATH")
    batsim_timeout: float = option(
        DEFAULT_TIMEOUT, kind=float, above=0, at_most=MAX_SECONDS, unit="s", metavar="SECONDS", recorded="always",
        form=False,
        help="--engine batsim: the longest Batsim may stay silent (including its start-up) or take to exit after "
             "the end before the run is stopped")
    compute_sharing: bool = option(
        False, kind=bool, campaign="experiment",
        help="let several jobs run on one host at once, sharing its flop rate as SimGrid does (Batsim's "
             "--enable-compute-sharing; both engines)")
    speedup_model: str | None = option(
        None, choices=SPEEDUP_MODEL_NAMES, optional=True, campaign="experiment",
        help="co-scheduling (embedded engine only): jobs on shared hosts run at their speed alone times the worst "
             "speedup beside their neighbours, from this model: none (1), table (per job class, from a CSV "
             "file), random (seeded)", default_text="off")
    speedup_options: dict = option(
        {}, kind=dict, campaign="experiment", recorded_with="speedup_model",
        help='JSON object of options for the speedup model: table: {"table": "speedups.csv", "class_field": '
             '"class", "default_class": null}; random: {"seed": 0, "low": 0.5, "high": 1.5}')

    def __post_init__(self) -> None:
        if self.batsim is not None:
            object.__setattr__(self, "batsim", os.fspath(self.batsim))
        check_fields(self, EngineSpecError)
        if self.speedup_model is not None and self.name != "embedded":
            raise EngineSpecError("co-scheduling speedup models (--speedup-model) are an extension of the "
                                  "embedded engine: real Batsim cannot apply them (use --engine embedded)")
        if self.speedup_options and self.speedup_model is None:
            raise EngineSpecError("speedup options (--speedup-options) given without a speedup model "
                                  "(--speedup-model)")

    @property
    def shares_hosts(self) -> bool:
        """Several jobs may run on one host: compute sharing or co-scheduling."""
        return self.compute_sharing or self.speedup_model is not None

    def make_speedup_model(self):
        """The co-scheduling speedup model (a :class:`batreplay.platforms.speedup.SpeedupModel`), or None when off.

        Raises:
            batreplay.platforms.speedup.SpeedupModelError: an unknown option, an unreadable table.
        """
        if self.speedup_model is None:
            return None
        from batreplay.platforms.speedup import make_speedup_model

        return make_speedup_model(self.speedup_model, self.speedup_options)
