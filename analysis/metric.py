"""What a metric is: a name, a unit, a label, a display format and the function that computes it.

A :class:`Metric` is declared once, in the table of the module that computes it (``SCHEDULE_METRICS`` in
:mod:`batreplay.analysis.metrics`, ``LATENESS_METRICS`` in :mod:`batreplay.analysis.lateness`,
``ADEQUACY_METRICS`` in :mod:`batreplay.analysis.adequacy`); :mod:`batreplay.analysis.metric_registry`
gathers the tables and answers "what unit, what label, how to print" for any metric name. This module only
defines the record and the unit conversions, so that every table can import it without import cycles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Seconds in one unit of time, for tables that show a time metric in another unit than seconds.
SECONDS_IN: dict[str, float] = {"s": 1.0, "min": 60.0, "h": 3_600.0, "days": 86_400.0}


@dataclass(frozen=True)
class Metric:
    """One metric.

    Attributes:
        name: key in ``metrics.json`` / column of ``metrics.csv`` (``mean_waiting_time``).
        unit: unit of the computed value: ``"s"`` (seconds), ``"nodes"``, ``"node-s"`` (node-seconds),
            ``"jobs/day"``, ``"jobs/week"``, or ``""`` for counts and dimensionless ratios.
        label: a few lower-case words without the unit (``"mean waiting time"``).
        fmt: :meth:`str.format` pattern of the value for consoles (``"{:.1f}"``; ``"{:d}"`` for counts).
        compute: the function computing the value from the facts its table is computed on (for instance
            :class:`batreplay.analysis.metrics.ScheduleFacts`); None for a column that is an input of the
            run rather than a computed value (``nb_resources``).
        parameter: ``(name, unit)`` of a parameter the value depends on and that a label should state,
            e.g. ``("tau", "s")`` for the bounded slowdown (Rauch 2022).
        source: where the definition comes from (author, year, equation), for documentation.
    """

    name: str
    unit: str
    label: str
    fmt: str = "{:.4g}"
    compute: Callable[[Any], Any] | None = None
    parameter: tuple[str, str] | None = None
    source: str = ""

    @property
    def is_count(self) -> bool:
        """True when the value is an integer count (format ``{:d}``)."""
        return self.fmt.endswith(":d}")

    def heading(self, unit: str | None = None, **parameters: float) -> str:
        """``label (unit)``, e.g. ``"mean waiting time (s)"``; the label alone when there is no unit.

        Args:
            unit: show the value in this unit instead (a key of :data:`SECONDS_IN` for a time metric).
            parameters: values of :attr:`parameter`; when given, appended as ``(tau = 10 s)``.
        """
        shown = self.unit if unit is None else unit
        text = f"{self.label} ({shown})" if shown else self.label
        if self.parameter is not None and self.parameter[0] in parameters:
            name, parameter_unit = self.parameter
            text += f" ({name} = {parameters[name]:g} {parameter_unit})".replace(" )", ")")
        return text

    def format(self, value: Any) -> str:
        """``value`` through :attr:`fmt` (an int for a count, a float otherwise).

        Raises:
            ValueError: a count that is NaN.
        """
        return self.fmt.format(int(value) if self.is_count else float(value))

    def divisor(self, unit: str) -> float:
        """What to divide a value by to show it in ``unit`` (1 for the metric's own unit).

        Raises:
            ValueError: ``unit`` is neither the metric's unit nor, for a time metric (``s``), a unit of
                :data:`SECONDS_IN`.
        """
        if unit == self.unit:
            return 1.0
        if self.unit == "s" and unit in SECONDS_IN:
            return SECONDS_IN[unit]
        raise ValueError(f"metric {self.name} is in {self.unit or 'no unit'!r}, cannot be shown in {unit!r}")
