"""Random job launch and completion overheads (Baranov et al. 2018, sections VI and VIII; issue 29, item 8).

Checked: the draws (seeded, uniform on [0, MAX] s each, rounded to the millisecond); the converted workload (each
job's profile runs between a delay of its launch overhead and one of its completion overhead, walltimes and
submissions unchanged, the jobs that now pass their walltime counted); the refusals (a seed without overheads, with
demand rounds, on a JSON workload, with a replay that registers its jobs); simulated runs (every job not killed runs
its run time at the platform's node speed plus its overheads, which do not scale; run.json records both options, and
a run without them records neither); and, on a real Batsim, the same out_jobs.csv as the embedded engine.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import WORKLOADS
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.platforms.generate import write_platform
from batreplay.run.runner import RunSpec, run
from batreplay.run.spec import RunSpecError
from batreplay.workloads.loading import WorkloadError, WorkloadOptions, load_workload
from batreplay.workloads.overheads import JobOverheads

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


@settings(max_examples=40, deadline=None)
@given(high=st.floats(0.001, 3600), seed=st.integers(0, 2**32 - 1), nb_jobs=st.integers(0, 300))
def test_the_draws_are_seeded_bounded_and_in_milliseconds(high, seed, nb_jobs):
    launch, completion = JobOverheads(high, seed).draw(nb_jobs)
    assert launch.shape == completion.shape == (nb_jobs,)
    again = JobOverheads(high, seed).draw(nb_jobs)
    assert np.array_equal(launch, again[0]) and np.array_equal(completion, again[1])  # one seed, one set
    for part in (launch, completion):
        assert (part >= 0).all() and (part <= round(high, 3) + 1e-9).all()
        assert np.allclose(part * 1000, np.round(part * 1000), atol=1e-6)  # rounded to the millisecond
    if nb_jobs >= 10 and high >= 1:
        assert not np.array_equal(launch, JobOverheads(high, seed + 1).draw(nb_jobs)[0])


@pytest.mark.parametrize("profile", ["delay", "parallel_homogeneous"])
def test_each_job_runs_between_its_launch_and_completion_overheads(profile):
    plain = load_workload(KTH, WorkloadOptions(profile=profile, max_jobs=500))
    loaded = load_workload(KTH, WorkloadOptions(profile=profile, max_jobs=500, overheads=60, overhead_seed=4))
    table = loaded.job_table
    launch, completion = JobOverheads(60, 4).draw(500)
    assert np.array_equal(table["launch_overhead"], launch) and np.array_equal(table["completion_overhead"], completion)
    profiles = loaded.document["profiles"]
    for job, before, after, original in zip(loaded.document["jobs"], launch, completion, plain.document["jobs"]):
        steps = profiles[job["profile"]]["seq"]
        assert profiles[job["profile"]]["type"] == "composed" and profiles[job["profile"]]["repeat"] == 1
        delays = [profiles[step]["delay"] for step in steps if step.startswith("overhead_")]
        assert [step for step in steps if not step.startswith("overhead_")] == [original["profile"]]
        assert delays == [value for value in (before, after) if value > 0]
        assert profiles[original["profile"]] == plain.document["profiles"][original["profile"]]  # run itself as is
    for key in ("id", "subtime", "walltime", "res"):  # the job stream itself is unchanged (Baranov et al., Sect. VII)
        assert [job[key] for job in loaded.document["jobs"]] == [job[key] for job in plain.document["jobs"]]
    past = ((table["run_time"] + launch + completion > table["walltime"]) & (table["run_time"] <= table["walltime"]))
    assert f"recorded node speed, {int(past.sum())} jobs run past their walltime" in "\n".join(loaded.notes)
    assert past.sum() > 0  # KTH-SP2 has jobs that ran up to their requested time


def test_overheads_are_refused_where_they_would_be_ignored(tmp_path):
    with pytest.raises(WorkloadError, match=r"overhead_seed \(--overhead-seed\) needs overheads"):
        WorkloadOptions(overhead_seed=3)
    with pytest.raises(WorkloadError, match="do not combine"):
        WorkloadOptions(overheads=10, demand_rounds=2)
    with pytest.raises(WorkloadError, match=r"--overheads: .*above 0|overheads"):
        WorkloadOptions(overheads=0)
    document = {"nb_res": 1, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 5}}}
    (tmp_path / "w.json").write_text(json.dumps(document))
    with pytest.raises(WorkloadError, match=r"w.json: overheads \(--overheads\) converts SWF logs"):
        load_workload(tmp_path / "w.json", WorkloadOptions(overheads=10))


@pytest.mark.parametrize("speed", [1e9, 2e9])
def test_a_run_with_overheads_runs_them_and_records_them(tmp_path, speed):
    """The run follows the node speed, the overheads do not: on nodes twice as fast a job computes half its run
    time, then still waits its overheads."""
    platform = write_platform(tmp_path / "p.xml", 100, speed)
    spec = dict(workload=KTH, platform=platform, scheduler="easy", max_jobs=800)
    run(RunSpec.build(out_dir=tmp_path / "plain", **spec))
    run(RunSpec.build(out_dir=tmp_path / "s1", overheads=20.0, overhead_seed=1, **spec))
    out = pd.read_csv(tmp_path / "s1" / "out_jobs.csv").set_index("job_id")
    jobs = pd.read_csv(tmp_path / "s1" / "jobs.csv").set_index("job_id").loc[out.index]
    done = out["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert done.sum() > 700
    expected = jobs["run_time"] * 1e9 / speed + jobs["launch_overhead"] + jobs["completion_overhead"]
    assert np.allclose(out.loc[done, "execution_time"], expected[done], atol=1e-5)
    killed = out["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert (expected[killed] >= out.loc[killed, "requested_time"] - 1e-5).all()
    recorded = json.loads((tmp_path / "s1" / "run.json").read_text())["spec"]
    assert recorded["overheads"] == 20.0 and recorded["overhead_seed"] == 1
    plain = json.loads((tmp_path / "plain" / "run.json").read_text())["spec"]
    assert "overheads" not in plain and "overhead_seed" not in plain  # older run descriptions stay the same


def test_overheads_need_a_rigid_replay():
    with pytest.raises(RunSpecError, match=r"overheads \(--overheads\) with the feedback replay: .*use a rigid"):
        RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir="unused", overheads=5.0,
                      replay="feedback")


@pytest.mark.slow
def test_overheads_on_a_real_batsim_equal_the_embedded_engine(real_batsim, tmp_path):
    spec = dict(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=3000, overheads=30.0, overhead_seed=1)
    run(RunSpec.build(out_dir=tmp_path / "embedded", **spec))
    run(RunSpec.build(out_dir=tmp_path / "real", engine="batsim", batsim=real_batsim, **spec))
    embedded = (tmp_path / "embedded" / "out_jobs.csv").read_bytes()
    assert embedded == (tmp_path / "real" / "out_jobs.csv").read_bytes()  # byte for byte
    assert json.loads((tmp_path / "real" / "run.json").read_text())["engine"] == "batsim"
