"""Read a SimGrid XML platform (version 4.1, as Batsim 4.2.1 / SimGrid 3.32 read it) into a :class:`Platform`.

What is understood (anything else that would create hosts or change their speed is refused with an error):

- ``<zone>`` elements, nested to any depth; their routing and links do not matter here.
- ``<cluster>`` with the default flat topology: hosts ``prefix + number + suffix`` for every number of the
  ``radical`` (``"0-3"``, ``"0-1,4-7"``, ``"5"``), all with the cluster's ``speed`` and with the cluster's
  ``<prop>`` children as host properties (SimGrid 3.32 ``sg_platf_new_cluster_flat`` gives them to each host).
- ``<cabinet>`` (inside a zone with ``routing="Cluster"``): hosts ``prefix + number + suffix``, one speed.
- ``<host id speed [pstate]>`` with ``<prop>`` children; ``<peer id speed>``.
- Speeds with SimGrid units (see :mod:`batreplay.platforms.speed_units`); a comma-separated pstate list gives
  one speed per power state, and the host's speed is the one of its initial pstate (attribute ``pstate``,
  default 0, i.e. the first).

Roles, as Batsim 4.2.1 assigns them (``src/machines.cpp``, ``src/permissions.cpp``): the host property
``role`` is ``""`` or ``"compute_node"`` (compute resource), ``"master"`` or ``"storage"``; any other value is an
error in Batsim and here. The host named like Batsim's ``--master-host`` option (default ``master_host``) is
the master too. Exactly one master host must exist. Golden platforms name theirs ``master_host0`` (cluster with
prefix ``master_host`` and radical ``0-0``) and mark it with the cluster property ``role=master``.
"""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.parsers import expat

from batreplay.platforms.model import Host, Platform, batsim_name_order
from batreplay.platforms.radicals import expand_radical, radical_ranges, radical_size
from batreplay.platforms.network import SIMGRID_LOOPBACK
from batreplay.platforms.routing import Network, read_network
from batreplay.platforms.speed_units import parse_pstate_speeds, parse_speed

__all__ = ["DEFAULT_MASTER_HOST", "MAX_CORES", "MAX_HOSTS", "MIN_SPEED", "PlatformError", "read_platform", "expand_radical", "radical_size"]

#: Default of Batsim's ``-m/--master-host`` option.
DEFAULT_MASTER_HOST = "master_host"
#: Most compute hosts (the hosts jobs run on: role ``""`` or ``"compute_node"``) a platform may have: 1,000,000
#: are accepted, 1,000,001 refused. The master host is not counted; master and storage hosts together are bounded
#: by the same number. The one limit of ``batreplay run`` (this reader), ``batreplay platform`` (the generator, node
#: types, variants) and campaign files. The largest recorded logs use some 25,000 processors (LCG) and the largest
#: machines some 160,000 nodes; a million hosts take the reader and the embedded engine tens of seconds and
#: gigabytes of memory, beyond that a typo (``radical="0-50000000"``) would run for many minutes.
MAX_HOSTS = 1_000_000
#: Smallest compute host speed, flop/s, that SimGrid 3.32 reads: the smallest normal double (about 2.2e-308); a
#: smaller one (``5e-324f``) stops Batsim with "value out of range".
MIN_SPEED = sys.float_info.min
#: Most cores a host may have: SimGrid reads the ``core`` attribute as a C ``int`` (a larger count aborts Batsim).
MAX_CORES = 2**31 - 1

_COMPUTE_ROLES = ("", "compute_node")
_KNOWN_ROLES = (*_COMPUTE_ROLES, "master", "storage")

# Elements that neither create hosts nor change host speeds: network, routing, configuration, deployment.
_NEUTRAL_TAGS = frozenset(
    {
        "link",
        "link_ctn",
        "route",
        "zoneRoute",
        "bypassRoute",
        "bypassZoneRoute",
        "router",
        "backbone",
        "host_link",
        "config",
        "prop",
        "trace",
        "disk",
        "actor",
        "argument",
    }
)
# trace_connect kinds that would make a host's speed vary over time.
_SPEED_TRACE_KINDS = frozenset({"SPEED", "HOST_AVAIL"})
_SUPPORTED_VERSIONS = ("4", "4.0", "4.1")


class PlatformError(ValueError):
    """A platform file that cannot be read, or uses something this reader does not support.

    The message names the file, the line and the element (``path:line: <cluster id='compute'>: ...``).
    Attributes ``path``, ``line`` (1-based, or None) and ``element`` (tag, or None) hold the same facts.
    """

    def __init__(self, path: Path | str, line: int | None, element: str | None, message: str) -> None:
        self.path = Path(path)
        self.line = line
        self.element = element
        where = f"{path}:{line}" if line is not None else f"{path}"
        what = f" {element}:" if element else ""
        super().__init__(f"{where}:{what} {message}")


class _Reader:
    """One pass over one parsed file, collecting hosts with their properties."""

    def __init__(self, path: Path, lines: dict[ET.Element, int], max_hosts: int = MAX_HOSTS,
                 master_host: str = DEFAULT_MASTER_HOST) -> None:
        self.path = path
        self.lines = lines
        self.max_hosts = max_hosts
        self.master_host = master_host
        self.counts = {True: 0, False: 0}  # hosts so far: compute (True), master and storage (False)
        # name -> (speed, properties, element, cores, zone properties) in document order
        self.hosts: dict[str, tuple[float, dict[str, str], ET.Element, int, dict[str, str]]] = {}
        self.zone_props: list[dict[str, str]] = [{}]  # the <prop> children of the zones being walked

    # -- errors -----------------------------------------------------------------------------------------
    def error(self, element: ET.Element, message: str) -> PlatformError:
        label = f"<{element.tag}"
        if "id" in element.attrib:
            label += f" id={element.attrib['id']!r}"
        return PlatformError(self.path, self.lines.get(element), label + ">", message)

    def attr(self, element: ET.Element, name: str) -> str:
        value = element.get(name)
        if value is None:
            raise self.error(element, f"missing attribute {name!r}")
        return value

    # -- values -----------------------------------------------------------------------------------------
    def speeds(self, element: ET.Element, field: str = "speed") -> list[float]:
        text = self.attr(element, field)
        try:
            return parse_pstate_speeds(text)
        except ValueError as exc:
            raise self.error(element, f"attribute {field!r}: {exc}") from None

    def cores(self, element: ET.Element) -> int:
        """The element's ``core`` attribute (cores per host, SimGrid's default 1), an integer from 1 to
        :data:`MAX_CORES`."""
        text = element.get("core", "1")
        try:
            cores = int(text)
        except ValueError:
            raise self.error(element, f"attribute 'core': {text!r} is not an integer") from None
        if cores < 1:
            raise self.error(element, f"attribute 'core': {cores} cores, need at least 1")
        if cores > MAX_CORES:
            raise self.error(element, f"attribute 'core': {cores} cores, more than the {MAX_CORES} SimGrid reads (a C "
                                      "int)")
        return cores

    def is_compute(self, name: str, props: dict[str, str]) -> bool:
        """Whether a host of this name and these properties is a compute host (an unknown role counts as one: it is
        refused later, with its name)."""
        return name != self.master_host and props.get("role", "") not in ("master", "storage")

    def radical(self, element: ET.Element, props: dict[str, str]) -> list[int]:
        """The numbers of the element's radical, refused before they are listed if the platform would then
        have more than ``max_hosts`` compute hosts (or master and storage hosts, by the cluster's ``role``)."""
        text = self.attr(element, "radical")
        try:
            ranges = radical_ranges(text)
        except ValueError as exc:
            raise self.error(element, f"attribute 'radical': {exc}") from None
        size = sum(end - start + 1 for start, end in ranges)
        compute = self.is_compute("", props)
        master = self.master_number(element, ranges) if compute else None  # the one host named like --master-host
        counted = size - (master is not None)
        kind = "compute hosts" if compute else "master and storage hosts"
        self.check_size(element, compute, counted, f"attribute 'radical' {text!r} declares {counted:,} {kind}")
        return expand_radical(text)

    def master_number(self, element: ET.Element, ranges: list[tuple[int, int]]) -> int | None:
        """The number of the radical whose host is named like ``--master-host``, if any."""
        prefix, suffix, name = element.get("prefix", ""), element.get("suffix", ""), self.master_host
        middle = name[len(prefix):len(name) - len(suffix)] if len(name) > len(prefix) + len(suffix) else ""
        if not (name.startswith(prefix) and name.endswith(suffix) and middle.isascii() and middle.isdigit()
                and str(int(middle)) == middle):
            return None
        return int(middle) if any(start <= int(middle) <= end for start, end in ranges) else None

    def check_size(self, element: ET.Element, compute: bool, added: int, what: str) -> None:
        before = self.counts[compute]
        if before + added > self.max_hosts:
            kind = "compute hosts" if compute else "master and storage hosts"
            raise self.error(element, f"{what}; with the {before:,} {kind} before it the platform would have "
                                      f"{before + added:,}, more than the {self.max_hosts:,} {kind} batreplay "
                                      f"simulates (the master host is not counted): declare fewer hosts")

    def properties(self, element: ET.Element, allowed_children: frozenset[str]) -> dict[str, str]:
        props: dict[str, str] = {}
        for child in element:
            if child.tag == "prop":
                key = self.attr(child, "id")
                if key in props:
                    raise self.error(child, f"property {key!r} given twice")
                props[key] = self.attr(child, "value")
            elif child.tag not in allowed_children:
                raise self.error(child, f"unsupported element inside <{element.tag}>")
        return props

    def add_host(self, element: ET.Element, name: str, speed: float, props: dict[str, str], cores: int = 1,
                 zone_props: dict[str, str] | None = None) -> None:
        compute = self.is_compute(name, props)
        if self.counts[compute] >= self.max_hosts:
            self.check_size(element, compute, 1, f"host {name!r}")
        if name in self.hosts:
            first = self.hosts[name][2]
            raise self.error(
                element, f"host {name!r} already defined at line {self.lines.get(first)} (<{first.tag}>)"
            )
        self.counts[compute] += 1
        self.hosts[name] = (speed, props, element, cores,
                            dict(self.zone_props[-1] if zone_props is None else zone_props))

    # -- elements ---------------------------------------------------------------------------------------
    def walk(self, parent: ET.Element) -> None:
        for child in parent:
            tag = child.tag
            if tag == "zone":
                self.attr(child, "id")
                self.zone_props.append({self.attr(prop, "id"): self.attr(prop, "value") for prop in child
                                        if prop.tag == "prop"})
                self.walk(child)
                self.zone_props.pop()
            elif tag == "cluster":
                self.cluster(child)
            elif tag == "cabinet":
                self.cabinet(child)
            elif tag == "host":
                self.host(child)
            elif tag == "peer":
                self.peer(child)
            elif tag == "trace_connect":
                if child.get("kind", "HOST_AVAIL").upper() in _SPEED_TRACE_KINDS:
                    raise self.error(child, "host speed/availability traces are not supported (constant speeds only)")
            elif tag in _NEUTRAL_TAGS:
                pass  # (links and routes: platforms/routing.py)
            else:
                raise self.error(child, "unsupported element")

    def cluster(self, element: ET.Element) -> None:
        topology = element.get("topology", "FLAT")
        if topology.upper() != "FLAT":
            raise self.error(element, f"cluster topology {topology!r} is not supported (only FLAT)")
        prefix = self.attr(element, "prefix")
        suffix = self.attr(element, "suffix")
        speed = self.speeds(element)[0]
        props = self.properties(element, frozenset())
        cores = self.cores(element)
        for number in self.radical(element, props):  # a cluster is a zone of its own: its props are its zone's too
            self.add_host(element, f"{prefix}{number}{suffix}", speed, dict(props), cores, props)

    def cabinet(self, element: ET.Element) -> None:
        prefix = self.attr(element, "prefix")
        suffix = self.attr(element, "suffix")
        try:
            speed = parse_speed(self.attr(element, "speed"))
        except ValueError as exc:
            raise self.error(element, f"attribute 'speed': {exc}") from None
        self.properties(element, frozenset())
        for number in self.radical(element, {}):
            self.add_host(element, f"{prefix}{number}{suffix}", speed, {})

    def host(self, element: ET.Element) -> None:
        name = self.attr(element, "id")
        for field in ("availability_file", "state_file"):
            if element.get(field):
                raise self.error(element, f"attribute {field!r}: traces are not supported (speeds must be constant)")
        speeds = self.speeds(element)
        pstate_text = element.get("pstate", "0")
        try:
            pstate = int(pstate_text)
        except ValueError:
            raise self.error(element, f"attribute 'pstate': {pstate_text!r} is not an integer") from None
        if not 0 <= pstate < len(speeds):
            raise self.error(element, f"attribute 'pstate': {pstate} is not among the {len(speeds)} pstates")
        props = self.properties(element, frozenset({"disk"}))
        self.add_host(element, name, speeds[pstate], props, self.cores(element))

    def peer(self, element: ET.Element) -> None:
        name = self.attr(element, "id")
        try:
            speed = parse_speed(self.attr(element, "speed"))
        except ValueError as exc:
            raise self.error(element, f"attribute 'speed': {exc}") from None
        self.add_host(element, name, speed, {})


def _master_on_loopback(reader: _Reader, network: Network, master: str) -> bool:
    """Whether the master host is a plain ``<host>`` without a ``<route>`` to itself (in a ``Full`` zone, SimGrid
    3.32 then carries the messages between its actors over its own loopback link, 10 GBps and ``FATPIPE``) or whose
    route is not followed (another routing): the embedded engine does not time those messages. A cluster's host,
    or a ``<peer>``, goes through its own links."""
    if reader.hosts[master][2].tag != "host":
        return False
    route = network.route(master, master, strict=False)  # (whatever else the routes hold)
    return not route or SIMGRID_LOOPBACK in route


def _parse_with_lines(path: Path) -> tuple[ET.Element, dict[ET.Element, int]]:
    """Parse with expat into an ElementTree, remembering each element's starting line."""
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    lines: dict[ET.Element, int] = {}

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    try:
        with open(path, "rb") as stream:
            parser.ParseFile(stream)
    except expat.ExpatError as exc:
        raise PlatformError(path, exc.lineno, None, f"not well-formed XML: {expat.errors.messages[exc.code]}") from None
    return builder.close(), lines


def read_platform(path: str | os.PathLike[str], *, master_host: str = DEFAULT_MASTER_HOST,
                  max_hosts: int = MAX_HOSTS) -> Platform:
    """Read the compute resources of a SimGrid XML platform as Batsim 4.2.1 numbers them.

    Args:
        path: platform file (SimGrid XML, ``<platform version="4.1">``).
        master_host: value of Batsim's ``-m`` option; a host of that name is the master whatever its role.
        max_hosts: the most compute hosts the platform may declare (default :data:`MAX_HOSTS`; the master host is
            not counted, master and storage hosts together have the same bound); a cluster's radical is checked
            before it is expanded.

    Returns:
        A :class:`Platform`: compute hosts with ids 0..n-1 in lexicographic host-name order, their speeds in
        flop/s (of one core), core counts (attribute ``core`` of ``<cluster>`` and ``<host>``, default 1) and
        properties (theirs and their zone's, as Batsim sends them; ``node_type`` and ``slots`` name a node type and
        its job slots); the master host's name; the storage hosts' names.

    Raises:
        FileNotFoundError: no such file.
        PlatformError: not well-formed XML, root not ``<platform>`` of version 4/4.1, a missing or malformed
            attribute (speed, radical, pstate), an unknown role, duplicate host names, an unsupported element
            (non-flat cluster topology, speed traces, unknown tags), no or several master hosts, no compute
            host, a compute host slower than :data:`MIN_SPEED` (0 flop/s), more than :data:`MAX_CORES` cores, or
            more than ``max_hosts`` compute hosts. The message names file,
            line and element.
    """
    path = Path(path)
    root, lines = _parse_with_lines(path)
    reader = _Reader(path, lines, max_hosts, master_host)
    if root.tag != "platform":
        raise reader.error(root, "the root element must be <platform>")
    version = root.get("version")
    if version not in _SUPPORTED_VERSIONS:
        raise reader.error(root, f"platform version {version!r} is not supported (SimGrid XML 4.1 expected)")
    reader.walk(root)

    compute: list[tuple[str, float, int, dict[str, str], dict[str, str]]] = []
    masters: list[str] = []
    storage: list[tuple[str, float, int, dict[str, str], dict[str, str]]] = []
    for name, (speed, props, element, cores, zone_props) in reader.hosts.items():
        role = props.get("role", "")
        if role not in _KNOWN_ROLES:
            raise reader.error(element, f"host {name!r}: unknown role {role!r} (Batsim knows {_KNOWN_ROLES})")
        if name == master_host or role == "master":
            masters.append(name)
        elif role == "storage":
            storage.append((name, speed, cores, props, zone_props))
        else:
            if speed < MIN_SPEED:
                raise reader.error(element, f"compute host {name!r} has speed {speed!r} flop/s, Batsim needs at least "
                                            f"{MIN_SPEED:.3g} (SimGrid reads a smaller one as out of range)")
            slots = props.get("slots")
            if slots is not None and not (slots.isdigit() and int(slots) >= 1):
                raise reader.error(element, f"host {name!r}: property 'slots' = {slots!r}, need a whole number >= 1")
            compute.append((name, speed, cores, props, zone_props))
    if len(masters) != 1:
        found = ", ".join(masters) if masters else "none"
        raise PlatformError(
            path, None, None,
            f"exactly one master host expected (role 'master' or named {master_host!r}), found: {found}",
        )
    if not compute:
        raise PlatformError(path, None, None, "no compute host")
    compute.sort(key=lambda pair: batsim_name_order(pair[0]))
    storage.sort(key=lambda pair: batsim_name_order(pair[0]))
    hosts, disks = (tuple(Host(id=first + i, name=name, speed=speed, cores=cores, properties=tuple(props.items()),
                               zone_properties=tuple(zone.items()))
                          for i, (name, speed, cores, props, zone) in enumerate(found))
                    for first, found in ((0, compute), (len(compute), storage)))
    network = read_network(root)
    return Platform(hosts=hosts, master_host=masters[0], storage=disks,
                    master_on_loopback=_master_on_loopback(reader, network, masters[0]),
                    network=network, source=path)
