"""The backfilling family against a brute-force reference, both driven by the embedded engine.

The reference (:class:`Reference`, written here from the definitions, sharing no code with the schedulers) keeps
the waiting and running jobs as plain lists and, at every Batsim message, recomputes its decision from scratch on a
list of ``(start, end, nodes)`` intervals: free nodes at a time are counted by summing over the intervals, and a
job fits at ``t`` if they suffice at ``t`` and at every interval bound inside its window. Members: queue orders
(FCFS, SJF, LJF, SAF, LAF; ties by submission rank), reservation depth 0 (strict order), k (the first k jobs of the
queue hold reservations, recomputed each time, then the others backfill in backfill order) and all (conservative:
reservations made once, in queue order, compressed in queue order when a job terminates, never delayed). Jobs are
delay profiles with integer times, run time <= walltime or killed at their walltime. Each run also checks the
invariants of any schedule: every job ends once, no node serves two jobs at once, no job starts before its
submission.
"""

from __future__ import annotations

import math

import pytest
from batsim.batsim import BatsimScheduler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.simulator import BatsimEngine
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.schedulers.registry import SCHEDULERS, load_scheduler

ALL = math.inf


def primary(order: str, nodes: int, walltime: float) -> float:
    """The order's own criterion (submission rank breaks ties)."""
    return {"fcfs": 0, "sjf": walltime, "ljf": -walltime, "saf": nodes * walltime, "laf": -nodes * walltime}[order]


#: name -> (queue order, reservation depth, backfill order, scheduler options)
MEMBERS: dict[str, tuple[str, float, str, dict]] = {
    "fcfs": ("fcfs", 0, "fcfs", {}),
    "easy": ("fcfs", 1, "fcfs", {}),
    "conservative": ("fcfs", ALL, "fcfs", {}),
    "easy-sjbf": ("fcfs", 1, "sjf", {}),
    **{order: (order, 0, order, {}) for order in ("sjf", "ljf", "saf", "laf")},
    **{f"easy-{order}": (order, 1, order, {}) for order in ("sjf", "ljf", "saf", "laf")},
    **{f"conservative-{order}": (order, ALL, order, {}) for order in ("sjf", "ljf", "saf", "laf")},
}
DEPTH_MEMBERS = {
    "backfilling-2": ("fcfs", 2, "fcfs", {"reservation_depth": 2}),
    "backfilling-3-saf-sjf": ("saf", 3, "sjf", {"reservation_depth": 3, "order": "saf", "backfill_order": "sjf"}),
    "backfilling-0-ljf": ("ljf", 0, "ljf", {"reservation_depth": 0, "order": "ljf"}),
    "backfilling-all-laf": ("laf", ALL, "laf", {"reservation_depth": "all", "order": "laf"}),
}


class Reference(BatsimScheduler):
    """Naive scheduler of one family member: state in plain lists, every decision recomputed by brute force."""

    def __init__(self, order: str, depth: float, backfill_order: str):
        super().__init__({})
        self.order, self.depth, self.backfill_order = order, depth, backfill_order
        self.waiting: list[tuple[int, object]] = []  # (submission rank, pybatsim job)
        self.running: dict[str, tuple[float, float, int, set[int]]] = {}  # id -> (start, walltime, nodes, ids)
        self.reserved: dict[str, float] = {}  # conservative: job id -> reserved start
        self.terminated = False
        self.rank = 0

    def onSimulationBegins(self):
        self.nb = self.bs.nb_compute_resources

    def onJobSubmission(self, job):
        if job.requested_resources > self.nb:
            self.bs.reject_jobs([job])
            return
        self.waiting.append((self.rank, job))
        self.rank += 1

    def onJobCompletion(self, job):
        del self.running[job.id]
        self.terminated = True

    # -- brute force --------------------------------------------------------------------------------------------

    def sort_key(self, order: str):
        return lambda item: (primary(order, item[1].requested_resources, item[1].requested_time), item[0])

    def free_at(self, t: float, intervals) -> int:
        return self.nb - sum(nodes for start, end, nodes in intervals if start <= t < end)

    def fits(self, t: float, job, intervals) -> bool:
        end = t + job.requested_time
        points = [t] + [x for start, stop, _ in intervals for x in (start, stop) if t < x < end]
        return all(self.free_at(p, intervals) >= job.requested_resources for p in points)

    def earliest(self, now: float, job, intervals, before: float = math.inf) -> float:
        candidates = sorted({now} | {x for start, stop, _ in intervals for x in (start, stop) if x > now})
        for t in candidates:
            if t >= before:
                break
            if self.fits(t, job, intervals):
                return t
        return before

    def running_intervals(self, now: float):
        return [(now, start + walltime, nodes) for start, walltime, nodes, _ in self.running.values()]

    def free_now(self) -> list[int]:
        busy = set().union(*(ids for *_, ids in self.running.values()))
        return [i for i in range(self.nb) if i not in busy]

    def start(self, job, now: float, out: list) -> None:
        ids = self.free_now()[: job.requested_resources]
        assert len(ids) == job.requested_resources
        self.running[job.id] = (now, job.requested_time, job.requested_resources, set(ids))
        job.allocation = ProcSet(*ids)
        out.append(job)

    def onNoMoreEvents(self):
        now = self.bs.time()
        queue = sorted(self.waiting, key=self.sort_key(self.order))
        started = self.decide_conservative(now, queue) if self.depth == ALL else self.decide_depth(now, queue)
        ids = {job.id for job in started}
        self.waiting = [item for item in self.waiting if item[1].id not in ids]
        if started:
            self.bs.execute_jobs(started)

    def decide_depth(self, now: float, queue) -> list:
        started: list = []
        while queue and queue[0][1].requested_resources <= len(self.free_now()):
            self.start(queue.pop(0)[1], now, started)
        if self.depth == 0:
            return started
        intervals = self.running_intervals(now)
        reserved_count = min(int(self.depth), len(queue))
        for _, job in queue[:reserved_count]:
            at = self.earliest(now, job, intervals)
            intervals.append((at, at + job.requested_time, job.requested_resources))
            if at == now and job.requested_resources <= len(self.free_now()):  # nodes of a job ending now may
                self.start(job, now, started)  # still be held: its completion comes in a later message
        for _, job in sorted(queue[reserved_count:], key=self.sort_key(self.backfill_order)):
            if job.requested_resources <= len(self.free_now()) and self.fits(now, job, intervals):
                intervals.append((now, now + job.requested_time, job.requested_resources))
                self.start(job, now, started)
        return started

    def decide_conservative(self, now: float, queue) -> list:
        reserved = self.reserved

        def others(skip: str):
            intervals = self.running_intervals(now)
            for _, job in queue:
                if job.id in reserved and job.id != skip:
                    at = max(reserved[job.id], now)
                    intervals.append((at, at + job.requested_time, job.requested_resources))
            return intervals

        if self.terminated:  # compression, in queue order, never later
            for _, job in queue:
                if job.id in reserved and reserved[job.id] > now:
                    reserved[job.id] = self.earliest(now, job, others(job.id), before=reserved[job.id])
            self.terminated = False
        for _, job in queue:
            if job.id not in reserved:
                reserved[job.id] = self.earliest(now, job, others(job.id))
        started: list = []
        for _, job in queue:
            if reserved[job.id] <= now and job.requested_resources <= len(self.free_now()):
                del reserved[job.id]
                self.start(job, now, started)
        return started


@st.composite
def workloads(draw, max_jobs: int = 12):
    """A Batsim workload: 1-8 nodes, jobs of 1-nodes nodes (a few too wide, rejected), integer submission times,
    walltimes 1-10 s, delays up to the walltime or beyond it (killed at the walltime)."""
    nb = draw(st.integers(1, 8))
    jobs, profiles = [], {}
    clock = 0
    for number in range(draw(st.integers(1, max_jobs))):
        clock += draw(st.sampled_from([0, 0, 1, 2, 3, 5]))
        res = draw(st.integers(1, nb + 1 if draw(st.integers(0, 9)) == 0 else nb))
        walltime = draw(st.integers(1, 10))
        delay = draw(st.integers(1, walltime + 3))
        profiles[f"d{delay}"] = {"type": "delay", "delay": delay}
        jobs.append({"id": str(number), "subtime": clock, "res": res, "walltime": walltime, "profile": f"d{delay}"})
    return {"nb_res": nb, "jobs": jobs, "profiles": profiles}


def simulate(workload: dict, scheduler) -> dict[str, float]:
    """Run ``scheduler`` on ``workload``, check the invariants of any schedule, return each job's start (s, NaN if
    rejected)."""
    nb = workload["nb_res"]
    engine = BatsimEngine([(f"node_{i}", 1e9) for i in range(nb)], {"w0": workload})
    run_scheduler(engine, scheduler)
    out = jobs_frame(engine.records)
    assert sorted(out["job_id"]) == sorted(job["id"] for job in workload["jobs"]), "every job ends exactly once"
    wide = {job["id"] for job in workload["jobs"] if job["res"] > nb}
    assert set(out.loc[out["final_state"] == "REJECTED", "job_id"]) == wide
    ran = out[out["final_state"] != "REJECTED"]
    assert (ran["starting_time"] >= ran["submission_time"]).all()
    spans: dict[int, list[tuple[float, float]]] = {}
    for row in ran.itertuples():
        for node in ProcSet.from_str(row.allocated_resources):
            spans.setdefault(node, []).append((row.starting_time, row.finish_time))
    for node, intervals in spans.items():
        intervals.sort()
        assert all(end <= start for (_, end), (start, _) in zip(intervals, intervals[1:])), f"node {node} shared"
    return dict(zip(out["job_id"], out["starting_time"]))


def compare(name: str, member: tuple, workload: dict) -> None:
    order, depth, backfill_order, options = member
    scheduler = load_scheduler("backfilling" if options else name, options)
    got = simulate(workload, scheduler)
    expected = simulate(workload, Reference(order, depth, backfill_order))
    assert got.keys() == expected.keys()
    for job_id, start in expected.items():
        assert got[job_id] == pytest.approx(start, abs=1e-6, nan_ok=True), (name, job_id, got, expected)


FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_registered_family_name_is_compared():
    # easy-schedulus and easy-coscheduling are EASY variants of their own (tests/schedulers/test_schedulus.py,
    # tests/schedulers/test_coscheduling_scheduler.py); agent takes a policy's choices
    # (tests/learning/test_gym_semantics.py compares it with fcfs, easy, sjf and easy-sjf)
    assert set(MEMBERS) | {"backfilling", "easy-schedulus", "easy-coscheduling", "agent"} == set(SCHEDULERS)


@FAST
@given(workload=workloads())
@pytest.mark.parametrize("name", list(MEMBERS) + list(DEPTH_MEMBERS))
def test_member_starts_jobs_as_the_brute_force_reference(name, workload):
    compare(name, {**MEMBERS, **DEPTH_MEMBERS}[name], workload)


@pytest.mark.slow
@SLOW
@given(workload=workloads(max_jobs=25))
@pytest.mark.parametrize("name", list(MEMBERS) + list(DEPTH_MEMBERS))
def test_member_starts_jobs_as_the_brute_force_reference_many_examples(name, workload):
    compare(name, {**MEMBERS, **DEPTH_MEMBERS}[name], workload)


# --------------------------------------------------------------------------------------------------------------
# Orders, members, registry entries
# --------------------------------------------------------------------------------------------------------------


def test_queue_orders_break_ties_by_submission_and_put_jobs_without_walltime_at_the_long_end():
    from batreplay.schedulers.policy import QueuedJob
    from batreplay.schedulers.queue_order import OrderedQueue

    jobs = [QueuedJob("w0!0", 2, 10), QueuedJob("w0!1", 1, None), QueuedJob("w0!2", 4, 5),
            QueuedJob("w0!3", 1, 20), QueuedJob("w0!4", 2, 10)]
    expected = {
        "fcfs": ["w0!0", "w0!1", "w0!2", "w0!3", "w0!4"],
        "sjf": ["w0!2", "w0!0", "w0!4", "w0!3", "w0!1"],  # 5, 10, 10 (submission order), 20, none
        "ljf": ["w0!1", "w0!3", "w0!0", "w0!4", "w0!2"],
        "saf": ["w0!0", "w0!2", "w0!3", "w0!4", "w0!1"],  # areas all 20 (submission order), then inf
        "laf": ["w0!1", "w0!0", "w0!2", "w0!3", "w0!4"],
    }
    for order, ids in expected.items():
        queue = OrderedQueue(order)
        for job in jobs:
            queue.push(job)
        assert [job.id for job in queue] == ids, order


def test_members_are_validated_and_described():
    from batreplay.schedulers.backfilling import Backfilling
    from batreplay.schedulers.registry import FAMILY, describe

    with pytest.raises(ValueError, match="unknown queue order 'xjf'"):
        Backfilling("xjf", 1)
    with pytest.raises(ValueError, match="reservation depth"):
        Backfilling("fcfs", -1)
    with pytest.raises(ValueError, match="backfill order needs"):
        Backfilling("fcfs", "all", backfill_order="sjf")
    assert describe("easy-sjbf").endswith("backfilling candidates tried by shortest requested time (walltime) first")
    assert describe("conservative-laf").startswith("conservative backfilling")
    assert all(describe(name) and "\n" not in describe(name) for name in SCHEDULERS)
    assert FAMILY["easy"] == Backfilling("fcfs", 1) and FAMILY["sjf"] == Backfilling("sjf", 0)


def test_generic_backfilling_entry_checks_its_options_before_the_run():
    from batreplay.schedulers.registry import check_scheduler_options

    assert check_scheduler_options("backfilling", {"reservation_depth": 4}) == {
        "reservation_depth": 4, "order": "fcfs", "backfill_order": None, "node_selection": "lowest-id",
        "slots": False, "seed": 0}
    with pytest.raises(ValueError, match="scheduler backfilling: reservation depth must be"):
        check_scheduler_options("backfilling", {"reservation_depth": "deep"})
    with pytest.raises(ValueError, match="scheduler backfilling: unknown queue order 'fifo'"):
        check_scheduler_options("backfilling", {"order": "fifo"})
    with pytest.raises(ValueError, match="easy-sjf: unknown option 'reservation_depth'; known options: "
                                         "node_selection, slots, seed"):
        load_scheduler("easy-sjf", {"reservation_depth": 2})
    with pytest.raises(ValueError, match="scheduler easy-sjf: option node_selection: 'closest' is not one of"):
        load_scheduler("easy-sjf", {"node_selection": "closest"})


def test_generated_scheduler_classes_pickle_and_name_their_policy():
    import pickle

    from batreplay.schedulers.conservative import ConservativePolicy

    scheduler = load_scheduler("conservative-saf")
    assert type(scheduler).__name__ == "ConservativeSaf" and type(scheduler).policy_class is ConservativePolicy
    assert type(pickle.loads(pickle.dumps(scheduler))) is type(scheduler)


def test_easy_sjbf_backfills_the_shortest_candidate_first():
    """Head w0!0 waits for 4 nodes until t = 10; one node is free now. FCFS-order EASY backfills the first candidate
    that ends by the shadow time (w0!1, 8 s); SJBF backfills the shortest (w0!2, 2 s)."""
    from batreplay.schedulers.backfilling import Backfilling
    from batreplay.schedulers.policy import QueuedJob

    started = {}
    for backfill_order in (None, "sjf"):
        policy = Backfilling("fcfs", 1, backfill_order).policy(4)
        policy.submit(QueuedJob("w0!r", 3, 10))
        policy.decide(0.0)
        for job in (QueuedJob("w0!0", 4, 5), QueuedJob("w0!1", 1, 8), QueuedJob("w0!2", 1, 2)):
            policy.submit(job)
        started[backfill_order] = [job.id for job, _ in policy.decide(0.0)]
    assert started == {None: ["w0!1"], "sjf": ["w0!2"]}
