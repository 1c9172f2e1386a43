"""Links and routes of a SimGrid platform as SimGrid 3.32 reads them: bandwidths (bytes/s) and latencies (s).

Only what the embedded engine needs to play jobs that read and write (``parallel_homogeneous_pfs``) is read: the
``<link>`` elements and the ``<route>`` elements of zones with ``Full`` routing, where each route lists its links
(``<link_ctn>``), symmetrical unless ``symmetrical="NO"``; :func:`storage_routes` then gives each compute host's
route to the storage host. Clusters' implicit links are not modelled here.

Units (SimGrid's ``xbt_parse_get_bandwidth`` and ``xbt_parse_get_time``, 3.32): a decimal number (C ``strtod``)
directly followed by a unit. Bandwidth: ``Bps`` (byte/s, also the unit of a bare number) with the decimal
prefixes k, M, G, T, P, E, Z, Y (each 1000 times the previous) or the binary ones Ki, Mi, Gi, Ti, Pi, Ei, Zi, Yi
(each 1024 times), and ``bps`` (bit/s, an eighth of a byte/s) with the same prefixes. Time: ``s`` (also the unit
of a bare number), ``ms``, ``us``, ``ns``, ``ps``, ``m`` (minute), ``h``, ``d``, ``w``. This module imports only the
number syntax of :mod:`batreplay.platforms.speed_units`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from batreplay.platforms.speed_units import NUMBER_AND_UNIT

__all__ = ["Link", "parse_bandwidth", "parse_latency", "storage_routes"]



def _bandwidth_factors() -> dict[str, float]:
    factors: dict[str, float] = {}
    for unit, base in (("Bps", 1.0), ("bps", 0.125)):
        factors[unit] = base
        for prefixes, step in ((("k", "M", "G", "T", "P", "E", "Z", "Y"), 1000.0),
                               (("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"), 1024.0)):
            value = base
            for prefix in prefixes:
                value *= step
                factors[prefix + unit] = value
    return factors


_BANDWIDTH_FACTORS = _bandwidth_factors()
_TIME_FACTORS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
                 "d": 86400.0, "w": 604800.0}


def _parse(text: str, factors: Mapping[str, float], default: str, what: str) -> float:
    match = NUMBER_AND_UNIT.fullmatch(text)
    unit = match.group("unit") if match else None
    if match is None or (unit and unit not in factors):
        raise ValueError(f"{what} {text!r}: expected a number directly followed by one of the units "
                         f"{', '.join(factors)}")
    return float(match.group("number")) * factors[unit or default]


def parse_bandwidth(text: str) -> float:
    """Bytes/s of a SimGrid bandwidth (``"125MBps"`` -> 125e6, ``"1Gbps"`` -> 1.25e8). Raises ValueError: not a
    number with a bandwidth unit, or not finite and > 0."""
    value = _parse(text, _BANDWIDTH_FACTORS, "Bps", "bandwidth")
    if not 0 < value < float("inf"):
        raise ValueError(f"bandwidth {text!r}: must be finite and > 0")
    return value


def parse_latency(text: str) -> float:
    """Seconds of a SimGrid latency (``"0us"`` -> 0.0, ``"15ms"`` -> 0.015). Raises ValueError."""
    return _parse(text, _TIME_FACTORS, "s", "latency")


@dataclass(frozen=True)
class Link:
    """A network link: ``name``, ``bandwidth`` (bytes/s) and ``latency`` (s); ``plain``: shared between the
    transfers that cross it (SimGrid's default ``SHARED`` policy), with constant bandwidth and latency (no
    ``FATPIPE`` or ``SPLITDUPLEX`` policy, no trace file)."""

    name: str
    bandwidth: float
    latency: float
    plain: bool = True


def storage_routes(compute: Sequence[str], storage: str, links: Mapping[str, Link],
                   routes: Sequence[tuple[str, str, Sequence[str], bool]],
                   message_routes: Sequence[Sequence[str]] = ()) -> list[tuple[Link, ...]] | None:
    """Each compute host's route to the host ``storage`` (in the order of ``compute``), when the embedded engine can
    play the transfers on it; None otherwise: a route is missing, declared twice (SimGrid refuses the platform), not
    the same links both ways (reads go storage -> host, writes host -> storage), names a link not in ``links`` or one
    that is not :attr:`Link.plain`, or shares a link with ``message_routes`` (the links of Batsim's messages, which
    the engine times apart).

    Args:
        compute: the compute host names, by resource id.
        links: the platform's links (those whose numbers were read), by name.
        routes: ``(src, dst, link names, symmetrical)`` of the ``<route>`` elements of ``Full`` zones.
        message_routes: the link names of the routes from or to the master host.
    """
    directed: dict[tuple[str, str], tuple[str, ...]] = {}
    for src, dst, names, symmetrical in routes:
        pairs = [(src, dst), (dst, src)] if symmetrical and src != dst else [(src, dst)]
        for pair, order in zip(pairs, (tuple(names), tuple(reversed(names)))):
            if pair in directed:
                return None  # (SimGrid: the route already exists)
            directed[pair] = order
    busy = {name for route in message_routes for name in route}
    found = []
    for host in compute:
        there, back = directed.get((host, storage)), directed.get((storage, host))
        if there is None or back is None or set(there) != set(back):
            return None
        if any(name not in links or not links[name].plain or name in busy for name in there):
            return None
        found.append(tuple(links[name] for name in there))
    return found
