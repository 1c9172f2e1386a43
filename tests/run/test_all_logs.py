"""Every built-in scheduler completes on every log of ``../shared/workloads`` with the invariants of out_jobs.csv.

Each log runs, through :func:`batreplay.run.runner.run` and the embedded engine, on a cluster of as many nodes as the
log's header gives processors (``MaxProcs``; else ``MaxNodes``; else the widest job), since the SWF conversion
turns each processor into one Batsim resource. Checked on the written ``out_jobs.csv``:

- one row per job of the simulated ``workload.json``, none rejected (every job fits the platform);
- no resource used by two jobs at the same time;
- no job starts before its submission;
- ``finish_time = starting_time + execution_time`` (Batsim's printed times, 1e-6 s resolution);
- each job got as many resources as it requested.

Issue 9 item 12: conservative backfilling crashed on LANL-CM5 (a job started a microsecond after its reservation
and the reservations behind it then overlapped it; the generated case is in tests/schedulers/test_scheduler_properties.py, the
reported run in :func:`test_conservative_completes_the_first_12000_jobs_of_lanl_cm5`). Whole logs are long (about
36 min for the 48 runs on a 2-core machine, see :data:`CONSERVATIVE_FULL`), so these runs are marked ``slow`` and,
in the suite, simulate the first :data:`SUITE_MAX_JOBS` jobs of each log. With ``BATREPLAY_FULL_LOGS=1``, FCFS and
EASY run the full logs and conservative backfilling, which compresses every reservation at every early termination,
the full logs of :data:`CONSERVATIVE_FULL` and the first :data:`CONSERVATIVE_MAX_JOBS` jobs of the others.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from procset import ProcSet

from batreplay.platforms.generate import cluster_platform, write_platform_text
from batreplay.platforms.shipped import REFERENCE_NODE_SPEED
from batreplay.workloads.swf import read_swf
from batreplay.run.runner import RunSpec, run

from conftest import WORKLOADS

#: Slack for comparing Batsim's printed times (six decimals).
TOLERANCE = 2e-6

LOGS = sorted(path.name for path in WORKLOADS.glob("*.swf.gz")) if WORKLOADS.is_dir() else []

#: Machine sizes (processors) of logs whose header gives none: METACENTRUM-2009-2 had 806 processors in 14
#: clusters (the archive's page for the log; expe/fcfs-vs-easy.toml uses the same count).
NODES_WITHOUT_HEADER = {"METACENTRUM-2009-2.swf.gz": 806}

#: Jobs simulated per log in the test suite (the first ones, file order): the 48 runs stay within minutes of
#: CI time. ``BATREPLAY_FULL_LOGS=1`` runs whole logs instead (conservative backfilling: the first
#: :data:`CONSERVATIVE_MAX_JOBS`), for the by-hand check of every log.
SUITE_MAX_JOBS = 5_000
FULL_LOGS = os.environ.get("BATREPLAY_FULL_LOGS", "") not in ("", "0")
CONSERVATIVE_MAX_JOBS = 20_000
#: Logs conservative backfilling runs in full with ``BATREPLAY_FULL_LOGS=1``: all but METACENTRUM (806 nodes, long
#: queues that every early termination compresses: 560 s in full) and LCG (24,515 one-processor nodes: 372 s).
#: Measured on a 2-core machine shared with other work, checks included: 5-200 s per full log (HPC2N 198 s,
#: SDSC-BLUE 119 s, LANL-CM5 94 s), about 12 min for these 14; FCFS and EASY 4-125 s per full log (LCG 110-125 s,
#: SDSC-BLUE 107-116 s, HPC2N 74-79 s), about 22 min for the 32 runs.
CONSERVATIVE_FULL = frozenset(LOGS) - {"METACENTRUM-2009-2.swf.gz", "LCG.swf.gz"}


def platform_size(path: Path) -> int:
    """Nodes for a log: its header's ``MaxProcs``, else ``MaxNodes``, else :data:`NODES_WITHOUT_HEADER`, else its
    widest job (processors)."""
    if path.name in NODES_WITHOUT_HEADER:
        return NODES_WITHOUT_HEADER[path.name]
    log = read_swf(path)
    for size in (log.max_procs, log.max_nodes):
        if size is not None and size > 0:
            return int(size)
    jobs = log.jobs
    res = np.where(jobs["allocated_processors"] > 0, jobs["allocated_processors"], jobs["requested_processors"])
    return int(res.max())


def check_out_jobs(out_dir: Path) -> int:
    """Check the invariants of ``out_dir/out_jobs.csv`` against ``out_dir/workload.json``; returns the rows."""
    workload = json.loads((out_dir / "workload.json").read_text())
    expected = sorted(str(job["id"]) for job in workload["jobs"])
    out = pd.read_csv(out_dir / "out_jobs.csv", dtype={"job_id": str, "allocated_resources": str})

    assert not out["job_id"].duplicated().any(), "a job has several rows"
    assert sorted(out["job_id"]) == expected, "not one row per job of the workload"
    assert (out["final_state"] != "REJECTED").all(), "a job that fits the platform was rejected"

    start = out["starting_time"].to_numpy()
    finish = out["finish_time"].to_numpy()
    assert (start >= out["submission_time"].to_numpy() - TOLERANCE).all(), "a job started before its submission"
    assert np.abs(finish - (start + out["execution_time"].to_numpy())).max() <= TOLERANCE, (
        "finish_time != starting_time + execution_time"
    )

    # No resource used twice at once: expand each job's intervals into (resource, start, finish) rows, sort by
    # resource then start, and compare each start with the previous finish on the same resource.
    firsts: list[int] = []
    lasts: list[int] = []
    owner: list[int] = []
    for row, text in enumerate(out["allocated_resources"].to_numpy()):
        for interval in ProcSet.from_str(text).intervals():
            firsts.append(interval.inf)
            lasts.append(interval.sup)
            owner.append(row)
    firsts_a = np.asarray(firsts, dtype=np.int64)
    widths = np.asarray(lasts, dtype=np.int64) - firsts_a + 1
    owner_a = np.asarray(owner, dtype=np.int64)
    sizes = np.bincount(owner_a, weights=widths, minlength=len(out)).astype(np.int64)
    assert (sizes == out["requested_number_of_resources"].to_numpy()).all(), "allocation size != request"
    offsets = np.arange(widths.sum()) - np.repeat(np.cumsum(widths) - widths, widths)
    resource = np.repeat(firsts_a, widths) + offsets
    rows = np.repeat(owner_a, widths)
    order = np.lexsort((start[rows], resource))
    resource, rows = resource[order], rows[order]
    same = resource[1:] == resource[:-1]
    overlap = same & (start[rows[1:]] < finish[rows[:-1]] - TOLERANCE)
    if overlap.any():
        at = int(np.flatnonzero(overlap)[0])
        pytest.fail(
            f"resource {resource[at]} used by jobs {out['job_id'].iloc[rows[at]]} and "
            f"{out['job_id'].iloc[rows[at + 1]]} at once"
        )
    return len(out)


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "conservative"])
@pytest.mark.parametrize("log", LOGS)
def test_scheduler_completes_log_with_out_jobs_invariants(tmp_path, workloads_dir, log, scheduler):
    path = workloads_dir / log
    platform = write_platform_text(tmp_path / "platform.xml", cluster_platform(platform_size(path),
                                                                               REFERENCE_NODE_SPEED))
    max_jobs = None if FULL_LOGS else SUITE_MAX_JOBS
    if FULL_LOGS and scheduler == "conservative" and log not in CONSERVATIVE_FULL:
        max_jobs = CONSERVATIVE_MAX_JOBS
    result = run(RunSpec.build(workload=path, platform=platform, scheduler=scheduler, out_dir=tmp_path / "run",
                         max_jobs=max_jobs))
    assert check_out_jobs(result.out_dir) > 0


@pytest.mark.slow
def test_conservative_completes_the_first_12000_jobs_of_lanl_cm5(tmp_path, workloads_dir):
    """Issue 9 item 12, as reported: conservative backfilling on LANL-CM5's 1024 nodes stopped at t = 3227043 s with
    ``reserving -32 nodes ... leaves -448 - -32 < 0 free`` (job 9191 started 1 us after its reservation)."""
    path = workloads_dir / "LANL-CM5-1994-4.1-cln.swf.gz"
    platform = write_platform_text(tmp_path / "cm5.xml", cluster_platform(1024, REFERENCE_NODE_SPEED))
    result = run(RunSpec.build(workload=path, platform=platform, scheduler="conservative", out_dir=tmp_path / "run",
                         max_jobs=12_000))
    assert check_out_jobs(result.out_dir) == 12_000


def test_invariant_check_finds_a_resource_used_twice(tmp_path):
    """The overlap check is not vacuous: two jobs sharing resource 3 over [5, 10) are caught."""
    (tmp_path / "workload.json").write_text(json.dumps({"jobs": [{"id": 1}, {"id": 2}]}))
    header = ("job_id,submission_time,requested_number_of_resources,final_state,starting_time,execution_time,"
              "finish_time,allocated_resources\n")
    (tmp_path / "out_jobs.csv").write_text(
        header + "1,0,2,COMPLETED_SUCCESSFULLY,0,10,10,2-3\n2,0,1,COMPLETED_SUCCESSFULLY,5,10,15,3\n"
    )
    with pytest.raises(pytest.fail.Exception, match="resource 3 used by jobs 1 and 2"):
        check_out_jobs(tmp_path)
    (tmp_path / "out_jobs.csv").write_text(
        header + "1,0,2,COMPLETED_SUCCESSFULLY,0,10,10,2-3\n2,0,1,COMPLETED_SUCCESSFULLY,10,5,15,3\n"
    )
    assert check_out_jobs(tmp_path) == 2
