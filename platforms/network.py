"""Links and routes of a SimGrid platform as SimGrid 3.32 reads them: bandwidths (bytes/s) and latencies (s).

Only what the embedded engine needs to play jobs that read and write (``parallel_homogeneous_pfs``) is read: the
``<link>`` elements and the ``<route>`` elements of zones with ``Full`` routing, where each route lists its links
(``<link_ctn>``), symmetrical unless ``symmetrical="NO"``; :func:`storage_routes` then gives each compute host's
route to the storage host. Clusters' implicit links are not modelled here.

Units (SimGrid's ``xbt_parse_get_bandwidth`` and ``xbt_parse_get_time``, 3.32): a decimal number (C ``strtod``)
directly followed by a unit. Bandwidth: ``Bps`` (byte/s, also the unit of a bare number) with the decimal
prefixes k, M, G, T, P, E, Z, Y (each 1000 times the previous) or the binary ones Ki, Mi, Gi, Ti, Pi, Ei, Zi, Yi
(each 1024 times), and ``bps`` (bit/s, an eighth of a byte/s) with the same prefixes. Time: ``s`` (also the unit
of a bare number), ``ms``, ``us``, ``ns``, ``ps``, ``m`` (minute), ``h``, ``d``, ``w``. This module imports nothing
from batreplay.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Link", "parse_bandwidth", "parse_latency", "storage_routes"]

_NUMBER_RE = re.compile(r"(?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?P<unit>.*)", re.DOTALL)


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
    match = _NUMBER_RE.fullmatch(text.strip())
    unit = match.group("unit").strip() if match else None
    if match is None or (unit and unit not in factors):
        raise ValueError(f"{what} {text!r}: expected a number and one of the units {', '.join(factors)}")
    return float(match.group("number")) * factors[unit or default]


def parse_bandwidth(text: str) -> float:
    """Bytes/s of a SimGrid bandwidth (``"125MBps"`` -> 125e6, ``"1Gbps"`` -> 1.25e8). Raises ValueError."""
    return _parse(text, _BANDWIDTH_FACTORS, "Bps", "bandwidth")


def parse_latency(text: str) -> float:
    """Seconds of a SimGrid latency (``"0us"`` -> 0.0, ``"15ms"`` -> 0.015). Raises ValueError."""
    return _parse(text, _TIME_FACTORS, "s", "latency")


@dataclass(frozen=True)
class Link:
    """A network link: ``name``, ``bandwidth`` (bytes/s) and ``latency`` (s)."""

    name: str
    bandwidth: float
    latency: float


def storage_routes(compute: Sequence[str], storage: str, links: Mapping[str, Link],
                   routes: Sequence[tuple[str, str, Sequence[str], bool]]) -> list[tuple[Link, ...]] | None:
    """Each compute host's route to the host ``storage`` (in the order of ``compute``), or None when one is
    missing or names a link not in ``links``.

    Args:
        compute: the compute host names, by resource id.
        links: the platform's links by name.
        routes: ``(src, dst, link names, symmetrical)`` of the ``<route>`` elements of ``Full`` zones.
    """
    found: dict[str, tuple[Link, ...]] = {}
    for src, dst, names, symmetrical in routes:
        for host, other in ((src, dst), (dst, src)) if symmetrical else ((src, dst),):
            if other == storage and host != storage:
                if any(name not in links for name in names):
                    return None
                found.setdefault(host, tuple(links[name] for name in names))
    if any(host not in found for host in compute):
        return None
    return [found[host] for host in compute]
