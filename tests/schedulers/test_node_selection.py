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
    assert set(out.loc[out["final_state"] == "REJECTED", "job_id"]) == wide  # one-slot jobs only, the others said
    ran = out[out["final_state"] != "REJECTED"]
    events = []
    for row in ran.itertuples():
        (host,) = list(ProcSet.from_str(row.allocated_resources))
        events += [(row.starting_time, 1, host), (row.finish_time, -1, host)]
    load = [0] * platform.nb_compute
    for _time, change, host in sorted(events, key=lambda e: (e[0], e[1])):  # ends before starts at one instant
        load[host] += change
        assert load[host] <= platform.hosts[host].slots
    # on these hosts a job never gets less than a core: it runs as fast as alone
    for row in ran.itertuples():
        seconds = float(row.profile[1:])
        assert row.execution_time == pytest.approx(seconds / platform.hosts[int(row.allocated_resources)].speed
                                                   * 1e9, abs=1e-5)
