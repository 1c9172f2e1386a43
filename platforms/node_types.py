"""Node types: groups of identical worker nodes, each with a CPU rate, cores, job slots and a number of instances.

Caspart et al. 2019 (load balancing for HEP computing at GridKa, Sect. 3) model each type of
worker node by its CPU rate, number of cores, number of job slots and number of instances; the simulation then
instantiates every node of every type. :class:`NodeType` is one such type; :func:`read_node_types` reads a list of
them from a TOML file (``[[node_types]]`` tables), as ``batreplay platform --node-types FILE`` and campaign files
take them; :func:`batreplay.platforms.generate.cluster_platform` writes them as SimGrid clusters (``core``
attribute, properties ``node_type``, ``slots`` and ``speed``) that real Batsim accepts and sends to the decision
process.

I/O (Caspart et al.'s I/O rate of a node type): a type may give ``io_rate``, the bytes/s between one of its nodes and
the site's storage, and the file an optional ``[storage]`` table whose ``rate`` is the bytes/s of the storage's own
link, which all nodes' reads and writes share (:func:`read_node_types_file`). Either every type gives an
``io_rate`` or none does. Without ``[storage]``, the storage rate is the sum of all nodes' I/O rates
(:func:`default_storage_rate`), so that the storage link does not limit a job alone
(with several jobs reading at once it may: SimGrid's bottleneck solver shares it). The generator then writes hosts and
links instead of clusters (see :mod:`batreplay.platforms.generate`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batreplay.platforms.reader import MAX_CORES, MAX_HOSTS, MIN_SPEED
from batreplay.toml_file import read_toml_file

__all__ = ["NodeType", "NodeTypeError", "NodeTypesFile", "check_rate", "default_storage_rate",
           "node_types_from_tables", "read_node_types", "read_node_types_file"]

_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
_FIELDS = ("name", "count", "cores", "slots", "speed", "io_rate")
_STORAGE_FIELDS = ("rate",)


class NodeTypeError(ValueError):
    """A node type that cannot be used; the message names the file (or table) and the field."""


def check_rate(value: object, what: str) -> float:
    """An I/O rate (bytes/s) as a float: an int or a float (not a string or a boolean), finite and at least
    :data:`~batreplay.platforms.reader.MIN_SPEED` (SimGrid reads a smaller positive bandwidth as out of range).

    Raises:
        NodeTypeError: anything else; the message starts with ``what`` (``"io_rate = 0"``).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NodeTypeError(f"{what} = {value!r}, need a number of bytes/s > 0")
    try:
        rate = float(value)
    except OverflowError:  # an integer beyond a float's range
        rate = math.inf
    if not (math.isfinite(rate) and rate >= MIN_SPEED):
        raise NodeTypeError(f"{what} = {value!r}, need a finite number of bytes/s > 0 (at least {MIN_SPEED:.3g}: "
                            "SimGrid reads a smaller one as out of range)")
    return rate


@dataclass(frozen=True)
class NodeType:
    """One type of worker node.

    Attributes:
        name: what the type is called (letters, digits, ``_ . + -``); hosts get the property ``node_type`` = name.
        count: number of nodes of the type (instances), 1 to :data:`~batreplay.platforms.reader.MAX_HOSTS`.
        cores: cores per node, 1 to :data:`~batreplay.platforms.reader.MAX_CORES` (SimGrid's ``core`` attribute).
        slots: job slots per node, >= 1 (property ``slots``); default: one per core.
        speed: flop/s of one core, a finite number of at least :data:`~batreplay.platforms.reader.MIN_SPEED`
            (an int or a float, not a string or a boolean).
        io_rate: bytes/s between one node of the type and the site's storage (its own I/O link), a finite number
            > 0 (as ``speed``, at least ``MIN_SPEED``); None: the type has no I/O (compute-only platform).

    Raises:
        NodeTypeError: a field out of range (the message names it).
    """

    name: str
    count: int
    speed: float
    cores: int = 1
    slots: int | None = None
    io_rate: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise NodeTypeError(f"node type name {self.name!r}: use letters, digits and _ . + - only")
        for field, value in (("count", self.count), ("cores", self.cores)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise NodeTypeError(f"node type {self.name!r}: {field} = {value!r}, need a whole number >= 1")
        if self.cores > MAX_CORES:
            raise NodeTypeError(f"node type {self.name!r}: cores = {self.cores}, more than the {MAX_CORES} SimGrid "
                                "reads (a C int)")
        if self.count > MAX_HOSTS:
            raise NodeTypeError(f"node type {self.name!r}: count = {self.count:,}, more than the {MAX_HOSTS:,} "
                                "compute nodes batreplay simulates: give fewer nodes")
        if self.slots is None:
            object.__setattr__(self, "slots", self.cores)
        elif isinstance(self.slots, bool) or not isinstance(self.slots, int) or self.slots < 1:
            raise NodeTypeError(f"node type {self.name!r}: slots = {self.slots!r}, need a whole number >= 1")
        if isinstance(self.speed, bool) or not isinstance(self.speed, (int, float)):
            raise NodeTypeError(f"node type {self.name!r}: speed = {self.speed!r}, need a number of flop/s > 0")
        try:
            speed = float(self.speed)
        except OverflowError:  # an integer beyond a float's range
            speed = math.inf
        if not (math.isfinite(speed) and speed >= MIN_SPEED):
            raise NodeTypeError(f"node type {self.name!r}: speed = {self.speed!r}, need a finite number of flop/s "
                                f">= {MIN_SPEED:.3g} (> 0: SimGrid reads a smaller one as out of range)")
        object.__setattr__(self, "speed", speed)
        if self.io_rate is not None:
            object.__setattr__(self, "io_rate", check_rate(self.io_rate, f"node type {self.name!r}: io_rate"))

    def scaled(self, count: int, speed_factor: float) -> NodeType:
        """The same type with ``count`` nodes and its speed times ``speed_factor`` (its I/O rate unchanged)."""
        return NodeType(self.name, count, self.speed * speed_factor, self.cores, self.slots, self.io_rate)


def default_storage_rate(node_types: Sequence[NodeType]) -> float:
    """The storage rate (bytes/s) when none is given: the sum over the types of count x ``io_rate``, what all nodes
    reading at once at their own rates need; under SimGrid's bottleneck solver it may still limit the fastest ones.

    Raises:
        NodeTypeError: a type without ``io_rate``, or a sum that is not a finite number (the message says to give
            the storage rate).
    """
    missing = [t.name for t in node_types if t.io_rate is None]
    if missing or not node_types:
        which = f"node type {missing[0]!r} has" if missing else "no node type, so"
        raise NodeTypeError(f"{which} no io_rate: a storage rate goes with the nodes' io_rate")
    total = math.fsum(t.count * t.io_rate for t in node_types)
    if not math.isfinite(total):
        raise NodeTypeError(f"the storage rate defaults to the sum of the nodes' io_rate, {total!r} bytes/s, not a "
                            "finite number: give the storage rate")
    return total


@dataclass(frozen=True)
class NodeTypesFile:
    """What a node types file describes: its node types and, for I/O, the storage rate it gives.

    Attributes:
        node_types: the ``[[node_types]]`` tables, in file order.
        storage_rate: bytes/s of the storage's link, the ``[storage]`` table's ``rate``; None when the file has no
            ``[storage]`` table (with I/O the generator then takes :func:`default_storage_rate`).
    """

    node_types: tuple[NodeType, ...]
    storage_rate: float | None = None

    @property
    def has_io(self) -> bool:
        """Whether the node types give I/O rates (then every type gives one)."""
        return any(t.io_rate is not None for t in self.node_types)


def node_types_from_tables(tables: Sequence[Mapping[str, Any]], where: str) -> list[NodeType]:
    """Node types from TOML tables (``name``, ``count``, ``speed``, optional ``cores``, ``slots`` and ``io_rate``).

    Raises:
        NodeTypeError: not a list of tables, an unknown or missing key, a bad value, a name given twice, more
            than :data:`~batreplay.platforms.reader.MAX_HOSTS` nodes in all, or ``io_rate`` given by some types and
            not by others; the message starts with ``where`` and the table's position.
    """
    if not isinstance(tables, list) or not tables:
        raise NodeTypeError(f"{where}: expected one or more [[node_types]] tables")
    types: list[NodeType] = []
    for number, table in enumerate(tables, start=1):
        place = f"{where}: node type {number}"
        _check_keys(table, place, _FIELDS, ("name", "count", "speed"), "a table")
        try:
            types.append(NodeType(**dict(table)))
        except NodeTypeError as err:
            raise NodeTypeError(f"{place}: {err}") from None
        if [t.name for t in types].count(types[-1].name) > 1:
            raise NodeTypeError(f"{place}: the name {types[-1].name!r} is given twice")
        total = sum(t.count for t in types)
        if total > MAX_HOSTS:
            raise NodeTypeError(f"{place}: with it the node types have {total:,} nodes in all, more than the "
                                f"{MAX_HOSTS:,} compute nodes batreplay simulates: give fewer nodes")
        if (types[-1].io_rate is None) != (types[0].io_rate is None):
            given, lacking = (types[0], types[-1]) if types[-1].io_rate is None else (types[-1], types[0])
            raise NodeTypeError(f"{place}: io_rate is given for node type {given.name!r} but not for "
                                f"{lacking.name!r}: give every node type an io_rate (bytes/s), or none")
    return types


def _check_keys(table: object, place: str, known: Sequence[str], required: Sequence[str], expected: str) -> None:
    """Refuse ``table`` unless it is a table of ``known`` keys with all of ``required``; messages start with
    ``place`` (raises NodeTypeError)."""
    if not isinstance(table, Mapping):
        raise NodeTypeError(f"{place}: expected {expected}, got {table!r}")
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise NodeTypeError(f"{place}: unknown key(s) {', '.join(unknown)} (known: {', '.join(known)})")
    missing = [key for key in required if key not in table]
    if missing:
        raise NodeTypeError(f"{place}: missing key(s) {', '.join(missing)}")


def _storage_rate(table: object, where: str, types: Sequence[NodeType]) -> float:
    """The ``rate`` of a ``[storage]`` table (bytes/s), checked against the node types (they must give I/O)."""
    place = f"{where}: [storage]"
    _check_keys(table, place, _STORAGE_FIELDS, ("rate",), "a table with a rate (bytes/s of the storage's link)")
    try:
        rate = check_rate(table["rate"], "rate")
    except NodeTypeError as err:
        raise NodeTypeError(f"{place}: {err}") from None
    if not any(t.io_rate is not None for t in types):
        raise NodeTypeError(f"{place}: rate is given but no node type has an io_rate: give the node types' io_rate "
                            "(bytes/s), or leave out [storage]")
    return rate


def read_node_types(path: str | os.PathLike[str]) -> list[NodeType]:
    """The node types of a TOML file (see :func:`read_node_types_file`; its ``[storage]`` table is checked, but
    its rate is not returned: use :func:`read_node_types_file` where a platform is generated).

    Raises:
        NodeTypeError: as :func:`read_node_types_file`.
    """
    return list(read_node_types_file(path).node_types)


def read_node_types_file(path: str | os.PathLike[str]) -> NodeTypesFile:
    """The node types of a TOML file, and its storage rate::

        [[node_types]]
        name = "fat"       # property node_type of its hosts
        count = 16         # nodes of this type
        cores = 8          # cores per node (default 1)
        slots = 8          # job slots per node (default: cores)
        speed = 2.0e9      # flop/s of one core
        io_rate = 1.0e9    # bytes/s between a node and the storage (optional; all types or none)

        [storage]          # optional, only with io_rate
        rate = 8.0e9       # bytes/s of the storage's link (default: sum of count x io_rate)

    Raises:
        NodeTypeError: missing or unreadable file, TOML syntax error (line and column), an unknown top-level key,
            a bad table (see :func:`node_types_from_tables`), or a bad ``[storage]`` table (not a table, an unknown
            or missing key, a rate that is not a finite number > 0, or given while no node type has an
            ``io_rate``); the message names the file, the table and the field.
    """
    path = Path(path)
    document = read_toml_file(path, "node types", NodeTypeError)
    unknown = sorted(set(document) - {"node_types", "storage"})
    if unknown:
        raise NodeTypeError(f"{path}: unknown top-level key(s) {', '.join(unknown)} (expected [[node_types]] and "
                            "optionally [storage])")
    types = node_types_from_tables(document.get("node_types"), str(path))
    storage = _storage_rate(document["storage"], str(path), types) if "storage" in document else None
    return NodeTypesFile(tuple(types), storage)
