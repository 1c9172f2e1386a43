"""Node I/O utilisation over time: how much of each node type's I/O rate its jobs used, bin by bin.

Caspart et al. 2019 (GridKa, sections 4-5) give each node type an I/O rate, the bytes/s between one of its nodes and
the site's storage (``io_rate`` of ``[[node_types]]``, the bandwidth of each node's link to the storage host in the
generated platform). The embedded engine records the read and write rates of each node type's hosts as they change
(``node_io_rates.csv``, :mod:`batreplay.formats.node_io`); this module averages them over regular bins:

- ``read_rate``, ``write_rate``: mean bytes/s over the bin (exact: the integral of the recorded step function over
  the bin, over its width);
- ``io_utilisation``: ``(read_rate + write_rate) / (nodes x io_rate)``, the share of the type's I/O capacity in
  use (a node's link to the storage carries its reads and writes alike: SimGrid's links are shared both ways by
  default). NaN for a type whose hosts do not all state an ``io_rate``.

A run of a real Batsim has no ``node_io_rates.csv`` (Batsim 4.2.1's outputs hold when jobs ran, not how fast their
bytes moved): :func:`run_node_io` says so in a note. It imports numpy, pandas, batreplay.analysis.metrics,
batreplay.formats and batreplay.platforms.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from batreplay.analysis.metrics import time_weighted_means
from batreplay.formats.node_io import NODE_IO_FILE, read_node_io
from batreplay.platforms.generate import IO_RATE_PROPERTY
from batreplay.platforms.model import UNTYPED, Platform

__all__ = ["OVER_TIME_COLUMNS", "node_io_over_time", "run_node_io", "type_io_capacity"]

#: Columns of :func:`node_io_over_time`'s table.
OVER_TIME_COLUMNS = ("bin_start", "bin_end", "node_type", "read_rate", "write_rate", "io_utilisation")


def type_io_capacity(platform: Platform) -> dict[str, float]:
    """The I/O capacity of each node type of ``platform``, bytes/s: the sum of its hosts' ``io_rate`` property
    (NaN when one of them has none); types keyed as in ``node_io_rates.csv`` (``(untyped)`` for hosts without a
    ``node_type``), in order of first host id.

    Raises:
        ValueError: an ``io_rate`` that is not a finite number > 0 (naming the platform file, host and
            property)."""
    capacity: dict[str, float] = {}
    for host in platform.hosts:
        text = host.prop(IO_RATE_PROPERTY)
        try:
            rate = float(text) if text is not None else float("nan")
        except ValueError:
            rate = float("-inf")
        if text is not None and not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"{platform.source or 'platform'}: host {host.name!r}, property {IO_RATE_PROPERTY}: "
                             f"{text!r} is not a finite number of bytes/s > 0")
        name = host.node_type or UNTYPED
        capacity[name] = capacity.get(name, 0.0) + rate
    return capacity


def node_io_over_time(rates: pd.DataFrame, capacity: dict[str, float], low: float, high: float,
                      bin_seconds: float, *, source: str = NODE_IO_FILE) -> pd.DataFrame:
    """Mean read and write rates and I/O utilisation of each node type over bins of ``bin_seconds`` from ``low``
    to ``high`` (s; the last bin may run past ``high``).

    Args:
        rates: ``node_io_rates.csv`` as :func:`batreplay.formats.node_io.read_node_io` reads it.
        capacity: bytes/s of each node type (:func:`type_io_capacity`); every type of the platform gets rows,
            those with no I/O get zeros.
        source: the file ``rates`` was read from (rows in file order), for error messages.

    Returns:
        Columns :data:`OVER_TIME_COLUMNS` (``bin_start`` and ``bin_end`` s, rates bytes/s, ``io_utilisation``
        0-1), one row per bin and type, types in ``capacity``'s order.

    Raises:
        ValueError: ``bin_seconds`` not > 0; a node type in ``rates`` that ``capacity`` lacks (the run's
            platform does not match its recording), naming ``source``, the line and the type.
    """
    if not bin_seconds > 0:
        raise ValueError(f"bin_seconds must be > 0, got {bin_seconds}")
    unknown = ~rates["node_type"].isin(list(capacity)).to_numpy()
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        raise ValueError(f"{source}: line {row + 2}, column node_type: {rates['node_type'].iloc[row]!r} is not a "
                         "node type of the run's platform")
    nb_bins = max(int(np.ceil((high - low) / bin_seconds)), 1)
    edges = low + bin_seconds * np.arange(nb_bins + 1)
    frames = []
    for name, total in capacity.items():
        rows = rates[rates["node_type"] == name]
        times = rows["time"].to_numpy(dtype="float64")
        means = {column: time_weighted_means(times, rows[column].to_numpy(dtype="float64"), edges)
                 for column in ("read_rate", "write_rate")}
        used = (means["read_rate"] + means["write_rate"]) / total if total > 0 else np.full(nb_bins, np.nan)
        frames.append(pd.DataFrame({"bin_start": edges[:-1], "bin_end": edges[1:], "node_type": name, **means,
                                    "io_utilisation": used}))
    return pd.concat(frames, ignore_index=True)[list(OVER_TIME_COLUMNS)]


def run_node_io(run, bin_width: Callable[[float], float], *, moved_bytes: bool = False
                ) -> tuple[pd.DataFrame | None, list[str]]:
    """:func:`node_io_over_time` of ``run`` (a :class:`batreplay.analysis.run_dir.RunData`) over its span (first
    submission to last finish or last recorded change, s) in bins of ``bin_width(span)`` seconds (the report
    passes :func:`batreplay.analysis.plots.smoothing_bin`; 1 s for a span of 0), and notes.

    None, with a note saying why, when the folder has ``node_io_rates.csv`` but the run's platform is unknown, or
    has none although ``moved_bytes`` (the caller found that the jobs' profiles move bytes): a real Batsim's run
    (its outputs do not hold the rates), or an embedded run whose jobs read and wrote nothing on storage hosts or
    made before the engine wrote the file. None without a note otherwise.

    Raises:
        batreplay.formats.node_io.NodeIoError: an unreadable ``node_io_rates.csv``.
        ValueError: see :func:`node_io_over_time` and :func:`type_io_capacity`."""
    path = run.path / NODE_IO_FILE
    if not path.is_file():
        if not moved_bytes:
            return None, []
        if run.manifest.get("engine") == "batsim":
            return None, [f"node I/O over time: not recorded (a real Batsim's outputs do not hold the rates at "
                          f"which bytes moved; the embedded engine writes {NODE_IO_FILE})"]
        if not run.manifest:
            return None, [f"node I/O over time: no {NODE_IO_FILE} and no run.json (a real Batsim's output folder, "
                          "whose outputs do not hold the rates at which bytes moved, or a folder of simulate() "
                          "made before the embedded engine wrote the file)"]
        return None, [f"node I/O over time: no {NODE_IO_FILE} in the run directory (no job read or wrote on a "
                      "storage host over links the engine plays, or the run was made before batreplay recorded "
                      "node I/O)"]
    if run.platform is None:
        return None, [f"node I/O over time: {path} present but the run's platform is unknown"]
    rates = read_node_io(path)
    jobs = run.jobs
    low = float(jobs["submission_time"].min())
    high = max(float(jobs["finish_time"].max()) if jobs["finish_time"].notna().any() else low,
               float(rates["time"].max()) if len(rates) else low)
    width = bin_width(high - low) if high > low else 1.0
    return node_io_over_time(rates, type_io_capacity(run.platform), low, high, width, source=str(path)), []
