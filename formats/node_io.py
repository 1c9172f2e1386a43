"""``node_io_rates.csv``: the bytes per second each node type's hosts read from and write to storage, over time.

The embedded engine writes it into the run directory when jobs read or write on storage hosts
(``parallel_homogeneous_pfs`` steps; :mod:`batreplay.engine.io_trace` says what counts). A real Batsim 4.2.1 writes
no such file: its outputs hold when jobs ran, not how fast their bytes moved.

Columns: ``time`` (s, the simulated clock), ``node_type`` (a host property ``node_type``, or ``(untyped)``),
``read_rate`` and ``write_rate`` (bytes/s, >= 0). Each row holds from its time until the next row of the same node
type; a type's rates are 0 before its first row. Rows are in time order. It imports numpy; pandas only to read
the file (a run writes it without pandas).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from batreplay.atomic import open_text_atomically
from batreplay.formats.table_csv import write_csv_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NODE_IO_COLUMNS", "NODE_IO_FILE", "NodeIoError", "read_node_io", "write_node_io"]

#: The file's name in a run directory.
NODE_IO_FILE = "node_io_rates.csv"
#: Its columns, in order.
NODE_IO_COLUMNS = ("time", "node_type", "read_rate", "write_rate")


class NodeIoError(ValueError):
    """An unreadable or inconsistent ``node_io_rates.csv``; the message names the file, line and column."""


#: Rows written at a time (the text of a whole log's rows at once would take tens of MB).
_ROWS_PER_PART = 32768


def write_node_io(columns: Mapping[str, Sequence], path: str | Path) -> None:
    """Write ``columns`` (:data:`NODE_IO_COLUMNS`, e.g. :meth:`batreplay.engine.io_trace.IoTrace.columns`) to
    ``path`` atomically, as ``pandas.DataFrame(columns).to_csv(index=False)`` writes them (floats in full
    precision), a part of the rows at a time."""
    times = np.asarray(columns["time"], dtype="float64")
    names = columns["node_type"]
    reads = np.asarray(columns["read_rate"], dtype="float64")
    writes = np.asarray(columns["write_rate"], dtype="float64")
    with open_text_atomically(Path(path)) as stream:
        for start in range(0, max(len(times), 1), _ROWS_PER_PART):
            part = slice(start, start + _ROWS_PER_PART)
            write_csv_table(stream, {"time": times[part], "node_type": [str(name) for name in names[part]],
                                     "read_rate": reads[part], "write_rate": writes[part]}, header=start == 0)


def read_node_io(path: str | Path) -> pd.DataFrame:
    """Read and check ``node_io_rates.csv``.

    Returns:
        The rows, columns :data:`NODE_IO_COLUMNS` (``time``, rates float64; ``node_type`` str).

    Raises:
        NodeIoError: the file is missing or not CSV, a column is missing, a value is not a number (or not finite,
            or a rate below 0), or times go back; the first bad row is named by its line in the file.
    """
    import pandas as pd

    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skip_blank_lines=False)  # (rows = file lines)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise NodeIoError(f"{path}: not a readable CSV file ({' '.join(str(err).split())})") from None
    missing = [name for name in NODE_IO_COLUMNS if name not in raw.columns]
    if missing:
        raise NodeIoError(f"{path}: missing column(s) {', '.join(missing)}")
    table = pd.DataFrame({"node_type": raw["node_type"].astype(str)})
    for name in ("time", "read_rate", "write_rate"):
        values = pd.to_numeric(raw[name], errors="coerce").to_numpy(dtype="float64")
        bad = ~np.isfinite(values) | ((values < 0) if name != "time" else np.zeros(len(values), dtype=bool))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise NodeIoError(f"{path}: line {row + 2}, column {name}: {raw[name].iloc[row]!r} is not a finite "
                              f"number{' >= 0' if name != 'time' else ''}")
        table[name] = values
    back = np.flatnonzero(np.diff(table["time"].to_numpy()) < 0)
    if len(back):
        raise NodeIoError(f"{path}: line {int(back[0]) + 3}, column time: time goes back")
    return table[list(NODE_IO_COLUMNS)]
