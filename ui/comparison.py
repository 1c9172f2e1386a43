"""The Compare page's metrics table: runs side by side, and how each differs from the first.

For each metric of the run summary (:data:`batreplay.analysis.metric_registry.RUN_SUMMARY`: jobs, rejected and
killed jobs, makespan, mean and largest waiting time, mean bounded slowdown, utilisation), one row: the value of
every run (from its ``metrics.json``, written by :func:`batreplay.analysis.metrics.summarize`), all in one readable
unit named in the row's label, then, for each run after the first, ``run - first`` in that unit and the relative
difference in percent. The first run is the reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from batreplay.analysis.metric_registry import RUN_SUMMARY, get_metric

REFERENCE_NOTE = "runs numbered in the order chosen; 'k - 1' = run k - run 1 (same unit), 'k vs 1' = relative to run 1"


def _relative(value: float, reference: float) -> str:
    if reference == 0:
        return "0 %" if value == 0 else "n/a (first is 0)"
    return f"{100.0 * (value - reference) / abs(reference):+.1f} %"


def comparison_rows(names: Sequence[str], metrics: Sequence[dict[str, Any]],
                    metric_names: Sequence[str] = RUN_SUMMARY) -> tuple[list[str], list[dict[str, str]]]:
    """The table: its column names and one row per metric that every run has.

    Args:
        names: the runs' names, the first being the reference.
        metrics: each run's ``metrics.json`` content, in the same order.

    Returns:
        ``(columns, rows)``: ``metric``, ``k: <name>`` for the k-th run (from 1), then ``k - 1`` and ``k vs 1``
        for each later run; rows of text cells.

    Raises:
        ValueError: fewer than two runs, or names and metrics of different lengths.
    """
    if len(names) < 2 or len(names) != len(metrics):
        raise ValueError("compare two runs or more, each with its metrics")
    titles = [f"{number}: {name}" for number, name in enumerate(names, start=1)]
    columns = ["metric", *titles]
    for number in range(2, len(names) + 1):
        columns += [f"{number} - 1", f"{number} vs 1"]
    rows = []
    for key in metric_names:
        values = [document.get(key) for document in metrics]
        if any(value is None or (isinstance(value, float) and math.isnan(value)) for value in values):
            continue
        metric = get_metric(key)
        unit = metric.display_unit(values)
        row = {"metric": metric.heading(unit), **{title: metric.format(value, unit)
                                                  for title, value in zip(titles, values)}}
        for number, value in enumerate(values[1:], start=2):
            difference = float(value) - float(values[0])
            shown = metric.format(int(difference), unit) if metric.is_count else metric.format(difference, unit)
            row[f"{number} - 1"] = shown if shown.startswith("-") else f"+{shown}"
            row[f"{number} vs 1"] = _relative(float(value), float(values[0]))
        rows.append(row)
    return columns, rows
