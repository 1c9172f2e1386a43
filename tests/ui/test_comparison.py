"""The Compare page's table, warnings and figures, on real runs of the same 300 KTH-SP2 jobs (EASY and FCFS) and of
other jobs (200 of them, another log, a warm-up), and its smoothing of the overlaid series."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.analysis.metric_registry import get_metric
from batreplay.analysis.run_dir import load_run
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from batreplay.analysis.plots import time_unit
from batreplay.ui.comparison import (
    MAX_SMOOTHED_POINTS,
    comparison_rows,
    job_set_warnings,
    moving_average,
    smoothed,
    smoothing_window,
)
from batreplay.ui.run_index import read_metrics
from batreplay.ui.figures import comparison_series_figure, cumulative_submissions_figure, utilisation_steps
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    for scheduler in ("easy", "fcfs"):
        run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler=scheduler, max_jobs=300,
                          out_dir=root / scheduler))
    return [root / "easy", root / "fcfs"]


def test_each_row_gives_both_values_and_their_difference_in_one_unit(folders):
    metrics = [read_metrics(folder) for folder in folders]
    columns, rows = comparison_rows(["easy", "fcfs"], metrics)
    assert columns == ["metric", "1: easy", "2: fcfs", "2 - 1", "2 vs 1"]
    by_label = {row["metric"]: row for row in rows}
    wait = next(row for label, row in by_label.items() if label.startswith("mean waiting time"))
    unit = get_metric("mean_waiting_time").display_unit([m["mean_waiting_time"] for m in metrics])
    assert wait["metric"] == f"mean waiting time ({unit})"
    first, second = (float(wait[column].replace(",", "")) for column in ("1: easy", "2: fcfs"))
    assert float(wait["2 - 1"].replace(",", "")) == pytest.approx(second - first, abs=0.011)
    expected = 100 * (metrics[1]["mean_waiting_time"] / metrics[0]["mean_waiting_time"] - 1)
    assert wait["2 vs 1"] == f"{expected:+.1f} %"
    assert by_label["jobs"] == {"metric": "jobs", "1: easy": "300", "2: fcfs": "300", "2 - 1": "+0", "2 vs 1": "+0.0 %"}
    assert by_label["rejected"]["2 vs 1"] == "0 %"  # 0 against 0


def test_fewer_than_two_runs_are_refused(folders):
    with pytest.raises(ValueError, match="two runs or more"):
        comparison_rows(["easy"], [read_metrics(folders[0])])


def test_the_overlaid_series_and_cumulative_submissions_draw_every_run(folders):
    runs = [load_run(folder) for folder in folders]
    series = comparison_series_figure([utilisation_steps(run) for run in runs])
    assert series.layout.meta["runs"] == ["easy", "fcfs"]
    assert len(series.data) == 4  # utilisation and queue length of each run
    for trace in series.data[::2]:  # (each run: its utilisation, then its queue length)
        assert 0.0 < np.nanmax(np.asarray(trace.y, dtype=float)) <= 1.0
    cumulative = cumulative_submissions_figure(runs)
    names = [trace.name for trace in cumulative.data]
    assert names == ["recorded (rigid)", "easy", "fcfs"]
    for trace, folder in zip(cumulative.data[1:], folders):
        jobs = json.loads((folder / "metrics.json").read_text())["nb_jobs"]
        assert np.asarray(trace.y, dtype=float)[-1] == jobs == 300
        assert np.all(np.diff(np.asarray(trace.x, dtype=float)) >= 0)  # time never goes back


# --- runs of other job sets: warned, with how they differ ------------------------------------------------------

SDSC = WORKLOADS / "SDSC-SP2-1998-4.2-cln.swf.gz"


@pytest.fixture(scope="module")
def others(tmp_path_factory):
    """Runs whose jobs differ from the 300 EASY jobs of ``folders`` (200 jobs, another log, a warm-up), and one of
    the same jobs read from a copy of the log under another name."""
    root = tmp_path_factory.mktemp("others")
    copy = root / "kth-copy.swf.gz"
    copy.write_bytes(KTH.read_bytes())
    made = {"first-200": dict(workload=KTH, platform="kth-sp2", max_jobs=200),
            "sdsc-300": dict(workload=SDSC, platform="sdsc-sp2", max_jobs=300),
            "warm-300": dict(workload=KTH, platform="kth-sp2", max_jobs=300, warm_up=3600.0),
            "copy-300": dict(workload=copy, platform="kth-sp2", max_jobs=300)}
    for name, options in made.items():
        run(RunSpec.build(scheduler="easy", out_dir=root / name, **options))
    return {name: load_run(root / name) for name in made}


def span_of(folder) -> float:
    """First submission to last finish (s), from ``out_jobs.csv`` itself."""
    jobs = pd.read_csv(folder / "out_jobs.csv")
    return float(jobs.finish_time.max() - jobs.submission_time.min())


def test_runs_of_the_same_jobs_give_no_warning_whatever_their_scheduler_or_log_file_name(folders, others):
    easy, fcfs = (load_run(folder) for folder in folders)
    assert job_set_warnings([easy, fcfs]) == []
    assert job_set_warnings([easy, others["copy-300"]]) == []  # the same bytes under another name: the same log
    assert job_set_warnings([easy]) == []


def test_fewer_jobs_are_warned_with_their_count_max_jobs_and_time_spans(folders, others):
    easy = load_run(folders[0])
    fewer = others["first-200"]
    line, = job_set_warnings([easy, fewer], unit=(3600.0, "h"))
    assert line.startswith("run 2 (first-200) vs run 1 (easy): 200 jobs vs 300 (max_jobs 200 vs 300); ")
    assert "0 of the 200 jobs of first-200 are not in easy, 100 of the 300 jobs of easy are not in first-200" in line
    spans = span_of(fewer.path) / 3600.0, span_of(folders[0]) / 3600.0
    assert line.endswith(f"; time span {spans[0]:,.4g} vs {spans[1]:,.4g} h (first submission to last finish)")
    assert "\n" not in line and "log" not in line  # the same log


def test_another_log_is_warned_with_its_name_and_checksum(folders, others):
    easy, sdsc = load_run(folders[0]), others["sdsc-300"]
    line, = job_set_warnings([easy, sdsc])
    digests = [json.loads((run_.path / "run.json").read_text())["inputs_sha256"]["workload"] for run_ in (sdsc, easy)]
    assert line.startswith(f"run 2 (sdsc-300) vs run 1 (easy): log {SDSC.name} (sha256 {digests[0][:12]}...) "
                           f"vs {KTH.name} (sha256 {digests[1][:12]}...); ")
    assert "300 jobs vs" not in line  # as many jobs, but not the same ones
    assert "other recorded submission times" in line or "are not in" in line


def test_a_warm_up_that_differs_is_warned_and_every_later_run_is_checked(folders, others):
    easy, fcfs = (load_run(folder) for folder in folders)
    lines = job_set_warnings([easy, fcfs, others["warm-300"], others["first-200"]])
    assert len(lines) == 2
    assert lines[0].startswith("run 3 (warm-300) vs run 1 (easy): warm_up 3,600 s vs 0 s; time span")
    assert lines[1].startswith("run 4 (first-200) vs run 1 (easy)")


def test_the_compare_page_shows_the_warning_above_the_table_only_for_other_jobs(folders, others, tmp_path):
    from batreplay.ui.pages import comparison
    from batreplay.ui.sandbox import Sandbox
    from dash_tree import components

    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    for name, folder in (("easy", folders[0]), ("fcfs", folders[1]), ("first-200", others["first-200"].path)):
        shutil.copytree(folder, runs_dir / name)
    sandbox = Sandbox(runs_dir, [WORKLOADS])
    same, unit = comparison(runs_dir, ["easy", "fcfs"], sandbox)
    assert unit == time_unit(max(span_of(folder) for folder in folders))[1]
    assert "comparison-warning" not in [getattr(part, "id", None) for part in components(same)]
    shown, _unit = comparison(runs_dir, ["easy", "first-200"], sandbox)
    ids = [getattr(part, "id", None) for part in components(shown)]
    assert ids.index("comparison-warning") < ids.index("comparison-table")
    warning, = [part for part in components(shown) if getattr(part, "id", None) == "comparison-warning"]
    items = [part.children for part in components(warning) if type(part).__name__ == "Li"]
    spans = [span_of(runs_dir / name) for name in ("easy", "first-200")]
    expected = job_set_warnings([load_run(runs_dir / "easy"), load_run(runs_dir / "first-200")],
                                unit=time_unit(max(spans)))
    assert items == expected and len(expected) == 1 and "200 jobs vs 300" in expected[0]
    # a bad smoothing window is said in one line; the series are drawn as they are
    bad, _unit = comparison(runs_dir, ["easy", "fcfs"], sandbox, "two")
    error, = [part for part in components(bad) if getattr(part, "id", None) == "compare-window-error"]
    assert error.children == f"smoothing window: 'two' is not a number > 0 of {unit} (leave it empty for none)"
    series, = [part.figure for part in components(bad) if getattr(part, "id", None) == "compare-series"]
    assert series.layout.meta["window"] is None
    good, _unit = comparison(runs_dir, ["easy", "fcfs"], sandbox, "0.5")
    series, = [part.figure for part in components(good) if getattr(part, "id", None) == "compare-series"]
    assert series.layout.meta["window"] == 0.5


# --- smoothing of the overlaid series ------------------------------------------------------------------------------

def test_the_moving_average_of_a_step_function_known_by_hand():
    # 0 on [0, 10), 2 on [10, 20), 0 from 20 on; a window of 5
    at = [-3.0, 0.0, 5.0, 10.0, 12.0, 15.0, 20.0, 22.0, 30.0]
    # before the first instant: its value; [7, 12]: 3 s at 0 and 2 s at 2 -> 0.8; [17, 22]: 3 s at 2 -> 1.2
    assert moving_average([0, 10, 20], [0, 2, 0], 5.0, at).tolist() == pytest.approx(
        [0.0, 0.0, 0.0, 0.0, 0.8, 2.0, 2.0, 1.2, 0.0], abs=1e-12)
    # a window longer than the past is cut at the first instant: [0, 15] -> 5 s at 2 over 15 s
    assert moving_average([0, 10, 20], [0, 2, 0], 100.0, [8.0, 15.0]).tolist() == pytest.approx([0.0, 10 / 15])
    # equal instants: the last of them holds
    assert moving_average([0, 10, 10, 20], [1, 5, 3, 0], 10.0, [20.0]).tolist() == pytest.approx([3.0])


step_functions = st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 10**6), min_size=n, max_size=n).map(sorted),
    st.lists(st.floats(0.0, 1e4, allow_nan=False), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(step_functions, st.floats(1.0, 2e6), st.lists(st.floats(-1e3, 1.1e6, allow_nan=False), min_size=1, max_size=30))
def test_the_moving_average_stays_within_the_step_functions_values(function, window, at):
    times, values = function
    averages = moving_average(np.array(times, dtype=float), np.array(values), window, np.array(at))
    # (rounding of the integral, whole seconds apart: far below this)
    tolerance = 1e-12 * (1.0 + float(np.sum(np.array(values[:-1]) * np.diff(np.array(times, dtype=float)))))
    assert averages.shape == (len(at),)
    assert np.all(averages >= min(values) - tolerance) and np.all(averages <= max(values) + tolerance)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=40).map(sorted), st.floats(-1e4, 1e4, allow_nan=False),
       st.floats(1e-3, 2e6))
def test_the_moving_average_of_a_constant_is_that_constant(times, value, window):
    grid, averages = smoothed(np.array(times, dtype=float), np.full(len(times), value), window)
    assert grid.size in (1, MAX_SMOOTHED_POINTS)
    assert averages == pytest.approx(np.full(grid.size, value), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("typed, expected", [(None, None), ("", None), ("  ", None), ("1.5", 1.5), (" 2 ", 2.0),
                                             ("1e-2", 0.01), (3, 3.0)])
def test_a_smoothing_window_is_blank_or_a_number_above_zero(typed, expected):
    assert smoothing_window(typed, "days") == expected


@pytest.mark.parametrize("typed", ["abc", "0", "-1", "inf", "nan", "1,5", True])
def test_a_bad_smoothing_window_is_said_in_one_line_naming_the_field_and_unit(typed):
    with pytest.raises(ValueError, match=r"^smoothing window: .* is not a number > 0 of h \(leave it empty for none\)"):
        smoothing_window(typed, "h")


def mean_busy_and_queued(jobs: pd.DataFrame, low: float, high: float) -> tuple[float, float]:
    """Mean busy nodes and waiting jobs over [low, high], summed job by job from ``out_jobs.csv``."""
    ran = jobs[jobs.starting_time.notna()]
    running = (np.minimum(ran.finish_time, high) - np.maximum(ran.starting_time, low)).clip(lower=0)
    waiting = (np.minimum(ran.starting_time, high) - np.maximum(ran.submission_time, low)).clip(lower=0)
    return (float((running * ran.requested_number_of_resources).sum()) / (high - low),
            float(waiting.sum()) / (high - low))


def test_smoothed_series_are_the_jobs_mean_over_the_window_before_each_instant(folders):
    runs = [load_run(folder) for folder in folders]
    steps = [utilisation_steps(run) for run in runs]
    exact = comparison_series_figure(steps)
    divisor, unit = exact.layout.meta["seconds_per_unit"], exact.layout.meta["time_unit"]
    figure = comparison_series_figure(steps, window=0.25)
    assert figure.layout.meta["window"] == 0.25 and exact.layout.meta["window"] is None
    assert f"mean over the last 0.25 {unit}" in figure.layout.yaxis.title.text
    assert f"mean over the last 0.25 {unit}" in figure.layout.yaxis2.title.text
    assert [trace.name for trace in figure.data] == [trace.name for trace in exact.data]
    for index, (run_, folder) in enumerate(zip(runs, folders)):
        jobs = pd.read_csv(folder / "out_jobs.csv")
        busy, queue = figure.data[2 * index], figure.data[2 * index + 1]
        for trace in (busy, queue):
            assert len(trace.x) == MAX_SMOOTHED_POINTS
        first = float(jobs.submission_time.min())
        for point in range(MAX_SMOOTHED_POINTS // 2, MAX_SMOOTHED_POINTS, 97):  # (windows after the first submission)
            high = [float(busy.x[point]) * divisor, float(queue.x[point]) * divisor]
            assert min(high) - 0.25 * divisor > first
            nodes, _waiting = mean_busy_and_queued(jobs, high[0] - 0.25 * divisor, high[0])
            _nodes, waiting = mean_busy_and_queued(jobs, high[1] - 0.25 * divisor, high[1])
            assert busy.y[point] == pytest.approx(nodes / run_.nb_resources, rel=1e-9, abs=1e-12)
            assert queue.y[point] == pytest.approx(waiting, rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError, match="window 0"):
        comparison_series_figure(steps, window=0.0)


def test_a_zoom_on_compare_redraws_the_series_for_its_window(folders):
    """Compare's zoom (the browser's relayoutData) redraws the overlaid series for that time window, from the runs'
    prepared steps; a zoom of a y axis alone redraws nothing, a reset draws the whole runs."""
    from batreplay.ui.pages import compared_series
    from batreplay.ui.sandbox import Sandbox

    sandbox = Sandbox(folders[0].parent, [WORKLOADS])
    names = [folder.name for folder in folders]
    whole = compared_series(folders[0].parent, names, sandbox, None, {"xaxis.autorange": True})
    divisor = whole.layout.meta["seconds_per_unit"]
    assert whole.layout.meta["view"] is None and whole.layout.meta["runs"] == names
    zoomed = compared_series(folders[0].parent, names, sandbox, None, {"xaxis2.range[0]": 1.0, "xaxis2.range[1]": 2.0})
    assert zoomed.layout.meta["view"] == [1.0 * divisor, 2.0 * divisor]
    assert list(zoomed.layout.xaxis.range) == [1.0, 2.0]
    for trace in zoomed.data:  # (the steps in view: the one in effect at its start, up to the one after its end)
        x = np.asarray(trace.x, dtype=float)
        assert x.min() <= 1.0 and x.max() >= 2.0 and ((x > 1.0) & (x < 2.0)).any()
        assert len(x) < trace.meta["points"]
    assert compared_series(folders[0].parent, names, sandbox, None, {"yaxis.range[0]": 0, "yaxis.range[1]": 1}) is None
    assert compared_series(folders[0].parent, names[:1], sandbox, None, {"xaxis.autorange": True}) is None
