"""Jobs that move bytes, on the platform's links, and Batsim's messages that cross the same links.

SimGrid 3.32's ``ptask_L07`` model, which Batsim 4.2.1 runs, gives a parallel task one rate over all it uses: each
of its hosts (the flop it computes there) and each link of the route between two of its hosts that exchange bytes
(the bytes of every such pair whose route crosses the link, added up). The bottleneck solver of :mod:`.sharing`
shares hosts and links alike, so :class:`Transfers` puts the hosts and, as they are first used, the links in one
:class:`~batreplay.engine.sharing.SharedHosts`.

A task's bytes, as Batsim 4.2.1 builds its communication matrix (``src/task_execution.cpp``): row ``i``, column
``j`` is what host ``i`` sends to host ``j`` of the task, in allocation order:

- ``parallel``: the ``com`` vector, row by row (``len(cpu)`` squared values);
- ``parallel_homogeneous``: ``com`` between every two distinct hosts; ``parallel_homogeneous_total``: ``com /
  n`` between every two distinct hosts of ``n``;
- ``parallel_homogeneous_pfs``: the storage host comes last; each host writes ``bytes_to_write`` to it and reads
  ``bytes_to_read`` from it; nothing is computed;
- ``data_staging``: the task's hosts are the storage hosts labelled ``from`` and ``to`` (the job's allocation only
  places its executor); ``nb_bytes`` go from the first to the second; nothing is computed.

A task of one host is a computation alone (SimGrid ignores its bytes). With Batsim's EXECUTE_JOB ``mapping``, the
task's hosts are its executors' (a host may come back for a job that only computes).

Batsim's internal messages (1 byte each, one at a time) cross links too: the JOB_COMPLETED of a job goes from the
job's first host (where its executor runs) to the master host, the others over the master host's route to itself.
Once the run has jobs that move bytes, or when a message route's slowest link is not the 125 MB/s the server times
a message alone at, every message joins the solver and shares the links it crosses (:meth:`Transfers.carry`).
Link latencies are played as SimGrid 3.32's ``ptask_L07`` plays them: a task (or message) waits for the largest
latency of the routes it sends bytes over before it takes any share, and its rate is then bounded by
``TCP_GAMMA / (2 * latency * bytes)`` (the largest product over those routes). It imports the
engine's kernel, server, sharing and profiles modules, and the platform's links and routes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from procset import ProcSet

from batreplay.engine.io_trace import IoTrace
from batreplay.engine.kernel import PRIO_DELIVERY, Kernel
from batreplay.engine.options import EngineError
from batreplay.engine.profiles import DATA_STAGING, PFS, UnsupportedProfileError
from batreplay.engine.server import COMPLETED, Message
from batreplay.engine.sharing import SharedHosts, SharedTask
from batreplay.platforms.model import UNTYPED
from batreplay.platforms.network import SIMGRID_LOOPBACK, Link, link_problem
from batreplay.platforms.routing import Network

__all__ = ["Transfers", "moves_bytes", "start_shared_task", "stop_shared_task", "update_rates"]


def moves_bytes(profile: Mapping) -> bool:
    """Whether a job of ``profile`` (not composed) puts bytes on links."""
    kind = profile.get("type")
    if kind in (PFS, DATA_STAGING):
        return True
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        return float(profile.get("com", 0)) > 0
    if kind == "parallel":
        return any(float(value) > 0 for value in profile.get("com", ()) or ())
    return False


def _sends_to_itself(profile: Mapping) -> bool:
    """Whether a ``parallel`` profile's matrix has bytes on its diagonal (a host sending bytes to itself) and more than
    one host (SimGrid 3.32 runs a task of one host as a computation alone: its bytes are ignored)."""
    if profile.get("type") != "parallel":
        return False
    com, size = profile.get("com", ()) or (), len(profile.get("cpu", ()))
    if size < 2:
        return False
    return isinstance(com, (list, tuple)) and any(float(com[i * size + i]) > 0 for i in range(size) if
                                                  i * size + i < len(com))


def _matrix(profile: Mapping, nb_hosts: int) -> list[tuple[int, int, float]]:
    """The task's ``(sender, receiver, bytes)`` with bytes > 0, row by row (see the module docstring);
    ``nb_hosts`` counts the storage host of a PFS task."""
    kind = profile["type"]
    if kind == "parallel":
        com = [float(value) for value in profile["com"]]
        return [(k // nb_hosts, k % nb_hosts, value) for k, value in enumerate(com) if value > 0]
    if kind == DATA_STAGING:
        moved = float(profile["nb_bytes"])
        return [(0, 1, moved)] if moved > 0 else []
    if kind == PFS:
        storage = nb_hosts - 1
        write, read = float(profile.get("bytes_to_write", 0)), float(profile.get("bytes_to_read", 0))
        cells = [(host, storage, write) for host in range(storage)]
        cells += [(storage, host, read) for host in range(storage)]
        return [cell for cell in cells if cell[2] > 0]
    com = float(profile["com"]) / (nb_hosts if kind == "parallel_homogeneous_total" else 1)
    if com <= 0:
        return []
    return [(i, j, com) for i in range(nb_hosts) for j in range(nb_hosts) if i != j]


class Transfers:
    """The hosts and links of one platform in ptask_L07's solver, for the tasks that move bytes.

    Args:
        names: the host names by resource id (compute hosts, then storage hosts).
        speeds: flop/s of one core of each of them; cores: their cores.
        network: the platform's routes; master: the master host's name.
        nb_compute: how many of ``names`` are compute hosts (the others are storage hosts; default: all).
        node_types: the node type of each compute host (default: all of one type, ``"(untyped)"``), for
            :attr:`io_trace`.

    Attributes:
        solver: the hosts (ids as Batsim's) and the links used so far (ids after the hosts').
        active: every message joins the solver (:meth:`carry`): the run has jobs that move bytes (:meth:`check`),
            or a message route's slowest link is not the server's message bandwidth (:meth:`check_messages`).
        messages_carried: how many messages crossed the links in the solver.
        io_trace: the read and write rates of each node type's hosts over time (:mod:`.io_trace`), the solver's
            watcher.
    """

    def __init__(self, names: Sequence[str], speeds: Sequence[float], cores: Sequence[int], network: Network,
                 master: str, nb_compute: int | None = None, node_types: Sequence[str] | None = None) -> None:
        self.names, self.network, self.master = list(names), network, master
        self.nb_compute = len(self.names) if nb_compute is None else nb_compute
        # the storage host a PFS task uses without a storage mapping: the platform's only one
        self.storage = self.nb_compute if len(self.names) == self.nb_compute + 1 else None
        self.solver = SharedHosts(speeds, cores)
        self.io_trace = IoTrace(list(node_types) if node_types is not None else [UNTYPED] * self.nb_compute)
        self.solver.watcher = self.io_trace
        self.active = False
        self.messages_carried = 0
        self._link_ids: dict[str, int] = {}
        self._routes: dict[tuple[str, str], list[int]] = {}
        self._latencies: dict[tuple[str, str], float] = {}  # (src, dst) -> the route's latency, s
        self._checked: set[tuple[str, str]] = set()  # (host, storage) whose routes both ways were found playable
        self._moving: dict[int, tuple[Mapping, bool]] = {}  # id(profile) -> (profile, moves bytes)

    def problem(self, src: str, dst: str) -> str | None:
        """Why the route from host ``src`` to host ``dst`` cannot be played, or None."""
        route = self.network.route(src, dst)
        if route is None:
            reason = self.network.unsupported or "the platform declares no route the engine can follow"
            return f"from {src} to {dst}: {reason}"
        return _link_problem(route, src, dst)

    def check_messages(self, compute: Sequence[str], bandwidth: float) -> str | None:
        """Why Batsim's messages cannot be timed on this platform, or None. Their routes: each compute host's to the
        master host (one host per cluster) and the master host's to itself. Messages travel one at a time, so a
        link's sharing policy matters only where jobs' bytes cross it too (:meth:`check`); refused: the master host
        without a route to itself (SimGrid's own loopback link, ``FATPIPE``) or whose route to itself is not
        followed, or a route not followed on a platform whose links are not all at ``bandwidth`` with no latency (on
        such a platform any route takes ``1 / bandwidth`` s alone, which is how the server times a message). When the
        routes are known but the slowest link of one is not ``bandwidth`` (bytes/s), or one has a latency, the run
        is :attr:`active` at once: every message crosses its links in the solver (after its route's latency).
        ``compute``: the compute host names."""
        routes = list(self.network.distinct_routes(compute, self.master))
        routes.append((self.master, self.network.route(self.master, self.master, strict=False)))
        if routes[-1][1] is None:  # (SimGrid may give it its own loopback: its messages would take 0.1 ns)
            return f"the master host {self.master}'s route to itself is not followed ({self.network.why_unfollowed()})"
        unknown = [host for host, route in routes if route is None]
        if unknown:
            odd = self.network.odd_link(bandwidth)
            if odd is not None:
                return f"from {unknown[0]} to {self.master}: {self.network.why_unfollowed()}, and {odd}"
            return None  # (every route takes 1 / bandwidth s)
        if not routes[-1][1] or SIMGRID_LOOPBACK in routes[-1][1]:
            return (f"the master host {self.master} has no route to itself (SimGrid carries its messages over its own "
                    "loopback link, FATPIPE, which the engine does not play)")
        if any(route and (min(link.bandwidth for link in route) != bandwidth or any(link.latency for link in route))
               for _, route in routes):
            self.active = True
        return None

    def check(self, profile: Mapping, compute: Sequence[str]) -> str | None:
        """Why jobs of ``profile`` (which moves bytes) cannot be played on this platform, or None; ``compute``: the
        compute host names. The messages' routes are :meth:`check_messages`'; a PFS task needs every compute host's
        routes to and from the storage host; bytes between compute hosts need every route between them
        (:meth:`batreplay.platforms.routing.Network.transfer_problem`: plain links, routes followed;
        a cluster's loopbacks only for a ``parallel`` matrix whose diagonal moves bytes). None makes the run
        :attr:`active`: every message then joins the solver."""
        if self.network.unsupported is not None:
            return f"the platform's routes cannot be followed: {self.network.unsupported}"
        kind = profile.get("type")
        storages = self.names[self.nb_compute:]
        if kind in (PFS, DATA_STAGING) and not storages:
            return "the platform has no storage host"
        if kind == PFS:
            for storage in storages:
                problem = self._storage_problem(compute, storage)
                if problem is not None:
                    return problem
        elif kind == DATA_STAGING:  # (from a storage host to itself: checked when the storage mapping says so)
            for first in storages:
                for second in storages:
                    problem = None if first == second else self.problem(first, second)
                    if problem is not None:
                        return problem
        else:
            problem = self.network.transfer_problem(loopbacks=_sends_to_itself(profile))
            if problem is not None:
                return problem
        self.active = True
        return None

    def _storage_problem(self, compute: Sequence[str], storage: str) -> str | None:
        """Why the compute hosts' routes to and from ``storage`` cannot be played, or None (one host per cluster)."""
        for host, route in self.network.distinct_routes(compute, storage):
            if (host, storage) in self._checked:
                continue
            problem = _link_problem(route, host, storage) if route is not None else f"no route from {host}"
            if problem is None:
                problem = self.problem(storage, host)  # (reads: the way back)
            if problem is not None:
                return problem
            self._checked.add((host, storage))
        return None

    def moves_bytes(self, profile: Mapping) -> bool:
        """:func:`moves_bytes`, remembered per profile (a ``parallel`` matrix is read once)."""
        known = self._moving.get(id(profile))
        if known is None or known[0] is not profile:
            known = self._moving[id(profile)] = (profile, moves_bytes(profile))
        return known[1]

    def _route(self, src: str, dst: str, message: bool = False) -> list[int]:
        """The solver ids of the links from host ``src`` to host ``dst`` (links added to the solver when first met);
        ``message``: the route of a message, checked by :meth:`check_messages` (not strictly: whatever else the
        platform holds).

        Raises:
            UnsupportedProfileError: a route the engine cannot play (see :meth:`problem`)."""
        key = (src, dst)
        if key not in self._routes:
            route = self.network.route(src, dst, strict=not message)
            problem = None if message and route is not None else self.problem(src, dst)
            if problem is not None:
                raise UnsupportedProfileError(f"bytes cannot be moved {problem}")
            ids = []
            for link in route or ():
                if link.name not in self._link_ids:
                    self._link_ids[link.name] = self.solver.add_link(link.bandwidth)
                ids.append(self._link_ids[link.name])
            self._routes[key] = ids
            self._latencies[key] = self.network.latency(src, dst) or 0.0
        return self._routes[key]

    def hosts_of(self, profile: Mapping, alloc: ProcSet, mapping: Mapping[str, int] | None) -> list[int]:
        """The hosts of a task of ``profile`` on ``alloc``, in the order of its matrix (Batsim 4.2.1): the allocation,
        then for a PFS task the storage host of its label (``storage``, else ``host``, default ``pfs``) in the
        decision process's storage ``mapping`` or, without one, the platform's only storage host; for a data staging
        task, the storage hosts of its ``from`` and ``to`` labels only.

        Raises:
            EngineError: a label the mapping lacks or maps to a host that is not a storage host, or no mapping and not
                exactly one storage host (Batsim aborts)."""
        kind = profile["type"]
        if kind not in (PFS, DATA_STAGING):
            return list(alloc)
        if kind == DATA_STAGING:
            labels = [profile["from"], profile["to"]]
        else:
            labels = [profile.get("storage", profile.get("host", "pfs"))]
        if not mapping and kind == PFS:
            if self.storage is None:
                raise EngineError("a parallel_homogeneous_pfs job without a storage mapping needs exactly one storage "
                                  "host (Batsim 4.2.1 aborts)")
            return list(alloc) + [self.storage]
        missing = [label for label in labels if label not in (mapping or {})]
        if missing:
            raise EngineError(f"{kind}: storage label {missing[0]!r} is not in the job's storage mapping "
                              f"{dict(mapping or {})} (Batsim 4.2.1 aborts)")
        storages = [mapping[label] for label in labels]
        odd = [host for host in storages if not self.nb_compute <= host < len(self.names)]
        if odd:
            raise EngineError(f"{kind}: storage mapping {dict(mapping)} gives resource {odd[0]}, not a storage host "
                              f"({self.nb_compute}-{len(self.names) - 1} here; Batsim 4.2.1 aborts)")
        return storages if kind == DATA_STAGING else list(alloc) + storages

    def task(self, profile: Mapping, hosts: Sequence[int], flops: Sequence[float]) -> SharedTask:
        """The solver task of a job step of ``profile`` on ``hosts`` (:meth:`hosts_of`): ``flops`` on each host (in
        that order; 0 for none), then the bytes of its matrix on each link, added as SimGrid adds them (row by row,
        each route's links in order). A task of one host is a computation alone, as SimGrid 3.32 runs it (the bytes
        a one-host ``parallel`` matrix sends the host itself are ignored: recorded case pfs-slots, job 15).

        Raises:
            UnsupportedProfileError: a route the engine cannot play (see :meth:`problem`)."""
        amounts: dict[int, float] = {host: flop for host, flop in zip(hosts, flops) if flop > 0}
        names = self.names
        latency = lag = 0.0  # the largest route latency, and of latency x bytes, over the pairs that move bytes
        for sender, receiver, moved in _matrix(profile, len(hosts)) if len(hosts) > 1 else ():
            pair = (names[hosts[sender]], names[hosts[receiver]])
            for link in self._route(*pair):
                amounts[link] = amounts.get(link, 0.0) + moved
            latency = max(latency, self._latencies[pair])
            lag = max(lag, self._latencies[pair] * moved)
        return SharedTask(amounts, solver=self.solver, latency=latency, bound=_tcp_bound(lag))

    def carry(self, kernel: Kernel, message: Message, deliver: Callable[[Message], None]) -> bool:
        """Start ``message`` on its links in the solver if the run moves bytes (:attr:`active`); ``deliver(message)``
        runs when it arrives. Its route: from the job's first host (where its executor runs) to the master host for
        a JOB_COMPLETED, the master host's own route for the others (its actors: submitters, the request-reply
        actor, waiters, killers). False when the message is not carried here (the server times it alone)."""
        if not self.active:
            return False
        source = self.names[message.payload.allocation.min] if message.kind == COMPLETED else self.master
        amounts: dict[int, float] = {}
        for link in self._route(source, self.master, message=True):
            amounts[link] = amounts.get(link, 0.0) + 1.0  # (1 byte on each link, twice on a link crossed twice)
        latency = self._latencies[(source, self.master)]
        task = SharedTask(amounts, solver=self.solver, latency=latency, bound=_tcp_bound(latency))
        start_shared_task(kernel, task, PRIO_DELIVERY, deliver, message)
        self.messages_carried += 1
        return True


#: SimGrid 3.32's ``network/TCP-gamma`` (bytes), the default Batsim keeps: the TCP window that bounds a transfer's
#: rate by its latency.
TCP_GAMMA = 4194304.0


def _tcp_bound(lag: float) -> float:
    """The bound of a task's rate (work units/s) from the largest product of a route's latency (s) and the bytes
    sent over it: SimGrid 3.32's ``ptask_L07`` network bound, ``TCP_GAMMA / (2 * lag)``; inf without latency."""
    return TCP_GAMMA / (2.0 * lag) if lag > 0 else float("inf")


def _link_problem(route: Sequence[Link], src: str, dst: str) -> str | None:
    """The first :func:`~batreplay.platforms.network.link_problem` of ``route``, from ``src`` to ``dst``, or None."""
    for link in route:
        problem = link_problem(link)
        if problem is not None:
            return f"from {src} to {dst}: {problem}"
    return None


def start_shared_task(kernel: Kernel, task: SharedTask, prio: int, ended: Callable[[Any], None],
                      argument: Any) -> None:
    """Put ``task`` on its solver and start its work (1 unit) at the rate it gets there, its neighbours' rates
    updated; when it ends, it leaves the solver (their rates updated again) and ``ended(argument)`` runs, unless it
    was stopped before (:func:`stop_shared_task`) in that very step. A task with a latency first waits it out
    (SimGrid's ``ptask_L07``: the action takes no share until its latency is paid, counted down as a sleep), then
    joins the solver."""
    def finished(_argument: Any) -> None:
        if task.owner is None:  # stopped earlier in this step (a kill, a walltime's leftover): its end changes nothing
            return
        task.owner = None
        update_rates(kernel, task.solver.remove(task), gone=task)
        ended(argument)

    def join(seq: int | None = None) -> None:  # (seq: its place among the started actions, kept from its latency)
        changed = task.solver.add(task)
        task.owner = kernel.start_activity(1.0, task.rate, prio, finished, argument, seq=seq)
        update_rates(kernel, changed)

    def paid(_argument: Any = None) -> None:
        if task.waiting:  # (not stopped meanwhile)
            task.waiting = False
            join(task.owner.seq)

    if task.latency > 0:
        task.waiting = True
        task.owner = kernel.start_activity(task.latency, 0.0, prio, paid)
    else:
        join()


def stop_shared_task(kernel: Kernel, task: SharedTask | None) -> None:
    """Stop ``task`` (None, or already stopped: nothing to do) and give its share to its neighbours."""
    if task is None or task.owner is None:
        return
    kernel.cancel(task.owner)
    task.owner = None
    if task.waiting:  # (still paying its latency: not in the solver)
        task.waiting = False
        return
    update_rates(kernel, task.solver.remove(task), gone=task)


def update_rates(kernel: Kernel, tasks: list[SharedTask], gone: SharedTask | None = None) -> None:
    """Give each running task of ``tasks`` its new rate (tasks already ended in this step are left alone), after
    ``gone`` (None: no task) left the solver; the solver's watcher (node I/O over time) is told."""
    for task in tasks:
        activity = task.owner
        if activity is not None and activity.alive and activity.rate != task.rate:
            task.owner = kernel.set_rate(activity, task.rate)
    solver = (gone or tasks[0]).solver if gone is not None or tasks else None
    if solver is not None and solver.watcher is not None:
        solver.watcher.update(kernel.clock, tasks, gone)
