"""Compute sharing: how fast each parallel task runs when several jobs compute on the same hosts.

With Batsim's ``--enable-compute-sharing``, several jobs may run on one host at once. Batsim 4.2.1 runs SimGrid
3.32's ``ptask_L07`` host model, whose rates come from SimGrid's *bottleneck* solver (``lmm::FairBottleneck``), not
from its max-min one. This module plays that solver on the parallel tasks of the shared hosts:

- a parallel task ``j`` progresses at rate ``x_j`` (tasks per second: its whole work counts as 1 unit, see
  :mod:`.kernel`) and computes ``a_jh`` flop on each of its hosts ``h``, drawing ``a_jh * x_j`` flop/s from it;
- host ``h`` offers ``cores_h * speed_h`` flop/s; on hosts with several cores a task gets at most one core
  (``x_j <= speed_h / a_jh``: observed on the golden ``multicore``);
- a task has one executor per host, or several on one host with Batsim's EXECUTE_JOB ``mapping``: each executor is
  then an element of the host's constraint, counted in its equal shares and held to one core (its largest amount
  binds), so that ``k`` executors on a host of ``k`` cores compute at once (recorded cases ``mapping-sharing`` and
  ``mapping-exclusive``);
- the solver works in rounds: each host not yet used up splits what it has left *equally in flop/s* between its
  tasks' executors still being filled; each such task grows by the smallest of its hosts' shares divided by its
  (largest executor's) amount there;
  every host then loses what its tasks took in this round, and a host left with nothing (below SimGrid's
  ``maxmin/precision``, 1e-5 flop/s) freezes all its tasks. Quirk kept as SimGrid has it: a frozen task's last
  increment is subtracted again, at every later round, from its hosts still being filled;
- ``delay`` jobs are sleeps: they neither take nor lose any share (they never come here);
- links are resources too (:meth:`SharedHosts.add_link`): a link of ``bandwidth`` bytes/s is a one-core host of that
  speed, a task's amount on it the bytes it moves over it (:mod:`.transfers` puts hosts and links in one solver, as
  ptask_L07 does); the one-core bound counts hosts only.

In the simple cases this is a fair share in flop/s (two jobs on a host get half of it each, whatever their
amounts; a 2-host job on a host shared three ways gets a third, its neighbour on its other host two thirds), as
``../shared/batsim-golden-sharing/README.md`` describes; the quirk matters on wide overlapping jobs (golden
``sharing-kth``, job 222 ends 23.5 s later than under a max-min share). All four golden recordings are reproduced
message for message (``tests/engine/test_engine_golden.py``).

Rates change only when a task starts or stops; only the tasks connected to the changed hosts (through hosts they
share, transitively) can change, and the solver's rounds never mix such groups, so :meth:`SharedHosts.add` and
:meth:`SharedHosts.remove` solve those alone and return them. This module imports nothing from batreplay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# SimGrid's ``maxmin/precision``: a host's capacity left below this (flop/s) counts as used up.
_SOLVER_PRECISION = 1e-5


@dataclass(eq=False, slots=True)
class SharedTask:
    """A parallel task on shared hosts.

    Attributes:
        amounts: flop to compute on each host, by resource id (hosts with nothing to compute are left out).
        rate: progress in tasks per second (work units/s, the task's whole work being 1), set by
            :class:`SharedHosts` (or :class:`~batreplay.engine.coscheduling.CoScheduledHosts`); ``inf`` when the
            task computes nothing.
        owner: whatever the caller attaches (the engine: the kernel activity that computes the task).
        job: the job's Batsim JSON object (for co-scheduling's speedup model), or None.
        speedup: co-scheduling only: the task's speedup now (eq. 1 of :mod:`batreplay.platforms.speedup`).
        solver: the :class:`SharedHosts` (or co-scheduled hosts) the task is on: the hosts, or the links of a job
            that reads and writes (their ids are then the links', ``amounts`` in bytes).
        executors: for a host holding several of the task's executors (Batsim's EXECUTE_JOB ``mapping``), how many
            and the largest amount among them: ``{host: (count, largest flop)}`` (``amounts`` holds their sum);
            None when every host holds one. Each executor is an element of the host's constraint, as SimGrid's
            ``ptask_L07`` has it: the host's capacity is shared equally between elements, and each element gets
            at most one core.
        latency: seconds the task waits before it takes any share (the largest latency of the routes it sends
            bytes over); waiting: it is waiting them out now (not in the solver).
        bound: the largest rate its routes' latencies allow (work units/s; inf: none), SimGrid's network bound.
        io: for a task that reads and writes on storage hosts, ``((node type index, bytes read, bytes written),
            ...)`` per unit of its work (:meth:`batreplay.engine.io_trace.IoTrace.describe`); None otherwise.
    """

    amounts: dict[int, float]
    rate: float = 0.0
    owner: object = field(default=None)
    job: Any = None
    speedup: float = 1.0
    solver: Any = None
    executors: dict[int, tuple[int, float]] | None = None
    latency: float = 0.0
    bound: float = float("inf")
    waiting: bool = False
    io: tuple[tuple[int, float, float], ...] | None = None

    @classmethod
    def of_executors(cls, hosts: Sequence[int], flops: Sequence[float], **fields: Any) -> SharedTask:
        """The task whose executor ``k`` computes ``flops[k]`` on host ``hosts[k]`` (executors of 0 flop left out;
        a host may hold several)."""
        amounts: dict[int, float] = {}
        count: dict[int, int] = {}
        largest: dict[int, float] = {}
        for host, flop in zip(hosts, flops):
            if flop > 0:
                amounts[host] = amounts.get(host, 0.0) + flop
                count[host] = count.get(host, 0) + 1
                largest[host] = max(largest.get(host, 0.0), flop)
        several = {host: (count[host], largest[host]) for host in amounts if count[host] > 1}
        return cls(amounts, executors=several or None, **fields)

    def largest(self, host: int) -> float:
        """The largest amount of one executor of the task on ``host``."""
        executors = self.executors
        if executors is not None and host in executors:
            return executors[host][1]
        return self.amounts[host]

    def elements(self, host: int) -> int:
        """How many executors of the task compute on ``host`` (elements of its constraint)."""
        executors = self.executors
        return executors[host][0] if executors is not None and host in executors else 1


class SharedHosts:
    """The hosts' capacities and the tasks computing on each; their rates (see the module docstring).

    The resources may also be links (SimGrid's ptask_L07 puts hosts and links in one solver): a link is a
    resource of one "core" whose speed is its bandwidth (bytes/s), and a task's amount on it is the bytes it moves
    over it; :meth:`add_link` appends one after the hosts.

    Args:
        speeds: flop/s of one core of each host, by resource id.
        cores: cores of each host, by resource id (SimGrid's ``core`` attribute; 1 when absent).

    Raises:
        ValueError: ``speeds`` and ``cores`` differ in length, or a host has fewer than 1 core.
    """

    def __init__(self, speeds: Sequence[float], cores: Sequence[int]) -> None:
        if len(speeds) != len(cores):
            raise ValueError(f"{len(speeds)} host speeds but {len(cores)} core counts")
        if any(int(c) < 1 for c in cores):
            raise ValueError("every host needs at least 1 core")
        self.speeds = [float(s) for s in speeds]
        self.capacities = [float(s) * int(c) for s, c in zip(speeds, cores)]
        self.tasks_on: list[list[SharedTask]] = [[] for _ in self.speeds]
        self.nb_hosts = len(self.speeds)  # the resources from this id on are links
        self.watcher: Any = None  # told of every change of rates by the engine (an io_trace.IoTrace), or None

    def add_link(self, bandwidth: float) -> int:
        """Append a link of ``bandwidth`` bytes/s as a resource; its id."""
        self.speeds.append(float(bandwidth))
        self.capacities.append(float(bandwidth))
        self.tasks_on.append([])
        return len(self.speeds) - 1

    def load(self, host: int) -> int:
        """Number of parallel tasks computing on ``host`` now."""
        return len(self.tasks_on[host])

    def add(self, task: SharedTask) -> list[SharedTask]:
        """Put ``task`` on its hosts; the tasks whose rate may have changed (``task`` included), rates updated."""
        for host in task.amounts:
            self.tasks_on[host].append(task)
        if not task.amounts:
            task.rate = float("inf")
            return [task]
        return self._reshare(task.amounts)

    def remove(self, task: SharedTask) -> list[SharedTask]:
        """Take ``task`` off its hosts; the other tasks whose rate may have changed, rates updated."""
        for host in task.amounts:
            self.tasks_on[host].remove(task)
        return self._reshare(task.amounts)

    def _component(self, hosts: Iterable[int]) -> tuple[list[int], list[SharedTask]]:
        """The hosts and tasks reachable from ``hosts`` through tasks spanning several hosts, in a stable order
        (hosts by id, tasks in the order first met)."""
        seen_hosts = set(hosts)
        frontier = sorted(seen_hosts)
        tasks: list[SharedTask] = []
        seen_tasks: set[int] = set()
        while frontier:
            host = frontier.pop()
            for task in self.tasks_on[host]:
                if id(task) in seen_tasks:
                    continue
                seen_tasks.add(id(task))
                tasks.append(task)
                for other in task.amounts:
                    if other not in seen_hosts:
                        seen_hosts.add(other)
                        frontier.append(other)
        return sorted(seen_hosts), tasks

    def _reshare(self, changed: Iterable[int]) -> list[SharedTask]:
        hosts, tasks = self._component(changed)
        self._fill(hosts, tasks)
        return tasks

    def _fill(self, hosts: list[int], tasks: list[SharedTask]) -> None:
        """SimGrid's bottleneck solver on ``hosts`` and ``tasks``; sets each task's ``rate`` (see the module
        docstring: rounds of equal shares, saturated hosts leaving, increments of frozen tasks still subtracted)."""
        remaining = {h: self.capacities[h] for h in hosts}
        rate: dict[int, float] = {}
        increment: dict[int, float] = {}
        bound: dict[int, float] = {}
        for task in tasks:
            key = id(task)
            rate[key] = increment[key] = 0.0
            # one core per task (hosts with several cores only; elsewhere the host's capacity is the same limit);
            # SimGrid bounds a task by its hosts only, not by its links
            if any(self.capacities[h] != self.speeds[h] for h in task.amounts):
                bound[key] = min(self.speeds[h] / task.largest(h) for h in task.amounts if h < self.nb_hosts)
            if task.bound < float("inf"):  # (the latency of its routes)
                bound[key] = min(bound.get(key, task.bound), task.bound)
        filling = {id(task): task for task in tasks}
        active = list(hosts)  # the hosts whose capacity is not used up yet
        share: dict[int, float] = {}
        while filling:
            still = []
            for host in active:
                count = sum(1 if task.executors is None else task.elements(host)
                            for task in self.tasks_on[host] if id(task) in filling)
                if count:
                    share[host] = remaining[host] / count
                    still.append(host)
            active = still
            for key, task in list(filling.items()):
                if task.executors is None:
                    step = min(share[h] / a for h, a in task.amounts.items())
                else:  # (several executors on a host: the largest binds)
                    step = min(share[h] / task.largest(h) for h in task.amounts)
                if key in bound:
                    step = min(step, bound[key] - rate[key])
                increment[key] = step
                rate[key] += step
                if key in bound and rate[key] == bound[key]:
                    del filling[key]
            still = []
            for host in active:
                left = remaining[host]
                for task in self.tasks_on[host]:
                    # every task on the host, frozen ones included: SimGrid subtracts their last increment again
                    left -= task.amounts[host] * increment[id(task)]
                    if left < _SOLVER_PRECISION:
                        left = 0.0
                remaining[host] = left
                if left <= 0.0:
                    for task in self.tasks_on[host]:
                        filling.pop(id(task), None)
                else:
                    still.append(host)
            active = still
        for task in tasks:
            task.rate = rate[id(task)]
