"""Computing speeds written the SimGrid way: ``"2.5Gf"``, ``"1000000000f"``, ``"1Gf, 500Mf"`` (one speed per pstate).

SimGrid 3.32 (the version under Batsim 4.2.1) reads a speed as a decimal number (C ``strtod``) directly
followed by a unit, and multiplies the two. The units are ``f`` / ``flops`` (1 flop/s) and their decimal
multiples: the short prefixes k, M, G, T, P, E, Z, Y and the long ones kilo, mega, giga, tera, peta, exa, zeta,
yotta, each 1000 times the previous one. A number without unit is read as flop/s (SimGrid warns that this is
deprecated). A host with several power states lists their speeds separated by commas.

Python's ``float()`` rounds a decimal string correctly, as glibc's ``strtod`` does, and the unit factors are
built here by the same repeated multiplications by 1000.0, so :func:`parse_speed` returns the very float that
SimGrid computes. :func:`format_speed` writes a speed so that this reading gives it back exactly.
"""

from __future__ import annotations

import math
import re

__all__ = ["NUMBER_AND_UNIT", "SPEED_UNIT_FACTORS", "format_speed", "parse_pstate_speeds", "parse_speed"]


def _unit_factors() -> dict[str, float]:
    """Every speed unit SimGrid 3.32 knows, mapped to its factor in flop/s."""
    factors: dict[str, float] = {}
    for unit, prefixes in (
        ("f", ("k", "M", "G", "T", "P", "E", "Z", "Y")),
        ("flops", ("kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta")),
    ):
        value = 1.0
        factors[unit] = value
        for prefix in prefixes:
            value *= 1000.0
            factors[prefix + unit] = value
    return factors


#: Unit name -> factor (flop/s per unit), e.g. ``SPEED_UNIT_FACTORS["Gf"] == 1e9``.
SPEED_UNIT_FACTORS: dict[str, float] = _unit_factors()

#: A decimal number as strtod reads it (no hexadecimal, infinity or NaN forms), then the unit, possibly empty (SimGrid
#: writes speeds, bandwidths and times so).
NUMBER_AND_UNIT = re.compile(r"(?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?P<unit>.*)", re.DOTALL)

# Units tried by format_speed, largest first; the plain "f" is last and always exact.
_FORMAT_UNITS = ("Ef", "Pf", "Tf", "Gf", "Mf", "kf", "f")


def parse_speed(text: str) -> float:
    """Read one SimGrid speed string, in flop/s.

    Args:
        text: a number followed by a unit from :data:`SPEED_UNIT_FACTORS` (``"2.5Gf"``, ``"1e9f"``,
            ``"3gigaflops"``), or a bare number (flop/s). Surrounding whitespace is ignored.

    Returns:
        The speed in flop/s, computed as number x unit factor, exactly as SimGrid does.

    Raises:
        ValueError: empty text, no leading number, an unknown unit (units are case-sensitive: ``"1gf"`` is
            refused), a negative value, or a value too large for a float.
    """
    stripped = text.strip()
    match = NUMBER_AND_UNIT.fullmatch(stripped)
    if match is None:
        raise ValueError(f"speed {text!r}: expected a number followed by a unit such as 'f', 'Mf' or 'Gf'")
    unit = match["unit"] or "f"
    factor = SPEED_UNIT_FACTORS.get(unit)
    if factor is None:
        known = ", ".join(SPEED_UNIT_FACTORS)
        raise ValueError(f"speed {text!r}: unknown unit {unit!r} (known units: {known})")
    number = float(match["number"])
    if math.isinf(number):
        raise ValueError(f"speed {text!r}: number out of range")
    value = number * factor
    if math.isinf(value):
        raise ValueError(f"speed {text!r}: value out of range")
    if value < 0:
        raise ValueError(f"speed {text!r}: a speed cannot be negative")
    return value


def parse_pstate_speeds(text: str) -> list[float]:
    """Read a comma-separated list of speeds, one per power state (``"1Gf, 500Mf, 100Mf"``), in flop/s.

    Returns:
        The speeds in pstate order; a single speed gives a list of one.

    Raises:
        ValueError: an empty item (``"1Gf,,2Gf"``) or any item refused by :func:`parse_speed`.
    """
    speeds = []
    for index, item in enumerate(text.split(",")):
        if not item.strip():
            raise ValueError(f"speed list {text!r}: item {index} is empty")
        speeds.append(parse_speed(item))
    return speeds


def _shortest_decimal(value: float) -> str:
    """Shortest decimal text that reads back as ``value``, without a useless ``.0``."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def format_speed(speed: float) -> str:
    """Write a speed (flop/s) as a SimGrid speed string that :func:`parse_speed` and SimGrid read back exactly.

    The largest unit among Ef, Pf, Tf, Gf, Mf, kf that leaves a mantissa >= 1 written as a plain decimal which
    multiplies back to the same float is used (``1e9 -> "1Gf"``, ``2.5e9 -> "2.5Gf"``, ``5e8 -> "500Mf"``,
    ``1e30 -> "1000000000000Ef"``); otherwise the speed is written in flop/s with Python's shortest exact
    representation (``0.1 -> "0.1f"``).

    Raises:
        ValueError: the speed is not a finite number > 0.
    """
    speed = float(speed)
    if not math.isfinite(speed) or speed <= 0:
        raise ValueError(f"speed {speed!r}: must be a finite number of flop/s > 0")
    for unit in _FORMAT_UNITS:
        factor = SPEED_UNIT_FACTORS[unit]
        if unit != "f" and speed < factor:
            continue  # keep mantissas >= 1: "500Mf", not "0.5Gf"
        mantissa = _shortest_decimal(speed / factor)
        if unit != "f" and "e" in mantissa:
            continue
        if float(mantissa) * factor == speed:
            return mantissa + unit
    raise AssertionError(f"no exact text for speed {speed!r}")  # unreachable: factor 1 is always exact
