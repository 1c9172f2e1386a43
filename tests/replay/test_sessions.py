"""Session partitioning (Madon et al. 2024 section 3.1; Zakay & Feitelson 2012): hand-made traces, invariants, KTH-SP2."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.replay.sessions import (
    METHODS,
    parse_session_spec,
    partition_sessions,
    session_spec_label,
)
from batreplay.workloads.swf import read_swf
from conftest import FIG1_ROWS, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def trace(rows: list[tuple[int, int, float, float, float]]) -> pd.DataFrame:
    """Jobs from (job_id, user_id, submission_time, wait_time, run_time) tuples, seconds."""
    return pd.DataFrame(rows, columns=["job_id", "user_id", "submission_time", "wait_time", "run_time"])


def sessions_as_job_lists(partition) -> list[tuple[int, ...]]:
    return [tuple(ids) for ids in partition.sessions["job_ids"]]


def read_swf_frame(path) -> pd.DataFrame:
    return read_swf(path).jobs


# ------------------------------------------------------------------------------------------------ hand-made cases

MIN = 60.0


def test_fig1_example_a60_groups_j1_j2_and_separates_j3():
    # Madon et al. 2024, Fig. 1: a2 - a1 < 60 min, a3 - a2 > 60 min.  Times chosen by hand (minutes).
    jobs = trace(FIG1_ROWS)
    partition = partition_sessions(jobs, "arrival", 60)
    assert sessions_as_job_lists(partition) == [(1, 2), (3,), (4,), (5, 6)]
    table = partition.sessions.set_index("session_id")
    assert table["first_submit"].tolist() == [0, 100 * MIN, 250 * MIN, 400 * MIN]
    # last finish of session (j1, j2): max(0 + 100, 30 + 10 + 150) min = 190 min
    assert table["last_finish"].tolist() == [190 * MIN, 300 * MIN, 270 * MIN, 430 * MIN]
    assert table["nb_jobs"].tolist() == [2, 1, 1, 2]
    by_job = partition.jobs.set_index("job_id")
    assert by_job["offset_in_session"].to_dict() == {1: 0, 2: 30 * MIN, 3: 0, 4: 0, 5: 0, 6: 20 * MIN}
    assert by_job["gap"].iloc[1:].tolist() == [30 * MIN, 70 * MIN, 150 * MIN, 150 * MIN, 20 * MIN]


def test_methods_differ_on_overlapping_jobs():
    # j1 runs 0..1000 s, j2 500..600 s, j3 submitted at 700 s.  Threshold 1 min = 60 s.
    jobs = trace([(1, 1, 0, 0, 1000), (2, 1, 500, 0, 100), (3, 1, 700, 0, 5)])
    # arrival: gaps 500 s and 200 s, both > 60 s
    assert sessions_as_job_lists(partition_sessions(jobs, "arrival", 1)) == [(1,), (2,), (3,)]
    # last: j2 - f(j1) = -500 (same), j3 - f(j2) = 100 > 60 (new)
    assert sessions_as_job_lists(partition_sessions(jobs, "last", 1)) == [(1, 2), (3,)]
    # max: j2 - 1000 = -500, j3 - max(1000, 600) = -300: never cut
    partition = partition_sessions(jobs, "max", 1)
    assert sessions_as_job_lists(partition) == [(1, 2, 3)]
    assert partition.jobs["gap"].iloc[1:].tolist() == [-500, -300]


def test_gap_equal_to_threshold_stays_in_session():
    # Fig. 1 caption: a new session when the inter-arrival time is *greater than* the threshold.
    jobs = trace([(1, 1, 0, 0, 10), (2, 1, 3600, 0, 10), (3, 1, 7201, 0, 10)])
    assert sessions_as_job_lists(partition_sessions(jobs, "arrival", 60)) == [(1, 2), (3,)]
    # last: 3600 - 10 = 3590 <= 3600 (same), 7201 - 3610 = 3591 (same)
    assert sessions_as_job_lists(partition_sessions(jobs, "last", 60)) == [(1, 2, 3)]


def test_a0_splits_every_job_except_equal_submission_times():
    jobs = trace([(10, 1, 100, 0, 5), (11, 1, 100, 3, 5), (12, 1, 101, 0, 5), (13, 2, 100, 0, 5)])
    partition = partition_sessions(jobs, "arrival", 0)
    # jobs 10 and 11 have inter-arrival 0, which is not > 0; user 2 has its own session
    assert sessions_as_job_lists(partition) == [(10, 11), (12,), (13,)]
    assert partition.anomalies["equal_submit_times"] == 1


def test_equal_submission_times_keep_input_order():
    jobs = trace([(5, 1, 50, 0, 1), (3, 1, 50, 0, 1), (4, 1, 20, 0, 1)])
    partition = partition_sessions(jobs, "arrival", 0)
    assert sessions_as_job_lists(partition) == [(4,), (5, 3)]
    # the returned frame keeps the input index (sorted by user then submission order)
    assert partition.jobs.index.tolist() == [2, 0, 1]


def test_single_job_and_empty_trace():
    single = partition_sessions(trace([(1, 4, 99, 1, 2)]), "max", 60)
    assert sessions_as_job_lists(single) == [(1,)]
    assert single.sessions.iloc[0][["user_id", "first_submit", "last_finish", "nb_jobs"]].tolist() == [4, 99, 102, 1]
    empty = partition_sessions(trace([]), "arrival", 60)
    assert len(empty.sessions) == 0 and len(empty.jobs) == 0


def test_unknown_user_jobs_are_independent_sessions_by_default():
    jobs = trace([(1, -1, 0, 0, 10), (2, -1, 5, 0, 10), (3, -1, 5, 0, 10), (4, 2, 0, 0, 10)])
    independent = partition_sessions(jobs, "arrival", 60)
    assert sessions_as_job_lists(independent) == [(1,), (2,), (3,), (4,)]
    assert independent.anomalies["unknown_user_jobs"] == 3
    assert independent.jobs.set_index("job_id")["gap"].loc[[1, 2, 3]].isna().all()
    grouped = partition_sessions(jobs, "arrival", 60, unknown_user="as_one_user")
    assert sessions_as_job_lists(grouped) == [(1, 2, 3), (4,)]


def test_unknown_wait_and_run_times_count_as_zero_and_are_reported():
    # SWF -1 = unknown: job 1 finishes at 0 + 0 + 50, job 2 (cancelled, run unknown) at 200 + 30 + 0.
    jobs = trace([(1, 1, 0, -1, 50), (2, 1, 200, 30, -1), (3, 1, 300, 0, 10)])
    partition = partition_sessions(jobs, "last", 1)
    assert partition.jobs["finish_time"].tolist() == [50, 230, 310]
    assert partition.anomalies["unknown_wait_time"] == 1 and partition.anomalies["unknown_run_time"] == 1
    # gaps: 200 - 50 = 150 > 60 (new), 300 - 230 = 70 > 60 (new)
    assert sessions_as_job_lists(partition) == [(1,), (2,), (3,)]


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (trace([(1, 1, 0, 0, 1)]).drop(columns="run_time"), "run_time"),
        (trace([(1, 1, 0, 0, 1), (2, 1, float("nan"), 0, 1)]), "job 2, field submission_time"),
        (trace([(1, 1, 0, 0, 1), (2, 1, -1, 0, 1)]), "job 2, field submission_time"),
        (trace([(1, 1, 0, 0, 1), (1, 1, 5, 0, 1)]), "field job_id"),
        (trace([(1, -2, 0, 0, 1)]), "field user_id"),
        (trace([(1, 1.5, 0, 0, 1)]), "field user_id"),
        (trace([(1, 1, 0, 0, 1)]).assign(wait_time=["x"]), "field wait_time"),
        (trace([(1, 1, 0, 0, 1), (2, 1, -1, 0, 1)]).assign(line=[4, 5]), "line 5, job 2, field submission_time"),
    ],
)
def test_bad_input_names_job_line_and_field(frame, message):
    with pytest.raises(ValueError, match=message):
        partition_sessions(frame, "arrival", 60)


@pytest.mark.parametrize(("method", "threshold"), [("arrivals", 60), ("max", -1), ("last", float("nan"))])
def test_bad_method_or_threshold(method, threshold):
    with pytest.raises(ValueError):
        partition_sessions(trace([(1, 1, 0, 0, 1)]), method, threshold)


def test_session_spec_names():
    assert parse_session_spec("a60") == ("arrival", 60.0)
    assert parse_session_spec("M7.5") == ("max", 7.5)
    assert parse_session_spec("l0") == ("last", 0.0)
    assert session_spec_label("arrival", 0.0) == "a0"
    assert session_spec_label("max", 7.5) == "m7.5"
    for bad in ("x60", "a", "a-5", "60"):
        with pytest.raises(ValueError):
            parse_session_spec(bad)


# ----------------------------------------------------------------------------------------- invariants (hypothesis)


def reference_partition(jobs: pd.DataFrame, method: str, threshold_minutes: float) -> list[tuple[int, ...]]:
    """Straightforward per-job loop over each user's jobs (the rules of the module docstring)."""
    sessions: list[tuple[int, ...]] = []
    for user in sorted(jobs["user_id"].unique()):
        rows = jobs[jobs["user_id"] == user].sort_values("submission_time", kind="stable")
        if user == -1:  # independent unknown-user jobs
            sessions.extend((int(j),) for j in rows["job_id"])
            continue
        current: list[int] = []
        previous_finish = None
        latest_finish = None
        previous_submit = None
        for job in rows.itertuples():
            finish = job.submission_time + max(job.wait_time, 0) + max(job.run_time, 0)
            if current:
                reference = {"arrival": previous_submit, "last": previous_finish, "max": latest_finish}[method]
                if job.submission_time - reference > 60 * threshold_minutes:
                    sessions.append(tuple(current))
                    current = []
            current.append(int(job.job_id))
            previous_submit, previous_finish = job.submission_time, finish
            latest_finish = finish if latest_finish is None else max(latest_finish, finish)
        sessions.append(tuple(current))
    return sessions


@st.composite
def random_traces(draw) -> pd.DataFrame:
    n = draw(st.integers(min_value=0, max_value=40))
    rows = []
    for job_id in range(1, n + 1):
        rows.append((
            job_id,
            draw(st.sampled_from([-1, 0, 1, 2])),
            draw(st.integers(min_value=0, max_value=600)),
            draw(st.sampled_from([-1, 0, 0, 5, 60, 300])),
            draw(st.one_of(st.just(-1), st.integers(min_value=0, max_value=400))),
        ))
    return trace(rows)


@settings(max_examples=150, deadline=None)
@given(random_traces(), st.sampled_from(METHODS), st.sampled_from([0, 0.5, 1, 2, 5]))
def test_partition_invariants(jobs, method, threshold):
    partition = partition_sessions(jobs, method, threshold)
    sessions = sessions_as_job_lists(partition)
    # every job in exactly one session
    flat = [j for ids in sessions for j in ids]
    assert sorted(flat) == sorted(jobs["job_id"].tolist())
    # same result as the plain loop
    assert sessions == reference_partition(jobs, method, threshold)
    # per user, sessions concatenated in start order give the user's jobs in (stable) submission order
    for user, rows in jobs.groupby("user_id"):
        expected = rows.sort_values("submission_time", kind="stable")["job_id"].tolist()
        user_sessions = partition.sessions[partition.sessions["user_id"] == user].sort_values("first_submit", kind="stable")
        assert [j for ids in user_sessions["job_ids"] for j in ids] == expected
        if user != -1:
            assert (np.diff(user_sessions["first_submit"].to_numpy()) > 0).all()
    # table and per-job frame agree
    by_session = partition.jobs.groupby("session_id")
    assert by_session["job_id"].apply(tuple).tolist() == sessions
    assert (partition.jobs["offset_in_session"] >= 0).all()
    assert (partition.sessions["last_finish"] >= partition.sessions["first_submit"]).all()


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(random_traces(), st.sampled_from([0, 1, 2]))
def test_methods_are_nested(jobs, threshold):
    # a_i - max(f) <= a_i - f_(i-1) <= a_i - a_(i-1): every max cut is a last cut, every last cut an arrival cut.
    def cuts(method):
        partition = partition_sessions(jobs, method, threshold)
        return {ids[0] for ids in sessions_as_job_lists(partition)}

    assert cuts("max") <= cuts("last") <= cuts("arrival")
    coarse = {ids[0] for ids in sessions_as_job_lists(partition_sessions(jobs, "arrival", threshold + 1))}
    assert coarse <= cuts("arrival")


# ---------------------------------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def kth(workloads_dir) -> pd.DataFrame:
    return read_swf_frame(KTH)


def test_kth_session_counts_are_plausible(kth):
    counts = {spec: len(partition_sessions(kth, *parse_session_spec(spec)).sessions) for spec in ("a0", "a60", "l60", "m60")}
    # Madon et al. 2024, section 5.1: 28 475 jobs (this copy: 28 476), 214 users
    assert kth["user_id"].nunique() == 214
    # a0: one session per job, except jobs of one user submitted in the same second
    ties = int(kth.duplicated(["user_id", "submission_time"]).sum())
    assert counts["a0"] == len(kth) - ties
    # coarser rules give fewer sessions; every user has at least one
    assert len(kth) > counts["a0"] > counts["a60"] > counts["l60"] > counts["m60"] >= 214
    # a60 groups about 2.8 jobs per session here: between 5 000 and 15 000 sessions for 28 476 jobs
    assert 5_000 < counts["a60"] < 15_000


def test_kth_partition_keeps_every_job(kth):
    partition = partition_sessions(kth, "arrival", 60)
    assert partition.sessions["nb_jobs"].sum() == len(kth)
    assert partition.jobs["job_id"].is_unique and set(partition.jobs["job_id"]) == set(kth["job_id"])
    assert partition.anomalies == {"unknown_wait_time": 0, "unknown_run_time": 0, "unknown_user_jobs": 0,
                                   "equal_submit_times": int(kth.duplicated(["user_id", "submission_time"]).sum())}


# ------------------------------------------------------------------------------------- batreplay sessions (issue 25)


def _sessions_error(capsys, *argv: str) -> str:
    """The one-line error of ``batreplay sessions`` (exit status 2)."""
    from batreplay.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["sessions", *argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("batreplay: error: "), err
    return err.removeprefix("batreplay: error: ").strip()


@pytest.mark.parametrize("threshold", ["-60", "nan", "inf"])
def test_sessions_names_its_threshold_option(tmp_path, capsys, threshold):
    # It used to name the run command's option: "--sessions 'arrival:-60.0': expected method:minutes ...".
    err = _sessions_error(capsys, "--workload", str(KTH), "--threshold", threshold, "--out", str(tmp_path / "s"))
    assert err == f"--threshold {float(threshold)!r}: the threshold must be a finite number of minutes >= 0"
    assert not (tmp_path / "s").exists()


def test_sessions_of_a_json_workload_say_an_swf_log_is_needed(tmp_path, capsys, golden_dir):
    # It used to read the JSON as SWF: "line 1 ...: expected 18 fields, found 29".
    workload = golden_dir / "kth2000" / "workload.json"
    err = _sessions_error(capsys, "--workload", str(workload), "--out", str(tmp_path / "s"))
    assert err == (f"workload {workload}: sessions need an SWF log (.swf or .swf.gz), with its users and recorded "
                   "times; a Batsim JSON workload has neither")


@pytest.mark.parametrize("kind", ["folder", "fifo", "header only"])
def test_sessions_of_no_log_file_or_of_no_job_say_so(tmp_path, capsys, kind):
    # A folder was "Is a directory", a FIFO made the command wait forever, a header-only log said "no job converted
    # and no positive MaxProcs in the header: give nb_res".
    import os
    import threading

    path = tmp_path / "log.swf"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_text("; MaxProcs: 100\n; UnixStartTime: 843480031\n")
    done: list[str] = []
    command = threading.Thread(daemon=True, target=lambda: done.append(
        _sessions_error(capsys, "--workload", str(path), "--out", str(tmp_path / "s"))))
    command.start()
    command.join(30)
    if command.is_alive():  # it waits in open(): give it a writer, and an end of file
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        command.join(10)
        pytest.fail("the sessions command waited for a writer to the FIFO")
    expected = {"folder": "is a folder, not an SWF log",
                "fifo": "is not a regular file (a FIFO, a socket or a device), not an SWF log",
                "header only": "no job in the workload: the log holds no job line, only its header (2 entries)"}
    assert done == [f"{path}: {expected[kind]}"]
