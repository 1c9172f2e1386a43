"""Every metric by name: unit, label, display format, and the function computing it.

A metric is declared once, as one :class:`~batreplay.analysis.metric.Metric` line in the table of the module
that computes it; this module gathers the tables so that reports, summaries and campaign tables take units and
labels from one place:

- :data:`batreplay.analysis.metrics.SCHEDULE_METRICS`: what :func:`~batreplay.analysis.metrics.summarize`
  returns (waiting time, makespan, bounded slowdown, utilisation, ...), computed from a
  :class:`~batreplay.analysis.metrics.ScheduleFacts`;
- :data:`batreplay.analysis.lateness.LATENESS_METRICS`: lateness of a feedback replay (Madon, Da Costa,
  Pierson 2024, eqs. 3, 4, 6);
- :data:`batreplay.analysis.adequacy.ADEQUACY_METRICS`: the adequacy measure P against the recorded log
  (Baranov et al. 2018, eq. 2);
- :data:`RUN_COLUMNS`: numbers of ``metrics.csv`` that describe the run rather than measure it.

Adding a metric (for instance the largest bounded slowdown) takes one function and one line in
:mod:`batreplay.analysis.metrics`; ``summarize``, ``metrics.json``, ``metrics.csv`` and the analysis report
then carry it, with its unit::

    def max_bounded_slowdown(facts: ScheduleFacts) -> float:
        return _stat(facts.bounded_slowdown, "max")

    SCHEDULE_METRICS = (
        ...,
        Metric("max_bounded_slowdown", "", "max bounded slowdown", "{:.3f}", max_bounded_slowdown,
               parameter=("tau", "s"), source="Rauch 2022, Sect. IV"),
    )

:func:`summary_rows` gives the console summary printed after a run (:data:`RUN_SUMMARY`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from batreplay.analysis.adequacy import ADEQUACY_METRICS
from batreplay.analysis.lateness import LATENESS_METRICS
from batreplay.analysis.metric import Metric
from batreplay.analysis.metrics import DEFAULT_TAU, SCHEDULE_METRICS

#: Numbers of ``metrics.csv`` that are inputs of the run, not computed from it.
RUN_COLUMNS: tuple[Metric, ...] = (
    Metric("nb_resources", "nodes", "compute nodes", "{:d}"),
)


def _gather(*tables: Iterable[Metric]) -> dict[str, Metric]:
    registry: dict[str, Metric] = {}
    for table in tables:
        for metric in table:
            if metric.name in registry:
                raise ValueError(f"metric {metric.name!r} declared twice")
            registry[metric.name] = metric
    return registry


#: Metric name -> :class:`Metric`, every table above in order.
METRICS: dict[str, Metric] = _gather(RUN_COLUMNS, SCHEDULE_METRICS, LATENESS_METRICS, ADEQUACY_METRICS)

#: Metrics of the console summary after ``batreplay run``, in order.
RUN_SUMMARY: tuple[str, ...] = ("nb_jobs", "nb_rejected", "nb_killed", "makespan", "mean_waiting_time",
                                "max_waiting_time", "mean_bounded_slowdown", "utilisation")


def get_metric(name: str) -> Metric:
    """The :class:`Metric` called ``name``.

    Raises:
        KeyError: no such metric (the message lists the known ones).
    """
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(METRICS)}") from None


def metric_unit(name: str) -> str:
    """Unit of a metric (``"s"``, ``"nodes"``, ``"node-s"``, ``"jobs/day"``, ...; ``""`` for counts and ratios).

    Raises:
        KeyError: no such metric.
    """
    return get_metric(name).unit


def summary_rows(metrics: Mapping[str, Any], names: Sequence[str] = RUN_SUMMARY, *,
                 tau: float = DEFAULT_TAU) -> list[tuple[str, str]]:
    """``(label, text)`` rows of a metrics dict for a console table, e.g. ``("makespan (s)", "28763776.0")``.

    Args:
        metrics: :func:`~batreplay.analysis.metrics.summarize`'s dict (or a ``metrics.json``).
        names: which metrics, in order; those absent from ``metrics`` (or None) are skipped.
        tau: the bounded slowdown threshold (s), stated in that metric's label.

    Raises:
        KeyError: a name that is not a metric.
    """
    rows = []
    for name in names:
        metric = get_metric(name)
        value = metrics.get(name)
        if value is None:
            continue
        rows.append((metric.heading(tau=tau), metric.format(value)))
    return rows
