"""The Gantt chart of a run at any size: an overview whose cost does not grow with the number of jobs, and each
job drawn (hover, colour, job id) once the view holds few enough of them.

A run is prepared once (:func:`gantt_data`: every job's rectangles, one per contiguous block of its hosts, and its
colour groups), then each view is drawn from memory (:func:`gantt_figure`) for a window of time and hosts
(:class:`GanttWindow`), as the browser zooms and pans:

- **detail**, when at most :data:`DETAIL_JOBS` jobs have a rectangle in the window: those rectangles, one
  ``go.Scattergl`` trace of filled polygons per colour group and one of invisible markers carrying the hover;
- **overview**, beyond: the window cut into at most :data:`OVERVIEW_COLUMNS` equal time bins and one row per host
  (hosts merged into at most :data:`OVERVIEW_ROWS` equal rows), each cell painted in the colour of the group with the
  most node time in it, as opaque as the share of the cell's node time that is busy (with compute sharing, a host
  running several jobs at once is busy once; cells overbooked otherwise are counted) (a raster of node occupancy,
  sent as one PNG image under the axes), with a transparent heatmap on top whose hover gives that share.

The cell values are exact: the node time of a rectangle in a cell is its hosts in the row times its time in the
bin, summed over rectangles as one sparse matrix product (:func:`occupancy`). Datashader, the library built for
rasters of large data, was weighed: it would bring numba, dask and xarray into the GUI's dependencies for one
aggregation that scipy's sparse product does exactly.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from scipy import sparse

from batreplay.analysis.metrics import TimeWindow, job_metrics
from batreplay.analysis.plots import gantt_rectangles, time_unit
from batreplay.analysis.run_dir import RunData
from batreplay.formats.out_jobs import FULL_ID, attach_job_table
from batreplay.formats.out_schedule import busy_periods
from batreplay.ui.series import relayout_range
from batreplay.ui.figures import (
    COLOR_BY,
    MAX_USER_GROUPS,
    OTHER_COLOUR,
    OTHER_USERS,
    STATE_COLOURS,
    USER_COLOURS,
    readable_duration,
    run_span,
    user_sort_key,
)

#: Jobs in the window at most for the detail view (each job drawn); beyond, the overview.
DETAIL_JOBS = 2_000
#: Time bins of the overview, at most.
OVERVIEW_COLUMNS = 800
#: Rows of the overview, at most (one per host up to this many hosts).
OVERVIEW_ROWS = 400
#: Fields of the detail view's ``customdata``, one row per rectangle (job id first; times in s).
GANTT_CUSTOMDATA: tuple[str, ...] = ("job_id", "user", "submission_time", "waiting_time", "execution_time",
                                     "final_state", "allocated_resources", "when", "durations")
_DETAIL_HOVER = ("<b>job %{customdata[0]}</b><br>user %{customdata[1]}<br>%{customdata[7]}<br>%{customdata[8]}<br>"
                 "%{customdata[5]}<br>hosts %{customdata[6]}<extra></extra>")
_TRANSPARENT = [[0.0, "rgba(0, 0, 0, 0)"], [1.0, "rgba(0, 0, 0, 0)"]]


@dataclass(frozen=True)
class GanttWindow:
    """A view of the Gantt chart: simulated time ``[start, end]`` (s) and hosts ``[low, high]`` (node ids; a host
    ``h`` covers ``[h, h + 1)``)."""

    start: float
    end: float
    low: float
    high: float


@dataclass(frozen=True)
class Colouring:
    """One way of colouring the jobs: the groups' legend names and colours (legend order), each rectangle's group
    (index into them) and each group's number of jobs."""

    names: tuple[str, ...]
    colours: tuple[str, ...]
    group: np.ndarray
    jobs: tuple[int, ...]


@dataclass(frozen=True)
class GanttData:
    """A run's Gantt chart, prepared once (:func:`gantt_data`).

    Attributes:
        name: the run's name.
        left, right: each rectangle's start and finish (s), float64 arrays of shape (n,).
        bottom, top: each rectangle's first host and last host + 1, float64 arrays of shape (n,).
        job: each rectangle's job, an index into ``facts`` (int64, shape (n,)).
        facts: one row per job drawn (index: full job id ``workload!id``): ``job_id``, ``user``,
            ``submission_time``, ``waiting_time``, ``execution_time`` (s), ``final_state``, ``allocated_resources``,
            ``starting_time``, ``finish_time`` (s).
        colourings: ``"state"`` and, when the run has a job side table, ``"user"`` (:class:`Colouring`).
        nb_hosts: the y axis' extent (the platform's hosts, else the highest host used + 1).
        span: the run's first submission and last finish (s).
        divisor, unit: the time axis' unit (:func:`batreplay.analysis.plots.time_unit` of the span).
        not_drawn: jobs that never started or have no allocated host.
        shared: with compute sharing (``run.shared_hosts``), each host's busy periods, merged over the jobs it
            ran at once (:func:`batreplay.formats.out_schedule.busy_periods`): ``(start, finish, host)`` arrays,
            from which the overview's busy shares come (a host busy with two jobs is busy once); None without.
    """

    name: str
    left: np.ndarray
    right: np.ndarray
    bottom: np.ndarray
    top: np.ndarray
    job: np.ndarray
    facts: pd.DataFrame
    colourings: dict[str, Colouring]
    nb_hosts: int
    span: tuple[float, float]
    divisor: float
    unit: str
    not_drawn: int
    shared: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def whole(self) -> GanttWindow:
        """The window holding the whole run and every host."""
        low, high = self.span
        return GanttWindow(low, max(high, low + 1.0), 0.0, float(max(self.nb_hosts, 1)))


def _users(run: RunData) -> np.ndarray | None:
    """User id (text) of every job of ``run.jobs``, in its row order, or None without a job side table."""
    if run.job_table is None:
        return None
    merged = attach_job_table(run.jobs, run.job_table, columns=["user_id"], table_name="jobs.csv")
    return merged["user_id"].astype(str).to_numpy()


def _colouring(labels: np.ndarray, job_of: np.ndarray, by_user: bool) -> Colouring:
    """The colour groups of rectangles whose job's user id or final state is ``labels`` (``job_of``: their job).

    By state: one group per final state (:data:`STATE_COLOURS`' order, other states after them, grey). By user: the
    :data:`MAX_USER_GROUPS` users with the most jobs (ties by user id), then the others in one grey group."""
    if not by_user:
        present = set(labels.tolist())
        names = [s for s in STATE_COLOURS if s in present] + sorted(present.difference(STATE_COLOURS))
        colours = [STATE_COLOURS.get(state, OTHER_COLOUR) for state in names]
        legend = names
    else:
        counts = pd.Series(job_of).groupby(labels).nunique()
        ranked = sorted(counts.items(), key=lambda item: (-item[1], user_sort_key(item[0])))
        names = [user for user, _ in ranked[:MAX_USER_GROUPS]]
        colours = [USER_COLOURS[i % len(USER_COLOURS)] for i in range(len(names))]
        legend = [f"user {user}" for user in names]
        if len(ranked) > len(names):
            legend.append(f"{OTHER_USERS} ({len(ranked) - len(names)} users)")
            colours.append(OTHER_COLOUR)
    group = pd.Index(names).get_indexer(labels).astype(np.int64)
    group[group < 0] = len(names)  # (the other users)
    per_group = pd.Series(job_of).groupby(group).nunique()
    jobs = tuple(int(per_group.get(g, 0)) for g in range(len(legend)))
    return Colouring(tuple(legend), tuple(colours), group, jobs)


def _facts(run: RunData, drawable: np.ndarray, users: np.ndarray | None) -> pd.DataFrame:
    """One row per drawable job, index the full job id: its user, submission, waiting and run time (s), final
    state, hosts, start and finish (s)."""
    jobs = run.jobs[drawable]
    times = job_metrics(jobs)
    return pd.DataFrame({
        "job_id": jobs[FULL_ID].to_numpy(), "user": users[drawable] if users is not None else "unknown",
        "submission_time": jobs["submission_time"].to_numpy(dtype="float64"),
        "waiting_time": times["waiting_time"].to_numpy(), "execution_time": times["execution_time"].to_numpy(),
        "final_state": jobs["final_state"].to_numpy(),
        "allocated_resources": jobs["allocated_resources"].astype(str).str.strip().to_numpy(),
        "starting_time": jobs["starting_time"].to_numpy(dtype="float64"),
        "finish_time": jobs["finish_time"].to_numpy(dtype="float64"),
    }, index=jobs[FULL_ID].to_numpy())


def _hover_rows(facts: pd.DataFrame, divisor: float, unit: str) -> np.ndarray:
    """The detail view's ``customdata`` of the jobs ``facts`` (rows of :attr:`GanttData.facts`): the fields of
    :data:`GANTT_CUSTOMDATA`, ``when`` giving the instants in the axis' unit and ``durations`` the times readable."""
    when = [f"submitted {s / divisor:,.3f}, ran {b / divisor:,.3f} to {e / divisor:,.3f} ({unit})" for s, b, e in
            zip(facts["submission_time"], facts["starting_time"], facts["finish_time"])]
    durations = [f"waited {readable_duration(w)}, ran {readable_duration(r)}"
                 for w, r in zip(facts["waiting_time"], facts["execution_time"])]
    return np.column_stack([facts[list(GANTT_CUSTOMDATA[:-2])].to_numpy(dtype=object),
                            np.array(when, dtype=object), np.array(durations, dtype=object)])


def gantt_data(run: RunData) -> GanttData:
    """Prepare the Gantt chart of ``run``: every started job's rectangles (from
    :func:`batreplay.analysis.plots.gantt_rectangles` over a window holding the whole run: nothing clipped), their
    facts and colour groups. Jobs that never started (rejected) or have no allocated host are counted, not drawn.

    Raises:
        ValueError: the jobs table has no ``allocated_resources`` column, or a value of it is not an interval set
            (job named).
    """
    jobs = run.jobs
    if "allocated_resources" not in jobs.columns:
        raise ValueError(f"run {run.name}: out_jobs.csv has no 'allocated_resources' column, a Gantt chart needs it")
    users = _users(run)
    allocated = jobs["allocated_resources"].astype(str).str.strip().to_numpy()
    drawable = jobs["starting_time"].notna().to_numpy() & (allocated != "")
    span = run_span(run)
    divisor, unit = time_unit(span[1] - span[0])
    facts = _facts(run, drawable, users)
    drawn = jobs[drawable]
    if len(drawn):
        first, last = float(drawn["starting_time"].min()), float(drawn["finish_time"].max())
        rectangles = gantt_rectangles(drawn, TimeWindow(first, max(last, first + 1.0)))
    else:
        rectangles = pd.DataFrame({FULL_ID: [], "left": [], "width": [], "bottom": [], "height": []})
    job = facts.index.get_indexer(rectangles[FULL_ID].to_numpy()).astype(np.int64)
    left = rectangles["left"].to_numpy(dtype="float64")
    bottom = rectangles["bottom"].to_numpy(dtype="float64")
    colourings = {"state": _colouring(facts["final_state"].to_numpy().astype(str)[job], job, by_user=False)}
    if users is not None:
        colourings["user"] = _colouring(facts["user"].to_numpy().astype(str)[job], job, by_user=True)
    top = bottom + rectangles["height"].to_numpy(dtype="float64")
    shared = None
    if run.shared_hosts:
        host, began, ended = busy_periods(drawn)
        shared = (np.asarray(began, dtype="float64"), np.asarray(ended, dtype="float64"),
                  np.asarray(host, dtype="float64"))
    return GanttData(name=run.name, left=left, right=left + rectangles["width"].to_numpy(dtype="float64"),
                     bottom=bottom, top=top, job=job, facts=facts, colourings=colourings,
                     nb_hosts=int(run.nb_resources or (top.max() if top.size else 1)), span=span,
                     divisor=divisor, unit=unit, not_drawn=int((~drawable).sum()), shared=shared)


def _overlaps(low: np.ndarray, high: np.ndarray, edges: np.ndarray) -> sparse.csr_matrix:
    """Length of each interval ``[low[i], high[i])`` inside each bin ``[edges[j], edges[j + 1])``: a sparse matrix
    of shape (intervals, bins); parts outside the edges are left out."""
    bins = edges.size - 1
    first = np.clip(np.searchsorted(edges, low, side="right") - 1, 0, bins - 1)
    last = np.clip(np.searchsorted(edges, high, side="left") - 1, 0, bins - 1)
    counts = np.maximum(last - first + 1, 0)
    rows = np.repeat(np.arange(low.size), counts)
    columns = first[rows] + np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
    lengths = np.minimum(high[rows], edges[columns + 1]) - np.maximum(low[rows], edges[columns])
    return sparse.csr_matrix((np.maximum(lengths, 0.0), (rows, columns)), shape=(low.size, bins))


def occupancy(left: np.ndarray, right: np.ndarray, bottom: np.ndarray, top: np.ndarray, group: np.ndarray,
              groups: int, time_edges: np.ndarray, host_edges: np.ndarray) -> np.ndarray:
    """Node time (node-seconds) of each colour group in each cell of a grid of hosts x time.

    Args:
        left, right: rectangles' start and finish (s), shape (n,).
        bottom, top: rectangles' first host and last host + 1, shape (n,).
        group: each rectangle's group, in ``[0, groups)``, shape (n,).
        time_edges, host_edges: increasing bin edges (s; hosts), shapes (C + 1,) and (R + 1,).

    Returns:
        float64 array of shape (groups, R, C): the sum over the group's rectangles of (hosts of the rectangle in
        the row) x (its time in the bin); parts outside the grid are left out.
    """
    rows, columns = host_edges.size - 1, time_edges.size - 1
    hosts = _overlaps(bottom, top, host_edges).tocoo()
    stacked = sparse.csr_matrix((hosts.data, (hosts.row, group[hosts.row] * rows + hosts.col)),
                                shape=(left.size, groups * rows))
    busy = (stacked.T @ _overlaps(left, right, time_edges)).toarray()
    return busy.reshape(groups, rows, columns)


def _host_edges(window: GanttWindow, nb_hosts: int) -> tuple[np.ndarray, np.ndarray]:
    """Row edges of the overview and each row's hosts: the whole hosts of the window, merged into at most
    :data:`OVERVIEW_ROWS` rows of equal height (the last may reach past the last host: it holds fewer hosts)."""
    low = float(np.clip(np.floor(window.low), 0, max(nb_hosts - 1, 0)))
    high = float(np.clip(np.ceil(window.high), low + 1, max(nb_hosts, low + 1)))
    per_row = int(np.ceil((high - low) / OVERVIEW_ROWS))
    rows = int(np.ceil((high - low) / per_row))
    edges = low + per_row * np.arange(rows + 1, dtype="float64")
    return edges, np.diff(np.minimum(edges, max(nb_hosts, high)))


def _png(rgba: np.ndarray) -> str:
    """An RGBA array (rows, columns, 4; uint8; row 0 drawn at the image's top) as a PNG data URI."""
    from matplotlib.image import imsave

    buffer = io.BytesIO()
    imsave(buffer, rgba, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _overview(data: GanttData, colouring: Colouring, window: GanttWindow, inside: np.ndarray
              ) -> tuple[list[Any], dict[str, Any], int]:
    """The overview: its traces (the transparent heatmap of busy shares, percent, that carries the hover; one
    legend entry per colour group), the occupancy raster (a layout image, PNG, stretched over the grid) and the
    number of cells whose jobs hold more node time than the cell has (hosts given to two jobs at once without
    compute sharing: an anomaly of the run, drawn as fully busy and counted)."""
    time_edges = np.linspace(window.start, window.end, OVERVIEW_COLUMNS + 1)
    host_edges, hosts = _host_edges(window, data.nb_hosts)
    busy = occupancy(data.left[inside], data.right[inside], data.bottom[inside], data.top[inside],
                     colouring.group[inside], len(colouring.names), time_edges, host_edges)
    capacity = hosts[:, None] * np.diff(time_edges)[None, :]
    if data.shared is None:
        share = busy.sum(axis=0) / capacity
    else:  # (compute sharing: a host running two jobs at once is busy once)
        began, ended, host = data.shared
        share = occupancy(began, ended, host, host + 1, np.zeros(host.size, dtype=np.int64), 1, time_edges,
                          host_edges)[0] / capacity
    overbooked = int((share > 1 + 1e-9).sum())
    share = np.minimum(share, 1.0)
    palette = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in colouring.colours], dtype=np.uint8)
    rgba = np.zeros((*share.shape, 4), dtype=np.uint8)
    rgba[..., :3] = palette[busy.argmax(axis=0)]
    rgba[..., 3] = np.round(share * 255).astype(np.uint8)
    divisor = data.divisor
    image = {"source": _png(rgba[::-1]), "xref": "x", "yref": "y", "x": time_edges[0] / divisor,
             "y": host_edges[-1], "sizex": (time_edges[-1] - time_edges[0]) / divisor,
             "sizey": host_edges[-1] - host_edges[0], "xanchor": "left", "yanchor": "top", "sizing": "stretch",
             "layer": "below", "name": "occupancy"}
    hover = go.Heatmap(x=time_edges / divisor, y=host_edges, z=np.round(share * 100).astype(np.uint8),
                       colorscale=_TRANSPARENT, showscale=False, meta={"role": "busy share"},
                       hovertemplate=f"%{{x:,.3f}} {data.unit}, host %{{y:.0f}}: %{{z}} % busy<extra></extra>")
    legend = [go.Scatter(x=[None], y=[None], mode="markers", marker={"color": colour, "symbol": "square"},
                         name=f"{name}: {jobs} job{'s' if jobs != 1 else ''}", meta={"role": "legend"})
              for name, colour, jobs in zip(colouring.names, colouring.colours, colouring.jobs)]
    return [hover, *legend], image, overbooked


def _outlines(left: np.ndarray, right: np.ndarray, bottom: np.ndarray, top: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """x and y (float64) of closed rectangles drawn as one line: each a 5-point loop followed by a NaN, a gap that
    Plotly draws as it draws None (kept as numbers, the arrays go to the browser as binary, not as JSON lists)."""
    gap = np.full_like(left, np.nan, dtype="float64")
    xs = np.stack([left, right, right, left, left, gap], axis=1).ravel()
    ys = np.stack([bottom, bottom, top, top, bottom, gap], axis=1).ravel()
    return xs, ys


def _detail(data: GanttData, colouring: Colouring, inside: np.ndarray) -> list[Any]:
    """The detail view's traces: per colour group, its rectangles in the window (filled polygons) then invisible
    markers at their centres, in the same order, carrying the hover (``customdata``: :data:`GANTT_CUSTOMDATA`)."""
    shown = np.unique(data.job[inside])  # (the hover text of the jobs in view only)
    customdata = np.empty((len(data.facts), len(GANTT_CUSTOMDATA)), dtype=object)
    customdata[shown] = _hover_rows(data.facts.iloc[shown], data.divisor, data.unit)
    traces = []
    for g, (name, colour, jobs) in enumerate(zip(colouring.names, colouring.colours, colouring.jobs)):
        mask = inside & (colouring.group == g)
        left, right = data.left[mask] / data.divisor, data.right[mask] / data.divisor
        bottom, top = data.bottom[mask], data.top[mask]
        xs, ys = _outlines(left, right, bottom, top)
        legend = f"{name}: {jobs} job{'s' if jobs != 1 else ''}"
        traces.append(go.Scattergl(x=xs, y=ys, mode="lines", fill="toself", fillcolor=colour,
                                   line={"color": "rgba(0, 0, 0, 0.3)", "width": 0.5}, name=legend,
                                   legendgroup=name, hoverinfo="skip", meta={"role": "rectangles"}))
        traces.append(go.Scattergl(x=(left + right) / 2, y=(bottom + top) / 2, mode="markers",
                                   marker={"color": colour, "size": 6, "opacity": 0},
                                   customdata=customdata[data.job[mask]], hovertemplate=_DETAIL_HOVER, name=legend,
                                   legendgroup=name, showlegend=False, meta={"role": "hover"}))
    return traces


def gantt_figure(data: GanttData, *, color_by: str = "user", window: GanttWindow | None = None) -> go.Figure:
    """The Gantt chart of a prepared run (:func:`gantt_data`) seen through ``window`` (None: the whole run).

    x = simulated time in the run's unit, y = host (node id; a rectangle covers ``[first host, last host + 1)``);
    the axes' ranges are the window's. The detail view when at most :data:`DETAIL_JOBS` jobs have a rectangle in the
    window, else the overview (module docstring). Drag zooms (``dragmode="zoom"``).

    ``figure.layout.meta``: ``jobs`` (jobs drawn in the whole run), ``not_drawn``, ``color_by`` (the colouring used),
    ``view`` (``"detail"`` or ``"overview"``), ``jobs_in_view``, ``window`` (``[start, end, low, high]``, s and
    hosts), ``time_unit``, ``seconds_per_unit``, ``detail_jobs`` (:data:`DETAIL_JOBS`), ``overbooked_cells`` (the
    overview's cells whose jobs hold more node time than the cell has, without compute sharing). The title gives
    the counts and says how to reach the detail.

    Args:
        color_by: ``"user"`` (falls back to ``"state"`` when the run has no job side table) or ``"state"``.

    Raises:
        ValueError: ``color_by`` is not one of :data:`COLOR_BY`.
    """
    if color_by not in COLOR_BY:
        raise ValueError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    color_by = color_by if color_by in data.colourings else "state"
    colouring = data.colourings[color_by]
    window = window or data.whole()
    inside = ((data.left <= window.end) & (data.right >= window.start)
              & (data.bottom < window.high) & (data.top > window.low))
    in_view = int(np.unique(data.job[inside]).size)
    detail = in_view <= DETAIL_JOBS
    overbooked = 0
    if detail:
        figure = go.Figure(_detail(data, colouring, inside))
    else:
        traces, image, overbooked = _overview(data, colouring, window, inside)
        figure = go.Figure(traces, layout={"images": [image]})
    nb = len(data.facts)
    title = f"Gantt chart of {data.name}: {nb} job{'s' if nb != 1 else ''}"
    if data.not_drawn:
        title += f" ({data.not_drawn} not drawn: never started)"
    title += f", coloured by {color_by}"
    if not detail:
        title += (f"<br><sub>overview of the {in_view:,} jobs in view: the colour of the group with the most node "
                  f"time in each cell, as opaque as the cell is busy; zoom in to {DETAIL_JOBS:,} jobs or fewer to "
                  "see each job</sub>")
        if overbooked:
            title += (f"<br><sub>{overbooked:,} cell{'s hold' if overbooked != 1 else ' holds'} more node time "
                      "than it has: hosts given to two jobs at once</sub>")
    divisor = data.divisor
    figure.update_layout(
        title={"text": title}, dragmode="zoom", hovermode="closest", legend={"title": {"text": color_by}},
        meta={"jobs": nb, "not_drawn": data.not_drawn, "color_by": color_by, "view": "detail" if detail else
              "overview", "jobs_in_view": in_view, "window": [window.start, window.end, window.low, window.high],
              "time_unit": data.unit, "seconds_per_unit": divisor, "detail_jobs": DETAIL_JOBS,
              "overbooked_cells": overbooked},
        xaxis={"title": {"text": f"simulated time ({data.unit})"}, "range": [window.start / divisor,
                                                                             window.end / divisor]},
        yaxis={"title": {"text": "host (node id)"}, "range": [window.low, window.high]},
    )
    return figure


def is_window(value: Any) -> bool:
    """Whether ``value`` (a browser's stored view: ``[start, end, low, high]``) can be a :class:`GanttWindow`: four
    finite numbers, in order."""
    if not isinstance(value, list) or len(value) != 4:
        return False
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in value):
        return False
    return value[0] < value[1] and value[2] < value[3]


def window_after(relayout: Any, current: GanttWindow, data: GanttData) -> GanttWindow | None:
    """The window a browser's zoom, pan or reset (Plotly's ``relayoutData``: axis ranges in the axis' unit) leads
    to from ``current``, or None when the event changes no axis range (a resize, a legend click).

    An axis reset (autorange, double click) goes back to the whole run on that axis; an axis the event leaves
    alone keeps its range. Values that are not finite numbers are ignored."""
    if not isinstance(relayout, dict):
        return None
    whole = data.whole()
    x, y = relayout_range(relayout, "xaxis"), relayout_range(relayout, "yaxis")
    if x is None and y is None:
        return None
    start, end = ((whole.start, whole.end) if x is True else (current.start, current.end) if x is None
                  else (x[0] * data.divisor, x[1] * data.divisor))
    low, high = (whole.low, whole.high) if y is True else (current.low, current.high) if y is None else y
    return GanttWindow(start, end, low, high)
