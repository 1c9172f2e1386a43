"""``batreplay run --warm-up SECONDS``: metrics.json covers [first submission + warm-up, last finish] and the jobs
submitted in it, checked by hand on out_jobs.csv; the simulation is the same with or without (byte for byte);
``batreplay analyze`` of the run takes the recorded warm-up unless given a window; a warm-up that leaves nothing is
refused after the simulation (no job submitted after it) and leaves no run directory; the spec refuses a negative one."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.analysis.analyze_command import analyze
from batreplay.analysis.metrics import TimeWindow, summarize, warm_up_window
from batreplay.formats.out_jobs import read_out_jobs
from batreplay.run.runner import RunError, run
from batreplay.run.spec import RunSpec, RunSpecError
from batreplay.workloads.loading import WorkloadOptions, load_workload
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")
#: One day: 500 KTH-SP2 jobs are submitted over 3.2 days, so about a third of them fall in it.
WARM_UP = 86_400.0
#: Seconds added to every submission of the JSON workload: its first job is not submitted at t = 0.
OFFSET = 1_000.0


def kth_run(out, **options):
    return run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=out, max_jobs=500,
                             **options))


@pytest.fixture(scope="module")
def shifted_workload(tmp_path_factory):
    """The first 200 jobs of KTH-SP2 as a Batsim JSON workload, every submission OFFSET s later."""
    document = load_workload(KTH, WorkloadOptions(max_jobs=200)).document
    for job in document["jobs"]:
        job["subtime"] += OFFSET
    path = tmp_path_factory.mktemp("workload") / "kth200-shifted.json"
    path.write_text(json.dumps(document))
    return path


def test_a_warm_up_leaves_its_jobs_out_of_the_metrics_and_changes_nothing_else(tmp_path):
    plain = kth_run(tmp_path / "plain")
    warm = kth_run(tmp_path / "warm", warm_up=WARM_UP)
    assert (tmp_path / "warm" / "out_jobs.csv").read_bytes() == (tmp_path / "plain" / "out_jobs.csv").read_bytes()
    wall_clock = ["scheduling_time", "simulation_time"]  # (seconds the simulation took, not simulated ones)
    assert pd.read_csv(tmp_path / "warm" / "out_schedule.csv").drop(columns=wall_clock).equals(
        pd.read_csv(tmp_path / "plain" / "out_schedule.csv").drop(columns=wall_clock))
    assert json.loads((tmp_path / "warm" / "run.json").read_text())["spec"]["warm_up"] == WARM_UP
    assert "warm_up" not in json.loads((tmp_path / "plain" / "run.json").read_text())["spec"]

    out_jobs = pd.read_csv(tmp_path / "warm" / "out_jobs.csv")
    first, last_finish = out_jobs["submission_time"].min(), out_jobs["finish_time"].max()
    metrics = json.loads((tmp_path / "warm" / "metrics.json").read_text())
    assert metrics == warm.metrics
    assert metrics["span_start"] == first + WARM_UP and metrics["span_end"] == last_finish
    kept = out_jobs[out_jobs["submission_time"] >= first + WARM_UP]
    assert metrics["nb_jobs"] == len(kept) and 0 < len(kept) < len(out_jobs)
    assert metrics["first_submission"] == kept["submission_time"].min()
    assert metrics["mean_waiting_time"] == pytest.approx(kept["waiting_time"].mean(), rel=1e-12)
    assert metrics["max_turnaround_time"] == kept["turnaround_time"].max()
    assert metrics["nb_finished_in_span"] == (out_jobs["finish_time"] >= first + WARM_UP).sum()
    expected = summarize(read_out_jobs(tmp_path / "warm" / "out_jobs.csv"), nb_resources=100,
                         window=TimeWindow(first + WARM_UP, last_finish))
    assert metrics == pytest.approx(expected, rel=1e-12, nan_ok=True)
    assert plain.metrics["nb_jobs"] == len(out_jobs) and plain.metrics["span_start"] == first
    assert plain.metrics["mean_waiting_time"] != metrics["mean_waiting_time"]


def test_analyze_takes_the_recorded_warm_up_unless_given_a_window(tmp_path):
    kth_run(tmp_path / "warm", warm_up=WARM_UP)
    kth_run(tmp_path / "plain")
    recorded = json.loads((tmp_path / "warm" / "metrics.json").read_text())
    analyze([tmp_path / "warm", tmp_path / "plain"], tmp_path / "analysis")
    rows = {row["run"]: row for row in json.loads((tmp_path / "analysis" / "metrics.json").read_text())["runs"]}
    for name in ("nb_jobs", "mean_waiting_time", "span_start", "span_end", "utilisation", "throughput_per_day"):
        assert rows["warm"][name] == recorded[name], name
    assert rows["plain"]["nb_jobs"] == 500 and rows["plain"]["span_start"] == 0
    assert rows["warm"]["nb_jobs"] < 500

    # the window wins over the warm-up: [0.5, 1.5] days starts before the warm-up's end (1 day)
    analyze([tmp_path / "warm"], tmp_path / "window", window=(0.5, 1.0))  # days
    (row,) = json.loads((tmp_path / "window" / "metrics.json").read_text())["runs"]
    out_jobs = pd.read_csv(tmp_path / "warm" / "out_jobs.csv")
    submitted = out_jobs["submission_time"].between(43_200.0, 129_600.0)  # a closed interval
    assert (row["span_start"], row["span_end"]) == (43_200.0, 129_600.0)
    assert row["nb_jobs"] == submitted.sum() != recorded["nb_jobs"]
    assert row["mean_waiting_time"] == pytest.approx(out_jobs.loc[submitted, "waiting_time"].mean(), rel=1e-12)


@pytest.mark.parametrize(("recorded", "message"), [
    (None, "run.json: spec.warm_up: expected a number of seconds >= 0, got None"),
    ("1 day", "run.json: spec.warm_up: expected a number of seconds >= 0, got '1 day'"),
    (1e9, r"warm_up \(--warm-up\) 1e\+09 s: .* so no job is left to measure: give --window-days"),
])
def test_analyze_names_the_run_of_a_recorded_warm_up_it_cannot_use(tmp_path, recorded, message):
    from batreplay.analysis.run_dir import RunDirError

    kth_run(tmp_path / "warm", warm_up=WARM_UP)
    manifest = json.loads((tmp_path / "warm" / "run.json").read_text())
    manifest["spec"]["warm_up"] = recorded  # (a file edited by hand)
    (tmp_path / "warm" / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(RunDirError, match=f"^{tmp_path / 'warm'}: {message}"):
        analyze([tmp_path / "warm"], tmp_path / "analysis")


def test_the_warm_up_counts_from_the_first_submission_and_must_leave_some_time(shifted_workload, tmp_path,
                                                                               monkeypatch):
    def shifted_run(out, warm_up, **options):
        return run(RunSpec.build(workload=shifted_workload, platform="kth-sp2", scheduler="easy", out_dir=out,
                                 warm_up=warm_up, **options))

    result = shifted_run(tmp_path / "r", 5_000.0)
    out_jobs = pd.read_csv(tmp_path / "r" / "out_jobs.csv")
    first, end = out_jobs["submission_time"].min(), out_jobs["finish_time"].max()
    assert first == OFFSET and result.metrics["span_start"] == OFFSET + 5_000.0
    assert result.metrics["nb_jobs"] == (out_jobs["submission_time"] >= OFFSET + 5_000.0).sum()
    span, last = end - first, out_jobs["submission_time"].max()
    edge = shifted_run(tmp_path / "edge", last - first)  # the last submission is the window's start: one job left
    assert (edge.metrics["span_start"], edge.metrics["span_end"], edge.metrics["nb_jobs"]) == (
        last, end, (out_jobs["submission_time"] == last).sum())

    kept = {name: (tmp_path / "r" / name).read_bytes() for name in ("out_jobs.csv", "metrics.json", "run.json")}
    # past the last submission though before the last finish (no job left to measure); the whole span; past the
    # run's end though below its last finish time (counted from 0, not from the first submission); far beyond it;
    # and over a previous run with --force: refused before the simulation (the workload's submissions tell),
    # nothing written or replaced
    assert last < end - 1

    def no_simulation(*_args, **_kwargs):
        raise AssertionError("simulated")

    monkeypatch.setattr("batreplay.run.runner.simulate", no_simulation)
    for warm_up, out, force in ((last - first + 1, "after-last", False), (span, "whole", False),
                                (end - 500, "counted-from-0", False), (1e9, "far", False), (span + 1, "r", True)):
        with pytest.raises(RunError, match=rf"^warm_up \(--warm-up\) .* s: the last job is submitted "
                                           rf"{last - first:g} s after the first, so no job would be left to "
                                           "measure: give a shorter warm-up$"):
            shifted_run(tmp_path / out, warm_up, force=force)
        assert (tmp_path / out).exists() == (out == "r")
    assert {name: (tmp_path / "r" / name).read_bytes() for name in kept} == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edge", "r"]  # no staging folder left either


@pytest.mark.parametrize("warm_up", [-1, -0.5, float("nan"), float("inf"), 2e10, "soon"])
def test_the_run_spec_refuses_a_warm_up_that_is_not_seconds_from_0(warm_up, tmp_path):
    with pytest.raises(RunSpecError, match=r"^warm_up \(--warm-up\) must be a number from 0 to 1e\+10 s"):
        RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=tmp_path / "r", warm_up=warm_up)
    assert RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=tmp_path / "r",
                         warm_up=0).metrics.warm_up == 0
    assert not (tmp_path / "r").exists()


#: Times in quarter seconds: sums and differences are exact, so the property's comparisons are not rounding's.
quarters = st.integers(0, 4_000_000).map(lambda q: q / 4)


@settings(max_examples=200, deadline=None)
@given(submissions=st.lists(quarters, min_size=1, max_size=12), data=st.data())
def test_the_warm_up_window_starts_warm_up_after_the_first_submission(submissions, data):
    # each job finishes some time after its submission, or never (NaN: rejected)
    finishes = [data.draw(st.one_of(st.just(float("nan")), quarters.map(lambda d, s=s: s + d)))
                for s in submissions]
    jobs = pd.DataFrame({"submission_time": submissions, "finish_time": finishes})
    warm_up = data.draw(st.one_of(st.just(0.0), quarters))
    first, last = min(submissions), max(submissions)
    end = max(last, np.nanmax(finishes) if not np.isnan(finishes).all() else -np.inf)
    if warm_up == 0:
        assert warm_up_window(jobs, warm_up) is None
    elif warm_up > last - first or warm_up >= end - first:  # no job submitted after it, or no time left
        with pytest.raises(ValueError, match=r"warm_up \(--warm-up\)"):
            warm_up_window(jobs, warm_up)
    else:
        window = warm_up_window(jobs, warm_up)
        assert (window.start, window.end) == (first + warm_up, end) and window.end > window.start
