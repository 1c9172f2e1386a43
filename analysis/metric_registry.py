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

Each metric belongs to one section of the analysis report (:data:`METRIC_GROUPS`: jobs, scheduling,
utilisation, adequacy, lateness); a new metric of :data:`~batreplay.analysis.metrics.SCHEDULE_METRICS` not
listed there goes to "scheduling", one of the lateness or adequacy tables to its own section.

Units shown: values stay in seconds in ``metrics.csv`` and ``metrics.json``; :func:`summary_rows` (the console
summary printed after a run, :data:`RUN_SUMMARY`) and :func:`metric_sections` (the report's tables) show
times in seconds, hours or days by the rule of :func:`batreplay.analysis.metric.readable_time_unit`, the
unit named in each label; a metric declared with ``readable=False`` (the adequacy measure P, read against
Baranov et al. 2018's reference value in seconds) keeps its own unit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

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


#: Sections of the report's metric tables: (key, title, what the section shows and where definitions come from).
METRIC_GROUPS: tuple[tuple[str, str, str], ...] = (
    ("jobs", "Jobs", "How many jobs ran and how they ended (Batsim's final states)."),
    ("scheduling", "Scheduling",
     "Waiting time = start - submission (Madon et al. 2024, Def. 12); makespan = last finish - first submission "
     "(Madon et al. 2024, Def. 11); turnaround = finish - submission; slowdown = turnaround / execution time; "
     "bounded slowdown = max((wait + run) / max(run, tau), 1) (Rauch 2022, Sect. IV). Means over the jobs that ran."),
    ("utilisation", "Utilisation",
     "Over the span (first submission to last finish, or the metrics window): utilisation = busy node-seconds / "
     "available node-seconds; throughput = jobs finished per week or day (Madon et al. 2024, Sect. 6.1); mean "
     "running jobs per event as in Rauch 2022, Sect. IV."),
    ("adequacy", "Adequacy (Baranov et al. 2018)",
     "The adequacy measure P = sqrt(mean over the jobs of (V_i - v_i)^2), V_i and v_i the residence times (wait + "
     "run) of job i in the model and in the reference (Baranov et al. 2018, eq. 2): a run against the recorded log "
     "(with --swf), and runs of the same job stream against each other."),
    ("lateness", "Lateness",
     "Lateness of a job = its submission in the replay - its recorded submission (Madon et al. 2024, Def. 13); "
     "mean lateness (eq. 3), relative lateness 1 + mean / recorded span (eq. 4), additional lateness "
     "2 mean / (n - 1) (eq. 6), and the 10th, 50th and 90th percentiles of the per-user additional lateness "
     "(Fig. 5(c)). Negative: submitted earlier than recorded."),
)
_GROUP_OF: dict[str, str] = {
    **{name: "jobs" for name in ("nb_jobs", "nb_rejected", "nb_started", "nb_finished", "nb_success", "nb_failed",
                                 "nb_walltime_reached", "nb_killed_by_scheduler", "nb_killed",
                                 "nb_zero_execution_time")},
    **{name: "utilisation" for name in ("nb_resources", "first_submission", "last_finish", "span_start", "span_end",
                                        "span_length", "busy_node_seconds", "available_node_seconds", "utilisation",
                                        "mean_busy_nodes", "nb_finished_in_span", "throughput_per_week",
                                        "throughput_per_day", "mean_running_jobs", "mean_running_jobs_per_event")},
    **{metric.name: "lateness" for metric in LATENESS_METRICS},
    **{metric.name: "adequacy" for metric in ADEQUACY_METRICS},
}

#: Time metrics read against each other, shown in one unit in a report table (the unit the largest of their values
#: calls for), so that no section mixes seconds and days within a family.
UNIT_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("first_submission", "last_finish", "span_start", "span_end", "span_length"),
    ("median_waiting_time", "p90_waiting_time", "p99_waiting_time"),
    ("additional_lateness", "user_additional_lateness_p10", "user_additional_lateness_p50",
     "user_additional_lateness_p90"),
)


def metric_group(name: str) -> str:
    """Key of the report section (:data:`METRIC_GROUPS`) a metric belongs to; ``"scheduling"`` by default.

    Raises:
        KeyError: no such metric.
    """
    get_metric(name)
    return _GROUP_OF.get(name, "scheduling")


def get_metric(name: str) -> Metric:
    """The :class:`Metric` called ``name``.

    Raises:
        KeyError: no such metric (the message lists the known ones).
    """
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(METRICS)}") from None


def summary_rows(metrics: Mapping[str, Any], names: Sequence[str] = RUN_SUMMARY, *,
                 tau: float = DEFAULT_TAU) -> list[tuple[str, str]]:
    """``(label, text)`` rows of a metrics dict for a console table, each time in the unit that suits its value,
    e.g. ``("makespan (days)", "332.91")``, ``("mean waiting time (h)", "1.92")``, ``("max waiting time (days)",
    "3.03")``; counts and ratios with their metric's format.

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
        unit = metric.display_unit([value])
        rows.append((metric.heading(unit, tau=tau), metric.format(value, unit)))
    return rows


def metric_sections(rows: Sequence[Mapping[str, Any]], runs: Sequence[str], *,
                    tau: float = DEFAULT_TAU) -> list[tuple[str, str, str, pd.DataFrame]]:
    """The report's metric tables: one per section of :data:`METRIC_GROUPS`, runs side by side.

    Each time metric is shown in one unit for all runs (:meth:`~batreplay.analysis.metric.Metric.display_unit`
    of its values), named in its row label; the metrics of one of :data:`UNIT_FAMILIES` share the unit their
    largest value calls for.

    Args:
        rows: one metrics dict per run (a row of ``metrics.csv``); keys that are not metrics are ignored.
        runs: the runs' names, in the order of ``rows`` (the columns).
        tau: the bounded slowdown threshold (s), stated in that metric's label.

    Returns:
        ``(key, title, description, frame)`` per section that has a value: ``frame`` is indexed by the metric
        label with its unit (``"mean waiting time (h)"``, index name ``"metric"``), one column per run, values
        converted (float; ints for counts; NaN where a run has no value). Metrics with no value in any run are
        left out.

    Raises:
        ValueError: ``rows`` and ``runs`` differ in length.
    """
    if len(rows) != len(runs):
        raise ValueError(f"{len(rows)} metric rows for {len(runs)} runs")
    names = [name for name in METRICS if any(name in row for row in rows)]
    numbers = {name: pd.to_numeric(pd.Series([row.get(name) for row in rows], dtype=object),
                                   errors="coerce").to_numpy(dtype="float64") for name in names}
    units = {name: METRICS[name].display_unit(values) for name, values in numbers.items()}
    for family in UNIT_FAMILIES:
        present = [name for name in family if name in numbers]
        if present:
            unit = METRICS[present[0]].display_unit(np.concatenate([numbers[n] for n in present]))
            units.update(dict.fromkeys(present, unit))
    sections = []
    for key, title, description in METRIC_GROUPS:
        lines: dict[str, list[Any]] = {}
        for name in (n for n in names if metric_group(n) == key):
            metric, values = METRICS[name], numbers[name]
            if np.isnan(values).all():
                continue
            shown = values / metric.divisor(units[name])
            lines[metric.heading(units[name], tau=tau)] = (
                [pd.NA if np.isnan(v) else int(v) for v in shown] if metric.is_count else [float(v) for v in shown])
        if lines:
            frame = pd.DataFrame.from_dict(lines, orient="index", columns=list(runs), dtype=object)
            frame.index.name = "metric"
            sections.append((key, title, description, frame))
    return sections
