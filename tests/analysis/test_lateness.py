"""Lateness metrics (Madon et al. 2024, Def. 13 and eqs. 3-6): hand cases, rigid replay on real data, invariants,
errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from conftest import GOLDEN, WORKLOADS
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.analysis.lateness import (
    additional_lateness_percentiles,
    job_lateness,
    lateness_per_user,
    lateness_summary,
)
from batreplay.formats.out_jobs import read_out_jobs, validate_out_jobs


def replay_jobs(submissions: dict[str, float], workload: str = "w0") -> pd.DataFrame:
    """A validated jobs table where each job ran 1 s on 1 node right at its (replayed) submission time."""
    subs = list(submissions.values())
    return validate_out_jobs(pd.DataFrame({
        "job_id": list(submissions), "workload_name": workload, "submission_time": subs,
        "requested_number_of_resources": 1, "requested_time": 10.0, "final_state": "COMPLETED_SUCCESSFULLY",
        "starting_time": subs, "execution_time": 1.0, "finish_time": [s + 1.0 for s in subs]}))


@pytest.fixture
def small_case():
    """User A: recorded 0, 10, 20, replayed 0, 15, 35. User B: recorded 5, replayed 2."""
    jobs = replay_jobs({"a0": 0.0, "a1": 15.0, "a2": 35.0, "b0": 2.0})
    originals = pd.DataFrame({"job_id": ["w0!a0", "w0!a1", "w0!a2", "w0!b0"], "user_id": ["A", "A", "A", "B"],
                              "recorded_submission_time": [0.0, 10.0, 20.0, 5.0]})
    return jobs, originals


def test_lateness_per_job_by_hand(small_case):
    table = job_lateness(*small_case)
    assert table["full_job_id"].tolist() == ["w0!a0", "w0!b0", "w0!a1", "w0!a2"]  # recorded order
    assert table["lateness"].tolist() == [0.0, -3.0, 5.0, 15.0]
    increments = table.set_index("full_job_id")["user_increment"]
    assert math.isnan(increments["w0!a0"]) and math.isnan(increments["w0!b0"])
    assert (increments["w0!a1"], increments["w0!a2"]) == (5.0, 10.0)
    assert table["overall_increment"].tolist()[1:] == [-3.0, 8.0, 10.0]


def test_overall_metrics_by_hand(small_case):
    got = lateness_summary(job_lateness(*small_case))
    assert got["nb_jobs"] == 4
    assert got["mean_lateness"] == pytest.approx(17 / 4)  # eq. 3
    assert got["original_length"] == 20.0
    assert got["simulated_length"] == 35.0  # the replay's submission period: 0 to 35 s
    assert got["relative_lateness"] == pytest.approx(1 + (17 / 4) / 20)  # eq. 4
    assert got["additional_lateness"] == pytest.approx(2 * (17 / 4) / 3)  # eq. 6


def test_per_user_metrics_by_hand(small_case):
    per_user = lateness_per_user(job_lateness(*small_case))
    assert per_user.index.tolist() == ["A", "B"]
    assert per_user.loc["A", "nb_jobs"] == 3
    assert per_user.loc["A", "mean_lateness"] == pytest.approx(20 / 3)
    assert per_user.loc["A", "relative_lateness"] == pytest.approx(1 + (20 / 3) / 20)
    assert per_user.loc["A", "additional_lateness"] == pytest.approx(2 * (20 / 3) / 2)
    assert per_user.loc["B", "mean_lateness"] == -3.0
    assert math.isnan(per_user.loc["B", "relative_lateness"])  # one job: no recorded length
    assert math.isnan(per_user.loc["B", "additional_lateness"])  # eq. 6 needs n >= 2
    got = additional_lateness_percentiles(per_user)
    assert got == {"p10": pytest.approx(20 / 3), "p50": pytest.approx(20 / 3), "p90": pytest.approx(20 / 3),
                   "nb_users": 1, "nb_users_undefined": 1}


def test_percentiles_interpolate_linearly():
    per_user = pd.DataFrame({"additional_lateness": [0.0, 10.0, 20.0, 30.0, 40.0, np.nan]},
                            index=pd.Index(list("abcdef"), name="user_id"))
    got = additional_lateness_percentiles(per_user, percentiles=(10, 50, 90, 25))
    assert (got["p10"], got["p50"], got["p90"], got["p25"]) == pytest.approx((4.0, 20.0, 36.0, 10.0))
    assert (got["nb_users"], got["nb_users_undefined"]) == (5, 1)
    with pytest.raises(ValueError, match="within"):
        additional_lateness_percentiles(per_user, percentiles=(101,))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.floats(1, 5000), st.data())
def test_constant_increment_gives_back_delta(n, gap, data):
    """Eq. 6 is built so that l(i) = i * delta yields delta exactly (Madon et al. 2024, Sect. 6.2.3)."""
    delta = data.draw(st.floats(-gap, 500))  # replayed times i * (gap + delta) stay >= 0
    original = {f"j{i}": i * gap for i in range(n)}
    replayed = {key: value + i * delta for i, (key, value) in enumerate(original.items())}
    originals = pd.DataFrame({"job_id": list(original), "user_id": 7,
                              "recorded_submission_time": list(original.values())})
    table = job_lateness(replay_jobs(replayed), originals)
    overall = lateness_summary(table)
    assert overall["additional_lateness"] == pytest.approx(delta, abs=1e-6)
    assert overall["mean_lateness"] == pytest.approx(delta * (n - 1) / 2, abs=1e-6)
    assert lateness_per_user(table).loc[7, "additional_lateness"] == pytest.approx(delta, abs=1e-6)
    assert table["user_increment"].iloc[1:].to_numpy() == pytest.approx(np.full(n - 1, delta), abs=1e-6)


def test_rigid_replay_of_kth_has_zero_lateness():
    """kth2000 is a rigid replay: Batsim submitted every job at its workload subtime."""
    if not GOLDEN.is_dir() or not (WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz").is_file():
        pytest.skip("golden runs or KTH log not available")
    jobs = read_out_jobs(GOLDEN / "kth2000" / "out_jobs.csv")
    workload = json.loads((GOLDEN / "kth2000" / "workload.json").read_text())
    log = pd.read_csv(WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz", sep=r"\s+", comment=";", header=None,
                      usecols=[0, 11], names=["job_id", "user_id"])
    users = log.set_index(log["job_id"].astype(str))["user_id"]
    originals = pd.DataFrame({"job_id": [j["id"] for j in workload["jobs"]],
                              "recorded_submission_time": [j["subtime"] for j in workload["jobs"]]})
    originals["user_id"] = users.loc[originals["job_id"]].to_numpy()
    table = job_lateness(jobs, originals)
    assert len(table) == 2000 and (table["lateness"] == 0.0).all()
    overall = lateness_summary(table)
    assert (overall["mean_lateness"], overall["relative_lateness"], overall["additional_lateness"]) == (0.0, 1.0, 0.0)
    per_user = lateness_per_user(table)
    assert len(per_user) == originals["user_id"].nunique()
    assert (per_user["mean_lateness"] == 0.0).all()
    assert additional_lateness_percentiles(per_user)["p90"] == 0.0


# ---------------------------------------------------------------- errors


def test_missing_columns(small_case):
    jobs, originals = small_case
    with pytest.raises(ValueError, match=r"originals table: missing column\(s\) user_id"):
        job_lateness(jobs, originals.drop(columns="user_id"))


def test_jobs_missing_on_either_side_are_named(small_case):
    jobs, originals = small_case
    with pytest.raises(ValueError, match=r"1 job\(s\) of the jobs table are missing from originals table \(first: w0!b0\)"):
        job_lateness(jobs, originals.iloc[:3])
    extra = pd.concat([originals, pd.DataFrame({"job_id": ["w0!zz"], "user_id": ["C"],
                                                "recorded_submission_time": [1.0]})])
    with pytest.raises(ValueError, match=r"1 job\(s\) of originals table are not in the jobs table \(first: w0!zz\)"):
        job_lateness(jobs, extra)


def test_duplicate_and_bad_values(small_case):
    jobs, originals = small_case
    with pytest.raises(ValueError, match=r"job 'w0!a0' appears 2 times"):
        job_lateness(jobs, pd.concat([originals, originals.iloc[:1]]))
    with pytest.raises(ValueError, match=r"job w0!a1: recorded_submission_time 'soon' is not a finite number"):
        job_lateness(jobs, originals.astype({"recorded_submission_time": object}).assign(
            recorded_submission_time=[0.0, "soon", 20.0, 5.0]))


def test_bare_ids_and_their_ambiguity(small_case):
    jobs, originals = small_case
    bare = originals.assign(job_id=["a0", "a1", "a2", "b0"])
    pd.testing.assert_frame_equal(job_lateness(jobs, bare), job_lateness(jobs, originals))
    two_workloads = validate_out_jobs(pd.concat([jobs, replay_jobs({"a0": 3.0}, workload="dyn")]).drop(columns="full_job_id"))
    with pytest.raises(ValueError, match=r"ambiguous, job 'a0' exists in several workloads \(w0!a0, dyn!a0\)"):
        job_lateness(two_workloads, bare)
    mixed = originals.assign(job_id=["w0!a0", "a1", "a2", "b0"])
    with pytest.raises(ValueError, match="mix full ids"):
        job_lateness(jobs, mixed)
