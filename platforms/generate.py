"""Write SimGrid XML platforms for Batsim: clusters of N hosts at given speeds, and their scaled variants.

The generated form is the one of the golden Batsim 4.2.1 runs (``../shared/batsim-golden/*/platform.xml``): a
``Full``-routing zone holding the compute ``<cluster>`` elements (links of 125 MBps and 0 latency), a master
cluster of one host (``master_host0``, property ``role=master``), a backbone link of latency 0 and one
``<zoneRoute>`` through the backbone for every pair of clusters, with the clusters' routers as gateways
(SimGrid names a cluster's router ``prefix + id + "_router" + suffix``). Zero latency keeps every simulated
time exact.

Host numbering. Batsim numbers compute hosts in lexicographic order of their names, so hosts are named with
one zero-padded numbering, ``node_000 .. node_127``, so that resource id = node number. SimGrid does not pad
radicals, so the padding is put in the prefix: the hosts whose numbers have the same count of digits form one
cluster (for 128 hosts: prefix ``node_00`` radical ``0-9``, prefix ``node_0`` radical ``10-99``, prefix
``node_`` radical ``100-127``). Heterogeneous groups are numbered consecutively, group after group, and split
the same way; a platform of at most 10 hosts of one speed is a single cluster ``compute`` exactly like the
golden ones.

Platforms with I/O. When the compute hosts have an I/O rate (node types with ``io_rate``, or ``io_rate`` for a
homogeneous cluster; the hosts then carry the property ``io_rate``, bytes/s), the platform is written without
clusters, as one ``Full``-routed zone of plain elements (:func:`_io_platform_xml`): every compute host (the same
names, speeds, cores and properties as the cluster form, plus ``io_rate``), a master host named ``master_host``
(Batsim's default ``--master-host``, without a ``role`` property: Batsim 4.2.1 aborts on a host that is the master
both by name and by role), a storage host ``storage`` (``role=storage``), and links of zero latency: for each
compute host ``<host>_net`` (125 MBps) and ``<host>_io`` (its ``io_rate``), ``master_net`` and ``master_loop``
(125 MBps) for the master host, ``storage_io`` (the storage rate) for the storage host. The routes, each given
once (SimGrid makes them symmetrical): compute host -> master host through ``<host>_net`` and ``master_net``; master
host -> itself through ``master_loop``; compute host -> storage through ``<host>_io`` and ``storage_io``. There is no
route between compute hosts (jobs whose tasks communicate need a platform of their own).

Why: Batsim's 1-byte internal messages go from a job's first host to the master host, and between the actors of
the master host; on 125 MBps links that carry nothing else they take 8 ns as in the cluster form, which is what the
embedded engine reproduces. Without ``master_loop``, SimGrid would carry the master host's own messages over its
own loopback link (10 GBps, ``FATPIPE``), and events of one instant would be grouped otherwise (observed on a real Batsim
4.2.1, 2026-11-28: a Dijkstra zone without it started two jobs in another order). A job's reads and writes share the
node's I/O link and the storage's link: the storage link is the site's shared I/O bottleneck. Compute hosts keep
Batsim's resource ids (name order); the storage host gets the id after them.

Scaled variants follow the infrastructure changes of Madon, Da Costa, Pierson, "Replay with Feedback" (FGCS
2024), Section 5.2: number of nodes x2 and /2 ("infra*2", "infra/2"), node speed x2 and /2 ("perf*2",
"perf/2").
"""

from __future__ import annotations

import math
import os
import sys
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path

from batreplay.atomic import write_text_atomically
from batreplay.platforms.model import Platform
from batreplay.platforms.node_types import NodeType, check_rate
from batreplay.platforms.reader import DEFAULT_MASTER_HOST, MAX_HOSTS, MIN_SPEED, read_platform
from batreplay.platforms.shipped import REFERENCE_NODE_SPEED
from batreplay.platforms.speed_units import format_speed, parse_speed

__all__ = [
    "DEFAULT_BANDWIDTH",
    "DEFAULT_PREFIX",
    "PlatformScalingWarning",
    "SCALED_VARIANTS",
    "cluster_platform",
    "format_bandwidth",
    "platform_command",
    "scale_platform",
    "scaled_count",
    "write_platform",
    "write_platform_text",
]

#: Header lines written before the ``<platform>`` element (as in the golden platforms).
XML_HEADER = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
#: SimGrid XML format version written.
PLATFORM_VERSION = "4.1"
#: Host name prefix of compute nodes.
DEFAULT_PREFIX = "node_"
#: Bandwidth of every link (SimGrid units), as in the golden platforms.
DEFAULT_BANDWIDTH = "125MBps"
#: Latency of every link: zero, so that Batsim's times are exact.
ZERO_LATENCY = "0us"
#: Master cluster: one host, ``MASTER_PREFIX + "0"`` = ``master_host0``, with property ``role=master``.
MASTER_CLUSTER_ID = "master"
MASTER_PREFIX = "master_host"
MASTER_SPEED = "1Gf"
#: Platforms with I/O: the master host (Batsim's default ``--master-host``: master by its name, no ``role``), the
#: storage host (``role=storage``), and the links of the master host (to the compute hosts, to itself) and of the
#: storage host.
IO_MASTER_HOST = DEFAULT_MASTER_HOST
STORAGE_HOST = "storage"
MASTER_LINK = "master_net"
MASTER_LOOP = "master_loop"
STORAGE_LINK = "storage_io"
#: Most compute nodes of a platform with I/O: SimGrid 3.32's Full routing allocates a table of (hosts x hosts)
#: route pointers when it loads the platform (about 3.2 GB at 20,000 nodes).
MAX_IO_NODES = 10_000
#: Host property giving a compute host's I/O rate, bytes/s (as ``repr`` of a float).
IO_RATE_PROPERTY = "io_rate"

#: Scaled variants written by :func:`platform_command`: file-name suffix -> (nodes factor, speed factor).
SCALED_VARIANTS: dict[str, tuple[float, float]] = {
    "nodes-x2": (2.0, 1.0),
    "nodes-div2": (0.5, 1.0),
    "speed-x2": (1.0, 2.0),
    "speed-div2": (1.0, 0.5),
}


class PlatformScalingWarning(UserWarning):
    """A scaled platform differs from the exact request: a node count rounded, storage hosts left out."""


def _check_groups(groups: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    checked = []
    if len(groups) == 0:
        raise ValueError("groups: at least one (count, speed) group is needed")
    for index, group in enumerate(groups):
        try:
            count, speed = group
        except (TypeError, ValueError):
            raise ValueError(f"groups[{index}]: expected a (count, speed) pair, got {group!r}") from None
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"groups[{index}]: node count {count!r} must be an integer >= 1")
        speed = float(speed)
        if not (math.isfinite(speed) and speed >= MIN_SPEED):
            raise ValueError(f"groups[{index}]: speed {speed!r} must be a finite number of flop/s >= {MIN_SPEED:.3g} "
                             "(> 0: SimGrid reads a smaller one as out of range)")
        checked.append((count, speed))
    total = sum(count for count, _ in checked)
    if total > MAX_HOSTS:
        raise ValueError(f"{total:,} compute nodes, more than the {MAX_HOSTS:,} batreplay simulates: give fewer nodes")
    return checked


def _digit_runs(first: int, last: int) -> list[tuple[int, int, int]]:
    """Split ``first..last`` (inclusive) into runs of numbers with the same count of digits: (lo, hi, digits)."""
    runs = []
    lo = first
    while lo <= last:
        digits = len(str(lo))
        hi = min(last, 10**digits - 1)
        runs.append((lo, hi, digits))
        lo = hi + 1
    return runs


def _sub(parent: ET.Element, tag: str, **attrs: str) -> ET.Element:
    return ET.SubElement(parent, tag, attrs)


def cluster_platform(
    nodes: int | None = None,
    speed: float | None = None,
    *,
    groups: Sequence[tuple[int, float]] | None = None,
    node_types: Sequence[NodeType] | None = None,
    host_kinds: Sequence[tuple[int, Sequence[tuple[str, str]]]] | None = None,
    prefix: str = DEFAULT_PREFIX,
    bandwidth: str = DEFAULT_BANDWIDTH,
    io_rate: float | None = None,
    storage_rate: float | None = None,
) -> str:
    """Build the XML text of a cluster platform: compute hosts plus Batsim's master host.

    Either ``nodes`` hosts at ``speed`` (homogeneous), or ``groups``: a list of ``(count, speed)`` pairs, hosts
    numbered consecutively across the groups (group 0 gets node numbers 0..count0-1, and so on), or
    ``node_types`` (:class:`~batreplay.platforms.node_types.NodeType`): one group per type, its clusters with the
    type's cores (``core`` attribute) and the properties ``node_type``, ``slots`` and ``speed`` (flop/s of one core:
    Batsim does not send host speeds to the decision process, properties it does). ``host_kinds`` gives ``groups`` their ``(cores, properties)`` instead (scaled platforms).

    I/O: when every host has an I/O rate (``io_rate`` with ``nodes`` or ``groups``, the node types' ``io_rate``, or
    the property ``io_rate`` in ``host_kinds``), the platform with a storage host and I/O links described in the
    module docstring is written instead of clusters, each compute host with the property ``io_rate``.

    Args:
        nodes: number of compute hosts (>= 1); with ``groups``, optional and then must equal the total count.
        speed: speed of every host in flop/s (> 0); must be None with ``groups``.
        groups: heterogeneous ``(count, speed)`` groups, counts >= 1, speeds in flop/s > 0.
        node_types: node types, alone (neither ``speed`` nor ``groups``).
        host_kinds: ``(cores, properties)`` of each of ``groups`` (properties as ``(name, value)`` pairs).
        prefix: host name prefix; hosts are ``prefix`` + node number zero-padded to the width of the largest
            number, so that Batsim's resource id equals the node number.
        bandwidth: bandwidth of the links, SimGrid units (``"125MBps"``); latencies are always 0. With I/O, the
            bandwidth of the links of Batsim's messages (``<host>_net``, ``master_net``).
        io_rate: bytes/s between each compute host and the storage (a finite number > 0), with ``nodes`` or
            ``groups``; None: no I/O, unless node types or host kinds give it.
        storage_rate: bytes/s of the storage host's link (a finite number > 0), shared by all hosts' I/O; only
            with I/O; None: the sum of all hosts' I/O rates (the storage link then does not limit one job alone).

    Returns:
        The platform file's text (SimGrid XML 4.1 with the SimGrid DOCTYPE line). Speeds and bandwidths are written
        so that SimGrid reads back exactly the given floats.

    Raises:
        ValueError: missing, inconsistent or invalid counts/speeds, or a prefix that is empty, contains
            whitespace, or starts with ``master_host``; an I/O rate or storage rate that is not a finite number
            > 0, I/O rates for some hosts and not others, ``io_rate`` with ``node_types`` or ``host_kinds``, a
            ``storage_rate`` without I/O, or a default storage rate (the sum) that is not finite; more than
            :data:`MAX_IO_NODES` hosts with I/O.
    """
    kinds: list[tuple[int, tuple[tuple[str, str], ...]]] | None = None  # (cores, properties) of each group
    if node_types is not None:
        if groups is not None or speed is not None:
            raise ValueError("give node_types alone, not with speed or groups")
        groups = [(t.count, t.speed) for t in node_types]
        kinds = [(t.cores, (("node_type", t.name), ("slots", str(t.slots)), ("speed", repr(t.speed)))
                  + (() if t.io_rate is None else ((IO_RATE_PROPERTY, repr(t.io_rate)),))) for t in node_types]
    if groups is None:
        if nodes is None or speed is None:
            raise ValueError("give nodes and speed, or groups")
        checked = _check_groups([(nodes, speed)])
    else:
        if speed is not None:
            raise ValueError("give either speed or groups, not both")
        checked = _check_groups(groups)
        total = sum(count for count, _ in checked)
        if nodes is not None and nodes != total:
            raise ValueError(f"nodes={nodes!r} differs from the total count of the groups ({total})")
    if host_kinds is not None:
        if kinds is not None or len(host_kinds) != len(checked):
            raise ValueError("host_kinds: one (cores, properties) pair per group, and not with node_types")
        kinds = [(int(cores), tuple(props)) for cores, props in host_kinds]
    kinds = kinds or [(1, ())] * len(checked)
    if io_rate is not None:
        if node_types is not None or host_kinds is not None:
            raise ValueError("io_rate: give it with nodes or groups; node types give their own io_rate, host kinds "
                             "the property io_rate")
        rate = check_rate(io_rate, "io_rate")
        kinds = [(cores, (*props, (IO_RATE_PROPERTY, repr(rate)))) for cores, props in kinds]
    storage = _storage_rate([count for count, _ in checked], [props for _, props in kinds], storage_rate)
    _check_prefix(prefix)
    total = sum(count for count, _ in checked)
    width = len(str(total - 1))
    clusters = []  # (id, padded prefix, lo, hi, speed, cores, properties)
    first = 0
    for (count, group_speed), (cores, props) in zip(checked, kinds):
        for lo, hi, digits in _digit_runs(first, first + count - 1):
            clusters.append(("", prefix + "0" * (width - digits), lo, hi, group_speed, cores, props))
        first += count
    if len(clusters) == 1:
        named = [("compute", *clusters[0][1:])]
    else:
        named = [(f"compute_{lo:0{width}d}_{hi:0{width}d}", pre, lo, hi, *rest) for _, pre, lo, hi, *rest in clusters]

    if storage is not None:
        return _io_platform_xml(named, bandwidth, storage)
    return _platform_xml(named, bandwidth)


def _check_prefix(prefix: str) -> None:
    """Refuse a host-name prefix that is empty, holds whitespace or starts like the master host (ValueError)."""
    if not prefix or any(ch.isspace() for ch in prefix):
        raise ValueError(f"prefix {prefix!r}: must be non-empty and without whitespace")
    if prefix.startswith(MASTER_PREFIX):
        raise ValueError(f"prefix {prefix!r}: compute host names would look like the master host {MASTER_PREFIX}0")


def format_bandwidth(rate: float) -> str:
    """A bandwidth in bytes/s as SimGrid text that it reads back exactly: the shortest decimal of the float
    (``repr``) followed by the unit ``Bps`` (1 byte/s), e.g. ``1.5e8 -> "150000000.0Bps"``, ``1e20 -> "1e+20Bps"``
    (SimGrid reads the number with ``strtod``, exact for ``repr``, and multiplies it by 1)."""
    return repr(float(rate)) + "Bps"


def _storage_rate(counts: Sequence[int], props: Sequence[Sequence[tuple[str, str]]],
                  storage_rate: float | None) -> float | None:
    """The storage rate (bytes/s) of a platform whose groups have ``counts`` hosts and ``props`` properties: None
    when no group has the property ``io_rate`` (no I/O), ``storage_rate`` when given, else the sum of every host's
    I/O rate. Raises ValueError as :func:`cluster_platform` says."""
    rates = []
    for index, group in enumerate(props):
        text = dict(group).get(IO_RATE_PROPERTY)
        try:
            rates.append(None if text is None else check_rate(float(text), f"host property {IO_RATE_PROPERTY}"))
        except ValueError:
            raise ValueError(f"group {index}: host property {IO_RATE_PROPERTY} = {text!r}, need a finite number of "
                             "bytes/s > 0") from None
    if all(rate is None for rate in rates):
        if storage_rate is not None:
            raise ValueError(f"storage_rate = {storage_rate!r}: a storage rate needs the hosts' I/O rate (io_rate)")
        return None
    if any(rate is None for rate in rates):
        raise ValueError("io_rate: given for some hosts and not others: give every host an I/O rate, or none")
    if storage_rate is not None:
        return check_rate(storage_rate, "storage_rate")
    total = math.fsum(count * rate for count, rate in zip(counts, rates))
    if not math.isfinite(total):
        raise ValueError(f"storage_rate: the default, the sum of the hosts' I/O rates, is {total!r} bytes/s, not a "
                         "finite number: give the storage rate")
    return total


def _io_platform_xml(named: list[tuple], bandwidth: str, storage_rate: float) -> str:
    """The platform text with I/O (module docstring) of the compute hosts of the clusters ``(id, prefix, first,
    last, speed, cores, properties)``, their properties holding ``io_rate``, and a storage link of ``storage_rate``
    bytes/s. Elements are serialized one at a time (a million hosts make some seven million elements)."""
    root = ET.Element("platform", version=PLATFORM_VERSION)
    zone = _sub(root, "zone", id="AS0", routing="Full")
    zone.append(ET.Comment("elements"))
    ET.indent(root, space="  ")
    head, tail = ET.tostring(root, encoding="unicode").split("<!--elements-->")
    nodes = sum(hi - lo + 1 for _id, _pre, lo, hi, *_rest in named)
    if nodes > MAX_IO_NODES:
        raise ValueError(f"{nodes:,} nodes with I/O rates, more than the {MAX_IO_NODES:,} of a platform with I/O: "
                         "SimGrid's Full routing keeps a table of nodes x nodes routes (3.2 GB at 20,000 nodes)")
    hosts = [(f"{pre}{number}", speed, cores, props, dict(props)[IO_RATE_PROPERTY])
             for _id, pre, lo, hi, speed, cores, props in named for number in range(lo, hi + 1)]

    def text(tag: str, children: Sequence[tuple[str, dict[str, str]]] = (), **attrs: str) -> str:
        element = ET.Element(tag, attrs)
        for child_tag, child_attrs in children:
            _sub(element, child_tag, **child_attrs)
        ET.indent(element, space="  ", level=2)
        return ET.tostring(element, encoding="unicode")

    def route(src: str, dst: str, *links: str) -> str:
        return text("route", [("link_ctn", {"id": link}) for link in links], src=src, dst=dst)

    def elements():
        for name, speed, cores, props, _rate in hosts:
            attributes = {"id": name, "speed": format_speed(speed)} | ({"core": str(cores)} if cores != 1 else {})
            yield text("host", [("prop", {"id": key, "value": value}) for key, value in props], **attributes)
        yield text("host", id=IO_MASTER_HOST, speed=MASTER_SPEED)
        yield text("host", [("prop", {"id": "role", "value": "storage"})], id=STORAGE_HOST, speed=MASTER_SPEED)
        for name, *_rest in hosts:
            yield text("link", id=f"{name}_net", bandwidth=bandwidth, latency=ZERO_LATENCY)
        yield text("link", id=MASTER_LINK, bandwidth=bandwidth, latency=ZERO_LATENCY)
        yield text("link", id=MASTER_LOOP, bandwidth=bandwidth, latency=ZERO_LATENCY)
        for name, *_rest, rate in hosts:
            yield text("link", id=f"{name}_io", bandwidth=format_bandwidth(float(rate)), latency=ZERO_LATENCY)
        yield text("link", id=STORAGE_LINK, bandwidth=format_bandwidth(storage_rate), latency=ZERO_LATENCY)
        for name, *_rest in hosts:
            yield route(name, IO_MASTER_HOST, f"{name}_net", MASTER_LINK)
        yield route(IO_MASTER_HOST, IO_MASTER_HOST, MASTER_LOOP)
        for name, *_rest in hosts:
            yield route(name, STORAGE_HOST, f"{name}_io", STORAGE_LINK)

    return XML_HEADER + head + "\n    ".join(elements()) + tail + "\n"


def _platform_xml(named: list[tuple], bandwidth: str) -> str:
    """The platform text of the compute clusters ``(id, prefix, first, last, speed, cores, properties)``: one zone,
    the clusters, the master cluster, the backbone and a route through it between every pair of clusters."""
    root = ET.Element("platform", version=PLATFORM_VERSION)
    zone = _sub(root, "zone", id="AS0", routing="Full")
    routers: list[tuple[str, str]] = []  # (cluster id, router name)
    for cluster_id, cluster_prefix, lo, hi, cluster_speed, cores, props in named:
        attributes = {"id": cluster_id, "prefix": cluster_prefix, "suffix": "", "radical": f"{lo}-{hi}",
                      "speed": format_speed(cluster_speed)}
        if cores != 1:
            attributes["core"] = str(cores)
        cluster = _sub(zone, "cluster", **attributes, bw=bandwidth, lat=ZERO_LATENCY)
        for key, value in props:
            _sub(cluster, "prop", id=key, value=value)
        routers.append((cluster_id, f"{cluster_prefix}{cluster_id}_router"))
    master = _sub(
        zone, "cluster", id=MASTER_CLUSTER_ID, prefix=MASTER_PREFIX, suffix="", radical="0-0",
        speed=MASTER_SPEED, bw=bandwidth, lat=ZERO_LATENCY,
    )
    _sub(master, "prop", id="role", value="master")
    _sub(zone, "link", id="backbone", bandwidth=bandwidth, latency=ZERO_LATENCY)
    master_router = (MASTER_CLUSTER_ID, f"{MASTER_PREFIX}{MASTER_CLUSTER_ID}_router")
    pairs = [(r, master_router) for r in routers]
    pairs += [(routers[i], routers[j]) for i in range(len(routers)) for j in range(i + 1, len(routers))]
    for (src, gw_src), (dst, gw_dst) in pairs:
        route = _sub(zone, "zoneRoute", src=src, dst=dst, gw_src=gw_src, gw_dst=gw_dst)
        _sub(route, "link_ctn", id="backbone")
    ET.indent(root, space="  ")
    return XML_HEADER + ET.tostring(root, encoding="unicode") + "\n"


def write_platform_text(path: str | os.PathLike[str], xml_text: str) -> Path:
    """Write platform text to ``path`` atomically (temporary file in the same folder, then rename).

    Parent folders are created. Returns the path written. Raises OSError on I/O failure (the previous file,
    if any, is then left untouched and the temporary file removed).
    """
    return write_text_atomically(path, xml_text)


def write_platform(
    path: str | os.PathLike[str],
    nodes: int | None = None,
    speed: float | None = None,
    *,
    groups: Sequence[tuple[int, float]] | None = None,
    node_types: Sequence[NodeType] | None = None,
    prefix: str = DEFAULT_PREFIX,
    bandwidth: str = DEFAULT_BANDWIDTH,
    io_rate: float | None = None,
    storage_rate: float | None = None,
) -> Path:
    """Generate a platform with :func:`cluster_platform` and write it atomically to ``path`` (``io_rate`` and
    ``storage_rate`` in bytes/s, as there).

    Returns the path written. Raises what :func:`cluster_platform` and :func:`write_platform_text` raise.
    """
    text = cluster_platform(nodes, speed, groups=groups, node_types=node_types, prefix=prefix, bandwidth=bandwidth,
                            io_rate=io_rate, storage_rate=storage_rate)
    return write_platform_text(path, text)


def scaled_count(count: int, factor: Fraction | float) -> int:
    """A node count times ``factor`` (> 0), as the scaled variants take it: exact when that is a whole number >= 1,
    else rounded to the nearest integer, halves up (5 x 1/2 -> 3), and never below 1."""
    target = count * Fraction(factor)
    if target.denominator == 1 and target >= 1:
        return int(target)
    return max(1, math.floor(target + Fraction(1, 2)))


def _scaled_count(count: int, factor: Fraction, what: str, exact: bool,
                  on_rounding: Callable[[str], None] | None) -> int:
    rounded = scaled_count(count, factor)
    target = count * factor
    if target == rounded:
        return rounded
    message = f"{what}{count} nodes x {float(factor):g} = {float(target):g} is not a whole number >= 1"
    if exact:
        raise ValueError(f"{message}; would round to {rounded}")
    if on_rounding is not None:
        on_rounding(f"{message}: rounded to {rounded} nodes")
    else:
        warnings.warn(f"{message}; using {rounded}", PlatformScalingWarning, stacklevel=3)
    return rounded


def scale_platform(
    platform_or_path: Platform | str | os.PathLike[str],
    nodes_factor: float = 1.0,
    speed_factor: float = 1.0,
    *,
    exact: bool = False,
    prefix: str = DEFAULT_PREFIX,
    bandwidth: str = DEFAULT_BANDWIDTH,
    on_rounding: Callable[[str], None] | None = None,
    storage_rate: float | None = None,
) -> str:
    """Build the XML text of a platform with more/fewer nodes and/or faster/slower nodes.

    The platform's compute hosts, in id order, are taken as groups of consecutive hosts of equal speed, cores and
    properties (:meth:`Platform.host_groups`: the node types of a platform written with them); each group's count
    is multiplied by ``nodes_factor`` and its speed by ``speed_factor``, keeping its cores and properties, and the
    result is generated by :func:`cluster_platform` (so host names and network are the generator's, not the
    original file's; storage hosts are not carried over, with a :class:`PlatformScalingWarning`).

    I/O: when the hosts have the property ``io_rate`` (bytes/s; a platform written with I/O), each keeps its I/O
    rate (a speed factor does not change it) and the result is again a platform with I/O and a storage host, whose
    link has ``storage_rate`` bytes/s, or by default the sum of the scaled platform's I/O rates (it follows the
    node count; the file does not record whether its storage rate was given or the default, so pass it again to
    keep it).

    Rounding: a scaled count that is not a whole number (say 5 nodes / 2 = 2.5) is rounded to the nearest
    integer, halves up (2.5 -> 3), and never below 1 node (:func:`scaled_count`); each rounding is told, in one
    line naming the node type (or the group's index), to ``on_rounding``, or without it by a
    :class:`PlatformScalingWarning`. With ``exact=True`` it raises ValueError instead. Scaling speeds by a
    power of two (x2, /2) is exact in floating point.

    Args:
        platform_or_path: a :class:`Platform` or the path of a platform file (read with :func:`read_platform`).
        nodes_factor: multiplier of node counts (> 0), e.g. 2.0 or 0.5.
        speed_factor: multiplier of node speeds (> 0), e.g. 2.0 or 0.5.
        exact: refuse to round node counts.
        prefix, bandwidth: passed to :func:`cluster_platform`.
        on_rounding: called with the message of each rounded count instead of a warning.
        storage_rate: bytes/s of the storage link of a platform with I/O; None: the default above.

    Returns:
        The scaled platform's XML text.

    Raises:
        ValueError: a factor that is not a finite number > 0, a rounding refused by ``exact``, a scaled speed that
            is not a finite number > 0, or more than :data:`~batreplay.platforms.reader.MAX_HOSTS` compute nodes.
        PlatformError: the file cannot be read.
    """
    for name, factor in (("nodes_factor", nodes_factor), ("speed_factor", speed_factor)):
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"{name}={factor!r}: must be a finite number > 0")
    platform = platform_or_path if isinstance(platform_or_path, Platform) else read_platform(platform_or_path)
    has_io = any(host.prop(IO_RATE_PROPERTY) is not None for host in platform.hosts)
    if platform.storage_hosts and not has_io:
        warnings.warn(
            f"{len(platform.storage_hosts)} storage host(s) not carried over to the scaled platform: "
            + ", ".join(platform.storage_hosts),
            PlatformScalingWarning,
            stacklevel=2,
        )
    node_fraction = Fraction(nodes_factor)
    kinds = platform.host_groups()  # node types scale one by one, keeping their cores, slots and properties
    groups = [
        (_scaled_count(count, node_fraction, _group_name(index, props, len(kinds)), exact, on_rounding),
         speed * speed_factor)
        for index, (count, speed, _cores, props) in enumerate(kinds)
    ]
    kinds_scaled = [(cores, tuple((key, repr(float(value) * speed_factor)) if key == "speed" else (key, value)
                                  for key, value in props)) for _c, _s, cores, props in kinds]  # speed follows
    return cluster_platform(groups=groups, host_kinds=kinds_scaled, prefix=prefix, bandwidth=bandwidth,
                            storage_rate=storage_rate)


def _group_name(index: int, props: Sequence[tuple[str, str]], groups: int) -> str:
    """How messages name a group of hosts (with ``: ``): its node type, else its index among several, else nothing."""
    node_type = dict(props).get("node_type")
    if node_type is not None:
        return f"node type {node_type!r}: "
    return f"group {index}: " if groups > 1 else ""


def variant_path(out: str | os.PathLike[str], variant: str) -> Path:
    """File of a scaled variant next to ``out``: ``kth.xml`` + ``"nodes-x2"`` -> ``kth-nodes-x2.xml``."""
    out = Path(out)
    return out.with_name(f"{out.stem}-{variant}{out.suffix or '.xml'}")


def _check_variants(groups: Sequence[tuple[str | None, int, float]], io_rates: Sequence[float] | None = None) -> None:
    """Refuse, before anything is written, a scaled variant of ``groups`` (``(node type name or None, count, speed)``)
    with more than :data:`~batreplay.platforms.reader.MAX_HOSTS` compute nodes, a speed that is not a finite
    number > 0, or, given the groups' ``io_rates`` (bytes/s; only when the storage rate is the default), a default
    storage rate that is not finite (a ValueError naming ``--variants``, the variant and the limit)."""
    for variant, (nodes_factor, speed_factor) in SCALED_VARIANTS.items():
        fraction = Fraction(nodes_factor)
        total = sum(scaled_count(count, fraction) for _name, count, _speed in groups)
        if io_rates is not None and not math.isfinite(
                math.fsum(scaled_count(count, fraction) * rate for (_n, count, _s), rate in zip(groups, io_rates))):
            raise ValueError(f"--variants: variant {variant}: the default storage rate, the sum of the nodes' I/O "
                             "rates, is not a finite number of bytes/s: give the storage rate, or leave out --variants")
        if total > MAX_HOSTS:
            raise ValueError(f"--variants: variant {variant} would have {total:,} compute nodes, more than the "
                             f"{MAX_HOSTS:,} batreplay simulates: give at most {math.floor(MAX_HOSTS / nodes_factor):,} "
                             "nodes in all, or leave out --variants")
        for name, _count, speed in groups:
            scaled = speed * speed_factor
            if not (math.isfinite(scaled) and scaled >= MIN_SPEED):
                which = f" of node type {name!r}" if name is not None else ""
                raise ValueError(f"--variants: variant {variant}{which}: {speed!r} flop/s x {speed_factor:g} = "
                                 f"{scaled!r} is not a finite speed >= {MIN_SPEED:.3g}: give a speed between "
                                 f"{2 * MIN_SPEED:.3g} and {sys.float_info.max / 2:.3g} flop/s, or leave out "
                                 "--variants")


def platform_command(
    nodes: int | None, speed: float | str | None, out: str | os.PathLike[str], variants: bool = False,
    node_types: Sequence[NodeType] | None = None, on_note: Callable[[str], None] | None = None,
    io_rate: float | None = None, storage_rate: float | None = None,
) -> list[Path]:
    """Command-line action: write a homogeneous platform (or one of node types) and, optionally, its four scaled
    variants.

    Args:
        nodes: number of compute hosts, 1 to :data:`~batreplay.platforms.reader.MAX_HOSTS`; None with
            ``node_types``.
        speed: node speed in flop/s, as a number or a SimGrid speed string (``"1Gf"``); None: the default,
            :data:`~batreplay.platforms.shipped.REFERENCE_NODE_SPEED` (1e9). Must be None with ``node_types``.
        out: platform file to write.
        node_types: the node types of a heterogeneous platform (``--node-types``), instead of ``nodes``; the
            variants then scale every type's count (x2, /2) or speed (x2, /2).
        variants: also write ``<stem>-nodes-x2``, ``-nodes-div2``, ``-speed-x2``, ``-speed-div2`` next to
            ``out`` (see :data:`SCALED_VARIANTS`; an odd node count halved is rounded up, halves up).
        on_note: called with one line per rounded node count of a variant (``mini-nodes-div2.xml: 5 nodes x 0.5 =
            2.5 is not a whole number >= 1: rounded to 3 nodes``, with ``node type 'fat': `` after the file name
            for node types); None: a :class:`PlatformScalingWarning` instead.
        io_rate: bytes/s between each node and the storage, with ``nodes`` (``--io-rate``): a platform with I/O
            (see :func:`cluster_platform`); with ``node_types`` their own ``io_rate`` gives it instead.
        storage_rate: bytes/s of the storage's link (``--storage-rate``, or the node types file's ``[storage]
            rate``); only with I/O; None: the sum of the nodes' I/O rates, in the variants too (it follows their
            node count); given, every variant keeps it. Variants keep each node's I/O rate.

    Returns:
        Paths written, ``out`` first, then the variants in the order of :data:`SCALED_VARIANTS`.

    Raises:
        ValueError: nodes not an integer from 1 to ``MAX_HOSTS``, a speed that is not > 0 (a malformed speed
            string is reported with its text), ``speed`` or ``nodes`` given with ``node_types``, ``out`` not ending
            in ``.xml``, or with ``variants`` a variant of more than ``MAX_HOSTS`` compute nodes or of a speed that
            is not a finite number > 0, ``io_rate`` with ``node_types``, an I/O or storage rate that is not a finite
            number > 0, a storage rate without I/O rates; the message names the command-line option. Nothing is
            written then.
        OSError: a file cannot be written.
    """
    if Path(out).suffix.lower() != ".xml":
        raise ValueError(f"--out {os.fspath(out)}: a SimGrid platform file must end in .xml (Batsim reads it by "
                         "its extension)")
    if node_types is not None:
        if nodes is not None:
            raise ValueError("--nodes and --node-types: give one of them (the node types say how many nodes)")
        if speed is not None:
            raise ValueError("--speed and --node-types: each node type gives its own speed (its key 'speed'); "
                             "leave out --speed")
        if io_rate is not None:
            raise ValueError("--io-rate and --node-types: each node type gives its own I/O rate (its key "
                             "'io_rate'); leave out --io-rate")
        groups = [(t.name, t.count, t.speed) for t in node_types]
        rates = [t.io_rate for t in node_types] if any(t.io_rate is not None for t in node_types) else None
        if rates is not None and None in rates:
            raise ValueError("--node-types: io_rate is given for some node types and not others: give every node "
                             "type an io_rate (bytes/s), or none")
    else:
        if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
            raise ValueError(f"--nodes {nodes!r}: the number of compute nodes must be an integer >= 1")
        if nodes > MAX_HOSTS:
            raise ValueError(f"--nodes {nodes}: more than the {MAX_HOSTS:,} compute nodes batreplay simulates "
                             f"(batreplay run refuses such platforms): give at most {MAX_HOSTS}")
        speed_value = REFERENCE_NODE_SPEED if speed is None else parse_speed(speed) if isinstance(speed, str) \
            else float(speed)
        if not (math.isfinite(speed_value) and speed_value >= MIN_SPEED):
            raise ValueError(f"--speed {speed!r}: the node speed must be a finite number of flop/s >= "
                             f"{MIN_SPEED:.3g} (> 0: SimGrid reads a smaller one as out of range)")
        groups = [(None, nodes, speed_value)]
        rates = None if io_rate is None else [_option_rate(io_rate, "--io-rate")]
    if storage_rate is not None:
        if rates is None:
            raise ValueError(f"--storage-rate {storage_rate!r}: a storage rate goes with the nodes' I/O rate: give "
                             "--io-rate (bytes/s per node), or node types with io_rate")
        storage_rate = _option_rate(storage_rate, "--storage-rate")
    elif rates is not None and not math.isfinite(math.fsum(c * r for (_n, c, _s), r in zip(groups, rates))):
        raise ValueError("--storage-rate: the default, the sum of the nodes' I/O rates, is not a finite number of "
                         "bytes/s: give --storage-rate (or [storage] rate in the node types file)")
    if variants:
        _check_variants(groups, rates if storage_rate is None else None)  # before anything is written
    if node_types is not None:
        written = [write_platform(out, node_types=node_types, storage_rate=storage_rate)]
    else:
        written = [write_platform(out, nodes, groups[0][2], io_rate=io_rate, storage_rate=storage_rate)]
    if variants:
        base = read_platform(written[0])
        for variant, (nodes_factor, speed_factor) in SCALED_VARIANTS.items():
            path = variant_path(out, variant)
            told = None if on_note is None else (lambda text, name=path.name: on_note(f"{name}: {text}"))
            written.append(write_platform_text(path, scale_platform(base, nodes_factor, speed_factor,
                                                                    on_rounding=told, storage_rate=storage_rate)))
    return written


def _option_rate(value: float, option: str) -> float:
    """A rate of the command line (bytes/s), checked: a ValueError naming ``option`` unless a finite number > 0."""
    try:
        return check_rate(value, option)
    except ValueError:
        raise ValueError(f"{option} {value!r}: need a finite number of bytes/s > 0 (at least {MIN_SPEED:.3g})") \
            from None
