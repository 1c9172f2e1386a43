"""Links of a SimGrid platform as SimGrid 3.32 reads them: bandwidths (bytes/s) and latencies (s).

:class:`Link` is one link; the routes made of them are :mod:`batreplay.platforms.routing`'s.

Units (SimGrid's ``xbt_parse_get_bandwidth`` and ``xbt_parse_get_time``, 3.32): a decimal number (C ``strtod``)
directly followed by a unit. Bandwidth: ``Bps`` (byte/s, also the unit of a bare number) with the decimal
prefixes k, M, G, T, P, E, Z, Y (each 1000 times the previous) or the binary ones Ki, Mi, Gi, Ti, Pi, Ei, Zi, Yi
(each 1024 times), and ``bps`` (bit/s, an eighth of a byte/s) with the same prefixes. Time: ``s`` (also the unit
of a bare number), ``ms``, ``us``, ``ns``, ``ps``, ``m`` (minute), ``h``, ``d``, ``w``. This module imports only the
number syntax of :mod:`batreplay.platforms.speed_units`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from batreplay.platforms.speed_units import NUMBER_AND_UNIT

__all__ = ["Link", "link_problem", "parse_bandwidth", "parse_latency"]



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
    ``FATPIPE`` or ``SPLITDUPLEX`` policy, no trace file); ``loopback``: a cluster's link from a host to itself, or
    SimGrid's own (:data:`SIMGRID_LOOPBACK`)."""

    name: str
    bandwidth: float
    latency: float
    plain: bool = True
    loopback: bool = False


#: SimGrid 3.32's own loopback link (``network/loopback-bw`` 10 GBps, ``network/loopback-lat`` 0, ``FATPIPE``): the
#: route from a host of a ``Full`` zone to itself when the platform declares none (a real Batsim 4.2.1 moved 1e8
#: bytes from a storage host to itself in 0.01 s, recorded case staging-mapping, 2026-11-28).
SIMGRID_LOOPBACK = Link("__loopback__", 1e10, 0.0, plain=False, loopback=True)


def link_problem(link: Link) -> str | None:
    """Why the embedded engine cannot play transfers over ``link`` as SimGrid 3.32 does, or None: it is not plain
    (``FATPIPE``: shared otherwise; a cluster's loopback is ``FATPIPE``). Latencies are played
    (:mod:`batreplay.engine.transfers`)."""
    if not link.plain:
        kind = "a loopback, FATPIPE" if link.loopback else "FATPIPE or SPLITDUPLEX"
        return f"link {link.name!r} is not shared as the engine plays links ({kind})"
    return None
