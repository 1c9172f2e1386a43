"""SimGrid's radicals: the numbers of a ``<cluster>``'s hosts, written ``"0-3"``, ``"0-1,4-7"`` or ``"5"``.

Imports nothing from batreplay (the reader and the routes both use it).
"""

from __future__ import annotations

import re

__all__ = ["expand_radical", "radical_ranges", "radical_size"]

_RADICAL_ITEM_RE = re.compile(r"(\d+)(?:-(\d+))?")


def radical_ranges(radical: str) -> list[tuple[int, int]]:
    """The ``(first, last)`` ranges of a SimGrid radical, in the written order (see :func:`expand_radical`)."""
    ranges: list[tuple[int, int]] = []
    for item in radical.split(","):
        match = _RADICAL_ITEM_RE.fullmatch(item.strip())
        if match is None:
            raise ValueError(f"radical {radical!r}: item {item!r} is not 'N' or 'N-M'")
        start = int(match[1])
        end = int(match[2]) if match[2] is not None else start
        if end < start:
            raise ValueError(f"radical {radical!r}: range {item!r} ends before it starts")
        ranges.append((start, end))
    return ranges


def radical_size(radical: str) -> int:
    """How many numbers a SimGrid radical lists, without listing them: ``"0-1,4-7" -> 6``.

    Raises:
        ValueError: as :func:`expand_radical`.
    """
    return sum(end - start + 1 for start, end in radical_ranges(radical))


def expand_radical(radical: str) -> list[int]:
    """Numbers listed by a SimGrid radical, in the written order: ``"0-1,4-7" -> [0, 1, 4, 5, 6, 7]``.

    Raises:
        ValueError: an item that is not ``N`` or ``N-M`` with integers ``0 <= N <= M``.
    """
    numbers: list[int] = []
    for start, end in radical_ranges(radical):
        numbers.extend(range(start, end + 1))
    return numbers
