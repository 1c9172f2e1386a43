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

The Gantt chart is drawn here rather than with evalys: evalys 4.0.7 does install and draw with pandas 3.1 and
matplotlib 3.11, but it is not a dependency of the project (it would add evalys and seaborn), its
``plot_gantt`` has no time-window option and goes through pyplot, and it adds one rectangle artist and one
text label per job (6 s and an unreadable figure for the 2000-job golden run).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from procset import ProcSet

from batreplay.analysis.metrics import SECONDS_PER_DAY, TimeWindow, running_jobs_over_time
from batreplay.formats.out_jobs import FULL_ID
from batreplay.analysis.run_dir import RECORDED_SUBMISSION, RunData

#: Above this many points a curve is drawn from values sampled on a regular grid (see each function).
MAX_CURVE_POINTS = 2000
#: Number of bins of the regular grid used for long curves.
CURVE_BINS = 500
#: Jobs in a Gantt window up to which each bar is labelled with its job id.
GANTT_LABEL_LIMIT = 40
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


def time_weighted_means(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Average of a step function over each bin ``[edges[k], edges[k+1]]``.

    The step function is ``values[i]`` on ``[times[i], times[i+1])``, 0 before ``times[0]`` and
    ``values[-1]`` after the last time. Exact: the integral of a step function is piecewise linear, so it is
    interpolated at the bin edges.

    Args:
        times: increasing instants (s), shape (n,).
        values: value from each instant on, shape (n,).
        edges: increasing bin edges (s), shape (m + 1,), m >= 1.

    Returns:
        Shape (m,): mean value over each bin.

    Raises:
        ValueError: shapes differ, fewer than two edges, or edges not increasing.
    """
    times = np.asarray(times, dtype="float64")
    values = np.asarray(values, dtype="float64")
    edges = np.asarray(edges, dtype="float64")
    if times.shape != values.shape:
        raise ValueError(f"times and values differ in shape: {times.shape} vs {values.shape}")
    if edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("bin edges must be at least two increasing values")
    if times.size == 0:
        return np.zeros(edges.size - 1)
    integral = np.concatenate([[0.0], np.cumsum(values[:-1] * np.diff(times))])

    def primitive(t: np.ndarray) -> np.ndarray:
        inside = np.interp(t, times, integral)
        after = integral[-1] + values[-1] * np.maximum(t - times[-1], 0.0)
        return np.where(t < times[0], 0.0, np.where(t > times[-1], after, inside))

    cumulative = primitive(edges)
    return np.diff(cumulative) / np.diff(edges)


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


def _recorded_submissions(runs: Sequence[RunData]) -> np.ndarray | None:
    """Recorded submission times of the first run that knows them (all runs replay the same log)."""
    for run in runs:
        if run.has_recorded_submissions:
            return run.job_table[RECORDED_SUBMISSION].to_numpy(dtype="float64")
    return None


def _new_figure(rows: int = 1, *, height: float = 3.6, sharex: bool = True) -> tuple[Figure, list]:
    figure = Figure(figsize=(8.0, height * rows), layout="constrained")
    axes = figure.subplots(rows, 1, sharex=sharex, squeeze=False)[:, 0]
    return figure, list(axes)


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
    figure, (axis,) = _new_figure()
    recorded = _recorded_submissions(runs)
    series = [("recorded (rigid)", recorded, RECORDED_COLOUR, "--")] if recorded is not None else []
    series += [(run.name, run.jobs["submission_time"].to_numpy(dtype="float64"), run_colour(i), "-")
               for i, run in enumerate(runs)]
    for label, values, colour, style in series:
        counts, _ = np.histogram(values, bins=edges)
        # each curve over the bins from its first to its last submission, not padded with zeros
        used = (edges[1:] > np.min(values)) & (edges[:-1] <= np.max(values))
        axis.step(edges[:-1][used] / divisor, counts[used], where="post", label=label, color=colour,
                  linestyle=style, linewidth=1.0)
    per = "day" if bin_seconds == SECONDS_PER_DAY else f"{bin_seconds:g} s"
    axis.set(xlabel=f"submission time ({unit})", ylabel=f"jobs submitted per {per}",
             title="Distribution of submission times")
    axis.legend(loc="upper right", fontsize="small")
    return figure


def _cumulative_curve(values: np.ndarray, divisor: float) -> tuple[np.ndarray, np.ndarray]:
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
    figure, (top, bottom) = _new_figure(2, height=3.0)
    recorded = _recorded_submissions(runs)
    if recorded is not None:
        top.step(*_cumulative_curve(recorded, divisor), where="post", color=RECORDED_COLOUR, linestyle="--",
                 linewidth=1.0, label="recorded (rigid)")
    for i, run in enumerate(runs):
        for axis, column in ((top, "submission_time"), (bottom, "finish_time")):
            axis.step(*_cumulative_curve(run.jobs[column].to_numpy(dtype="float64"), divisor), where="post",
                      color=run_colour(i), linewidth=1.0, label=run.name)
    top.set(ylabel="jobs submitted", title="Cumulative number of jobs submitted (top) and finished (bottom)")
    bottom.set(ylabel="jobs finished", xlabel=f"time ({unit})")
    for axis in (top, bottom):
        axis.legend(loc="lower right", fontsize="small")
    return figure


def plot_user_mean_lateness(per_user: Mapping[str, pd.DataFrame]) -> Figure:
    """Per-user mean lateness against the number of jobs submitted (Madon et al. 2024, Fig. 4), one colour per run.

    Args:
        per_user: run name -> :func:`batreplay.analysis.lateness.lateness_per_user` table (``nb_jobs``,
            ``mean_lateness`` in s), in the order of the runs (colours follow that order).

    Returns:
        A figure with one axis: x = jobs submitted by the user (log scale), y = mean lateness in seconds
        (symmetric log scale, linear within +-60 s, so that early users (negative) and zero show). One
        point collection per run.

    Raises:
        ValueError: ``per_user`` is empty.
    """
    if not per_user:
        raise ValueError("plot_user_mean_lateness: no run with recorded submission times")
    figure, (axis,) = _new_figure(height=4.2)
    for i, (name, table) in enumerate(per_user.items()):
        axis.scatter(table["nb_jobs"].to_numpy(), table["mean_lateness"].to_numpy(), s=12, alpha=0.7,
                     color=run_colour(i), label=name)
    axis.set_xscale("log")
    axis.set_yscale("symlog", linthresh=60.0)
    axis.axhline(0.0, color="grey", linewidth=0.6)
    axis.set(xlabel="jobs submitted by the user", ylabel="mean lateness per user (s)",
             title="Mean lateness per user")
    axis.legend(loc="best", fontsize="small")
    return figure


def _step_or_binned(times: np.ndarray, values: np.ndarray, low: float, high: float
                    ) -> tuple[np.ndarray, np.ndarray, bool]:
    """The curve to draw for a step function: itself when short, else its bin means.

    Bins are ``(high - low) / CURVE_BINS`` wide (the same for every run of a figure), laid from ``low`` and
    kept while they overlap the step function's own span.
    """
    if times.size <= MAX_CURVE_POINTS or not high > low:
        return times, values, False
    edges = np.linspace(low, high, CURVE_BINS + 1)
    used = (edges[1:] > times[0]) & (edges[:-1] < times[-1])
    return edges[:-1][used], time_weighted_means(times, values, edges)[used], True


def plot_utilisation_and_queue(runs: Sequence[RunData]) -> Figure:
    """Utilisation (busy nodes / nodes, top) and number of waiting jobs (bottom) over time.

    Busy nodes come from :func:`batreplay.analysis.metrics.running_jobs_over_time` (requested resources of
    the running jobs), waiting jobs from :func:`queue_length_over_time`. Up to :data:`MAX_CURVE_POINTS`
    changes the exact step function is drawn; beyond, its time-weighted mean over :data:`CURVE_BINS`
    regular bins (the axis label says so).

    Raises:
        ValueError: no run, or a run without ``nb_resources``.
    """
    if not runs:
        raise ValueError("plot_utilisation_and_queue: no run")
    low, high = _span(runs)
    divisor, unit = time_unit(high - low)
    figure, (top, bottom) = _new_figure(2, height=3.0)
    binned_any = False
    for i, run in enumerate(runs):
        if run.nb_resources is None:
            raise ValueError(f"run {run.name}: number of resources unknown, cannot plot utilisation")
        running = running_jobs_over_time(run.jobs)
        queue = queue_length_over_time(run.jobs)
        for axis, times, values in (
                (top, running["time"].to_numpy(), running["busy_nodes"].to_numpy(dtype="float64") / run.nb_resources),
                (bottom, queue["time"].to_numpy(), queue["queued_jobs"].to_numpy(dtype="float64"))):
            x, y, binned = _step_or_binned(times, values, low, high)
            binned_any |= binned
            axis.step(x / divisor, y, where="post", color=run_colour(i), linewidth=1.0, label=run.name)
    note = f"\n(time-weighted means over {CURVE_BINS} bins of the span)" if binned_any else ""
    top.set(ylabel="utilisation (busy / all nodes)", ylim=(0.0, 1.05),
            title="Utilisation (top) and queue length (bottom)" + note)
    bottom.set(ylabel="waiting jobs", xlabel=f"time ({unit})")
    for axis in (top, bottom):
        axis.legend(loc="upper right", fontsize="small")
    return figure


def default_gantt_window(runs: Sequence[RunData]) -> TimeWindow:
    """One day from the first submission of the runs, or their whole span when shorter (s)."""
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
    rows = []
    for k in np.flatnonzero(inside):
        text = str(jobs["allocated_resources"].iloc[k]).strip()
        try:
            blocks = ProcSet.from_str(text).intervals()
        except (ValueError, TypeError) as err:
            raise ValueError(f"job {jobs[FULL_ID].iloc[k]}: allocated_resources {text!r} is not an interval set"
                             f": {err}") from err
        left = max(start[k], window.start)
        width = min(finish[k], window.end) - left
        for block in blocks:
            rows.append((jobs[FULL_ID].iloc[k], jobs["job_id"].iloc[k], left, width, block.inf,
                         block.sup - block.inf + 1))
    frame = pd.DataFrame(rows, columns=[FULL_ID, "job_id", "left", "width", "bottom", "height"])
    return frame.sort_values(["left", "bottom"], kind="stable").reset_index(drop=True)


def plot_gantt(runs: Sequence[RunData], window: TimeWindow) -> Figure:
    """Gantt chart of each run over ``window``: one axis per run, resources on y, time on x.

    Each job is one colour (a ``tab20`` colour picked from a CRC-32 of its full id, so the same job has the same colour
    in every run), a bar per contiguous block of its ``allocated_resources``, clipped to the window; with at
    most :data:`GANTT_LABEL_LIMIT` jobs in a window, bars carry the job id. Runs whose jobs table lacks
    ``allocated_resources`` get an empty axis saying so.

    Raises:
        ValueError: no run.
    """
    if not runs:
        raise ValueError("plot_gantt: no run")
    divisor, unit = time_unit(window.length)
    figure, axes = _new_figure(len(runs), height=3.2)
    palette = matplotlib.colormaps["tab20"].colors
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
        if bars[FULL_ID].nunique() <= GANTT_LABEL_LIMIT:
            for row in bars.itertuples():
                axis.text((row.left + row.width / 2) / divisor, row.bottom + row.height / 2, row.job_id,
                          ha="center", va="center", fontsize="x-small", clip_on=True)
    axes[-1].set_xlabel(f"time ({unit})")
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
