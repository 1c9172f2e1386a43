"""How a site model is fitted (``batreplay model fit``), each option declared once (:func:`batreplay.options.option`):
the command line's flags and the web GUI's Models page are built from these declarations. Light: no numpy, so the
``batreplay`` parser reads them at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from batreplay.options import Option, check_fields, declared_options, option
from batreplay.sitemodels.choices import DEFAULT_MAX_BINS, FIELD_COLUMNS
from batreplay.workloads.choices import DEFAULT_RECORDED_SPEED, DEFAULT_REFERENCE_IO_RATE


@dataclass(frozen=True)
class FitOptions:
    """How a model is fitted (:mod:`batreplay.sitemodels.fit`). Units: ``node_speed`` flop/s, ``reference_io_rate``
    bytes/s. ``select`` is not an option of its own kind: ``{field: [values]}`` (fields of
    :data:`~batreplay.sitemodels.choices.FIELD_COLUMNS`), read from ``--select FIELD=V1,V2`` by the command line.

    Raises:
        ValueError: ``split`` not in (0, 1], ``demand_rounds`` < 1, a rate or speed <= 0, ``io_share`` not in
            [0, 1), a negative seed, or a selection on an unknown field (each naming its option and flag).
    """

    split: float = option(0.5, kind=float, above=0, at_most=1,
                          help="share of the kept jobs to calibrate on; the others are the test jobs")
    seed: int = option(0, kind=int, at_least=0, help="seed of the split")
    select: Mapping[str, Sequence[int]] | None = field(default=None)
    node_speed: float = option(DEFAULT_RECORDED_SPEED, kind=float, above=0, unit="flop/s",
                               name="speed", metavar="FLOP_PER_S",
                               help="speed of a node of the recorded machine: CPU demand = CPU seconds x speed")
    reference_io_rate: float = option(
        DEFAULT_REFERENCE_IO_RATE, kind=float, above=0, unit="bytes/s", metavar="BYTES_PER_S",
        help="rate a node read at when the log was recorded: I/O demand = I/O seconds x rate")
    io_share: float | None = option(
        None, kind=float, at_least=0, below=1, optional=True, metavar="SHARE",
        help="share of each job's run time spent on I/O", default_text="the run time minus the log's CPU time")
    demand_rounds: int = option(1, kind=int, at_least=1, metavar="K",
                                help="rounds of reading and computing of every job")
    max_bins: int = option(DEFAULT_MAX_BINS, kind=int, at_least=1, metavar="B", help="most bins of a histogram")

    def __post_init__(self) -> None:
        check_fields(self, ValueError)
        for name in self.select or {}:
            if name not in FIELD_COLUMNS:
                raise ValueError(f"--select {name}: expected one of {', '.join(FIELD_COLUMNS)}")


def fit_options() -> tuple[Option, ...]:
    """The declared options of a fit (:class:`FitOptions`), in order: the flags of ``model fit`` and the fields of the
    GUI's fit form."""
    return declared_options(FitOptions)
