"""How ``batreplay model validate`` simulates a model, each option declared once (:func:`batreplay.options.option`):
the command line's flags and the web GUI's Models page are built from these declarations. Light: no numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from batreplay.options import check_fields, option
from batreplay.validation.choices import MODES


@dataclass(frozen=True)
class ValidationOptions:
    """How the model is simulated (:func:`batreplay.validation.validate.validate_model`): ``mode``, ``population``
    (closed; None: the held-out jobs' mean number in the system over their share of the jobs), ``seed`` (of the jobs
    drawn and of the share of them compared), ``warm_up`` (s left out at the window's start), and ``run``, not an
    option of its own: the scheduler's and the engine's run options by name (``scheduler``, ``scheduler_options``,
    ``engine``, ``compute_sharing``...: :func:`batreplay.run.spec.run_options`; the scheduler defaults to ``easy``).

    Raises:
        ValueError: an unknown mode, a population with an open run or that is neither a whole number >= 1 nor
            ``fill``, a negative seed or warm-up (each naming its option and flag).
    """

    mode: str = option("closed", choices=MODES,
                       help="closed: a population kept in the system (Caspart et al. 2019); open: the model's arrivals "
                            "at the whole site's rate; either simulates the whole site")
    population: str | None = option(
        None, optional=True, metavar="N|fill",
        help="closed: jobs kept in the whole site's system, a whole number or 'fill'",
        default_text="the held-out jobs' mean number in the system over the window, divided by their share of the jobs")
    seed: int = option(0, kind=int, at_least=0, help="seed of the jobs drawn and of the share of them compared")
    warm_up: float = option(0.0, kind=float, at_least=0, at_most=1e10, unit="s", metavar="SECONDS",
                            help="seconds left out at the window's start")
    run: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_fields(self, ValueError)
        if self.population is not None and self.mode != "closed":
            raise ValueError("--population: closed runs only (--mode closed)")
        if self.population is not None:  # checked now as the closed replay will check it
            from batreplay.replay.registry import ReplaySpec

            ReplaySpec("closed", population=self.population, closed_jobs=1)
