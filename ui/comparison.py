"""The Compare page: its metrics table (runs side by side, and how each differs from the first), its warnings about
runs of other jobs, and the smoothing of its overlaid series.

For each metric of the run summary (:data:`batreplay.analysis.metric_registry.RUN_SUMMARY`: jobs, rejected and
killed jobs, makespan, mean and largest waiting time, mean bounded slowdown, utilisation), one row: the value of
every run (from its ``metrics.json``, written by :func:`batreplay.analysis.metrics.summarize`), all in one readable
unit named in the row's label, then, for each run after the first, ``run - first`` in that unit and the relative
difference in percent. The first run is the reference.

Runs of other job sets are compared all the same, with a warning each (:func:`job_set_warnings`): how many jobs
(and ``max_jobs``), which log (its name and SHA-256 in ``run.json``), which jobs (ids, recorded submission times),
the options that choose or size the jobs, the warm-up the metrics leave out, and the time spans. Platforms,
schedulers and engines are what comparisons are for: they never warn.

The overlaid series may be smoothed (:func:`smoothing_window`, :func:`moving_average`): each step function becomes
its time-weighted mean over the window before each instant, computed exactly from its integral.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

import numpy as np

from batreplay.analysis.metric_registry import RUN_SUMMARY, get_metric
from batreplay.analysis.plots import time_unit
from batreplay.analysis.run_dir import RunData
from batreplay.replay.registry import MODEL_OPTIONS
from batreplay.run.spec import run_options

#: Options of ``run.json``'s spec whose difference means other jobs, or metrics over other jobs: the processor
#: count of each job (``res_source``), the warm-up the metrics leave out, and a site model's replay (its seed,
#: population, jobs, durations). ``max_jobs`` and ``zero_runtime`` are named with the job counts they explain.
JOB_SET_OPTIONS: tuple[str, ...] = ("res_source", "warm_up", *MODEL_OPTIONS)
#: Options named beside a difference in the number of jobs, when they differ too.
JOB_COUNT_OPTIONS: tuple[str, ...] = ("max_jobs", "zero_runtime")
#: Most instants at which a smoothed series is computed and drawn (:func:`moving_average`).
MAX_SMOOTHED_POINTS = 2000
#: Characters of a SHA-256 shown in a warning.
SHORT_SHA = 12

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


def _time_span(run: RunData) -> float:
    """First submission to last finish of ``run`` (s, :func:`batreplay.ui.figures.run_span`); 0 without jobs."""
    from batreplay.ui.figures import run_span

    if len(run.jobs) == 0:
        return 0.0
    low, high = run_span(run)
    return high - low


def _option_text(value: Any, unit: str) -> str:
    """An option's value in a warning: ``none``, a number with thousands separated and its unit, or the text."""
    if value is None:
        return "none"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}{unit}" if isinstance(value, int) else f"{value:,g}{unit}"


def _option_differences(reference: RunData, run: RunData, names: Sequence[str]) -> list[str]:
    """``name <run's value> vs <reference's value>`` for each option of ``names`` whose values in the runs' specs
    differ (an option a ``run.json`` leaves out is at its default)."""
    declared = {declaration.name: declaration for declaration in run_options()}
    shown = []
    for name in names:
        default = declared[name].default if name in declared else None
        values = [run.spec.get(name, default), reference.spec.get(name, default)]
        if values[0] != values[1]:
            unit = f" {declared[name].unit}" if name in declared and declared[name].unit else ""
            texts = [_option_text(value, unit) for value in values]
            shown.append(f"{name} {texts[0]} vs {texts[1]}")
    return shown


def _log(run: RunData) -> tuple[str, str | None]:
    """The file name of the workload ``run`` replayed and its SHA-256 when ``run.json`` recorded it."""
    workload = run.spec.get("workload")
    digest = (run.manifest.get("inputs_sha256") or {}).get("workload")
    return (PurePath(str(workload)).name if workload else "?"), (digest if isinstance(digest, str) else None)


def _log_difference(reference: RunData, run: RunData) -> list[str]:
    """``log <run's> vs <reference's>`` when the runs replayed other workload files: other SHA-256 when both are
    recorded (a copy under another name is the same log), else other names."""
    (name, digest), (first_name, first_digest) = _log(run), _log(reference)
    if digest is not None and first_digest is not None:
        if digest == first_digest:
            return []
        return [f"log {name} (sha256 {digest[:SHORT_SHA]}...) vs {first_name} (sha256 {first_digest[:SHORT_SHA]}...)"]
    return [] if name == first_name else [f"log {name} vs {first_name}"]


def _job_differences(reference: RunData, run: RunData) -> list[str]:
    """How the jobs of ``run`` differ from the reference's: their number (with ``max_jobs`` and ``zero_runtime``
    when they differ too), their ids or recorded submission times
    (:func:`batreplay.analysis.submission_differences.submission_differences`, ``batreplay analyze``'s own test of
    "the same jobs"); nothing when they are the same jobs."""
    from batreplay.analysis.submission_differences import DifferentJobsError, submission_differences

    found = []
    counts = len(run.jobs), len(reference.jobs)
    if counts[0] != counts[1]:
        options = _option_differences(reference, run, JOB_COUNT_OPTIONS)
        found.append(f"{counts[0]:,} jobs vs {counts[1]:,}" + (f" ({', '.join(options)})" if options else ""))
    try:
        submission_differences(reference, run)
    except DifferentJobsError as err:
        found.append(str(err).removeprefix("not the same jobs: "))
    return found


def job_set_warnings(runs: Sequence[RunData], *, unit: tuple[float, str] | None = None) -> list[str]:
    """One line for each run after the first whose jobs differ from the first run's, saying how: the log (file
    name, SHA-256 of ``run.json``'s ``inputs_sha256``), the number of jobs (with ``max_jobs`` when it differs), the
    jobs themselves (ids, recorded submission times), the options of :data:`JOB_SET_OPTIONS` (job sizes, warm-up,
    a site model's seed...), then both time spans (first submission to last finish). The platform, scheduler,
    engine and replay model never make a warning: they are what runs are compared for.

    Args:
        runs: the runs compared (:func:`batreplay.analysis.run_dir.load_run`), the first being the reference.
        unit: ``(seconds per unit, unit name)`` of the spans, the comparison figures' time axis; default
            :func:`batreplay.analysis.plots.time_unit` of the longest span.

    Returns:
        The lines, in the runs' order (``run k (<name>) vs run 1 (<name>): ...``, run k's values first); empty when
        every run holds the first run's jobs, or with fewer than two runs.
    """
    if len(runs) < 2:
        return []
    spans = [_time_span(run) for run in runs]
    divisor, unit_name = unit if unit is not None else time_unit(max(spans))
    reference, warnings = runs[0], []
    for number, run in enumerate(runs[1:], start=2):
        found = (_log_difference(reference, run) + _job_differences(reference, run)
                 + _option_differences(reference, run, JOB_SET_OPTIONS))
        if found:
            warnings.append(f"run {number} ({run.name}) vs run 1 ({reference.name}): {'; '.join(found)}; "
                            f"time span {spans[number - 1] / divisor:,.4g} vs {spans[0] / divisor:,.4g} {unit_name} "
                            "(first submission to last finish)")
    return warnings


def smoothing_window(text: Any, unit: str) -> float | None:
    """The smoothing window typed on the Compare page, in the unit ``unit`` of its time axis: None when blank (no
    smoothing), else a finite number > 0 (read by :class:`float`: ``1.5``, ``2``, ``1e-2``).

    Raises:
        ValueError: anything else, in one line naming the field and the unit.
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    try:
        value = float(text) if not isinstance(text, bool) else math.nan
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        shown = str(text) if len(str(text)) <= 40 else f"{str(text)[:40]}..."
        raise ValueError(f"smoothing window: {shown!r} is not a number > 0 of {unit} (leave it empty for none)")
    return value


def moving_average(times: np.ndarray, values: np.ndarray, window: float, at: np.ndarray) -> np.ndarray:
    """Time-weighted moving average of a step function: at each instant ``t`` of ``at``, the mean of the function
    over ``[max(t - window, times[0]), t]``, and its value at ``t`` where that interval is empty (``t <= times[0]``).

    The function holds ``values[i]`` from ``times[i]`` to ``times[i + 1]`` (the last of equal instants wins) and
    ``values[-1]`` after the last instant; before ``times[0]`` it is not defined, so the window is cut there. Exact:
    the mean is the difference of the function's integral (piecewise linear) at both ends of the window, divided by
    its length; a window within one step is that step's value.

    Args:
        times: non-decreasing finite instants, shape (n,), n >= 1 (any time unit, the same for ``window`` and ``at``).
        values: the value from each instant on, shape (n,).
        window: the window's length, > 0.
        at: where to evaluate, shape (m,).

    Returns:
        Shape (m,): the moving average at each instant of ``at``.

    Raises:
        ValueError: shapes differ, no instant, instants decreasing or not finite, a window that is not finite > 0.
    """
    x, y, t = (np.asarray(array, dtype="float64") for array in (times, values, at))
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"moving_average: times {x.shape} and values {y.shape} must have one shape (n,), n >= 1")
    if not np.all(np.isfinite(x)) or np.any(np.diff(x) < 0):
        raise ValueError("moving_average: times must be finite and non-decreasing")
    if not (math.isfinite(window) and window > 0):
        raise ValueError(f"moving_average: window {window!r} is not a finite number > 0")
    integral = np.concatenate([[0.0], np.cumsum(y[:-1] * np.diff(x))])  # of the function from times[0] to times[i]
    start = np.maximum(t - window, x[0])
    end = np.maximum(t, x[0])
    first = np.searchsorted(x, start, side="right") - 1  # the steps the window starts and ends in
    last = np.searchsorted(x, end, side="right") - 1
    after = np.minimum(first + 1, x.size - 1)
    # the end of the first step, the whole steps between (none when the window spans two), the start of the last:
    # no difference of two large integrals where the window is short
    area = y[first] * (x[after] - start) + (integral[last] - integral[after]) + y[last] * (end - x[last])
    length = end - start
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = area / length
    return np.where((first == last) | (length <= 0), y[last], mean)


def smoothed(times: np.ndarray, values: np.ndarray, window: float,
             points: int = MAX_SMOOTHED_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The :func:`moving_average` of a step function over ``window`` on a regular grid of ``points`` instants from
    its first instant to its last (one instant when they are equal): ``(grid, averages)``, both shape (points,).

    Raises:
        ValueError: as :func:`moving_average`, or ``points`` < 2.
    """
    if points < 2:
        raise ValueError(f"smoothed: points {points} < 2")
    x = np.asarray(times, dtype="float64")
    grid = np.linspace(x[0], x[-1], points) if x.size and x[-1] > x[0] else x[:1]
    return grid, moving_average(x, values, window, grid)
