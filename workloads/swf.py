"""Reading Standard Workload Format (SWF) logs into a pandas frame, with every anomaly counted.

The format is the one defined by D. G. Feitelson for the Parallel Workloads Archive ("The Standard Workload
Format", https://www.cs.huji.ac.il/labs/parallel/workload/swf.html; also Chapin et al., "Benchmarks and
standards for the evaluation of parallel job schedulers", JSSPP 1999): one job per line, 18 whitespace
separated numeric fields, ``-1`` for a value that is not known, and header comment lines starting with ``;``
such as ``; MaxProcs: 100``. Files may be plain text or gzip-compressed; compression is detected from the
magic bytes (``1f 8b``), not from the file name.

Lines: a file is split at line feeds (a carriage return just before one belongs to the line end, as in CRLF
files), or at carriage returns when its first block (:data:`FIRST_BLOCK`) holds carriage returns but no line feed
(old Mac files; a line feed later in such a file is a control character inside a line). A carriage return left
inside a line is refused (mixed line ends could hide job lines in a comment). A UTF-8 byte order mark at the start
is skipped; a file that is not UTF-8 is read as Latin-1 (names in the headers of old logs). Job lines are handed
to pandas with their fields joined by single spaces, so pandas sees exactly the rows and fields counted here.

Reading: the file is read a block at a time, each block's job lines parsed by pandas before the next block is
read, into columns that grow in place: the memory taken follows the number of jobs (152 bytes each), not the size
of the file; the first malformed line is raised as soon as its block is parsed (a file malformed from its first
line costs its first block, :data:`FIRST_BLOCK` bytes), and a line already malformed before its end (a run
of NUL bytes) is not held whole.

What counts as an error and what counts as an anomaly:

- *format errors* (the line cannot be read as a job): a number of fields other than 18, a field that is not
  a finite number, a fraction in an integer field (processors, ids, status), an integer field beyond the
  64-bit range, a control character inside the line (a stray carriage return, a NUL byte...). They raise
  :class:`SwfFormatError` (file, line, field) by default; with ``on_error="skip"`` the line is left out of the
  frame and counted in the :class:`AnomalyReport` under ``wrong_field_count`` / ``non_numeric_field`` /
  ``non_integral_value`` / ``integer_out_of_range`` / ``control_character``, with the full error text in
  ``AnomalyReport.format_errors``.
- *anomalies* (the line is a readable job but something is odd): the job stays in the frame unchanged, and
  its line number is recorded under the kinds listed in :data:`ANOMALY_KINDS`.

Units: times in seconds (``submission_time`` relative to the log's ``UnixStartTime``), processors as counted by
the log, memory in kilobytes per processor (SWF definition).
"""

from __future__ import annotations

import codecs
import csv
import errno
import gzip
import io
import re
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from batreplay.workloads.loading import not_a_file_reason

if TYPE_CHECKING:  # pandas (its CSV reader, the job frame) is imported when a log is read: not by a module that
    # imports this one for its names only (the JSON workload reader, through batreplay.workloads.batsim_workload)
    import pandas as pd

#: The 18 SWF fields, in file order (Feitelson's SWF definition, fields 1-18).
SWF_COLUMNS: tuple[str, ...] = (
    "job_id",
    "submission_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable_id",
    "queue_id",
    "partition_id",
    "preceding_job_id",
    "think_time",
)

#: Fields stored as float64: times (which some logs give with fractions, e.g. average CPU time) and
#: memory (an average per processor, which may be fractional). Every other field is an integer (int64).
FLOAT_COLUMNS: frozenset[str] = frozenset(
    {
        "submission_time",
        "wait_time",
        "run_time",
        "average_cpu_time",
        "used_memory",
        "requested_time",
        "requested_memory",
        "think_time",
    }
)

#: Value meaning "not known" in every SWF field.
MISSING = -1

#: Anomaly kinds and what they mean. The first three are format errors (only reported with
#: ``on_error="skip"``; the lines are then not in the frame); the others describe jobs kept in the frame.
ANOMALY_KINDS: dict[str, str] = {
    "wrong_field_count": "line skipped: not 18 fields",
    "non_numeric_field": "line skipped: a field is not a finite number",
    "non_integral_value": "line skipped: a fraction in an integer field",
    "integer_out_of_range": "line skipped: an integer field beyond the 64-bit range",
    "control_character": "line skipped: a control character (stray carriage return, NUL...) inside the line",
    "run_time_missing": "run time is -1",
    "run_time_zero": "run time is 0",
    "negative_time": "submit, wait, run or requested time negative (other than -1)",
    "time_beyond_precision": "submit, wait, run or requested time of magnitude >= 2**53 s (not exact to the second)",
    "allocated_missing": "allocated processors is -1",
    "requested_processors_missing": "requested processors is -1",
    "nonpositive_processors": "allocated or requested processors is 0 or negative (other than -1)",
    "requested_time_missing": "requested time is -1",
    "more_processors_than_machine": "allocated or requested processors > MaxProcs of the header",
    "submission_time_decreasing": "submission time smaller than that of the previous job line",
    "duplicate_job_id": "job number already used by an earlier line",
    "run_time_exceeds_requested": "run time > requested time (both known)",
}

_FORMAT_ERROR_KINDS = (
    "wrong_field_count",
    "non_numeric_field",
    "non_integral_value",
    "integer_out_of_range",
    "control_character",
)
_TIME_COLUMNS = ("submission_time", "wait_time", "run_time", "requested_time")
_HEADER_KEY = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_]*):(?:\s+(.*))?$")
_LEADING_INTEGER = re.compile(r"^\s*(-?\d+)")
#: Control characters (C0 and C1 but tab) that may not appear inside a job line: pandas' tokenizer gives some of
#: them a meaning of their own (line ends, NUL), so a line holding one is refused rather than guessed at.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINE_ENDS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Magnitude (seconds) from which float64 no longer holds every integer: times this large are not exact.
EXACT_SECONDS_LIMIT = 2.0**53
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class SwfFormatError(ValueError):
    """A line of an SWF file that cannot be read as a job.

    Attributes:
        path: the file.
        line: 1-based line number in the (decompressed) file; ``None`` for a file-level problem.
        field: the SWF field name concerned (see :data:`SWF_COLUMNS`), or a description such as
            ``"field 19"`` for a surplus field; ``None`` for a file-level problem.
        message: what is wrong.
    """

    def __init__(self, path: str | Path, line: int | None, field: str | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}, line {self.line}"
        if self.field is not None:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"

    def __reduce__(self):  # keep the error picklable (it has a custom __init__)
        return (type(self), (self.path, self.line, self.field, self.message))


@dataclass
class AnomalyReport:
    """Counted anomalies of one SWF file.

    Every line number is kept (a numpy int64 array per kind, 1-based line numbers in the file), so nothing is
    summarised away; :meth:`summary` prints only the first few per kind and :meth:`to_dict` can be limited.

    Attributes:
        path: the file.
        n_jobs: number of job lines kept in the frame.
        lines: kind (see :data:`ANOMALY_KINDS`) -> sorted line numbers. Every kind is present (maybe empty).
        missing: SWF field -> number of jobs whose value is -1 ("not known"), for all 18 fields.
        format_errors: the errors of the lines skipped with ``on_error="skip"``, in file order.
    """

    path: str
    n_jobs: int
    lines: dict[str, np.ndarray]
    missing: dict[str, int]
    format_errors: list[SwfFormatError] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """Kind -> number of lines of that kind (all kinds, zeros included)."""
        return {kind: len(numbers) for kind, numbers in self.lines.items()}

    @property
    def n_skipped(self) -> int:
        """Number of lines left out of the frame because of a format error."""
        return len(self.format_errors)

    def count(self, kind: str) -> int:
        """Number of lines of one anomaly kind. Raises KeyError for an unknown kind."""
        return len(self.lines[kind])

    def summary(self, max_lines: int = 5) -> str:
        """Human-readable text: the file, the job count, then each non-zero kind with its first line numbers
        and the non-zero missing-value counts per field."""
        out = [f"SWF anomalies in {self.path}: {self.n_jobs} jobs read"]
        if self.format_errors:
            out.append(f"  {len(self.format_errors)} malformed lines skipped, first: {self.format_errors[0]}")
        any_kind = False
        for kind, numbers in self.lines.items():
            if len(numbers) == 0:
                continue
            any_kind = True
            shown = ", ".join(str(int(n)) for n in numbers[:max_lines])
            more = f", ... (+{len(numbers) - max_lines})" if len(numbers) > max_lines else ""
            out.append(f"  {kind}: {len(numbers)} ({ANOMALY_KINDS[kind]}); lines {shown}{more}")
        if not any_kind:
            out.append("  no anomalies")
        missing = {k: v for k, v in self.missing.items() if v}
        if missing:
            out.append("  missing values (-1) per field: " + ", ".join(f"{k}={v}" for k, v in missing.items()))
        return "\n".join(out)

    def to_dict(self, max_lines: int | None = None) -> dict:
        """Plain-Python form (JSON-serialisable): ``{"path", "n_jobs", "counts", "lines", "missing",
        "format_errors"}``. ``max_lines`` limits the line numbers listed per kind (counts stay exact)."""
        return {
            "path": self.path,
            "n_jobs": self.n_jobs,
            "counts": self.counts,
            "lines": {k: [int(n) for n in v[:max_lines]] for k, v in self.lines.items()},
            "missing": dict(self.missing),
            "format_errors": [{"line": e.line, "field": e.field, "message": e.message} for e in self.format_errors],
        }


@dataclass
class SwfLog:
    """A parsed SWF file.

    Attributes:
        path: the file read.
        header: header key -> value, key as written (e.g. ``"MaxProcs"``), value stripped. A key that appears
            several times (``Note``, ``Queue``, ``Partition``, ``Information`` ...) has its values joined with
            ``"\\n"`` in file order; indented comment lines without a key continue the previous key's value
            (also joined with ``"\\n"``). The exact sequence is in ``header_entries``.
        jobs: one row per job line, in file order; the 18 :data:`SWF_COLUMNS` (int64, or float64 for the
            fields in :data:`FLOAT_COLUMNS`), -1 kept as written, plus ``line`` (1-based line number, int64).
        anomalies: the :class:`AnomalyReport` of the file.
        header_entries: ``(key, value)`` pairs in file order; comment text that follows no key has key ``""``.
    """

    path: Path
    header: dict[str, str]
    jobs: pd.DataFrame
    anomalies: AnomalyReport
    header_entries: list[tuple[str, str]] = field(default_factory=list)

    def _header_int(self, key: str) -> int | None:
        value = self.header.get(key)
        if value is None:
            return None
        match = _LEADING_INTEGER.match(value)
        return int(match.group(1)) if match else None

    @property
    def max_nodes(self) -> int | None:
        """``MaxNodes`` of the header (leading integer, e.g. 338 for ``"338 (batch partition; 512 total)"``),
        or None when absent."""
        return self._header_int("MaxNodes")

    @property
    def max_procs(self) -> int | None:
        """``MaxProcs`` of the header (leading integer), or None when absent."""
        return self._header_int("MaxProcs")

    @property
    def unix_start_time(self) -> int | None:
        """``UnixStartTime`` of the header (seconds since the Unix epoch, the origin of ``submission_time``), or
        None when absent."""
        return self._header_int("UnixStartTime")

    @property
    def n_jobs(self) -> int:
        """Number of jobs in the frame."""
        return len(self.jobs)


def _parse_header(comment_lines: list[str]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    entries: list[list[str]] = []  # [key, value] pairs, value extended by continuation lines
    current: list[str] | None = None
    for text in comment_lines:
        match = _HEADER_KEY.match(text)
        if match:
            current = [match.group(1), (match.group(2) or "").strip()]
            entries.append(current)
            continue
        body = text[1:].strip()
        if not body:  # a bare ";" ends a continued value
            current = None
            continue
        if current is None:
            current = ["", body]
            entries.append(current)
        else:
            current[1] = f"{current[1]}\n{body}" if current[1] else body
    header: dict[str, str] = {}
    for key, value in entries:
        if not key:
            continue
        header[key] = f"{header[key]}\n{value}" if key in header else value
    return header, [(k, v) for k, v in entries]


def _empty_columns() -> dict[str, np.ndarray]:
    columns = {c: np.zeros(0, dtype=np.float64 if c in FLOAT_COLUMNS else np.int64) for c in SWF_COLUMNS}
    columns["line"] = np.zeros(0, dtype=np.int64)
    return columns


class _JobLines:
    """The job lines of a file, packed: each normalised (fields joined by single spaces) and encoded as UTF-8 into one
    buffer, with its line number; lines without 18 fields are counted as errors instead. No list of line strings is
    kept (for a large log it would weigh more than the table read from it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.buffer = io.BytesIO()
        self.offsets = array("q", [0])  # where each packed line starts in buffer; one more: where the next would
        self.numbers = array("q")
        self.errors: list[tuple[str, SwfFormatError]] = []

    def add(self, text: str, number: int) -> None:
        """Pack line ``number`` (``text`` stripped, without control characters), or count it as a format error."""
        fields = text.split()
        if len(fields) != len(SWF_COLUMNS):
            n = len(fields)
            name = SWF_COLUMNS[n] if n < len(SWF_COLUMNS) else f"field {len(SWF_COLUMNS) + 1}"
            json_like = " (this is JSON, not SWF: a Batsim workload goes in a .json file)" if text[0] in "{[" else ""
            self.errors.append(("wrong_field_count", SwfFormatError(
                self.path, number, name, f"expected {len(SWF_COLUMNS)} fields, found {n}{json_like}")))
            return
        self.buffer.write(" ".join(fields).encode() + b"\n")
        self.offsets.append(self.buffer.tell())
        self.numbers.append(number)

    def text(self, i: int) -> str:
        """The ``i``-th packed line (0-based), normalised."""
        with self.buffer.getbuffer() as packed:
            return bytes(packed[self.offsets[i]:self.offsets[i + 1] - 1]).decode()


def _parse_job_lines(lines: _JobLines) -> tuple[dict[str, np.ndarray], list[tuple[str, SwfFormatError]]]:
    """Parse the packed job lines; return the columns of the good lines (the 18 fields and ``line``) and (kind,
    error) for the bad ones (those ``lines`` counted included).

    The lines hold no control character (see :func:`read_swf`) and are normalised, so the rows and fields pandas
    reads are exactly the lines and ``str.split`` fields counted here.
    """
    path, errors = lines.path, list(lines.errors)
    numbers = np.frombuffer(lines.numbers, dtype=np.int64) if len(lines.numbers) else np.zeros(0, dtype=np.int64)
    if not len(numbers):
        return _empty_columns(), errors

    import pandas as pd

    lines.buffer.seek(0)
    raw = pd.read_csv(
        lines.buffer,
        sep=" ",
        header=None,
        names=list(SWF_COLUMNS),
        na_filter=False,
        quoting=csv.QUOTE_NONE,  # split exactly like str.split: a stray quote must not join fields
        engine="c",
    )
    if len(raw) != len(numbers):  # cannot happen with the lines packed above; never index with a wrong length
        raise SwfFormatError(path, None, None, f"internal error: {len(numbers)} job lines, {len(raw)} rows read")

    def token(i: int, k: int) -> str:
        return lines.text(i).split(" ")[k]

    bad = np.zeros(len(raw), dtype=bool)
    columns: dict[str, np.ndarray] = {}
    for k, name in enumerate(SWF_COLUMNS):
        column = raw[name]
        exact_ints = column.dtype.kind == "i"  # pandas read every value as an int64: exact
        if exact_ints:
            values = column.to_numpy(dtype=np.float64)
            not_number = np.zeros(len(values), dtype=bool)
        else:
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
            not_number = ~np.isfinite(values)
        for i in np.flatnonzero(not_number):
            errors.append(
                (
                    "non_numeric_field",
                    SwfFormatError(path, int(numbers[i]), name, f"not a finite number: {token(i, k)!r}"),
                )
            )
        bad |= not_number
        if name in FLOAT_COLUMNS:
            columns[name] = values
            continue
        if exact_ints:
            columns[name] = column.to_numpy(dtype=np.int64)
            continue
        # An integer field read as a float, a text or an uint64: exact below 2**52; larger values are read
        # again from their text, exactly, so that no digit is lost and the int64 range is checked.
        ints = np.zeros(len(values), dtype=np.int64)
        small = ~not_number & (np.abs(values) < 2.0**52)
        fractional = small & (values != np.round(values))
        whole = small & ~fractional
        ints[whole] = values[whole].astype(np.int64)
        for i in np.flatnonzero(~not_number & ~small):
            try:
                exact = Decimal(token(i, k))
            except InvalidOperation:  # pandas read it as a number, Decimal does not: treat as not a number
                errors.append(("non_numeric_field", SwfFormatError(
                    path, int(numbers[i]), name, f"not a finite number: {token(i, k)!r}")))
                bad[i] = True
                continue
            if exact != exact.to_integral_value():
                fractional[i] = True
            elif not _INT64_MIN <= exact <= _INT64_MAX:
                errors.append(("integer_out_of_range", SwfFormatError(
                    path, int(numbers[i]), name, f"integer beyond the 64-bit range: {token(i, k)!r}")))
                bad[i] = True
            else:
                ints[i] = int(exact)
        for i in np.flatnonzero(fractional):
            errors.append(
                (
                    "non_integral_value",
                    SwfFormatError(path, int(numbers[i]), name, f"integer field holds a fraction: {token(i, k)!r}"),
                )
            )
        bad |= fractional
        columns[name] = ints
    del raw
    keep = None if not bad.any() else ~bad
    # copies, not views of the frame pandas read (which would keep all of it alive while any column is)
    kept = {name: values.copy() if keep is None else values[keep] for name, values in columns.items()}
    kept["line"] = numbers.copy() if keep is None else numbers[keep]
    return kept, errors


def _find_anomalies(
    path: Path, jobs: pd.DataFrame, max_procs: int | None, errors: list[tuple[str, SwfFormatError]]
) -> AnomalyReport:
    line = jobs["line"].to_numpy()

    def col(name: str) -> np.ndarray:
        return jobs[name].to_numpy()

    run, req_time = col("run_time"), col("requested_time")
    alloc, req_procs = col("allocated_processors"), col("requested_processors")
    submission = col("submission_time")
    masks: dict[str, np.ndarray] = {
        "run_time_missing": run == MISSING,
        "run_time_zero": run == 0,
        "negative_time": np.logical_or.reduce([(col(c) < 0) & (col(c) != MISSING) for c in _TIME_COLUMNS])
        if len(jobs)
        else np.zeros(0, dtype=bool),
        "time_beyond_precision": np.logical_or.reduce(
            [np.abs(col(c)) >= EXACT_SECONDS_LIMIT for c in _TIME_COLUMNS]
        )
        if len(jobs)
        else np.zeros(0, dtype=bool),
        "allocated_missing": alloc == MISSING,
        "requested_processors_missing": req_procs == MISSING,
        "nonpositive_processors": ((alloc <= 0) & (alloc != MISSING)) | ((req_procs <= 0) & (req_procs != MISSING)),
        "requested_time_missing": req_time == MISSING,
        "more_processors_than_machine": (
            (alloc > max_procs) | (req_procs > max_procs) if max_procs is not None else np.zeros(len(jobs), bool)
        ),
        "submission_time_decreasing": (
            np.concatenate([[False], submission[1:] < submission[:-1]]) if len(jobs) else submission < 0
        ),
        "duplicate_job_id": jobs["job_id"].duplicated(keep="first").to_numpy(),
        "run_time_exceeds_requested": (run >= 0) & (req_time >= 0) & (run > req_time),
    }
    lines: dict[str, np.ndarray] = {}
    for kind in ANOMALY_KINDS:
        if kind in _FORMAT_ERROR_KINDS:
            found = sorted({e.line for k, e in errors if k == kind})
            lines[kind] = np.asarray(found, dtype=np.int64)
        else:
            lines[kind] = line[masks[kind]].astype(np.int64)
    missing = {name: int((col(name) == MISSING).sum()) for name in SWF_COLUMNS}
    return AnomalyReport(
        path=str(path),
        n_jobs=len(jobs),
        lines=lines,
        missing=missing,
        format_errors=[e for _, e in sorted(errors, key=lambda ke: (ke[1].line, _field_rank(ke[1].field)))],
    )


def _field_rank(name: str | None) -> int:
    return SWF_COLUMNS.index(name) if name in SWF_COLUMNS else len(SWF_COLUMNS)


#: Bytes read first (decompressed): a malformed first line is found after reading no more of the file than this.
FIRST_BLOCK = 1 << 16
#: Bytes read (decompressed) at each later step; the job lines of one block are parsed by pandas together.
BLOCK = 1 << 21
#: A line still without its end after this many characters is looked at before the rest is read: when it already
#: holds a carriage return or (outside a comment) a control character, it is a malformed line whatever follows,
#: and the rest of it is skipped instead of kept (a binary file or a run of NUL bytes is not held in memory).
_LONG_LINE = 1 << 15
_GZIP_MAGIC = b"\x1f\x8b"


def _text_blocks(path: Path, encoding: str) -> Iterator[str]:
    """The text of the file, decompressed when it starts with the gzip magic, decoded with ``encoding`` (a UTF-8
    byte order mark at the start skipped), in blocks: :data:`FIRST_BLOCK` bytes first, then :data:`BLOCK` bytes.

    Raises:
        SwfFormatError: gzip data that cannot be decompressed (raised where the damage is reached).
        UnicodeDecodeError: bytes that ``encoding`` cannot decode.
    """
    with open(path, "rb") as raw:
        compressed = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        decoder = codecs.getincrementaldecoder(encoding)()
        size, first = FIRST_BLOCK, True
        while True:
            try:
                data = stream.read(size)
            except (OSError, EOFError, zlib.error) as exc:
                if not compressed:
                    raise
                raise SwfFormatError(path, None, None, f"cannot decompress gzip data: {exc}") from exc
            if first:
                data, first = data.removeprefix(codecs.BOM_UTF8), False
            text, last = decoder.decode(data, final=not data), not data
            data = b""  # not held while the next block is read
            if text:
                yield text
            if last:
                return
            text, size = "", BLOCK


def _surely_malformed(pending: str) -> bool:
    """True when the start of a line, ``pending``, already makes it malformed whatever its end will be: a carriage
    return with text after it, or a control character between two non-blank characters of a line that is not a
    comment (the checks :func:`read_swf` applies to whole lines)."""
    body = pending.strip()
    return bool(body) and ("\r" in body or (body[0] != ";" and _CONTROL_BUT_LINE_ENDS.search(body) is not None))


def _numbered_lines(blocks: Iterator[str]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of the text of ``blocks`` (1-based), one block at a time.

    Lines end at line feeds, or at carriage returns when the first block holds a carriage return but no line feed
    (old Mac files; a line feed in such a file is then a control character inside a line). A line found malformed
    before its end (see :func:`_surely_malformed`) is given as far as it was read, and the rest of it is skipped.
    """
    end: str | None = None
    pending, number, skipping = "", 1, False
    for block in blocks:
        if end is None:
            end = "\r" if "\r" in block and "\n" not in block else "\n"
        start = 0
        if skipping:  # the rest of a malformed line already given
            start = block.find(end) + 1
            if not start:
                continue
            skipping, number = False, number + 1
        while (stop := block.find(end, start)) >= 0:
            yield number, pending + block[start:stop]
            pending, start, number = "", stop + 1, number + 1
        pending += block[start:]
        block = ""  # not held while the next block is read
        if len(pending) > _LONG_LINE and _surely_malformed(pending):
            yield number, pending
            pending, skipping = "", True
    if pending and not skipping:
        yield number, pending


class _Reader:
    """One pass over an SWF file: header comments, the job columns parsed a block at a time, and the format errors.

    With ``on_error="raise"``, the first malformed line raises as soon as the block holding it is parsed (every
    line before it was good), so a file malformed from its first line costs no more than its first block.
    """

    def __init__(self, path: Path, on_error: str) -> None:
        self.path, self.raise_first = path, on_error == "raise"
        self.comments: list[str] = []
        # the columns grow in place, block after block (a realloc, not a copy of all the blocks read so far)
        self.columns = {name: array("d" if name in FLOAT_COLUMNS else "q") for name in (*SWF_COLUMNS, "line")}
        self.errors: list[tuple[str, SwfFormatError]] = []
        self.job_lines = _JobLines(path)

    def add(self, number: int, raw_line: str, any_control: bool) -> None:
        """Sort line ``number``: blank, comment, malformed (an error) or a job line (packed for the next parse).
        ``any_control`` says whether a block read so far holds a control character (else only CR needs a look)."""
        stripped = raw_line.strip()
        if not stripped:
            return
        if "\r" in stripped:
            self.error("control_character", number, "carriage return inside the line (mixed line ends?)")
        elif stripped[0] == ";":
            self.comments.append(stripped)
        elif any_control and (control := _CONTROL.search(stripped)):
            self.error("control_character", number, f"control character {control.group()!r} inside the line")
        else:
            self.job_lines.add(stripped, number)

    def error(self, kind: str, number: int, message: str) -> None:
        """Count a malformed line; with ``on_error="raise"``, raise the first error of the file at once."""
        self.errors.append((kind, SwfFormatError(self.path, number, None, message)))
        if self.raise_first:
            self.parse()

    def parse(self) -> None:
        """Parse the job lines packed so far; with ``on_error="raise"``, raise the first error found."""
        columns, errors = _parse_job_lines(self.job_lines)
        self.job_lines = _JobLines(self.path)
        for name, values in columns.items():
            self.columns[name].frombytes(values.tobytes())
        self.errors.extend(errors)
        if self.errors and self.raise_first:
            raise min((e for _, e in self.errors), key=lambda e: (e.line, _field_rank(e.field)))

    def jobs(self) -> pd.DataFrame:
        """The job frame, on the columns read (no copy: the frame is the only copy of the jobs in memory)."""
        import pandas as pd

        return pd.DataFrame({name: np.frombuffer(values, dtype=np.float64 if values.typecode == "d" else np.int64)
                             for name, values in self.columns.items()}, copy=False)


def _read_pass(path: Path, encoding: str, on_error: str) -> _Reader:
    """Read the file once, decoded with ``encoding``: its lines sorted and its job lines parsed, a block at a time."""
    reader = _Reader(path, on_error)
    any_control = False  # from the first block holding a control character on, every line gets a closer look

    def blocks() -> Iterator[str]:
        nonlocal any_control
        cr_ends = None  # line ends decided by the first block, as _numbered_lines does
        for block in _text_blocks(path, encoding):
            if cr_ends is None:
                cr_ends = "\r" in block and "\n" not in block
            any_control = (any_control or _CONTROL_BUT_LINE_ENDS.search(block) is not None
                           or (cr_ends and "\n" in block))
            yield block
            block = ""  # not held while the next block is read
            reader.parse()  # the job lines of the block (and the lines ended in it) before the next block

    for number, raw_line in _numbered_lines(blocks()):
        reader.add(number, raw_line, any_control)
    reader.parse()
    return reader


def read_swf(path: str | Path, *, on_error: Literal["raise", "skip"] = "raise") -> SwfLog:
    """Read an SWF log (plain or gzip) into an :class:`SwfLog`.

    The file is read a block at a time (:data:`FIRST_BLOCK`, then :data:`BLOCK` bytes once decompressed), each
    block's job lines parsed by pandas before the next one is read: the memory it takes grows with the jobs (152
    bytes each), not with the size of the file, and a file malformed from its first line is refused after its first
    block.

    Args:
        path: the file; gzip is detected from its first two bytes.
        on_error: ``"raise"`` (default): the first malformed job line (in file order) raises
            :class:`SwfFormatError`; ``"skip"``: malformed lines are left out of the frame, counted in the
            anomaly report (kinds ``wrong_field_count``, ``non_numeric_field``, ``non_integral_value``) and
            listed in ``anomalies.format_errors``.

    Returns:
        The log: header, job frame (see :class:`SwfLog`), anomaly report.

    Raises:
        SwfFormatError: a malformed job line (``on_error="raise"``), gzip data that cannot be decompressed, or a
            path that is a folder or not a regular file (a FIFO, a device).
        FileNotFoundError: no such file.
        ValueError: ``on_error`` is neither ``"raise"`` nor ``"skip"``.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    path = Path(path)
    problem = not_a_file_reason(path)
    if problem == "no such file":
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
    if problem is not None:
        raise SwfFormatError(path, None, None, f"{problem}, not an SWF log")
    try:
        reader = _read_pass(path, "utf-8", on_error)
    except UnicodeDecodeError:  # headers of old logs may hold Latin-1 names; job lines are ASCII either way
        reader = _read_pass(path, "latin-1", on_error)
    header, entries = _parse_header(reader.comments)
    jobs = reader.jobs()
    log = SwfLog(path=path, header=header, jobs=jobs, anomalies=None, header_entries=entries)  # type: ignore[arg-type]
    log.anomalies = _find_anomalies(path, jobs, log.max_procs, reader.errors)
    return log


def swf_log_from_frame(path: str | Path, header_entries: list[tuple[str, str]], jobs: pd.DataFrame) -> SwfLog:
    """An :class:`SwfLog` built in memory (a generated log, :mod:`batreplay.sitemodels.generate`), as
    :func:`read_swf` would read it from a file holding those header lines and jobs: ``jobs`` has the 18
    :data:`SWF_COLUMNS` and ``line`` (the line number each job would have); ``path`` names it in notes and errors.

    Raises:
        ValueError: a column missing or a column that is not numeric.
    """
    missing = [name for name in (*SWF_COLUMNS, "line") if name not in jobs.columns]
    if missing or not all(np.issubdtype(jobs[name].dtype, np.number) for name in SWF_COLUMNS):
        raise ValueError(f"{path}: an SWF job frame needs the numeric columns {', '.join(SWF_COLUMNS)} and line "
                         f"(missing {missing})")
    frame = jobs[[*SWF_COLUMNS, "line"]].astype({name: (np.float64 if name in FLOAT_COLUMNS else np.int64)
                                                 for name in (*SWF_COLUMNS, "line")}).reset_index(drop=True)
    header = {}
    for key, value in header_entries:
        header[key] = f"{header[key]}\n{value}" if key in header else value
    log = SwfLog(path=Path(path), header=header, jobs=frame, anomalies=None,  # type: ignore[arg-type]
                 header_entries=list(header_entries))
    log.anomalies = _find_anomalies(Path(path), frame, log.max_procs, [])
    return log
