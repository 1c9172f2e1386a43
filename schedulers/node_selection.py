"""Node selection (load balancing): which nodes a starting job gets, and job slots per node.

Caspart et al. (2019, GridKa, Sect. 4) put a *load-balancing strategy* in
front of the worker nodes: it decides which node gets a job from the free job slots of each node. Here a
strategy is a class with one method, :meth:`NodeSelection.choose`, and :data:`NODE_SELECTIONS` holds the shipped
ones by name:

- ``lowest-id``: the lowest resource ids with a free slot (what every scheduler does by default);
- ``least-loaded``: the nodes running the fewest jobs (used slots), ties by lowest id;
- ``best-fit``: the fullest nodes that still have a free slot (fewest free slots), ties by lowest id;
- ``round-robin``: the next nodes with a free slot after the last one chosen, wrapping around;
- ``random``: nodes with a free slot drawn at random (seeded, reproducible);
- ``fastest-first``: the fastest nodes first (host property ``speed``, flop/s per core, which
  ``batreplay platform --node-types`` writes), ties by least loaded, then lowest id.

:class:`SlotPool` offers the interface of :class:`~batreplay.schedulers.resource_pool.ResourcePool` (``nb_total``,
``nb_free``, ``allocate``, ``release``), so the backfilling family (FCFS, EASY, conservative, ...) runs on it
unchanged: it counts *slots* instead of nodes. With ``slots`` off each node is one slot (whole nodes, as Batsim
allocates them without compute sharing); with ``slots`` on each node has the slots its host property ``slots``
gives (1 without it: Batsim does not send core counts), several one-slot jobs share a node, and the run needs
compute sharing (``batreplay run --compute-sharing``; a run description without it is refused) for Batsim to
accept them. A job takes one slot on each of as many distinct
nodes as it requests resources (Batsim gives a job distinct hosts, and one core of each). FCFS and EASY backfilling
(any queue order) place such jobs exactly: a job fits when that many nodes have a free slot, and EASY's reservation
asks when that many nodes will (:meth:`~batreplay.schedulers.easy.SlotEasyPolicy.slot_shadow`). Conservative
backfilling, reservation depths above 1 and easy-schedulus count free slots as one number, exact for one-slot jobs
only: on nodes of several slots they place one-slot jobs (grid logs such as LCG) and reject wider ones, counted.
This module imports numpy and procset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from procset import ProcSet


class NodeSelection:
    """A load-balancing strategy: which ``count`` nodes, among those with a free slot, a starting job gets.

    Args:
        seed: for strategies that draw at random.
    """

    name = "abstract"

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)

    def choose(self, free: np.ndarray, used: np.ndarray, speeds: np.ndarray, count: int) -> np.ndarray:
        """Indices of ``count`` distinct nodes, each with ``free[i] > 0``, in the order given to the job.

        Args:
            free: free slots of each node (int array, shape (n,)).
            used: used slots of each node (jobs running there), shape (n,).
            speeds: flop/s per core of each node, shape (n,) (NaN where unknown).
            count: how many nodes (1 <= count <= number of nodes with a free slot).
        """
        raise NotImplementedError


def _ordered(keys: tuple[np.ndarray, ...], free: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` nodes with a free slot that come first in the lexicographic order of ``keys`` (``keys[0]``
    first; the node index breaks remaining ties)."""
    candidates = np.flatnonzero(free > 0)
    order = np.lexsort((candidates, *[key[candidates] for key in reversed(keys)]))  # keys[0] is the primary one
    return candidates[order[:count]]


class LowestId(NodeSelection):
    """The lowest resource ids with a free slot."""

    name = "lowest-id"

    def choose(self, free, used, speeds, count):
        return np.flatnonzero(free > 0)[:count]


class LeastLoaded(NodeSelection):
    """The nodes running the fewest jobs, ties by lowest id."""

    name = "least-loaded"

    def choose(self, free, used, speeds, count):
        return _ordered((used,), free, count)


class BestFit(NodeSelection):
    """The fullest nodes that still have a free slot (fewest free slots), ties by lowest id: packs jobs."""

    name = "best-fit"

    def choose(self, free, used, speeds, count):
        return _ordered((free,), free, count)


class RoundRobin(NodeSelection):
    """The next nodes with a free slot after the last one chosen, wrapping around."""

    name = "round-robin"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.next = 0

    def choose(self, free, used, speeds, count):
        candidates = np.flatnonzero(free > 0)
        distance = (candidates - self.next) % len(free)
        chosen = candidates[np.argsort(distance, kind="stable")[:count]]
        self.next = (int(chosen[-1]) + 1) % len(free)
        return chosen


class RandomNodes(NodeSelection):
    """Nodes with a free slot drawn uniformly at random, without replacement (numpy generator seeded once)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng(self.seed)

    def choose(self, free, used, speeds, count):
        return self.rng.choice(np.flatnonzero(free > 0), size=count, replace=False)


class FastestFirst(NodeSelection):
    """The fastest nodes first (property ``speed``), ties by least loaded, then lowest id."""

    name = "fastest-first"

    def choose(self, free, used, speeds, count):
        if np.isnan(speeds).any():
            raise ValueError("node selection fastest-first needs every host's property 'speed' (flop/s per core), "
                             "which batreplay platform --node-types writes")
        return _ordered((-speeds, used), free, count)


#: The shipped strategies, by name.
NODE_SELECTIONS: dict[str, type[NodeSelection]] = {
    cls.name: cls for cls in (LowestId, LeastLoaded, BestFit, RoundRobin, RandomNodes, FastestFirst)}


class SlotPool:
    """Free job slots per node, handed out by a :class:`NodeSelection` (the interface of
    :class:`~batreplay.schedulers.resource_pool.ResourcePool`, counted in slots).

    Args:
        resources: the compute resource ids, and ``capacities``: the slots of each, in the same order.
        strategy: which nodes a job gets.
        speeds: flop/s per core of each node (NaN where unknown).

    Attributes:
        all: the resources (ProcSet); nb_total: slots in all; nb_free: free slots now.
    """

    def __init__(self, resources: Sequence[int], capacities: Sequence[int], strategy: NodeSelection,
                 speeds: Sequence[float]) -> None:
        if len(resources) == 0:
            raise ValueError("a platform needs at least one resource")
        self.ids = np.asarray(list(resources), dtype=np.int64)
        self.index = {int(r): i for i, r in enumerate(self.ids)}
        self.capacity = np.asarray(list(capacities), dtype=np.int64)
        if (self.capacity < 1).any():
            raise ValueError("every node needs at least one job slot")
        self.free_slots = self.capacity.copy()
        self.speeds = np.asarray(list(speeds), dtype=np.float64)
        self.strategy = strategy
        self.all = ProcSet(*(int(r) for r in self.ids))
        self.nb_total = int(self.capacity.sum())
        self.nb_free = self.nb_total

    @property
    def free(self) -> ProcSet:
        """The nodes with at least one free slot."""
        return ProcSet(*(int(r) for r in self.ids[self.free_slots > 0]))

    @property
    def one_slot_per_node(self) -> bool:
        """Every node has one slot (whole-node allocation)."""
        return bool((self.capacity == 1).all())

    def fits(self, count: int) -> bool:
        """Whether ``count`` distinct nodes have a free slot now (a job of ``count`` slots can start)."""
        return count <= np.count_nonzero(self.free_slots)

    def choose(self, count: int, among: np.ndarray | None = None) -> np.ndarray:
        """Positions (in :attr:`ids`) of the ``count`` distinct nodes with a free slot the strategy picks, among
        the nodes where the boolean mask ``among`` is true (all by default); nothing is taken yet.

        Raises:
            ValueError: fewer than ``count`` such nodes, ``count`` < 1, or a strategy that picks badly.
        """
        free = self.free_slots if among is None else np.where(among, self.free_slots, 0)
        available = int(np.count_nonzero(free))
        if count < 1 or count > available:
            raise ValueError(f"cannot take {count} nodes out of the {available} with a free slot")
        chosen = np.asarray(self.strategy.choose(free, self.capacity - self.free_slots, self.speeds, count))
        if len(set(chosen.tolist())) != count or (free[chosen] < 1).any():
            raise ValueError(f"node selection {self.strategy.name} chose {list(chosen)}: not {count} distinct "
                             "nodes with a free slot")
        return chosen

    def take(self, chosen: np.ndarray) -> ProcSet:
        """Take one slot on each node at the positions ``chosen`` (as :meth:`choose` gives them)."""
        self.free_slots[chosen] -= 1
        self.nb_free -= len(chosen)
        return ProcSet(*(int(r) for r in self.ids[chosen]))

    def allocate(self, count: int) -> ProcSet:
        """One slot on each of ``count`` distinct nodes, chosen by the strategy.

        Raises:
            ValueError: fewer than ``count`` nodes have a free slot, or ``count`` < 1.
        """
        return self.take(self.choose(count))

    def positions(self, allocation: ProcSet) -> np.ndarray:
        """Positions in :attr:`ids` of the nodes of ``allocation``."""
        return np.fromiter((self.index[r] for r in allocation), dtype=np.int64)

    def release(self, allocation: ProcSet) -> None:
        """Give back one slot on each node of ``allocation``.

        Raises:
            ValueError: a node of it has no slot in use (a double release) or is not a resource of this pool.
        """
        try:
            indices = [self.index[r] for r in allocation]
        except KeyError as missing:
            raise ValueError(f"cannot release {allocation}: {missing} is not a resource of this platform") from None
        if (self.free_slots[indices] >= self.capacity[indices]).any():
            raise ValueError(f"cannot release {allocation}: some of its nodes have no slot in use")
        self.free_slots[indices] += 1
        self.nb_free += len(indices)


#: Scheduler options of the placement (every scheduler of the backfilling family declares them).
PLACEMENT_OPTIONS: dict[str, tuple[Any, str]] = {
    "node_selection": ("lowest-id", "which nodes a job gets: " + ", ".join(NODE_SELECTIONS)),
    "slots": (False, "count job slots per node (host property slots; needs --compute-sharing) instead of whole "
                     "nodes"),
    "seed": (0, "seed of the random node selection"),
}


def check_placement_options(options: Mapping[str, Any]) -> None:
    """Raise ValueError naming the option when ``node_selection`` (a name of :data:`NODE_SELECTIONS`), ``slots``
    (a boolean) or ``seed`` (an integer >= 0) has a bad value."""
    name = options.get("node_selection", "lowest-id")
    if name not in NODE_SELECTIONS:
        raise ValueError(f"option node_selection: {name!r} is not one of {', '.join(NODE_SELECTIONS)}")
    if not isinstance(options.get("slots", False), bool):
        raise ValueError(f"option slots: expected true or false, got {options.get('slots')!r}")
    seed = options.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"option seed: expected an integer >= 0 (numpy's generators take no negative seed), "
                         f"got {seed!r}")


def uses_slot_pool(options: Mapping[str, Any]) -> bool:
    """True when the options ask for something else than whole nodes, lowest ids first (today's pool)."""
    return options.get("node_selection", "lowest-id") != "lowest-id" or bool(options.get("slots", False))


def slot_pool_of(compute_resources: Mapping[int, Mapping], options: Mapping[str, Any]) -> SlotPool:
    """The pool of a platform (pybatsim's ``bs.compute_resources``: id -> resource with its ``properties``) for
    the placement ``options``.

    Raises:
        ValueError: a property ``slots`` or ``speed`` that is not a number; fastest-first on hosts without the
            property ``speed`` (at the start of the simulation, before any job).
    """
    ids = sorted(compute_resources)
    capacities, speeds = [], []
    for rid in ids:
        properties = compute_resources[rid].get("properties", {}) or {}
        try:
            capacities.append(int(properties.get("slots", 1)) if options.get("slots", False) else 1)
            speeds.append(float(properties.get("speed", "nan")))
        except ValueError:
            raise ValueError(f"resource {rid}: property slots {properties.get('slots')!r} or speed "
                             f"{properties.get('speed')!r} is not a number") from None
    strategy = NODE_SELECTIONS[options.get("node_selection", "lowest-id")](int(options.get("seed", 0)))
    if strategy.name == "fastest-first" and any(speed != speed for speed in speeds):  # NaN: no property speed
        missing = [rid for rid, speed in zip(ids, speeds) if speed != speed][:5]
        raise ValueError(f"node selection fastest-first needs every host's property 'speed' (flop/s per core), "
                         f"which batreplay platform --node-types writes; resources {missing} have none")
    return SlotPool(ids, capacities, strategy, speeds)
