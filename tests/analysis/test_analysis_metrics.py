"""Reading out_jobs.csv and scheduling metrics: golden Batsim runs, hand-computed cases, invariants, error paths."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import GOLDEN, golden_cases, golden_folder, golden_shares_hosts
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.formats.out_schedule import batsim_schedule_summary
from batreplay.analysis.metrics import (
    SECONDS_PER_DAY,
    SECONDS_PER_MONTH,
    SECONDS_PER_WEEK,
    TimeWindow,
    busy_node_seconds,
    job_metrics,
    paper_windows,
    per_user_summary,
    running_jobs_over_time,
    summarize,
)
from batreplay.formats.out_jobs import (
    BATSIM_COLUMNS,
    OutJobsError,
    allocated_resource_counts,
    out_jobs_anomalies,
    read_out_jobs,
    validate_out_jobs,
)

CASES = golden_cases(sharing=True) if GOLDEN.is_dir() else []


def golden_jobs(case: str) -> pd.DataFrame:
    return read_out_jobs(golden_folder(case) / "out_jobs.csv")


def golden_schedule(case: str) -> pd.Series:
    return pd.read_csv(golden_folder(case) / "out_schedule.csv").iloc[0]


def make_jobs(rows: list[dict]) -> pd.DataFrame:
    """A validated jobs table from hand-written rows (missing columns get Batsim's defaults)."""
    filled = []
    for i, row in enumerate(rows):
        rejected = row.get("final_state") == "REJECTED"
        base = {"job_id": str(i), "workload_name": "w0", "profile": "p", "requested_time": 1000.0,
                "success": 0 if rejected else 1, "final_state": "COMPLETED_SUCCESSFULLY",
                "allocated_resources": "", "consumed_energy": -1.0, "metadata": ""}
        base.update(row)
        if rejected:
            base.update(starting_time=np.nan, finish_time=np.nan)
        base["execution_time"] = base["finish_time"] - base["starting_time"]
        filled.append(base)
    return validate_out_jobs(pd.DataFrame(filled))


# ---------------------------------------------------------------- golden Batsim runs


@pytest.mark.parametrize("case", CASES)
def test_batsim_conventions_reproduce_out_schedule(case):
    jobs, expected = golden_jobs(case), golden_schedule(case)
    got = batsim_schedule_summary(jobs, shared_hosts=golden_shares_hosts(case))
    for key in ("makespan", "max_slowdown", "max_turnaround_time", "max_waiting_time", "mean_slowdown",
                "mean_turnaround_time", "mean_waiting_time", "success_rate"):
        assert got[key] == pytest.approx(float(expected[key]), abs=1e-6), key
    for key in ("nb_jobs", "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success"):
        assert got[key] == int(expected[key]), key
    assert got["time_computing"] == pytest.approx(float(expected["time_computing"]), rel=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_summarize_agrees_with_batsim_on_every_golden_run(case):
    jobs, expected = golden_jobs(case), golden_schedule(case)
    got = summarize(jobs, nb_resources=int(expected["nb_computing_machines"]), shared_hosts=golden_shares_hosts(case))
    # Every golden run starts at t = 0, so Def. 11 (last finish - first submission) and Batsim's
    # makespan (last finish time) coincide on them.
    assert got["first_submission"] == 0.0
    assert got["makespan"] == pytest.approx(float(expected["makespan"]), abs=1e-6)
    assert got["max_waiting_time"] == pytest.approx(float(expected["max_waiting_time"]), abs=1e-6)
    assert got["max_slowdown"] == pytest.approx(float(expected["max_slowdown"]), abs=1e-6)
    assert got["max_turnaround_time"] == pytest.approx(float(expected["max_turnaround_time"]), abs=1e-6)
    # Batsim divides sums over the jobs that ran by the number of all jobs (rejected ones included).
    share = got["nb_started"] / got["nb_jobs"]
    for key in ("mean_waiting_time", "mean_slowdown", "mean_turnaround_time"):
        assert got[key] * share == pytest.approx(float(expected[key]), abs=1e-6), key
        if got["nb_rejected"] == 0:
            assert got[key] == pytest.approx(float(expected[key]), abs=1e-6), key
    assert got["nb_killed"] == int(expected["nb_jobs_killed"])
    assert got["nb_rejected"] == int(expected["nb_jobs_rejected"])
    assert got["nb_success"] == int(expected["nb_jobs_success"])
    assert got["busy_node_seconds"] == pytest.approx(float(expected["time_computing"]), rel=1e-12)
    assert 0.0 <= got["utilisation"] <= 1.0
    assert got["mean_bounded_slowdown"] >= 1.0


def test_dynamic_golden_means_differ_by_the_rejected_job():
    """Case dynamic: 10 jobs ran with 64.5 s of waiting in total, 1 was rejected (read off out_jobs.csv)."""
    got = summarize(golden_jobs("dynamic"), nb_resources=4)
    assert (got["nb_jobs"], got["nb_started"], got["nb_rejected"]) == (11, 10, 1)
    assert got["mean_waiting_time"] == pytest.approx(64.5 / 10)
    assert golden_schedule("dynamic")["mean_waiting_time"] == pytest.approx(64.5 / 11, abs=1e-6)
    assert (got["nb_walltime_reached"], got["nb_killed_by_scheduler"]) == (1, 1)


@pytest.mark.parametrize("case", CASES)
def test_golden_outputs_have_no_anomalies(case):
    counts = out_jobs_anomalies(golden_jobs(case))
    assert counts == dict.fromkeys(counts, 0)


def machine_busy_node_seconds(case: str, start: float, end: float) -> float:
    """Integral of nb_computing from Batsim's out_machine_states.csv over [start, end] (an independent source)."""
    states = pd.read_csv(golden_folder(case) / "out_machine_states.csv")
    times = states["time"].to_numpy()
    nexts = np.append(times[1:], times[-1])
    overlap = np.clip(np.minimum(nexts, end) - np.maximum(times, start), 0.0, None)
    return float(np.sum(states["nb_computing"].to_numpy() * overlap))


def test_windowed_utilisation_matches_batsim_machine_states():
    """Batsim writes machine-state times with 6 significant digits, exact up to 999999 s: window kept below."""
    jobs = golden_jobs("kth2000")
    window = TimeWindow(1 * SECONDS_PER_DAY, 11 * SECONDS_PER_DAY)
    got = summarize(jobs, nb_resources=100, window=window)
    expected_busy = machine_busy_node_seconds("kth2000", window.start, window.end)
    assert got["busy_node_seconds"] == pytest.approx(expected_busy, rel=1e-9)
    assert got["utilisation"] == pytest.approx(expected_busy / (100 * window.length), rel=1e-9)


@pytest.mark.parametrize(("case", "start", "end"), [("sharing", 5.0, 50.0), ("multicore", 1.0, 12.5),
                                                   ("sharing-kth", 1 * SECONDS_PER_DAY, 3 * SECONDS_PER_DAY)])
def test_windowed_utilisation_under_compute_sharing_matches_batsim_machine_states(case, start, end):
    """Under compute sharing Batsim counts a host computing once however many jobs run on it: the windowed busy
    node-seconds (Fig. 9 windows) follow its out_machine_states.csv, and adding jobs x hosts would not."""
    jobs = golden_jobs(case)
    nb_hosts = int(golden_schedule(case)["nb_computing_machines"])
    window = TimeWindow(start, end)
    expected = machine_busy_node_seconds(case, start, end)
    shared = summarize(jobs, nb_resources=nb_hosts, window=window, shared_hosts=True)
    assert shared["busy_node_seconds"] == pytest.approx(expected, rel=1e-6)
    assert shared["utilisation"] == pytest.approx(expected / (nb_hosts * (end - start)), rel=1e-6)
    assert summarize(jobs, nb_resources=nb_hosts, window=window)["busy_node_seconds"] > 1.2 * expected
    steps = running_jobs_over_time(jobs, shared_hosts=True)
    assert steps["busy_nodes"].max() <= nb_hosts < running_jobs_over_time(jobs)["busy_nodes"].max()


def test_summarize_on_kth2000_counts_and_rates():
    jobs = golden_jobs("kth2000")
    got = summarize(jobs, nb_resources=100)
    span = got["last_finish"]
    assert got["nb_finished_in_span"] == 2000
    assert got["throughput_per_week"] == pytest.approx(2000 / (span / SECONDS_PER_WEEK))
    # time-weighted running jobs = integral of the step function of running jobs
    steps = running_jobs_over_time(jobs)
    widths = np.diff(np.append(steps["time"].to_numpy(), span))
    assert got["mean_running_jobs"] == pytest.approx(float(np.sum(steps["running_jobs"] * widths)) / span)
    assert got["mean_busy_nodes"] == pytest.approx(float(np.sum(steps["busy_nodes"] * widths)) / span)
    assert steps["running_jobs"].iloc[-1] == 0 and steps["running_jobs"].min() >= 0
    assert steps["busy_nodes"].max() <= 100


# ---------------------------------------------------------------- hand-computed cases


@pytest.fixture
def small_jobs() -> pd.DataFrame:
    """4 nodes. a: 2 nodes [0, 10) waited 0; b: 4 nodes [10, 12), submitted at 0, walltime reached;
    c: 1 node [5, 25) submitted at 5, killed; d: submitted at 6, rejected."""
    return make_jobs([
        {"job_id": "a", "submission_time": 0.0, "starting_time": 0.0, "finish_time": 10.0,
         "requested_number_of_resources": 2},
        {"job_id": "b", "submission_time": 0.0, "starting_time": 10.0, "finish_time": 12.0,
         "requested_number_of_resources": 4, "requested_time": 2.0, "final_state": "COMPLETED_WALLTIME_REACHED"},
        {"job_id": "c", "submission_time": 5.0, "starting_time": 5.0, "finish_time": 25.0,
         "requested_number_of_resources": 1, "final_state": "COMPLETED_KILLED"},
        {"job_id": "d", "submission_time": 6.0, "requested_number_of_resources": 8, "final_state": "REJECTED"},
    ])


def test_job_metrics_by_hand(small_jobs):
    per_job = job_metrics(small_jobs, tau=10.0)
    assert per_job["waiting_time"].tolist()[:3] == [0.0, 10.0, 0.0]
    assert per_job["turnaround_time"].tolist()[:3] == [10.0, 12.0, 20.0]
    assert per_job["slowdown"].tolist()[:3] == [1.0, 6.0, 1.0]
    # b: max(12 / max(2, 10), 1) = 1.2
    assert per_job["bounded_slowdown"].tolist()[:3] == pytest.approx([1.0, 1.2, 1.0])
    assert per_job.iloc[3].isna().all()
    # with tau = 1 s, b's bounded slowdown is its slowdown
    assert job_metrics(small_jobs, tau=1.0)["bounded_slowdown"].iloc[1] == pytest.approx(6.0)


def test_summarize_by_hand(small_jobs):
    got = summarize(small_jobs, nb_resources=4)
    assert (got["nb_jobs"], got["nb_rejected"], got["nb_started"], got["nb_success"]) == (4, 1, 3, 1)
    assert (got["nb_walltime_reached"], got["nb_killed_by_scheduler"], got["nb_killed"]) == (1, 1, 2)
    assert got["makespan"] == 25.0
    assert got["mean_waiting_time"] == pytest.approx(10 / 3)
    assert got["max_waiting_time"] == 10.0
    assert got["median_waiting_time"] == 0.0
    assert got["p90_waiting_time"] == pytest.approx(8.0)  # sorted [0, 0, 10], rank 0.9 * 2 = 1.8
    assert got["p99_waiting_time"] == pytest.approx(9.8)
    assert got["mean_turnaround_time"] == pytest.approx(14.0)
    assert got["mean_slowdown"] == pytest.approx(8 / 3)
    assert got["max_slowdown"] == 6.0
    assert got["mean_bounded_slowdown"] == pytest.approx(3.2 / 3)
    assert got["busy_node_seconds"] == 48.0  # 2*10 + 4*2 + 1*20
    assert got["utilisation"] == pytest.approx(48 / 100)
    assert got["mean_busy_nodes"] == pytest.approx(48 / 25)
    assert got["throughput_per_week"] == pytest.approx(3 / (25 / SECONDS_PER_WEEK))
    assert got["mean_running_jobs"] == pytest.approx(32 / 25)
    # events 0, 0, 5, 6 (submissions), 10, 12, 25 (finishes); running 1, 1, 2, 2, 2, 1, 0
    assert got["mean_running_jobs_per_event"] == pytest.approx(9 / 7)


def test_summarize_window_by_hand(small_jobs):
    got = summarize(small_jobs, nb_resources=4, window=TimeWindow(5.0, 15.0))
    # jobs submitted in [5, 15]: c and d (rejected)
    assert (got["nb_jobs"], got["nb_started"], got["nb_rejected"]) == (2, 1, 1)
    assert got["mean_waiting_time"] == 0.0
    assert got["makespan"] == 20.0
    # a on [5, 10] x 2, b on [10, 12] x 4, c on [5, 15] x 1
    assert got["busy_node_seconds"] == 28.0
    assert got["utilisation"] == pytest.approx(0.7)
    assert got["nb_finished_in_span"] == 2
    assert got["throughput_per_day"] == pytest.approx(2 / (10 / SECONDS_PER_DAY))
    assert got["mean_running_jobs"] == pytest.approx(1.7)
    # events 5, 6, 10, 12 with 2, 2, 2, 1 jobs running
    assert got["mean_running_jobs_per_event"] == pytest.approx(7 / 4)


def test_batsim_summary_by_hand(small_jobs):
    got = batsim_schedule_summary(small_jobs)
    assert got["mean_waiting_time"] == pytest.approx(10 / 4)
    assert got["mean_turnaround_time"] == pytest.approx(42 / 4)
    assert got["mean_slowdown"] == pytest.approx(8 / 4)
    assert (got["nb_jobs"], got["nb_jobs_finished"], got["nb_jobs_killed"], got["nb_jobs_rejected"]) == (4, 3, 2, 1)
    assert got["success_rate"] == 0.25
    assert got["time_computing"] == 48.0


def test_makespan_follows_definition_11_when_first_submission_is_late():
    jobs = make_jobs([{"submission_time": 100.0, "starting_time": 110.0, "finish_time": 130.0,
                       "requested_number_of_resources": 1}])
    assert summarize(jobs, nb_resources=1)["makespan"] == 30.0
    assert batsim_schedule_summary(jobs)["makespan"] == 130.0


def test_per_user_summary_by_hand(small_jobs):
    users = pd.DataFrame({"job_id": ["w0!a", "w0!b", "w0!c", "w0!d"], "user_id": ["u1", "u1", "u2", "u2"]})
    got = per_user_summary(small_jobs, users)
    assert got.index.tolist() == ["u1", "u2"]
    assert got.loc["u1", ["nb_jobs", "nb_rejected", "nb_killed"]].tolist() == [2, 0, 1]
    assert got.loc["u2", ["nb_jobs", "nb_rejected", "nb_killed"]].tolist() == [2, 1, 1]
    assert got.loc["u1", "mean_waiting_time"] == 5.0 and got.loc["u1", "max_waiting_time"] == 10.0
    assert got.loc["u1", "mean_turnaround_time"] == 11.0 and got.loc["u2", "mean_turnaround_time"] == 20.0
    assert got.loc["u1", "mean_slowdown"] == 3.5
    assert got.loc["u1", "mean_bounded_slowdown"] == pytest.approx(1.1)
    assert got.loc["u1", "node_seconds"] == 28.0 and got.loc["u2", "node_seconds"] == 20.0
    # bare ids work too when they are unique
    bare = users.assign(job_id=["a", "b", "c", "d"])
    pd.testing.assert_frame_equal(per_user_summary(small_jobs, bare), got)


def test_per_user_summary_names_missing_jobs(small_jobs):
    users = pd.DataFrame({"job_id": ["a", "b", "c", "zz"], "user_id": [1, 1, 2, 2]})
    expected = (r"1 job\(s\) of the jobs table are missing from user table \(first: w0!d\); "
                r"1 job\(s\) of user table are not in the jobs table \(first: zz\)")
    with pytest.raises(ValueError, match=expected):
        per_user_summary(small_jobs, users)


def test_paper_windows():
    jobs = make_jobs([{"submission_time": 1000.0, "starting_time": 1000.0, "finish_time": 2000.0,
                       "requested_number_of_resources": 1}])
    windows = paper_windows(jobs)
    assert [w.start for w in windows] == [1000.0 + 14 * SECONDS_PER_DAY] * 3
    assert [w.length for w in windows] == pytest.approx([4 * SECONDS_PER_MONTH, 6 * SECONDS_PER_MONTH,
                                                         8 * SECONDS_PER_MONTH])
    assert SECONDS_PER_MONTH * 12 == pytest.approx(365.25 * SECONDS_PER_DAY)


def test_zero_execution_time_is_counted_not_averaged():
    jobs = make_jobs([
        {"submission_time": 0.0, "starting_time": 5.0, "finish_time": 5.0, "requested_number_of_resources": 1},
        {"submission_time": 0.0, "starting_time": 0.0, "finish_time": 4.0, "requested_number_of_resources": 1},
    ])
    got = summarize(jobs, nb_resources=1)
    assert got["nb_zero_execution_time"] == 1
    assert got["mean_slowdown"] == 1.0
    # first job: max(5 / max(0, 10), 1) = 1; second: max(4 / 10, 1) = 1
    assert got["mean_bounded_slowdown"] == 1.0
    assert out_jobs_anomalies(jobs)["zero_execution_time"] == 1


def test_parameter_errors(small_jobs):
    with pytest.raises(ValueError, match="tau"):
        summarize(small_jobs, nb_resources=4, tau=0.0)
    with pytest.raises(ValueError, match="nb_resources"):
        summarize(small_jobs, nb_resources=0)
    with pytest.raises(ValueError, match="start < end"):
        TimeWindow(10.0, 10.0)


# ---------------------------------------------------------------- invariants


@st.composite
def non_overlapping_schedules(draw):
    """Jobs list-scheduled on nb nodes: each takes the `width` nodes that free up first, so no node is shared."""
    nb = draw(st.integers(1, 8))
    count = draw(st.integers(1, 25))
    free = np.zeros(nb)
    rows = []
    for i in range(count):
        width = draw(st.integers(1, nb))
        duration = draw(st.floats(0.5, 1e4))
        gap = draw(st.floats(0.0, 1e3))
        wait = draw(st.floats(0.0, 1e3))
        nodes = np.argsort(free, kind="stable")[:width]
        start = float(free[nodes].max()) + gap
        free[nodes] = start + duration
        rows.append({"job_id": str(i), "submission_time": max(start - wait, 0.0), "starting_time": start,
                     "finish_time": start + duration, "requested_number_of_resources": width})
    return nb, make_jobs(rows)


@settings(max_examples=60, deadline=None)
@given(non_overlapping_schedules(), st.floats(0.0, 1.0), st.floats(0.01, 1.0))
def test_utilisation_within_bounds(schedule, at, fraction):
    nb, jobs = schedule
    got = summarize(jobs, nb_resources=nb)
    assert 0.0 <= got["utilisation"] <= 1.0 + 1e-12
    widths = jobs["requested_number_of_resources"] * (jobs["finish_time"] - jobs["starting_time"])
    assert got["busy_node_seconds"] == pytest.approx(float(widths.sum()))
    start = got["span_start"] + at * got["span_length"]
    window = TimeWindow(start, start + fraction * got["span_length"] + 1.0)
    windowed = summarize(jobs, nb_resources=nb, window=window)
    assert 0.0 <= windowed["utilisation"] <= 1.0 + 1e-12
    assert windowed["mean_running_jobs"] <= nb + 1e-9
    assert busy_node_seconds(jobs, window) == pytest.approx(windowed["busy_node_seconds"])


@settings(max_examples=60, deadline=None)
@given(non_overlapping_schedules(), st.floats(0.1, 1e4))
def test_bounded_slowdown_at_least_one(schedule, tau):
    _, jobs = schedule
    per_job = job_metrics(jobs, tau=tau)
    assert (per_job["bounded_slowdown"] >= 1.0).all()
    assert (per_job["bounded_slowdown"] <= per_job["slowdown"] + 1e-9).all()
    assert summarize(jobs, nb_resources=8, tau=tau)["mean_bounded_slowdown"] >= 1.0


# ---------------------------------------------------------------- reading out_jobs.csv


def test_read_golden_types_and_ids():
    jobs = golden_jobs("dynamic")
    assert len(jobs) == 11
    assert jobs["full_job_id"].tolist()[:3] == ["w0!1", "w0!3", "dyn!0a"]
    assert jobs["job_id"].tolist()[:3] == ["1", "3", "0a"]
    rejected = jobs[jobs["final_state"] == "REJECTED"].iloc[0]
    assert math.isnan(rejected["starting_time"]) and math.isnan(rejected["finish_time"])
    assert rejected["requested_number_of_resources"] == 8
    assert jobs["requested_number_of_resources"].dtype == np.int64
    assert jobs["metadata"].tolist() == [""] * 11
    assert allocated_resource_counts(jobs).tolist()[1:5] == [1, 1, 1, 2]


def test_columns_are_read_by_name(tmp_path):
    source = pd.read_csv(GOLDEN / "ptask" / "out_jobs.csv", dtype=str, keep_default_na=False)
    reordered = list(BATSIM_COLUMNS)
    a, b = reordered.index("allocated_resources"), reordered.index("consumed_energy")
    reordered[a], reordered[b] = reordered[b], reordered[a]
    path = tmp_path / "out_jobs.csv"
    source[reordered[::-1]].to_csv(path, index=False)
    pd.testing.assert_frame_equal(read_out_jobs(path)[golden_jobs("ptask").columns], golden_jobs("ptask"))


def test_optional_columns_may_be_absent_and_ids_stay_text(tmp_path):
    path = tmp_path / "out_jobs.csv"
    path.write_text("job_id,workload_name,submission_time,requested_number_of_resources,requested_time,"
                    "final_state,starting_time,execution_time,finish_time\n"
                    "007,w0,0,2,10,COMPLETED_SUCCESSFULLY,1,4,5\n"
                    "NA,w0,1,1,10,REJECTED,,,\n")
    jobs = read_out_jobs(path)
    assert jobs["full_job_id"].tolist() == ["w0!007", "w0!NA"]
    assert summarize(jobs, nb_resources=2)["mean_waiting_time"] == 1.0


HEADER = ",".join(BATSIM_COLUMNS)
GOOD = ("1,w0,d,0.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,0.000000,5.000000,5.000000,0.000000,5.000000,"
        "1.000000,0,-1.000000,\"\"")


@pytest.mark.parametrize(("line", "message"), [
    ("1,w0,d,abc,1,10,1,COMPLETED_SUCCESSFULLY,0,5,5,0,5,1,0,-1,", r"line 3, column 'submission_time': 'abc'"),
    ("1,w0,d,0,1.5,10,1,COMPLETED_SUCCESSFULLY,0,5,5,0,5,1,0,-1,", r"line 3, column 'requested_number_of_resources'"),
    ("2,w0,d,0,1,10,1,FINISHED,0,5,5,0,5,1,0,-1,", r"line 3, column 'final_state': unknown state 'FINISHED'"),
    ("2,w0,d,0,1,10,1,COMPLETED_SUCCESSFULLY,,5,5,0,5,1,0,-1,", r"line 3, column 'starting_time': empty value"),
    ("2,w0,d,0,1,10,0,REJECTED,0,5,5,0,5,1,0,-1,", r"line 3, column 'starting_time': rejected job has a value"),
    ("2,w0,d,7,1,10,1,COMPLETED_SUCCESSFULLY,3,5,8,0,5,1,0,-1,", r"line 3: starting_time is before submission_time"),
    ("2,w0,d,0,1,10,1,COMPLETED_SUCCESSFULLY,3,5,2,0,5,1,0,-1,", r"line 3: finish_time is before starting_time"),
    ("1,w0,d,0,1,10,1,COMPLETED_SUCCESSFULLY,0,5,5,0,5,1,0,-1,", r"job w0!1 appears more than once \(line 2, line 3\)"),
    ("2,w0,d,0,1,10,1,COMPLETED_SUCCESSFULLY,0,5,inf,0,5,1,0,-1,", r"line 3, column 'finish_time': 'inf' is not a finite"),
    ("2,w0,d,-4,1,10,1,COMPLETED_SUCCESSFULLY,0,5,5,0,5,1,0,-1,", r"line 3, column 'submission_time': negative"),
    ("2,,d,0,1,10,1,COMPLETED_SUCCESSFULLY,0,5,5,0,5,1,0,-1,", r"line 3, column 'workload_name': empty value"),
])
def test_bad_values_name_file_line_and_column(tmp_path, line, message):
    path = tmp_path / "bad_jobs.csv"
    path.write_text(f"{HEADER}\n{GOOD}\n{line}\n")
    with pytest.raises(OutJobsError, match=message) as info:
        read_out_jobs(path)
    assert "bad_jobs.csv" in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(OutJobsError, match=r"nowhere\.csv: jobs file not found"):
        read_out_jobs(tmp_path / "nowhere.csv")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(OutJobsError, match=r"empty\.csv: empty file"):
        read_out_jobs(path)


def test_missing_columns_are_all_listed(tmp_path):
    path = tmp_path / "partial.csv"
    path.write_text("job_id,workload_name,submission_time,final_state\n1,w0,0,REJECTED\n")
    with pytest.raises(OutJobsError) as info:
        read_out_jobs(path)
    text = str(info.value)
    assert "partial.csv" in text
    for name in ("requested_number_of_resources", "requested_time", "starting_time", "execution_time", "finish_time"):
        assert name in text


def test_in_memory_errors_name_the_row():
    frame = pd.DataFrame({"job_id": ["1", "2"], "workload_name": "w0", "submission_time": [0.0, "x"],
                          "requested_number_of_resources": 1, "requested_time": 10.0,
                          "final_state": "REJECTED", "starting_time": np.nan, "execution_time": np.nan,
                          "finish_time": np.nan})
    with pytest.raises(OutJobsError, match=r"engine table, row 1, column 'submission_time': 'x'"):
        validate_out_jobs(frame, source="engine table")


def test_anomalies_are_counted():
    jobs = make_jobs([
        {"submission_time": 0.0, "starting_time": 1.0, "finish_time": 5.0, "requested_number_of_resources": 2,
         "allocated_resources": "0-2", "waiting_time": 3.0},
        {"submission_time": 0.0, "starting_time": 0.0, "finish_time": 5.0, "requested_number_of_resources": 2,
         "allocated_resources": "4 7", "waiting_time": 0.0},
    ])
    counts = out_jobs_anomalies(jobs)
    assert counts["waiting_time_mismatch"] == 1
    assert counts["allocation_size_mismatch"] == 1
    bad = jobs.assign(allocated_resources=["0-2", "x-y"])
    with pytest.raises(OutJobsError, match=r"row 1 \(w0!1\), column 'allocated_resources': 'x-y'"):
        allocated_resource_counts(bad)
