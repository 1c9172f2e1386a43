"""Invariants of the embedded engine on generated workloads (hypothesis).

A small first-fit decision process (start any waiting job that fits, lowest free resource ids first) drives
the engine on random rigid jobs; whatever the workload, the simulation must keep Batsim's invariants.
"""

from __future__ import annotations

from batsim.batsim import BatsimScheduler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.engine.profiles import execution_time
from batreplay.engine.simulator import BatsimEngine


class FirstFit(BatsimScheduler):
    """Starts every waiting job that fits, in submission order, on the lowest free ids."""

    def onSimulationBegins(self):
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.queue = []

    def onJobSubmission(self, job):
        if job.requested_resources > self.bs.nb_compute_resources:
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job):
        self.free |= job.allocation

    def onNoMoreEvents(self):
        started = []
        for job in self.queue:
            if job.requested_resources <= len(self.free):
                job.allocation = ProcSet(*list(self.free)[: job.requested_resources])
                self.free -= job.allocation
                started.append(job)
        if started:
            self.queue = [j for j in self.queue if j not in started]
            self.bs.execute_jobs(started)


job_strategy = st.tuples(
    st.integers(0, 50),  # submission time (s)
    st.integers(1, 6),  # requested resources
    st.integers(1, 30),  # run time (s)
    st.integers(1, 40),  # walltime (s)
)


@st.composite
def workloads(draw):
    jobs = draw(st.lists(job_strategy, min_size=1, max_size=25))
    profiles, entries = {}, []
    for i, (sub, res, run, wall) in enumerate(jobs):
        profiles[f"d{run}"] = {"type": "delay", "delay": run}
        entries.append({"id": str(i), "subtime": sub, "res": res, "walltime": wall, "profile": f"d{run}"})
    return {"nb_res": 4, "jobs": entries, "profiles": profiles}


class Recorder:
    def __init__(self):
        self.nows = []

    def __call__(self, request):
        self.nows.append(request["now"])
        stamps = [e["timestamp"] for e in request["events"]]
        assert stamps == sorted(stamps) and all(t <= request["now"] for t in stamps)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from([4, 5]))
def test_engine_invariants(workload, nb_hosts):
    hosts = [(f"node_{i}", 1e9) for i in range(nb_hosts)]
    engine = BatsimEngine(hosts, {"w0": workload})
    recorder = Recorder()
    run_scheduler(engine, FirstFit(), on_request=recorder)
    out = jobs_frame(engine.records)

    # time never goes back
    assert recorder.nows == sorted(recorder.nows)
    # every job ends exactly once
    assert sorted(out["job_id"]) == sorted(j["id"] for j in workload["jobs"])
    ran = out[out["final_state"] != "REJECTED"]
    assert set(out.loc[out["final_state"] == "REJECTED", "requested_number_of_resources"]) <= set(range(nb_hosts + 1, 7))
    # no job starts before its submission; walltime is enforced exactly
    assert (ran["starting_time"] >= ran["submission_time"]).all()
    for row in ran.itertuples():
        run = workload["profiles"][row.profile]["delay"]
        if run < row.requested_time:
            assert row.final_state == "COMPLETED_SUCCESSFULLY" and row.execution_time == run
        else:
            assert row.final_state == "COMPLETED_WALLTIME_REACHED" and row.execution_time == row.requested_time
    # no resource used by two jobs at once
    intervals = {}
    for row in ran.itertuples():
        for r in ProcSet.from_str(row.allocated_resources):
            intervals.setdefault(r, []).append((row.starting_time, row.finish_time))
    for spans in intervals.values():
        spans.sort()
        for (s1, e1), (s2, _e2) in zip(spans, spans[1:]):
            assert e1 <= s2


def test_profile_durations_follow_host_speeds():
    speeds = [1e9, 2.5e9]
    assert execution_time({"type": "delay", "delay": 7.25}, speeds) == 7.25
    assert execution_time({"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}, speeds) == 10.0
    assert execution_time({"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}, [2.5e9]) == 4.0
    assert execution_time({"type": "parallel_homogeneous_total", "cpu": 4e10, "com": 0}, [1e9] * 4) == 10.0
    assert execution_time({"type": "parallel", "cpu": [5e9, 2e9], "com": [0, 0, 0, 0]}, [2.5e9, 2.5e9]) == 2.0


@st.composite
def timed_workloads(draw):
    """Jobs with fractional run times, some equal (ties 8 ns apart), some computed (parallel tasks on hosts of
    two speeds): enough steps for lagging activities to replay long stretches of missed steps."""
    durations = draw(st.lists(st.sampled_from([0.5, 1.25, 3.0, 7.000001, 12.5, 30.0]), min_size=1, max_size=4))
    jobs = draw(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 4), st.sampled_from(durations),
                                   st.booleans()), min_size=2, max_size=30))
    profiles, entries = {}, []
    for i, (sub, res, run, computed) in enumerate(jobs):
        name = f"p{run}" if computed else f"d{run}"
        profiles[name] = ({"type": "parallel_homogeneous", "cpu": run * 1e9, "com": 0} if computed
                          else {"type": "delay", "delay": run})
        entries.append({"id": str(i), "subtime": sub + 0.25 * (i % 3), "res": res, "walltime": 100, "profile": name})
    return {"nb_res": 4, "jobs": entries, "profiles": profiles}


def message_stream(workload, hosts, lookahead):
    import pytest

    from batreplay.engine import kernel

    requests = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernel, "LOOKAHEAD", lookahead)
        engine = BatsimEngine(hosts, {"w0": workload})
        run_scheduler(engine, FirstFit(), on_request=lambda request: requests.append(request))
    return requests, engine.clock


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timed_workloads())
def test_lazy_steps_equal_full_update(workload):
    """Updating only the activities near the front (and replaying missed steps later) gives exactly what
    SimGrid's full update gives (every activity updated at every step): same messages, same final clock."""
    hosts = [("node_0", 1e9), ("node_1", 1e9), ("node_2", 2.5e9), ("node_3", 2.5e9)]
    lazy, lazy_clock = message_stream(workload, hosts, 1e-3)
    full, full_clock = message_stream(workload, hosts, float("inf"))
    assert lazy == full
    assert lazy_clock == full_clock


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timed_workloads())
def test_message_slot_equals_heap_entries(workload):
    """The server's messages kept in the kernel's slot (Kernel.start_message) take the same steps as ordinary
    activities in the heap (Kernel.start_activity): same messages, same final clock."""
    import pytest

    from batreplay.engine.kernel import Kernel

    def in_the_heap(kernel, rate, prio, action, argument=None):
        kernel.start_activity(1.0, rate, prio, action, argument)

    hosts = [("node_0", 1e9), ("node_1", 1e9), ("node_2", 2.5e9), ("node_3", 2.5e9)]
    slot, slot_clock = message_stream(workload, hosts, 1e-3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Kernel, "start_message", in_the_heap)
        heap, heap_clock = message_stream(workload, hosts, 1e-3)
    assert slot == heap
    assert slot_clock == heap_clock


def test_a_second_message_before_the_first_arrived_is_refused():
    """In the slot or in the heap (an activity due within LOOKAHEAD made it join), the message must arrive first."""
    import pytest

    from batreplay.engine.kernel import Kernel

    kernel = Kernel()
    kernel.start_message(125e6, 0, print)
    with pytest.raises(RuntimeError, match="previous message"):
        kernel.start_message(125e6, 0, print)
    assert kernel.advance() == (print, None) and kernel.clock == 1.0 / 125e6
    kernel.start_message(125e6, 0, print)  # the slot is free again
    kernel.sleep(4e-9, print, "sleep")  # ends before the message (8 ns): the message joins the heap, half moved
    assert kernel.advance() is True and [entry[3] for entry in kernel.ready] == ["sleep"]
    with pytest.raises(RuntimeError, match="previous message"):
        kernel.start_message(125e6, 0, print)
    kernel.ready.clear()
    assert kernel.advance() == (print, None)  # the message arrives
    kernel.start_message(125e6, 0, print)
