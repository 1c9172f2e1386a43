"""EASY as Schedulus applies it (Rauch 2022; :mod:`batreplay.schedulers.schedulus`): hand-worked scenarios of its
shadow time, triggers, strict time test and estimates; the adapter's ``estimate_field``; the registry; a property
test of capacity; and a run of the embedded engine on the start of the CTC-SP2 log.

Jobs are written name(nodes, walltime); N = number of nodes.
"""

from __future__ import annotations

import json

import pytest
from batsim.batsim import Job
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batreplay.formats.out_jobs import read_out_jobs
from batreplay.platforms.generate import write_platform
from batreplay.run.runner import RunSpec, run
from batreplay.schedulers.easy import EasyPolicy
from batreplay.schedulers.policy import QueuedJob
from batreplay.schedulers.registry import SCHEDULERS, describe, load_scheduler
from batreplay.schedulers.schedulus import Schedulus, SchedulusEasyPolicy
from batreplay.workloads.batsim_workload import swf_to_workload
from batreplay.workloads.swf import read_swf
from conftest import REPO_ROOT

CTC = REPO_ROOT.parent / "shared" / "workloads" / "CTC-SP2-1996-3.1-cln.swf.gz"


def started(decisions) -> dict[str, str]:
    return {job.id: str(allocation) for job, allocation in decisions}


def loaded(policy, now: float, *jobs: QueuedJob) -> dict[str, str]:
    for job in jobs:
        assert policy.submit(job) is None
    return started(policy.decide(now))


def test_shadow_time_is_the_latest_expected_end_so_the_head_can_be_delayed():
    # N=4. t=0: A(2, 10) on 0-1, B(1, 100) on 2, H(3) waits: 1 node free. Schedulus walks the running jobs by
    # expected end: after A the head fits (extra 0), but the walk goes on and the shadow time becomes B's end,
    # 100. At t=1, C(1, 50) ends at 51 < 100: started on node 3, although it delays H past t=10. EASY's shadow
    # time is 10 and refuses C.
    for policy_class, expected in ((SchedulusEasyPolicy, {"C": "3"}), (EasyPolicy, {})):
        policy = policy_class(4)
        assert loaded(policy, 0.0, QueuedJob("A", 2, 10), QueuedJob("B", 1, 100)) == {"A": "0-1", "B": "2"}
        assert loaded(policy, 1.0, QueuedJob("H", 3, 10)) == {}
        assert loaded(policy, 1.0, QueuedJob("C", 1, 50)) == expected
    policy = SchedulusEasyPolicy(4)
    loaded(policy, 0.0, QueuedJob("A", 2, 10), QueuedJob("B", 1, 100), QueuedJob("H", 3, 10))
    assert policy.shadow(policy.queue[0]) == (100.0, 0)


def test_time_test_is_strict_and_extra_nodes_are_counted_where_the_head_first_fits():
    # N=4. A(3, 10) runs; H(4) waits; the shadow time is 10 and the extra nodes 4 - 4 = 0.
    # D(1, 9) ends at 9 < 10: backfilled. E(1, 10) ends at 10, not before: refused (EASY would take it).
    policy = SchedulusEasyPolicy(4)
    loaded(policy, 0.0, QueuedJob("A", 3, 10))
    assert loaded(policy, 0.0, QueuedJob("H", 4, 5), QueuedJob("E", 1, 10)) == {}
    assert loaded(policy, 0.0, QueuedJob("D", 1, 9)) == {"D": "3"}
    # N=6. A(2, 10), B(2, 20) run; H(3) waits with 2 free nodes: it fits after A (4 free, extra 1); the shadow
    # time is B's end, 20. F(1, 500) goes on the extra node; G(1, 500) then finds no extra node left.
    policy = SchedulusEasyPolicy(6)
    loaded(policy, 0.0, QueuedJob("A", 2, 10), QueuedJob("B", 2, 20))
    assert policy.shadow(QueuedJob("H", 3, 1)) == (20.0, 1)
    assert loaded(policy, 0.0, QueuedJob("H", 3, 1), QueuedJob("F", 1, 500), QueuedJob("G", 1, 500)) == {"F": "4"}


def test_a_completion_that_starts_a_head_job_does_not_backfill_but_the_next_submission_does():
    # N=6. t=0: A(3, 10) on 0-2, B(2, 100) on 3-4, node 5 free. Queue: H1(2, 10), H2(4, 1000), T(2, 50): none fits.
    # t=10, A ends (free 0-2, 5): H1 starts from the head on 0-1; H2 does not fit. T would pass the time test
    # (10 + 50 < shadow 100, B's end) on the free nodes 2 and 5, but a completion that started a head job does
    # not backfill. t=11, a submission (U(1, 1)) does: T starts on 2 and 5; U finds no node left.
    policy = SchedulusEasyPolicy(6)
    assert loaded(policy, 0.0, QueuedJob("A", 3, 10), QueuedJob("B", 2, 100)) == {"A": "0-2", "B": "3-4"}
    assert loaded(policy, 0.0, QueuedJob("H1", 2, 10), QueuedJob("H2", 4, 1000), QueuedJob("T", 2, 50)) == {}
    policy.complete("A")
    assert started(policy.decide(10.0)) == {"H1": "0-1"}
    assert policy.shadow(policy.queue[0]) == (100.0, 0)
    assert loaded(policy, 11.0, QueuedJob("U", 1, 1)) == {"T": "2 5"}
    assert [job.id for job in policy.queue] == ["H2", "U"]


def test_estimates_replace_walltimes_and_a_negative_one_is_used_as_a_number():
    # N=4. A(2, walltime 1000, estimate 10) and X(1, walltime 1000, no estimate) run; H(3) waits: the shadow time
    # is the latest expected end, X's walltime 1000. With A alone, A's estimate 10 counts (not its walltime).
    # C(1, walltime 5, estimate -1): now - 1 < 10, started (Schedulus uses an unknown requested time as -1).
    estimates = {"A": 10.0, "C": -1.0}
    policy = SchedulusEasyPolicy(4, estimates)
    loaded(policy, 0.0, QueuedJob("A", 2, 1000), QueuedJob("X", 1, 1000))
    assert policy.shadow(QueuedJob("H", 3, 1)) == (1000.0, 0)  # X has no estimate: its walltime
    policy = SchedulusEasyPolicy(4, estimates)
    loaded(policy, 0.0, QueuedJob("A", 2, 1000))
    assert policy.estimate(QueuedJob("A", 2, 1000)) == 10.0
    assert loaded(policy, 0.0, QueuedJob("H", 3, 1), QueuedJob("C", 1, 5)) == {"C": "2"}


class FakeBatsim:
    def __init__(self, nb: int):
        self.nb_compute_resources = nb
        self.compute_resources = {i: {"id": i} for i in range(nb)}
        self.now = 0.0
        self.executed: list[list[str]] = []

    def time(self) -> float:
        return self.now

    def execute_jobs(self, jobs):
        self.executed.append([job.id for job in jobs])

    def reject_jobs(self, jobs):  # pragma: no cover - no oversized job here
        raise AssertionError(jobs)


def job_of(job_id: str, res: int, walltime: float, **extra) -> Job:
    return Job.from_json_dict({"id": job_id, "subtime": 0, "walltime": walltime, "res": res, "profile": "p", **extra})


@pytest.mark.parametrize("field, expected", [("requested_time", [["w0!C"]]), (None, [])])
def test_adapter_reads_the_estimate_from_the_job_description(field, expected):
    # N=4, A(2) runs with walltime 1000 but requested_time 10; H(4) waits (extra nodes 0). C(1, walltime 2000,
    # requested 5): with the field the shadow time is 10 and C (5 < 10) backfills; with walltimes it is 1000 and
    # C (2000) does not.
    scheduler = Schedulus({"estimate_field": field})
    scheduler.bs = bs = FakeBatsim(4)
    scheduler.onSimulationBegins()
    for job in (job_of("w0!A", 2, 1000, requested_time=10), job_of("w0!H", 4, 10, requested_time=10)):
        scheduler.onJobSubmission(job)
    scheduler.onNoMoreEvents()
    assert bs.executed == [["w0!A"]]
    bs.executed.clear()
    scheduler.onJobSubmission(job_of("w0!C", 1, 2000, requested_time=5))
    scheduler.onNoMoreEvents()
    assert bs.executed == expected


def test_registry_entry_and_options():
    assert SCHEDULERS["easy-schedulus"] is Schedulus
    assert "Schedulus" in describe("easy-schedulus")
    assert isinstance(load_scheduler("easy-schedulus", {"estimate_field": "requested_time"}), Schedulus)
    with pytest.raises(ValueError, match="estimate_field"):
        load_scheduler("easy-schedulus", {"estimate_field": 3})
    with pytest.raises(ValueError, match="unknown option 'depth'"):
        load_scheduler("easy-schedulus", {"depth": 1})


events = st.lists(st.tuples(st.integers(1, 6), st.floats(1, 50), st.booleans()), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events)
def test_never_more_nodes_than_the_platform_and_every_job_runs(jobs):
    # Jobs (nodes, walltime, finishes-now-or-later) arrive one per time unit; each step completes the oldest
    # running job when asked. Capacity holds at every decision, and draining completes every job.
    policy = SchedulusEasyPolicy(6)
    running: list[str] = []
    seen: set[str] = set()
    now = 0.0
    for number, (nodes, walltime, finish) in enumerate(jobs):
        now += 1
        policy.submit(QueuedJob(f"j{number}", nodes, walltime))
        if finish and running:
            policy.complete(running.pop(0))
        for job, allocation in policy.decide(now):
            running.append(job.id)
            seen.add(job.id)
        assert sum(entry.job.requested_resources for entry in policy.running) <= 6
        assert policy.pool.nb_free == 6 - sum(entry.job.requested_resources for entry in policy.running)
    while running or policy.queue:
        now += 1
        policy.complete(running.pop(0))
        for job, _ in policy.decide(now):
            running.append(job.id)
            seen.add(job.id)
    assert seen == {f"j{n}" for n in range(len(jobs))}


def test_engine_run_on_the_start_of_ctc_sp2(tmp_path):
    # The first 3,000 jobs of CTC-SP2 on its 338 nodes, estimates from the SWF requested times: every job runs,
    # at no time do the running jobs use more than 338 nodes, and some job starts before a job submitted
    # earlier (backfilling happened).
    log = read_swf(CTC)
    converted = swf_to_workload(log, profile="parallel_homogeneous", node_speed=1e9, walltime_factor=1.0,
                                nb_res=338, max_jobs=3000, zero_runtime="min")
    document = converted.to_json_dict()
    requested = log.jobs.set_index("line")["requested_time"].loc[converted.job_table["swf_line"]]
    for job, value in zip(document["jobs"], requested.tolist()):
        job["requested_time"] = float(value)
    workload = tmp_path / "ctc3000.json"
    workload.write_text(json.dumps(document))
    platform = write_platform(tmp_path / "ctc.xml", 338, 1e9)
    spec = RunSpec.build(workload=workload, platform=platform, scheduler="easy-schedulus", out_dir=tmp_path / "run",
                         scheduler_options={"estimate_field": "requested_time"})
    result = run(spec)
    jobs = read_out_jobs(tmp_path / "run" / "out_jobs.csv")
    assert len(jobs) == 3000 and result.metrics["nb_rejected"] == 0
    moments = sorted([(t, n) for t, n in zip(jobs.finish_time, -jobs.requested_number_of_resources)]
                     + [(t, n) for t, n in zip(jobs.starting_time, jobs.requested_number_of_resources)])
    in_use = 0
    for _, change in moments:  # at equal times, releases (negative) come first
        in_use += change
        assert in_use <= 338
    by_submission = jobs.sort_values(["submission_time", "job_id"])
    assert (by_submission.starting_time.cummax() > by_submission.starting_time).any()
