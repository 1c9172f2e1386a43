"""EASY backfilling with co-scheduling: a job may share partly used nodes when a speedup model predicts it pays.

The co-scheduling simulator of the project's sources (``../shared/seeds/002_876b126a4edf8075.txt``) co-allocates
jobs on the CPUs of shared hosts and rates each job by the worst speedup over its neighbours (eq. 1 of
:mod:`batreplay.platforms.speedup`). This policy is the scheduling side of that model: EASY backfilling
(:mod:`batreplay.schedulers.easy`, Mu'alem and Feitelson 2001) whose jobs may also start on nodes that already run
other jobs, where the speedup model it is given predicts that it pays.

A node can take a job when it runs fewer than ``jobs_per_node`` jobs and, for every job ``R`` already on it, the
model predicts ``speedup(job, R) >= threshold`` *and* ``speedup(R, job) >= threshold``: the newcomer does not slow
its neighbours below the threshold either. As long as the model the engine applies is the one predicted with,
every running job's speedup (eq. 1, the worst over its neighbours) stays at or above the threshold. A free node
(no job) can always take one. Rules at each decision, at time ``now``:

1. Head jobs start, in queue order, while the head finds enough nodes that can take it: free nodes first (lowest
   ids), then partly used ones (lowest ids). A job that fits on free nodes thus runs alone, as under EASY; it is
   co-scheduled only when it would otherwise wait.
2. If the head cannot start, it gets a reservation on whole free nodes: each node is expected to be free at the
   latest expected end (start + walltime) of the jobs on it; the *shadow time* is the earliest time by which the
   head's request of nodes are expected free, and the *extra nodes* are the nodes expected free by then minus the
   request (EASY's two quantities, per node).
3. The other jobs are scanned in queue order. A job that ends by the shadow time (walltime criterion) starts on
   any nodes that can take it, free first. Another one starts if it needs at most the extra nodes among the nodes
   the head counts on: nodes that can take it and are expected free after the shadow time anyway (partly used by
   jobs that end later) cost nothing and are taken first; free nodes and nodes expected free by the shadow time
   each use up one extra node. The head's reservation is thus never delayed, as under EASY (walltimes bound every
   run: a slowed job is killed at its walltime).

With ``jobs_per_node = 1`` no node is ever shared, and the decisions are those of ``easy``, job for job (tested).
Job speedups depend on job *kinds* (:func:`batreplay.platforms.speedup.kind_of`: one for ``none``, the class for
``table``, the job for ``random``); the policy asks the model once per pair of kinds and keeps, per node, how many
jobs of each kind run there.

Running several jobs on a node needs an engine that lets them: the embedded engine with co-scheduling
(``--speedup-model``, the model applies) or compute sharing (``--compute-sharing``; SimGrid shares the node's
flop rate, whatever the prediction), or a real Batsim with ``--enable-compute-sharing``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any, ClassVar

import numpy as np
from procset import ProcSet

from batreplay.platforms.speedup import SPEEDUP_MODELS, SpeedupModel, kind_of, make_speedup_model
from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.easy_core import EasyCore
from batreplay.schedulers.policy import TIME_EPSILON, QueuedJob, SchedulingPolicy
from batreplay.schedulers.queue_order import ORDERS


class SharedNodes:
    """The jobs on each node: how many, of which kinds, and when the node is expected to be free.

    Args:
        resources: the compute resource ids (one node each).

    Attributes:
        all: the resources (ProcSet); nb_total: number of nodes; count: jobs on each node (int array, by position
            in :attr:`ids`); free_time: latest expected end (s) of the jobs on each node, ``-inf`` when free.
    """

    def __init__(self, resources: ProcSet) -> None:
        if len(resources) == 0:
            raise ValueError("a platform needs at least one resource")
        self.all = ProcSet(resources)
        self.ids = np.fromiter(iter(self.all), dtype=np.int64)
        self.index = {int(r): i for i, r in enumerate(self.ids)}
        self.nb_total = len(self.ids)
        self.count = np.zeros(self.nb_total, dtype=np.int64)
        self.free_time = np.full(self.nb_total, -math.inf)
        self.ends: list[list[tuple[str, float]]] = [[] for _ in range(self.nb_total)]  # (job id, expected end)
        self.kind_count = np.zeros((self.nb_total, 4), dtype=np.int64)  # jobs of each kind column on each node
        self.columns: dict[Hashable, int] = {}  # kind -> its column of kind_count

    def column(self, kind: Hashable) -> int:
        """The column of ``kind`` in :attr:`kind_count` (a new one, when needed, reusing columns of kinds that no
        longer run anywhere)."""
        column = self.columns.get(kind)
        if column is not None:
            return column
        if len(self.columns) == self.kind_count.shape[1]:
            totals = self.kind_count.sum(axis=0)
            kept = {k: c for k, c in self.columns.items() if totals[c] > 0}
            width = max(4, 2 * len(kept) + 1)
            table = np.zeros((self.nb_total, width), dtype=np.int64)
            for new, (k, old) in enumerate(kept.items()):
                table[:, new] = self.kind_count[:, old]
            self.kind_count = table
            self.columns = {k: new for new, k in enumerate(kept)}
        column = self.columns[kind] = len(self.columns)
        return column

    def place(self, job_id: str, nodes: np.ndarray, kind: Hashable, end: float) -> ProcSet:
        """Record a job of ``kind``, expected to end at ``end`` (s), on the nodes at positions ``nodes``; its
        allocation (resource ids)."""
        column = self.column(kind)
        self.count[nodes] += 1
        self.kind_count[nodes, column] += 1
        np.maximum.at(self.free_time, nodes, end)
        for node in nodes.tolist():
            self.ends[node].append((job_id, end))
        return ProcSet(*(int(r) for r in self.ids[nodes]))

    def remove(self, job_id: str, allocation: ProcSet, kind: Hashable) -> None:
        """Take the job off the nodes of ``allocation``.

        Raises:
            ValueError: it is not on one of them.
        """
        column = self.columns[kind]
        for resource in allocation:
            node = self.index[resource]
            before = len(self.ends[node])
            self.ends[node] = [entry for entry in self.ends[node] if entry[0] != job_id]
            if len(self.ends[node]) != before - 1:
                raise ValueError(f"job {job_id} is not running on resource {resource}")
            self.count[node] -= 1
            self.kind_count[node, column] -= 1
            self.free_time[node] = max((end for _, end in self.ends[node]), default=-math.inf)


class CoschedulingPolicy(EasyCore):
    """EASY backfilling where jobs may share nodes when ``model`` predicts a speedup >= ``threshold`` (see the
    module docstring for the rules): :class:`~batreplay.schedulers.easy_core.EasyCore` whose hooks count nodes a
    job's kind may share (:meth:`_nodes_free`, :meth:`_start_now`, :meth:`_start_on_extra`) and reserve whole free
    nodes for the head (:meth:`shadow`).

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count).
        model: the speedup model predictions come from (:class:`~batreplay.platforms.speedup.SpeedupModel`).
        threshold: the least predicted speedup (> 0) of a job and of each of its neighbours on a shared node.
        jobs_per_node: the most jobs running on one node at once (>= 1; 1: whole nodes, as ``easy``).
        order: queue order, a name of :data:`~batreplay.schedulers.queue_order.ORDERS`.

    Raises:
        ValueError: a threshold that is not a number > 0, ``jobs_per_node`` < 1, fewer than one resource, an unknown
            order (checked in that order); at submission, a job without its JSON description
            (:attr:`QueuedJob.description`) or one the model cannot rate.
    """

    name = "easy-coscheduling"

    def __init__(self, resources: ProcSet | int, *, model: SpeedupModel, threshold: float = 1.0,
                 jobs_per_node: int = 2, order: str = "fcfs") -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold < math.inf:
            raise ValueError(f"option threshold: expected a number > 0, got {threshold!r}")
        if isinstance(jobs_per_node, bool) or not isinstance(jobs_per_node, int) or jobs_per_node < 1:
            raise ValueError(f"option jobs_per_node: expected an integer >= 1, got {jobs_per_node!r}")
        super().__init__(resources, order=order)
        self.pool = self.nodes = SharedNodes(self.pool.all)
        self.model = model
        self.threshold = float(threshold)
        self.jobs_per_node = jobs_per_node
        self._kinds: dict[str, Hashable] = {}  # job id -> kind, waiting and running jobs
        self._examples: dict[Hashable, Mapping[str, Any]] = {}  # kind -> one job of that kind, to ask the model
        self._of_kind: dict[Hashable, int] = {}  # kind -> its waiting and running jobs (an example is kept while > 0)
        self._fits: dict[tuple[Hashable, Hashable], bool] = {}  # (kind, kind) -> may share a node

    def use_pool(self, pool) -> None:
        raise ValueError("easy-coscheduling places jobs itself: the options node_selection and slots do not apply")

    def _enqueue(self, job: QueuedJob) -> None:
        if job.description is None:
            raise ValueError(f"job {job.id}: easy-coscheduling needs the job's JSON description to predict speedups")
        kind = kind_of(self.model, job.description)
        self._kinds[job.id] = kind
        self._examples.setdefault(kind, job.description)
        self._of_kind[kind] = self._of_kind.get(kind, 0) + 1
        self._queue.push(job)

    def complete(self, job_id: str) -> bool:
        if job_id not in self.running:
            return False
        entry = self.running.remove(job_id)
        kind = self._kinds.pop(job_id)
        self.nodes.remove(job_id, entry.allocation, kind)
        self._of_kind[kind] -= 1
        if not self._of_kind[kind]:  # no job of that kind left (the random model: one kind per job)
            del self._of_kind[kind], self._examples[kind]
        return True

    def may_share(self, kind: Hashable, other: Hashable) -> bool:
        """Whether jobs of ``kind`` and ``other`` may run on one node: both predicted speedups >= threshold."""
        key = (kind, other)
        fits = self._fits.get(key)
        if fits is None:
            job, neighbour = self._examples[kind], self._examples[other]
            fits = (float(self.model.speedup(job, neighbour)) >= self.threshold
                    and float(self.model.speedup(neighbour, job)) >= self.threshold)
            if len(self._fits) > 1_000_000:  # kinds of one job each (the random model): keep the cache bounded
                self._fits.clear()
            self._fits[key] = self._fits[(other, kind)] = fits
        return fits

    def _welcoming(self, kind: Hashable) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the free nodes, and of the partly used nodes that can take a job of ``kind``, lowest ids
        first."""
        nodes = self.nodes
        free = np.flatnonzero(nodes.count == 0)
        if self.jobs_per_node == 1:
            return free, free[:0]
        room = (nodes.count > 0) & (nodes.count < self.jobs_per_node)
        if not room.any():
            return free, free[:0]
        present = nodes.kind_count[room].sum(axis=0)
        refused = [column for other, column in nodes.columns.items()
                   if present[column] > 0 and not self.may_share(kind, other)]
        if refused:
            room &= nodes.kind_count[:, refused].sum(axis=1) == 0
        return free, np.flatnonzero(room)

    def _start_on(self, job: QueuedJob, nodes: np.ndarray, now: float) -> ProcSet:
        """Start ``job`` at ``now`` (s) on the nodes at positions ``nodes``; its allocation."""
        duration = self._expected_duration(job)
        allocation = self.nodes.place(job.id, nodes, self._kinds[job.id], now + duration)
        self._queued_ids.discard(job.id)
        self.running.add(job, allocation, now, duration)
        return allocation

    def _nodes_free(self) -> int:
        """Nodes running fewer than ``jobs_per_node`` jobs (whether a job's kind may share them or not)."""
        return int(np.count_nonzero(self.nodes.count < self.jobs_per_node))

    def _start_now(self, job: QueuedJob, now: float) -> ProcSet | None:
        """On the nodes that can take it, free ones first (lowest ids), then partly used ones (lowest ids)."""
        free, shared = self._welcoming(self._kinds[job.id])
        if len(free) + len(shared) < job.requested_resources:
            return None
        return self._start_on(job, np.concatenate((free, shared))[:job.requested_resources], now)

    def shadow(self, head: QueuedJob, now: float) -> tuple[float, int]:
        """Shadow time (s, ``>= now``, ``inf`` possible) and extra nodes for ``head``: when its request of nodes
        are expected free, from the latest expected end of the jobs on each node."""
        needed = head.requested_resources
        times = self.nodes.free_time
        shadow = float(np.partition(times, needed - 1)[needed - 1])
        if shadow == math.inf:
            return math.inf, 0
        shadow = max(shadow, now)
        return shadow, int(np.count_nonzero(times <= shadow + TIME_EPSILON)) - needed

    def _start_on_extra(self, job: QueuedJob, now: float, shadow: float, extra: int) -> tuple[ProcSet, int] | None:
        """Nodes that can take the job and are expected busy past the shadow time anyway (partly used by jobs
        that end later) cost nothing and are taken first; free nodes and nodes expected free by the shadow time
        each use up one extra node."""
        nodes = job.requested_resources
        free, shared = self._welcoming(self._kinds[job.id])
        if len(free) + len(shared) < nodes:
            return None
        # a node is free of cost to the head only if expected busy past the shadow time, beyond any rounding of the
        # ends of jobs backfilled by the walltime criterion (now + walltime <= shadow + TIME_EPSILON)
        later = self.nodes.free_time[shared] > shadow + 2 * TIME_EPSILON
        costless = shared[later]
        costly = np.concatenate((free, shared[~later]))
        used = max(0, nodes - len(costless))
        if used > extra or used > len(costly):
            return None
        return self._start_on(job, np.concatenate((costless[:nodes], costly[:used])), now), extra - used


def make_model(options: Mapping[str, Any]) -> SpeedupModel:
    """The speedup model of the scheduler options ``speedup_model`` and ``speedup_options``.

    Raises:
        ValueError: no model named (the run gives the engine's: ``--speedup-model``), or what the model refuses.
    """
    name = options.get("speedup_model")
    if name is None:
        raise ValueError("easy-coscheduling predicts speedups with a model: give the scheduler option speedup_model "
                         "(or run with --speedup-model, whose model it then uses)")
    return make_speedup_model(name, options.get("speedup_options") or {})


class Coscheduling(PolicyScheduler):
    """EASY backfilling that co-schedules a job on partly used nodes when a speedup model predicts >= a threshold.

    Options (``--scheduler-options``): ``threshold``, ``jobs_per_node``, ``order``, ``speedup_model`` and
    ``speedup_options`` (see :data:`OPTIONS`). ``batreplay run`` fills in the last two from ``--speedup-model`` and
    ``--speedup-options`` when they are not given.
    """

    policy_class = CoschedulingPolicy
    needs_description = True
    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = {
        "threshold": (1.0, "co-schedule a job on a node only where it and each job there are predicted a speedup "
                           ">= threshold"),
        "jobs_per_node": (2, "most jobs on one node at once (1: whole nodes, exactly as easy)"),
        "order": ("fcfs", f"queue order, one of {', '.join(ORDERS)}"),
        "speedup_model": (None, f"the model predictions come from, one of {', '.join(SPEEDUP_MODELS)} (null: the "
                                "engine's, --speedup-model)"),
        "speedup_options": ({}, "its options (as --speedup-options)"),
    }

    @classmethod
    def validate_options(cls, options: dict[str, Any]) -> None:
        """Raise ValueError naming the option when one has a bad value (the model is built when named)."""
        CoschedulingPolicy(1, model=SPEEDUP_MODELS["none"](), threshold=options.get("threshold", 1.0),
                           jobs_per_node=options.get("jobs_per_node", 2), order=options.get("order", "fcfs"))
        if not isinstance(options.get("speedup_options") or {}, dict):
            raise ValueError(f"option speedup_options: expected a JSON object, got {options['speedup_options']!r}")
        if options.get("speedup_options") and options.get("speedup_model") is None:
            raise ValueError("option speedup_options given without speedup_model")
        if options.get("speedup_model") is not None:
            make_model(options)

    def make_policy(self, resources: ProcSet) -> SchedulingPolicy:
        options = self.options
        return CoschedulingPolicy(resources, model=make_model(options), threshold=options.get("threshold", 1.0),
                                  jobs_per_node=options.get("jobs_per_node", 2), order=options.get("order", "fcfs"))
