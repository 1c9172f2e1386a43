"""Platforms shipped with batreplay: the two IBM SP2 machines of the "Replay with Feedback" campaign.

Madon, Da Costa, Pierson, "Replay with Feedback" (FGCS 2024), Section 5.1: KTH-SP2 is a 100-node IBM SP2 and
SDSC-SP2 a 128-node IBM SP2 (also the ``MaxNodes`` of the Parallel Workloads Archive logs
``KTH-SP2-1996-2.1-cln`` and ``SDSC-SP2-1998-4.2-cln``). Both are homogeneous, one processor per node.

Node speed: :data:`REFERENCE_NODE_SPEED` = 1 Gflop/s, a convention. The real speed of a SP2 node does not
matter: a job recorded with run time ``t`` is replayed as a ``parallel_homogeneous`` profile of
``t x REFERENCE_NODE_SPEED`` flop per host, which Batsim runs in exactly ``t`` seconds on these hosts. Only
ratios matter: on a variant with speed x2 the same profile runs in ``t / 2``.

To regenerate the files: ``python -m batreplay.platforms.shipped``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "REFERENCE_NODE_SPEED",
    "SHIPPED_NODE_COUNTS",
    "SHIPPED_PLATFORMS",
    "shipped_platform_path",
    "shipped_platform_text",
    "write_shipped_platforms",
]

#: Speed of every node of the shipped platforms, in flop/s (1 Gflop/s; a convention, see the module doc).
REFERENCE_NODE_SPEED: float = 1e9

#: Number of compute nodes of each shipped platform.
SHIPPED_NODE_COUNTS: dict[str, int] = {"kth-sp2": 100, "sdsc-sp2": 128}

_FOLDER = Path(__file__).resolve().parent

#: Name -> path of the shipped platform file (inside the installed ``batreplay.platforms`` package).
SHIPPED_PLATFORMS: dict[str, Path] = {name: _FOLDER / f"{name}.xml" for name in SHIPPED_NODE_COUNTS}


def shipped_platform_path(name: str) -> Path:
    """Path of a shipped platform file, e.g. ``shipped_platform_path("kth-sp2")``.

    Raises:
        KeyError: unknown name (the message lists the known ones).
        FileNotFoundError: the file is missing from the installation.
    """
    try:
        path = SHIPPED_PLATFORMS[name]
    except KeyError:
        raise KeyError(f"unknown platform {name!r}; shipped platforms: {', '.join(SHIPPED_PLATFORMS)}") from None
    if not path.is_file():
        raise FileNotFoundError(f"shipped platform {name!r} missing: {path}")
    return path


def shipped_platform_text(name: str) -> str:
    """XML text the shipped platform ``name`` is generated from (what its file must contain).

    Raises:
        KeyError: unknown name.
    """
    if name not in SHIPPED_NODE_COUNTS:
        raise KeyError(f"unknown platform {name!r}; shipped platforms: {', '.join(SHIPPED_NODE_COUNTS)}")
    from batreplay.platforms.generate import cluster_platform  # numpy: only to generate, not to name or find

    return cluster_platform(SHIPPED_NODE_COUNTS[name], REFERENCE_NODE_SPEED)


def write_shipped_platforms(folder: Path | None = None) -> list[Path]:
    """(Re)write every shipped platform file into ``folder`` (default: the package folder). Returns the paths."""
    from batreplay.platforms.generate import write_platform_text

    folder = _FOLDER if folder is None else Path(folder)
    return [write_platform_text(folder / f"{name}.xml", shipped_platform_text(name)) for name in SHIPPED_NODE_COUNTS]


if __name__ == "__main__":
    for written in write_shipped_platforms():
        print(written)
