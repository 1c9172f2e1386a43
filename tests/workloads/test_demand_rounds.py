"""Demand rounds (issue 27, item 3; Caspart et al. 2019): SWF jobs become rounds of reading and computing. The
mapping on a small log written here, its notes, its options, and the run time it gives on a platform of the
recorded node speed and reference I/O rate."""

from __future__ import annotations

import json

import pytest

from batreplay.cli import main
from batreplay.platforms.generate import write_platform
from batreplay.workloads.loading import WorkloadError, WorkloadOptions, load_workload

# SWF fields: job, submit, wait, run, alloc procs, avg CPU, mem, req procs, req time, req mem, status, user, group,
# app, queue, partition, preceding, think time
LOG = """; MaxProcs: 4
1 0 0 100 1 60 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1
2 10 0 50 2 -1 -1 2 100 -1 1 2 1 -1 1 -1 -1 -1
3 20 0 40 1 80 -1 1 100 -1 1 3 1 -1 1 -1 -1 -1
"""


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "small.swf"
    path.write_text(LOG)
    return path


def test_cpu_times_of_the_log_split_each_job_into_reads_and_computations(log):
    loaded = load_workload(log, WorkloadOptions(demand_rounds=4, reference_io_rate=1e6), nb_res=4)
    profiles = loaded.document["profiles"]
    first = profiles[loaded.document["jobs"][0]["profile"]]
    # job 1: 100 s, 60 s of CPU: 40 s of reading at 1e6 B/s = 4e7 bytes, a quarter per round; 60 Gflop / 4
    assert first["type"] == "composed" and first["repeat"] == 4
    read, compute = (profiles[name] for name in first["seq"])
    assert read == {"type": "parallel_homogeneous_pfs", "bytes_to_read": 10_000_000, "bytes_to_write": 0}
    assert compute == {"type": "parallel_homogeneous", "cpu": 15_000_000_000, "com": 0}
    # job 2 has no CPU time: it only computes, and a note counts it
    second = profiles[loaded.document["jobs"][1]["profile"]]
    assert [profiles[name]["type"] for name in second["seq"]] == ["parallel_homogeneous"]
    assert any("1 of 3 jobs have no CPU time" in note for note in loaded.notes)
    # job 3: a CPU time above the run time is cut to it: no reading
    third = profiles[loaded.document["jobs"][2]["profile"]]
    assert profiles[third["seq"][0]]["cpu"] == 10_000_000_000 and len(third["seq"]) == 1
    assert list(loaded.job_table["profile"]) == [job["profile"] for job in loaded.document["jobs"]]


def test_an_io_share_applies_to_every_job(log):
    loaded = load_workload(log, WorkloadOptions(demand_rounds=2, io_share=0.25, reference_io_rate=1e6), nb_res=4)
    profiles = loaded.document["profiles"]
    steps = [[profiles[name] for name in profiles[job["profile"]]["seq"]] for job in loaded.document["jobs"]]
    assert [s[0]["bytes_to_read"] for s in steps] == [12_500_000, 6_250_000, 5_000_000]  # 25 % of 100, 50, 40 s
    assert [s[1]["cpu"] for s in steps] == [37_500_000_000, 18_750_000_000, 15_000_000_000]
    assert not any("CPU time" in note for note in loaded.notes)


def test_io_share_needs_demand_rounds_and_stays_below_one():
    with pytest.raises(WorkloadError, match="needs demand_rounds"):
        WorkloadOptions(io_share=0.2)
    with pytest.raises(WorkloadError, match="io_share"):
        WorkloadOptions(demand_rounds=2, io_share=1.0)


def test_jobs_alone_last_their_recorded_run_time_where_the_nodes_read_at_the_reference_rate(log, tmp_path):
    """Recorded speed 1 Gflop/s and I/O rate 1e6 B/s on the platform: each job, alone, reads and computes for its
    recorded run time (job 2 reads on two nodes: the storage link, 4 x 1e6 B/s by default, carries both at full
    speed)."""
    platform = write_platform(tmp_path / "io.xml", 4, 1e9, io_rate=1e6)
    argv = ["run", "--workload", str(log), "--platform", str(platform), "--scheduler", "fcfs", "--out",
            str(tmp_path / "run"), "--quiet", "--demand-rounds", "3", "--io-share", "0.3", "--reference-io-rate",
            "1e6"]
    assert main(argv) == 0
    rows = (tmp_path / "run" / "out_jobs.csv").read_text().splitlines()[1:]
    times = {row.split(",")[0]: float(row.split(",")[9]) for row in rows}
    assert times == pytest.approx({"1": 100.0, "2": 50.0, "3": 40.0}, abs=1e-5)
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert "demand_rounds" in json.dumps(recorded) and "io_share" in json.dumps(recorded)


def test_jobs_whose_cpu_time_is_above_the_run_time_or_zero_are_counted(tmp_path):
    path = tmp_path / "cpu.swf"
    path.write_text(LOG + "4 30 0 20 1 0 -1 1 100 -1 1 4 1 -1 1 -1 -1 -1\n")
    loaded = load_workload(path, WorkloadOptions(demand_rounds=2, reference_io_rate=1e6), nb_res=4)
    assert any("1 of 4 jobs have a CPU time above their run time" in note for note in loaded.notes)
    assert any("1 of 4 jobs have a CPU time of 0: they only read" in note for note in loaded.notes)
    zero = loaded.document["profiles"][loaded.document["jobs"][3]["profile"]]
    assert [loaded.document["profiles"][name]["type"] for name in zero["seq"]] == ["parallel_homogeneous_pfs"]


def test_rounds_batsim_would_misread_or_that_do_nothing_are_refused_naming_the_job(tmp_path, log):
    with pytest.raises(WorkloadError, match=r"job 1 \(SWF line 2\) in 1 rounds reads more than 2\*\*53 bytes"):
        load_workload(log, WorkloadOptions(demand_rounds=1, io_share=0.5, reference_io_rate=9e14), nb_res=4)
    path = tmp_path / "idle.swf"  # a job of 1 s that spent no CPU: 0.3 bytes per round at 1 B/s
    path.write_text("; MaxProcs: 4\n1 0 0 1 1 0 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    with pytest.raises(WorkloadError, match="neither computes 1 flop .* nor reads 1 byte per round"):
        load_workload(path, WorkloadOptions(profile="delay", demand_rounds=3, reference_io_rate=1.0), nb_res=4)


def test_demand_rounds_are_refused_where_they_would_be_ignored_or_fail_later(tmp_path, log):
    from batreplay.run.spec import RunSpec, RunSpecError

    json_workload = tmp_path / "w.json"
    json_workload.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d"}],
                                         "profiles": {"d": {"type": "delay", "delay": 1}}}))
    with pytest.raises(WorkloadError, match="converts SWF logs; this is a Batsim JSON workload"):
        load_workload(json_workload, WorkloadOptions(demand_rounds=2))
    with pytest.raises(WorkloadError, match="reference_io_rate .* needs demand_rounds"):
        WorkloadOptions(reference_io_rate=5e6)
    with pytest.raises(RunSpecError, match="with the feedback replay"):
        RunSpec.build(workload=log, platform="kth-sp2", scheduler="easy", out_dir=tmp_path / "x", replay="feedback",
                      demand_rounds=2)
