"""Node selection (load balancing, Caspart et al.) and job slots: the strategies on hand-made states, the slot
pool, and the backfilling family placing one-slot jobs on the slots of a typed platform under compute sharing:
no node runs more jobs than it has slots, every job ends once (hypothesis); lowest-id on whole nodes is today's
placement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.platforms.generate import write_platform
from batreplay.platforms.node_types import NodeType
from batreplay.platforms.reader import read_platform
from batreplay.schedulers.node_selection import (
    NODE_SELECTIONS,
    SlotPool,
    check_placement_options,
    slot_pool_of,
)
from batreplay.schedulers.registry import load_scheduler
from batreplay.schedulers.resource_pool import ResourcePool

# Five nodes: free slots, used slots, speeds (flop/s per core)
FREE = np.array([0, 2, 1, 3, 1])
USED = np.array([4, 2, 1, 0, 3])
SPEEDS = np.array([1e9, 1e9, 2e9, 1e9, 2e9])


@pytest.mark.parametrize(("name", "count", "expected"), [
    ("lowest-id", 2, [1, 2]),
    ("least-loaded", 2, [3, 2]),  # used 0 (node 3), then used 1 (node 2)
    ("best-fit", 3, [2, 4, 1]),  # fewest free slots first: 1, 1 (ids 2, 4), then 2 (id 1)
    ("fastest-first", 2, [2, 4]),  # 2 Gflop/s nodes, the less loaded first (used 1 before 3)
])
def test_strategies_choose_as_their_rule_says(name, count, expected):
    assert NODE_SELECTIONS[name]().choose(FREE, USED, SPEEDS, count).tolist() == expected


def test_round_robin_goes_on_from_the_last_node_chosen():
    strategy = NODE_SELECTIONS["round-robin"]()
    assert strategy.choose(FREE, USED, SPEEDS, 2).tolist() == [1, 2]
    assert strategy.choose(FREE, USED, SPEEDS, 2).tolist() == [3, 4]
    assert strategy.choose(FREE, USED, SPEEDS, 1).tolist() == [1]  # node 0 is full: wraps to 1


def test_random_is_seeded():
    first = [NODE_SELECTIONS["random"](seed=5).choose(FREE, USED, SPEEDS, 2).tolist() for _ in range(2)]
    assert first[0] == first[1] and len(set(first[0])) == 2 and 0 not in first[0]
    draws = {tuple(NODE_SELECTIONS["random"](seed=s).choose(FREE, USED, SPEEDS, 2).tolist()) for s in range(20)}
    assert len(draws) > 1


def test_fastest_first_needs_speeds():
    with pytest.raises(ValueError, match="property 'speed'"):
        NODE_SELECTIONS["fastest-first"]().choose(FREE, USED, np.full(5, np.nan), 1)


def test_slot_pool_counts_slots_and_refuses_double_release():
    pool = SlotPool([0, 1, 2], [2, 1, 3], NODE_SELECTIONS["least-loaded"](), [1e9] * 3)
    assert (pool.nb_total, pool.nb_free) == (6, 6)
    first = pool.allocate(1)
    second = pool.allocate(1)
    third = pool.allocate(2)
    assert (first, second) == (ProcSet(0), ProcSet(1))  # least loaded, then lowest id
    assert third == ProcSet(2, 0)  # node 2 (empty), then node 0 (1 used) before node 1 (full)
    assert pool.nb_free == 2 and pool.free == ProcSet(2)  # nodes 0 and 1 are full
    pool.release(second)
    with pytest.raises(ValueError, match="no slot in use"):
        pool.release(second)
    with pytest.raises(ValueError, match="cannot take 3 nodes"):
        pool.allocate(3)


@given(st.lists(st.one_of(st.integers(1, 4), st.integers(-1, -1)), max_size=40))
def test_one_slot_lowest_id_pool_allocates_as_the_resource_pool(operations):
    """Whole nodes, lowest ids first: the slot pool gives exactly today's allocations (positive: allocate that
    many nodes if they are free; -1: release the oldest allocation)."""
    ids = list(range(8))
    old, new = ResourcePool(ProcSet((0, 7))), SlotPool(ids, [1] * 8, NODE_SELECTIONS["lowest-id"](), [1e9] * 8)
    held_old, held_new = [], []
    for count in operations:
        if count < 0:
            if held_old:
                old.release(held_old.pop(0))
                new.release(held_new.pop(0))
        elif count <= old.nb_free:
            held_old.append(old.allocate(count))
            held_new.append(new.allocate(count))
            assert held_old[-1] == held_new[-1]
        assert old.nb_free == new.nb_free


def test_fastest_first_is_refused_at_the_start_without_speeds():
    resources = {0: {"id": 0, "properties": {"role": ""}}, 1: {"id": 1, "properties": {"role": "", "speed": "2e9"}}}
    with pytest.raises(ValueError, match=r"fastest-first needs every host's property 'speed'.*resources \[0\]"):
        slot_pool_of(resources, {"node_selection": "fastest-first"})
    # without the property a node has one slot, whatever its cores (Batsim does not send core counts)
    assert slot_pool_of(resources, {"slots": True}).nb_total == 2


def test_placement_options_are_checked():
    with pytest.raises(ValueError, match="node_selection: 'nearest'"):
        check_placement_options({"node_selection": "nearest"})
    with pytest.raises(ValueError, match="slots: expected true or false"):
        check_placement_options({"slots": "yes"})
    with pytest.raises(ValueError, match="seed: expected an integer"):
        check_placement_options({"seed": 1.5})


def _typed_platform(tmp_path):
    return write_platform(tmp_path / "grid.xml", node_types=[NodeType("fast", 2, 2e9, cores=4, slots=4),
                                                             NodeType("slow", 3, 1e9, cores=2, slots=2)])


def test_slot_pool_of_a_typed_platform(tmp_path):
    platform = read_platform(_typed_platform(tmp_path))
    resources = {h.id: {"id": h.id, "properties": {"role": "", **dict(h.properties)}} for h in platform.hosts}
    pool = slot_pool_of(resources, {"slots": True, "node_selection": "fastest-first"})
    assert pool.nb_total == 2 * 4 + 3 * 2
    assert [pool.allocate(1) for _ in range(3)] == [ProcSet(0), ProcSet(1), ProcSet(0)]
    whole = slot_pool_of(resources, {"node_selection": "best-fit"})
    assert whole.nb_total == 5  # without slots, a node is one slot


@st.composite
def grid_jobs(draw):
    jobs = draw(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40), st.sampled_from([1, 1, 1, 2])),
                         min_size=1, max_size=40))
    profiles, entries = {}, []
    for number, (subtime, seconds, res) in enumerate(jobs):
        profiles[f"p{seconds}"] = {"type": "parallel_homogeneous", "cpu": seconds * 1e9, "com": 0}
        entries.append({"id": str(number), "subtime": subtime, "walltime": 4 * seconds, "res": res,
                        "profile": f"p{seconds}"})
    return {"nb_res": 5, "jobs": entries, "profiles": profiles}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(grid_jobs(), st.sampled_from(sorted(NODE_SELECTIONS)), st.sampled_from(["fcfs", "easy", "conservative"]))
def test_no_node_runs_more_jobs_than_its_slots(tmp_path, workload, strategy, scheduler):
    platform = read_platform(_typed_platform(tmp_path))
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": workload},
                          options=EngineOptions(compute_sharing=True), cores=platform.cores,
                          host_properties=platform.host_properties)
    run_scheduler(engine, load_scheduler(scheduler, {"slots": True, "node_selection": strategy, "seed": 3}))
    out = jobs_frame(engine.records)
    assert sorted(out["job_id"]) == sorted(j["id"] for j in workload["jobs"])  # every job ends once
    wide = {j["id"] for j in workload["jobs"] if j["res"] > 1}
    # FCFS and EASY spread a wider job over distinct nodes, a slot each; conservative places one-slot jobs only
    rejected = wide if scheduler == "conservative" else set()
    assert set(out.loc[out["final_state"] == "REJECTED", "job_id"]) == rejected
    ran = out[out["final_state"] != "REJECTED"]
    events = []
    for row in ran.itertuples():
        hosts = list(ProcSet.from_str(row.allocated_resources))
        assert len(hosts) == row.requested_number_of_resources  # distinct nodes
        events += [(row.starting_time, 1, host) for host in hosts] + [(row.finish_time, -1, host) for host in hosts]
    load = [0] * platform.nb_compute
    for _time, change, host in sorted(events, key=lambda e: (e[0], e[1])):  # ends before starts at one instant
        load[host] += change
        assert load[host] <= platform.hosts[host].slots
    # on these hosts a job never gets less than a core: it runs as fast as alone on its slowest node
    for row in ran.itertuples():
        seconds = float(row.profile[1:])
        slowest = min(platform.hosts[h].speed for h in ProcSet.from_str(row.allocated_resources))
        assert row.execution_time == pytest.approx(seconds / slowest * 1e9, abs=1e-5)


# -- jobs of several slots, spread over nodes (FCFS and EASY) -------------------------------------------------------


def drive_slots(policy, capacities: list[int], jobs: list[tuple[str, float, int, float, float]],
                head_stays: bool = True, strategy: str = "lowest-id"):
    """Play Batsim's part for ``policy`` on a slot pool of ``capacities`` (lowest-id): submissions of one instant in
    one message, then one message per completion; jobs run their run time (<= walltime). Checks at each decision:
    a job gets distinct nodes, no node runs more jobs than its slots, time never goes back; at the end every job
    started once, and, when the head stays the head until it starts (``head_stays``: FCFS queue order), a job that
    held EASY's reservation started no later than its first shadow time. Returns each job's start time and nodes."""
    import heapq
    import math

    from batreplay.schedulers.easy import EasyPolicy
    from batreplay.schedulers.policy import QueuedJob

    nodes = list(range(len(capacities)))
    policy.use_pool(SlotPool(nodes, capacities, NODE_SELECTIONS[strategy](seed=5), [1e9] * len(nodes)))
    used = [0] * len(nodes)
    by_id = {j[0]: j for j in jobs}
    result, first_shadow, running = {}, {}, []
    index, sequence, last = 0, 0, -math.inf
    while index < len(jobs) or running:
        if index < len(jobs) and (not running or jobs[index][1] <= running[0][0]):
            now = jobs[index][1]
            while index < len(jobs) and jobs[index][1] == now:
                name, _, res, walltime, _ = jobs[index]
                assert policy.submit(QueuedJob(name, res, walltime)) is None
                index += 1
        else:
            now, _, name = heapq.heappop(running)
            assert policy.complete(name)
            for node in result[name][1]:
                used[node] -= 1
        assert now >= last
        last = now
        for queued, allocation in policy.decide(now):
            assert queued.id not in result, f"{queued.id} started twice"
            hosts = list(allocation)
            assert len(hosts) == queued.requested_resources
            for node in hosts:
                used[node] += 1
                assert used[node] <= capacities[node], f"node {node} over its {capacities[node]} slots"
            result[queued.id] = (now, hosts)
            heapq.heappush(running, (now + by_id[queued.id][4], sequence, queued.id))
            sequence += 1
        if isinstance(policy, EasyPolicy) and policy.reservation is not None:
            first_shadow.setdefault(policy.reservation.job_id, policy.reservation.shadow_time)
    assert set(result) == set(by_id), "every job starts exactly once"
    for name, shadow in first_shadow.items() if head_stays else ():
        assert result[name][0] <= shadow + 1e-6, f"{name} held the reservation for {shadow}, started later"
    return result


@st.composite
def slot_workloads(draw, nodes: int, widest: int):
    jobs, now = [], 0.0
    for number in range(draw(st.integers(1, 30))):
        now += draw(st.sampled_from([0, 0, 1, 5, 20]))
        walltime = draw(st.sampled_from([10.0, 30.0, 100.0]))
        runtime = min(walltime, draw(st.sampled_from([1.0, 7.0, 30.0, 100.0])))
        jobs.append((f"j{number}", now, draw(st.integers(1, min(widest, nodes))), walltime, runtime))
    return jobs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), capacities=st.lists(st.integers(1, 4), min_size=1, max_size=5),
       kind=st.sampled_from(["fcfs", "easy", "easy-sjf", "easy-sjbf"]),
       strategy=st.sampled_from(["lowest-id", "least-loaded", "best-fit", "round-robin", "random"]))
def test_jobs_of_several_slots_are_placed_within_every_node(data, capacities, kind, strategy):
    from batreplay.schedulers.registry import FAMILY

    jobs = data.draw(slot_workloads(len(capacities), 3))
    drive_slots(FAMILY[kind].policy(len(capacities)), capacities, jobs, head_stays=kind != "easy-sjf",
                strategy=strategy)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), capacities=st.lists(st.integers(1, 4), min_size=1, max_size=5), widest=st.sampled_from([1, 3]))
def test_spread_easy_is_easy_on_whole_nodes_and_on_one_slot_jobs(data, capacities, widest):
    """The per-node rules decide as EASY counted in slots where that is exact: on nodes of one slot (EASY on whole
    nodes, the case that says most), and for one-slot jobs on nodes of several slots (there a waiting head means no
    free slot at all, so this half only checks the start of heads and the reservation's bookkeeping)."""
    from batreplay.schedulers.easy import EasyPolicy, SlotEasyPolicy

    if widest > 1:
        capacities = [1] * len(capacities)
    jobs = data.draw(slot_workloads(len(capacities), widest))
    spread = EasyPolicy(len(capacities))
    counted = EasyPolicy(len(capacities))
    spread.places_spread_jobs = True
    counted.places_spread_jobs = False
    if widest > 1:  # whole nodes: force the per-node rules (EasyPolicy becomes SlotEasyPolicy on slots only)
        original = spread.use_pool

        def per_node(pool):
            original(pool)
            spread.spread_slots = True
            spread.__class__ = SlotEasyPolicy

        spread.use_pool = per_node
    result = drive_slots(spread, capacities, jobs)
    per_node = widest > 1 or max(capacities) > 1  # slots somewhere, or forced above
    assert type(spread) is (SlotEasyPolicy if per_node else EasyPolicy) and type(counted) is EasyPolicy
    assert result == drive_slots(counted, capacities, jobs)


def test_a_long_backfilled_job_keeps_the_last_free_slot_of_a_node_for_the_head():
    """Two nodes of 2 slots; A (2 nodes, until 100) and C (1 slot on node 0) run, node 1 has a free slot; the head
    H needs 2 nodes. If C ends at 30, H's shadow time is 30 with one free slot expected on each node, no extra
    node: a long one-slot job L would take node 1's last expected slot and waits, a short one S (ends by 30) starts
    there. If C ends at 100 with A, two slots are expected free on each node at 100: L may take node 1's free slot,
    one is left for H."""
    from batreplay.schedulers.easy import EasyPolicy
    from batreplay.schedulers.policy import QueuedJob

    for c_end, started, expected in [(30, {"S": [1]}, [1, 1]), (100, {"L": [1]}, [2, 1])]:
        policy = EasyPolicy(2)
        policy.use_pool(SlotPool([0, 1], [2, 2], NODE_SELECTIONS["lowest-id"](), [1e9, 1e9]))
        policy.submit(QueuedJob("A", 2, 100))
        policy.submit(QueuedJob("C", 1, c_end))
        assert {q.id: list(a) for q, a in policy.decide(0)} == {"A": [0, 1], "C": [0]}
        for job in (QueuedJob("H", 2, 10), QueuedJob("L", 1, 500), QueuedJob("S", 1, 20)):
            policy.submit(job)
        assert {q.id: list(a) for q, a in policy.decide(1)} == started
        assert policy.reservation == ("H", float(c_end), 0)
        shadow, at_shadow = policy.slot_shadow(policy.queue[0], 1)
        assert shadow == c_end and list(at_shadow) == expected


@pytest.mark.parametrize(("depth", "rejects"), [(0, False), (1, False), (2, True), ("all", True)])
def test_which_policies_place_jobs_of_several_slots(depth, rejects):
    """FCFS and EASY place a 2-slot job on nodes of 2 slots; reservation depths above 1 and conservative backfilling,
    which count free slots as one number, reject it with the reason."""
    from batreplay.schedulers.backfilling import Backfilling
    from batreplay.schedulers.policy import QueuedJob

    policy = Backfilling("fcfs", depth).policy(3)
    policy.use_pool(SlotPool([0, 1, 2], [2, 2, 2], NODE_SELECTIONS["lowest-id"](), [1e9] * 3))
    rejection = policy.submit(QueuedJob("wide", 2, 10))
    assert (rejection is not None) == rejects
    if rejects:
        assert "places one-slot jobs only" in rejection.reason
    else:
        assert [list(allocation) for _, allocation in policy.decide(0)] == [[0, 1]]


def test_a_job_wider_than_the_nodes_is_rejected_even_with_slots_enough():
    """Three nodes of 4 slots: a job of 4 slots needs 4 distinct nodes and can never run; it is rejected with the
    reason (a run once stopped on it when the reservation looked for 4 nodes)."""
    from batreplay.schedulers.easy import EasyPolicy
    from batreplay.schedulers.policy import QueuedJob

    policy = EasyPolicy(3)
    policy.use_pool(SlotPool([0, 1, 2], [4, 4, 4], NODE_SELECTIONS["lowest-id"](), [1e9] * 3))
    policy.submit(QueuedJob("A", 3, 100))
    rejection = policy.submit(QueuedJob("wide", 4, 10))
    assert rejection is not None and "only 3 nodes" in rejection.reason
    assert [q.id for q, _ in policy.decide(0)] == ["A"] and policy.queue == ()


def test_a_pick_that_costs_the_head_too_much_is_replaced_by_spare_slots():
    """Nodes of 1, 1 and 2 slots. R1 (until 100) holds node 0, H0 (2 slots) waits for R1; a long one-slot job L:
    node 1 is free now and at the shadow time its only slot is one the head counts on, node 2 keeps a spare slot.
    Lowest-id would pick node 1 (costing the head its second node, no extra node); L goes to node 2 instead."""
    from batreplay.schedulers.easy import EasyPolicy
    from batreplay.schedulers.policy import QueuedJob

    policy = EasyPolicy(3)
    policy.use_pool(SlotPool([0, 1, 2], [1, 1, 2], NODE_SELECTIONS["lowest-id"](), [1e9] * 3))
    policy.submit(QueuedJob("R1", 1, 100))
    policy.submit(QueuedJob("R2", 1, 100))
    policy.submit(QueuedJob("R3", 1, 100))
    assert {q.id: list(a) for q, a in policy.decide(0)} == {"R1": [0], "R2": [1], "R3": [2]}
    assert policy.complete("R2")
    policy.submit(QueuedJob("H", 3, 10))
    policy.submit(QueuedJob("L", 1, 500))
    # H needs 3 nodes: at 100 nodes 0, 1, 2 have 1, 1, 2 free slots; node 1 is free now but the head needs it
    assert {q.id: list(a) for q, a in policy.decide(1)} == {"L": [2]}
    assert policy.reservation == ("H", 100.0, 0)
