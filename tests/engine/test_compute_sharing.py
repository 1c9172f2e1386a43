"""Compute sharing in the embedded engine (Batsim's ``--enable-compute-sharing``).

- :class:`~batreplay.engine.sharing.SharedHosts`, SimGrid's bottleneck solver, on cases computed by hand: the rules
  of ``../shared/batsim-golden-sharing/README.md`` and a case where its rounds differ from a max-min share;
- the engine on hand-made workloads: slowed jobs, walltime kills of slowed jobs, KILL_JOB progress;
- invariants on generated workloads (hypothesis): every job ends once, time never goes back, jobs start on
  submission, walltimes hold, delay jobs are never slowed and no computing job runs faster than alone on a core;
- with no host shared, sharing on changes nothing (KTH-SP2, first 3,000 jobs under EASY).
The four golden recordings themselves are replayed in ``test_engine_golden.py`` and over ZeroMQ in
``test_zmq_playback.py``.
"""

from __future__ import annotations

import pytest
from batsim.batsim import BatsimScheduler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.sharing import SharedHosts, SharedTask
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.formats.out_jobs_writer import jobs_frame

GFLOP = 1e9


def rates(hosts: SharedHosts, *tasks: SharedTask) -> list[float]:
    return [task.rate for task in tasks]


# ---------------------------------------------------------------- the solver, by hand

def test_two_jobs_on_a_host_get_half_of_it_whatever_their_amounts():
    hosts = SharedHosts([GFLOP], [1])
    small, big = SharedTask({0: 5e9}), SharedTask({0: 1e10})
    hosts.add(small)
    assert small.rate == GFLOP / 5e9  # alone: the whole host, 5 s
    changed = hosts.add(big)
    assert set(map(id, changed)) == {id(small), id(big)}
    # 0.5 Gflop/s each: the 5e9 job needs 10 s, the 1e10 one 20 s at that rate
    assert rates(hosts, small, big) == [0.5 * GFLOP / 5e9, 0.5 * GFLOP / 1e10]
    hosts.remove(small)
    assert big.rate == GFLOP / 1e10


def test_wide_job_runs_at_its_most_shared_host_and_leaves_the_rest_to_its_neighbours():
    """Golden ``sharing`` at t = 30: 2-host j08 with j09 and j13 on host 1, j12 beside it on host 0."""
    hosts = SharedHosts([GFLOP, GFLOP], [1, 1])
    wide, on1_a, on1_b, on0 = (SharedTask({0: 1e10, 1: 1e10}), SharedTask({1: 1e10}), SharedTask({1: 1e10}),
                               SharedTask({0: 1e10}))
    for task in (wide, on1_a, on1_b, on0):
        hosts.add(task)
    third = GFLOP / 3 / 1e10
    assert rates(hosts, wide, on1_a, on1_b) == [pytest.approx(third, rel=1e-15)] * 3
    assert on0.rate == pytest.approx(2 * third, rel=1e-15)  # j12 ends at 45 s, not 50 or 60
    assert hosts.load(1) == 3 and hosts.load(0) == 2


def test_parallel_job_share_follows_its_largest_amount():
    """Golden ``sharing`` at t = 70: j14 [1e10, 5e9] on hosts 0-1 beside j16 (5e9) on host 0: 0.5 Gflop/s each."""
    hosts = SharedHosts([GFLOP, GFLOP], [1, 1])
    parallel, beside = SharedTask({0: 1e10, 1: 5e9}), SharedTask({0: 5e9})
    hosts.add(parallel)
    hosts.add(beside)
    assert rates(hosts, parallel, beside) == [0.5 * GFLOP / 1e10, 0.5 * GFLOP / 5e9]


@pytest.mark.parametrize(("nb_jobs", "flop_rate"), [(1, GFLOP), (3, GFLOP), (4, GFLOP), (5, 0.8 * GFLOP)])
def test_a_job_gets_at_most_one_core_of_a_multicore_host(nb_jobs, flop_rate):
    """Golden ``multicore``: a 4-core host runs up to 4 jobs at full speed, 5 at 0.8 Gflop/s; alone, 10 s."""
    hosts = SharedHosts([GFLOP], [4])
    tasks = [SharedTask({0: 1e10}) for _ in range(nb_jobs)]
    for task in tasks:
        hosts.add(task)
    assert [task.rate * 1e10 for task in tasks] == [pytest.approx(flop_rate, rel=1e-15)] * nb_jobs


def test_bottleneck_rounds_differ_from_a_max_min_share():
    """Hosts A, B, C offering 1, 3 and 2.5 units/s; t1 on A, t2 on A+B, t3 on B, t4 on B+C, t5 on C (1 unit each).

    Round 1: shares A 1/2, B 3/3, C 2.5/2: t1, t2 get 0.5, t3, t4 get 1, t5 1.25; A is used up (t1, t2 frozen),
    B has 3 - 0.5 - 1 - 1 = 0.5 left, C 0.25. Round 2: B splits 0.5 between t3 and t4 (0.25), C 0.25 between t4 and
    t5 (0.125): t3 1.25, t4 1.125, t5 1.375. B then loses 0.25 + 0.125 and again t2's last increment, 0.5: below 0,
    so t3 freezes with B's 0.125 left unused; C is used up. A max-min share would give t3 = t4 = t5 = 1.25, and
    without the repeated subtraction a third round would give t3 1.375."""
    hosts = SharedHosts([1.0, 3.0, 2.5], [1, 1, 1])
    t1, t2, t3, t4, t5 = (SharedTask({0: 1.0}), SharedTask({0: 1.0, 1: 1.0}), SharedTask({1: 1.0}),
                          SharedTask({1: 1.0, 2: 1.0}), SharedTask({2: 1.0}))
    for task in (t1, t2, t3, t4, t5):
        hosts.add(task)
    assert rates(hosts, t1, t2, t3, t4, t5) == [0.5, 0.5, 1.25, 1.125, 1.375]


def test_only_connected_tasks_are_reshared():
    hosts = SharedHosts([GFLOP] * 4, [1] * 4)
    left, right, bridge = SharedTask({0: 1e9}), SharedTask({3: 1e9}), SharedTask({1: 1e9, 2: 1e9})
    for task in (left, right, bridge):
        hosts.add(task)
    joined = SharedTask({0: 1e9, 1: 1e9})
    assert {id(t) for t in hosts.add(joined)} == {id(left), id(bridge), id(joined)}
    assert right.rate == 1.0 and left.rate == bridge.rate == joined.rate == 0.5


def test_a_task_with_nothing_to_compute_ends_at_once():
    hosts = SharedHosts([GFLOP], [1])
    nothing = SharedTask({})
    hosts.add(nothing)
    assert nothing.rate == float("inf")
    # through the engine, beside other activities of the same step (once a step repeated forever)
    engine = sharing_engine([("h0:zero", 0, 100, 0.0), ("h0:also", 0, 100, 0.0), ("h0-1:one", 0, -1, GFLOP)])
    run_scheduler(engine, StartAtOnce())
    out = jobs_frame(engine.records).set_index("job_id")
    durations = [engine.jobs[f"w0!{name}"].end - engine.jobs[f"w0!{name}"].start for name in ("h0:zero", "h0:also")]
    assert durations == [0.0, 0.0]
    assert list(out.loc[["h0:zero", "h0:also"], "execution_time"]) == [1e-5, 1e-5]  # Batsim's instantaneous job
    assert out.loc["h0-1:one", "execution_time"] == pytest.approx(1.0, abs=1e-6)


def test_bad_host_descriptions_are_refused():
    with pytest.raises(ValueError, match="2 host speeds but 1 core counts"):
        SharedHosts([GFLOP, GFLOP], [1])
    with pytest.raises(ValueError, match="at least 1 core"):
        SharedHosts([GFLOP], [0])


# ---------------------------------------------------------------- the engine

class StartAtOnce(BatsimScheduler):
    """Starts each job on submission on the hosts its id names (``"h0-1:name"``), never waiting; kills the jobs
    listed in ``kills`` (job name -> time) with CALL_ME_LATER."""

    def __init__(self, kills: dict[str, float] | None = None):
        super().__init__()
        self.kills = dict(kills or {})

    def onSimulationBegins(self):
        self.jobs = {}
        for when in sorted(set(self.kills.values())):
            self.bs.wake_me_up_at(when)

    def onJobSubmission(self, job):
        name = job.id.split("!", 1)[1]
        self.jobs[name] = job
        job.allocation = ProcSet.from_str(name.split(":", 1)[0][1:])
        self.bs.execute_jobs([job])

    def onRequestedCall(self):
        due = [self.jobs[n] for n, when in self.kills.items() if when <= self.bs.time() + 1e-9 and n in self.jobs]
        if due:
            self.bs.kill_jobs(due)

    def onJobCompletion(self, job):
        pass

    def onJobsKilled(self, jobs):
        pass


def sharing_engine(jobs, nb_hosts=2, cores=None, sharing=True):
    """An engine on ``nb_hosts`` 1 Gflop/s hosts; ``jobs``: (name, subtime, walltime, flop or list or delay)."""
    profiles, entries = {}, []
    for number, (name, subtime, walltime, work) in enumerate(jobs):
        if isinstance(work, tuple):  # ("delay", seconds)
            profile = {"type": "delay", "delay": work[1]}
        elif isinstance(work, list):
            profile = {"type": "parallel", "cpu": work, "com": [0] * len(work) ** 2}
        else:
            profile = {"type": "parallel_homogeneous", "cpu": work, "com": 0}
        profiles[f"p{number}"] = profile
        entries.append({"id": name, "subtime": subtime, "walltime": walltime,
                        "res": len(ProcSet.from_str(name.split(":", 1)[0][1:])), "profile": f"p{number}"})
    return BatsimEngine([(f"node_{i}", GFLOP) for i in range(nb_hosts)], {"w0": {"jobs": entries, "profiles": profiles}},
                        options=EngineOptions(compute_sharing=sharing), cores=cores)


def test_walltime_kill_of_a_slowed_job_then_the_survivor_speeds_up():
    """Golden ``sharing``'s j03/j07: 1e10 flop alone for 4 s, shared for 10 s until j07's walltime, then alone:
    4e9 + 5e9 + 1e9 flop, ends at 15 s; j07 killed at 14 s."""
    engine = sharing_engine([("h0:long", 0, 1000, 1e10), ("h0:killed", 4, 10, 1e10)], nb_hosts=1)
    run_scheduler(engine, StartAtOnce())
    out = jobs_frame(engine.records).set_index("job_id")
    assert out.loc["h0:killed", "final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert out.loc["h0:killed", "finish_time"] == 14.0
    assert out.loc["h0:long", "finish_time"] == 15.0


def test_delay_jobs_neither_slow_nor_are_slowed():
    engine = sharing_engine([("h0:compute", 0, -1, 1e10), ("h0:sleep", 0, -1, ("delay", 10))], nb_hosts=1)
    run_scheduler(engine, StartAtOnce())
    out = jobs_frame(engine.records).set_index("job_id")
    assert list(out["finish_time"]) == [10.0, 10.0]


def test_kill_job_reports_the_fraction_of_work_done():
    """Two 1e10 jobs share a host for 4 s (0.2e10 done each), then one is killed: progress 0.2, and the other ends
    at 4 + 8 = 12 s."""
    engine = sharing_engine([("h0:a", 0, -1, 1e10), ("h0:b", 0, -1, 1e10)], nb_hosts=1)
    progress = []

    class Recorder:
        def __call__(self, request):
            for event in request["events"]:
                if event["type"] == "JOB_KILLED":
                    progress.append(event["data"]["job_progress"])

    run_scheduler(engine, StartAtOnce(kills={"h0:a": 4.0}), on_request=Recorder())
    assert progress == [{"w0!h0:a": {"profile_name": "p0", "progress": 0.2}}]
    out = jobs_frame(engine.records).set_index("job_id")
    assert out.loc["h0:a", "final_state"] == "COMPLETED_KILLED"
    assert out.loc["h0:b", "finish_time"] == pytest.approx(12.0, abs=1e-6)


def test_without_sharing_a_shared_host_is_refused():
    engine = sharing_engine([("h0:a", 0, -1, 1e10), ("h0:b", 0, -1, 1e10)], nb_hosts=1, sharing=False)
    with pytest.raises(Exception, match="already computing another job"):
        run_scheduler(engine, StartAtOnce())


# ---------------------------------------------------------------- invariants

@st.composite
def shared_workloads(draw):
    """Jobs started at once on random hosts of 3 (some shared, some wide, some parallel or delay), with walltimes
    that some of them reach."""
    jobs = []
    for number in range(draw(st.integers(1, 12))):
        first = draw(st.integers(0, 2))
        last = draw(st.integers(first, 2))
        kind = draw(st.sampled_from(["homogeneous", "parallel", "delay"]))
        seconds = draw(st.integers(1, 20))
        if kind == "delay":
            work = ("delay", seconds)
        elif kind == "parallel":
            work = [seconds * GFLOP * draw(st.sampled_from([0.5, 1.0])) for _ in range(first, last + 1)]
        else:
            work = seconds * GFLOP
        hosts = f"{first}" if first == last else f"{first}-{last}"
        jobs.append((f"h{hosts}:j{number}", draw(st.integers(0, 15)), draw(st.sampled_from([-1, 5, 30])), work))
    return jobs


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_workloads(), st.sampled_from([None, [1, 2, 1]]))
def test_sharing_invariants(jobs, cores):
    engine = sharing_engine(jobs, nb_hosts=3, cores=cores)
    nows = []
    run_scheduler(engine, StartAtOnce(), on_request=lambda request: nows.append(request["now"]))
    out = jobs_frame(engine.records).set_index("job_id")
    assert nows == sorted(nows)  # time never goes back
    assert sorted(out.index) == sorted(name for name, *_ in jobs)  # every job ends exactly once
    for name, subtime, walltime, work in jobs:
        row = out.loc[name]
        assert row["starting_time"] == subtime  # started on submission, never refused
        if row["final_state"] == "COMPLETED_WALLTIME_REACHED":
            assert row["execution_time"] == pytest.approx(walltime, abs=1e-6)
            continue
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert walltime < 0 or row["execution_time"] <= walltime + 1e-6
        if isinstance(work, tuple):  # a delay job is never slowed
            assert row["execution_time"] == pytest.approx(work[1], abs=1e-6)
        else:  # a computing job takes at least what it takes alone on one core
            alone = max(work) if isinstance(work, list) else work
            assert row["execution_time"] >= alone / GFLOP - 1e-6


def test_sharing_on_without_shared_hosts_changes_nothing(workloads_dir):
    """EASY never puts two jobs on a host: with compute sharing on, the first 3,000 jobs of KTH-SP2 give the very
    same messages and out_jobs.csv (every task alone on its hosts gets SimGrid's rate of an unshared task)."""
    from batreplay.platforms.reader import read_platform
    from batreplay.platforms.shipped import shipped_platform_path
    from batreplay.schedulers.registry import load_scheduler
    from batreplay.workloads.loading import WorkloadOptions, load_workload

    platform = read_platform(shipped_platform_path("kth-sp2"))
    loaded = load_workload(workloads_dir / "KTH-SP2-1996-2.1-cln.swf.gz", WorkloadOptions(max_jobs=3000),
                           platform.nb_compute)
    hosts = [(h.name, h.speed) for h in platform.hosts]
    streams, tables = [], []
    for sharing in (False, True):
        engine = BatsimEngine(hosts, {"w0": loaded.document}, options=EngineOptions(compute_sharing=sharing))
        requests = []
        run_scheduler(engine, load_scheduler("easy"), on_request=requests.append)
        for request in requests:  # SIMULATION_BEGINS says whether sharing is on; nothing else may differ
            for event in request["events"]:
                if event["type"] == "SIMULATION_BEGINS":
                    assert event["data"]["allow_compute_sharing"] is sharing
                    event["data"]["allow_compute_sharing"] = None
        streams.append(requests)
        tables.append(jobs_frame(engine.records))
    assert streams[0] == streams[1]
    assert tables[0].equals(tables[1])


@pytest.mark.parametrize("extra_flop", [3, 8, 20])
def test_leftover_task_ending_as_its_completion_is_received(extra_flop):
    """Job 0's task outlives its walltime by a few ns and keeps its share until its JOB_COMPLETED is received; with
    8 extra flop it ends in that very step (once a crash: the task was taken off its host twice). No host is
    shared here, so compute sharing on must give the clocks of compute sharing off, to the last bit."""
    from batreplay.schedulers.registry import load_scheduler

    workload = {"nb_res": 2, "profiles": {
        "pa": {"type": "parallel_homogeneous", "cpu": 100 * 10**9 + extra_flop, "com": 0},
        "pb": {"type": "parallel_homogeneous", "cpu": 5 * 10**9, "com": 0}}, "jobs": [
        {"id": "0", "subtime": 0, "walltime": 100, "res": 1, "profile": "pa"},
        {"id": "1", "subtime": 0, "walltime": -1, "res": 2, "profile": "pb"}]}
    ends = []
    for sharing in (False, True):
        engine = BatsimEngine([("node_0", GFLOP), ("node_1", GFLOP)], {"w0": workload},
                              options=EngineOptions(compute_sharing=sharing))
        run_scheduler(engine, load_scheduler("fcfs"))
        assert engine.jobs["w0!0"].state == "COMPLETED_WALLTIME_REACHED"
        ends.append([engine.jobs[f"w0!{i}"].end for i in range(2)])
    assert ends[0] == ends[1]
