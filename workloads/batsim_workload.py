"""SWF log -> Batsim JSON workload (rigid replay), with every dropped or changed job counted.

Batsim's workload format (Batsim 4.2.1 docs, ``docs/input-workload.rst``): ``{"nb_res": N, "jobs": [...],
"profiles": {...}}``; a job has ``id`` (string), ``subtime`` (seconds, absolute in the simulation), ``res``
(number of resources, integer), ``profile`` (a profile name) and an optional ``walltime`` (seconds, -1 or
> 0). Profiles used here: ``{"type": "delay", "delay": d}`` (the job lasts exactly d seconds) and
``{"type": "parallel_homogeneous", "cpu": c, "com": 0}`` (every allocated host computes c flop, so the job
lasts c / speed on hosts of that speed; see ``shared/docs/batsim-protocol-notes.md``).

Mapping of one SWF job (fields of Feitelson's SWF definition, read by :mod:`batreplay.workloads.swf`):

- ``id`` = ``str(job_id)``;
- ``subtime`` = ``submission_time - origin``, where origin is the earliest submission time among the converted jobs
  (for a log in submission order, as SWF requires, that is the first converted job's submission time); times with
  a fraction are subtracted as the decimals written in the log, so no digit changes;
- ``res`` = allocated processors, or requested processors when the allocated count is missing (option
  ``res_source`` swaps the roles; a value <= 0 counts as missing);
- ``walltime`` = requested time, or a fallback when it is missing or <= 0 (option ``walltime_fallback``);
- profile duration = the recorded run time, exactly (no rounding); for ``parallel_homogeneous``, ``cpu`` = run time x
  the recorded machine's node speed, an integer when that product has no fraction, else rounded to 15 significant
  digits, so that a real Batsim 4.2.1 reads the very number the embedded engine uses (see :func:`batsim_double`).

Jobs Batsim cannot run are dropped and counted: run time missing or negative, run time 0 (Batsim refuses a
delay of 0 s and then aborts loading the whole workload) unless ``zero_runtime="min"``, no positive resource
count, more resources than ``nb_res`` (unless ``oversized="keep"``), a job number already used (Batsim refuses
duplicate ids). So are jobs whose times would corrupt the others: a submit time unknown (-1) or negative (it
would become the origin and shift every job), or any time of magnitude 2**53 s or more (float64 no longer
holds every second there; such a job would stretch the simulation to that time). Numbers are written as JSON
integers when every value of that field is integral, else as floats (both are exact images of the parsed log
values). A conversion that keeps no job raises :class:`NoJobsError` (counting the dropped jobs per reason), and
flop amounts outside the range both engines agree on (:data:`MIN_FLOP`, :data:`FLOP_LIMIT`) raise
:class:`~batreplay.workloads.swf.SwfFormatError` naming the first job concerned.

``nb_res`` decides which jobs fit: when given (``batreplay run`` gives the platform's compute nodes), a header
``MaxProcs`` that differs is only noted, and the jobs wider than ``MaxProcs`` that fit are kept (noted under
``res_exceeds_max_procs``); without it, a positive ``MaxProcs`` is the size (a ``MaxProcs`` <= 0 is ignored,
with a note).
"""

from __future__ import annotations

import codecs
import dataclasses
import errno
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from batreplay.atomic import write_text_atomically
from batreplay.workloads.choices import PROFILE_TYPES, RES_SOURCE_CHOICES, ZERO_RUNTIME_CHOICES
from batreplay.workloads.loading import not_a_file_reason
from batreplay.workloads.swf import EXACT_SECONDS_LIMIT, MISSING, SwfFormatError, SwfLog, read_swf

if TYPE_CHECKING:  # pandas is imported when an SWF log is converted (the job table), not to read a JSON workload
    import pandas as pd


#: Reasons for which a job is left out, in the order they are checked; a job is counted once, under the
#: first reason that applies.
DROP_REASONS: dict[str, str] = {
    "run_time_missing": "run time is -1 (unknown)",
    "run_time_negative": "run time negative (other than -1)",
    "run_time_zero": "run time is 0 s (Batsim refuses a delay of 0 s); keep them with --zero-runtime min (zero_runtime='min')",
    "res_missing": "no positive processor count (allocated nor requested)",
    "walltime_missing": "requested time missing or <= 0 and walltime_fallback='drop'",
    "submission_time_missing": "submission time is -1 (unknown): the job has no place in time",
    "submission_time_negative": "submission time negative (other than -1): it would shift every other job",
    "time_beyond_precision": "a submit, wait, run or requested time of magnitude >= 2**53 s (not exact to the second)",
    "res_exceeds_nb_res": "more processors than nb_res (see the nb_res line for where it comes from)",
    "duplicate_job_id": "job number already used by an earlier converted job (Batsim refuses duplicate ids)",
}

#: Ways a converted job may differ from its SWF line; a job is counted under each change that applies.
CHANGE_REASONS: dict[str, str] = {
    "run_time_zero_set_to_min": "run time 0 s replaced by min_runtime",
    "res_from_requested": "allocated processors missing: res = requested processors",
    "res_from_allocated": "requested processors missing: res = allocated processors",
    "walltime_from_run_time": "requested time missing or <= 0: walltime = run time",
    "walltime_from_fallback_value": "requested time missing or <= 0: walltime = the fallback value",
    "walltime_raised_to_factor_x_run_time": "walltime raised to walltime_factor x run time",
}

#: Facts about converted jobs that are kept as they are, but change what the simulation shows.
NOTE_REASONS: dict[str, str] = {
    "walltime_below_run_time": "walltime < run time: Batsim stops the job at its walltime",
    "walltime_equals_run_time": (
        "walltime == run time: a delay job ends at its walltime, COMPLETED_WALLTIME_REACHED (Batsim 4.2.1 sleeps only"
        " while the delay is below the walltime; golden run kth2000, job 1252); a parallel_homogeneous job races its"
        " walltime, and which ends first, COMPLETED_SUCCESSFULLY or COMPLETED_WALLTIME_REACHED, depends on SimGrid's"
        " arithmetic for that job (on full KTH-SP2 with EASY, 33 of the 38 end COMPLETED_SUCCESSFULLY)"
    ),
    "res_exceeds_nb_res_kept": "more processors than nb_res, kept (oversized='keep'): the scheduler must reject it",
    "res_exceeds_max_procs": "more processors than MaxProcs of the header, kept: the job fits nb_res",
}

JOB_TABLE_COLUMNS = (
    "job_id",
    "submission_time",
    "res",
    "walltime",
    "run_time",
    "profile",
    "user_id",
    "swf_submission_time",
    "swf_wait_time",
    "swf_line",
)


class WorkloadFormatError(ValueError):
    """An invalid Batsim JSON workload.

    Attributes:
        path: the file (or ``"<dict>"`` for an in-memory workload).
        field: where, as a JSON path such as ``"jobs[3].profile"`` or ``"profiles.d60.delay"``; ``None`` for
            a document that is not JSON at all.
        message: what is wrong.
    """

    def __init__(self, path: str | Path, field: str | None, message: str) -> None:
        self.path, self.field, self.message = str(path), field, message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.field is None else f"{self.path}, field '{self.field}'"
        return f"{where}: {self.message}"

    def __reduce__(self):
        return (type(self), (self.path, self.field, self.message))


@dataclass
class ConversionReport:
    """What the conversion did to the SWF jobs; every job of the log is accounted for:
    ``n_swf_jobs == n_jobs + n_dropped + n_not_considered``.

    Attributes:
        source: the SWF file.
        n_swf_jobs: job lines in the SWF frame.
        n_jobs: jobs in the Batsim workload.
        n_not_considered: SWF jobs after the last converted one when ``max_jobs`` cut the log short.
        dropped: reason (:data:`DROP_REASONS`) -> SWF line numbers of the dropped jobs (int64 array).
        changed: reason (:data:`CHANGE_REASONS`) -> SWF line numbers of converted jobs changed that way.
        notes: reason (:data:`NOTE_REASONS`) -> SWF line numbers of converted jobs concerned.
        options: the conversion options used.
        nb_res_source: where ``nb_res`` (the size jobs are checked against) comes from: ``"given"`` (the
            ``nb_res`` argument: the platform's compute nodes in ``batreplay run``), ``"MaxProcs of the
            header"`` or ``"largest converted job"``.
        header_notes: facts about the header that do not concern single jobs (a ``MaxProcs`` that is not a
            positive count, or that differs from the given ``nb_res``).
    """

    source: str
    n_swf_jobs: int
    n_jobs: int
    n_not_considered: int
    dropped: dict[str, np.ndarray]
    changed: dict[str, np.ndarray]
    notes: dict[str, np.ndarray]
    options: dict[str, Any] = field(default_factory=dict)
    nb_res_source: str = ""
    header_notes: list[str] = field(default_factory=list)

    @property
    def n_dropped(self) -> int:
        """Number of SWF jobs left out (each counted under one reason)."""
        return int(sum(len(v) for v in self.dropped.values()))

    @property
    def dropped_counts(self) -> dict[str, int]:
        """Reason -> number of dropped jobs (all reasons, zeros included)."""
        return {k: len(v) for k, v in self.dropped.items()}

    @property
    def changed_counts(self) -> dict[str, int]:
        """Reason -> number of changed jobs (all reasons, zeros included)."""
        return {k: len(v) for k, v in self.changed.items()}

    @property
    def note_counts(self) -> dict[str, int]:
        """Reason -> number of converted jobs concerned (all reasons, zeros included)."""
        return {k: len(v) for k, v in self.notes.items()}

    def summary(self, max_lines: int = 5, sections: tuple[str, ...] = ("dropped", "changed", "note")) -> str:
        """Human-readable text naming the file, the job counts, and each non-zero reason with its first SWF
        line numbers; ``sections`` chooses which of the dropped / changed / noted reasons are listed (``sessions``
        shows only the dropped jobs: the others concern the simulation, not how sessions are cut)."""
        head = (
            f"Batsim workload from {self.source}: {self.n_swf_jobs} SWF jobs -> {self.n_jobs} jobs "
            f"({self.n_dropped} dropped, {self.n_not_considered} not considered after max_jobs)"
        )
        out = [head]
        if self.nb_res_source:
            out.append(f"  nb_res = {self.options.get('nb_res')} ({self.nb_res_source})")
        out.extend(f"  header: {note}" for note in self.header_notes)
        for title, table, descriptions in (
            ("dropped", self.dropped, DROP_REASONS),
            ("changed", self.changed, CHANGE_REASONS),
            ("note", self.notes, NOTE_REASONS),
        ):
            if title not in sections:
                continue
            for reason, lines in table.items():
                if len(lines) == 0:
                    continue
                shown = ", ".join(str(int(n)) for n in lines[:max_lines])
                more = f", ... (+{len(lines) - max_lines})" if len(lines) > max_lines else ""
                out.append(f"  {title} {reason}: {len(lines)} ({descriptions[reason]}); SWF lines {shown}{more}")
        return "\n".join(out)

    def to_dict(self, max_lines: int | None = None) -> dict:
        """Plain-Python form (JSON-serialisable); ``max_lines`` limits the listed line numbers per reason."""

        def lines(table: dict[str, np.ndarray]) -> dict[str, list[int]]:
            return {k: [int(n) for n in v[:max_lines]] for k, v in table.items()}

        return {
            "source": self.source,
            "n_swf_jobs": self.n_swf_jobs,
            "n_jobs": self.n_jobs,
            "n_dropped": self.n_dropped,
            "n_not_considered": self.n_not_considered,
            "dropped_counts": self.dropped_counts,
            "changed_counts": self.changed_counts,
            "note_counts": self.note_counts,
            "dropped_lines": lines(self.dropped),
            "changed_lines": lines(self.changed),
            "note_lines": lines(self.notes),
            "nb_res_source": self.nb_res_source,
            "header_notes": list(self.header_notes),
            "options": {
                k: (v if isinstance(v, (str, int, float, type(None))) else str(v)) for k, v in self.options.items()
            },
        }


@dataclass
class BatsimWorkload:
    """A Batsim workload made from an SWF log, with the per-job SWF facts the analyses need.

    Attributes:
        nb_res: number of resources the workload is meant for (Batsim's ``nb_res``).
        jobs: Batsim job objects (``id``, ``subtime``, ``walltime``, ``res``, ``profile``), in SWF file order.
        profiles: profile name -> Batsim profile object.
        job_table: one row per job, same order as ``jobs``; columns :data:`JOB_TABLE_COLUMNS`: ``job_id``
            (str), ``submission_time`` (s, simulation clock: Batsim's ``subtime``), ``res`` (int), ``walltime``
            (s), ``run_time`` (s, the duration given to the profile), ``profile`` (str), ``user_id`` (SWF user),
            ``swf_submission_time`` (s, as in the log, relative to its UnixStartTime), ``swf_wait_time`` (s,
            recorded wait, -1 if unknown), ``swf_line`` (int).
        report: the :class:`ConversionReport`.
        submission_origin: SWF submission time (s) that became simulation time 0.
        unix_start_time: the log's ``UnixStartTime`` (s since the epoch) or None: absolute time of SWF
            submission time 0.
        source: the SWF file.
    """

    nb_res: int
    jobs: list[dict[str, Any]]
    profiles: dict[str, dict[str, Any]]
    job_table: pd.DataFrame
    report: ConversionReport
    submission_origin: float = 0.0
    unix_start_time: int | None = None
    source: Path | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The Batsim workload document: ``{"nb_res", "jobs", "profiles"}``."""
        return {"nb_res": self.nb_res, "jobs": self.jobs, "profiles": self.profiles}

    def write(self, path: str | Path) -> Path:
        """Write the JSON workload to ``path`` (via a temporary file in the same folder, then a rename, so a
        reader never sees a partial file). Returns the path."""
        # json.dumps uses the C encoder (json.dump does not)
        return write_text_atomically(path, json.dumps(self.to_json_dict()) + "\n")


def _json_numbers(values: np.ndarray) -> list:
    """Python numbers for JSON: ints when every value is integral (and exactly representable), else floats."""
    values = np.asarray(values, dtype=np.float64)
    if (
        len(values)
        and np.all(np.isfinite(values))
        and np.all(values == np.round(values))
        and np.all(np.abs(values) < 2**53)
    ):
        return values.astype(np.int64).tolist()
    return values.tolist()


def _rebase(submission: np.ndarray, origin: float) -> np.ndarray:
    """``submission - origin`` (seconds), each difference the float nearest to the difference of the decimal values
    as written in the log (shortest repr): integral times (below 2**53) subtract exactly in float64; a time
    with a fraction is subtracted in decimal, so that e.g. 1000.1 - 1000 gives 0.1, not 0.10000000000002274."""
    rebased = submission - origin
    fractional = submission != np.floor(submission)
    if origin != math.floor(origin):
        fractional[:] = True
    if fractional.any():
        base = Decimal(repr(origin))
        for i in np.flatnonzero(fractional):
            rebased[i] = float(Decimal(repr(float(submission[i]))) - base)
    return rebased


def value_label(value: float) -> str:
    """A number as profile names carry it: an integer without decimals, else its shortest repr (``12.5``)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


#: Fewest flop (other than none) a host may be given by a compute profile. SimGrid runs a parallel task at the rate
#: ``speed / flop`` (tasks per second) of its slowest host: below 1 flop a fast enough platform makes that rate
#: overflow to infinity (with 1 Gflop/s hosts, below 5.6e-300 flop), and then real Batsim 4.2.1 stops answering
#: while the embedded engine ends the job at once. From 1 flop on, the rate is at most the host's speed.
MIN_FLOP = 1.0
#: Flop amounts must be below this (2**64, about 1.8e19). Batsim 4.2.1 reads a JSON integer exactly up to
#: 2**64 - 1; beyond, it adds up the digits in floating point, may read another number than the embedded engine
#: (1.0000000000000001e23 flop is read as 1e23: the job ends 0.03 s earlier than on the embedded engine on
#: 1 Gflop/s hosts), and aborts from 1e23 on (it writes every such number with printf's %f into 32 bytes).
FLOP_LIMIT = 2.0**64
_POWERS_OF_TEN = tuple(float(f"1e{k}") for k in range(309))  # the table rapidjson multiplies by
_JSON_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]+))?")


def batsim_double(text: str) -> float:
    """The double Batsim 4.2.1 reads for the JSON number ``text``: rapidjson's parser without its full-precision
    option (digits summed in an unsigned 64-bit integer while they fit, the fraction's digits while the sum stays
    below 2**53, further digits in floating point up to 17 significant ones, then one multiplication or division
    by a power of ten from a table), which differs from the correctly rounded value of ``text`` for some numbers
    of 16 or more significant digits. An integer Batsim reads as a 64-bit integer is converted to the nearest
    double.

    Raises:
        ValueError: ``text`` is not a JSON number, or one too large for rapidjson.
    """
    match = _JSON_NUMBER.fullmatch(text)
    if match is None:
        raise ValueError(f"not a JSON number: {text!r}")
    sign, whole, fraction, exponent = match.group(1), match.group(2), match.group(3) or "", match.group(4)
    limit = 2**63 if sign else 2**64 - 1
    value, as_double, power = 0, None, 0
    digits_seen = -1 if whole != "0" else 0  # rapidjson counts the integer digits summed, but the first
    for k, digit in enumerate(whole):
        if value * 10 + int(digit) > limit:  # beyond 64 bits: the other digits in floating point, not counted
            as_double = float(value)
            for rest in whole[k:]:
                if as_double >= 1.7976931348623157e307:
                    raise ValueError(f"number too big for rapidjson: {text!r}")
                as_double = as_double * 10 + int(rest)
            break
        value, digits_seen = value * 10 + int(digit), digits_seen + 1
    if fraction:
        taken = 0
        if as_double is None:
            while taken < len(fraction) and value <= 2**53 - 1:
                value, taken, power = value * 10 + int(fraction[taken]), taken + 1, power - 1
                digits_seen += value != 0
            as_double = float(value)
        for digit in fraction[taken:]:
            if digits_seen < 17:
                as_double, power = as_double * 10.0 + int(digit), power - 1
                digits_seen += as_double > 0.0
    if exponent is not None:
        as_double = float(value) if as_double is None else as_double
        if not exponent.startswith("-") and int(exponent) > 308 - power:
            raise ValueError(f"number too big for rapidjson: {text!r}")
        power += int(exponent)
    if as_double is None:
        return -float(value) if sign else float(value)
    if power < -308:
        as_double, power = as_double / _POWERS_OF_TEN[308], power + 308
    if power < -308:
        as_double = 0.0
    elif power >= 0:
        as_double = as_double * _POWERS_OF_TEN[power]
    else:
        as_double = as_double / _POWERS_OF_TEN[-power]
    return -as_double if sign else as_double


def _flop_range_reason(value: float) -> str | None:
    """Why ``value`` flop is out of range (below :data:`MIN_FLOP`, other than 0, or from :data:`FLOP_LIMIT` on),
    or None."""
    if value == 0 or MIN_FLOP <= value < FLOP_LIMIT:
        return None
    if value < MIN_FLOP:
        return ("below 1 flop: SimGrid's rate (host speed / flop) can overflow to infinity, and a real Batsim 4.2.1 "
                "then stops answering")
    return "2**64 flop or more: a real Batsim 4.2.1 no longer reads it exactly (and aborts from 1e23 on)"


#: The range of flop amounts, as the messages state it.
FLOP_RANGE = "a host's flop must be 0 or from 1 to below 2**64 (1.8e19)"


def flop_problem(value: float) -> str | None:
    """Why ``value`` (flop a host computes, as a JSON workload holds it) would make a real Batsim 4.2.1 and the
    embedded engine disagree, or None: it must be 0 (nothing to compute) or from :data:`MIN_FLOP` to below
    :data:`FLOP_LIMIT`, and be read by Batsim as the same number (see :func:`batsim_double`; the text is what
    ``json.dumps`` writes, as the workload is handed to Batsim)."""
    if (reason := _flop_range_reason(value)) is not None:
        return f"{value!r} flop is {reason}; {FLOP_RANGE}"
    text = json.dumps(value)
    if batsim_double(text) != float(value):
        return (f"{text} flop is read as {batsim_double(text)!r} by Batsim 4.2.1 (rapidjson without full precision),"
                " so the engines would disagree; write it as an integer or with at most 15 significant digits")
    return None


def json_flop(value: float) -> int | float:
    """``value`` (flop, from :data:`MIN_FLOP` to below :data:`FLOP_LIMIT`) as the converter writes it: an integer
    when it has no fraction (any size: Batsim reads 64-bit integers exactly), else rounded to 15 significant
    digits, a decimal that Batsim's parser reads exactly (at most 15 digits, scaled by a power of ten of the
    table it multiplies by)."""
    value = float(value)
    if value != math.floor(value):
        value = float(f"{value:.15g}")
    return int(value) if value == math.floor(value) else value


class NoJobsError(ValueError):
    """A workload with no job to simulate: an empty log, a log of header lines only, or one whose every job is
    dropped by the conversion (the message gives the counts per reason).

    Attributes:
        path: the file.
        reason: what was found instead of jobs.
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path, self.reason = str(path), reason
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}: no job in the workload: {self.reason}"

    def __reduce__(self):
        return (type(self), (self.path, self.reason))


def _no_job_reason(log: SwfLog, dropped: dict[str, int], n_not_considered: int) -> str:
    """Why a conversion of ``log`` kept no job: no job line (an empty file, a header only, or malformed lines only),
    or every job dropped (``dropped``: reason -> count) or cut by ``max_jobs``; with what to do when there is an
    option for it."""
    if not log.n_jobs:
        skipped = log.anomalies.n_skipped if log.anomalies is not None else 0
        if skipped:
            return f"its {skipped} job lines are all malformed (skipped); the log holds no readable job"
        if log.header_entries:
            entries = len(log.header_entries)
            return f"the log holds no job line, only its header ({entries} entr{'y' if entries == 1 else 'ies'})"
        empty = Path(log.path).is_file() and Path(log.path).stat().st_size == 0
        return "the file is empty (0 bytes)" if empty else "the log holds blank lines only (or none, decompressed)"
    counts = ", ".join(f"{reason}: {count}" for reason, count in dropped.items() if count)
    parts = [f"all {log.n_jobs} SWF jobs were dropped ({counts})" if counts else f"{log.n_jobs} SWF jobs"]
    if n_not_considered:
        parts.append(f"{n_not_considered} not considered after max_jobs")
    hint = "; keep zero run times with --zero-runtime min" if dropped.get("run_time_zero") else ""
    return ", ".join(parts) + hint


def _flop_amounts(log: SwfLog, durations: np.ndarray, job_durations: np.ndarray, job_lines: np.ndarray,
                  node_speed: float) -> list:
    """The flop of each of ``durations`` (seconds) at ``node_speed`` (flop/s), as the JSON numbers written (see
    :func:`json_flop`): integers, or 15 significant digits when an amount has a fraction.

    Raises:
        SwfFormatError: an amount below :data:`MIN_FLOP` or from :data:`FLOP_LIMIT` on, where a real Batsim and
            the embedded engine disagree; it names the first such job (``job_durations`` and ``job_lines``: the
            converted jobs' durations and SWF lines, in file order) and counts the others.
    """
    amounts = durations * node_speed
    bad = ~((amounts >= MIN_FLOP) & (amounts < FLOP_LIMIT))
    if bad.any():
        jobs = np.isin(job_durations, durations[bad])
        first = int(np.flatnonzero(jobs)[0])
        others = int(jobs.sum()) - 1
        amount = float(job_durations[first]) * node_speed
        raise SwfFormatError(
            log.path, int(job_lines[first]), "run_time",
            f"{float(job_durations[first]):.6g} s x recorded speed {node_speed:.6g} flop/s (--recorded-speed) = "
            f"{amount:.6g} flop per node{f' (and {others} more jobs)' if others else ''}, "
            f"{_flop_range_reason(amount)}; {FLOP_RANGE}: choose another --recorded-speed",
        )
    return [json_flop(amount) for amount in amounts]


@dataclass(frozen=True)
class _Options:
    """The options of :func:`swf_to_workload`, checked, in the order the report lists them."""

    profile: str
    node_speed: float | None
    res_source: str
    res_fallback: bool
    walltime_fallback: str | float
    walltime_factor: float | None
    zero_runtime: str
    min_runtime: float
    oversized: str
    nb_res: int | None
    max_jobs: int | None


def _real_above_zero(value: Any) -> bool:
    return isinstance(value, Real) and math.isfinite(value) and value > 0


def _checked_options(options: _Options) -> _Options:
    """``options``, each checked (see :func:`swf_to_workload`).

    Raises:
        ValueError: the first invalid option, in the order of the parameters.
    """
    if options.profile not in PROFILE_TYPES:
        raise ValueError(f"profile must be 'delay' or 'parallel_homogeneous', not {options.profile!r}")
    if options.profile == "parallel_homogeneous" and not _real_above_zero(options.node_speed):
        raise ValueError(
            "profile='parallel_homogeneous' needs node_speed: the recorded machine's node speed in flop/s (> 0)"
        )
    if options.res_source not in RES_SOURCE_CHOICES:
        raise ValueError(f"res_source must be 'allocated' or 'requested', not {options.res_source!r}")
    if options.zero_runtime not in ZERO_RUNTIME_CHOICES:
        raise ValueError(f"zero_runtime must be 'drop' or 'min', not {options.zero_runtime!r}")
    if not _real_above_zero(options.min_runtime):
        raise ValueError(f"min_runtime must be a positive number of seconds, not {options.min_runtime!r}")
    if options.oversized not in ("drop", "keep"):
        raise ValueError(f"oversized must be 'drop' or 'keep', not {options.oversized!r}")
    if options.walltime_factor is not None and not _real_above_zero(options.walltime_factor):
        raise ValueError(f"walltime_factor must be a number > 0 or None, not {options.walltime_factor!r}")
    fallback = options.walltime_fallback
    if (fallback not in ("runtime", "drop") if isinstance(fallback, str)
            else isinstance(fallback, bool) or not _real_above_zero(fallback)):
        raise ValueError(f"walltime_fallback must be 'runtime', 'drop' or seconds > 0, not {fallback!r}")
    nb_res, max_jobs = options.nb_res, options.max_jobs
    if nb_res is not None and (int(nb_res) != nb_res or nb_res <= 0):
        raise ValueError(f"nb_res must be a positive integer, not {nb_res!r}")
    if max_jobs is not None and (int(max_jobs) != max_jobs or max_jobs < 0):
        raise ValueError(f"max_jobs must be a non-negative integer, not {max_jobs!r}")
    return options


@dataclass
class _JobFields:
    """The Batsim fields of every job of an SWF log (one value per job line, in file order) and what decided them.

    Attributes:
        line: SWF line numbers.
        run: the recorded run time (s; -1 unknown); ``duration``: the profile's (0 raised to ``min_runtime`` with
            ``zero_runtime="min"``).
        res: processors requested from Batsim; ``use_secondary``: taken from the other SWF processor count.
        walltime: seconds; ``walltime_known``: the requested time is > 0; ``raised``: raised to
            ``walltime_factor`` x the run time.
        submission: the SWF submission time (s).
    """

    line: np.ndarray
    run: np.ndarray
    duration: np.ndarray
    res: np.ndarray
    use_secondary: np.ndarray
    walltime: np.ndarray
    walltime_known: np.ndarray
    raised: np.ndarray
    submission: np.ndarray


def _job_fields(frame: Any, options: _Options) -> _JobFields:
    """The Batsim fields of each job of ``frame`` (an SWF job frame, see :class:`~batreplay.workloads.swf.SwfLog`)
    with ``options`` (module docstring: resources, run time, walltime)."""
    n = len(frame)
    run = frame["run_time"].to_numpy(dtype=np.float64)
    requested_time = frame["requested_time"].to_numpy(dtype=np.float64)
    allocated = frame["allocated_processors"].to_numpy(dtype=np.int64)
    requested = frame["requested_processors"].to_numpy(dtype=np.int64)

    primary, secondary = (allocated, requested) if options.res_source == "allocated" else (requested, allocated)
    use_secondary = (primary <= 0) & (secondary > 0) if options.res_fallback else np.zeros(n, dtype=bool)
    res = np.where(use_secondary, secondary, primary)

    duration = np.where((run == 0) & (options.zero_runtime == "min"), float(options.min_runtime), run)

    walltime_known = requested_time > 0
    if options.walltime_fallback == "runtime":
        walltime = np.where(walltime_known, requested_time, duration)
    elif options.walltime_fallback == "drop":
        walltime = requested_time.copy()
    else:
        walltime = np.where(walltime_known, requested_time, float(options.walltime_fallback))
    raised = np.zeros(n, dtype=bool)
    if options.walltime_factor is not None:
        floor = float(options.walltime_factor) * duration
        raised = walltime_known & (floor > walltime)
        walltime = np.where(raised, floor, walltime)

    return _JobFields(line=frame["line"].to_numpy(dtype=np.int64), run=run, duration=duration, res=res,
                      use_secondary=use_secondary, walltime=walltime, walltime_known=walltime_known, raised=raised,
                      submission=frame["submission_time"].to_numpy(dtype=np.float64))


@dataclass
class _PlatformSize:
    """The size jobs are checked against (``size``: None until the largest converted job decides), where it comes
    from (``source``, :attr:`ConversionReport.nb_res_source`), the header's ``MaxProcs`` (None when missing or not
    positive) and the header's notes."""

    size: int | None
    source: str
    max_procs: int | None
    header_notes: list[str]


def _platform_size(max_procs: int | None, nb_res: int | None) -> _PlatformSize:
    """The size jobs are checked against: the given ``nb_res`` (the platform), else a positive ``MaxProcs``."""
    header_notes: list[str] = []
    if max_procs is not None and max_procs <= 0:
        header_notes.append(f"MaxProcs {max_procs} ignored: not a positive processor count")
        max_procs = None
    if nb_res is not None:
        if max_procs is not None and max_procs != nb_res:
            header_notes.append(
                f"MaxProcs {max_procs} differs from nb_res {nb_res}: jobs are checked against nb_res"
            )
        return _PlatformSize(int(nb_res), "given", max_procs, header_notes)
    if max_procs is not None:
        return _PlatformSize(max_procs, "MaxProcs of the header", max_procs, header_notes)
    return _PlatformSize(None, "largest converted job", max_procs, header_notes)


def _drop_masks(frame: Any, fields: _JobFields, options: _Options,
                platform_size: int | None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Reason (:data:`DROP_REASONS`) -> mask of the jobs dropped for it, each job under the first reason that
    applies, and the mask of all dropped jobs."""
    n = len(frame)
    none = np.zeros(n, dtype=bool)
    dropped = np.zeros(n, dtype=bool)
    masks: dict[str, np.ndarray] = {}

    def claim(reason: str, mask: np.ndarray) -> None:
        mask = mask & ~dropped
        masks[reason] = mask
        dropped[mask] = True

    run_missing = fields.run == MISSING
    claim("run_time_missing", run_missing)
    claim("run_time_negative", (fields.run < 0) & ~run_missing)
    claim("run_time_zero", fields.run == 0 if options.zero_runtime == "drop" else none)
    claim("res_missing", ~(fields.res > 0))
    claim("walltime_missing", ~fields.walltime_known if options.walltime_fallback == "drop" else none)
    submission_missing = fields.submission == MISSING
    claim("submission_time_missing", submission_missing)
    claim("submission_time_negative", (fields.submission < 0) & ~submission_missing)
    claim("time_beyond_precision", np.logical_or.reduce(
        [np.abs(frame[c].to_numpy(dtype=np.float64)) >= EXACT_SECONDS_LIMIT
         for c in ("submission_time", "wait_time", "run_time", "requested_time")]
    ))
    oversize = fields.res > platform_size if platform_size is not None else none
    claim("res_exceeds_nb_res", oversize if options.oversized == "drop" else none)
    duplicate = np.zeros(n, dtype=bool)
    remaining = np.flatnonzero(~dropped)
    duplicate[remaining] = frame["job_id"].iloc[remaining].duplicated(keep="first").to_numpy()
    claim("duplicate_job_id", duplicate)
    return masks, dropped


def _considered(kept: np.ndarray, max_jobs: int | None) -> np.ndarray:
    """The SWF jobs considered: all, or with ``max_jobs``, those up to the ``max_jobs``-th job ``kept``."""
    considered = np.ones(len(kept), dtype=bool)
    if max_jobs is not None:
        positions = np.flatnonzero(kept)
        if len(positions) > max_jobs:
            cutoff = positions[max_jobs - 1] if max_jobs > 0 else -1
            considered = np.arange(len(kept)) <= cutoff
    return considered


def _conversion_report(log: SwfLog, fields: _JobFields, options: _Options, size: _PlatformSize,
                       drop_masks: dict[str, np.ndarray], kept: np.ndarray,
                       considered: np.ndarray) -> ConversionReport:
    """The :class:`ConversionReport` of converting ``log``: ``kept`` and ``considered`` are the masks of the jobs
    converted and of those before the ``max_jobs`` cut; ``options.nb_res`` is the size the workload is for."""
    n, nb_res, max_procs = len(kept), options.nb_res, size.max_procs
    res, walltime, duration = fields.res, fields.walltime, fields.duration
    run_zero, fallback = fields.run == 0, options.walltime_fallback
    change_masks = {
        "run_time_zero_set_to_min": run_zero & (options.zero_runtime == "min"),
        "res_from_requested": fields.use_secondary & (options.res_source == "allocated"),
        "res_from_allocated": fields.use_secondary & (options.res_source == "requested"),
        "walltime_from_run_time": ~fields.walltime_known & (fallback == "runtime"),
        "walltime_from_fallback_value": ~fields.walltime_known & isinstance(fallback, Real),
        "walltime_raised_to_factor_x_run_time": fields.raised,
    }
    note_masks = {
        "walltime_below_run_time": walltime < duration,
        "walltime_equals_run_time": walltime == duration,
        "res_exceeds_nb_res_kept": (res > nb_res) & (options.oversized == "keep"),
        "res_exceeds_max_procs": (res > max_procs) & (res <= nb_res)
        if max_procs is not None and size.source == "given"
        else np.zeros(n, dtype=bool),
    }

    def lines_of(mask: np.ndarray) -> np.ndarray:
        return fields.line[mask].astype(np.int64)

    return ConversionReport(
        source=str(log.path),
        n_swf_jobs=n,
        n_jobs=int(kept.sum()),
        n_not_considered=int(n - considered.sum()),
        dropped={reason: lines_of(drop_masks[reason] & considered) for reason in DROP_REASONS},
        changed={reason: lines_of(change_masks[reason] & kept) for reason in CHANGE_REASONS},
        notes={reason: lines_of(note_masks[reason] & kept) for reason in NOTE_REASONS},
        options=dataclasses.asdict(options),
        nb_res_source=size.source,
        header_notes=size.header_notes,
    )


def _profiles(log: SwfLog, job_duration: np.ndarray, job_lines: np.ndarray,
              options: _Options) -> tuple[dict[str, dict[str, Any]], np.ndarray]:
    """The profiles of the converted jobs, one per distinct duration (``job_duration``, file order; ``job_lines``:
    their SWF lines, for error messages), and each job's profile name (an object array).

    Raises:
        SwfFormatError: a flop amount out of range (see :func:`_flop_amounts`).
    """
    unique_durations, inverse = np.unique(job_duration, return_inverse=True)
    prefix = "delay_" if options.profile == "delay" else "ph_"
    unique_names = [prefix + value_label(v) for v in unique_durations]
    if options.profile == "delay":
        amounts = _json_numbers(unique_durations)
        profiles = {name: {"type": "delay", "delay": d} for name, d in zip(unique_names, amounts)}
    else:
        amounts = _flop_amounts(log, unique_durations, job_duration, job_lines, float(options.node_speed))
        profiles = {
            name: {"type": "parallel_homogeneous", "cpu": c, "com": 0} for name, c in zip(unique_names, amounts)
        }
    job_profiles = (np.asarray(unique_names, dtype=object)[inverse] if len(job_duration)
                    else np.asarray([], dtype=object))
    return profiles, job_profiles


def _converted_workload(log: SwfLog, fields: _JobFields, rows: np.ndarray, options: _Options,
                        report: ConversionReport) -> BatsimWorkload:
    """The :class:`BatsimWorkload` of the SWF jobs at positions ``rows`` of ``log`` (file order).

    Raises:
        SwfFormatError: the converted jobs would keep the simulation running past 2**53 s, or a flop amount out
            of range.
    """
    frame = log.jobs
    swf_submission = fields.submission[rows]
    origin = float(swf_submission.min()) if len(rows) else 0.0
    submission = _rebase(swf_submission, origin)
    job_duration = fields.duration[rows]
    if len(rows):
        horizon = float(submission.max()) + float(np.sum(job_duration))
        if horizon >= EXACT_SECONDS_LIMIT:
            raise SwfFormatError(
                log.path, None, "submission_time",
                f"the converted jobs span up to {horizon:.6g} s (last submission + all run times), beyond "
                "2**53 s where seconds are no longer exact; check the log's times or cut it with max_jobs",
            )
    job_walltime = fields.walltime[rows]
    job_res = fields.res[rows].astype(np.int64)
    profiles, job_profiles = _profiles(log, job_duration, fields.line[rows], options)

    ids = frame["job_id"].to_numpy()[rows].astype(str).tolist()  # one str per job, shared by both outputs below
    jobs = [
        {"id": i, "subtime": s, "walltime": w, "res": r, "profile": p}
        for i, s, w, r, p in zip(
            ids,
            _json_numbers(submission),
            _json_numbers(job_walltime),
            job_res.tolist(),
            job_profiles.tolist(),
        )
    ]
    job_table = _job_table({
        "job_id": ids,
        "submission_time": submission,
        "res": job_res,
        "walltime": job_walltime,
        "run_time": job_duration,
        "profile": job_profiles,
        "user_id": frame["user_id"].to_numpy(dtype=np.int64)[rows],
        "swf_submission_time": swf_submission,
        "swf_wait_time": frame["wait_time"].to_numpy(dtype=np.float64)[rows],
        "swf_line": fields.line[rows],
    })
    return BatsimWorkload(nb_res=int(options.nb_res), jobs=jobs, profiles=profiles, job_table=job_table,
                          report=report, submission_origin=origin, unix_start_time=log.unix_start_time,
                          source=log.path)


def _job_table(columns: dict[str, Any]) -> pd.DataFrame:
    """The job table of :class:`BatsimWorkload` (columns :data:`JOB_TABLE_COLUMNS`; ``job_id`` and ``profile`` as
    Python strings, an object column)."""
    import pandas as pd

    text = {"job_id", "profile"}
    return pd.DataFrame({name: pd.Series(values, dtype=object) if name in text else values
                         for name, values in columns.items()}, columns=list(JOB_TABLE_COLUMNS))


def swf_to_workload(
    source: SwfLog | str | Path,
    *,
    profile: Literal["delay", "parallel_homogeneous"] = "delay",
    node_speed: float | None = None,
    res_source: Literal["allocated", "requested"] = "allocated",
    res_fallback: bool = True,
    walltime_fallback: Literal["runtime", "drop"] | float = "runtime",
    walltime_factor: float | None = None,
    zero_runtime: Literal["drop", "min"] = "drop",
    min_runtime: float = 1.0,
    oversized: Literal["drop", "keep"] = "drop",
    nb_res: int | None = None,
    max_jobs: int | None = None,
    on_error: Literal["raise", "skip"] = "raise",
) -> BatsimWorkload:
    """Convert an SWF log to a Batsim workload (see the module docstring for the field mapping).

    Args:
        source: a parsed :class:`SwfLog` or the path of an SWF file (read with ``on_error``).
        profile: ``"delay"``: ``{"type": "delay", "delay": run_time}``; ``"parallel_homogeneous"``:
            ``{"type": "parallel_homogeneous", "cpu": run_time * node_speed, "com": 0}``. Jobs with the same
            run time share one profile, named ``delay_<run time>`` / ``ph_<run time>`` (e.g. ``delay_3600``,
            ``delay_12.5``).
        node_speed: flop/s of one node of the recorded machine; required for ``parallel_homogeneous``, so
            that on a platform of that speed the job lasts exactly its run time.
        res_source: which SWF processor count gives ``res``; the other one is the fallback.
        res_fallback: use the other processor count when the chosen one is missing (<= 0); if False, such
            jobs are dropped (``res_missing``).
        walltime_fallback: walltime when the requested time is missing or <= 0: ``"runtime"`` (the job's run
            time: a ``delay`` job then ends COMPLETED_WALLTIME_REACHED, a ``parallel_homogeneous`` one races its
            walltime, see ``walltime_equals_run_time`` in :data:`NOTE_REASONS`), a positive number of seconds, or
            ``"drop"`` (drop the job).
        walltime_factor: when set (> 0), each walltime becomes ``max(requested time, walltime_factor x run
            time)``, as Batsim's own SWF converter does with its ``--job_walltime_factor`` (default 2 there);
            Madon et al. 2024 replay KTH-SP2 that way (their Table 1 is reproduced with factor 2). Without it
            (default), the walltime is the recorded requested time and Batsim kills jobs that run past it,
            which matters when nodes are made slower.
        zero_runtime: jobs with run time 0: ``"drop"`` (default) or ``"min"`` (run time = ``min_runtime``).
        min_runtime: seconds (> 0) given to zero-run-time jobs with ``zero_runtime="min"``; default 1 s, the
            resolution of most SWF logs.
        oversized: jobs with more processors than ``nb_res``: ``"drop"`` or ``"keep"`` (noted).
        nb_res: platform size (number of resources); default ``MaxProcs`` of the header when positive, else
            the largest ``res`` converted. When given, ``MaxProcs`` does not drop any job (see the module).
        max_jobs: keep only the first ``max_jobs`` converted jobs (file order); the SWF jobs after the last
            one are reported as not considered.
        on_error: passed to :func:`~batreplay.workloads.swf.read_swf` when ``source`` is a path.

    Returns:
        The :class:`BatsimWorkload`, with its :class:`ConversionReport`.

    Raises:
        ValueError: an invalid option (unknown mode, missing or non-positive ``node_speed`` in
            ``parallel_homogeneous`` mode, non-positive ``min_runtime`` / fallback / ``nb_res``, negative
            ``max_jobs``), or no way to determine ``nb_res`` (no job converted and no MaxProcs).
        SwfFormatError: from reading the file; or converted jobs that would keep the simulation running
            past 2**53 s (last submission + all run times), where seconds are no longer exact.
    """
    options = _checked_options(_Options(profile, node_speed, res_source, res_fallback, walltime_fallback,
                                        walltime_factor, zero_runtime, min_runtime, oversized, nb_res, max_jobs))
    log = source if isinstance(source, SwfLog) else read_swf(source, on_error=on_error)
    fields = _job_fields(log.jobs, options)
    size = _platform_size(log.max_procs, nb_res)
    drop_masks, dropped = _drop_masks(log.jobs, fields, options, size.size)
    considered = _considered(~dropped, max_jobs)
    kept = ~dropped & considered
    rows = np.flatnonzero(kept)
    if not len(rows):
        counts = {reason: int((mask & considered).sum()) for reason, mask in drop_masks.items()}
        raise NoJobsError(log.path, _no_job_reason(log, counts, int(len(kept) - considered.sum())))
    if nb_res is None:  # the size the workload is for: MaxProcs, else the largest converted job
        largest = int(size.size) if size.size is not None else int(fields.res[rows].max())
        options = dataclasses.replace(options, nb_res=largest)
    report = _conversion_report(log, fields, options, size, drop_masks, kept, considered)
    return _converted_workload(log, fields, rows, options, report)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Deepest nesting of JSON arrays and objects accepted inside one job or profile (Batsim's own fields are at
#: most 2 deep); deeper values would overflow Python's recursion limit when the workload is copied or written.
MAX_NESTING = 32


def _check_nesting(source: str, where: str, value: Any) -> None:
    """Raise WorkloadFormatError when ``value`` nests arrays/objects more than :data:`MAX_NESTING` deep."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            raise WorkloadFormatError(source, where, f"arrays/objects nested more than {MAX_NESTING} levels deep")
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


def _check_profile(source: str, name: str, prof: Any, names: Mapping[str, Any]) -> None:
    where = f"profiles.{name}"
    if not isinstance(prof, dict):
        raise WorkloadFormatError(source, where, "a profile must be a JSON object")
    _check_nesting(source, where, prof)
    kind = prof.get("type")
    if not isinstance(kind, str):
        raise WorkloadFormatError(source, f"{where}.type", "missing or not a string")
    if kind == "delay":
        if not _is_number(prof.get("delay")):
            raise WorkloadFormatError(source, f"{where}.delay", "missing or not a number")
        if prof["delay"] <= 0:
            raise WorkloadFormatError(
                source, f"{where}.delay", f"must be > 0 (Batsim refuses a delay of {prof['delay']} s)"
            )
        if prof["delay"] >= EXACT_SECONDS_LIMIT:
            raise WorkloadFormatError(
                source, f"{where}.delay", f"{prof['delay']!r} s is beyond 2**53 s, where seconds are not exact"
            )
    elif kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        for key in ("cpu", "com"):
            if not _is_number(prof.get(key)) or prof[key] < 0:
                raise WorkloadFormatError(source, f"{where}.{key}", "missing or not a number >= 0")
        if (problem := flop_problem(prof["cpu"])) is not None:
            raise WorkloadFormatError(source, f"{where}.cpu", problem)
    elif kind == "parallel":
        for key in ("cpu", "com"):
            values = prof.get(key)
            if not isinstance(values, list) or not all(_is_number(v) and v >= 0 for v in values):
                raise WorkloadFormatError(source, f"{where}.{key}", "missing or not a list of numbers >= 0")
        if not prof["cpu"]:
            raise WorkloadFormatError(source, f"{where}.cpu", "empty: one value per allocated host is needed")
        for k, value in enumerate(prof["cpu"]):
            if (problem := flop_problem(value)) is not None:
                raise WorkloadFormatError(source, f"{where}.cpu[{k}]", problem)
        if len(prof["com"]) != len(prof["cpu"]) ** 2:
            raise WorkloadFormatError(
                source, f"{where}.com",
                f"{len(prof['com'])} values for {len(prof['cpu'])} hosts: the matrix needs {len(prof['cpu']) ** 2}",
            )
    elif kind == "composed":
        seq = prof.get("seq")
        if not isinstance(seq, list) or not all(isinstance(s, str) for s in seq):
            raise WorkloadFormatError(source, f"{where}.seq", "missing or not a list of profile names")
        for k, s in enumerate(seq):
            if s not in names:
                raise WorkloadFormatError(source, f"{where}.seq[{k}]", f"unknown profile {s!r}")


def validate_workload(data: Any, source: str | Path = "<dict>") -> dict:
    """Check a Batsim workload document (already decoded from JSON) and return it.

    Checks (Batsim 4.2.1 ``docs/input-workload.rst`` and its loader's checks, plus what the embedded engine
    would only find while simulating): ``nb_res`` a positive integer; ``jobs`` a list; ``profiles`` an object;
    each job has ``id`` (string or integer, ``name`` or ``workload!name``, the name unique), ``subtime``
    (number of seconds, 0 <= subtime < 2**53), ``res`` (integer > 0; equal to the length of ``cpu`` for a
    ``parallel`` profile), ``profile`` (a name in ``profiles``), optional ``walltime`` (number, -1 or > 0);
    each profile has a string ``type``; for ``delay``: 0 < ``delay`` < 2**53 s; for
    ``parallel_homogeneous``/``_total``: numbers ``cpu``, ``com`` >= 0; for ``parallel``: a non-empty list
    ``cpu`` and a list ``com`` of ``len(cpu)**2`` numbers >= 0; every ``cpu`` amount of those three types 0 or from
    1 to below 2**64 flop, and read alike by a real Batsim 4.2.1 (see :func:`flop_problem`); for ``composed``:
    ``seq`` of known profile names. Other profile types are only checked for ``type``. Values inside a job or
    profile may not nest arrays/objects more than :data:`MAX_NESTING` deep.

    Raises:
        WorkloadFormatError: naming ``source`` and the field (e.g. ``jobs[12].profile``).
    """
    source = str(source)
    if not isinstance(data, dict):
        raise WorkloadFormatError(source, None, "the workload must be a JSON object")
    if "nb_res" not in data:
        raise WorkloadFormatError(source, "nb_res", "missing")
    if not _is_integer(data["nb_res"]) or data["nb_res"] <= 0:
        raise WorkloadFormatError(source, "nb_res", f"must be a positive integer, not {data['nb_res']!r}")
    if not isinstance(data.get("jobs"), list):
        raise WorkloadFormatError(source, "jobs", "missing or not a list")
    if not isinstance(data.get("profiles"), dict):
        raise WorkloadFormatError(source, "profiles", "missing or not an object")
    profiles = data["profiles"]
    for name, prof in profiles.items():
        _check_profile(source, name, prof, profiles)
    seen: set[str] = set()
    for k, job in enumerate(data["jobs"]):
        where = f"jobs[{k}]"
        if not isinstance(job, dict):
            raise WorkloadFormatError(source, where, "a job must be a JSON object")
        for key in ("id", "subtime", "res", "profile"):
            if key not in job:
                raise WorkloadFormatError(source, f"{where}.{key}", "missing")
        job_id = job["id"]
        if not (isinstance(job_id, str) or _is_integer(job_id)):
            raise WorkloadFormatError(source, f"{where}.id", f"must be a string or an integer, not {job_id!r}")
        # Batsim names a job "workload!name"; an id may be given either way, so the name decides uniqueness.
        name = str(job_id).split("!", 1)[-1]
        if not name or "!" in name:
            raise WorkloadFormatError(source, f"{where}.id", f"{job_id!r}: expected 'name' or 'workload!name'")
        if name in seen:
            raise WorkloadFormatError(source, f"{where}.id", f"duplicate job id {job_id!r} (job name {name!r})")
        seen.add(name)
        for value in job.values():
            if isinstance(value, (dict, list)):
                _check_nesting(source, where, value)
        submission = job["subtime"]
        if not _is_number(submission):
            raise WorkloadFormatError(source, f"{where}.subtime", f"not a number: {submission!r}")
        if submission < 0:
            raise WorkloadFormatError(source, f"{where}.subtime", f"negative ({submission!r} s): time starts at 0")
        if submission >= EXACT_SECONDS_LIMIT:
            raise WorkloadFormatError(
                source, f"{where}.subtime", f"{submission!r} s is beyond 2**53 s, where seconds are not exact"
            )
        if not _is_integer(job["res"]) or job["res"] <= 0:
            raise WorkloadFormatError(source, f"{where}.res", f"must be an integer > 0, not {job['res']!r}")
        if "walltime" in job:
            walltime = job["walltime"]
            if not _is_number(walltime) or not (walltime == -1 or walltime > 0):
                raise WorkloadFormatError(source, f"{where}.walltime", f"must be -1 or > 0, not {walltime!r}")
        if not isinstance(job["profile"], str):
            raise WorkloadFormatError(source, f"{where}.profile", "not a string")
        if job["profile"] not in profiles:
            raise WorkloadFormatError(
                source, f"{where}.profile", f"job {job_id!r} uses unknown profile {job['profile']!r}"
            )
        prof = profiles[job["profile"]]
        if prof["type"] == "parallel" and len(prof["cpu"]) != job["res"]:
            raise WorkloadFormatError(
                source, f"{where}.res",
                f"{job['res']} hosts, but its parallel profile {job['profile']!r} gives {len(prof['cpu'])} cpu values",
            )
    return data


#: Bytes of a JSON workload looked at before the rest is read: an error there that no continuation of the text
#: could repair (any but an unterminated string, and not within :data:`_JSON_LOOKAHEAD` characters of the cut) is
#: reported at once, however large the file.
JSON_HEAD = 1 << 16
_JSON_LOOKAHEAD = 16  # longer than any JSON token a cut could leave unfinished, but a string ("-Infinity": 9)


def _utf8_text(path: Path, raw: bytes, final: bool = True) -> str:
    """``raw`` decoded as UTF-8 (``final=False``: a character cut at the end is left out).

    Raises:
        WorkloadFormatError: not UTF-8, naming the line and column of the first bad byte.
    """
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(raw, final=final)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise WorkloadFormatError(
            path, None, f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line}, column {column}"
        ) from None


def _json_error(path: Path, exc: json.JSONDecodeError) -> WorkloadFormatError:
    return WorkloadFormatError(path, None, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")


def _check_json_head(path: Path, head: bytes) -> None:
    """Refuse now a workload whose first :data:`JSON_HEAD` bytes (``head``, the rest of the file not read yet) are
    not UTF-8 or hold a JSON error that no continuation could repair, with the message the whole file would get.

    Raises:
        WorkloadFormatError: naming the file, line and column.
    """
    text = _utf8_text(path, head, final=False)
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos < len(text) - _JSON_LOOKAHEAD and not exc.msg.startswith("Unterminated string"):
            raise _json_error(path, exc) from None
    except (RecursionError, ValueError):  # decided on the whole file
        pass


def read_workload_json(path: str | Path) -> dict:
    """Read and validate a Batsim JSON workload file (see :func:`validate_workload` for the checks).

    The file is UTF-8 text; a byte order mark at its start is skipped. Its first :data:`JSON_HEAD` bytes are
    checked before the rest is read, so a file that is not JSON from its first line is refused at once.

    Returns:
        The decoded document.

    Raises:
        WorkloadFormatError: naming the file: a folder or not a regular file (a FIFO, a device), not UTF-8 (line
            and column of the first bad byte), not JSON (line and column), nested too deeply to decode, or an
            invalid field (named).
        FileNotFoundError: no such file.
    """
    path = Path(path)
    problem = not_a_file_reason(path)
    if problem == "no such file":
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
    if problem is not None:
        raise WorkloadFormatError(path, None, f"{problem}, not a Batsim workload")
    with open(path, "rb") as handle:
        raw = handle.read(JSON_HEAD)
        if len(raw) == JSON_HEAD:
            _check_json_head(path, raw.removeprefix(codecs.BOM_UTF8))
            handle.seek(0)
            raw = handle.read()
    text = _utf8_text(path, raw.removeprefix(codecs.BOM_UTF8))
    del raw  # the text only, while JSON is decoded
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(path, exc) from None
    except RecursionError:
        raise WorkloadFormatError(path, None, "invalid JSON: arrays/objects nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise WorkloadFormatError(path, None, f"invalid JSON: {exc}") from None
    return validate_workload(data, path)
