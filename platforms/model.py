"""The platform as Batsim sees it: its compute resources, numbered, with their speeds, and its master host.

Batsim 4.2.1 gives ids 0..n-1 to the compute hosts in ascending (byte-wise, i.e. lexicographic) order of host
name, and ids after them to storage hosts; the master host, which runs Batsim's server, gets no id
(Batsim's ``src/machines.cpp``, observed on the golden run ``order``: ``node_0, node_1, node_10, node_11,
node_2, ...``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

import numpy as np

__all__ = ["UNTYPED", "Host", "Platform", "batsim_name_order"]


def batsim_name_order(name: str) -> bytes:
    """Sort key putting host names in the order Batsim numbers them (C++ ``std::string`` comparison: bytes)."""
    return name.encode("utf-8")


#: The node type of hosts without a ``node_type`` property, in tables and outputs per node type.
UNTYPED = "(untyped)"


@dataclass(frozen=True)
class Host:
    """One compute resource.

    Attributes:
        id: Batsim's resource id (0-based, the position in lexicographic host-name order).
        name: SimGrid host name, e.g. ``"node_007"``.
        speed: computing speed in flop/s (the initial power state's speed) of one core.
        cores: number of cores (SimGrid's ``core`` attribute, default 1). Without compute sharing a job takes a
            whole host and computes on one core; with it, up to ``cores`` jobs compute at full speed on the host.
        properties: the host's ``<prop>`` values as ``(name, value)`` pairs in file order (a cluster's ``<prop>``
            children go to each of its hosts); Batsim sends them to the decision process (SIMULATION_BEGINS).
        zone_properties: the ``<prop>`` values of the zone (or cluster) that holds the host, likewise.
    """

    id: int
    name: str
    speed: float
    cores: int = 1
    properties: tuple[tuple[str, str], ...] = ()
    zone_properties: tuple[tuple[str, str], ...] = ()

    def prop(self, name: str, default: str | None = None) -> str | None:
        """The value of property ``name``, or ``default``."""
        return dict(self.properties).get(name, default)

    @property
    def node_type(self) -> str | None:
        """The host's node type (property ``node_type``, as ``batreplay platform`` writes it), or None."""
        return self.prop("node_type")

    @property
    def slots(self) -> int:
        """Job slots of the host (Caspart et al., GridKa: node types have a number of cores and a number of job
        slots): its property ``slots``, else 1. Batsim sends properties to the decision process, not core
        counts, so a scheduler can only count the slots a property gives; ``batreplay platform --node-types``
        always writes it (one per core unless the type says otherwise)."""
        value = self.prop("slots")
        return 1 if value is None else int(value)


@dataclass(frozen=True)
class Platform:
    """Compute resources of a Batsim platform, in Batsim's numbering.

    Attributes:
        hosts: compute hosts, ``hosts[i].id == i``, names in ascending lexicographic order.
        master_host: name of the host that runs Batsim's server (not a compute resource).
        storage_hosts: names of hosts with role ``storage`` (not compute resources), sorted.
        storage: the storage hosts themselves, ``storage[k].id == len(hosts) + k`` (Batsim numbers them after the
            compute hosts), with their properties; empty when only their names are known.
        master_on_loopback: the master host is a plain ``<host>`` (not a cluster's) without a ``<route>`` to itself
            (or in a zone whose routing is not followed), so SimGrid carries the messages between its actors
            (Batsim's server, submitters, waiters) over SimGrid's own loopback link (10 GBps, ``FATPIPE``) or on
            links the engine does not know;
            the embedded engine does not reproduce that timing (a real Batsim 4.2.1 grouped the events of one
            instant otherwise and started two jobs in another order, 2026-11-28).
        network: the routes between any two hosts (:class:`batreplay.platforms.routing.Network`), for jobs that
            move bytes; None when the platform was not read from a file (not part of equality).
        source: file the platform was read from, if any (not part of equality).

    Raises:
        ValueError: at construction, when ids are not 0..n-1 in order, names are not in Batsim's order or not
            unique, a speed is not a finite number > 0, or there is no compute host.
    """

    hosts: tuple[Host, ...]
    master_host: str
    storage_hosts: tuple[str, ...] = ()
    storage: tuple[Host, ...] = ()
    master_on_loopback: bool = False
    network: Any = field(default=None, compare=False, repr=False)
    source: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", tuple(self.hosts))
        object.__setattr__(self, "storage", tuple(self.storage))
        object.__setattr__(self, "storage_hosts", tuple(self.storage_hosts) or tuple(h.name for h in self.storage))
        where = f" ({self.source})" if self.source is not None else ""
        if not self.hosts:
            raise ValueError(f"platform{where} has no compute host")
        for position, host in enumerate(self.hosts):
            if host.id != position:
                raise ValueError(f"platform{where}: host {host.name!r} has id {host.id}, expected {position}")
            if not (np.isfinite(host.speed) and host.speed > 0):
                raise ValueError(f"platform{where}: host {host.name!r} has speed {host.speed!r}, need > 0 flop/s")
            if host.cores < 1:
                raise ValueError(f"platform{where}: host {host.name!r} has {host.cores} cores, need at least 1")
            slots = host.prop("slots")
            if slots is not None and not (slots.isdigit() and int(slots) >= 1):
                raise ValueError(f"platform{where}: host {host.name!r} has property slots={slots!r}, need a whole "
                                 "number >= 1")
        keys = [batsim_name_order(h.name) for h in self.hosts]
        if any(a >= b for a, b in zip(keys, keys[1:])):
            raise ValueError(f"platform{where}: host names are not unique and in lexicographic order")

    @property
    def nb_compute(self) -> int:
        """Number of compute resources."""
        return len(self.hosts)

    @property
    def names(self) -> list[str]:
        """Host names by resource id."""
        return [h.name for h in self.hosts]

    @property
    def speeds(self) -> np.ndarray:
        """Speeds in flop/s by resource id, shape ``(nb_compute,)``, float64 (a fresh array each call)."""
        return np.array([h.speed for h in self.hosts], dtype=np.float64)

    @property
    def cores(self) -> list[int]:
        """Cores of each host, by resource id."""
        return [h.cores for h in self.hosts]

    @property
    def host_properties(self) -> list[tuple[dict[str, str], dict[str, str]]]:
        """``(properties, zone_properties)`` of each host, by resource id, as dicts."""
        return [(dict(h.properties), dict(h.zone_properties)) for h in self.hosts]

    @property
    def storage_resources(self) -> list[tuple[str, dict[str, str], dict[str, str]]]:
        """``(name, properties, zone_properties)`` of each storage host, by resource id (after the compute hosts)."""
        return [(h.name, dict(h.properties), dict(h.zone_properties)) for h in self.storage]

    @property
    def node_types(self) -> dict[str, list[int]]:
        """Resource ids of the hosts of each node type (property ``node_type``), types in order of first id; hosts
        without a type are left out."""
        types: dict[str, list[int]] = {}
        for host in self.hosts:
            if host.node_type is not None:
                types.setdefault(host.node_type, []).append(host.id)
        return types

    def id_of(self, name: str) -> int:
        """Resource id of the compute host called ``name``.

        Raises:
            KeyError: no compute host has that name.
        """
        for host in self.hosts:
            if host.name == name:
                return host.id
        raise KeyError(f"no compute host named {name!r}")

    def host_groups(self) -> list[tuple[int, float, int, tuple[tuple[str, str], ...]]]:
        """Maximal runs of consecutive ids with equal speed, cores and properties, as ``(count, speed, cores,
        properties)`` in id order (the node types of a platform ``batreplay platform`` wrote)."""
        groups: list[tuple[int, float, int, tuple[tuple[str, str], ...]]] = []
        for host in self.hosts:
            kind = (host.speed, host.cores, host.properties)
            if groups and groups[-1][1:] == kind:
                groups[-1] = (groups[-1][0] + 1, *kind)
            else:
                groups.append((1, *kind))
        return groups

    def speed_groups(self) -> list[tuple[int, float]]:
        """Maximal runs of consecutive ids with equal speed, as ``(count, speed)`` pairs in id order."""
        groups: list[tuple[int, float]] = []
        for host in self.hosts:
            if groups and groups[-1][1] == host.speed:
                groups[-1] = (groups[-1][0] + 1, host.speed)
            else:
                groups.append((1, host.speed))
        return groups
