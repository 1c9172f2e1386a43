"""Batsim's ``out_jobs.csv``: its columns and final job states, reading and validating it (ours or a real
Batsim's), its anomalies, and attaching per-job side tables (writing it: :mod:`.out_jobs_writer`).

Batsim 4.2.1 writes one row per job, in the order jobs were rejected or terminated, with the columns
``job_id`` (without the workload prefix), ``workload_name``, ``profile``, ``submission_time``,
``requested_number_of_resources``, ``requested_time``, ``success``, ``final_state``, ``starting_time``,
``execution_time``, ``finish_time``, ``waiting_time``, ``turnaround_time``, ``stretch``,
``allocated_resources``, ``consumed_energy``, ``metadata`` (see ``../shared/docs/batsim-protocol-notes.md``,
section "out_jobs.csv"). Batsim's own documentation lists two of them in another order, so columns are
always looked up by name, never by position. Rejected jobs have empty time fields. All times are in
seconds of simulated time, written with six decimals.

A file (:func:`read_out_jobs`) is checked row by row against what Batsim always writes, for every column it holds:
its last line ends with a line break (else the file was cut while being written); a job that ran has every time,
``waiting_time``, ``turnaround_time``, ``stretch``, ``allocated_resources`` (an interval set such as ``0-3 7``)
and ``consumed_energy``, a rejected job none of them; ``success`` is 1 exactly for ``COMPLETED_SUCCESSFULLY``; and
``finish_time = starting_time + execution_time``, ``waiting_time = starting_time - submission_time``,
``turnaround_time = finish_time - submission_time``, ``stretch = turnaround_time / execution_time``, to Batsim's
printing precision (:data:`TIME_TOLERANCE`). :func:`check_allocations_within` checks the allocations against a
platform's size. All checks are column operations (numpy, pandas), a whole log's table costs a fraction of a second.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from procset import ProcSet

from batreplay.formats.names import (  # defined in a light module, for the writers; re-exported here
    BATSIM_COLUMNS,
    BATSIM_VERSION,
    FAILED,
    FINAL_STATES,
    KILLED,
    KILLED_STATES,
    REJECTED,
    SUCCESS,
    TEXT_COLUMNS,
    WALLTIME_REACHED,
)

#: Columns the analysis needs; the others are kept when present but may be absent.
REQUIRED_COLUMNS: tuple[str, ...] = (
    "job_id", "workload_name", "submission_time", "requested_number_of_resources", "requested_time",
    "final_state", "starting_time", "execution_time", "finish_time",
)

#: Name of the added column holding the full Batsim job id ``workload!job_id``.
FULL_ID = "full_job_id"

_TIME_COLUMNS = ("starting_time", "execution_time", "finish_time")
_ALWAYS_NUMERIC = ("submission_time", "requested_number_of_resources", "requested_time")

#: ``requested_time`` that Batsim writes for a job without walltime (read as NaN).
NO_WALLTIME = -1.0
_OPTIONAL_NUMERIC = ("success", "waiting_time", "turnaround_time", "stretch", "consumed_energy")
#: Slack allowed between a time and the same time recomputed from others (Batsim rounds to 1e-6 s).
TIME_TOLERANCE = 2e-6
#: Columns that Batsim 4.2.1 fills on the row of every job that ran and leaves empty on a rejected job's row,
#: besides ``starting_time``, ``execution_time`` and ``finish_time`` (checked in a file when present).
RAN_ONLY_COLUMNS = ("waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy")
#: An interval set of resource ids as Batsim writes it: increasing, space-separated ids or ``first-last`` ranges.
_INTERVAL_SET = r"\d+(?:-\d+)?(?: \d+(?:-\d+)?)*"
#: How far before its submission a job may start in a valid table, seconds. Batsim 4.2.1 itself does start jobs a
#: few microseconds early late in long simulations: SimGrid's clock drifts below the submission time the job was
#: released at. Observed on the whole KTH-SP2 log with largest-area-first (``laf``), real Batsim and the embedded
#: engine alike: 5 jobs, up to 5 us early at t = 2.47e7 s. Such rows are valid; :func:`out_jobs_anomalies` counts
#: those beyond :data:`TIME_TOLERANCE` (``start_before_submission``). An earlier start is a corrupt table.
CLOCK_DRIFT_TOLERANCE = 1e-3


class OutJobsError(ValueError):
    """Raised for an unreadable or inconsistent jobs table; the message names the file, line and column."""


def read_out_jobs(path: str | Path) -> pd.DataFrame:
    """Read and validate a Batsim ``out_jobs.csv``, every row (see the module docstring for what is checked).

    Args:
        path: the CSV file (header line, then one line per job).

    Returns:
        One row per job (file order). Times (``submission_time``, ``starting_time``, ``finish_time``,
        ``execution_time``, ``requested_time``, ...) are float64 seconds, NaN for rejected jobs
        (``requested_time`` is also NaN for a job without walltime, which Batsim writes as -1);
        ``requested_number_of_resources`` is int64 (nodes); text columns are strings; a column
        ``full_job_id`` = ``workload_name + "!" + job_id`` is added in front.

    Raises:
        OutJobsError: the file is missing, has no header, lacks required columns (all of them listed by
            name), has an unparsable or out-of-range value (file line and column named), an unknown
            ``final_state``, a duplicated job id, empty time fields on a job that ran or time fields on a
            rejected job, or times out of order (start before submission, finish before start); a last line
            without its line break (the file was cut), a field Batsim always writes left empty (or filled on a
            rejected job's row), a ``success`` that disagrees with ``final_state``, a time that disagrees with
            the others (by more than :data:`TIME_TOLERANCE` s), an allocation that is no interval set. The
            first bad row is named by its line in the file, with the column.
    """
    path = Path(path)
    if not path.is_file():
        raise OutJobsError(f"{path}: jobs file not found")
    try:
        # Numbers are parsed by pandas' C reader; a column holding text it cannot parse stays textual and
        # is examined cell by cell in _parse_numbers, which names the offending line.
        raw = pd.read_csv(path, dtype={name: str for name in TEXT_COLUMNS}, keep_default_na=False,
                          na_values=[""])
    except pd.errors.EmptyDataError as exc:
        raise OutJobsError(f"{path}: empty file, expected a header line with {', '.join(REQUIRED_COLUMNS)}") from exc
    except pd.errors.ParserError as exc:
        raise OutJobsError(f"{path}: not a readable CSV file: {exc}") from exc
    if len(raw):
        _check_last_line(path, list(map(str, raw.columns)), last_line=len(raw) + 1)
    return _validate(raw, source=str(path), first_line=2, strict=True)


def validate_out_jobs(frame: pd.DataFrame, *, source: str = "jobs table", strict: bool = False) -> pd.DataFrame:
    """Validate an in-memory jobs table with Batsim's column names (for instance built by hand or by the engine).

    Same returned shape as :func:`read_out_jobs`; error messages name ``source`` and the row position (0-based).
    Empty strings and NaN both count as empty fields. By default it applies the checks of :func:`read_out_jobs`
    except those of the fields Batsim always writes and of the relations between them (a table built by hand may
    leave them empty or approximate); ``strict=True`` applies those too.

    Raises:
        OutJobsError: as :func:`read_out_jobs` (but the line break at the end of the file).
    """
    return _validate(frame.reset_index(drop=True), source=source, first_line=None, strict=strict)


def _check_last_line(path: Path, header: list[str], *, last_line: int) -> None:
    """Refuse a file whose last line has no line break at its end: Batsim ends every line with one, so the file
    was cut while being written (the line lost its end, perhaps in a way that still parses). Names the line and
    the column it stops in."""
    size = path.stat().st_size
    with path.open("rb") as stream:
        stream.seek(max(0, size - 65536), os.SEEK_SET)
        tail = stream.read()
    if tail.endswith(b"\n"):
        return
    text = tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace")
    fields = next(csv.reader([text]), [""])
    column = header[min(len(fields), len(header)) - 1]
    raise OutJobsError(
        f"{path}, line {last_line}, column {column!r}: the line stops there, without the line break Batsim ends "
        f"every line with ({len(fields)} of {len(header)} fields): the file was cut while being written; rerun the "
        "simulation, or delete that line (or end it with a line break if it is complete)")


def _position(first_line: int | None, row: int) -> str:
    return f"line {row + first_line}" if first_line is not None else f"row {row}"


def _where(source: str, first_line: int | None, row: int) -> str:
    return f"{source}, {_position(first_line, row)}"


def _is_empty(column: pd.Series) -> np.ndarray:
    if pd.api.types.is_numeric_dtype(column.dtype):
        return column.isna().to_numpy(dtype=bool)
    return (column.isna() | (column.astype(str).str.strip() == "")).to_numpy(dtype=bool)


def _parse_numbers(raw: pd.DataFrame, name: str, source: str, first_line: int | None) -> tuple[pd.Series, np.ndarray]:
    """Column ``name`` as float64 (NaN where empty) and the mask of empty fields; error on text that is no finite number."""
    column = raw[name]
    empty = _is_empty(column)
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        values = column.astype("float64")
    else:
        values = pd.to_numeric(column.where(~empty, None).astype("string").str.strip(), errors="coerce").astype("float64")
    bad = ~empty & ~np.isfinite(values.to_numpy())
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise OutJobsError(
            f"{_where(source, first_line, row)}, column {name!r}: '{column.iloc[row]}' is not a finite number"
            f" ({int(bad.sum())} such value(s) in this column)")
    return values, empty


def _validate(raw: pd.DataFrame, *, source: str, first_line: int | None, strict: bool) -> pd.DataFrame:
    raw = raw.drop(columns=[FULL_ID], errors="ignore")  # recomputed below
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise OutJobsError(
            f"{source}: missing required column(s) {', '.join(missing)} (found: {', '.join(map(str, raw.columns))})")
    out = pd.DataFrame(index=raw.index)
    for name in raw.columns:
        column = raw[name]
        out[name] = column.where(column.notna(), "").astype(str) if name in TEXT_COLUMNS else column

    for name in ("job_id", "workload_name", "final_state"):
        empty = _is_empty(raw[name])
        if empty.any():
            row = int(np.flatnonzero(empty)[0])
            raise OutJobsError(f"{_where(source, first_line, row)}, column {name!r}: empty value")
    unknown = ~out["final_state"].isin(FINAL_STATES).to_numpy()
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        raise OutJobsError(
            f"{_where(source, first_line, row)}, column 'final_state': unknown state {out['final_state'].iloc[row]!r}"
            f" (expected one of {', '.join(sorted(FINAL_STATES))})")

    for name in _ALWAYS_NUMERIC:
        values, empty = _parse_numbers(raw, name, source, first_line)
        if empty.any():
            row = int(np.flatnonzero(empty)[0])
            raise OutJobsError(f"{_where(source, first_line, row)}, column {name!r}: empty value")
        out[name] = values
    resources = out["requested_number_of_resources"].to_numpy()
    bad = (resources < 1) | (resources != np.round(resources))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise OutJobsError(
            f"{_where(source, first_line, row)}, column 'requested_number_of_resources': "
            f"'{raw['requested_number_of_resources'].iloc[row]}' is not a positive whole number of resources")
    out["requested_number_of_resources"] = out["requested_number_of_resources"].astype("int64")
    # Batsim writes requested_time = -1 for a job without walltime (walltime -1 or absent in its workload);
    # such a job is never killed. The frame says "no walltime" with NaN; any other negative value is an error.
    out["requested_time"] = out["requested_time"].mask(out["requested_time"] == NO_WALLTIME)
    for name in ("submission_time", "requested_time"):
        negative = out[name].to_numpy() < 0
        if negative.any():
            row = int(np.flatnonzero(negative)[0])
            raise OutJobsError(f"{_where(source, first_line, row)}, column {name!r}: negative value {out[name].iloc[row]}")

    rejected = (out["final_state"] == REJECTED).to_numpy()
    for name in _TIME_COLUMNS:
        values, empty = _parse_numbers(raw, name, source, first_line)
        ran_without = ~rejected & empty
        if ran_without.any():
            row = int(np.flatnonzero(ran_without)[0])
            raise OutJobsError(
                f"{_where(source, first_line, row)}, column {name!r}: empty value for a job in state "
                f"{out['final_state'].iloc[row]} ({int(ran_without.sum())} such job(s))")
        rejected_with = rejected & ~empty
        if rejected_with.any():
            row = int(np.flatnonzero(rejected_with)[0])
            raise OutJobsError(
                f"{_where(source, first_line, row)}, column {name!r}: rejected job has a value "
                f"('{raw[name].iloc[row]}'); Batsim leaves time fields of rejected jobs empty")
        out[name] = values
    for name in _OPTIONAL_NUMERIC:
        if name in raw.columns:
            out[name], _ = _parse_numbers(raw, name, source, first_line)
    if "success" in out.columns and out["success"].notna().all():
        out["success"] = out["success"].astype("int64")

    sub, start, finish = (out[c].to_numpy() for c in ("submission_time", "starting_time", "finish_time"))
    with np.errstate(invalid="ignore"):
        early = start < sub - CLOCK_DRIFT_TOLERANCE
        backwards = finish < start - TIME_TOLERANCE
    for mask, what in ((early, "starting_time is before submission_time"),
                       (backwards, "finish_time is before starting_time")):
        if mask.any():
            row = int(np.flatnonzero(mask)[0])
            raise OutJobsError(f"{_where(source, first_line, row)}: {what} ({int(mask.sum())} such job(s))")
    if strict:
        _check_batsim_fields(raw, out, rejected, source, first_line)
        _check_relations(out, rejected, source, first_line)

    full = out["workload_name"] + "!" + out["job_id"]
    duplicated = full.duplicated(keep=False).to_numpy()
    if duplicated.any():
        rows = np.flatnonzero(duplicated)
        first = full.iloc[rows[0]]
        same = [r for r in rows if full.iloc[r] == first]
        where = ", ".join(_position(first_line, int(r)) for r in same)
        raise OutJobsError(f"{source}: job {first} appears more than once ({where})")
    out.insert(0, FULL_ID, full)
    return out


def _first_bad(mask: np.ndarray, source: str, first_line: int | None, column: str) -> tuple[int, str]:
    """The first row of ``mask`` and where it is (``file, line N, column 'name'``)."""
    row = int(np.flatnonzero(mask)[0])
    return row, f"{_where(source, first_line, row)}, column {column!r}"


_REDO = "the file is corrupt, cut or not Batsim's: rerun the simulation"


def _check_batsim_fields(raw: pd.DataFrame, out: pd.DataFrame, rejected: np.ndarray, source: str,
                         first_line: int | None) -> None:
    """Fields Batsim always writes: :data:`RAN_ONLY_COLUMNS` filled exactly for the jobs that ran, ``success``
    (0 or 1) matching ``final_state``, allocations that are interval sets. Absent columns are not checked."""
    empties = {name: _is_empty(raw[name]) for name in RAN_ONLY_COLUMNS if name in raw.columns}
    for name, empty in empties.items():
        for mask, what in ((~rejected & empty, "empty for a job that ran (Batsim writes it for every such job)"),
                           (rejected & ~empty, "a value for a rejected job (Batsim leaves it empty)")):
            if mask.any():
                row, where = _first_bad(mask, source, first_line, name)
                raise OutJobsError(f"{where}: {what}, job in state {out['final_state'].iloc[row]} "
                                   f"({int(mask.sum())} such row(s)); {_REDO}")
    if "success" in raw.columns:
        expected = (out["final_state"] == SUCCESS).to_numpy(dtype=np.float64)
        bad = ~(out["success"].to_numpy(dtype=np.float64) == expected)  # an empty success (NaN) too
        if bad.any():
            row, where = _first_bad(bad, source, first_line, "success")
            raise OutJobsError(f"{where}: '{raw['success'].iloc[row]}' for a job in state "
                               f"{out['final_state'].iloc[row]} (Batsim writes 1 for {SUCCESS}, else 0; "
                               f"{int(bad.sum())} such row(s)); {_REDO}")
    if "allocated_resources" in raw.columns:
        sets = _interval_sets(out["allocated_resources"])
        bad = ~empties["allocated_resources"] & ~sets["valid"].to_numpy(dtype=bool)
        if bad.any():
            row, where = _first_bad(bad, source, first_line, "allocated_resources")
            raise OutJobsError(f"{where}: {out['allocated_resources'].iloc[row]!r} is not an interval set of "
                               f"resource ids in increasing order such as '0-3 7' ({int(bad.sum())} such row(s)); "
                               f"{_REDO}")


def _check_relations(out: pd.DataFrame, rejected: np.ndarray, source: str, first_line: int | None) -> None:
    """The times of each job that ran agree to Batsim's printing precision: finish = start + execution, waiting =
    start - submission, turnaround = finish - submission, stretch = turnaround / execution."""
    ran = ~rejected
    sub, start, execution, finish = (out[c].to_numpy(dtype=np.float64) for c in
                                     ("submission_time", "starting_time", "execution_time", "finish_time"))
    relations = [("finish_time", start + execution, "starting_time + execution_time"),
                 ("waiting_time", start - sub, "starting_time - submission_time"),
                 ("turnaround_time", finish - sub, "finish_time - submission_time")]
    for name, expected, formula in relations:
        if name not in out.columns:
            continue
        value = out[name].to_numpy(dtype=np.float64)
        # six printed decimals on each side, and float64 rounding of large times
        slack = TIME_TOLERANCE + 4 * np.spacing(np.abs(np.nan_to_num(expected)) + np.abs(np.nan_to_num(value)))
        with np.errstate(invalid="ignore"):
            bad = ran & ~(np.abs(value - expected) <= slack)
        if bad.any():
            row, where = _first_bad(bad, source, first_line, name)
            raise OutJobsError(f"{where}: {value[row]:.6f} but {formula} = {expected[row]:.6f} (Batsim writes them "
                               f"equal to 1e-6 s; {int(bad.sum())} such row(s)); {_REDO}")
    if "stretch" in out.columns:
        stretch, turnaround = out["stretch"].to_numpy(dtype=np.float64), finish - sub
        # |stretch x execution - turnaround| <= rounding of stretch x execution + of execution x stretch + of turnaround
        slack = TIME_TOLERANCE * (1 + np.abs(stretch) + np.abs(execution)) + 4 * np.spacing(np.abs(turnaround))
        with np.errstate(invalid="ignore", divide="ignore"):
            bad = ran & ~(np.abs(stretch * execution - turnaround) <= slack)
            expected = turnaround / execution
        if bad.any():
            row, where = _first_bad(bad, source, first_line, "stretch")
            raise OutJobsError(f"{where}: {stretch[row]:.6f} but turnaround_time / execution_time = "
                               f"{expected[row]:.6f} (Batsim writes them equal to its printing precision; "
                               f"{int(bad.sum())} such row(s)); {_REDO}")


def _interval_sets(values: pd.Series) -> pd.DataFrame:
    """Parse the interval sets of ``values`` (text, ``"0-3 7"``), each distinct value once, in column operations.

    Returns:
        A frame aligned on ``values``: ``valid`` (bool: increasing, disjoint ``first-last`` ranges or ids) and
        ``largest`` (the largest id, float64; NaN where not valid or empty).
    """
    text = values.astype(str)
    distinct = pd.Series(pd.unique(text), dtype=object)  # a whole log has a few thousand distinct allocations
    stripped = distinct.str.strip()
    table = pd.DataFrame({"valid": stripped.str.fullmatch(_INTERVAL_SET).astype(bool),
                          "largest": np.nan})
    if table["valid"].any():
        ranges = stripped[table["valid"]].str.split(" ").explode().str.partition("-")  # index: the set's position
        first = ranges[0].astype(np.float64)
        last = ranges[2].mask(ranges[2] == "", ranges[0]).astype(np.float64)
        previous = last.groupby(level=0).shift()
        ordered = ((first <= last) & ~(first <= previous)).groupby(level=0).all()
        table.loc[ordered.index, "valid"] = ordered
        table.loc[ordered.index, "largest"] = last.groupby(level=0).max()
        table.loc[~table["valid"], "largest"] = np.nan
    table.index = distinct.to_numpy()
    aligned = table.reindex(text.to_numpy())
    aligned["valid"] = aligned["valid"].eq(True)  # empty text: not a set
    return aligned.set_axis(values.index)


def check_allocations_within(jobs: pd.DataFrame, nb_resources: int, *, source: str, platform: str = "",
                             first_line: int | None = 2) -> None:
    """Check that every job ran on resources of the platform: ids 0 to ``nb_resources - 1``.

    Args:
        jobs: a table from :func:`read_out_jobs` (rows in file order) or :func:`validate_out_jobs`.
        nb_resources: the platform's number of compute resources (nodes).
        source: the file named in the message.
        platform: where ``nb_resources`` comes from, named in the message (``"given explicitly"``).
        first_line: the file line of the first row (2, after the header), or None to name rows by position.

    Raises:
        OutJobsError: a job's ``allocated_resources`` holds an id >= ``nb_resources`` (the first such row named
            by its line, with the job and its allocation) or is no interval set.
    """
    if "allocated_resources" not in jobs.columns:
        return
    sets = _interval_sets(jobs["allocated_resources"])
    invalid = ~_is_empty(jobs["allocated_resources"]) & ~sets["valid"].to_numpy(dtype=bool)
    if invalid.any():
        _, where = _first_bad(invalid, source, first_line, "allocated_resources")
        raise OutJobsError(f"{where}: not an interval set of resource ids such as '0-3 7'; {_REDO}")
    with np.errstate(invalid="ignore"):
        beyond = sets["largest"].to_numpy() >= nb_resources
    if beyond.any():
        row, where = _first_bad(beyond, source, first_line, "allocated_resources")
        origin = f", {platform}" if platform else ""
        raise OutJobsError(
            f"{where}: job {jobs['workload_name'].iloc[row]}!{jobs['job_id'].iloc[row]} ran on "
            f"'{jobs['allocated_resources'].iloc[row]}', beyond the platform's {nb_resources} resources (ids 0-"
            f"{nb_resources - 1}{origin}; {int(beyond.sum())} such row(s)): analyse the run with the platform it ran "
            "on (--nb-resources N, or its run.json / out_schedule.csv)")


def allocated_resource_counts(jobs: pd.DataFrame) -> pd.Series:
    """Number of resources in each job's ``allocated_resources`` interval set (``"0-3 7"`` -> 5).

    Returns:
        Int64 series aligned on ``jobs`` (NA for rejected jobs, whose field is empty).

    Raises:
        OutJobsError: ``allocated_resources`` is absent, or a value is not an interval set (row named).
    """
    if "allocated_resources" not in jobs.columns:
        raise OutJobsError("jobs table has no column 'allocated_resources'")
    text = jobs["allocated_resources"].astype("string").fillna("").str.strip()
    counts: dict[str, int] = {}
    for value in text.unique():
        if value == "":
            continue
        try:
            counts[value] = len(ProcSet.from_str(value))
        except (ValueError, TypeError) as exc:
            row = int(np.flatnonzero((text == value).to_numpy())[0])
            raise OutJobsError(
                f"row {row} ({jobs[FULL_ID].iloc[row] if FULL_ID in jobs.columns else ''}), column "
                f"'allocated_resources': {value!r} is not an interval set: {exc}") from exc
    return text.map(counts).astype("Int64")


def out_jobs_anomalies(jobs: pd.DataFrame, *, tolerance: float = TIME_TOLERANCE) -> dict[str, int]:
    """Count the rows whose redundant columns disagree with the primary ones (nothing is corrected).

    Checks ``execution_time`` against ``finish_time - starting_time``; when present, ``waiting_time``
    against ``starting_time - submission_time``, ``turnaround_time`` against ``finish_time -
    submission_time``, ``stretch`` against turnaround / execution time, and the size of
    ``allocated_resources`` against ``requested_number_of_resources``. Also counts jobs that ran with a
    zero execution time (their slowdown is undefined), and jobs that started before their submission by more than
    ``tolerance`` (within :data:`CLOCK_DRIFT_TOLERANCE`, as real Batsim writes them late in long simulations).

    Args:
        jobs: a table from :func:`read_out_jobs` or :func:`validate_out_jobs`.
        tolerance: seconds of slack for time comparisons (relative slack of the same size for ``stretch``).

    Returns:
        ``{"execution_time_mismatch": n, "waiting_time_mismatch": n, "turnaround_time_mismatch": n,
        "stretch_mismatch": n, "allocation_size_mismatch": n, "zero_execution_time": n,
        "start_before_submission": n}`` (0 when a column is absent).
    """
    ran = jobs["starting_time"].notna()
    sub, start, finish = (jobs[c] for c in ("submission_time", "starting_time", "finish_time"))
    execution = finish - start

    def mismatch(name: str, expected: pd.Series, relative: bool = False) -> int:
        if name not in jobs.columns:
            return 0
        slack = tolerance * (1.0 + expected.abs()) if relative else tolerance
        diff = (jobs[name] - expected).abs()
        return int(((diff > slack) & ran & np.isfinite(expected)).sum())

    counts = {
        "execution_time_mismatch": mismatch("execution_time", execution),
        "waiting_time_mismatch": mismatch("waiting_time", start - sub),
        "turnaround_time_mismatch": mismatch("turnaround_time", finish - sub),
        "stretch_mismatch": mismatch("stretch", (finish - sub) / execution.where(execution > 0), relative=True),
        "allocation_size_mismatch": 0,
        "zero_execution_time": int((ran & (execution <= 0)).sum()),
        "start_before_submission": int((ran & (start < sub - tolerance)).sum()),
    }
    if "allocated_resources" in jobs.columns:
        sizes = allocated_resource_counts(jobs)
        counts["allocation_size_mismatch"] = int(
            (ran & sizes.notna() & (sizes != jobs["requested_number_of_resources"])).fillna(False).sum())
    return counts


def attach_job_table(jobs: pd.DataFrame, table: pd.DataFrame, *, columns: Sequence[str],
                     table_name: str = "job table") -> pd.DataFrame:
    """Add per-job columns from a side table (for instance user ids, original submission times) to a jobs table.

    The side table's ``job_id`` column names jobs either by their full id ``workload!job_id`` (when every
    value contains ``!``) or by the bare Batsim ``job_id`` (when none does; allowed only if bare ids are
    unique across workloads in ``jobs``). Values are compared as text, so an integer SWF job number 15
    matches Batsim's job ``15``.

    Args:
        jobs: a table from :func:`read_out_jobs` / :func:`validate_out_jobs` (needs ``full_job_id``).
        table: a frame with ``job_id`` and ``columns``, one row per job.
        columns: the columns to copy over.
        table_name: how to call ``table`` in error messages.

    Returns:
        A copy of ``jobs`` (same row order and index) with ``columns`` added.

    Raises:
        ValueError: columns missing from ``table`` (listed), ids that mix both forms, bare ids that are
            ambiguous across workloads, duplicated ids in ``table``, or jobs present on one side only
            (the first ones named, with the counts).
    """
    wanted = ["job_id", *columns]
    missing = [c for c in wanted if c not in table.columns]
    if missing:
        raise ValueError(f"{table_name}: missing column(s) {', '.join(missing)} "
                         f"(found: {', '.join(map(str, table.columns))})")
    clash = [c for c in columns if c in jobs.columns]
    if clash:
        raise ValueError(f"{table_name}: column(s) {', '.join(clash)} already exist in the jobs table")
    ids = table["job_id"].astype(str).str.strip()
    has_bang = ids.str.contains("!", regex=False)
    if has_bang.all():
        key = jobs[FULL_ID]
    elif not has_bang.any():
        key = jobs["job_id"]
        ambiguous = key[key.duplicated(keep=False)]
        if len(ambiguous):
            raise ValueError(
                f"{table_name}: job ids without workload prefix are ambiguous, job {ambiguous.iloc[0]!r} exists in "
                f"several workloads ({', '.join(jobs.loc[ambiguous.index, FULL_ID].head(4))}); "
                "give full ids 'workload!job_id'")
    else:
        raise ValueError(
            f"{table_name}: job ids mix full ids ('{ids[has_bang].iloc[0]}') and bare ids ('{ids[~has_bang].iloc[0]}')")
    dup = ids[ids.duplicated(keep=False)]
    if len(dup):
        raise ValueError(f"{table_name}: job {dup.iloc[0]!r} appears {int((ids == dup.iloc[0]).sum())} times")
    key = key.astype(str)
    only_jobs = jobs.loc[~key.isin(ids).to_numpy(), FULL_ID]
    only_table = ids[~ids.isin(key)]
    if len(only_jobs) or len(only_table):
        parts = []
        if len(only_jobs):
            parts.append(f"{len(only_jobs)} job(s) of the jobs table are missing from {table_name} "
                         f"(first: {', '.join(only_jobs.head(5))})")
        if len(only_table):
            parts.append(f"{len(only_table)} job(s) of {table_name} are not in the jobs table "
                         f"(first: {', '.join(only_table.head(5))})")
        raise ValueError("; ".join(parts))
    side = table[list(columns)].set_axis(ids.to_numpy(), axis=0)
    result = jobs.copy()
    aligned = side.reindex(key.to_numpy())
    for name in columns:
        result[name] = aligned[name].to_numpy()
    return result
