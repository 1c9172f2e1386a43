"""Figures of one or several runs (matplotlib object API, no pyplot: works headless, any backend).

Each ``plot_*`` function returns a :class:`matplotlib.figure.Figure`, one colour per run (``C0``, ``C1``, ...
in the order given) and the recorded log, when known, in black; :func:`save_figure` writes it as PNG and
SVG. Times on the axes are the simulation clock (seconds from Batsim's time 0), shown in seconds, hours or
days depending on the span. What each figure shows and where it comes from:

- :func:`plot_submissions`: jobs submitted per day, the recorded (rigid replay) submission times against the
  runs' (Madon et al. 2024, Fig. 2);
- :func:`plot_cumulative_jobs`: cumulative number of jobs submitted (top) and finished (bottom) (Madon et al. 2024,
  Fig. 3);
- :func:`plot_user_mean_lateness`: per-user mean lateness against the number of jobs the user submitted,
  logarithmic axes (Madon et al. 2024, Fig. 4; lateness from :mod:`batreplay.analysis.lateness`);
- :func:`plot_utilisation_and_queue`: utilisation (busy nodes / nodes) and queue length over time;
- :func:`plot_gantt`: which job ran on which resource during a time window.

The legend of a figure sits below its axes (:func:`_legend_below`), never over the data.

The Gantt chart is drawn here rather than with evalys: evalys 4.0.7 does install and draw with pandas 3.1 and
matplotlib 3.11, but it is not a dependency of the project (it would add evalys and seaborn), its
``plot_gantt`` has no time-window option and goes through pyplot, and it adds one rectangle artist and one
text label per job (6 s and an unreadable figure for the 2000-job golden run).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import matplotlib.ticker
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from procset import ProcSet

from batreplay.analysis.metrics import SECONDS_PER_DAY, TimeWindow, running_jobs_over_time, time_weighted_means
from batreplay.formats.out_jobs import FULL_ID
from batreplay.analysis.run_dir import RECORDED_SUBMISSION, RunData

#: Above this many points a curve is drawn from values sampled on a regular grid (see each function).
MAX_CURVE_POINTS = 2000
#: Number of bins of the regular grid used for long curves.
CURVE_BINS = 500
#: Bin widths (s) the utilisation and queue curves of a long run are averaged over (:func:`smoothing_bin`).
SMOOTHING_WIDTHS: tuple[float, ...] = (60.0, 300.0, 600.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0, 12 * 3600.0,
                                       SECONDS_PER_DAY, 2 * SECONDS_PER_DAY, 3 * SECONDS_PER_DAY, 7 * SECONDS_PER_DAY,
                                       14 * SECONDS_PER_DAY, 30 * SECONDS_PER_DAY)
#: Most bins of a smoothed utilisation or queue curve.
SMOOTHING_MAX_BINS = 150
#: Font size (points) of the job ids on Gantt bars.
GANTT_LABEL_SIZE = 6.5
#: Tick marks of the lateness axis, seconds, with their labels (:func:`plot_user_mean_lateness`).
LATENESS_TICKS: tuple[tuple[float, str], ...] = (
    (60.0, "1 min"), (3600.0, "1 h"), (SECONDS_PER_DAY, "1 day"), (10 * SECONDS_PER_DAY, "10 days"),
    (100 * SECONDS_PER_DAY, "100 days"), (1000 * SECONDS_PER_DAY, "1000 days"))
RECORDED_COLOUR = "black"
PNG_DPI = 110


def run_colour(index: int) -> str:
    """Colour of the ``index``-th run in every figure (matplotlib's default cycle ``C0``..``C9``)."""
    return f"C{index % 10}"


def time_unit(span: float) -> tuple[float, str]:
    """Divisor and axis label for a span of ``span`` seconds: s up to 2 h, hours up to 3 days, days beyond."""
    if not np.isfinite(span) or span <= 2 * 3600:
        return 1.0, "s"
    if span <= 3 * SECONDS_PER_DAY:
        return 3600.0, "h"
    return SECONDS_PER_DAY, "days"


def queue_length_over_time(jobs: pd.DataFrame) -> pd.DataFrame:
    """Step function of the number of waiting jobs (submitted, not yet started).

    A job that ran waits from its submission to its start; a rejected job never waits. At an instant where
    several things happen, the value is the one after all of them.

    Args:
        jobs: a validated jobs table (:func:`batreplay.formats.out_jobs.read_out_jobs`).

    Returns:
        Frame with ``time`` (s, increasing, one row per distinct submission or start instant of a job that
        ran) and ``queued_jobs`` (int64), the value from ``time`` until the next row.
    """
    ran = jobs["starting_time"].notna().to_numpy()
    sub = jobs["submission_time"].to_numpy(dtype="float64")[ran]
    start = jobs["starting_time"].to_numpy(dtype="float64")[ran]
    frame = pd.DataFrame({"time": np.concatenate([sub, start]),
                          "queued_jobs": np.concatenate([np.ones(sub.size), -np.ones(start.size)])})
    steps = frame.groupby("time", sort=True).sum().cumsum().reset_index()
    steps["queued_jobs"] = steps["queued_jobs"].round().astype("int64")
    return steps


def _span(runs: Sequence[RunData]) -> tuple[float, float]:
    lows, highs = [], []
    for run in runs:
        jobs = run.jobs
        lows.append(float(jobs["submission_time"].min()))
        highs.append(float(np.nanmax(jobs[["submission_time", "finish_time"]].to_numpy(dtype="float64"))))
        if run.has_recorded_submissions:
            lows.append(float(run.job_table[RECORDED_SUBMISSION].min()))
            highs.append(float(run.job_table[RECORDED_SUBMISSION].max()))
    return min(lows), max(highs)


def recorded_submissions(runs: Sequence[RunData]) -> np.ndarray | None:
    """Recorded submission times of the first run that knows them (all runs replay the same log)."""
    for run in runs:
        if run.has_recorded_submissions:
            return run.job_table[RECORDED_SUBMISSION].to_numpy(dtype="float64")
    return None


def new_figure(rows: int = 1, *, height: float = 3.6, sharex: bool = True) -> tuple[Figure, list]:
    """A figure of ``rows`` panels stacked (``height`` inches each, 8 wide), and its axes, top first."""
    figure = Figure(figsize=(8.0, height * rows), layout="constrained")
    axes = figure.subplots(rows, 1, sharex=sharex, squeeze=False)[:, 0]
    return figure, list(axes)


def _legend_below(figure: Figure, axis, columns: int = 5) -> None:
    """One legend for the whole figure, in rows of at most ``columns`` below the axes (outside the data), from
    ``axis``' labels."""
    handles, labels = axis.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), columns), fontsize="small",
                      frameon=False)


def plot_submissions(runs: Sequence[RunData], *, bin_seconds: float = SECONDS_PER_DAY) -> Figure:
    """Jobs submitted per bin of time (Madon et al. 2024, Fig. 2): recorded submissions (rigid replay) and each run's.

    Args:
        runs: the runs; the recorded curve comes from the first run whose side table has
            ``recorded_submission_time`` (absent when none has).
        bin_seconds: bin width, seconds (default one day).

    Returns:
        A figure with one axis; one step line per run (label = run name) plus ``recorded (rigid)``. Line
        ``k`` has x = bin starts (in the axis' time unit) and y = number of submissions in the bin.

    Raises:
        ValueError: no run, or ``bin_seconds`` <= 0.
    """
    if not runs:
        raise ValueError("plot_submissions: no run")
    if not bin_seconds > 0:
        raise ValueError(f"bin width must be > 0 s, got {bin_seconds}")
    low, high = _span(runs)
    edges = np.arange(np.floor(low / bin_seconds) * bin_seconds, high + bin_seconds, bin_seconds)
    if edges.size < 2:
        edges = np.array([low, low + bin_seconds])
    divisor, unit = time_unit(high - low)
    figure, (axis,) = new_figure()
    recorded = recorded_submissions(runs)
    series = [("recorded (rigid)", recorded, RECORDED_COLOUR, "--")] if recorded is not None else []
    series += [(run.name, run.jobs["submission_time"].to_numpy(dtype="float64"), run_colour(i), "-")
               for i, run in enumerate(runs)]
    for label, values, colour, style in series:
        counts, _ = np.histogram(values, bins=edges)
        # each curve over the bins from its first to its last submission, not padded with zeros
        used = (edges[1:] > np.min(values)) & (edges[:-1] <= np.max(values))
        axis.step(edges[:-1][used] / divisor, counts[used], where="post", label=label, color=colour,
                  linestyle=style, linewidth=1.0, zorder=3 if colour == RECORDED_COLOUR else 2)
    per = "day" if bin_seconds == SECONDS_PER_DAY else f"{bin_seconds:g} s"
    axis.set(xlabel=f"submission time ({unit})", ylabel=f"jobs submitted per {per}")
    figure.suptitle("Distribution of submission times")
    _legend_below(figure, axis)
    return figure


def cumulative_curve(values: np.ndarray, divisor: float) -> tuple[np.ndarray, np.ndarray]:
    """x, y of the cumulative count of ``values`` (NaN ignored); sampled on a grid when there are many."""
    values = np.sort(values[~np.isnan(values)])
    if values.size <= MAX_CURVE_POINTS:
        return np.concatenate([values[:1], values]) / divisor, np.arange(values.size + 1, dtype="float64")
    grid = np.linspace(values[0], values[-1], CURVE_BINS + 1)
    return grid / divisor, np.searchsorted(values, grid, side="right").astype("float64")


def plot_cumulative_jobs(runs: Sequence[RunData]) -> Figure:
    """Cumulative number of jobs submitted (top) and finished (bottom) over time (Madon et al. 2024, Fig. 3).

    Each curve counts, at time t, the jobs with a submission (resp. finish) time <= t; rejected jobs have no
    finish. Up to :data:`MAX_CURVE_POINTS` jobs every job is a point; beyond, the count is sampled exactly at
    :data:`CURVE_BINS` + 1 regular instants.

    Returns:
        A figure with two axes sharing x; the recorded submissions (``recorded (rigid)``) on the top axis
        when a run knows them.

    Raises:
        ValueError: no run.
    """
    if not runs:
        raise ValueError("plot_cumulative_jobs: no run")
    low, high = _span(runs)
    divisor, unit = time_unit(high - low)
    figure, (top, bottom) = new_figure(2, height=3.0)
    recorded = recorded_submissions(runs)
    if recorded is not None:
        top.step(*cumulative_curve(recorded, divisor), where="post", color=RECORDED_COLOUR, linestyle="--",
                 linewidth=1.0, label="recorded (rigid)")
    for i, run in enumerate(runs):
        for axis, column in ((top, "submission_time"), (bottom, "finish_time")):
            axis.step(*cumulative_curve(run.jobs[column].to_numpy(dtype="float64"), divisor), where="post",
                      color=run_colour(i), linewidth=1.0, label=run.name)
    top.set(ylabel="jobs submitted")
    bottom.set(ylabel="jobs finished", xlabel=f"time ({unit})")
    figure.suptitle("Cumulative number of jobs submitted (top) and finished (bottom)")
    _legend_below(figure, top)
    return figure


def lateness_axis(values: np.ndarray) -> tuple[tuple[float, float], list[float], list[str]]:
    """Limits, ticks and tick labels of a symmetric-log lateness axis holding ``values`` (s).

    The limits leave at least a factor 1.5 of room beyond the largest |value| (so no point sits on the frame)
    and reach at least one hour on the side of any value (one minute on a side without values, so that 0
    shows); ticks are 0 and +-1 min, 1 h, 1 day, 10 days... (:data:`LATENESS_TICKS`) inside the limits,
    without the +-1 min ticks when larger ones exist (they would crowd the labels around 0).

    Returns:
        ``((low, high), ticks, labels)``, seconds.
    """
    values = np.asarray(values, dtype="float64")
    values = values[np.isfinite(values)]

    def reach(side: np.ndarray) -> float:
        if side.size == 0:
            return 60.0
        return max(3600.0, 10 ** math.ceil(math.log10(1.5 * float(np.max(side)))))

    high, low = reach(values[values > 0]), -reach(-values[values < 0])
    marks = [(t, label) for t, label in LATENESS_TICKS if t <= max(high, -low)]
    if len(marks) > 1:
        marks = marks[1:]
    ticks, labels = [0.0], ["0"]
    for t, label in marks:
        if t <= high:
            ticks.append(t), labels.append(label)
        if -t >= low:
            ticks.insert(0, -t), labels.insert(0, "\u2212" + label)
    return (low, high), ticks, labels


def plot_user_mean_lateness(per_user: Mapping[str, pd.DataFrame]) -> Figure:
    """Per-user mean lateness against the number of jobs submitted (Madon et al. 2024, Fig. 4), one colour per run.

    Args:
        per_user: run name -> :func:`batreplay.analysis.lateness.lateness_per_user` table (``nb_jobs``,
            ``mean_lateness`` in s), in the order of the runs (colours follow that order).

    Returns:
        A figure with one axis: x = jobs submitted by the user (log scale), y = mean lateness in seconds
        (symmetric log scale, linear within +-60 s, so that early users (negative) and zero show), ticks
        labelled in minutes, hours and days (:func:`lateness_axis`). One point collection per run.

    Raises:
        ValueError: ``per_user`` is empty.
    """
    if not per_user:
        raise ValueError("plot_user_mean_lateness: no run with recorded submission times")
    figure, (axis,) = new_figure(height=4.2)
    for i, (name, table) in enumerate(per_user.items()):
        axis.scatter(table["nb_jobs"].to_numpy(), table["mean_lateness"].to_numpy(), s=12, alpha=0.7,
                     color=run_colour(i), label=name)
    every = np.concatenate([t["mean_lateness"].to_numpy(dtype="float64") for t in per_user.values()])
    limits, ticks, labels = lateness_axis(every)
    axis.set_xscale("log")
    axis.set_yscale("symlog", linthresh=60.0, linscale=0.5)
    axis.set_ylim(*limits)
    axis.set_yticks(ticks, labels)
    axis.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    axis.axhline(0.0, color="grey", linewidth=0.6)
    axis.grid(True, axis="y", color="#dddddd", linewidth=0.5)
    axis.set(xlabel="jobs submitted by the user", ylabel="mean lateness per user (later \u2191, earlier \u2193)")
    figure.suptitle("Mean lateness per user")
    _legend_below(figure, axis)
    return figure


def smoothing_bin(span: float) -> float:
    """Bin width (s) of a smoothed curve over ``span`` seconds: the smallest of :data:`SMOOTHING_WIDTHS` giving at
    most :data:`SMOOTHING_MAX_BINS` bins (the largest width for longer spans)."""
    for width in SMOOTHING_WIDTHS:
        if span / width <= SMOOTHING_MAX_BINS:
            return width
    return SMOOTHING_WIDTHS[-1]


def duration_text(seconds: float) -> str:
    """``"6 h"``, ``"1 day"``, ``"10 min"``: a duration of whole minutes, hours or days as words."""
    for size, unit in ((SECONDS_PER_DAY, "day"), (3600.0, "h"), (60.0, "min")):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''}"
    return f"{seconds:g} s"


def _step_or_binned(times: np.ndarray, values: np.ndarray, low: float, width: float | None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The curve to draw for a step function: itself when ``width`` is None, else its means over bins of
    ``width`` seconds laid from ``low`` (the same for every run of a figure), kept while they overlap the step
    function's own span."""
    if width is None or times.size == 0:
        return times, values
    edges = low + width * np.arange(int(np.ceil((times[-1] - low) / width)) + 2)
    used = (edges[1:] > times[0]) & (edges[:-1] < times[-1])
    return edges[:-1][used], time_weighted_means(times, values, edges)[used]


def plot_utilisation_and_queue(runs: Sequence[RunData]) -> Figure:
    """Utilisation (busy nodes / nodes, top) and number of waiting jobs (bottom) over time.

    Busy nodes come from :func:`batreplay.analysis.metrics.running_jobs_over_time` (requested resources of
    the running jobs), waiting jobs from :func:`queue_length_over_time`. When every run has at most
    :data:`MAX_CURVE_POINTS` changes, the exact step functions are drawn; otherwise each curve is its
    time-weighted mean over regular bins of :func:`smoothing_bin` of the span (12 h for 44 days, 3 days for a
    year), named in the axis labels, which keeps the busy node-seconds exact and the runs apart. The legend
    sits below the axes.

    Raises:
        ValueError: no run, or a run without ``nb_resources``.
    """
    if not runs:
        raise ValueError("plot_utilisation_and_queue: no run")
    low, high = _span(runs)
    divisor, unit = time_unit(high - low)
    curves = []
    for run in runs:
        if run.nb_resources is None:
            raise ValueError(f"run {run.name}: number of resources unknown, cannot plot utilisation")
        running = running_jobs_over_time(run.jobs, shared_hosts=run.shared_hosts)
        queue = queue_length_over_time(run.jobs)
        curves.append(((running["time"].to_numpy(), running["busy_nodes"].to_numpy(dtype="float64") / run.nb_resources),
                       (queue["time"].to_numpy(), queue["queued_jobs"].to_numpy(dtype="float64"))))
    long = any(max(a[0].size, b[0].size) > MAX_CURVE_POINTS for a, b in curves) and high > low
    width = smoothing_bin(high - low) if long else None
    figure, (top, bottom) = new_figure(2, height=3.0)
    for i, (run, pair) in enumerate(zip(runs, curves)):
        for axis, (times, values) in zip((top, bottom), pair):
            x, y = _step_or_binned(times, values, low, width)
            axis.step(x / divisor, y, where="post", color=run_colour(i), linewidth=1.1, label=run.name)
    means = f" ({duration_text(width)} means)" if width else ""
    top.set(ylabel=f"utilisation{means}", ylim=(0.0, 1.02))
    bottom.set(ylabel=f"waiting jobs{means}", xlabel=f"time ({unit})")
    bottom.set_ylim(bottom=0.0)
    for axis in (top, bottom):
        axis.grid(True, color="#e4e4e4", linewidth=0.5)
    figure.suptitle("Utilisation (busy nodes / all nodes, top) and queue length (bottom)")
    _legend_below(figure, top)
    return figure


def plot_waiting_times(runs: Sequence[RunData]) -> Figure:
    """Distribution of the waiting time (start - submission) of the jobs that ran: the fraction of jobs that
    waited at most x seconds, one curve per run; the x axis is logarithmic from 1 s, jobs that waited under 1 s
    are where the curves start.

    Raises:
        ValueError: no run.
    """
    if not runs:
        raise ValueError("plot_waiting_times: no run")
    figure, (axis,) = new_figure(1, height=3.6)
    highest = 1.0
    for i, run in enumerate(runs):
        ran = run.jobs[run.jobs["starting_time"].notna()]
        waits = np.sort((ran["starting_time"] - ran["submission_time"]).to_numpy(dtype="float64"))
        if waits.size == 0:
            continue
        highest = max(highest, float(waits[-1]))
        fraction = np.arange(1, waits.size + 1) / waits.size
        axis.step(np.maximum(waits, 1.0), fraction, where="post", color=run_colour(i), linewidth=1.1,
                  label=f"{run.name} (mean {duration_text(float(waits.mean()))})")
    axis.set(xscale="log", xlim=(1.0, max(highest, 10.0) * 1.2), ylim=(0.0, 1.01),
             xlabel="waiting time (s, log scale; below 1 s shown at 1 s)", ylabel="fraction of jobs")
    axis.grid(True, color="#e4e4e4", linewidth=0.5)
    figure.suptitle("Waiting time distribution (jobs that ran)")
    _legend_below(figure, axis, columns=3)
    return figure


def plot_node_type_occupancy(runs: Sequence[RunData]) -> Figure:
    """Slot occupancy of each node type over time (:func:`batreplay.analysis.node_types.slot_occupancy_over_time`,
    bins of :func:`smoothing_bin` of the span), one panel per run whose platform has node types.

    Raises:
        ValueError: no run with a platform of node types.
    """
    from batreplay.analysis.node_types import UNTYPED, slot_occupancy_over_time

    typed = [run for run in runs if run.platform is not None and run.platform.node_types]
    if not typed:
        raise ValueError("plot_node_type_occupancy: no run on a platform of node types")
    low, high = _span(typed)
    divisor, unit = time_unit(high - low)
    width = smoothing_bin(high - low) if high > low else 1.0
    figure, axes = new_figure(len(typed), height=2.4)
    for axis, run in zip(axes, typed):
        hosts = run.platform.hosts
        table = slot_occupancy_over_time(run.jobs, [h.node_type or UNTYPED for h in hosts], [h.slots for h in hosts],
                                         width)
        for i, (name, rows) in enumerate(table.groupby("node_type", sort=False)):
            axis.step(rows["bin_start"].to_numpy() / divisor, rows["slot_occupancy"].to_numpy(), where="post",
                      color=run_colour(i), linewidth=1.1, label=str(name))
        top = max(1.05, float(table["slot_occupancy"].max()) * 1.05)  # above 1: more jobs than slots (shown)
        axis.set(ylabel="slot occupancy", ylim=(0.0, top), title=run.name)
        axis.grid(True, color="#e4e4e4", linewidth=0.5)
        axis.legend(loc="lower right", fontsize="x-small", ncol=3)
    axes[-1].set_xlabel(f"time ({unit}; {duration_text(width)} means)")
    figure.suptitle("Slot occupancy per node type (job slots held / slots of the type)")
    return figure


def node_io_series(table: pd.DataFrame) -> tuple[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """What a figure of node I/O over time shows of ``table`` (:func:`batreplay.analysis.node_io.node_io_over_time`):
    ``(label, {node type: (times s, values)})``, a step function (each value held from its time to the next: the
    bins' starts, then the last bin's end with the last value, so that every bin, the last included, is drawn as a
    segment): the I/O utilisation when every type's I/O rate is known, else the bytes/s read and written."""
    utilisation = bool(table["io_utilisation"].notna().all())
    series = {}
    for name, rows in table.groupby("node_type", sort=False):
        values = (rows["io_utilisation"] if utilisation else rows["read_rate"] + rows["write_rate"]).to_numpy(
            dtype="float64")
        times = np.append(rows["bin_start"].to_numpy(dtype="float64"), float(rows["bin_end"].iloc[-1]))
        series[str(name)] = (times, np.append(values, values[-1]))
    return ("I/O utilisation" if utilisation else "bytes/s read and written"), series


def plot_node_io(tables: Mapping[str, pd.DataFrame]) -> Figure:
    """Node I/O over time per node type (``tables``: run name -> :func:`batreplay.analysis.node_io.node_io_over_time`
    table, bins of :func:`smoothing_bin` of the run's span), one panel per run: the I/O utilisation (bytes/s read
    and written over the type's I/O capacity) when the platform states every type's I/O rate, else the bytes/s.

    Raises:
        ValueError: ``tables`` is empty.
    """
    if not tables:
        raise ValueError("plot_node_io: no run with node I/O rates")
    highest = max(float(t["bin_start"].max()) for t in tables.values())
    lowest = min(float(t["bin_start"].min()) for t in tables.values())
    divisor, unit = time_unit(highest - lowest)
    figure, axes = new_figure(len(tables), height=2.4)
    for axis, (name, table) in zip(axes, tables.items()):
        label, series = node_io_series(table)
        for i, (node_type, (starts, values)) in enumerate(series.items()):
            axis.step(starts / divisor, values, where="post", color=run_colour(i), linewidth=1.1, label=node_type)
        axis.set(ylabel=label, title=name)
        axis.set_ylim(bottom=0.0)
        axis.grid(True, color="#e4e4e4", linewidth=0.5)
        axis.legend(loc="upper right", fontsize="x-small", ncol=3)
    axes[-1].set_xlabel(f"time ({unit}; means over bins)")
    figure.suptitle("Node I/O per node type (reads and writes between nodes and storage)")
    return figure


def default_gantt_window(runs: Sequence[RunData], *, start: float | None = None) -> TimeWindow:
    """The Gantt chart's default window (s): one day from ``start``, or from the runs' first submission (then
    their whole span when shorter than a day)."""
    if start is not None:
        return TimeWindow(float(start), float(start) + SECONDS_PER_DAY)
    low, high = _span(runs)
    return TimeWindow(low, low + min(max(high - low, 1.0), SECONDS_PER_DAY))


def gantt_rectangles(jobs: pd.DataFrame, window: TimeWindow) -> pd.DataFrame:
    """Rectangles of a Gantt chart: one per contiguous block of resources of each job running in ``window``.

    Args:
        jobs: a validated jobs table with ``allocated_resources`` (interval sets such as ``"0-3 7"``).
        window: the time window (s); jobs running at some time inside it are kept, their bars clipped to it.

    Returns:
        Frame with ``full_job_id``, ``job_id``, ``left`` (clipped start, s), ``width`` (clipped duration, s),
        ``bottom`` (first resource id of the block) and ``height`` (resources in the block), sorted by start
        then first resource.

    Raises:
        ValueError: the table has no ``allocated_resources`` column, or a value is not an interval set (job
            named).
    """
    if "allocated_resources" not in jobs.columns:
        raise ValueError("jobs table has no 'allocated_resources' column, a Gantt chart needs it")
    start = jobs["starting_time"].to_numpy(dtype="float64")
    finish = jobs["finish_time"].to_numpy(dtype="float64")
    with np.errstate(invalid="ignore"):
        inside = (start <= window.end) & (finish >= window.start) & ~np.isnan(start)
    kept = np.flatnonzero(inside)
    texts = jobs["allocated_resources"].to_numpy()[kept].tolist()
    full_ids = jobs[FULL_ID].to_numpy()[kept].tolist()
    job_ids = jobs["job_id"].to_numpy()[kept].tolist()
    lefts = np.maximum(start[kept], window.start)
    widths = (np.minimum(finish[kept], window.end) - lefts).tolist()
    lefts = lefts.tolist()
    blocks_of: dict[str, list[tuple[int, int]]] = {}  # jobs often share an allocation: parse each text once
    rows = []
    for index, raw in enumerate(texts):
        text = str(raw).strip()
        blocks = blocks_of.get(text)
        if blocks is None:
            try:
                blocks = [(block.inf, block.sup - block.inf + 1) for block in ProcSet.from_str(text).intervals()]
            except (ValueError, TypeError) as err:
                raise ValueError(f"job {full_ids[index]}: allocated_resources {text!r} is not an interval set"
                                 f": {err}") from err
            blocks_of[text] = blocks
        for bottom, height in blocks:
            rows.append((full_ids[index], job_ids[index], lefts[index], widths[index], bottom, height))
    frame = pd.DataFrame(rows, columns=[FULL_ID, "job_id", "left", "width", "bottom", "height"])
    return frame.sort_values(["left", "bottom"], kind="stable").reset_index(drop=True)


def _label_gantt_bars(figure: Figure, axis, bars: pd.DataFrame, divisor: float) -> None:
    """Write each bar's job id inside it when the id fits (at :data:`GANTT_LABEL_SIZE` points), from the axis'
    size once the figure is laid out."""
    box = axis.get_position()
    x_low, x_high = axis.get_xlim()
    y_low, y_high = axis.get_ylim()
    points_x = box.width * figure.get_figwidth() * 72.0 / (x_high - x_low)
    points_y = box.height * figure.get_figheight() * 72.0 / (y_high - y_low)
    for row in bars.itertuples():
        text = str(row.job_id)
        wide = row.width / divisor * points_x >= 0.62 * GANTT_LABEL_SIZE * len(text) + 3.0
        tall = row.height * points_y >= 1.3 * GANTT_LABEL_SIZE
        if wide and tall:
            axis.text((row.left + row.width / 2) / divisor, row.bottom + row.height / 2, text, ha="center",
                      va="center", fontsize=GANTT_LABEL_SIZE, clip_on=True, in_layout=False)


def plot_gantt(runs: Sequence[RunData], window: TimeWindow) -> Figure:
    """Gantt chart of each run over ``window``: one axis per run, resources on y, time on x.

    Each job is one colour (a ``tab20`` colour picked from a CRC-32 of its full id, so the same job has the same colour
    in every run), a bar per contiguous block of its ``allocated_resources``, clipped to the window; a bar
    carries its job id when the id fits in it. Runs whose jobs table lacks ``allocated_resources`` get an empty
    axis saying so.

    Raises:
        ValueError: no run.
    """
    if not runs:
        raise ValueError("plot_gantt: no run")
    divisor, unit = time_unit(window.length)
    figure, axes = new_figure(len(runs), height=3.2)
    palette = matplotlib.colormaps["tab20"].colors
    drawn = []
    for run, axis in zip(runs, axes):
        axis.set_title(f"{run.name}: jobs running in [{window.start / divisor:g}, {window.end / divisor:g}] {unit}",
                       fontsize="medium")
        top = run.nb_resources or int(run.jobs["requested_number_of_resources"].max())
        axis.set(ylim=(0, top), ylabel="resource id", xlim=(window.start / divisor, window.end / divisor))
        if "allocated_resources" not in run.jobs.columns:
            axis.text(0.5, 0.5, "no allocated_resources in out_jobs.csv", transform=axis.transAxes,
                      ha="center", va="center")
            continue
        bars = gantt_rectangles(run.jobs, window)
        if bars.empty:
            axis.text(0.5, 0.5, "no job running in this window", transform=axis.transAxes, ha="center",
                      va="center")
            continue
        colours = [palette[zlib.crc32(name.encode()) % len(palette)] for name in bars[FULL_ID]]
        axis.barh(bars["bottom"], bars["width"] / divisor, left=bars["left"] / divisor, height=bars["height"],
                  align="edge", color=colours, edgecolor="black", linewidth=0.3)
        drawn.append((axis, bars))
    axes[-1].set_xlabel(f"time ({unit})")
    if drawn:
        figure.draw_without_rendering()  # lays the axes out: their size in inches is known from here
    for axis, bars in drawn:
        _label_gantt_bars(figure, axis, bars, divisor)
    return figure


def save_figure(figure: Figure, folder: str | Path, stem: str) -> dict[str, Path]:
    """Write ``figure`` as ``<stem>.png`` and ``<stem>.svg`` in ``folder`` (created if needed).

    The SVG has no date and fixed element ids, so the same figure gives the same bytes.

    Returns:
        ``{"png": path, "svg": path}``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"png": folder / f"{stem}.png", "svg": folder / f"{stem}.svg"}
    figure.savefig(paths["png"], format="png", dpi=PNG_DPI)
    with matplotlib.rc_context({"svg.hashsalt": stem}):
        figure.savefig(paths["svg"], format="svg", metadata={"Date": None})
    return paths
