"""Batsim's EXECUTE_JOB ``mapping`` on the embedded engine: several executors of a job on one host (Caspart et al.
2019's jobs of several threads on one node). Its checks (Batsim 4.2.1 aborts on the same mappings), and (hypothesis)
runs of random mappings under compute sharing: no host gives more than its cores, no executor more than one core,
every job ends once, time never goes back. Exactness against a real Batsim: recorded cases ``mapping-sharing`` and
``mapping-exclusive`` (``test_recorded_cases.py``, ``test_real_batsim_recorded.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from batsim.batsim import BatsimScheduler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.options import EngineError, EngineOptions
from batreplay.engine.sharing import SharedHosts, SharedTask
from batreplay.engine.simulator import BatsimEngine
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.platforms.reader import read_platform
from test_engine_properties import Recorder

#: node_0-3: 1 Gflop/s, 4 cores; node_4-5: 2 Gflop/s, 1 core.
PLATFORM = Path(__file__).resolve().parents[1] / "golden" / "mapping-sharing" / "platform.xml"
SPEEDS, CORES = [1e9] * 4 + [2e9] * 2, [4] * 4 + [1] * 2


class Planned(BatsimScheduler):
    """Starts each job at its submission with the allocation and mapping of :attr:`plan` (job number -> (hosts,
    mapping object))."""

    plan: dict = {}

    def onJobSubmission(self, job):
        hosts, mapping = self.plan[int(job.id.split("!")[-1])]
        job.allocation = ProcSet(*hosts)
        job.mapping = mapping
        self.bs.execute_job(job)

    def onJobCompletion(self, job):
        pass


def _run(jobs, profiles, plan, sharing=True, recorder=None):
    platform = read_platform(PLATFORM)
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": {"jobs": jobs, "profiles": profiles}},
                          options=EngineOptions(compute_sharing=sharing), cores=[h.cores for h in platform.hosts],
                          network=platform.network, master_host=platform.master_host)
    scheduler = Planned()
    scheduler.plan = plan
    run_scheduler(engine, scheduler, on_request=recorder)
    return engine


def _job(number, res, profile="c", subtime=0):
    return {"id": str(number), "subtime": subtime, "res": res, "walltime": 100, "profile": profile}


PROFILES = {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
            "talk": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}}


@pytest.mark.parametrize("mapping, words", [
    ([0, 0], r"bad mapping \[0, 0\] \(it must be a non-empty object"),
    ({}, "it must be a non-empty object"),
    ({"0": "zero", "1": "0"}, "'zero' is not an integer nor a string that starts with one"),
    ({"0": 0, "1": 2**31}, "beyond 32-bit integers"),
    ({"0": 0, "2": 0}, "gives no resource to executor 1"),
    ({"0": 0, "1": 1}, "gives executor 1 the resource 1 of an allocation of 1"),
    ({"0": 0, "1": 0, "2": 0}, "the job requests 2 resources but its mapping has 3 executors"),
])
def test_a_mapping_batsim_aborts_on_stops_the_run_naming_the_job(mapping, words):
    with pytest.raises(EngineError, match=rf"EXECUTE_JOB 'w0!1': .*{words}"):
        _run([_job(1, 2)], PROFILES, {1: ([0], mapping)})


def test_mapping_strings_are_read_as_batsims_stoi_reads_them_and_a_later_key_wins():
    # " +1" and "1.5" are 1, "0x1" is 0, "00" names executor 0 again (the later wins): executors 0 and 1 on host 1
    engine = _run([_job(1, 2)], PROFILES, {1: ([0, 1], {"0": "0x1", " +1": "1.5", "00": "1"})})
    assert engine.handlers.jobs["w0!1"].executors == [1, 1]


def test_several_executors_on_one_host_are_refused_for_jobs_that_move_bytes():
    with pytest.raises(EngineError, match="several executors on one host is not played for jobs that move bytes"):
        _run([_job(1, 2, "talk")], PROFILES, {1: ([0], {"0": 0, "1": 0})})
    engine = _run([_job(1, 2, "talk")], PROFILES, {1: ([0, 1], {"0": 1, "1": 0})})  # one per host: played
    assert engine.records[0].final_state == "COMPLETED_SUCCESSFULLY"


def test_executors_on_a_host_of_several_cores_compute_at_once_up_to_its_cores():
    engine = _run([_job(1, 4), _job(2, 8), _job(3, 2)], PROFILES,
                  {1: ([0], {str(k): 0 for k in range(4)}), 2: ([1], {str(k): 0 for k in range(8)}),
                   3: ([4], {"0": 0, "1": 0})}, sharing=False)
    finish = {r.job_id: r.finish_time for r in engine.records}
    assert finish == {"1": 1.0, "2": 2.0, "3": 1.0}  # 4 on 4 cores; 8 on 4 cores; 2 on one core twice as fast


@st.composite
def mapped_workloads(draw):
    jobs, plan, profiles = [], {}, {}
    for number in range(1, draw(st.integers(1, 10)) + 1):
        hosts = sorted(draw(st.sets(st.integers(0, 5), min_size=1, max_size=3)))
        mapping = draw(st.lists(st.integers(0, len(hosts) - 1), min_size=1, max_size=9))
        cpu = draw(st.lists(st.sampled_from([0.0, 5e8, 1e9, 3e9]), min_size=len(mapping), max_size=len(mapping)))
        profiles[f"p{number}"] = {"type": "parallel", "cpu": cpu, "com": [0] * len(cpu) ** 2}
        jobs.append(_job(number, len(mapping), f"p{number}", draw(st.integers(0, 5))))
        plan[number] = (hosts, {str(k): index for k, index in enumerate(mapping)})
    return jobs, profiles, plan


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mapped_workloads())
def test_runs_of_mapped_jobs_keep_time_cores_and_every_job(case):
    jobs, profiles, plan = case
    recorder = Recorder()
    engine = _run(jobs, profiles, plan, recorder=recorder)
    out = jobs_frame(engine.records)
    assert recorder.nows == sorted(recorder.nows)  # time never goes back
    assert sorted(out["job_id"]) == sorted(job["id"] for job in jobs)  # every job ends once
    for row in out.itertuples():  # no executor computes faster than one core of its host
        hosts, mapping = plan[int(row.job_id)]
        cpu = profiles[row.profile]["cpu"]
        alone = max([flop / SPEEDS[hosts[index]] for flop, index in zip(cpu, mapping.values())])
        assert row.execution_time >= alone - 1e-6


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([1e8, 1e9, 4e9])), min_size=1, max_size=6),
                min_size=1, max_size=6))
def test_no_host_gives_more_than_its_cores_and_no_executor_more_than_one(tasks):
    solver = SharedHosts(SPEEDS, CORES)
    placed = [SharedTask.of_executors([h for h, _ in executors], [a for _, a in executors], solver=solver)
              for executors in tasks]
    for task in placed:
        solver.add(task)
    for host in range(len(SPEEDS)):
        used = sum(task.amounts.get(host, 0.0) * task.rate for task in placed)
        assert used <= SPEEDS[host] * CORES[host] * (1 + 1e-9)
    for task, executors in zip(placed, tasks):
        assert 0 < task.rate < float("inf")
        assert all(amount * task.rate <= SPEEDS[host] * (1 + 1e-9) for host, amount in executors)
