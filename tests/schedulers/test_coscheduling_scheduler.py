"""easy-coscheduling: EASY backfilling that may start a job on partly used nodes when a speedup model predicts it pays.

Checked by hand on small cases (who shares which node, the head's reservation kept), against ``easy`` job for job
when one job per node is allowed, and with hypothesis on random workloads: no node runs more jobs than allowed,
every pair of jobs sharing a node is one the model accepts both ways, every job starts once, and a job that held the
head's reservation starts no later than its first shadow time.
"""

from __future__ import annotations

import heapq
import math
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batreplay.platforms.speedup import NoSpeedup
from batreplay.run.spec import RunSpec, RunSpecError
from batreplay.schedulers.coscheduling import CoschedulingPolicy
from batreplay.schedulers.easy import EasyPolicy
from batreplay.schedulers.policy import QueuedJob
from batreplay.schedulers.registry import check_scheduler_options
from conftest import REPO_ROOT, WORKLOADS

TABLE = REPO_ROOT / "expe" / "speedups" / "two-classes.csv"  # compute/compute 0.85, compute/memory 1.0,
# memory/compute 1.1, memory/memory 0.7


class ClassTable:
    """A table model in memory: speedup of (class, neighbour class), the class being the job's property ``class``."""

    def __init__(self, speedups: dict[tuple[str, str], float]) -> None:
        self.speedups = speedups

    def speedup(self, job, neighbour) -> float:
        return self.speedups[(job["class"], neighbour["class"])]

    def check_job(self, job) -> None:
        pass

    def kind(self, job) -> str:
        return job["class"]


PAIRS = {("c", "c"): 0.85, ("c", "m"): 1.0, ("m", "c"): 1.1, ("m", "m"): 0.7}


def job(name: str, res: int, walltime: float | None, cls: str = "c") -> QueuedJob:
    return QueuedJob(name, res, walltime, {"id": name, "res": res, "walltime": walltime, "class": cls})


def starts(policy, now: float) -> dict[str, list[int]]:
    return {queued.id: list(allocation) for queued, allocation in policy.decide(now)}


def test_a_job_that_would_wait_shares_a_node_whose_jobs_it_suits():
    """Two nodes, each running a compute-bound job: a memory-bound job (1.1 beside compute, which gets 1.0 beside it)
    shares the lowest node; a second one the other; a compute-bound one waits (0.85 < 1); at threshold 1.05 the
    memory-bound ones wait too (the compute-bound neighbour would get 1.0)."""
    for threshold, expected in [(1.0, {"C": [0], "D": [1]}), (1.05, {})]:
        policy = CoschedulingPolicy(2, model=ClassTable(PAIRS), threshold=threshold, jobs_per_node=2)
        for queued in (job("A", 1, 100), job("B", 1, 100)):
            policy.submit(queued)
        assert starts(policy, 0) == {"A": [0], "B": [1]}
        for queued in (job("C", 1, 50, "m"), job("D", 1, 50, "m"), job("E", 1, 50, "c")):
            policy.submit(queued)
        assert starts(policy, 1) == expected
        assert [queued.id for queued in policy.queue] == [q for q in "CDE" if q not in expected]


def test_free_nodes_come_first_and_jobs_per_node_caps_sharing():
    """A job that fits on free nodes runs alone there; a node takes at most jobs_per_node jobs."""
    model = NoSpeedup()
    policy = CoschedulingPolicy(3, model=model, threshold=1.0, jobs_per_node=2)
    for queued in (job("A", 2, 100), job("B", 1, 100)):
        policy.submit(queued)
    assert starts(policy, 0) == {"A": [0, 1], "B": [2]}
    for name in "CDEF":
        policy.submit(job(name, 1, 100))
    assert starts(policy, 1) == {"C": [0], "D": [1], "E": [2]}  # F waits: every node runs 2 jobs
    assert policy.complete("A")
    assert starts(policy, 2) == {"F": [0]}
    assert list(policy.nodes.count) == [2, 1, 2]


def test_backfilled_jobs_do_not_delay_the_head_reservation():
    """Three nodes: X (compute) on node 0 until 100, Y (compute) on node 2 until 1000, node 1 free. The head H
    (compute, 2 nodes) may share neither: shadow time 100 (nodes 0 and 1), no extra node. A long memory-bound job K
    shares node 2 (free only after the shadow time: it costs the head nothing), not node 0 or 1; a long compute-bound
    job J may go nowhere; a short job S (ends by 100) takes the free node."""
    policy = CoschedulingPolicy(3, model=ClassTable(PAIRS), threshold=1.0, jobs_per_node=2)
    for queued in (job("X", 1, 100), job("Z", 1, 10), job("Y", 1, 1000)):
        policy.submit(queued)
    assert starts(policy, 0) == {"X": [0], "Z": [1], "Y": [2]}
    assert policy.complete("Z")
    for queued in (job("H", 2, 500), job("K", 1, 500, "m"), job("J", 1, 500), job("S", 1, 60)):
        policy.submit(queued)
    assert starts(policy, 10) == {"K": [2], "S": [1]}
    assert [queued.id for queued in policy.queue] == ["H", "J"]
    assert policy.shadow(policy.queue[0], 10) == (100.0, 0)


def test_threshold_and_jobs_per_node_are_checked():
    with pytest.raises(ValueError, match="threshold"):
        CoschedulingPolicy(2, model=NoSpeedup(), threshold=0)
    with pytest.raises(ValueError, match="jobs_per_node"):
        CoschedulingPolicy(2, model=NoSpeedup(), jobs_per_node=0)
    with pytest.raises(ValueError, match="threshold"):
        check_scheduler_options("easy-coscheduling", {"threshold": "high"})
    with pytest.raises(ValueError, match="unknown speedup model"):
        check_scheduler_options("easy-coscheduling", {"speedup_model": "magic"})


# -- random workloads -------------------------------------------------------------------------------------------


def drive(policy, jobs: list[tuple[str, float, int, float | None, float, str]], jobs_per_node: int,
          model) -> dict[str, tuple[float, list[int]]]:
    """Play Batsim's part for ``policy``: submissions of one instant in one message, then one message per completion;
    jobs run their run time whatever their neighbours. Checks the invariants at every decision; returns each job's
    start time and nodes."""
    nb = policy.nb_resources
    on_node: list[list[str]] = [[] for _ in range(nb)]
    by_id = {j[0]: j for j in jobs}
    result: dict[str, tuple[float, list[int]]] = {}
    first_shadow: dict[str, float] = {}
    running: list[tuple[float, int, str]] = []
    index, sequence, last = 0, 0, -math.inf
    while index < len(jobs) or running:
        if index < len(jobs) and (not running or jobs[index][1] <= running[0][0]):
            now = jobs[index][1]
            while index < len(jobs) and jobs[index][1] == now:
                name, _, res, walltime, _, cls = jobs[index]
                assert policy.submit(QueuedJob(name, res, walltime, {"id": name, "res": res, "class": cls})) is None
                index += 1
        else:
            now, _, name = heapq.heappop(running)
            assert policy.complete(name)
            for node in result[name][1]:
                on_node[node].remove(name)
        assert now >= last, "time never goes back"
        last = now
        for queued, allocation in policy.decide(now):
            name = queued.id
            assert name not in result, f"{name} started twice"
            nodes = list(allocation)
            assert len(set(nodes)) == queued.requested_resources
            for node in nodes:
                for other in on_node[node]:
                    mine, theirs = by_id[name][5], by_id[other][5]
                    assert model.speedup({"class": mine}, {"class": theirs}) >= policy.threshold
                    assert model.speedup({"class": theirs}, {"class": mine}) >= policy.threshold
                on_node[node].append(name)
                assert len(on_node[node]) <= jobs_per_node, f"node {node} runs {on_node[node]}"
            result[name] = (now, nodes)
            heapq.heappush(running, (now + by_id[name][4], sequence, name))
            sequence += 1
        if policy.reservation is not None:  # computed before the decision's backfilling
            first_shadow.setdefault(policy.reservation.job_id, policy.reservation.shadow_time)
    assert set(result) == set(by_id), "every job starts exactly once"
    for name, shadow in first_shadow.items():
        assert result[name][0] <= shadow + 1e-6, f"{name} held the reservation for {shadow} but started later"
    return result


@st.composite
def workloads(draw, nb: int):
    count = draw(st.integers(1, 25))
    jobs, now = [], 0.0
    for number in range(count):
        now += draw(st.sampled_from([0, 0, 1, 5, 20]))
        walltime = draw(st.sampled_from([10.0, 30.0, 100.0, None]))
        runtime = draw(st.sampled_from([1.0, 7.0, 30.0])) if walltime is None else min(
            walltime, draw(st.sampled_from([1.0, 7.0, 30.0, 100.0])))
        jobs.append((f"j{number}", now, draw(st.integers(1, nb)), walltime, runtime, draw(st.sampled_from("cm"))))
    return jobs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), nb=st.integers(1, 5), jobs_per_node=st.integers(1, 3),
       threshold=st.sampled_from([0.7, 0.9, 1.0, 1.1]))
def test_invariants_on_random_workloads(data, nb, jobs_per_node, threshold):
    jobs = data.draw(workloads(nb))
    model = ClassTable(PAIRS)
    drive(CoschedulingPolicy(nb, model=model, threshold=threshold, jobs_per_node=jobs_per_node), jobs,
          jobs_per_node, model)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), nb=st.integers(1, 5))
def test_one_job_per_node_decides_as_easy(data, nb):
    """With jobs_per_node = 1 the decisions (start times and nodes) are those of EASY backfilling."""
    jobs = data.draw(workloads(nb))
    model = ClassTable(PAIRS)
    ours = drive(CoschedulingPolicy(nb, model=model, threshold=0.5, jobs_per_node=1), jobs, 1, model)
    assert ours == drive(EasyPolicy(nb), jobs, 1, model)


# -- runs -------------------------------------------------------------------------------------------------------

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
RULE = {"field": "res", "threshold": 4, "below": "compute", "above": "memory"}


def test_a_run_gives_the_engine_model_to_the_scheduler(tmp_path):
    spec = RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy-coscheduling", out_dir=tmp_path / "r",
                         speedup_model="table", speedup_options={"table": str(TABLE), "class_rule": RULE})
    assert spec.scheduler.options == {"speedup_model": "table", "speedup_options": {"table": str(TABLE),
                                                                                    "class_rule": RULE}}
    with pytest.raises(RunSpecError, match="predicts speedups with a model"):
        RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy-coscheduling", out_dir=tmp_path / "r")
    with pytest.raises(RunSpecError, match="needs co-scheduling"):
        RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy-coscheduling", out_dir=tmp_path / "r",
                      scheduler_options={"speedup_model": "none"})
    RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy-coscheduling", out_dir=tmp_path / "r",
                  scheduler_options={"speedup_model": "none", "jobs_per_node": 1})  # whole nodes: no sharing needed
    with pytest.raises(RunSpecError, match="speedup_options given without speedup_model"):
        RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy-coscheduling", out_dir=tmp_path / "r",
                      speedup_model="none", scheduler_options={"speedup_options": {"table": "x.csv"}})


def test_kth_jobs_share_nodes_only_with_jobs_the_table_accepts(tmp_path):
    """The first 3,000 KTH-SP2 jobs on the embedded engine with co-scheduling (the table model of
    expe/speedups/two-classes.csv, classes by requested nodes): at threshold 1.0 jobs share nodes (two memory-bound
    or two compute-bound jobs never do), and they wait less than under EASY on the same engine."""
    from batreplay.formats.out_jobs import read_out_jobs
    from batreplay.run.runner import run

    options = {"table": str(TABLE), "class_rule": RULE}
    for name, scheduler in [("cos", "easy-coscheduling"), ("easy", "easy")]:
        run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler=scheduler, out_dir=tmp_path / name,
                          max_jobs=3000, speedup_model="table", speedup_options=options))
    jobs = read_out_jobs(tmp_path / "cos" / "out_jobs.csv")
    easy = read_out_jobs(tmp_path / "easy" / "out_jobs.csv")
    assert len(jobs) == 3000 and (jobs["final_state"] != "REJECTED").all()
    classes = {row.job_id: ("compute" if row.requested_number_of_resources < 4 else "memory")
               for row in jobs.itertuples()}
    events = []  # (time, +1 start / -1 end, job, nodes); ends first at equal times
    for row in jobs.itertuples():
        nodes = [n for part in str(row.allocated_resources).split() for n in _expand(part)]
        events += [(row.starting_time, 1, row.job_id, nodes), (row.finish_time, 0, row.job_id, nodes)]
    on_node: dict[int, set] = {}
    shared = 0
    for _time, kind, job_id, nodes in sorted(events, key=lambda e: (e[0], e[1])):
        for node in nodes:
            here = on_node.setdefault(node, set())
            if kind == 0:
                here.discard(job_id)
                continue
            assert len(here) < 2
            for other in here:
                assert classes[other] != classes[job_id], f"{job_id} and {other} share node {node}"
                shared += 1
            here.add(job_id)
    assert shared > 100
    assert jobs["waiting_time"].mean() < easy["waiting_time"].mean()


def _expand(part: str) -> list[int]:
    first, _, last = part.partition("-")
    return list(range(int(first), int(last or first) + 1))
