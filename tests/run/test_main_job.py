"""The main job as a user runs it: EASY on the whole KTH-SP2 log, through the command line."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from procset import ProcSet

from batreplay.cli import main
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def resource_overlaps(jobs: pd.DataFrame) -> int:
    """Number of pairs of consecutive jobs on one resource whose execution intervals overlap."""
    rows = []
    for start, finish, alloc in jobs[["starting_time", "finish_time", "allocated_resources"]].itertuples(index=False):
        for resource in ProcSet.from_str(alloc):
            rows.append((resource, start, finish))
    table = pd.DataFrame(rows, columns=["resource", "start", "finish"]).sort_values(["resource", "start", "finish"])
    same = table["resource"].to_numpy()[1:] == table["resource"].to_numpy()[:-1]
    overlap = table["start"].to_numpy()[1:] < table["finish"].to_numpy()[:-1] - 1e-9
    return int((same & overlap).sum())


@pytest.fixture(scope="module")
def kth_easy_run(tmp_path_factory):
    if not KTH.exists():
        pytest.skip(f"{KTH} not found")
    out = tmp_path_factory.mktemp("main") / "kth-sp2-easy"
    status = main(["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "easy",
                   "--out", str(out), "--quiet"])
    assert status == 0
    return out


@pytest.mark.slow
def test_main_job_outputs_one_row_per_job_and_a_valid_schedule(kth_easy_run):
    jobs = pd.read_csv(kth_easy_run / "out_jobs.csv")
    workload = json.loads((kth_easy_run / "workload.json").read_text())
    run_info = json.loads((kth_easy_run / "run.json").read_text())
    # 28476 SWF jobs; the converter drops 8 with a run time of 0 s and 1 without a processor count
    assert len(workload["jobs"]) == 28467
    assert sorted(jobs["job_id"]) == sorted(int(j["id"]) for j in workload["jobs"])
    assert jobs["job_id"].is_unique
    assert (jobs["starting_time"] >= jobs["submission_time"]).all()
    assert (jobs["final_state"] != "REJECTED").all()  # no KTH job is wider than its 100 nodes
    assert resource_overlaps(jobs) == 0
    assert any("dropped run_time_zero: 8" in note for note in run_info["input_notes"])


@pytest.mark.slow
def test_main_job_metrics_are_consistent_with_out_jobs(kth_easy_run):
    jobs = pd.read_csv(kth_easy_run / "out_jobs.csv")
    metrics = json.loads((kth_easy_run / "metrics.json").read_text())
    assert metrics["nb_jobs"] == len(jobs)
    assert metrics["makespan"] == pytest.approx(jobs["finish_time"].max() - jobs["submission_time"].min())
    assert metrics["mean_waiting_time"] == pytest.approx(jobs["waiting_time"].mean())
    busy = ((jobs["finish_time"] - jobs["starting_time"]) * jobs["requested_number_of_resources"]).sum()
    assert metrics["utilisation"] == pytest.approx(busy / (100 * metrics["makespan"]))
    assert 0 < metrics["utilisation"] < 1


@pytest.mark.slow
def test_easy_is_not_worse_than_fcfs_on_waiting_time(kth_easy_run, tmp_path):
    fcfs = tmp_path / "fcfs"
    assert main(["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "fcfs",
                 "--out", str(fcfs), "--quiet", "--max-jobs", "5000"]) == 0
    easy = tmp_path / "easy"
    assert main(["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "easy",
                 "--out", str(easy), "--quiet", "--max-jobs", "5000"]) == 0
    wait_fcfs = pd.read_csv(fcfs / "out_jobs.csv")["waiting_time"].mean()
    wait_easy = pd.read_csv(easy / "out_jobs.csv")["waiting_time"].mean()
    assert wait_easy < wait_fcfs


def test_cli_errors_are_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", "--workload", str(tmp_path / "missing.swf"), "--platform", "kth-sp2", "--scheduler", "easy",
              "--out", str(tmp_path / "x"), "--quiet"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("batreplay: error:") and "missing.swf" in err and "\n" not in err
    assert not (tmp_path / "x").exists()

    with pytest.raises(SystemExit):
        main(["run", "--workload", str(KTH), "--platform", "no-such-platform", "--scheduler", "easy",
              "--out", str(tmp_path / "y"), "--quiet"])
    assert "shipped platforms" in capsys.readouterr().err

    with pytest.raises(SystemExit):
        main(["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "nope",
              "--out", str(tmp_path / "z"), "--quiet"])
    assert "fcfs" in capsys.readouterr().err  # lists the known schedulers


@pytest.mark.slow
def test_existing_run_directory_is_kept_without_force(kth_easy_run, capsys):
    before = (kth_easy_run / "out_jobs.csv").read_bytes()
    with pytest.raises(SystemExit):
        main(["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "fcfs",
              "--out", str(kth_easy_run), "--quiet"])
    assert "--force" in capsys.readouterr().err
    assert (kth_easy_run / "out_jobs.csv").read_bytes() == before
