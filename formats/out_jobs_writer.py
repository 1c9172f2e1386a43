"""Writing Batsim's ``out_jobs.csv`` byte for byte as Batsim 4.2.1 does: the row a simulation produces
(:class:`JobRecord`), written from rows or from columns, streamed into an atomic temporary file, and the checked
table that :func:`batreplay.formats.out_jobs.read_out_jobs` would read from it, built on the way (nothing is read
back). Fields are written as they are, unquoted, except ``metadata``, which Batsim always writes between double
quotes; times with six decimals. This module imports batreplay.atomic and batreplay.formats.out_jobs.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

import numpy as np
import pandas as pd

from batreplay.atomic import open_text_atomically
from batreplay.formats.out_jobs import BATSIM_COLUMNS, TEXT_COLUMNS, validate_out_jobs


@dataclass(slots=True)
class JobRecord:
    """One row of ``out_jobs.csv``, in the order Batsim writes them (rejection or termination time): times in
    seconds (None for a rejected job), ``requested_number_of_resources`` in nodes."""

    job_id: str
    workload_name: str
    profile: str
    submission_time: float
    requested_number_of_resources: int
    requested_time: float
    success: int
    final_state: str
    starting_time: float | None
    execution_time: float | None
    finish_time: float | None
    waiting_time: float | None
    turnaround_time: float | None
    stretch: float | None
    allocated_resources: str
    metadata: str


#: The float columns of a :class:`JobRecord`, written with six decimals (empty when None or NaN).
_FLOAT_FIELDS = ("submission_time", "requested_time", "starting_time", "execution_time", "finish_time",
                 "waiting_time", "turnaround_time", "stretch")
#: The fields of a :class:`JobRecord`: Batsim's columns but ``consumed_energy``, which follows from ``starting_time``.
RECORD_FIELDS: tuple[str, ...] = tuple(name for name in BATSIM_COLUMNS if name != "consumed_energy")
#: ``consumed_energy`` of a job that ran: Batsim's -1 without an energy model.
_NO_ENERGY = "-1.000000"
#: Rows formatted at once: each field is formatted column by column over a block of rows (fast), and only one
#: block of text is alive at a time (small).
_BLOCK = 4096


def jobs_frame(records: Sequence[JobRecord], columns: Sequence[str] = BATSIM_COLUMNS) -> pd.DataFrame:
    """The ``out_jobs.csv`` table as a DataFrame: one row per record, ``columns`` (default: all of Batsim's, in
    Batsim's order).

    Times are the records' own (computed as Batsim computes them by the engine), not the printed values read
    back; ``consumed_energy`` is -1 (no energy model), empty for a rejected job. Built column by column: a subset
    of ``columns`` costs only those columns."""
    fields = [name for name in columns if name != "consumed_energy"]
    frame = pd.DataFrame({name: [getattr(r, name) for r in records] for name in fields}, columns=fields)
    if "consumed_energy" in columns:
        started = pd.Series([r.starting_time for r in records], dtype=None if len(records) else object)
        frame["consumed_energy"] = started.where(started.isna(), -1.0)
    return frame[list(columns)]


def write_out_jobs(records: Iterable[JobRecord], path: str | os.PathLike[str]) -> pd.DataFrame:
    """Write ``out_jobs.csv`` atomically (temporary file, then rename), block of rows by block of rows; return its
    table, checked.

    The file is byte for byte what Batsim 4.2.1 writes: fields as they are, unquoted, except ``metadata``,
    which Batsim always writes between double quotes (``""`` when empty) without escaping its content;
    times with six decimals; a rejected job's time fields and ``consumed_energy`` empty, else
    ``consumed_energy`` -1.

    Args:
        records: the rows, in file order (read once: an iterator will do).
        path: the file to write.

    Returns:
        The table :func:`read_out_jobs` would return for the file written (same columns, dtypes and values: the
        times as printed, six decimals), built in memory without reading the file back. Text holding a double
        quote is the one exception: Batsim does not escape it, so the file reads back differently.

    Raises:
        csv.Error: a field holds a comma or a line break (a job id, say), which Batsim would write as is, breaking
            the CSV.
        OutJobsError: the rows do not make a valid table (see :func:`validate_out_jobs`); the file is written.
    """
    records = iter(records)
    blocks = ({name: list(map(attrgetter(name), block)) for name in RECORD_FIELDS}
              for block in iter(lambda: list(itertools.islice(records, _BLOCK)), []))
    return _write_blocks(blocks, Path(path))


def write_out_jobs_columns(columns: Mapping[str, Sequence], path: str | os.PathLike[str]) -> pd.DataFrame:
    """:func:`write_out_jobs` from columns instead of :class:`JobRecord` rows (no object per job is needed).

    Args:
        columns: :data:`RECORD_FIELDS` -> one value per job, in file order (lists or numpy arrays); the times of
            a rejected job None or NaN.
        path: the file to write.

    Returns:
        As :func:`write_out_jobs`.

    Raises:
        ValueError: a field missing from ``columns`` or columns of different lengths.
        csv.Error, OutJobsError: as :func:`write_out_jobs`.
    """
    missing = [name for name in RECORD_FIELDS if name not in columns]
    if missing:
        raise ValueError(f"out_jobs columns: missing {', '.join(missing)}")
    lengths = {name: len(columns[name]) for name in RECORD_FIELDS}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"out_jobs columns of different lengths: {lengths}")
    blocks = ({name: _as_list(columns[name][start:start + _BLOCK]) for name in RECORD_FIELDS}
              for start in range(0, lengths["job_id"], _BLOCK))
    return _write_blocks(blocks, Path(path))


def _as_list(values: Sequence) -> list:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)


def _write_blocks(blocks: Iterable[dict[str, list]], path: Path) -> pd.DataFrame:
    """Write ``out_jobs.csv`` from blocks of columns (:data:`RECORD_FIELDS` -> values); return its checked table."""
    printed = {name: array("d") for name in _FLOAT_FIELDS}
    text: dict[str, list] = {name: [] for name in TEXT_COLUMNS}
    counts: dict[str, list] = {"requested_number_of_resources": [], "success": []}
    with open_text_atomically(path, buffering=1 << 20) as stream:
        writer = csv.writer(stream, quoting=csv.QUOTE_NONE, quotechar=None, lineterminator="\n")
        writer.writerow(BATSIM_COLUMNS)
        writer.writerows(_rows(blocks, printed, text, counts))
    raw = pd.DataFrame({
        **{name: pd.Series(values, dtype=str) for name, values in text.items()},
        **{name: np.array(values, dtype=np.int64) for name, values in counts.items()},
        **{name: np.frombuffer(values, dtype=np.float64) for name, values in printed.items()},
    })
    del printed, text, counts
    raw["consumed_energy"] = np.where(np.isnan(raw["starting_time"].to_numpy()), np.nan, -1.0)
    return validate_out_jobs(raw[list(BATSIM_COLUMNS)], source=str(path))


def _six(values: list) -> list[str]:
    """Times as Batsim prints them (six decimals); empty for None or NaN."""
    if None not in values:
        formatted = list(map("%.6f".__mod__, values))
        if "nan" not in formatted and "-nan" not in formatted:
            return formatted
    return ["" if v is None or v != v else "%.6f" % v for v in values]


def _rows(blocks: Iterable[dict[str, list]], printed: dict[str, array], text: dict[str, list],
          counts: dict[str, list]) -> Iterator[tuple]:
    """The CSV rows of ``blocks`` of columns; on the way, appends each float field as printed and read back (NaN
    when empty) to ``printed``, the text and integer fields to ``text`` and ``counts``, by column name."""
    for fields in blocks:
        for name in _FLOAT_FIELDS:
            fields[name] = formatted = _six(fields[name])
            printed[name].extend(map(float, formatted) if "" not in formatted else
                                 [float(value) if value else math.nan for value in formatted])
        if any(value != "" for value in fields["metadata"]):
            fields["metadata"] = ["" if value is None or value != value else str(value)  # None, NaN: empty
                                  for value in fields["metadata"]]
        for name, values in (*text.items(), *counts.items()):
            values.extend(fields[name])
        fields["consumed_energy"] = [_NO_ENERGY if value else "" for value in fields["starting_time"]]
        fields["metadata"] = [f'"{value}"' for value in fields["metadata"]]  # Batsim always quotes it
        yield from zip(*(fields[name] for name in BATSIM_COLUMNS))
