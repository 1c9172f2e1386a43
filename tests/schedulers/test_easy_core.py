"""One EASY core (:mod:`batreplay.schedulers.easy_core`, Lifka 1995; Mu'alem & Feitelson 2001) and its variants.

Structure: whole-node EASY, EASY on job slots, Schedulus' EASY and co-scheduling EASY are subclasses of
:class:`EasyCore` that inherit its rules (``decide``, ``_backfill``) and override only hooks it names
(:data:`EasyCore.HOOKS`), each the hooks its docstring says.

Behaviour: one hand-built queue under the four variants, where each hook changes the head's shadow time, its extra
nodes or the backfilling decision as it says. The expected values are computed from the jobs' sizes and walltimes
in the comments, not copied from a run. Jobs are written name(nodes, walltime s); N = number of nodes.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from batreplay.platforms.speedup import NoSpeedup
from batreplay.schedulers.coscheduling import Coscheduling, CoschedulingPolicy
from batreplay.schedulers.easy import Easy, EasyPolicy, SlotEasyPolicy
from batreplay.schedulers.easy_core import EasyCore, Reservation
from batreplay.schedulers.node_selection import NODE_SELECTIONS, SlotPool
from batreplay.schedulers.policy import SchedulingPolicy
from batreplay.schedulers.registry import FAMILY, SCHEDULERS
from batreplay.schedulers.schedulus import Schedulus, SchedulusEasyPolicy
from test_coscheduling_scheduler import ClassTable, job
from test_scheduler_properties import simulate, workloads

#: What a variant may override besides hooks: the queue bookkeeping of SchedulingPolicy.
BOOKKEEPING = {"__init__", "_enqueue", "complete", "use_pool"}

#: The hooks each variant overrides (the table of easy_core's module docstring).
OVERRIDDEN_HOOKS = {
    EasyPolicy: {"_first_candidate", "_end_scan"},
    SlotEasyPolicy: {"_nodes_free", "_start_now", "shadow", "_start_on_extra", "_first_candidate", "_end_scan"},
    SchedulusEasyPolicy: {"_expected_duration", "_backfills", "shadow", "_ends_by_shadow"},
    CoschedulingPolicy: {"_nodes_free", "_start_now", "shadow", "_start_on_extra"},
}


def overridden_methods(variant: type) -> set[str]:
    """Methods and properties of the core (or of SchedulingPolicy) that ``variant`` or a class between it and the
    core redefines."""
    of_core = {name for cls in EasyCore.__mro__ for name in vars(cls)}
    between = variant.__mro__[:variant.__mro__.index(EasyCore)]
    return {name for cls in between for name, value in vars(cls).items()
            if name in of_core and (callable(value) or isinstance(value, property))
            and (name == "__init__" or not name.startswith("__"))}


@pytest.mark.parametrize("variant", list(OVERRIDDEN_HOOKS), ids=lambda cls: cls.__name__)
def test_each_variant_is_the_core_with_only_named_hooks_overridden(variant):
    assert issubclass(variant, EasyCore)
    for rule in ("decide", "_backfill"):
        assert getattr(variant, rule) is getattr(EasyCore, rule), f"{variant.__name__} rewrites {rule}"
    overridden = overridden_methods(variant)
    assert overridden & set(EasyCore.HOOKS) == OVERRIDDEN_HOOKS[variant]
    assert overridden - set(EasyCore.HOOKS) <= BOOKKEEPING, overridden - set(EasyCore.HOOKS) - BOOKKEEPING
    for hook in EasyCore.HOOKS:  # every hook is a method of the core, documented there
        assert callable(getattr(EasyCore, hook)) and getattr(EasyCore, hook).__doc__


def test_the_registered_easy_schedulers_run_the_core():
    assert Easy.policy_class is EasyPolicy and SCHEDULERS["easy"] is Easy
    assert Schedulus.policy_class is SchedulusEasyPolicy and SCHEDULERS["easy-schedulus"] is Schedulus
    assert Coscheduling.policy_class is CoschedulingPolicy and SCHEDULERS["easy-coscheduling"] is Coscheduling
    for name in ("easy-sjf", "easy-ljf", "easy-saf", "easy-laf", "easy-sjbf"):
        assert type(FAMILY[name].policy(4)) is EasyPolicy
    # on nodes of several slots EASY turns into the per-node variant (same object, same state)
    policy = FAMILY["easy-sjbf"].policy(2)
    policy.use_pool(SlotPool([0, 1], [2, 1], NODE_SELECTIONS["lowest-id"](), [1e9, 1e9]))
    assert type(policy) is SlotEasyPolicy and policy.spread_slots
    assert not issubclass(SchedulusEasyPolicy, EasyPolicy) and not issubclass(CoschedulingPolicy, EasyPolicy)
    assert issubclass(EasyCore, SchedulingPolicy)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=workloads(no_walltime=True, scale=0.1))
def test_the_core_with_its_defaults_is_easy(data):
    """The core alone decides as EasyPolicy, whose only hooks are the incremental scan."""
    nb, jobs = data
    core, easy = simulate(EasyCore(nb), jobs), simulate(EasyPolicy(nb), jobs)
    assert (core.starts, core.allocations, core.start_order) == (easy.starts, easy.allocations, easy.start_order)


# -- one queue, four variants ---------------------------------------------------------------------------------------
#
# At t = 0, in one message: A(2, 10) and B(1, 100) start as head jobs; then H(3, 10) is the head and does not fit;
# C(1, 50) is the only backfilling candidate. A and B are compute-bound ("c"), H too, C is memory-bound ("m").

NOW = 0.0
A_NODES, A_WALL = 2, 10.0
B_NODES, B_WALL = 1, 100.0
H_NODES, H_WALL = 3, 10.0
C_NODES, C_WALL = 1, 50.0


def submit_scenario(policy) -> dict[str, list[int]]:
    for queued in (job("A", A_NODES, A_WALL), job("B", B_NODES, B_WALL), job("H", H_NODES, H_WALL),
                   job("C", C_NODES, C_WALL, "m")):
        assert policy.submit(queued) is None
    return {queued.id: list(allocation) for queued, allocation in policy.decide(NOW)}


def test_whole_node_easy_shadow_is_the_first_end_that_frees_enough_nodes():
    # N=4: A on 0-1, B on 2, node 3 free. H fits once A ends: shadow = NOW + A_WALL; free then = 1 + A_NODES = 3
    # -> extra = 3 - H_NODES = 0. C ends at NOW + C_WALL = 50 > 10 and needs 1 > 0 extra node: it waits.
    nb = 4
    policy = EasyPolicy(nb)
    assert submit_scenario(policy) == {"A": [0, 1], "B": [2]}
    free_at_shadow = nb - A_NODES - B_NODES + A_NODES
    assert policy.reservation == Reservation("H", NOW + A_WALL, free_at_shadow - H_NODES) == ("H", 10.0, 0)
    assert NOW + C_WALL > NOW + A_WALL and C_NODES > free_at_shadow - H_NODES
    assert [queued.id for queued in policy.queue] == ["H", "C"]


def test_slot_easy_counts_nodes_with_a_free_slot_at_the_shadow_time():
    # Node 0 has 2 slots, nodes 1-3 one: A takes a slot on 0 and 1, B node 0's second slot (lowest id with a free
    # slot), so nodes 2 and 3 have a free slot. H needs 3 nodes: at A's end (10) every node has a free slot, B
    # still running -> shadow 10, extra = 4 nodes - 3 = 1, where whole nodes gave 0. C does not end by 10 but
    # takes node 2, whose only slot is expected free at 10: it uses up the extra node, and starts.
    capacities = [2, 1, 1, 1]
    policy = EasyPolicy(len(capacities))
    policy.use_pool(SlotPool(range(len(capacities)), capacities, NODE_SELECTIONS["lowest-id"](), [1e9] * 4))
    assert type(policy) is SlotEasyPolicy
    started = submit_scenario(policy)
    assert started == {"A": [0, 1], "B": [0], "C": [2]}
    nodes_with_a_slot_at_shadow = len(capacities)  # A's two slots are back, node 0 keeps B but has 2 slots
    assert policy.reservation == ("H", NOW + A_WALL, nodes_with_a_slot_at_shadow - H_NODES)
    assert policy.reservation.extra_nodes == 1
    shadow, at_shadow = policy.slot_shadow(policy.queue[0], NOW)
    assert shadow == NOW + A_WALL and list(at_shadow) == [1, 1, 0, 1]  # C holds node 2's slot past the shadow


def test_schedulus_shadow_is_the_latest_expected_end_of_its_estimates():
    # Walltimes as estimates: the shadow time is the latest end, B's NOW + B_WALL = 100; the extra nodes are
    # counted where H first fits (after A): 3 - 3 = 0. C: NOW + 50 < 100 (strict test): backfilled on node 3.
    policy = SchedulusEasyPolicy(4)
    assert submit_scenario(policy) == {"A": [0, 1], "B": [2], "C": [3]}
    assert policy.reservation == ("H", NOW + B_WALL, 1 + A_NODES - H_NODES) == ("H", 100.0, 0)
    # With estimates (the _expected_duration hook), B is expected to end at 20: C (estimated 50) no longer ends
    # before the latest expected end, and waits; estimated at 15 (< 20) it is backfilled. An estimate equal to
    # the shadow time fails the strict test.
    for c_estimate, c_starts in ((50.0, False), (20.0, False), (15.0, True)):
        policy = SchedulusEasyPolicy(4, {"B": 20.0, "C": c_estimate})
        started = submit_scenario(policy)
        assert policy.reservation == ("H", max(NOW + A_WALL, NOW + 20.0), 0)
        assert ("C" in started) == c_starts == (NOW + c_estimate < 20.0)


def test_coscheduling_counts_nodes_a_kind_may_share_and_those_busy_past_the_shadow():
    # Two jobs per node; compute beside compute 0.85 (< 1: refused), memory beside compute 1.1 and compute beside
    # memory 1.0 (both >= 1: accepted). Heads take free nodes: A on 0-1, B on 2. H (compute) may share no node: it
    # waits for whole nodes. Node free times: 10, 10, 100, -inf -> H's 3rd earliest is 10: shadow 10, extra =
    # 3 nodes free by then - 3 = 0, as EASY. C (memory) does not end by 10, but node 2 (B until 100) takes it and
    # is busy past the shadow time anyway: it costs the head nothing, C starts there.
    pairs = {("c", "c"): 0.85, ("c", "m"): 1.0, ("m", "c"): 1.1, ("m", "m"): 0.7}
    policy = CoschedulingPolicy(4, model=ClassTable(pairs), threshold=1.0, jobs_per_node=2)
    assert submit_scenario(policy) == {"A": [0, 1], "B": [2], "C": [2]}
    assert policy.reservation == ("H", NOW + A_WALL, 0)
    assert list(policy.nodes.count) == [1, 1, 2, 0]
    # No sharing at all (threshold above every speedup): EASY's decision, C waits.
    policy = CoschedulingPolicy(4, model=NoSpeedup(), threshold=2.0, jobs_per_node=2)
    assert submit_scenario(policy) == {"A": [0, 1], "B": [2]}
    assert policy.reservation == ("H", 10.0, 0)


def test_a_subclass_of_whole_node_easy_given_nodes_of_several_slots_is_refused_not_misplaced():
    class MyEasy(EasyPolicy):
        pass

    with pytest.raises(TypeError, match="MyEasy subclasses EasyPolicy, whose rules count whole nodes"):
        MyEasy(2).use_pool(SlotPool([0, 1], [2, 1], NODE_SELECTIONS["lowest-id"](), [1e9, 1e9]))
    whole = MyEasy(2)
    whole.use_pool(SlotPool([0, 1], [1, 1], NODE_SELECTIONS["lowest-id"](), [1e9, 1e9]))  # one slot a node: fine
    assert type(whole) is MyEasy and not whole.spread_slots
