"""What a metric is: a name, a unit, a label, a display format and the function that computes it.

A :class:`Metric` is declared once, in the table of the module that computes it (``SCHEDULE_METRICS`` in
:mod:`batreplay.analysis.metrics`, ``LATENESS_METRICS`` in :mod:`batreplay.analysis.lateness`,
``ADEQUACY_METRICS`` in :mod:`batreplay.analysis.adequacy`); :mod:`batreplay.analysis.metric_registry`
gathers the tables and answers "what unit, what label, how to print" for any metric name. This module only
defines the record and the unit conversions, so that every table can import it without import cycles.

Display units. Values are computed, and written to ``metrics.csv`` / ``metrics.json``, in the metric's own
unit (seconds, node-seconds). Tables and consoles show a time in a readable unit chosen by one rule
(:func:`readable_time_unit`): from the largest absolute value shown together (one value on a console line;
one metric across all the runs of a table row or column), under one hour in seconds (``s``), under two days in
hours (``h``), beyond in days (``days``). A node-second metric follows the same rule (``node-s``, ``node-h``,
``node-days``). The same metric is thus in one unit across the runs it compares, and the unit is named in the
heading (:meth:`Metric.heading`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

#: Seconds in one unit of time, for tables that show a time metric in another unit than seconds.
SECONDS_IN: dict[str, float] = {"s": 1.0, "min": 60.0, "h": 3_600.0, "days": 86_400.0}
#: Largest absolute value (s) shown in seconds, then in hours (:func:`readable_time_unit`).
READABLE_LIMITS: tuple[tuple[float, str], ...] = ((3_600.0, "s"), (2 * 86_400.0, "h"))
#: Prefix of a unit that is a number of nodes times a time (``node-s``, ``node-h``, ``node-days``).
NODE_PREFIX = "node-"


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):  # None, pandas.NA, text
        return math.nan


def readable_time_unit(seconds: Iterable[float]) -> str:
    """The unit in which to show durations or instants given in seconds, all in the same unit.

    The largest absolute finite value decides: below 3600 s ``"s"``, below 2 days ``"h"``, otherwise ``"days"``
    (``"s"`` when there is no finite value). Seconds for waits under an hour, hours or days beyond, as the
    README and the campaign reports show them.

    Args:
        seconds: values in seconds (NaN and None ignored).
    """
    finite = [abs(number) for number in map(_as_float, seconds) if math.isfinite(number)]
    largest = max(finite, default=0.0)
    for limit, unit in READABLE_LIMITS:
        if largest < limit:
            return unit
    return "days"


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
        readable: True (default) to show a time or node-time value in a readable unit (:meth:`display_unit`);
            False keeps the metric in its own unit everywhere, for a value read against a published reference
            value in that unit (the adequacy measure P in seconds, against the 12 s of Baranov et al. 2018).
    """

    name: str
    unit: str
    label: str
    fmt: str = "{:.4g}"
    compute: Callable[[Any], Any] | None = None
    parameter: tuple[str, str] | None = None
    source: str = ""
    readable: bool = True

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
        label = self.label
        if shown != self.unit and shown.startswith(NODE_PREFIX):
            label = label.replace("node-seconds", "node time")  # "busy node time (node-days)"
        text = f"{label} ({shown})" if shown else label
        if self.parameter is not None and self.parameter[0] in parameters:
            name, parameter_unit = self.parameter
            text += f" ({name} = {parameters[name]:g} {parameter_unit})".replace(" )", ")")
        return text

    def format(self, value: Any, unit: str | None = None) -> str:
        """``value`` (in the metric's unit) as text: through :attr:`fmt` (an int for a count, a float
        otherwise), or, when ``unit`` is another unit (:meth:`divisor`), converted with two decimals
        (``"43.89"`` days) and thousands separated.

        Raises:
            ValueError: a count that is NaN; a ``unit`` the metric cannot be shown in.
        """
        if unit is None or unit == self.unit:
            return self.fmt.format(int(value) if self.is_count else float(value))
        return f"{float(value) / self.divisor(unit):,.2f}"

    def display_unit(self, values: Iterable[float]) -> str:
        """The unit to show ``values`` of this metric in (given in the metric's unit), all in the same one.

        Time metrics (``s``) and node-time metrics (``node-s``) follow :func:`readable_time_unit` on the
        largest absolute value; other metrics, and those with :attr:`readable` False, keep their unit.
        """
        if not self.readable:
            return self.unit
        if self.unit == "s":
            return readable_time_unit(values)
        if self.unit == NODE_PREFIX + "s":
            return NODE_PREFIX + readable_time_unit(values)
        return self.unit

    def divisor(self, unit: str) -> float:
        """What to divide a value by to show it in ``unit`` (1 for the metric's own unit).

        Raises:
            ValueError: ``unit`` is neither the metric's unit nor, for a time metric (``s``), a unit of
                :data:`SECONDS_IN`, nor, for a node-time metric (``node-s``), ``node-`` and such a unit.
        """
        if unit == self.unit:
            return 1.0
        if self.unit == "s" and unit in SECONDS_IN:
            return SECONDS_IN[unit]
        if self.unit == NODE_PREFIX + "s" and unit.startswith(NODE_PREFIX) and unit[len(NODE_PREFIX):] in SECONDS_IN:
            return SECONDS_IN[unit[len(NODE_PREFIX):]]
        raise ValueError(f"metric {self.name} is in {self.unit or 'no unit'!r}, cannot be shown in {unit!r}")
