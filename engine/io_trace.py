"""Node I/O over time: the bytes per second the compute hosts of each node type read from and write to storage.

Batsim 4.2.1's outputs say when each job ran, not how fast its bytes moved: under contention on a storage link a
reader's rate changes whenever another reader starts or stops. The embedded engine knows those rates (its links
solver, :mod:`.transfers`), so it records them here, as a step function per node type:

- a task of a ``parallel_homogeneous_pfs`` step progresses at ``rate`` work units/s (its whole work is 1 unit),
  and each of its compute hosts reads ``bytes_to_read`` and writes ``bytes_to_write`` over that work, so a host
  reads at ``rate * bytes_to_read`` bytes/s while the task is in the solver (0 while it waits out its routes'
  latency, as SimGrid's ``ptask_L07`` gives it no share then);
- a node type's read (write) rate is the sum of those of its hosts.

Bytes over routes without links (SimGrid moves them in no time) are not traced. Only the bytes between compute
hosts and storage hosts count as node I/O: ``data_staging`` (between two storage
hosts), ``parallel`` communication matrices (between compute hosts) and Batsim's own messages are left out.
A task that lost its race with a walltime keeps moving bytes until its executor stops, as in SimGrid, and is
counted until then. This module imports nothing from batreplay.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["IoTrace"]


class IoTrace:
    """The read and write rates (bytes/s) of each group of compute hosts over simulated time (s).

    Args:
        host_groups: the group (node type) of each compute host, by resource id; storage hosts are not listed.

    Attributes:
        times, groups, read_rates, write_rates: the rows so far (arrays; ``groups`` indexes ``names``), one per
            change of a group's rates (the last value at an instant replaces the earlier ones of that instant); a
            group's rates are 0 before its first row.
        names: the groups met so far.
    """

    def __init__(self, host_groups: Sequence[str]) -> None:
        self.host_groups = list(host_groups)
        self.names: list[str] = []  # the groups met so far, by index
        self.times = array("d")  # (arrays of machine numbers: a whole log's rows take 28 bytes each)
        self.groups = array("l")  # indices into names
        self.read_rates = array("d")
        self.write_rates = array("d")
        self._index: dict[str, int] = {}
        self._members: dict[int, dict[int, tuple[Any, float, float]]] = {}  # group -> id(task) -> (task, read, write)
        self._last_row: dict[int, int] = {}  # group -> index of its latest row
        self._one_group = len(set(self.host_groups)) == 1  # (a homogeneous platform: no host to look up)

    def describe(self, task: Any, profile: Mapping, hosts: Sequence[int]) -> None:
        """Mark ``task`` (a :class:`~batreplay.engine.sharing.SharedTask`) as the I/O of a
        ``parallel_homogeneous_pfs`` step of ``profile`` whose task runs on ``hosts`` (compute hosts, then the
        storage host): ``task.io`` becomes ``((group index, bytes read, bytes written), ...)`` per unit of its work,
        one entry per group (:attr:`names` gives the group of an index). A task without bytes, or of one host
        (SimGrid runs it as a computation), is left alone."""
        read, write = float(profile.get("bytes_to_read", 0)), float(profile.get("bytes_to_write", 0))
        if len(hosts) < 2 or read + write <= 0 or not task.amounts:  # (no link on its routes: SimGrid moves the
            return  # bytes in no time, at an infinite rate; nothing to trace)
        nb_compute = len(self.host_groups)
        compute = [host for host in hosts if host < nb_compute]
        if self._one_group and compute:
            n = len(compute)
            task.io = ((self._group(self.host_groups[0]), read * n, write * n),)
            return
        count: dict[int, int] = {}
        for host in compute:
            group = self._group(self.host_groups[host])
            count[group] = count.get(group, 0) + 1
        task.io = tuple((group, read * n, write * n) for group, n in count.items())

    def _group(self, name: str) -> int:
        index = self._index.get(name)
        if index is None:
            index = self._index[name] = len(self.names)
            self.names.append(name)
            self._members[index] = {}
        return index

    def update(self, now: float, tasks: Iterable[Any], gone: Any = None) -> None:
        """Record the rates at clock ``now`` (s) after the solver changed the rates of ``tasks`` and took ``gone``
        (None: no task) off."""
        dirty: set[int] = set()
        if gone is not None and gone.io is not None:
            for group, _, _ in gone.io:
                self._members[group].pop(id(gone), None)
                dirty.add(group)
        for task in tasks:
            if task.io is None:
                continue
            for group, read, write in task.io:  # (tasks in the solver: one that leaves it comes as gone)
                self._members[group][id(task)] = (task, read, write)
                dirty.add(group)
        for group in sorted(dirty):
            self._record(now, group)

    def _record(self, now: float, group: int) -> None:
        members = self._members[group].values()  # (summed anew: a type's rates are exactly 0 once it moves nothing)
        read = sum([task.rate * amount for task, amount, _ in members])
        write = sum([task.rate * amount for task, _, amount in members])
        last = self._last_row.get(group)
        if last is not None and self.times[last] == now:
            self.read_rates[last], self.write_rates[last] = read, write
            return
        if last is not None and (self.read_rates[last], self.write_rates[last]) == (read, write):
            return
        if last is None and read == write == 0.0:
            return
        self._last_row[group] = len(self.times)
        self.times.append(now)
        self.groups.append(group)
        self.read_rates.append(read)
        self.write_rates.append(write)

    def columns(self) -> dict[str, Sequence]:
        """The rows as columns: ``time`` (s), ``node_type`` (names), ``read_rate`` and ``write_rate`` (bytes/s), in
        time order."""
        names = self.names
        return {"time": self.times, "node_type": [names[group] for group in self.groups],
                "read_rate": self.read_rates, "write_rate": self.write_rates}
