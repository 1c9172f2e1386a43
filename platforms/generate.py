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
from batreplay.platforms.node_types import NodeType
from batreplay.platforms.reader import MAX_HOSTS, MIN_SPEED, read_platform
from batreplay.platforms.shipped import REFERENCE_NODE_SPEED
from batreplay.platforms.speed_units import format_speed, parse_speed

__all__ = [
    "DEFAULT_BANDWIDTH",
    "DEFAULT_PREFIX",
    "PlatformScalingWarning",
    "SCALED_VARIANTS",
    "cluster_platform",
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
) -> str:
    """Build the XML text of a cluster platform: compute hosts plus Batsim's master host.

    Either ``nodes`` hosts at ``speed`` (homogeneous), or ``groups``: a list of ``(count, speed)`` pairs, hosts
    numbered consecutively across the groups (group 0 gets node numbers 0..count0-1, and so on), or
    ``node_types`` (:class:`~batreplay.platforms.node_types.NodeType`): one group per type, its clusters with the
    type's cores (``core`` attribute) and the properties ``node_type``, ``slots`` and ``speed`` (flop/s of one core:
    Batsim does not send host speeds to the decision process, properties it does). ``host_kinds`` gives ``groups`` their ``(cores, properties)`` instead (scaled platforms).

    Args:
        nodes: number of compute hosts (>= 1); with ``groups``, optional and then must equal the total count.
        speed: speed of every host in flop/s (> 0); must be None with ``groups``.
        groups: heterogeneous ``(count, speed)`` groups, counts >= 1, speeds in flop/s > 0.
        node_types: node types, alone (neither ``speed`` nor ``groups``).
        host_kinds: ``(cores, properties)`` of each of ``groups`` (properties as ``(name, value)`` pairs).
        prefix: host name prefix; hosts are ``prefix`` + node number zero-padded to the width of the largest
            number, so that Batsim's resource id equals the node number.
        bandwidth: bandwidth of the links, SimGrid units (``"125MBps"``); latencies are always 0.

    Returns:
        The platform file's text (SimGrid XML 4.1 with the SimGrid DOCTYPE line). Speeds are written so that
        SimGrid reads back exactly the given floats.

    Raises:
        ValueError: missing, inconsistent or invalid counts/speeds, or a prefix that is empty, contains
            whitespace, or starts with ``master_host``.
    """
    kinds: list[tuple[int, tuple[tuple[str, str], ...]]] | None = None  # (cores, properties) of each group
    if node_types is not None:
        if groups is not None or speed is not None:
            raise ValueError("give node_types alone, not with speed or groups")
        groups = [(t.count, t.speed) for t in node_types]
        kinds = [(t.cores, (("node_type", t.name), ("slots", str(t.slots)), ("speed", repr(t.speed))))
                 for t in node_types]
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
    if not prefix or any(ch.isspace() for ch in prefix):
        raise ValueError(f"prefix {prefix!r}: must be non-empty and without whitespace")
    if prefix.startswith(MASTER_PREFIX):
        raise ValueError(f"prefix {prefix!r}: compute host names would look like the master host {MASTER_PREFIX}0")

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

    return _platform_xml(named, bandwidth)


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
) -> Path:
    """Generate a platform with :func:`cluster_platform` and write it atomically to ``path``.

    Returns the path written. Raises what :func:`cluster_platform` and :func:`write_platform_text` raise.
    """
    text = cluster_platform(nodes, speed, groups=groups, node_types=node_types, prefix=prefix, bandwidth=bandwidth)
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
) -> str:
    """Build the XML text of a platform with more/fewer nodes and/or faster/slower nodes.

    The platform's compute hosts, in id order, are taken as groups of consecutive hosts of equal speed, cores and
    properties (:meth:`Platform.host_groups`: the node types of a platform written with them); each group's count
    is multiplied by ``nodes_factor`` and its speed by ``speed_factor``, keeping its cores and properties, and the
    result is generated by :func:`cluster_platform` (so host names and network are the generator's, not the
    original file's; storage hosts are not carried over, with a :class:`PlatformScalingWarning`).

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
    if platform.storage_hosts:
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
    return cluster_platform(groups=groups, host_kinds=kinds_scaled, prefix=prefix, bandwidth=bandwidth)


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


def _check_variants(groups: Sequence[tuple[str | None, int, float]]) -> None:
    """Refuse, before anything is written, a scaled variant of ``groups`` (``(node type name or None, count, speed)``)
    with more than :data:`~batreplay.platforms.reader.MAX_HOSTS` compute nodes or a speed that is not a finite
    number > 0 (a ValueError naming ``--variants``, the variant and the limit)."""
    for variant, (nodes_factor, speed_factor) in SCALED_VARIANTS.items():
        fraction = Fraction(nodes_factor)
        total = sum(scaled_count(count, fraction) for _name, count, _speed in groups)
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

    Returns:
        Paths written, ``out`` first, then the variants in the order of :data:`SCALED_VARIANTS`.

    Raises:
        ValueError: nodes not an integer from 1 to ``MAX_HOSTS``, a speed that is not > 0 (a malformed speed
            string is reported with its text), ``speed`` or ``nodes`` given with ``node_types``, ``out`` not ending
            in ``.xml``, or with ``variants`` a variant of more than ``MAX_HOSTS`` compute nodes or of a speed that
            is not a finite number > 0; the message names the command-line option. Nothing is written then.
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
        groups = [(t.name, t.count, t.speed) for t in node_types]
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
    if variants:
        _check_variants(groups)  # before anything is written
    if node_types is not None:
        written = [write_platform(out, node_types=node_types)]
    else:
        written = [write_platform(out, nodes, groups[0][2])]
    if variants:
        base = read_platform(written[0])
        for variant, (nodes_factor, speed_factor) in SCALED_VARIANTS.items():
            path = variant_path(out, variant)
            told = None if on_note is None else (lambda text, name=path.name: on_note(f"{name}: {text}"))
            written.append(write_platform_text(path, scale_platform(base, nodes_factor, speed_factor,
                                                                    on_rounding=told)))
    return written
