"""Interactive figures of simulation runs for the web GUI: of one run, utilisation and queue length over time (the
Gantt chart is :mod:`batreplay.ui.gantt`'s), the waiting-time distribution and, for replays with feedback, the mean
lateness per user; of several runs compared, utilisation and queue length overlaid and the cumulative submissions.
They are Plotly figures (:mod:`plotly.graph_objects`), zoomed and panned in the browser, unlike the static
Matplotlib figures of :mod:`batreplay.analysis.plots` that the HTML report embeds; every number they draw is
computed by :mod:`batreplay.analysis` (busy nodes, queue length, per-job times, lateness), this module lays it
out, long step lines reduced to the visible window (:func:`batreplay.ui.series.step_in_view`, said in the
title). Times are the simulation clock (seconds from Batsim's time 0), shown on the axes in seconds, hours or
days depending on the run's span (:func:`batreplay.analysis.plots.time_unit`, one unit per
figure, given in the axis title and in ``figure.layout.meta``); hosts (nodes) are Batsim resource ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from batreplay.analysis.lateness import job_lateness, lateness_per_user
from batreplay.analysis.metrics import job_metrics, running_jobs_over_time
from batreplay.analysis.plots import (
    cumulative_curve,
    node_io_series,
    queue_length_over_time,
    recorded_submissions,
    time_unit,
)
from batreplay.analysis.run_dir import RunData
from batreplay.formats.out_jobs import FAILED, KILLED, SUCCESS, WALLTIME_REACHED
from batreplay.ui.series import VIEW_POINTS, step_in_view

#: Ways of colouring the Gantt chart (:func:`batreplay.ui.gantt.gantt_figure`).
COLOR_BY: tuple[str, ...] = ("user", "state")
#: Users with the most jobs drawn that get a colour of their own in the Gantt chart; the others share one group.
MAX_USER_GROUPS = 20
#: Name of the Gantt group of the users beyond :data:`MAX_USER_GROUPS`.
OTHER_USERS = "other users"
#: Colour of each final state of a job that ran, in legend order (states not listed are grey).
STATE_COLOURS: dict[str, str] = {SUCCESS: "#2ca02c", WALLTIME_REACHED: "#ff7f0e", KILLED: "#d62728",
                                 FAILED: "#9467bd"}
#: Colours of the users' groups, in order of job count; ``OTHER_COLOUR`` for the remaining users.
USER_COLOURS: tuple[str, ...] = tuple(qualitative.Dark24)
OTHER_COLOUR = "#b0b0b0"
#: Colour of each run in the figures that compare runs, in order.
RUN_COLOURS = qualitative.D3
#: Replay model (``spec["replay"]`` of ``run.json``) whose jobs are submitted at their recorded times: no lateness.
RIGID_REPLAY = "rigid"
#: Above this many points a step curve is drawn with WebGL (``go.Scattergl``) rather than SVG.
WEBGL_POINTS = 20_000
#: Most bars of the waiting-time histogram.
MAX_HISTOGRAM_BINS = 100


def run_span(run: RunData) -> tuple[float, float]:
    """First submission and last finish of the run (s); the last submission when no job finished."""
    jobs = run.jobs
    low = float(jobs["submission_time"].min())
    finishes = jobs["finish_time"].to_numpy(dtype="float64")
    high = float(np.nanmax(finishes)) if np.isfinite(finishes).any() else float(jobs["submission_time"].max())
    return low, max(high, low)


def _unit(run: RunData) -> tuple[float, str]:
    """Divisor and name of the time unit of the run's figures (:func:`time_unit` of the run's span)."""
    low, high = run_span(run)
    return time_unit(high - low)


def user_sort_key(user: str) -> tuple[int, float, str]:
    """Sort key of a user id given as text: numbers in numeric order, before other names."""
    try:
        return 0, float(user), user
    except ValueError:
        return 1, 0.0, user


def _step_trace(x: np.ndarray, y: np.ndarray, name: str, colour: str,
                window: tuple[float, float] | None = None) -> go.Scatter | go.Scattergl:
    """A step line (value held from each x to the next) of the steps seen in ``window`` (x's unit; None: all),
    reduced to :data:`batreplay.ui.series.VIEW_POINTS` points at most (:func:`~batreplay.ui.series.step_in_view`);
    WebGL above :data:`WEBGL_POINTS` points. The trace's ``meta``: ``points`` (before reduction), ``reduced``."""
    points = int(np.asarray(x).size)
    x, y, reduced = step_in_view(x, y, *(window or (None, None)))
    kind = go.Scattergl if x.size > WEBGL_POINTS else go.Scatter
    return kind(x=x, y=y, mode="lines", line={"shape": "hv", "color": colour, "width": 1.2}, name=name,
                meta={"points": points, "reduced": reduced})


def _reduction_note(figure: go.Figure) -> str:
    """The line a figure's title gets when a step line of it was reduced to the view (:func:`_step_trace`), else
    an empty text."""
    if not any(isinstance(trace.meta, dict) and trace.meta.get("reduced") for trace in figure.data):
        return ""
    return (f"<br><sub>long curves drawn with {VIEW_POINTS:,} points each (M4: each bin's first, last, lowest and "
            "highest point); a zoom redraws them exactly for its window</sub>")


@dataclass(frozen=True)
class UtilisationSteps:
    """A run's utilisation and queue length as step functions, computed once (:func:`utilisation_steps`) and
    drawn for any view (:func:`utilisation_figure`).

    Attributes:
        name: the run's name.
        busy_times, busy: instants (s) and busy nodes from each (a fraction of the nodes when ``fraction``).
        queue_times, queued: instants (s) and waiting jobs from each.
        fraction: the number of nodes is known, ``busy`` is a utilisation.
        span: the run's first submission and last finish (s).
        divisor, unit: the time axis' unit (:func:`batreplay.analysis.plots.time_unit` of the span).
    """

    name: str
    busy_times: np.ndarray
    busy: np.ndarray
    queue_times: np.ndarray
    queued: np.ndarray
    fraction: bool
    span: tuple[float, float]
    divisor: float
    unit: str


def utilisation_steps(run: RunData) -> UtilisationSteps:
    """The step functions of ``run``'s utilisation and queue length (see :func:`utilisation_figure`), in seconds:
    ``busy`` a fraction of the nodes when the number of nodes is known, else nodes; both start at the run's first
    submission."""
    low, high = run_span(run)
    running = running_jobs_over_time(run.jobs, shared_hosts=run.shared_hosts)
    busy = running["busy_nodes"].to_numpy(dtype="float64")
    fraction = run.nb_resources is not None
    if fraction:
        busy = busy / run.nb_resources
    busy_times = running["time"].to_numpy(dtype="float64")
    queue = queue_length_over_time(run.jobs)
    queue_times = queue["time"].to_numpy(dtype="float64")
    queued = queue["queued_jobs"].to_numpy(dtype="float64")
    # both step functions are 0 before their first change: start them at the first submission
    if busy_times.size == 0 or busy_times[0] > low:
        busy_times, busy = np.concatenate([[low], busy_times]), np.concatenate([[0.0], busy])
    if queue_times.size == 0 or queue_times[0] > low:
        queue_times, queued = np.concatenate([[low], queue_times]), np.concatenate([[0.0], queued])
    return UtilisationSteps(run.name, busy_times, busy, queue_times, queued, fraction, (low, high),
                            *time_unit(high - low))


def utilisation_figure(steps: UtilisationSteps, window: tuple[float, float] | None = None) -> go.Figure:
    """Utilisation (top) and queue length (bottom) of a run over time, as step lines sharing the x axis, seen in
    ``window`` (simulated time, s; None: the whole run).

    Top: busy nodes / the run's nodes (0..1 without compute sharing), from
    :func:`batreplay.analysis.metrics.running_jobs_over_time` (with ``run.shared_hosts``, a host running several
    jobs at once counts once); when the run's number of nodes is unknown, the busy nodes themselves, which the axis
    title says. Bottom: waiting jobs (submitted, not yet started;
    :func:`batreplay.analysis.plots.queue_length_over_time`). Each curve holds its value from one point to the
    next; both start at the run's first submission (at 0 until the first event) and the utilisation ends at 0
    at the last finish. Only the steps seen in the window are drawn, at most
    :data:`batreplay.ui.series.VIEW_POINTS` per curve (M4: :func:`batreplay.ui.series.step_in_view`), so a whole
    log and a zoom on one day cost the same. x = simulated time in the run's unit (``figure.layout.meta``:
    ``time_unit``, ``seconds_per_unit``, ``window`` in s; ``utilisation`` True when the top row is a fraction,
    False for busy nodes).

    Raises:
        Nothing of its own (:func:`utilisation_steps` of a validated jobs table is assumed).
    """
    divisor, unit, fraction = steps.divisor, steps.unit, steps.fraction
    shown = None if window is None else (window[0] / divisor, window[1] / divisor)
    top_title = "utilisation (busy nodes / nodes)" if fraction else "busy nodes (number of nodes unknown)"
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    figure.add_trace(_step_trace(steps.busy_times / divisor, steps.busy,
                                 "utilisation" if fraction else "busy nodes", "#1f77b4", shown), row=1, col=1)
    figure.add_trace(_step_trace(steps.queue_times / divisor, steps.queued, "waiting jobs", "#ff7f0e", shown),
                     row=2, col=1)
    figure.update_yaxes(title_text=top_title, rangemode="tozero", row=1, col=1)
    if fraction:
        figure.update_yaxes(range=[0, max(1.02, float(steps.busy.max()) * 1.02)], row=1, col=1)
    figure.update_yaxes(title_text="waiting jobs", rangemode="tozero", row=2, col=1)
    figure.update_xaxes(title_text=f"simulated time ({unit})", row=2, col=1)
    if shown is not None:
        figure.update_xaxes(range=list(shown))
    figure.update_layout(
        title={"text": f"{steps.name}: {'utilisation' if fraction else 'busy nodes'} (top) and queue length "
                       f"(bottom){_reduction_note(figure)}"},
        dragmode="zoom", hovermode="x unified", showlegend=False,
        meta={"time_unit": unit, "seconds_per_unit": divisor, "utilisation": fraction,
              "window": list(window or steps.span)},
    )
    return figure


def node_io_figure(run: RunData, table: pd.DataFrame) -> go.Figure:
    """Node I/O per node type of ``run`` over time, one step line per type (``table``:
    :func:`batreplay.analysis.node_io.node_io_over_time`): the I/O utilisation when the platform states every type's
    I/O rate, else the bytes/s read and written (:func:`batreplay.analysis.plots.node_io_series`; the y axis title
    says which). x = simulated time in the run's unit (``figure.layout.meta``: ``time_unit``, ``seconds_per_unit``,
    ``quantity``)."""
    divisor, unit = _unit(run)
    label, series = node_io_series(table)
    figure = go.Figure()
    for i, (name, (starts, values)) in enumerate(series.items()):
        figure.add_trace(_step_trace(starts / divisor, values, name, qualitative.Plotly[i % len(qualitative.Plotly)]))
    figure.update_yaxes(title_text=label, rangemode="tozero")
    figure.update_xaxes(title_text=f"simulated time ({unit}; means over bins)")
    figure.update_layout(title={"text": f"{run.name}: node I/O per node type (reads and writes with storage)"},
                         dragmode="zoom", hovermode="x unified",
                         meta={"time_unit": unit, "seconds_per_unit": divisor, "quantity": label})
    return figure


def waiting_time_figure(run: RunData) -> go.Figure:
    """Histogram of the waiting times (start - submission) of the jobs that ran, mean and median marked.

    Waiting times come from :func:`batreplay.analysis.metrics.job_metrics`; x is in seconds, hours or days
    (:func:`batreplay.analysis.plots.time_unit` of the longest wait), y is the number of jobs per bar (at most
    :data:`MAX_HISTOGRAM_BINS` equal bars, numpy's ``"auto"`` bins; each bar counts the waits in
    ``[left, right)``, the last also its right edge). Bars are one ``go.Bar`` trace, x at the bins' left edges,
    ``customdata`` = ``[left, right]`` in the axis unit. The mean and the median are vertical lines (shapes named
    ``"mean"`` and ``"median"``) with their value written above. A button switches the y axis to a log scale
    (waits are heavy-tailed). ``figure.layout.meta``: ``jobs`` (jobs that ran), ``mean_waiting_time``,
    ``median_waiting_time`` (s; None when no job ran), ``time_unit``, ``seconds_per_unit``. Without any job that
    ran, the figure is empty and says so.

    Raises:
        Nothing of its own (a validated jobs table is assumed).
    """
    waits = job_metrics(run.jobs)["waiting_time"].dropna().to_numpy(dtype="float64")
    highest = float(waits.max()) if waits.size else 0.0
    divisor, unit = time_unit(highest)
    figure = go.Figure()
    meta: dict[str, Any] = {"jobs": int(waits.size), "mean_waiting_time": None, "median_waiting_time": None,
                            "time_unit": unit, "seconds_per_unit": divisor}
    if waits.size == 0:
        figure.add_annotation(text="no job ran", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    else:
        edges = np.histogram_bin_edges(waits, bins="auto")
        if edges.size - 1 > MAX_HISTOGRAM_BINS:
            edges = np.histogram_bin_edges(waits, bins=MAX_HISTOGRAM_BINS)
        counts, edges = np.histogram(waits, bins=edges)
        edges = edges / divisor
        figure.add_trace(go.Bar(
            x=edges[:-1], y=counts, width=np.diff(edges), offset=0, name="jobs",
            customdata=np.column_stack([edges[:-1], edges[1:]]), marker={"color": "#1f77b4"},
            hovertemplate=f"waited %{{customdata[0]:,.4g}} to %{{customdata[1]:,.4g}} {unit}: %{{y}} jobs"
                          "<extra></extra>"))
        mean, median = float(waits.mean()), float(np.median(waits))
        meta.update(mean_waiting_time=mean, median_waiting_time=median)
        for name, value, colour, side in (("mean", mean, "#d62728", "top right"),
                                          ("median", median, "#2ca02c", "top left")):
            figure.add_vline(x=value / divisor, name=name, line={"color": colour, "dash": "dash", "width": 1.5},
                             annotation={"text": f"{name} {readable_duration(value)}", "font": {"color": colour}},
                             annotation_position=side)
    figure.update_layout(
        title={"text": f"{run.name}: waiting time of the {waits.size} job{'s' if waits.size != 1 else ''} that ran"},
        xaxis={"title": {"text": f"waiting time ({unit})"}}, yaxis={"title": {"text": "jobs"}},
        bargap=0.0, dragmode="zoom", showlegend=False, meta=meta,
        updatemenus=[{"type": "buttons", "direction": "right", "x": 1.0, "xanchor": "right", "y": 1.02,
                      "yanchor": "bottom", "showactive": True,
                      "buttons": [{"label": "linear", "method": "relayout", "args": [{"yaxis.type": "linear"}]},
                                  {"label": "log", "method": "relayout", "args": [{"yaxis.type": "log"}]}]}],
    )
    return figure


def readable_duration(seconds: float) -> str:
    """A duration as text, in seconds and, when over two hours, in the unit of
    :func:`batreplay.analysis.plots.time_unit`: ``"3,513 s"``, ``"45,000 s (12.5 h)"``."""
    divisor, unit = time_unit(seconds)
    text = f"{seconds:,.0f} s" if seconds >= 10 else f"{seconds:.3g} s"
    return text if divisor == 1.0 else f"{text} ({seconds / divisor:.3g} {unit})"


def lateness_of(run: RunData) -> pd.DataFrame | None:
    """Per-user lateness of a replay with feedback (Madon et al. 2024, eqs. 3, 4, 6), or None.

    The same calls as ``batreplay analyze``: :func:`batreplay.analysis.lateness.job_lateness` of the jobs and
    ``jobs.csv``, then :func:`batreplay.analysis.lateness.lateness_per_user`.

    Returns:
        The per-user table (indexed by ``user_id``; ``nb_jobs``, ``mean_lateness`` in s, ``relative_lateness``,
        ``additional_lateness`` in s), or None when the run has no job side table, no recorded submission times
        (``recorded_submission_time``), or is a rigid replay (``spec["replay"] == "rigid"``: every job is
        submitted at its recorded time, its lateness is 0 by construction).

    Raises:
        ValueError: the job side table does not match the jobs (as :func:`~batreplay.analysis.lateness.job_lateness`).
    """
    if not run.has_recorded_submissions or run.spec.get("replay") == RIGID_REPLAY:
        return None
    return lateness_per_user(job_lateness(run.jobs, run.job_table))


def lateness_figure(per_user: pd.DataFrame) -> go.Figure:
    """Mean lateness per user (Madon et al. 2024, eq. 3 over each user's jobs): one bar per user, sorted.

    Args:
        per_user: a :func:`batreplay.analysis.lateness.lateness_per_user` table (:func:`lateness_of`), indexed by
            user id, with ``mean_lateness`` (s) and ``nb_jobs``.

    Returns:
        A figure with one ``go.Bar`` trace: x = users (``"user 12"``, categories) from the latest to the
        earliest (largest mean lateness first, ties by user id), y = mean lateness in the unit of
        :func:`batreplay.analysis.plots.time_unit` of the largest absolute value (negative: the user submitted
        earlier than recorded); ``customdata`` = ``[user id, mean lateness in s, jobs]`` per bar for the hover.
        ``figure.layout.meta``: ``users``, ``time_unit``, ``seconds_per_unit``.

    Raises:
        ValueError: the table lacks ``mean_lateness`` or ``nb_jobs``, or has no row.
    """
    missing = [c for c in ("mean_lateness", "nb_jobs") if c not in per_user.columns]
    if missing:
        raise ValueError(f"per-user lateness table: missing column(s) {', '.join(missing)} "
                         f"(found: {', '.join(map(str, per_user.columns))})")
    if len(per_user) == 0:
        raise ValueError("per-user lateness table: no user")
    table = pd.DataFrame({"user": per_user.index.astype(str),
                          "mean": per_user["mean_lateness"].to_numpy(dtype="float64"),
                          "jobs": per_user["nb_jobs"].to_numpy()})
    table["key"] = [user_sort_key(user) for user in table["user"]]
    table = table.sort_values("key", kind="stable").sort_values("mean", ascending=False, kind="stable")
    largest = float(np.nanmax(np.abs(table["mean"].to_numpy()))) if table["mean"].notna().any() else 0.0
    divisor, unit = time_unit(largest)
    figure = go.Figure(go.Bar(
        x=[f"user {user}" for user in table["user"]], y=table["mean"].to_numpy() / divisor,
        customdata=np.column_stack([table["user"].to_numpy(dtype=object), table["mean"].to_numpy(dtype=object),
                                    table["jobs"].to_numpy(dtype=object)]),
        marker={"color": np.where(table["mean"].to_numpy() >= 0, "#d62728", "#1f77b4").tolist()},
        hovertemplate="user %{customdata[0]}<br>mean lateness %{customdata[1]:,.0f} s<br>%{customdata[2]} jobs"
                      "<extra></extra>"))
    figure.update_layout(
        title={"text": f"Mean lateness per user ({len(table)} users; later than recorded above 0, earlier below)"},
        xaxis={"title": {"text": "user (latest first)"}, "type": "category"},
        yaxis={"title": {"text": f"mean lateness ({unit})"}, "zeroline": True},
        dragmode="zoom", showlegend=False, meta={"users": len(table), "time_unit": unit, "seconds_per_unit": divisor},
    )
    return figure


def _longest_unit(spans) -> tuple[float, str]:
    """Divisor and name of the time unit of the longest of ``spans`` (``(first, last)`` instants, s)."""
    return time_unit(max(high - low for low, high in spans))


def runs_unit(runs: Sequence[RunData]) -> tuple[float, str]:
    """Divisor (seconds per unit) and name of the time unit shared by the figures of several runs
    (:func:`batreplay.analysis.plots.time_unit` of their longest span)."""
    return _longest_unit(run_span(run) for run in runs)


def comparison_series_figure(steps: Sequence[UtilisationSteps], *, window: float | None = None,
                             view: tuple[float, float] | None = None) -> go.Figure:
    """Utilisation (top) and queue length (bottom) of several runs over time, overlaid (one colour per run), as
    :func:`utilisation_figure` draws them for one run; busy nodes instead of utilisation when a run's number of
    nodes is unknown (its legend entry says so). x = simulated time in the unit of the longest run.

    Args:
        steps: the runs' steps (:func:`utilisation_steps`, prepared once per run), drawn in this order.
        window: None (the step functions themselves), or the length of a moving average in the x axis' unit: each
            curve becomes its mean over the window before each instant
            (:func:`batreplay.ui.comparison.smoothed`, at most
            :data:`~batreplay.ui.comparison.MAX_SMOOTHED_POINTS` points a curve), which the axis titles say.
            ``figure.layout.meta``: ``runs``, ``time_unit``, ``seconds_per_unit``, ``window`` (None or the length),
            ``view``.
        view: the visible time window (s), None for all: the step functions are drawn reduced to it
            (:func:`_step_trace`; the title says when a curve was reduced).

    Raises:
        ValueError: no run, or a window that is not a finite number > 0.
    """
    from batreplay.ui.comparison import smoothed

    if not steps:
        raise ValueError("comparison_series_figure: no run")
    divisor, unit = _longest_unit(run.span for run in steps)
    if window is not None and not (np.isfinite(window) and window > 0):
        raise ValueError(f"comparison_series_figure: window {window!r} is not a finite number > 0")
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    for index, run in enumerate(steps):
        colour = RUN_COLOURS[index % len(RUN_COLOURS)]
        names = (run.name if run.fraction else f"{run.name} (busy nodes)", run.name)
        for row, (times, values) in enumerate(((run.busy_times, run.busy), (run.queue_times, run.queued)), start=1):
            if window is None:
                shown = None if view is None else (view[0] / divisor, view[1] / divisor)
                trace = _step_trace(times / divisor, values, names[row - 1], colour, shown)
            else:
                x, y = smoothed(times, values, window * divisor)
                trace = go.Scatter(x=x / divisor, y=y, mode="lines", name=names[row - 1],
                                   line={"color": colour, "width": 1.2})
            trace.showlegend = row == 1
            figure.add_trace(trace, row=row, col=1)
    means = "" if window is None else f", mean over the last {window:g} {unit}"
    figure.update_yaxes(title_text=f"utilisation{means}", rangemode="tozero", row=1, col=1)
    figure.update_yaxes(title_text=f"waiting jobs{means}", rangemode="tozero", row=2, col=1)
    figure.update_xaxes(title_text=f"simulated time ({unit})", row=2, col=1)
    smoothing = "" if window is None else f" ({window:g} {unit} moving averages)"
    if view is not None:
        figure.update_xaxes(range=[view[0] / divisor, view[1] / divisor])
    figure.update_layout(title={"text": f"Utilisation (top) and queue length (bottom){smoothing}"
                                        f"{_reduction_note(figure)}"},
                         dragmode="zoom", hovermode="x unified",
                         meta={"runs": [run.name for run in steps], "time_unit": unit, "seconds_per_unit": divisor,
                               "window": window, "view": list(view) if view is not None else None})
    return figure


def cumulative_submissions_figure(runs: Sequence[RunData]) -> go.Figure:
    """Cumulative number of jobs submitted over time, one step line per run, with the recorded submissions of the
    log (dashed) when a run knows them: Madon, Da Costa, Pierson 2024, Fig. 3 (a feedback replay submits later
    than the log when the machine is slower; a rigid replay follows it). Curves from
    :func:`batreplay.analysis.plots.cumulative_curve` (every job a point, or sampled exactly on a grid for
    long logs). x = simulated time in the unit of the longest run; ``meta["jobs"]`` = each run's job count.

    Raises:
        ValueError: no run.
    """
    if not runs:
        raise ValueError("cumulative_submissions_figure: no run")
    divisor, unit = runs_unit(runs)
    figure = go.Figure()
    recorded = recorded_submissions(runs)
    if recorded is not None:
        x, y = cumulative_curve(recorded, divisor)
        figure.add_trace(go.Scatter(x=x, y=y, mode="lines", name="recorded (rigid)",
                                    line={"shape": "hv", "dash": "dash", "color": OTHER_COLOUR}))
    for index, run in enumerate(runs):
        x, y = cumulative_curve(run.jobs["submission_time"].to_numpy(dtype="float64"), divisor)
        figure.add_trace(go.Scatter(x=x, y=y, mode="lines", name=run.name,
                                    line={"shape": "hv", "color": RUN_COLOURS[index % len(RUN_COLOURS)]}))
    figure.update_layout(title={"text": "Cumulative number of jobs submitted"}, dragmode="zoom",
                         xaxis={"title": {"text": f"simulated time ({unit})"}},
                         yaxis={"title": {"text": "jobs submitted"}, "rangemode": "tozero"},
                         meta={"jobs": [len(run.jobs) for run in runs], "time_unit": unit})
    return figure
