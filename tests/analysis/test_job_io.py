"""CPU time, I/O time, CPU efficiency and bytes per job and per node type (issue 27, item 5; Caspart et al. 2019):
on a real Batsim's recording of jobs that read and write, on the first SWF jobs of SDSC-SP2 turned into demand
rounds (the CPU times the log recorded come back), and in ``batreplay analyze``'s files and report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from procset import ProcSet
from conftest import WORKLOADS

from batreplay.analysis.job_io import job_io, node_type_io
from batreplay.cli import main
from batreplay.formats.out_jobs import read_out_jobs
from batreplay.platforms.generate import write_platform
from batreplay.platforms.reader import read_platform
from batreplay.ui.pages import run_detail_page
from batreplay.ui.sandbox import Sandbox
from batreplay.workloads.swf import read_swf

RECORDED = Path(__file__).resolve().parents[1] / "golden"
SDSC_LOG = WORKLOADS / "SDSC-SP2-1998-4.2-cln.swf.gz"


def _measure(case: str):
    platform = read_platform(RECORDED / case / "platform.xml")
    profiles = json.loads((RECORDED / case / "workload.json").read_text())["profiles"]
    measured = job_io(read_out_jobs(RECORDED / case / "out_jobs.csv"), profiles, [h.speed for h in platform.hosts])
    return measured, platform


def test_jobs_of_a_real_batsim_recording_get_their_cpu_and_io_times_and_bytes():
    measured, platform = _measure("pfs-easy")  # hosts 0-1 at 1 Gflop/s, 2-3 at 2.5 Gflop/s
    jobs = measured.jobs.set_index("job_id")
    # job 1 reads 1e8 and writes 5e7 bytes, computes nothing: all its 1.7 s are I/O
    assert jobs.loc["1", ["cpu_time", "io_time", "cpu_efficiency", "bytes_read", "bytes_written"]].tolist() == [
        0.0, 1.7, 0.0, 1e8, 5e7]
    # job 6: three rounds of reading 3e8 bytes per host then computing 1 Gflop per host, on two hosts
    six = read_out_jobs(RECORDED / "pfs-easy" / "out_jobs.csv").set_index("job_id").loc["6"]
    speeds = [platform.hosts[h].speed for h in ProcSet.from_str(str(six.allocated_resources))]  # (hosts 0 and 2)
    cpu = 3 * sum(1e9 / s for s in speeds)
    assert jobs.loc["6", "cpu_time"] == pytest.approx(cpu)
    assert jobs.loc["6", "io_time"] == pytest.approx(six.execution_time - 3 * 1e9 / min(speeds))
    assert jobs.loc["6", "cpu_efficiency"] == pytest.approx(cpu / (six.execution_time * 2))
    assert jobs.loc["6", "bytes_read"] == 3 * 3e8 * 2
    # job 5 was stopped by its walltime: not measured, and said
    assert jobs.loc["5", ["cpu_time", "io_time", "bytes_read"]].isna().all()
    assert measured.notes == ["CPU and I/O times left out for 1 job(s) that did not complete successfully (stopped "
                              "by their walltime, killed or failed: the part of their steps they ran is not known)"]


def test_per_node_type_sums_are_the_jobs_sums_split_by_the_hosts_they_ran_on():
    for case in ("pfs-easy", "pfs-slots", "staging-mapping"):
        measured, platform = _measure(case)
        per_type = node_type_io(measured, [h.node_type for h in platform.hosts])
        assert list(per_type["node_type"]) == ["slow", "fast"]
        jobs = measured.jobs
        for column in ("cpu_time", "bytes_read", "bytes_written"):
            assert per_type[column].sum() == pytest.approx(jobs[column].sum())
        assert per_type["host_seconds"].sum() == pytest.approx((jobs["execution_time"] * jobs["hosts"]).sum())
        assert per_type["io_host_seconds"].sum() == pytest.approx((jobs["io_time"] * jobs["hosts"]).sum())
        assert (per_type["cpu_efficiency"] <= 1 + 1e-12).all()
    # by hand, pfs-easy's slow nodes (0-1): job 1 (1e8 read) and job 2 (1e8) on one each, job 3 (3e8 per host) on
    # both, job 4 writing 2e8 and job 7 reading 3 x 3e8 on one of them as out_jobs.csv says
    measured, platform = _measure("pfs-easy")
    per_type = node_type_io(measured, [h.node_type for h in platform.hosts]).set_index("node_type")
    out = read_out_jobs(RECORDED / "pfs-easy" / "out_jobs.csv").set_index("job_id")
    profiles = json.loads((RECORDED / "pfs-easy" / "workload.json").read_text())["profiles"]
    read = {"rw": 1e8, "r": 3e8, "w": 0.0, "c": 0.0, "rounds": 3 * 3e8}
    expected = sum(read[out.loc[j, "profile"]] * sum(1 for h in ProcSet.from_str(str(out.loc[j, "allocated_resources"]))
                                                      if h < 2)
                   for j in out.index if out.loc[j, "final_state"] == "COMPLETED_SUCCESSFULLY")
    assert set(read) <= set(profiles)
    assert per_type.loc["slow", "bytes_read"] == expected
    staged = _measure("staging-mapping")[0].jobs.set_index("job_id")["bytes_staged"]
    assert staged["1"] == 3e8 and staged["4"] == 3e8 + 2e8  # a stage-in and a stage-out in its composed rounds


def test_bytes_sent_by_matrices_and_jobs_whose_executors_differ_from_their_hosts_left_out():
    jobs = pd.DataFrame({"job_id": ["1", "2", "3", "4"], "profile": ["talk", "pair", "talk", "one"],
                         "final_state": ["COMPLETED_SUCCESSFULLY"] * 4, "requested_number_of_resources": [3, 2, 2, 1],
                         "allocated_resources": ["0-2", "3-4", "5", "6"], "execution_time": [2.0, 1.0, 1.0, 1.0]})
    profiles = {"talk": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6},
                "pair": {"type": "parallel", "cpu": [1e9, 0], "com": [5.0, 7.0, 0, 0]},
                "one": {"type": "parallel", "cpu": [1e9], "com": [9.0]}}
    measured = job_io(jobs, profiles, [1e9] * 7)
    sent = measured.jobs.set_index("job_id")["bytes_sent"]
    assert sent["1"] == 6e6 and sent["2"] == 12.0 and sent["4"] == 0.0  # every ordered pair; diagonal; one host
    assert np.isnan(sent["3"])  # 2 executors on 1 host: a mapping out_jobs.csv does not record
    assert measured.notes == ["CPU and I/O times left out for 1 job(s) whose number of executors differs from their "
                              "hosts (a decision process's executor mapping, which out_jobs.csv does not record)"]


def test_demand_rounds_of_a_real_log_give_back_the_cpu_times_the_log_recorded(tmp_path):
    """The first 300 SDSC-SP2 jobs in 4 demand rounds, on nodes of the recorded speed whose I/O rate is the
    reference rate: each completed job's CPU time is its recorded CPU time per processor (SWF field 6, at most its
    run time; its run time when not recorded) times its nodes, its bytes read the rest of its run time at the
    reference rate, and its I/O time at least that rest (jobs share a storage link of 5 nodes' rate)."""
    platform = write_platform(tmp_path / "io.xml", 128, 1e9, io_rate=1e7, storage_rate=5e7)
    assert main(["run", "--workload", str(SDSC_LOG), "--platform", str(platform), "--scheduler", "easy",
                 "--max-jobs", "300", "--demand-rounds", "4", "--recorded-speed", "1e9", "--reference-io-rate", "1e7",
                 "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert main(["analyze", str(tmp_path / "run"), "--out", str(tmp_path / "analysis")]) == 0
    measured = pd.read_csv(tmp_path / "analysis" / "io_per_job.csv", dtype={"job_id": str})
    recorded = pd.read_csv(tmp_path / "run" / "jobs.csv", dtype={"job_id": str})
    log = read_swf(SDSC_LOG).jobs
    cpu_field = log.set_index(log["job_id"].astype(str))["average_cpu_time"]
    table = measured.merge(recorded, on="job_id").dropna(subset=["cpu_time"])
    assert len(table) > 150  # (the others reached their walltime, slowed by the storage link)
    run_time = table["run_time"].to_numpy()
    average = cpu_field.loc[table["job_id"]].to_numpy()
    cpu = np.where(average >= 0, np.minimum(average, run_time), run_time)
    np.testing.assert_allclose(table["cpu_time"], cpu * table["hosts"], rtol=1e-9)
    np.testing.assert_allclose(table["bytes_read"], (run_time - cpu) * 1e7 * table["hosts"], atol=4 * 128)
    assert (table["io_time"] >= run_time - cpu - 1e-5).all()
    assert (table["io_time"] > run_time - cpu + 1).any()  # some waited for the storage link
    per_type = pd.read_csv(tmp_path / "analysis" / "io_per_node_type.csv")
    assert per_type["io_host_seconds"].sum() == pytest.approx((table["io_time"] * table["hosts"]).sum())
    assert per_type["cpu_time"].sum() == pytest.approx(table["cpu_time"].sum())
    assert "CPU and I/O per node type" in (tmp_path / "analysis" / "report.html").read_text()
    # the web GUI's run page shows the same table
    page = run_detail_page(tmp_path, "run", Sandbox(tmp_path, [WORKLOADS, tmp_path]))
    shown = _component(page, "io-table").data
    assert [row["node_type"] for row in shown] == ["(untyped)"]
    assert float(shown[0]["cpu_time"]) == pytest.approx(per_type["cpu_time"].sum(), rel=1e-3)


def _component(tree, wanted: str):
    """The Dash component of id ``wanted`` in ``tree``."""
    pending = [tree]
    while pending:
        node = pending.pop()
        if getattr(node, "id", None) == wanted:
            return node
        children = getattr(node, "children", None)
        pending += children if isinstance(children, list) else [children] if children is not None else []
    raise AssertionError(f"no component {wanted!r}")


def test_runs_whose_jobs_move_no_bytes_get_no_io_tables(tmp_path):
    platform = write_platform(tmp_path / "io.xml", 128, 1e9, io_rate=1e7)
    assert main(["run", "--workload", str(SDSC_LOG), "--platform", str(platform), "--scheduler", "easy",
                 "--max-jobs", "50", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert main(["analyze", str(tmp_path / "run"), "--out", str(tmp_path / "analysis")]) == 0
    assert not (tmp_path / "analysis" / "io_per_job.csv").exists()
    assert "CPU and I/O per node type" not in (tmp_path / "analysis" / "report.html").read_text()
