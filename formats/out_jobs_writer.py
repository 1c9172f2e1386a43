"""Writing Batsim's ``out_jobs.csv`` byte for byte as Batsim 4.2.1 does: the row a simulation produces
(:class:`JobRecord`), written from rows or from columns, streamed into an atomic temporary file
(:func:`write_out_jobs_text`, the one writer), and the checked table that
:func:`batreplay.formats.out_jobs.read_out_jobs` would read from it (:meth:`WrittenJobs.table`), built from what was
written (nothing is read back). Fields are written as they are, unquoted, except ``metadata``, which Batsim always
writes between double quotes; times with six decimals.

Writing needs no table library: the embedded engine writes its outputs without pandas, which is imported (with
:mod:`batreplay.formats.out_jobs`, the validator) only when the table is asked for, by the analysis of a run.
This module imports batreplay.atomic, batreplay.formats.names and numpy.
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
from typing import TYPE_CHECKING

import numpy as np

from batreplay.atomic import open_text_atomically
from batreplay.formats.names import BATSIM_COLUMNS, TEXT_COLUMNS

if TYPE_CHECKING:  # pandas is imported by the functions that build a table
    import pandas as pd


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
    import pandas as pd

    fields = [name for name in columns if name != "consumed_energy"]
    frame = pd.DataFrame({name: [getattr(r, name) for r in records] for name in fields}, columns=fields)
    if "consumed_energy" in columns:
        started = pd.Series([r.starting_time for r in records], dtype=None if len(records) else object)
        frame["consumed_energy"] = started.where(started.isna(), -1.0)
    return frame[list(columns)]


@dataclass
class WrittenJobs:
    """What :func:`write_out_jobs_text` wrote into ``path``, as :func:`read_out_jobs` would read it back: the text
    fields (:data:`~batreplay.formats.names.TEXT_COLUMNS`), the integer ones and each time as printed (six
    decimals, NaN when empty), by column name, one value per job in file order. :meth:`table` makes the checked
    table of them."""

    path: Path
    text: dict[str, list[str]]
    counts: dict[str, list[int]]
    printed: dict[str, array]

    def table(self) -> pd.DataFrame:
        """The table :func:`~batreplay.formats.out_jobs.read_out_jobs` would return for the file written (same
        columns, dtypes and values: the times as printed, six decimals), checked by
        :func:`~batreplay.formats.out_jobs.validate_out_jobs`; built anew at each call (imports pandas). Text
        holding a double quote is the one exception: Batsim does not escape it, so the file reads back
        differently.

        Raises:
            OutJobsError: the rows do not make a valid table (see :func:`validate_out_jobs`); the file is written.
        """
        import pandas as pd

        from batreplay.formats.out_jobs import validate_out_jobs

        raw = pd.DataFrame({
            **{name: pd.Series(values, dtype=str) for name, values in self.text.items()},
            **{name: np.array(values, dtype=np.int64) for name, values in self.counts.items()},
            **{name: np.frombuffer(values, dtype=np.float64) for name, values in self.printed.items()},
        })
        raw["consumed_energy"] = np.where(np.isnan(raw["starting_time"].to_numpy()), np.nan, -1.0)
        return validate_out_jobs(raw[list(BATSIM_COLUMNS)], source=str(self.path))


def write_out_jobs_text(columns: Mapping[str, Sequence], path: str | os.PathLike[str]) -> WrittenJobs:
    """Write ``out_jobs.csv`` atomically (temporary file, then rename) from columns, block of rows by block of
    rows; return what was written (:class:`WrittenJobs`; its :meth:`~WrittenJobs.table` is the checked table). No
    table library is imported: this is what the embedded engine calls.

    The file is byte for byte what Batsim 4.2.1 writes: fields as they are, unquoted, except ``metadata``,
    which Batsim always writes between double quotes (``""`` when empty) without escaping its content;
    times with six decimals; a rejected job's time fields and ``consumed_energy`` empty, else
    ``consumed_energy`` -1.

    Args:
        columns: :data:`RECORD_FIELDS` -> one value per job, in file order (lists or numpy arrays); the times of
            a rejected job None or NaN.
        path: the file to write.

    Raises:
        ValueError: a field missing from ``columns`` or columns of different lengths.
        csv.Error: a field holds a comma or a line break (a job id, say), which Batsim would write as is, breaking
            the CSV; nothing is left at ``path`` then.
    """
    return _write_blocks(_column_blocks(columns), Path(path))


def out_jobs_table(columns: Mapping[str, Sequence], source: str = "jobs table") -> pd.DataFrame:
    """The checked table (:meth:`WrittenJobs.table`) that :func:`write_out_jobs_text` would write for ``columns``
    and :func:`~batreplay.formats.out_jobs.read_out_jobs` read back (times as printed, six decimals), without
    writing any file; ``source`` names it in errors.

    Raises:
        ValueError: as :func:`write_out_jobs_text`; OutJobsError: the rows do not make a valid table.
    """
    written = _empty_written(Path(source))
    for _row in _rows(_column_blocks(columns), written.printed, written.text, written.counts):
        pass
    return written.table()


def _column_blocks(columns: Mapping[str, Sequence]) -> Iterator[dict[str, list]]:
    """``columns`` (:data:`RECORD_FIELDS` -> values) as blocks of :data:`_BLOCK` rows.

    Raises:
        ValueError: a field missing from ``columns`` or columns of different lengths.
    """
    missing = [name for name in RECORD_FIELDS if name not in columns]
    if missing:
        raise ValueError(f"out_jobs columns: missing {', '.join(missing)}")
    lengths = {name: len(columns[name]) for name in RECORD_FIELDS}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"out_jobs columns of different lengths: {lengths}")
    return ({name: _as_list(columns[name][start:start + _BLOCK]) for name in RECORD_FIELDS}
            for start in range(0, lengths["job_id"], _BLOCK))


def write_out_jobs(records: Iterable[JobRecord], path: str | os.PathLike[str]) -> pd.DataFrame:
    """Write ``out_jobs.csv`` from :class:`JobRecord` rows (read once: an iterator will do), as
    :func:`write_out_jobs_text` writes it, and return its checked table (:meth:`WrittenJobs.table`).

    Raises:
        csv.Error: as :func:`write_out_jobs_text`.
        OutJobsError: the rows do not make a valid table (see :func:`validate_out_jobs`); the file is written.
    """
    records = iter(records)
    blocks = ({name: list(map(attrgetter(name), block)) for name in RECORD_FIELDS}
              for block in iter(lambda: list(itertools.islice(records, _BLOCK)), []))
    return _write_blocks(blocks, Path(path)).table()


def write_out_jobs_columns(columns: Mapping[str, Sequence], path: str | os.PathLike[str]) -> pd.DataFrame:
    """:func:`write_out_jobs_text`, then the checked table of what was written (:meth:`WrittenJobs.table`).

    Raises:
        ValueError, csv.Error: as :func:`write_out_jobs_text`.
        OutJobsError: the rows do not make a valid table (see :func:`validate_out_jobs`); the file is written.
    """
    return write_out_jobs_text(columns, path).table()


def _as_list(values: Sequence) -> list:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)


def _write_blocks(blocks: Iterable[dict[str, list]], path: Path) -> WrittenJobs:
    """Write ``out_jobs.csv`` from blocks of columns (:data:`RECORD_FIELDS` -> values); return what was written."""
    written = _empty_written(path)
    with open_text_atomically(path, buffering=1 << 20) as stream:
        writer = csv.writer(stream, quoting=csv.QUOTE_NONE, quotechar=None, lineterminator="\n")
        writer.writerow(BATSIM_COLUMNS)
        writer.writerows(_rows(blocks, written.printed, written.text, written.counts))
    return written


def _empty_written(path: Path) -> WrittenJobs:
    return WrittenJobs(path, {name: [] for name in TEXT_COLUMNS}, {"requested_number_of_resources": [], "success": []},
                       {name: array("d") for name in _FLOAT_FIELDS})


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
