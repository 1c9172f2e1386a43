"""Routes between the hosts of a SimGrid platform, as SimGrid 3.32 computes them (``Host::route_to``).

A job that moves bytes (Batsim's ``parallel`` profile with a communication matrix, ``parallel_homogeneous`` with
``com``, ``parallel_homogeneous_pfs``) puts its bytes on the links of the routes between its hosts, and Batsim's
internal messages from a job's first host to the master host cross links too. The embedded engine needs those
routes, link by link, in SimGrid's order. :func:`read_network` reads them from the parsed platform; what it cannot
follow exactly makes :meth:`Network.route` answer None and is named by :attr:`Network.unsupported`.

What is followed (checked against SimGrid 3.32's ``route_to`` on the platforms of ``tests/platforms/test_routing.py``,
2026-11-28):

- a zone with ``Full`` routing: its ``<route src dst>`` elements list their links (``<link_ctn>``) from ``src`` to
  ``dst``; a symmetrical route (the default) serves ``dst`` to ``src`` with the links in reverse order; two hosts
  without a route have an empty one (no link: their bytes take no time; a real Batsim ran such jobs in their compute
  time, recorded case pfs-slots, 2026-11-28); a host without a route to itself reaches itself over SimGrid's own
  loopback link, ``__loopback__`` (:data:`batreplay.platforms.network.SIMGRID_LOOPBACK`, ``FATPIPE``), unless the
  zone also holds sub-zones (SimGrid adds its loopback to zones without sub-zones only: an empty route);
- a ``<cluster>`` (flat): host ``prefix + n + suffix`` has a private link of the cluster's ``bw`` and ``lat``, called
  ``<id>_link_<n>`` (``sharing_policy="SHARED"``) or, by default (``SPLITDUPLEX``), two links ``<id>_link_<n>_UP``
  (outgoing) and ``<id>_link_<n>_DOWN`` (incoming); the optional backbone (``bb_bw``, ``bb_lat``) is
  ``<id>_backbone``. A route inside the cluster is the source's outgoing links, the backbone, then the
  destination's incoming link, each link once (a host's route to itself with a shared private link crosses it
  once); with ``loopback_bw`` a host reaches itself over ``<id>_link_<n>_loopback`` only. The cluster's router,
  ``prefix + id + "_router" + suffix`` (or ``router_id``), is reached over the outgoing link and the backbone and
  leaves over the backbone and the incoming link;
- between zones (clusters included) that are children of one ``Full`` zone: the ``<zoneRoute src dst gw_src
  gw_dst>`` of that zone gives the links between the two gateways; the route is source to ``gw_src`` inside the
  source's zone, those links, then ``gw_dst`` to the destination inside its zone.

The route's latency is the sum of its links' latencies. Anything else (other routings, bypass routes, link traces,
``SPLITDUPLEX`` or ``FATPIPE`` links given by hand, clusters with ``FATPIPE`` private links, limiters, hosts in different zones that are not children of one
``Full`` zone) is not followed. This module imports :mod:`batreplay.platforms.network` and :mod:`batreplay.platforms.radicals`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from batreplay.platforms.network import SIMGRID_LOOPBACK, Link, link_problem, parse_bandwidth, parse_latency
from batreplay.platforms.radicals import radical_ranges

__all__ = ["Network", "read_network"]

@dataclass
class _Cluster:
    """A flat ``<cluster>``: its hosts' private links, its backbone and loopbacks, its router."""

    id: str
    prefix: str
    suffix: str
    ranges: list[tuple[int, int]]
    router: str
    bandwidth: float
    latency: float
    policy: str  # SPLITDUPLEX or SHARED
    backbone: Link | None
    loopback: tuple[float, float] | None  # (bandwidth, latency)
    unfollowed: str | None = None  # why its routes are not followed (a limiter, traces, FATPIPE private links)

    def number(self, host: str) -> int | None:
        """The radical number of ``host`` if it is one of the cluster's hosts."""
        if not (host.startswith(self.prefix) and host.endswith(self.suffix)):
            return None
        middle = host[len(self.prefix):len(host) - len(self.suffix)]
        if not (middle.isascii() and middle.isdigit()) or str(int(middle)) != middle:
            return None
        value = int(middle)
        return value if any(first <= value <= last for first, last in self.ranges) else None

    def number_text(self, n: int) -> str:
        """The name of host number ``n``."""
        return f"{self.prefix}{n}{self.suffix}"

    def private(self, n: int, direction: str) -> Link:
        name = f"{self.id}_link_{n}" + (f"_{direction}" if self.policy == "SPLITDUPLEX" else "")
        return Link(name, self.bandwidth, self.latency)

    def local(self, src: str, dst: str) -> list[Link] | None:
        """The route from ``src`` to ``dst``, each a host of the cluster or its router (None: not followed)."""
        if self.unfollowed is not None:
            return None
        src_n = None if src == self.router else self.number(src)
        dst_n = None if dst == self.router else self.number(dst)
        if src == dst and src_n is not None and self.loopback is not None:
            bandwidth, latency = self.loopback
            return [Link(f"{self.id}_link_{src_n}_loopback", bandwidth, latency, plain=False, loopback=True)]
        links: list[Link] = []
        if src_n is not None:
            links.append(self.private(src_n, "UP"))
        if self.backbone is not None and (src_n is not None or dst_n is not None):
            links.append(self.backbone)
        if dst_n is not None:
            links.append(self.private(dst_n, "DOWN"))
        unique: list[Link] = []
        for link in links:  # (SimGrid adds each link once)
            if link not in unique:
                unique.append(link)
        return unique


@dataclass
class _Zone:
    """A ``<zone>``: its routing, its own hosts, its child zones and clusters, its routes."""

    id: str
    routing: str
    hosts: set[str] = field(default_factory=set)
    children: list[_Zone | _Cluster] = field(default_factory=list)
    routes: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    zone_routes: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = field(default_factory=dict)


class Network:
    """The routes of one platform (see the module docstring).

    Attributes:
        links: the platform's ``<link>`` elements by name.
        unsupported: why some routes cannot be followed (an element the engine does not model), or None.
        everywhere: why any route may differ from what is followed (bypass routes, traces, a route declared twice),
            or None.
    """

    def __init__(self, root: _Zone, links: dict[str, Link], unsupported: str | None,
                 everywhere: str | None = None) -> None:
        self.root = root
        self.links = links
        self.unsupported = unsupported
        self.everywhere = everywhere
        self._paths: dict[str, list] = {}

    def all_links(self) -> Iterator[Link]:
        """The declared links, SimGrid's own loopback if a host of a ``Full`` zone has no route to itself, then for
        each cluster its first host's private link(s), backbone and loopback (a cluster's private links differ only
        in name)."""
        yield from self.links.values()
        if any(zone.routing == "Full" and not zone.children and any((host, host) not in zone.routes
                                                                    for host in zone.hosts)
               for zone in self._zones()):
            yield SIMGRID_LOOPBACK
        for cluster in self._clusters():
            first = cluster.ranges[0][0]
            yield cluster.private(first, "UP")
            yield cluster.private(first, "DOWN")
            if cluster.backbone is not None:
                yield cluster.backbone
            if cluster.loopback is not None:
                yield Link(f"{cluster.id}_link_{first}_loopback", *cluster.loopback, plain=False, loopback=True)

    def slowest_bandwidth(self) -> float:
        """The smallest bandwidth of the platform's links, bytes/s (inf: none)."""
        return min((link.bandwidth for link in self.all_links()), default=float("inf"))

    def distinct_routes(self, hosts: Sequence[str], dst: str) -> Iterator[tuple[str, tuple[Link, ...] | None]]:
        """``(host, route to dst)`` (:meth:`route`, not strict) for the hosts of ``hosts`` a zone holds and for one
        host of each cluster among ``hosts`` (a cluster's hosts' routes to the same place differ only in the names
        of their private links): what is checked of every host's route, in a walk of the zones, without a route per
        host of a large cluster."""
        wanted = set(hosts)
        pending = [self.root]
        while pending:
            zone = pending.pop()
            for host in sorted(zone.hosts & wanted):
                yield host, self.route(host, dst, strict=False)
            for child in zone.children:
                if isinstance(child, _Zone):
                    pending.append(child)
                    continue
                for first, last in child.ranges:
                    found = next((name for name in map(child.number_text, range(first, min(last, first + 2) + 1))
                                  if name in wanted), None)
                    if found is not None:
                        yield found, self.route(found, dst, strict=False)
                        break

    def odd_link(self, bandwidth: float) -> str | None:
        """The first link of the platform that is not at ``bandwidth`` bytes/s with no latency, or a cluster whose
        links are not followed, described; None when every link is (any route then takes ``1 / bandwidth`` s for one
        byte alone)."""
        for link in self.all_links():
            if link.bandwidth != bandwidth or link.latency:
                return f"link {link.name!r} is at {link.bandwidth:g} B/s with a latency of {link.latency:g} s"
        return next((cluster.unfollowed for cluster in self._clusters() if cluster.unfollowed), None)

    def why_unfollowed(self) -> str:
        """What makes some routes unknown: :attr:`everywhere` or :attr:`unsupported`, or a routing not followed."""
        return self.everywhere or self.unsupported or self.transfer_problem() or "a route is not followed"

    def _zones(self) -> Iterator[_Zone]:
        pending = [self.root]
        while pending:
            zone = pending.pop()
            yield zone
            pending += [child for child in zone.children if isinstance(child, _Zone)]

    def _clusters(self) -> Iterator[_Cluster]:
        pending = [self.root]
        while pending:
            zone = pending.pop()
            for child in zone.children:
                if isinstance(child, _Zone):
                    pending.append(child)
                else:
                    yield child

    def transfer_problem(self, loopbacks: bool = False) -> str | None:
        """Why bytes between any two compute hosts may take a route the engine cannot play, or None: something is
        not followed (:attr:`unsupported`), a zone whose routing is not ``Full`` holds hosts, a ``Full`` zone holds
        hosts beside sub-zones or lacks a ``<zoneRoute>`` between two of its sub-zones, or a link is not plain (a
        cluster's loopbacks, ``FATPIPE``, count only with ``loopbacks``: bytes a host sends itself)."""
        if self.unsupported is not None:
            return self.unsupported
        pending = [self.root]
        while pending:
            zone = pending.pop()
            zones = [child for child in zone.children if isinstance(child, _Zone)]
            pending += zones
            if zone is not self.root and zone.routing != "Full" and (zone.hosts or zone.children):
                return f"zone {zone.id!r} has {zone.routing or 'no'} routing (only Full is followed)"
            if zone.hosts and zone.children:
                return f"zone {zone.id!r} holds hosts beside sub-zones (their routes are not followed)"
            names = [child.id for child in zone.children]
            missing = [(a, b) for a in names for b in names if a != b and (a, b) not in zone.zone_routes]
            if zone is not self.root and missing:
                return f"zone {zone.id!r} has no zone route from {missing[0][0]!r} to {missing[0][1]!r}"
        for link in self.all_links():
            problem = link_problem(link)
            if problem is not None and (loopbacks or not link.loopback):
                return problem
        return None

    def _path(self, host: str, zone: _Zone | None = None) -> list | None:
        """The zones from the root down to the zone or cluster holding ``host``."""
        zone = zone or self.root
        if host in zone.hosts:
            return [zone]
        for child in zone.children:
            if isinstance(child, _Cluster):
                if child.number(host) is not None or host == child.router:
                    return [zone, child]
            else:
                below = self._path(host, child)
                if below is not None:
                    return [zone] + below
        return None

    def path_of(self, host: str) -> list | None:
        if host not in self._paths:
            self._paths[host] = self._path(host)
        return self._paths[host]

    def route(self, src: str, dst: str, strict: bool = True) -> tuple[Link, ...] | None:
        """The links from host ``src`` to host ``dst`` in SimGrid's order (empty between two hosts of a ``Full`` zone
        without a route), or None when a host is unknown or the route is declared in a way this module does not
        follow; ``strict``: None too when anything of the platform is not followed (:attr:`unsupported`); otherwise
        only when that may change any route (:attr:`everywhere`) or the route crosses a link whose numbers are not
        known (a trace)."""
        if (self.unsupported if strict else self.everywhere) is not None:
            return None
        try:
            links = self._route(src, dst)
        except (KeyError, LookupError):
            return None
        return None if links is None else tuple(links)

    def latency(self, src: str, dst: str) -> float | None:
        """The latency (s) of the route from ``src`` to ``dst`` (:meth:`route`, not strict), its links' latencies
        added up in SimGrid 3.32's order (``get_global_route``: the links between the zones first, then the way to
        the source's gateway, then the way from the destination's), or None when the route is not known."""
        if self.everywhere is not None:
            return None
        total = [0.0]
        try:
            links = self._route(src, dst, total)
        except (KeyError, LookupError):
            return None
        return None if links is None else total[0]

    def _route(self, src: str, dst: str, latency: list[float] | None = None) -> list[Link] | None:
        """The route's links; ``latency``: a one-item list to which their latencies are added, in SimGrid's order."""
        src_path, dst_path = self.path_of(src), self.path_of(dst)
        if src_path is None or dst_path is None:
            return None
        depth = 0
        while depth < min(len(src_path), len(dst_path)) and src_path[depth] is dst_path[depth]:
            depth += 1
        common = src_path[depth - 1]
        if len(src_path) == depth and len(dst_path) == depth:  # both in the same zone or cluster
            links = self._local(common, src, dst)
            if latency is not None and links is not None:
                for link in links:
                    latency[0] += link.latency
            return links
        if len(src_path) == depth or len(dst_path) == depth or not isinstance(common, _Zone):
            return None  # a host of a zone and one of its sub-zones: not followed
        if common.routing != "Full":
            return None
        key = (src_path[depth].id, dst_path[depth].id)
        gw_src, gw_dst, names = common.zone_routes[key]
        if latency is not None:
            for name in names:
                latency[0] += self.links[name].latency
        before = [] if gw_src == src else self._route(src, gw_src, latency)
        after = [] if gw_dst == dst else self._route(gw_dst, dst, latency)
        if before is None or after is None:
            return None
        return before + [self.links[name] for name in names] + after

    def _local(self, zone: _Zone | _Cluster, src: str, dst: str) -> list[Link] | None:
        if isinstance(zone, _Cluster):
            return zone.local(src, dst)
        if zone.routing != "Full":
            return None
        if (src, dst) not in zone.routes:  # SimGrid 3.32: an empty route, or its own loopback from a host to itself
            return [SIMGRID_LOOPBACK] if src == dst and not zone.children else []  # (a zone of sub-zones: none)
        return [self.links[name] for name in zone.routes[(src, dst)]]


class _Builder:
    """One walk over the parsed platform, collecting zones, clusters, links and routes."""

    def __init__(self) -> None:
        self.links: dict[str, Link] = {}
        self.unsupported: str | None = None
        self.everywhere: str | None = None

    def refuse(self, reason: str, everywhere: bool = False) -> None:
        """Note something not followed (the first is kept); ``everywhere``: it may change any route (a bypass route,
        a trace, a route declared twice), not only those through one link."""
        if self.unsupported is None:
            self.unsupported = reason
        if everywhere and self.everywhere is None:
            self.everywhere = reason

    def zone(self, element: ET.Element, routing: str) -> _Zone:
        zone = _Zone(element.get("id", ""), routing)
        for child in element:
            tag = child.tag
            if tag == "zone":
                zone.children.append(self.zone(child, child.get("routing", "")))
            elif tag == "cluster":
                zone.children.append(self.cluster(child))
            elif tag in ("host", "peer"):
                zone.hosts.add(child.get("id", ""))
            elif tag == "link":
                self.link(child)
            elif tag == "route":
                self.route(zone, child)
            elif tag == "zoneRoute":
                self.zone_route(zone, child)
            elif tag in ("bypassRoute", "bypassZoneRoute", "cabinet", "backbone", "router"):
                self.refuse(f"<{tag}> elements are not followed", everywhere=True)
            elif tag == "trace_connect":
                self.refuse("a link's bandwidth, latency or state varies (<trace_connect>)", everywhere=True)
        return zone

    def link(self, element: ET.Element) -> None:
        name = element.get("id", "")
        policy = element.get("sharing_policy", "SHARED").upper()
        if policy == "SPLITDUPLEX":
            self.refuse(f"link {name!r} is SPLITDUPLEX")
        if any(element.get(field) for field in ("bandwidth_file", "latency_file", "state_file")):
            self.refuse(f"link {name!r} has a trace file")
            return  # (routes through it are unknown)
        try:
            self.links[name] = Link(name, parse_bandwidth(element.get("bandwidth", "")),
                                    parse_latency(element.get("latency", "0")), policy == "SHARED")
        except ValueError as exc:
            self.refuse(f"link {name!r}: {exc}")

    def _link_names(self, element: ET.Element) -> tuple[str, ...]:
        names = []
        for child in element:
            if child.tag == "link_ctn":
                if child.get("direction"):
                    self.refuse("a route names one direction of a SPLITDUPLEX link")
                names.append(child.get("id", ""))
        return tuple(names)

    def route(self, zone: _Zone, element: ET.Element) -> None:
        src, dst, names = element.get("src", ""), element.get("dst", ""), self._link_names(element)
        symmetrical = element.get("symmetrical", "YES").upper() != "NO"
        pairs = [((src, dst), names)] + ([((dst, src), names[::-1])] if symmetrical and src != dst else [])
        for pair, order in pairs:
            if pair in zone.routes:
                self.refuse(f"the route from {pair[0]!r} to {pair[1]!r} is declared twice", everywhere=True)
            zone.routes[pair] = order

    def zone_route(self, zone: _Zone, element: ET.Element) -> None:
        src, dst, names = element.get("src", ""), element.get("dst", ""), self._link_names(element)
        gw_src, gw_dst = element.get("gw_src", ""), element.get("gw_dst", "")
        if (src, dst) in zone.zone_routes:
            self.refuse(f"the zone route from {src!r} to {dst!r} is declared twice", everywhere=True)
        zone.zone_routes[(src, dst)] = (gw_src, gw_dst, names)
        if element.get("symmetrical", "YES").upper() != "NO":
            zone.zone_routes.setdefault((dst, src), (gw_dst, gw_src, names[::-1]))

    def cluster(self, element: ET.Element) -> _Cluster:
        cid, prefix, suffix = element.get("id", ""), element.get("prefix", ""), element.get("suffix", "")
        unfollowed = None
        for field in ("limiter_link", "bw_file", "lat_file"):  # (topologies other than flat: the reader refuses)
            if element.get(field):
                unfollowed = f"cluster {cid!r} has a {field}"
        try:
            bandwidth, latency = parse_bandwidth(element.get("bw", "")), parse_latency(element.get("lat", "0"))
            backbone = None
            if element.get("bb_bw"):
                bb_policy = element.get("bb_sharing_policy", "SHARED").upper()
                backbone = Link(f"{cid}_backbone", parse_bandwidth(element.get("bb_bw", "")),
                                parse_latency(element.get("bb_lat", "0")), bb_policy == "SHARED")
            loopback = None
            if element.get("loopback_bw"):
                loopback = (parse_bandwidth(element.get("loopback_bw", "")),
                            parse_latency(element.get("loopback_lat", "0")))
        except ValueError as exc:
            self.refuse(f"cluster {cid!r}: {exc}")
            bandwidth, latency, backbone, loopback = 1.0, 0.0, None, None
        policy = element.get("sharing_policy", "SPLITDUPLEX").upper()
        if policy not in ("SPLITDUPLEX", "SHARED"):
            unfollowed = f"cluster {cid!r} has {policy} private links"
        if unfollowed is not None:
            self.refuse(unfollowed)
        router = element.get("router_id") or f"{prefix}{cid}_router{suffix}"
        return _Cluster(cid, prefix, suffix, radical_ranges(element.get("radical", "")), router, bandwidth, latency,
                        policy, backbone, loopback, unfollowed)


def read_network(root: ET.Element) -> Network:
    """The routes of the platform parsed into ``root`` (its ``<platform>`` element, already checked by the
    reader: radicals and speeds are well formed)."""
    builder = _Builder()
    top = builder.zone(root, "")
    return Network(top, builder.links, builder.unsupported, builder.everywhere)
