"""The interactive figures of the web GUI, checked on real runs: the first 300 jobs of the KTH-SP2 log simulated with
EASY (rigid and with think-time feedback), on a 32-node platform (jobs wider than it are rejected) and with
co-scheduling (jobs share hosts), plus a three-job run whose figures are known by hand. Every drawn number is
compared with the run's own files (``out_jobs.csv``, ``jobs.csv``, ``metrics.json``), recomputed here without the
analysis functions the figures use."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO_ROOT, WORKLOADS
from procset import ProcSet

from batreplay.analysis.run_dir import RunData, load_run
from batreplay.formats.out_jobs import FULL_ID, REJECTED
from batreplay.ui import figures, gantt

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
SPEEDUPS = REPO_ROOT / "expe" / "speedups" / "two-classes.csv"
MAX_JOBS = 300
#: On 32 nodes: a (64 nodes) is rejected at 0; b runs on 4 nodes from 10 to 110; c (32 nodes), submitted at 20,
#: waits for b and runs from 110 to 160. Utilisation over [0, 160]: (4 x 100 + 32 x 50) / (32 x 160) = 0.390625.
TINY_JOBS = [{"id": "a", "subtime": 0, "walltime": 1000, "res": 64, "profile": "d100"},
             {"id": "b", "subtime": 10, "walltime": 1000, "res": 4, "profile": "d100"},
             {"id": "c", "subtime": 20, "walltime": 1000, "res": 32, "profile": "d50"}]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Run directories: ``rigid``, ``feedback`` (arrival sessions, 60 min), ``small`` (32 nodes: rejections),
    ``shared`` (EASY with co-scheduling: jobs share hosts) and ``tiny`` (:data:`TINY_JOBS` on 32 nodes)."""
    if not KTH.is_file():
        pytest.skip(f"shared workload not found at {KTH}")
    from batreplay.platforms.generate import write_platform
    from batreplay.run.runner import run
    from batreplay.run.spec import RunSpec

    tmp = tmp_path_factory.mktemp("figures")
    small = write_platform(tmp / "small.xml", nodes=32, speed=1e9)
    sharing = {"speedup_model": "table", "speedup_options": {
        "table": str(SPEEDUPS), "class_rule": {"field": "res", "threshold": 4, "below": "compute", "above": "memory"}}}
    specs = {
        "rigid": dict(platform="kth-sp2", scheduler="easy"),
        "feedback": dict(platform="kth-sp2", scheduler="easy", replay="feedback", sessions="arrival:60"),
        "small": dict(platform=small, scheduler="easy"),
        "shared": dict(platform="kth-sp2", scheduler="easy-coscheduling", **sharing),
    }
    for name, options in specs.items():
        run(RunSpec.build(workload=KTH, out_dir=tmp / name, max_jobs=MAX_JOBS, **options))
    tiny = tmp / "tiny.json"
    tiny.write_text(json.dumps({"nb_res": 64, "jobs": TINY_JOBS, "profiles": {
        "d100": {"type": "delay", "delay": 100}, "d50": {"type": "delay", "delay": 50}}}))
    run(RunSpec.build(workload=tiny, platform=small, scheduler="easy", out_dir=tmp / "tiny"))
    return {name: tmp / name for name in [*specs, "tiny"]}


@pytest.fixture(scope="module")
def loaded(runs) -> dict[str, RunData]:
    return {name: load_run(path) for name, path in runs.items()}


def gantt_of(run: RunData, **options):
    """The Gantt chart of a whole run (prepared, then drawn for the whole window)."""
    return gantt.gantt_figure(gantt.gantt_data(run), **options)


def metrics_json(folder: Path) -> dict:
    return json.loads((folder / "metrics.json").read_text())


def gantt_pairs(figure) -> list[tuple[str, object, object]]:
    """``(group name, rectangles trace, hover trace)`` of each colour group of a Gantt figure."""
    traces = list(figure.data)
    assert len(traces) % 2 == 0
    pairs = []
    for rectangles, hover in zip(traces[::2], traces[1::2]):
        assert rectangles.meta["role"] == "rectangles" and hover.meta["role"] == "hover"
        assert rectangles.legendgroup == hover.legendgroup
        pairs.append((rectangles.legendgroup, rectangles, hover))
    return pairs


def polygons(trace) -> np.ndarray:
    """The closed polygons of a rectangles trace, shape (n, 5, 2), checked to be separated by gaps."""
    x = np.asarray(trace.x, dtype="float64")
    y = np.asarray(trace.y, dtype="float64")
    assert x.size % 6 == 0 and x.shape == y.shape
    x, y = x.reshape(-1, 6), y.reshape(-1, 6)
    assert np.isnan(x[:, 5]).all() and np.isnan(y[:, 5]).all()  # one gap after each polygon
    assert not np.isnan(x[:, :5]).any() and not np.isnan(y[:, :5]).any()
    loops = np.stack([x[:, :5], y[:, :5]], axis=2)
    assert (loops[:, 0] == loops[:, 4]).all()  # closed
    return loops


def drawn_job_ids(figure) -> list[str]:
    return [row[0] for _name, _rect, hover in gantt_pairs(figure) for row in hover.customdata]


def started(jobs: pd.DataFrame) -> pd.DataFrame:
    return jobs[jobs["starting_time"].notna()]


# -- a run known by hand ----------------------------------------------------------------------------------------


def test_figures_of_a_run_known_by_hand(loaded, runs):
    run = loaded["tiny"]
    assert metrics_json(runs["tiny"])["utilisation"] == 0.390625  # the run is the one described by TINY_JOBS

    chart = gantt_of(run)  # no jobs.csv: coloured by state
    assert chart.layout.meta["jobs"] == 2 and chart.layout.meta["not_drawn"] == 1
    assert chart.layout.meta["color_by"] == "state" and "1 not drawn" in chart.layout.title.text
    ((state, rectangles, hover),) = gantt_pairs(chart)
    assert state == "COMPLETED_SUCCESSFULLY" and [row[0] for row in hover.customdata] == ["w0!b", "w0!c"]
    assert [list(row[2:5]) for row in hover.customdata] == [[10, 0, 100], [20, 90, 50]]  # submitted, waited, ran
    loops = polygons(rectangles)
    assert loops[0].tolist() == [[10, 0], [110, 0], [110, 4], [10, 4], [10, 0]]
    assert loops[1].tolist() == [[110, 0], [160, 0], [160, 32], [110, 32], [110, 0]]
    assert chart.layout.meta["seconds_per_unit"] == 1 and chart.layout.xaxis.title.text == "simulated time (s)"

    curves = figures.utilisation_figure(figures.utilisation_steps(run))
    busy, queue = curves.data
    instants = np.array([0, 5, 10, 15, 20, 50, 109, 110, 159, 160, 200])
    assert list(step_value(np.asarray(busy.x), np.asarray(busy.y), instants)) == \
        [0, 0, 0.125, 0.125, 0.125, 0.125, 0.125, 1, 1, 0, 0]
    assert list(step_value(np.asarray(queue.x), np.asarray(queue.y), instants)) == [0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0]
    assert busy.x[0] == 0 and queue.x[0] == 0  # drawn from the first submission, before any job starts

    waiting = figures.waiting_time_figure(run)
    assert sum(waiting.data[0].y) == 2
    assert {shape.name: shape.x0 for shape in waiting.layout.shapes} == {"mean": 45, "median": 45}
    assert figures.lateness_of(run) is None


def test_gantt_leaves_out_jobs_without_hosts(loaded):
    """A job that ran but whose allocated_resources is empty cannot be placed: not drawn, counted; a jobs table
    without the column cannot give a Gantt chart at all."""
    run = loaded["tiny"]
    jobs = run.jobs.copy()
    jobs.loc[jobs[FULL_ID] == "w0!b", "allocated_resources"] = ""
    chart = gantt_of(dataclasses.replace(run, jobs=jobs))
    assert chart.layout.meta["jobs"] == 1 and chart.layout.meta["not_drawn"] == 2
    assert drawn_job_ids(chart) == ["w0!c"]
    with pytest.raises(ValueError, match="allocated_resources"):
        gantt_of(dataclasses.replace(run, jobs=run.jobs.drop(columns="allocated_resources")))


# -- Gantt chart ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rigid", "small"])
def test_gantt_draws_every_started_job_once_per_block_of_hosts(loaded, name):
    """Each job that started is drawn, with one rectangle per contiguous block of its hosts; rejected jobs are not
    drawn but counted (the 32-node platform rejects the wider KTH jobs)."""
    run = loaded[name]
    figure = gantt_of(run)
    ran = started(run.jobs)
    ids = drawn_job_ids(figure)
    assert set(ids) == set(ran[FULL_ID])
    blocks = {job_id: len(list(ProcSet.from_str(text).intervals()))
              for job_id, text in zip(ran[FULL_ID], ran["allocated_resources"])}
    assert pd.Series(ids).value_counts().sort_index().to_dict() == dict(sorted(blocks.items()))
    nb_rejected = int((run.jobs["final_state"] == REJECTED).sum())
    assert figure.layout.meta["jobs"] == len(ran) == len(run.jobs) - nb_rejected
    assert figure.layout.meta["not_drawn"] == nb_rejected
    assert f"{len(ran)} jobs" in figure.layout.title.text
    if name == "small":
        assert nb_rejected > 0 and f"{nb_rejected} not drawn" in figure.layout.title.text
    assert figure.layout.dragmode == "zoom"


@pytest.mark.parametrize("name", ["rigid", "small", "shared"])
def test_gantt_rectangles_are_the_jobs_hosts_from_start_to_finish(loaded, runs, name):
    """Rectangle k of a group belongs to the job of hover point k: its x extent is the job's [start, finish] of
    out_jobs.csv (the whole run is drawn, nothing clipped), the hosts it covers lie in [0, nb_resources) and, over
    its rectangles, are exactly the job's allocated_resources."""
    run = loaded[name]
    table = pd.read_csv(runs[name] / "out_jobs.csv", dtype={"job_id": str, "allocated_resources": str})
    table.index = table["workload_name"] + "!" + table["job_id"]
    figure = gantt_of(run)
    seconds = figure.layout.meta["seconds_per_unit"]
    hosts: dict[str, set[int]] = {}
    for _name, rectangles, hover in gantt_pairs(figure):
        loops = polygons(rectangles)
        assert len(loops) == len(hover.customdata)
        for loop, row in zip(loops, hover.customdata):
            job = table.loc[row[0]]
            x, y = loop[:, 0] * seconds, loop[:, 1]
            assert x.min() == pytest.approx(job["starting_time"], abs=1e-6)
            assert x.max() == pytest.approx(job["finish_time"], abs=1e-6)
            assert 0 <= y.min() < y.max() <= run.nb_resources
            assert y.min() == int(y.min()) and y.max() == int(y.max())
            hosts.setdefault(row[0], set()).update(range(int(y.min()), int(y.max())))
    expected = {job_id: set(ProcSet.from_str(text)) for job_id, text in table["allocated_resources"].dropna().items()}
    assert hosts == expected
    assert tuple(figure.layout.yaxis.range) == (0, run.nb_resources)


def test_gantt_hover_shows_the_jobs_facts(loaded):
    """customdata of each hover point: job id, user of jobs.csv, submission time, waiting time, run time, state,
    hosts, and the hover's text: instants in the axis' unit, durations readable."""
    run = loaded["rigid"]
    jobs = run.jobs.set_index(FULL_ID)
    users = run.job_table.assign(job_id=run.job_table["job_id"].astype(str)).set_index("job_id")["user_id"]
    figure = gantt_of(run)
    rows = [row for _name, _rect, hover in gantt_pairs(figure) for row in hover.customdata]
    assert len(rows) >= len(jobs)
    for job_id, user, submission, waiting, execution, state, allocated, when, durations in rows:
        job = jobs.loc[job_id]
        assert user == str(users[job["job_id"]])
        assert submission == job["submission_time"]
        assert waiting == pytest.approx(job["waiting_time"], abs=1e-6)
        assert execution == pytest.approx(job["execution_time"], abs=1e-6)
        assert (state, allocated) == (job["final_state"], job["allocated_resources"])
        days = figure.layout.meta["seconds_per_unit"]  # (instants in the axis' unit, as the axis shows them)
        assert when == (f"submitted {job['submission_time'] / days:,.3f}, ran {job['starting_time'] / days:,.3f} "
                        f"to {job['finish_time'] / days:,.3f} ({figure.layout.meta['time_unit']})")
        assert durations == (f"waited {figures.readable_duration(waiting)}, "
                             f"ran {figures.readable_duration(execution)}")
    template = figure.data[1].hovertemplate
    assert all(f"%{{customdata[{i}]}}" in template for i in (0, 1, 5, 6, 7, 8))


def test_gantt_by_state_has_one_group_per_final_state(loaded):
    """Coloured by state: one group per final state of the jobs that ran, each job in the group of its state."""
    run = loaded["rigid"]
    figure = gantt_of(run, color_by="state")
    states = dict(zip(run.jobs[FULL_ID], run.jobs["final_state"]))
    pairs = gantt_pairs(figure)
    assert {name for name, _r, _h in pairs} == set(started(run.jobs)["final_state"])
    assert len({name for name, _r, _h in pairs}) == 2  # the 300 jobs: completed, and 5 killed at their walltime
    for name, _rectangles, hover in pairs:
        assert {states[row[0]] for row in hover.customdata} == {name}
    assert figure.layout.meta["color_by"] == "state"


def test_gantt_by_user_groups_the_users_of_jobs_csv_with_a_capped_legend(loaded):
    """Coloured by user: each user with the most jobs has a group holding exactly their jobs (users of jobs.csv);
    the remaining users (the 300 jobs have more users than the cap) share one group, none with more jobs than a
    user kept."""
    run = loaded["rigid"]
    figure = gantt_of(run)
    user_of = dict(zip(run.job_table["job_id"].astype(str), run.job_table["user_id"].astype(str)))
    jobs_of_user = pd.Series(user_of).value_counts()
    bare = dict(zip(run.jobs[FULL_ID], run.jobs["job_id"]))
    pairs = gantt_pairs(figure)
    assert len(jobs_of_user) > figures.MAX_USER_GROUPS  # the cap is exercised
    assert len(pairs) == figures.MAX_USER_GROUPS + 1
    kept: list[str] = []
    for name, _rectangles, hover in pairs[:-1]:
        user = name.removeprefix("user ")
        assert {user_of[bare[row[0]]] for row in hover.customdata} == {user}
        assert {row[0] for row in hover.customdata} == {j for j, b in bare.items() if user_of[b] == user}
        kept.append(user)
    other, _rectangles, hover = pairs[-1]
    assert other.startswith(figures.OTHER_USERS)
    others = {user_of[bare[row[0]]] for row in hover.customdata}
    assert others == set(jobs_of_user.index) - set(kept)
    assert jobs_of_user[list(others)].max() <= jobs_of_user[kept].min()
    assert list(jobs_of_user[kept]) == sorted(jobs_of_user[kept], reverse=True)  # legend by job count
    assert figure.layout.meta["color_by"] == "user"


def test_gantt_without_users_is_coloured_by_state(loaded):
    run = dataclasses.replace(loaded["rigid"], job_table=None)
    figure = gantt_of(run, color_by="user")
    assert figure.layout.meta["color_by"] == "state"
    assert {row[1] for _n, _r, hover in gantt_pairs(figure) for row in hover.customdata} == {"unknown"}
    with pytest.raises(ValueError, match="color_by"):
        gantt_of(run, color_by="queue")


# -- utilisation and queue --------------------------------------------------------------------------------------


def in_seconds(x, seconds_per_unit: float) -> np.ndarray:
    """Axis values back in seconds, rounded to Batsim's microsecond (undoes the rounding of the unit change)."""
    return np.round(np.asarray(x, dtype="float64") * seconds_per_unit, 6)


def step_value(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Value of the step function (y[i] from x[i] to x[i + 1]) at each instant of ``at``, 0 before x[0]."""
    index = np.searchsorted(x, at, side="right") - 1
    return np.where(index >= 0, y[np.maximum(index, 0)], 0.0)


def time_weighted_mean(x: np.ndarray, y: np.ndarray, start: float, end: float) -> float:
    edges = np.clip(np.append(x, end), start, end)
    return float(np.sum(y * np.diff(edges)) / (end - start))


@pytest.mark.parametrize("name", ["rigid", "feedback", "small", "shared", "tiny"])
def test_utilisation_is_a_fraction_whose_mean_is_the_runs_utilisation(loaded, runs, name):
    """Utilisation stays within [0, 1] (also when jobs share hosts), is 0 before the first start and at the last
    finish, and its time-weighted mean over the makespan span (first submission to last finish, the span of
    metrics.json without a window) is metrics.json's utilisation."""
    run = loaded[name]
    metrics = metrics_json(runs[name])
    figure = figures.utilisation_figure(figures.utilisation_steps(run))
    seconds = figure.layout.meta["seconds_per_unit"]
    assert figure.layout.meta["utilisation"] is True
    x = in_seconds(figure.data[0].x, seconds)
    y = np.asarray(figure.data[0].y, dtype="float64")
    assert figure.data[0].line.shape == "hv"
    assert (y >= 0).all() and (y <= 1 + 1e-12).all()
    first_start = run.jobs["starting_time"].min()
    assert x[0] == pytest.approx(metrics["span_start"]) and (y[x < first_start] == 0).all()
    assert step_value(x, y, np.array([first_start]))[0] > 0
    assert y[-1] == 0 and x[-1] == pytest.approx(metrics["span_end"])
    mean = time_weighted_mean(x, y, metrics["span_start"], metrics["span_end"])
    assert mean == pytest.approx(metrics["utilisation"], rel=1e-9)
    if name == "shared":
        # the jobs do share hosts: counting every job's hosts would give another mean, above the run's
        ran = started(run.jobs)
        summed = float((ran["requested_number_of_resources"] * (ran["finish_time"] - ran["starting_time"])).sum())
        assert summed / run.nb_resources / metrics["span_length"] > metrics["utilisation"] * (1 + 1e-4)


def test_utilisation_without_nodes_count_draws_busy_nodes(loaded):
    run = loaded["rigid"]
    fraction = figures.utilisation_figure(figures.utilisation_steps(run))
    busy = figures.utilisation_figure(figures.utilisation_steps(dataclasses.replace(run, nb_resources=None)))
    assert busy.layout.meta["utilisation"] is False
    assert "busy nodes" in busy.layout.yaxis.title.text and "unknown" in busy.layout.yaxis.title.text
    np.testing.assert_allclose(np.asarray(busy.data[0].y), np.asarray(fraction.data[0].y) * run.nb_resources)
    assert np.asarray(busy.data[0].y).max() <= run.nb_resources


@pytest.mark.parametrize("name", ["rigid", "feedback", "small"])
def test_queue_length_counts_the_jobs_submitted_and_not_started(loaded, name):
    """At every change of the curve and halfway between changes, the queue length is the number of jobs of
    out_jobs.csv submitted at or before that instant that start after it (rejected jobs never wait)."""
    run = loaded[name]
    figure = figures.utilisation_figure(figures.utilisation_steps(run))
    seconds = figure.layout.meta["seconds_per_unit"]
    trace = figure.data[1]
    assert trace.xaxis == "x2" and figure.layout.xaxis.matches == "x2"  # second row, x shared
    x = in_seconds(trace.x, seconds)
    y = np.asarray(trace.y, dtype="float64")
    assert (y >= 0).all() and y.max() > 0 and y[-1] == 0
    instants = np.concatenate([x, (x[:-1] + x[1:]) / 2])
    ran = started(run.jobs)
    submitted = ran["submission_time"].to_numpy()[:, None]
    start = ran["starting_time"].to_numpy()[:, None]
    waiting = ((submitted <= instants) & (start > instants)).sum(axis=0)
    np.testing.assert_array_equal(step_value(x, y, instants), waiting)


# -- waiting times ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rigid", "small"])
def test_waiting_time_histogram_counts_every_started_job_and_marks_mean_and_median(loaded, runs, name):
    run = loaded[name]
    figure = figures.waiting_time_figure(run)
    seconds = figure.layout.meta["seconds_per_unit"]
    table = pd.read_csv(runs[name] / "out_jobs.csv")
    waits = table["waiting_time"].dropna().to_numpy()
    (bars,) = figure.data
    counts = np.asarray(bars.y)
    edges = np.append(np.asarray(bars.x, dtype="float64"), bars.x[-1] + bars.width[-1]) * seconds
    assert counts.sum() == len(started(run.jobs)) == figure.layout.meta["jobs"] == len(waits)
    assert edges[0] <= waits.min() and waits.max() <= edges[-1] * (1 + 1e-12)
    np.testing.assert_array_equal(counts, np.histogram(waits, bins=edges)[0])
    lines = {shape.name: shape for shape in figure.layout.shapes}
    assert lines["mean"].x0 * seconds == pytest.approx(table["waiting_time"].mean(), rel=1e-9)
    assert lines["median"].x0 * seconds == pytest.approx(table["waiting_time"].median(), abs=1e-9)
    assert figure.layout.meta["mean_waiting_time"] == pytest.approx(metrics_json(runs[name])["mean_waiting_time"])
    texts = [annotation.text for annotation in figure.layout.annotations]
    assert any(text.startswith("mean") for text in texts) and any(text.startswith("median") for text in texts)


# -- lateness ---------------------------------------------------------------------------------------------------


def test_lateness_only_for_feedback_runs(loaded):
    assert figures.lateness_of(loaded["rigid"]) is None
    assert figures.lateness_of(dataclasses.replace(loaded["feedback"], job_table=None)) is None
    without_recorded = loaded["feedback"].job_table.drop(columns="recorded_submission_time")
    assert figures.lateness_of(dataclasses.replace(loaded["feedback"], job_table=without_recorded)) is None


def test_lateness_per_user_of_a_feedback_run(loaded, runs):
    """One row per user of jobs.csv; the mean lateness is the mean of (submission in out_jobs.csv - recorded
    submission in jobs.csv) over the user's jobs, and the figure draws one bar per user, latest first."""
    per_user = figures.lateness_of(loaded["feedback"])
    table = pd.read_csv(runs["feedback"] / "jobs.csv", dtype={"job_id": str})
    out = pd.read_csv(runs["feedback"] / "out_jobs.csv", dtype={"job_id": str})
    both = table.merge(out[["job_id", "submission_time"]], on="job_id", validate="one_to_one")
    expected = (both["submission_time"] - both["recorded_submission_time"]).groupby(both["user_id"]).mean()
    assert len(per_user) == table["user_id"].nunique() == len(expected)
    np.testing.assert_allclose(per_user["mean_lateness"].to_numpy(), expected.sort_index().to_numpy(), atol=1e-6)
    assert (expected != 0).any()  # feedback moved some submissions

    figure = figures.lateness_figure(per_user)
    (bars,) = figure.data
    seconds = figure.layout.meta["seconds_per_unit"]
    assert len(bars.x) == len(set(bars.x)) == len(per_user) == figure.layout.meta["users"]
    assert set(bars.x) == {f"user {user}" for user in expected.index}
    heights = np.asarray(bars.y, dtype="float64") * seconds
    assert list(heights) == sorted(heights, reverse=True)
    by_user = dict(zip(bars.x, heights))
    for user, mean in expected.items():
        assert by_user[f"user {user}"] == pytest.approx(mean, abs=1e-6)
    with pytest.raises(ValueError, match="no user"):
        figures.lateness_figure(per_user.iloc[:0])
    with pytest.raises(ValueError, match="mean_lateness"):
        figures.lateness_figure(per_user.drop(columns="mean_lateness"))
