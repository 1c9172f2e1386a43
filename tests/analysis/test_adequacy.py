"""Adequacy measure P (Baranov et al. 2018, eq. 2) and its Table I: hand cases, invariants, real log, refusals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import GOLDEN, WORKLOADS
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.analysis.adequacy import (
    StreamMismatchError,
    adequacy_measure,
    adequacy_table,
    align_streams,
    compare_run_with_log,
    compare_runs,
    stream_from_out_jobs,
    stream_from_swf,
)
from batreplay.formats.out_jobs import read_out_jobs, validate_out_jobs

SWF_FIELDS = ["job_id", "submission_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
              "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user_id",
              "group_id", "executable", "queue", "partition", "preceding_job", "think_time"]


def stream(rows: list[tuple]) -> pd.DataFrame:
    """Rows (job_id, submit, resources, requested_time, start, processing)."""
    return pd.DataFrame(rows, columns=["job_id", "submission_time", "requested_resources", "requested_time",
                                       "start_time", "processing_time"])


@pytest.fixture(scope="module")
def kth2000_jobs() -> pd.DataFrame:
    if not GOLDEN.is_dir():
        pytest.skip("golden runs not available")
    return read_out_jobs(GOLDEN / "kth2000" / "out_jobs.csv")


@pytest.fixture(scope="module")
def kth_log() -> pd.DataFrame:
    """First 2000 KTH-SP2 jobs with run time > 0 and allocated processors > 0, submit times relative to the
    first of them: the selection the kth2000 golden workload was made from (batsim-golden/README.md)."""
    path = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not path.is_file():
        pytest.skip("KTH-SP2 log not available")
    log = pd.read_csv(path, sep=r"\s+", comment=";", header=None, names=SWF_FIELDS)
    log = log[(log["run_time"] > 0) & (log["allocated_processors"] > 0)].head(2000).reset_index(drop=True)
    return log.assign(submission_time=log["submission_time"] - log["submission_time"].iloc[0])


# ---------------------------------------------------------------- hand-computed cases


def test_hand_case_and_prefix_table():
    reference = stream([("1", 0.0, 1, 100.0, 0.0, 10.0), ("2", 5.0, 2, 100.0, 10.0, 10.0),
                        ("3", 7.0, 1, 50.0, 20.0, 5.0)])
    # job 2 starts 3 s later (waiting differs), job 3 runs 4 s longer (waiting equal)
    model = stream([("1", 0.0, 1, 100.0, 0.0, 10.0), ("2", 5.0, 2, 100.0, 13.0, 10.0),
                    ("3", 7.0, 1, 50.0, 20.0, 9.0)])
    assert adequacy_measure(reference, model) == pytest.approx(math.sqrt((0 + 9 + 16) / 3))
    table = adequacy_table(reference, model, prefixes=(1, 2, 50))
    assert table["prefix"].tolist() == ["1", "2", "all"]
    assert table["nb_jobs"].tolist() == [1, 2, 3]
    assert table["measure"].tolist() == pytest.approx([0.0, math.sqrt(9 / 2), math.sqrt(25 / 3)])
    assert table["nb_different_jobs"].tolist() == [0, 1, 1]


def test_residence_time_is_wait_plus_processing():
    reference = stream([("a", 10.0, 1, 100.0, 15.0, 20.0)])
    pair = align_streams(reference, stream([("a", 10.0, 1, 100.0, 10.0, 30.0)]))
    assert pair["residence_ref"].tolist() == [25.0]  # s - r + w = 15 - 10 + 20
    assert pair["residence_model"].tolist() == [30.0]
    assert pair["waiting_ref"].tolist() == [5.0] and pair["waiting_model"].tolist() == [0.0]


def test_submission_order_with_ties_is_numeric():
    reference = stream([("10", 0.0, 1, 9.0, 0.0, 1.0), ("9", 0.0, 1, 9.0, 0.0, 1.0), ("2", 1.0, 1, 9.0, 1.0, 1.0)])
    model = stream([("9", 0.0, 1, 9.0, 0.0, 1.0), ("10", 0.0, 1, 9.0, 4.0, 1.0), ("2", 1.0, 1, 9.0, 1.0, 1.0)])
    pair = align_streams(reference, model)
    assert pair["job_id_ref"].tolist() == ["9", "10", "2"]
    table = adequacy_table(reference, model, prefixes=(1,))
    assert table["measure"].tolist()[0] == 0.0  # job 9 comes first and is unchanged


def test_alignment_by_submission_order_ignores_ids():
    reference = stream([("a", 0.0, 1, 9.0, 0.0, 1.0), ("b", 3.0, 2, 9.0, 3.0, 1.0)])
    model = stream([("x", 0.0, 1, 9.0, 0.0, 1.0), ("y", 3.0, 2, 9.0, 5.0, 1.0)])
    with pytest.raises(StreamMismatchError, match="only in reference"):
        adequacy_measure(reference, model)
    assert adequacy_measure(reference, model, align="submission_order") == pytest.approx(math.sqrt(4 / 2))


# ---------------------------------------------------------------- invariants


@st.composite
def job_streams(draw, min_size=1):
    n = draw(st.integers(min_size, 40))
    submit = np.cumsum(draw(st.lists(st.integers(0, 500), min_size=n, max_size=n))).astype(float)
    wait = np.array(draw(st.lists(st.integers(0, 5000), min_size=n, max_size=n)), dtype=float)
    run = np.array(draw(st.lists(st.integers(1, 5000), min_size=n, max_size=n)), dtype=float)
    width = draw(st.lists(st.integers(1, 64), min_size=n, max_size=n))
    return stream([(str(i), submit[i], width[i], 2 * run[i], submit[i] + wait[i], run[i]) for i in range(n)])


@settings(max_examples=50, deadline=None)
@given(job_streams(), st.data())
def test_symmetric_and_zero_on_identical_streams(reference, data):
    n = len(reference)
    extra = np.array(data.draw(st.lists(st.integers(0, 1000), min_size=n, max_size=n)), dtype=float)
    model = reference.assign(start_time=reference["start_time"] + extra)
    assert adequacy_measure(reference, reference) == 0.0
    assert adequacy_measure(reference, model) == pytest.approx(adequacy_measure(model, reference))
    table = adequacy_table(reference, model)
    assert table["nb_different_jobs"].iloc[-1] == int(np.count_nonzero(extra))


@settings(max_examples=50, deadline=None)
@given(job_streams(), st.floats(-1e5, 1e5), st.data())
def test_one_job_shifted_by_d_gives_d_over_sqrt_n(reference, d, data):
    n = len(reference)
    k = data.draw(st.integers(0, n - 1))
    model = reference.copy()
    model.loc[k, "start_time"] += d  # start later (or earlier), same processing time
    assert adequacy_measure(reference, model) == pytest.approx(abs(d) / math.sqrt(n), rel=1e-9, abs=1e-9)


def test_real_run_against_itself_is_zero(kth2000_jobs):
    table = compare_runs(kth2000_jobs, kth2000_jobs.sample(frac=1.0, random_state=3))
    assert table["prefix"].tolist() == ["50", "100", "250", "500", "750", "1000", "all"]
    assert table["nb_jobs"].iloc[-1] == 2000
    assert (table["measure"] == 0.0).all() and (table["nb_different_jobs"] == 0).all()


def test_kth2000_run_against_recorded_log(kth2000_jobs, kth_log):
    assert set(kth_log["job_id"].astype(str)) == set(kth2000_jobs["job_id"])
    table = compare_run_with_log(kth2000_jobs, kth_log)
    # independent computation: residence = finish - submission in the run, wait + run time in the log
    run = kth2000_jobs.set_index("job_id")
    log = kth_log.set_index(kth_log["job_id"].astype(str))
    run = run.loc[log.index]
    diff = (run["finish_time"] - run["submission_time"]).to_numpy() - (log["wait_time"] + log["run_time"]).to_numpy()
    assert table["measure"].iloc[-1] == pytest.approx(float(np.sqrt(np.mean(diff ** 2))), rel=1e-12)
    waits_differ = np.abs((run["starting_time"] - run["submission_time"]).to_numpy() - log["wait_time"].to_numpy()) > 1e-6
    assert table["nb_different_jobs"].iloc[-1] == int(waits_differ.sum())
    first50 = np.sqrt(np.mean(diff[:50] ** 2))  # the log's file order is its submission order here
    assert table["measure"].iloc[0] == pytest.approx(first50, rel=1e-12)
    assert table["measure"].iloc[-1] > 0  # EASY in Batsim does not replay KTH's own scheduler


# ---------------------------------------------------------------- refusals


BASE = [("1", 0.0, 1, 100.0, 0.0, 10.0), ("2", 5.0, 2, 100.0, 10.0, 10.0), ("3", 7.0, 4, 50.0, 20.0, 5.0)]


def test_refuses_different_job_counts():
    with pytest.raises(StreamMismatchError, match=r"3 in reference, 2 in model; only in reference: 3; only in model: -"):
        adequacy_measure(stream(BASE), stream(BASE[:2]))


def test_refuses_different_submission_time_naming_the_job():
    changed = BASE[:2] + [("3", 8.0, 4, 50.0, 20.0, 5.0)]
    expected = r"submission time differs for job 3 \(position 3 in submission order\): 7 in reference, 8 in model; 1 job"
    with pytest.raises(StreamMismatchError, match=expected):
        adequacy_measure(stream(BASE), stream(changed))


def test_refuses_different_requested_resources():
    changed = [BASE[0], ("2", 5.0, 3, 100.0, 10.0, 10.0), BASE[2]]
    with pytest.raises(StreamMismatchError, match=r"requested resources differs for job 2 .*: 2 in reference, 3 in model"):
        adequacy_table(stream(BASE), stream(changed))


def test_refuses_different_requested_time():
    changed = [("1", 0.0, 1, 90.0, 0.0, 10.0)] + BASE[1:]
    with pytest.raises(StreamMismatchError, match=r"requested time differs for job 1 .*: 100 in reference, 90 in model"):
        adequacy_measure(stream(BASE), stream(changed))


def test_refuses_jobs_on_one_side_only():
    changed = BASE[:2] + [("4", 7.0, 4, 50.0, 20.0, 5.0)]
    expected = r"1 job\(s\) only in reference \(first: 3\), 1 only in model \(first: 4\)"
    with pytest.raises(StreamMismatchError, match=expected):
        adequacy_measure(stream(BASE), stream(changed))


def test_submission_time_tolerance_absorbs_batsim_rounding():
    rounded = [("1", 0.0000004, 1, 100.0, 0.0, 10.0)] + BASE[1:]
    # accepted as the same submission; each stream's residence uses its own submission time
    assert adequacy_measure(stream(BASE), stream(rounded)) == pytest.approx(0.0, abs=1e-6)


def test_refuses_rejected_jobs():
    jobs = validate_out_jobs(pd.DataFrame({
        "job_id": ["1", "2"], "workload_name": "w0", "submission_time": [0.0, 1.0],
        "requested_number_of_resources": [1, 64], "requested_time": 10.0,
        "final_state": ["COMPLETED_SUCCESSFULLY", "REJECTED"], "starting_time": [0.0, np.nan],
        "execution_time": [5.0, np.nan], "finish_time": [5.0, np.nan]}))
    with pytest.raises(StreamMismatchError, match=r"1 job\(s\) were rejected .* \(first: w0!2\)"):
        stream_from_out_jobs(jobs)


def test_log_errors():
    log = pd.DataFrame({"job_id": [1, 2], "submission_time": [0, 5], "wait_time": [0, -1], "run_time": [3, 4],
                        "requested_time": [10, 10], "allocated_processors": [1, 1]})
    with pytest.raises(StreamMismatchError, match=r"1 job\(s\) have no usable wait_time .*first: 2"):
        stream_from_swf(log)
    with pytest.raises(ValueError, match=r"missing column\(s\) requested_processors"):
        stream_from_swf(log, resources_column="requested_processors")


def test_stream_missing_columns():
    with pytest.raises(ValueError, match=r"model stream: missing column\(s\) processing_time"):
        adequacy_measure(stream(BASE), stream(BASE).drop(columns="processing_time"))


def test_log_comparison_refuses_a_different_workload(kth2000_jobs, kth_log):
    shifted = kth_log.copy()
    shifted.loc[10, "requested_time"] += 60
    job = str(shifted.loc[10, "job_id"])
    with pytest.raises(StreamMismatchError, match=rf"requested time differs for job {job} .* in log, .* in run"):
        compare_run_with_log(kth2000_jobs, shifted)
    with pytest.raises(StreamMismatchError, match=r"2000 in log, 1999 in run"):
        compare_run_with_log(kth2000_jobs.iloc[1:], kth_log)


def test_two_runs_one_job_started_later(kth2000_jobs):
    """One real job of kth2000 started (and finished) 100 s later: P = 100 / sqrt(2000), one waiting differs."""
    later = kth2000_jobs.copy()
    later.loc[later.index[7], ["starting_time", "finish_time"]] += 100.0
    table = compare_runs(kth2000_jobs, later)
    assert table["measure"].iloc[-1] == pytest.approx(100.0 / math.sqrt(2000))
    assert table["nb_different_jobs"].iloc[-1] == 1
