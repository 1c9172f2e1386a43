"""Node types: groups of identical worker nodes, each with a CPU rate, cores, job slots and a number of instances.

Caspart et al. 2019 (load balancing for HEP computing at GridKa, Sect. 3) model each type of
worker node by its CPU rate, number of cores, number of job slots and number of instances; the simulation then
instantiates every node of every type. :class:`NodeType` is one such type; :func:`read_node_types` reads a list of
them from a TOML file (``[[node_types]]`` tables), as ``batreplay platform --node-types FILE`` and campaign files
take them; :func:`batreplay.platforms.generate.cluster_platform` writes them as SimGrid clusters (``core``
attribute, properties ``node_type``, ``slots`` and ``speed``) that real Batsim accepts and sends to the decision
process.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batreplay.platforms.reader import MAX_CORES, MAX_HOSTS, MIN_SPEED

__all__ = ["NodeType", "NodeTypeError", "node_types_from_tables", "read_node_types"]

_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
_FIELDS = ("name", "count", "cores", "slots", "speed")


class NodeTypeError(ValueError):
    """A node type that cannot be used; the message names the file (or table) and the field."""


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

    Raises:
        NodeTypeError: a field out of range (the message names it).
    """

    name: str
    count: int
    speed: float
    cores: int = 1
    slots: int | None = None

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

    def scaled(self, count: int, speed_factor: float) -> NodeType:
        """The same type with ``count`` nodes and its speed times ``speed_factor``."""
        return NodeType(self.name, count, self.speed * speed_factor, self.cores, self.slots)


def node_types_from_tables(tables: Sequence[Mapping[str, Any]], where: str) -> list[NodeType]:
    """Node types from TOML tables (``name``, ``count``, ``speed``, optional ``cores`` and ``slots``).

    Raises:
        NodeTypeError: not a list of tables, an unknown or missing key, a bad value, a name given twice, or more
            than :data:`~batreplay.platforms.reader.MAX_HOSTS` nodes in all; the message starts with ``where`` and
            the table's position.
    """
    if not isinstance(tables, list) or not tables:
        raise NodeTypeError(f"{where}: expected one or more [[node_types]] tables")
    types: list[NodeType] = []
    for number, table in enumerate(tables, start=1):
        place = f"{where}: node type {number}"
        if not isinstance(table, Mapping):
            raise NodeTypeError(f"{place}: expected a table, got {table!r}")
        unknown = sorted(set(table) - set(_FIELDS))
        if unknown:
            raise NodeTypeError(f"{place}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_FIELDS)})")
        missing = [key for key in ("name", "count", "speed") if key not in table]
        if missing:
            raise NodeTypeError(f"{place}: missing key(s) {', '.join(missing)}")
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
    return types


def read_node_types(path: str | os.PathLike[str]) -> list[NodeType]:
    """The node types of a TOML file::

        [[node_types]]
        name = "fat"       # property node_type of its hosts
        count = 16         # nodes of this type
        cores = 8          # cores per node (default 1)
        slots = 8          # job slots per node (default: cores)
        speed = 2.0e9      # flop/s of one core

    Raises:
        NodeTypeError: missing or unreadable file, TOML syntax error (line and column), or a bad table (see
            :func:`node_types_from_tables`).
    """
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NodeTypeError(f"{path}: no such node types file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise NodeTypeError(f"{path}: cannot read it ({err})") from None
    except tomllib.TOMLDecodeError as err:
        raise NodeTypeError(f"{path}: not valid TOML: {err}") from None
    unknown = sorted(set(document) - {"node_types"})
    if unknown:
        raise NodeTypeError(f"{path}: unknown top-level key(s) {', '.join(unknown)} (expected [[node_types]])")
    return node_types_from_tables(document.get("node_types"), str(path))
