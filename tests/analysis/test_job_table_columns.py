"""The job side table (``jobs.csv``) of a run directory: one recorded submission column,
``recorded_submission_time`` (simulation clock), written by the runner and read by the analysis; run
directories of older versions (``subtime``, ``swf_submit_time``, ``original_submission_time``) still read."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import WORKLOADS

from batreplay.analysis.lateness import job_lateness, lateness_summary
from batreplay.analysis.run_dir import RECORDED_SUBMISSION, RunDirError, load_run
from batreplay.run.runner import RunSpec, run
from batreplay.workloads.batsim_workload import JOB_TABLE_COLUMNS

KTH_LOG = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
#: jobs.csv header of the versions before the rename (the job table, then the appended copy).
LEGACY_HEADER = ["job_id", "subtime", "res", "walltime", "run_time", "profile", "user_id", "swf_submit_time",
                 "swf_wait_time", "swf_line", "original_submission_time"]


@pytest.fixture(scope="module")
def feedback_run(tmp_path_factory):
    """EASY with feedback replay on the first 300 jobs of KTH-SP2 (a run directory of the runner)."""
    if not KTH_LOG.is_file():
        pytest.skip("KTH-SP2 log not available")
    out = tmp_path_factory.mktemp("runs") / "feedback"
    run(RunSpec.build(workload=KTH_LOG, platform="kth-sp2", scheduler="easy", out_dir=out, max_jobs=300,
                      replay="feedback"))
    return out


def _as_legacy(folder, *, with_copy: bool = True) -> None:
    """Rewrite ``folder/jobs.csv`` as older versions wrote it (``with_copy``: with ``original_submission_time``,
    the versions with feedback replay; without: the versions before)."""
    table = pd.read_csv(folder / "jobs.csv", dtype={"job_id": str})
    table = table.rename(columns={RECORDED_SUBMISSION: "subtime", "swf_submission_time": "swf_submit_time"})
    if with_copy:
        table["original_submission_time"] = table["subtime"]
    table[LEGACY_HEADER if with_copy else LEGACY_HEADER[:-1]].to_csv(folder / "jobs.csv", index=False)


def test_runner_writes_one_recorded_submission_column(feedback_run):
    table = pd.read_csv(feedback_run / "jobs.csv", dtype={"job_id": str})
    expected = [RECORDED_SUBMISSION if c == "submission_time" else c for c in JOB_TABLE_COLUMNS]
    assert list(table.columns) == expected
    # the recorded submission on the simulation clock is the workload's subtime (Batsim's name)
    workload = json.loads((feedback_run / "workload.json").read_text())
    assert table[RECORDED_SUBMISSION].tolist() == [job["subtime"] for job in workload["jobs"]]
    late = lateness_summary(job_lateness(load_run(feedback_run).jobs, load_run(feedback_run).job_table))
    assert late["nb_jobs"] == 300 and late["mean_lateness"] <= 1e-6  # feedback users never submit later


@pytest.mark.parametrize("with_copy", [True, False], ids=["with-original-column", "subtime-only"])
def test_legacy_job_table_reads_as_today(feedback_run, tmp_path, with_copy):
    today = load_run(feedback_run)
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    for name in ("out_jobs.csv", "out_schedule.csv", "jobs.csv", "run.json", "workload.json"):
        (legacy / name).write_bytes((feedback_run / name).read_bytes())
    _as_legacy(legacy, with_copy=with_copy)
    assert "subtime" in pd.read_csv(legacy / "jobs.csv").columns
    old = load_run(legacy)
    pd.testing.assert_frame_equal(old.job_table, today.job_table, check_like=True)  # column order aside
    assert old.has_recorded_submissions
    pd.testing.assert_frame_equal(job_lateness(old.jobs, old.job_table), job_lateness(today.jobs, today.job_table))


def test_legacy_bad_recorded_submission_names_the_files_column(feedback_run, tmp_path):
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    for name in ("out_jobs.csv", "jobs.csv", "run.json"):
        (legacy / name).write_bytes((feedback_run / name).read_bytes())
    _as_legacy(legacy)
    table = pd.read_csv(legacy / "jobs.csv", dtype={"job_id": str}).astype({"original_submission_time": object})
    table.loc[4, "original_submission_time"] = "soon"
    table.to_csv(legacy / "jobs.csv", index=False)
    with pytest.raises(RunDirError, match=r"jobs\.csv, line 6, column 'original_submission_time': 'soon'"):
        load_run(legacy)
