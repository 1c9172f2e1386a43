"""Figures: the data each plot draws, checked against hand-computed cases and Batsim's own golden outputs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from conftest import GOLDEN
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg

from batreplay.analysis import plots
from batreplay.analysis.lateness import job_lateness, lateness_per_user
from batreplay.analysis.metrics import TimeWindow, summarize
from batreplay.formats.out_jobs import validate_out_jobs
from batreplay.analysis.run_dir import RunData, load_run


def jobs_table(rows: list[tuple]) -> pd.DataFrame:
    """Rows (job_id, submission, resources, start, finish, allocated); start None = rejected."""
    records = []
    for job_id, sub, res, start, finish, allocated in rows:
        rejected = start is None
        records.append({
            "job_id": job_id, "workload_name": "w0", "profile": "p", "submission_time": sub,
            "requested_number_of_resources": res, "requested_time": 1000.0, "success": 0 if rejected else 1,
            "final_state": "REJECTED" if rejected else "COMPLETED_SUCCESSFULLY",
            "starting_time": np.nan if rejected else start, "execution_time": np.nan if rejected else finish - start,
            "finish_time": np.nan if rejected else finish, "allocated_resources": "" if rejected else allocated})
    return validate_out_jobs(pd.DataFrame(records))


@pytest.fixture
def small_jobs() -> pd.DataFrame:
    # A: 0->10 on 0-1; B: submitted at 1, starts at 10 on 0-1 and 4; C: backfilled 5->8 on 2; D rejected at 3
    return jobs_table([("A", 0.0, 2, 0.0, 10.0, "0-1"), ("B", 1.0, 3, 10.0, 20.0, "0-1 4"),
                       ("C", 2.0, 1, 5.0, 8.0, "2"), ("D", 3.0, 9, None, None, None)])


def small_run(jobs: pd.DataFrame, name: str = "small", originals: list[float] | None = None,
              users: list[int] | None = None) -> RunData:
    table = None
    if users is not None:
        table = pd.DataFrame({"job_id": jobs["job_id"], "user_id": users})
        if originals is not None:
            table["recorded_submission_time"] = originals
    return RunData(name=name, path=GOLDEN, jobs=jobs, job_table=table, nb_resources=5)


def drawn(figure):
    """The renderer of ``figure`` drawn on an Agg canvas (text and bar extents in pixels)."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def golden_run(case: str) -> RunData:
    if not (GOLDEN / case).is_dir():
        pytest.skip(f"golden run {case} not available")
    return load_run(GOLDEN / case)


# ---------------------------------------------------------------- data behind the figures


def test_queue_length_by_hand(small_jobs):
    steps = plots.queue_length_over_time(small_jobs)
    # t=0: A submitted and started; 1: B waits; 2: C waits; 5: C starts; 10: B starts; D never waits
    assert steps["time"].tolist() == [0.0, 1.0, 2.0, 5.0, 10.0]
    assert steps["queued_jobs"].tolist() == [0, 1, 2, 1, 0]


def test_time_weighted_means_by_hand():
    times, values = np.array([0.0, 10.0]), np.array([2.0, 0.0])
    assert plots.time_weighted_means(times, values, np.array([0.0, 5.0, 10.0, 20.0])).tolist() == [2.0, 2.0, 0.0]
    assert plots.time_weighted_means(times, values, np.array([-10.0, 0.0, 5.0, 15.0])).tolist() == [0.0, 2.0, 1.0]
    # after the last instant the last value holds
    assert plots.time_weighted_means(np.array([0.0]), np.array([3.0]), np.array([1.0, 4.0])).tolist() == [3.0]
    with pytest.raises(ValueError, match="increasing"):
        plots.time_weighted_means(times, values, np.array([5.0, 5.0]))
    with pytest.raises(ValueError, match="shape"):
        plots.time_weighted_means(times, values[:1], np.array([0.0, 1.0]))


def _reference_means(times, values, edges):
    """Independent loop: overlap of each constant piece with each bin."""
    pieces = list(zip(times, list(times[1:]) + [np.inf], values))
    result = []
    for a, b in zip(edges[:-1], edges[1:]):
        total = sum(v * max(0.0, min(b, t1) - max(a, t0)) for t0, t1, v in pieces)
        result.append(total / (b - a))
    return result


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 50)), min_size=1, max_size=20),
       st.lists(st.integers(-20, 150), min_size=2, max_size=12, unique=True))
def test_time_weighted_means_match_a_direct_sum(pieces, edges):
    times = np.array(sorted({t for t, _ in pieces}), dtype=float)
    values = np.array([dict(pieces)[int(t)] for t in times], dtype=float)
    edges = np.array(sorted(edges), dtype=float)
    got = plots.time_weighted_means(times, values, edges)
    assert got == pytest.approx(_reference_means(times, values, edges), abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 30), st.booleans()), min_size=1, max_size=25))
def test_queue_length_is_never_negative_and_ends_empty(specs):
    rows = [(str(i), float(sub), 1, None, None, None) if rejected else
            (str(i), float(sub), 1, float(sub + wait), sub + wait + 1.0, "0")
            for i, (sub, wait, rejected) in enumerate(specs)]
    steps = plots.queue_length_over_time(jobs_table(rows))
    if len(steps):
        assert (steps["queued_jobs"] >= 0).all()
        assert steps["queued_jobs"].iloc[-1] == 0
        assert steps["queued_jobs"].max() <= sum(1 for _, _, r in specs if not r)


def test_gantt_rectangles_by_hand(small_jobs):
    bars = plots.gantt_rectangles(small_jobs, TimeWindow(6.0, 12.0))
    # A clipped to [6, 10]; C to [6, 8]; B [10, 12] on blocks 0-1 and 4; D (rejected) absent
    assert bars[["job_id", "left", "width", "bottom", "height"]].values.tolist() == [
        ["A", 6.0, 4.0, 0, 2], ["C", 6.0, 2.0, 2, 1], ["B", 10.0, 2.0, 0, 2], ["B", 10.0, 2.0, 4, 1]]
    assert plots.gantt_rectangles(small_jobs, TimeWindow(30.0, 40.0)).empty


def test_gantt_rectangles_errors(small_jobs):
    with pytest.raises(ValueError, match="allocated_resources"):
        plots.gantt_rectangles(small_jobs.drop(columns=["allocated_resources"]), TimeWindow(0, 1))
    broken = small_jobs.copy()
    broken.loc[0, "allocated_resources"] = "zero-two"
    with pytest.raises(ValueError, match="job w0!A"):
        plots.gantt_rectangles(broken, TimeWindow(0, 1))


@pytest.mark.parametrize("case", ["delays", "ptask", "kth2000"])
def test_gantt_area_is_batsims_time_computing(case):
    """Over the whole run, the Gantt bars cover exactly the node-seconds Batsim reports as time_computing."""
    run = golden_run(case)
    schedule = pd.read_csv(GOLDEN / case / "out_schedule.csv")
    bars = plots.gantt_rectangles(run.jobs, TimeWindow(0.0, float(run.jobs["finish_time"].max())))
    assert float((bars["width"] * bars["height"]).sum()) == pytest.approx(schedule["time_computing"].iloc[0], rel=1e-9)


# ---------------------------------------------------------------- the figures


def test_plot_gantt_draws_one_bar_per_block_and_labels_few_jobs(small_jobs):
    window = TimeWindow(0.0, 20.0)
    figure = plots.plot_gantt([small_run(small_jobs)], window)
    axis = figure.axes[0]
    expected = plots.gantt_rectangles(small_jobs, window)
    assert len(axis.patches) == len(expected) == 4
    assert sorted(p.get_x() for p in axis.patches) == sorted(expected["left"].tolist())
    assert sorted(t.get_text() for t in axis.texts) == ["A", "B", "B", "C"]
    empty = plots.plot_gantt([small_run(small_jobs)], TimeWindow(100.0, 200.0)).axes[0]
    assert not empty.patches and "no job running" in empty.texts[0].get_text()


def test_gantt_of_two_golden_runs_and_default_window():
    runs = [golden_run("kth2000"), golden_run("delays")]
    window = plots.default_gantt_window(runs)
    assert (window.start, window.end) == (0.0, 86_400.0)
    figure = plots.plot_gantt(runs, window)
    assert len(figure.axes) == 2
    bars = plots.gantt_rectangles(runs[0].jobs, window)
    assert len(figure.axes[0].patches) == len(bars)
    # a few of the many bars are large enough for their job id, and each id is drawn inside its bar
    labelled = figure.axes[0].texts
    assert 0 < len(labelled) < len(bars) / 5
    renderer = drawn(figure)
    patches = {(round(p.get_x() * 3600, 3), p.get_y()): p for p in figure.axes[0].patches}
    for text in labelled:
        bar = bars[bars["job_id"] == text.get_text()]
        assert len(bar) >= 1
        inside = False
        for row in bar.itertuples():
            box = patches[(round(row.left, 3), row.bottom)].get_window_extent(renderer)
            inside |= box.contains(*text.get_window_extent(renderer).p0) and box.contains(
                *text.get_window_extent(renderer).p1)
        assert inside, text.get_text()


def test_default_gantt_window_from_a_start():
    runs = [golden_run("delays")]
    assert plots.default_gantt_window(runs, start=3600.0) == TimeWindow(3600.0, 3600.0 + 86_400.0)


def test_cumulative_jobs_by_hand(small_jobs):
    figure = plots.plot_cumulative_jobs([small_run(small_jobs)])
    top, bottom = figure.axes
    (submitted,), (finished,) = top.get_lines(), bottom.get_lines()
    assert submitted.get_xdata().tolist() == [0.0, 0.0, 1.0, 2.0, 3.0]
    assert submitted.get_ydata().tolist() == [0, 1, 2, 3, 4]
    assert finished.get_xdata().tolist() == [8.0, 8.0, 10.0, 20.0]  # D was rejected, never finishes
    assert finished.get_ydata().tolist() == [0, 1, 2, 3]


def test_cumulative_jobs_on_a_long_run_is_sampled_exactly():
    run = golden_run("kth2000")
    jobs = pd.concat([run.jobs, run.jobs.assign(job_id=run.jobs["job_id"] + "b")], ignore_index=True)
    doubled = RunData(name="doubled", path=run.path, jobs=validate_out_jobs(jobs), nb_resources=100)
    (line,) = plots.plot_cumulative_jobs([doubled]).axes[0].get_lines()
    assert len(line.get_xdata()) == plots.CURVE_BINS + 1
    x_days, y = line.get_xdata(), line.get_ydata()
    submissions = np.sort(jobs["submission_time"].to_numpy())
    for k in (0, 100, 250, plots.CURVE_BINS):
        assert y[k] == np.count_nonzero(submissions <= x_days[k] * 86_400.0 + 1e-6)
    assert y[-1] == 4000


def test_submissions_per_day_with_recorded_times(small_jobs):
    # recorded submissions at 0, 1, 2 and 100000 s: two days; the run submitted all four on day 0
    run = small_run(small_jobs, originals=[0.0, 1.0, 2.0, 100_000.0], users=[1, 1, 2, 2])
    figure = plots.plot_submissions([run])
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert set(lines) == {"recorded (rigid)", "small"}
    assert lines["recorded (rigid)"].get_ydata().tolist() == [3, 1]
    assert lines["recorded (rigid)"].get_linestyle() == "--"
    assert lines["small"].get_ydata().tolist() == [4]


def test_submissions_count_every_golden_job():
    runs = [golden_run("kth2000"), golden_run("dynamic")]
    lines = plots.plot_submissions(runs).axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["kth2000", "dynamic"]
    assert [int(np.sum(line.get_ydata())) for line in lines] == [2000, 11]


def test_user_mean_lateness_points(small_jobs):
    # user 1: jobs A (0 late) and B (1 - 0.5 = 0.5 s late); user 2: C (2 - 2) and D (3 - 1 = 2 s late)
    run = small_run(small_jobs, originals=[0.0, 0.5, 2.0, 1.0], users=[1, 1, 2, 2])
    per_user = lateness_per_user(job_lateness(run.jobs, run.job_table))
    figure = plots.plot_user_mean_lateness({"small": per_user})
    axis = figure.axes[0]
    points = axis.collections[0].get_offsets()
    assert np.asarray(points).tolist() == [[2.0, 0.25], [2.0, 1.0]]
    assert axis.get_xscale() == "log" and axis.get_yscale() == "symlog"
    assert axis.get_ylim() == (-60.0, 3600.0)  # no early user: one minute below 0, at least an hour above
    with pytest.raises(ValueError, match="no run"):
        plots.plot_user_mean_lateness({})


def test_utilisation_and_queue_by_hand(small_jobs):
    figure = plots.plot_utilisation_and_queue([small_run(small_jobs)])
    top, bottom = figure.axes
    (utilisation,), (queue,) = top.get_lines(), bottom.get_lines()
    # busy nodes: 2 on [0,5), 3 on [5,8), 2 on [8,10), 3 on [10,20), 0 after; platform of 5 nodes
    assert utilisation.get_xdata().tolist() == [0.0, 5.0, 8.0, 10.0, 20.0]
    assert utilisation.get_ydata().tolist() == pytest.approx([0.4, 0.6, 0.4, 0.6, 0.0])
    assert queue.get_ydata().tolist() == [0, 1, 2, 1, 0]
    with pytest.raises(ValueError, match="number of resources unknown"):
        plots.plot_utilisation_and_queue([RunData(name="x", path=GOLDEN, jobs=small_jobs)])


def test_binned_utilisation_keeps_the_busy_node_seconds():
    """kth2000 (25 days) has more steps than MAX_CURVE_POINTS: 6-hour means, which still integrate to the busy
    time; the axis label names the bin width and the legend sits outside the axes."""
    run = golden_run("kth2000")
    figure = plots.plot_utilisation_and_queue([run])
    (line,) = figure.axes[0].get_lines()
    metrics = summarize(run.jobs, nb_resources=run.nb_resources)
    width = plots.smoothing_bin(metrics["span_length"])
    assert width == 6 * 3600.0 and figure.axes[0].get_ylabel() == "utilisation (6 h means)"
    assert len(line.get_xdata()) <= plots.SMOOTHING_MAX_BINS
    assert np.diff(line.get_xdata()) == pytest.approx(width / 86_400.0)
    busy = float(np.sum(line.get_ydata())) * width * run.nb_resources
    assert busy == pytest.approx(metrics["busy_node_seconds"], rel=1e-9)
    assert not figure.axes[0].get_legend() and len(figure.legends) == 1


def test_smoothing_bin_and_duration_text():
    assert plots.smoothing_bin(3600.0) == 60.0
    assert plots.smoothing_bin(44 * 86_400.0) == 12 * 3600.0
    assert plots.smoothing_bin(365 * 86_400.0) == 3 * 86_400.0
    assert plots.smoothing_bin(1e12) == plots.SMOOTHING_WIDTHS[-1]
    assert [plots.duration_text(t) for t in (600.0, 21_600.0, 86_400.0, 172_800.0, 90.0)] == [
        "10 min", "6 h", "1 day", "2 days", "90 s"]


def test_time_unit():
    assert plots.time_unit(3600.0) == (1.0, "s")
    assert plots.time_unit(86_400.0) == (3600.0, "h")
    assert plots.time_unit(30 * 86_400.0) == (86_400.0, "days")


def test_save_figure_writes_png_and_reproducible_svg(tmp_path, small_jobs):
    figure = plots.plot_cumulative_jobs([small_run(small_jobs)])
    paths = plots.save_figure(figure, tmp_path / "figs", "cumulative")
    assert paths["png"].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    root = ET.parse(paths["svg"]).getroot()
    assert root.tag.endswith("svg")
    first = paths["svg"].read_bytes()
    again = plots.save_figure(figure, tmp_path / "again", "cumulative")["svg"].read_bytes()
    assert first == again


def test_figures_refuse_no_run():
    for function in (plots.plot_submissions, plots.plot_cumulative_jobs, plots.plot_utilisation_and_queue):
        with pytest.raises(ValueError, match="no run"):
            function([])


@pytest.mark.slow
def test_figures_need_no_display_nor_pyplot(tmp_path):
    """Headless: with an interactive backend asked for and no display, figures are still written."""
    import os
    import subprocess
    import sys

    script = ("import sys\nfrom batreplay.analysis import plots\nfrom batreplay.analysis.run_dir import load_run\n"
              f"run = load_run({str(GOLDEN / 'delays')!r})\n"
              f"plots.save_figure(plots.plot_cumulative_jobs([run]), {str(tmp_path)!r}, 'c')\n"
              "assert 'matplotlib.pyplot' not in sys.modules\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["MPLBACKEND"] = "TkAgg"
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.png").is_file() and (tmp_path / "c.svg").is_file()


def test_lateness_axis_keeps_every_point_inside_and_labels_apart():
    """Users 1e6 s late or early stay inside the axis (a factor 1.5 of room), and no tick crowds 0."""
    (low, high), ticks, labels = plots.lateness_axis(np.array([-1e6, -30.0, 0.0, 1e6]))
    assert low <= -1.5e6 and high >= 1.5e6
    assert ticks == sorted(ticks) and 0.0 in ticks and 60.0 not in ticks and -60.0 not in ticks
    assert labels[ticks.index(3600.0)] == "1 h" and labels[ticks.index(-86_400.0)] == "\u22121 day"
    # tick labels do not overlap once drawn on a real figure
    per_user = pd.DataFrame({"nb_jobs": [1, 10, 100, 1000], "mean_lateness": [-1e6, -30.0, 0.0, 1e6]})
    figure = plots.plot_user_mean_lateness({"r": per_user})
    axis = figure.axes[0]
    renderer = drawn(figure)
    boxes = [t.get_window_extent(renderer) for t in axis.get_yticklabels() if t.get_text()]
    assert len(boxes) == len(ticks)
    for a, b in zip(boxes, boxes[1:]):
        assert not a.overlaps(b)
    y_low, y_high = axis.get_ylim()
    assert y_low < -1e6 and y_high > 1e6


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e8, 1e8, allow_nan=False), min_size=1, max_size=20))
def test_lateness_axis_holds_any_values(values):
    (low, high), ticks, _ = plots.lateness_axis(np.array(values))
    assert low < 0 < high
    assert all(low <= v <= high for v in values)
    assert all(low <= t <= high for t in ticks) and ticks == sorted(set(ticks))
