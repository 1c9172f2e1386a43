"""The views of the run page that scale with the log (issue 30): the Gantt chart's overview raster and its switch
to the detail of each job, the browser's zooms turned into windows, the step series reduced to the view, and the
memory that keeps a prepared run between requests.

The raster is checked against node time summed rectangle by rectangle (hypothesis) and against a run's
``out_jobs.csv`` read here with procset; the series reduction against the property that defines M4 (each bin's
first, last, lowest and highest point kept).
"""

from __future__ import annotations

import base64
import io
import json
import os
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.image import imread
from procset import ProcSet

from batreplay.analysis.run_dir import load_run
from batreplay.ui import gantt
from batreplay.ui.figures import UtilisationSteps, utilisation_figure
from batreplay.ui.run_cache import RunCache
from batreplay.ui.series import relayout_range, step_in_view
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def kth_run(tmp_path_factory) -> Path:
    """The first 600 KTH-SP2 jobs with EASY on the KTH-SP2 platform (100 nodes)."""
    if not KTH.is_file():
        pytest.skip(f"shared workload not found at {KTH}")
    from batreplay.run.runner import run
    from batreplay.run.spec import RunSpec

    out = tmp_path_factory.mktemp("gantt") / "easy"
    run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=600, out_dir=out))
    return out


@pytest.fixture(scope="module")
def prepared(kth_run) -> gantt.GanttData:
    return gantt.gantt_data(load_run(kth_run))


# -- the raster ------------------------------------------------------------------------------------------------

rectangles = st.lists(st.tuples(st.floats(-50, 150), st.floats(0, 80), st.integers(-3, 12), st.integers(1, 6),
                                st.integers(0, 2)), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(rectangles, st.integers(1, 9), st.integers(1, 4))
def test_occupancy_holds_each_rectangles_node_time_inside_the_grid(boxes, columns, per_row):
    """Whatever the rectangles and grid (rows of one host or several): each group's node time over the grid is the
    sum of its rectangles' hosts in [0, 10) times their time in [0, 100], and so is each cell's, rectangle by
    rectangle."""
    left = np.array([b[0] for b in boxes])
    right = left + np.array([b[1] for b in boxes])
    bottom = np.array([b[2] for b in boxes], dtype="float64")
    top = bottom + np.array([b[3] for b in boxes])
    group = np.array([b[4] for b in boxes])
    time_edges = np.linspace(0.0, 100.0, columns + 1)
    host_edges = np.append(np.arange(0.0, 10.0, per_row), 10.0)
    busy = gantt.occupancy(left, right, bottom, top, group, 3, time_edges, host_edges)
    assert busy.shape == (3, host_edges.size - 1, columns) and (busy >= 0).all()
    inside = (np.clip(right, 0, 100) - np.clip(left, 0, 100)) * (np.clip(top, 0, 10) - np.clip(bottom, 0, 10))
    for g in range(3):
        assert busy[g].sum() == pytest.approx(inside[group == g].sum(), abs=1e-6)
    for g, row, column in np.ndindex(*busy.shape):  # each cell, rectangle by rectangle
        hosts = np.clip(np.minimum(top, host_edges[row + 1]) - np.maximum(bottom, host_edges[row]), 0, None)
        times = np.clip(np.minimum(right, time_edges[column + 1]) - np.maximum(left, time_edges[column]), 0, None)
        assert busy[g, row, column] == pytest.approx((hosts * times)[group == g].sum(), abs=1e-6)


def test_occupancy_of_a_case_known_by_hand():
    """Hosts 0-1 busy over [5, 15), host 2 over [0, 20); two bins of 10 s, one row per host."""
    busy = gantt.occupancy(np.array([5.0, 0.0]), np.array([15.0, 20.0]), np.array([0.0, 2.0]),
                           np.array([2.0, 3.0]), np.array([0, 1]), 2, np.array([0.0, 10.0, 20.0]),
                           np.array([0.0, 1.0, 2.0, 3.0]))
    assert busy[0].tolist() == [[5, 5], [5, 5], [0, 0]]
    assert busy[1].tolist() == [[0, 0], [0, 0], [10, 10]]


def decoded(figure) -> np.ndarray:
    """The overview's raster as RGBA bytes, rows from the top host row down."""
    source = figure.layout.images[0].source
    data = base64.b64decode(source.removeprefix("data:image/png;base64,"))
    return np.round(imread(io.BytesIO(data), format="png") * 255).astype(int)


def test_the_overview_paints_each_cells_busy_share_from_out_jobs(kth_run, prepared, monkeypatch):
    """Forced to the overview (detail limit 50 jobs): the hover heatmap's share of each cell (percent) and the
    image's opacity are the node time of out_jobs.csv's jobs in the cell over the cell's node time."""
    monkeypatch.setattr(gantt, "DETAIL_JOBS", 50)
    monkeypatch.setattr(gantt, "OVERVIEW_COLUMNS", 40)
    figure = gantt.gantt_figure(prepared, color_by="state")
    assert figure.layout.meta["view"] == "overview" and "overview of the 600 jobs" in figure.layout.title.text
    start, end, low, high = figure.layout.meta["window"]
    edges = np.linspace(start, end, 41)
    jobs = pd.read_csv(kth_run / "out_jobs.csv", dtype={"allocated_resources": str})
    expected = np.zeros((100, 40))
    for job in jobs.itertuples():
        overlap = np.clip(np.minimum(job.finish_time, edges[1:]) - np.maximum(job.starting_time, edges[:-1]), 0, None)
        for host in ProcSet.from_str(job.allocated_resources):
            expected[host] += overlap
    share = expected / np.diff(edges)[None, :]
    heatmap = next(trace for trace in figure.data if trace.meta["role"] == "busy share")
    assert (low, high) == (0, 100) and np.asarray(heatmap.z).shape == (100, 40)
    assert np.abs(np.asarray(heatmap.z, dtype=float) - np.round(share * 100)).max() <= 1
    image = decoded(figure)
    assert image.shape == (100, 40, 4)
    assert np.abs(image[::-1, :, 3] - np.round(share * 255)).max() <= 1  # (top row of the image: the last host)
    legend = [trace.name for trace in figure.data if trace.meta["role"] == "legend"]
    assert [name.split(":")[0] for name in legend] == list(prepared.colourings["state"].names)


def test_a_window_of_few_jobs_shows_each_of_them(kth_run, prepared):
    """A window holding fewer than DETAIL_JOBS jobs is drawn job by job: the jobs in view are those of out_jobs.csv
    that ran on one of its hosts during it, each drawn with every rectangle of it in the window."""
    jobs = pd.read_csv(kth_run / "out_jobs.csv", dtype={"allocated_resources": str})
    start = float(jobs["starting_time"].quantile(0.5))
    window = gantt.GanttWindow(start, start + 6 * 3600.0, 20.0, 60.0)
    figure = gantt.gantt_figure(prepared, window=window)
    seen = set()
    for job in jobs.itertuples():
        hosts = ProcSet.from_str(job.allocated_resources)
        if job.starting_time <= window.end and job.finish_time >= window.start and any(20 <= h < 60 for h in hosts):
            seen.add(f"{job.workload_name}!{job.job_id}")
    drawn = {row[0] for trace in figure.data if trace.meta["role"] == "hover" for row in trace.customdata}
    assert figure.layout.meta["view"] == "detail" and drawn == seen
    assert figure.layout.meta["jobs_in_view"] == len(seen) > 0
    assert list(figure.layout.xaxis.range) == [window.start / prepared.divisor, window.end / prepared.divisor]
    assert list(figure.layout.yaxis.range) == [20.0, 60.0]


def synthetic(left, right, bottom, top, nb_hosts: int, shared=None) -> gantt.GanttData:
    """A prepared run of rectangles given by hand (s, hosts), one job each, every job completed."""
    n = len(left)
    facts = pd.DataFrame({"job_id": [f"w0!{i}" for i in range(n)]}, index=[f"w0!{i}" for i in range(n)])
    state = gantt.Colouring(("COMPLETED_SUCCESSFULLY",), ("#2ca02c",), np.zeros(n, dtype=np.int64), (n,))
    return gantt.GanttData(name="synthetic", left=np.array(left, dtype=float), right=np.array(right, dtype=float),
                           bottom=np.array(bottom, dtype=float), top=np.array(top, dtype=float),
                           job=np.arange(n), facts=facts, colourings={"state": state}, nb_hosts=nb_hosts,
                           span=(0.0, float(max(right))), divisor=1.0, unit="s", not_drawn=0, shared=shared)


def test_more_hosts_than_rows_merge_into_equal_rows(monkeypatch):
    """1,000 hosts, the first 500 busy all along: 334 rows of 3 hosts (the last holds host 999 alone), each row's
    share the busy hosts of its 3; the image has a pixel row per row and the hover heatmap the rows' edges."""
    monkeypatch.setattr(gantt, "DETAIL_JOBS", 0)
    monkeypatch.setattr(gantt, "OVERVIEW_COLUMNS", 4)
    data = synthetic([0.0], [100.0], [0.0], [500.0], nb_hosts=1000)
    figure = gantt.gantt_figure(data, color_by="state")
    heatmap = next(trace for trace in figure.data if trace.meta["role"] == "busy share")
    assert list(heatmap.y) == [3.0 * row for row in range(335)]
    share = np.asarray(heatmap.z, dtype=float)[:, 0]
    assert (share[:166] == 100).all() and share[166] == 67 and (share[167:] == 0).all()
    assert decoded(figure).shape == (334, 4, 4)
    assert figure.layout.images[0].sizey == 1002 and figure.layout.images[0].y == 1002


def test_with_compute_sharing_a_host_running_two_jobs_is_busy_once(monkeypatch):
    """Two jobs on host 0 over [0, 5) of a 10 s bin: with compute sharing (the host's merged busy periods) the cell
    is 50 % busy; without, two jobs on one host is an anomaly, counted (the cell drawn full)."""
    monkeypatch.setattr(gantt, "DETAIL_JOBS", 0)
    monkeypatch.setattr(gantt, "OVERVIEW_COLUMNS", 1)
    shared = (np.array([0.0]), np.array([5.0]), np.array([0.0]))
    for merged, busy, overbooked in ((shared, 50, 0), (None, 100, 0)):
        data = synthetic([0.0, 0.0, 5.0], [5.0, 5.0, 10.0], [0.0, 0.0, 1.0], [1.0, 1.0, 2.0], nb_hosts=2,
                         shared=merged)
        figure = gantt.gantt_figure(data, color_by="state", window=gantt.GanttWindow(0.0, 10.0, 0.0, 1.0))
        heatmap = next(trace for trace in figure.data if trace.meta["role"] == "busy share")
        assert np.asarray(heatmap.z).tolist() == [[busy]]
        assert figure.layout.meta["overbooked_cells"] == overbooked
    data = synthetic([0.0, 0.0], [10.0, 10.0], [0.0, 0.0], [1.0, 1.0], nb_hosts=1)  # the whole bin, twice
    figure = gantt.gantt_figure(data, color_by="state")
    assert figure.layout.meta["overbooked_cells"] == 1 and "1 cell holds more node time" in figure.layout.title.text


# -- zooms, resets ---------------------------------------------------------------------------------------------


def test_a_zoom_pan_or_reset_gives_the_next_window(prepared):
    whole = prepared.whole()
    current = gantt.GanttWindow(1000.0, 5000.0, 10.0, 20.0)
    unit = prepared.divisor
    zoomed = gantt.window_after({"xaxis.range[0]": 2000 / unit, "xaxis.range[1]": 3000 / unit}, current, prepared)
    assert zoomed == gantt.GanttWindow(2000.0, 3000.0, 10.0, 20.0)  # a zoom in time keeps the hosts
    assert gantt.window_after({"yaxis.range": [40, 30]}, current, prepared) == gantt.GanttWindow(1000, 5000, 30, 40)
    assert gantt.window_after({"xaxis.autorange": True, "yaxis.autorange": True}, current, prepared) == whole
    assert gantt.window_after({"autosize": True}, current, prepared) is None
    assert gantt.window_after({"xaxis.range[0]": "x", "xaxis.range[1]": float("nan")}, current, prepared) is None
    assert gantt.window_after(None, current, prepared) is None
    assert relayout_range({"xaxis2.range[0]": 1, "xaxis2.range[1]": 2}, "xaxis2") == (1.0, 2.0)
    assert gantt.is_window([0, 1, 0, 1]) and not gantt.is_window([1, 0, 0, 1])
    assert not gantt.is_window([0, 1, 0, float("inf")]) and not gantt.is_window("0 1 0 1")


# -- series reduced to the view --------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=3000), st.integers(2, 40))
def test_a_series_reduced_to_the_view_keeps_each_bins_extremes(values, budget):
    times = np.arange(len(values), dtype="float64") * 7.0
    steps = np.array(values, dtype="float64")
    x, y, reduced = step_in_view(times, steps, points=4 * budget)
    assert reduced == (len(values) > 4 * budget)
    assert x.size <= max(4 * budget, len(values) if not reduced else 0) + 2
    assert (np.diff(x) > 0).all() and x[0] == times[0] and x[-1] == times[-1]
    assert set(zip(x.tolist(), y.tolist())) <= set(zip(times.tolist(), steps.tolist()))  # points of the series
    assert y.max() == steps.max() and y.min() == steps.min()


def test_a_series_in_a_window_starts_with_the_step_in_effect():
    times, values = np.array([0.0, 10.0, 20.0, 30.0]), np.array([1.0, 2.0, 3.0, 4.0])
    x, y, reduced = step_in_view(times, values, 15.0, 25.0)
    assert x.tolist() == [10.0, 20.0, 30.0] and y.tolist() == [2.0, 3.0, 4.0] and not reduced
    with pytest.raises(ValueError, match="increasing"):
        step_in_view(np.array([0.0, 0.0]), np.array([1.0, 2.0]))


def test_the_utilisation_of_a_long_series_is_sent_reduced_to_its_window():
    times = np.arange(200_000, dtype="float64")
    busy = (np.sin(times / 50.0) + 1) / 2
    steps = UtilisationSteps("long", times, busy, times, np.round(busy * 10), True, (0.0, 199_999.0), 3600.0, "h")
    whole = utilisation_figure(steps)
    assert all(len(trace.x) <= 4_002 for trace in whole.data)
    zoomed = utilisation_figure(steps, (36_000.0, 72_000.0))
    assert list(zoomed.layout.xaxis.range) == [10.0, 20.0] and zoomed.layout.meta["window"] == [36_000.0, 72_000.0]
    x = np.asarray(zoomed.data[0].x)
    assert x.min() <= 10.0 and x.max() >= 20.0 and len(x) <= 4_002


# -- the memory of prepared runs -------------------------------------------------------------------------------


def test_the_run_cache_builds_once_and_again_when_the_run_changes(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "out_jobs.csv").write_text("a\n")
    (folder / "run.json").write_text(json.dumps({}))
    cache = RunCache(max_entries=2)
    first = cache.get(folder, "x", lambda: object())
    assert cache.get(folder, "x", lambda: object()) is first and cache.builds == 1
    stamp = os.stat(folder / "out_jobs.csv")
    os.utime(folder / "out_jobs.csv", ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 10**9))  # a run replaced
    assert cache.get(folder, "x", lambda: object()) is not first and cache.builds == 2
    for what in ("y", "z"):
        cache.get(folder, what, lambda: object())
    assert cache.builds == 4 and len(cache._entries) == 2  # the oldest dropped
    with pytest.raises(ValueError):
        cache.get(folder, "broken", lambda: (_ for _ in ()).throw(ValueError("no")))
    assert cache.builds == 4


def test_requests_for_an_entry_being_built_wait_for_that_build(tmp_path):
    """Two requests at once (the page preparing a view, its callback drawing it): the second waits for the first's
    build (seen waiting before the build may end) and both get its result, built once."""
    (tmp_path / "out_jobs.csv").write_text("a\n")
    cache = RunCache()
    started, release = threading.Event(), threading.Event()

    def slow_build():
        started.set()
        release.wait(timeout=120)
        return object()

    results = []
    first = threading.Thread(target=lambda: results.append(cache.get(tmp_path, "view", slow_build)))
    first.start()
    assert started.wait(timeout=120)  # (the first request is building)
    second = threading.Thread(target=lambda: results.append(cache.get(tmp_path, "view", slow_build)))
    second.start()
    for _ in range(12_000):  # (until the second request waits: an event, not a duration, ends this loop)
        if cache.waits:
            break
        threading.Event().wait(0.01)
    release.set()
    first.join(timeout=120)
    second.join(timeout=120)
    assert cache.waits == 1 and cache.builds == 1
    assert len(results) == 2 and results[0] is results[1]
