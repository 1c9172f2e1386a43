"""What a campaign report says about each workload log, read from the SWF file itself.

- :func:`recorded_log_metrics`: the schedule the log recorded, as the first row of Madon, Da Costa, Pierson
  2024's Table 1;
- :func:`log_facts`: the log's jobs up to the last one the campaign replays, how many have a recorded run time
  of 0 s and what the campaign did with them (``zero_runtime``: dropped, or run for 1 s; Batsim refuses a delay
  of 0 s), and the log's clock (``UnixStartTime`` and ``TimeZoneString`` of the header) for the submissions by
  hour of the week (Madon et al. 2024, Fig. 8).

Both read SWF logs only: a Batsim JSON workload has no header, no recorded schedule and no SWF line numbers
(``campaign report`` leaves such logs out of them and says so).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from batreplay.analysis.metrics import summarize, warm_up_window
from batreplay.campaign.platforms import recorded_platform_path
from batreplay.campaign.spec import CampaignSpec, LogSpec
from batreplay.formats.out_jobs import SUCCESS, validate_out_jobs
from batreplay.platforms.reader import read_platform
from batreplay.workloads.swf import SwfLog, read_swf

#: How the ``zero_runtime`` choices read in the report.
ZERO_RUNTIME_TREATMENT = {"drop": "dropped", "min": "kept, run for 1 s"}


class NoRecordedScheduleError(ValueError):
    """A log none of whose selected jobs has a recorded schedule (submission, wait and run times >= 0 and a
    processor count > 0), e.g. a synthetic log whose wait times are all -1: it has no recorded-log row."""


@dataclass(frozen=True)
class LogClock:
    """The wall clock of a log: simulated time t (s after the first replayed submission) happened at Unix time
    ``unix_origin + t``, shown in ``zone``.

    Attributes:
        unix_origin: Unix time (s) of the first replayed job's recorded submission: ``UnixStartTime`` of the
            header + that job's SWF submission time; None when the header has no ``UnixStartTime``.
        zone: the time zone: ``TimeZoneString`` of the header (daylight saving time included), else the fixed
            offset of ``TimeZone`` (seconds east of UTC), else UTC.
        description: one sentence saying which header fields were used.
    """

    unix_origin: float | None
    zone: dt.tzinfo
    description: str

    def local_times(self, simulated: np.ndarray) -> pd.DatetimeIndex:
        """Local wall-clock times of simulated times (s).

        Raises:
            ValueError: the log has no ``UnixStartTime`` (:attr:`unix_origin` is None).
        """
        if self.unix_origin is None:
            raise ValueError("the log's header has no UnixStartTime: its wall clock is unknown")
        return pd.to_datetime(self.unix_origin + np.asarray(simulated, dtype="float64"), unit="s",
                              utc=True).tz_convert(self.zone)


def log_clock(swf: SwfLog, first_submission: float) -> LogClock:
    """The :class:`LogClock` of a log whose first replayed job was submitted ``first_submission`` s after the
    log's start (SWF time)."""
    start = swf.unix_start_time
    name = swf.header.get("TimeZoneString", "").strip()
    offset = swf.header.get("TimeZone", "").strip()
    zone: dt.tzinfo = dt.UTC
    where = "UTC (the header gives no time zone)"
    if name:
        try:
            zone, where = ZoneInfo(name), f"local time of {name} (TimeZoneString of the SWF header)"
        except (ZoneInfoNotFoundError, ValueError):
            name = ""
    if not name and offset.lstrip("-").isdigit():
        zone = dt.timezone(dt.timedelta(seconds=int(offset)))
        where = f"UTC{int(offset) / 3600:+g} h (TimeZone of the SWF header, no daylight saving time)"
    if start is None:
        return LogClock(None, zone, "the SWF header gives no UnixStartTime: wall-clock hours are unknown")
    return LogClock(float(start) + float(first_submission), zone,
                    f"{where}, from UnixStartTime {start} of the SWF header")


@dataclass(frozen=True)
class LogFacts:
    """A log as the campaign replays it (see the module docstring).

    Attributes:
        log: the campaign's log.
        swf: the SWF file read.
        last_line: SWF line of the last job replayed (``max_jobs``), or None for the whole log.
        jobs: the rows of ``swf.jobs`` up to ``last_line`` (:func:`jobs_up_to`).
        nb_jobs: jobs of the log up to ``last_line``.
        nb_zero_runtime: those of them with a recorded run time of 0 s.
        treatment: what became of them (:data:`ZERO_RUNTIME_TREATMENT`).
    """

    log: LogSpec
    swf: SwfLog
    last_line: int | None
    jobs: pd.DataFrame = field(repr=False, compare=False)
    nb_jobs: int
    nb_zero_runtime: int
    treatment: str

    @property
    def zero_runtime_text(self) -> str:
        """``"3,712 (3.6 %), dropped"``, or ``"none"``."""
        if not self.nb_zero_runtime:
            return "none"
        share = 100.0 * self.nb_zero_runtime / self.nb_jobs
        return f"{self.nb_zero_runtime:,} ({share:.1f} %), {self.treatment}" if share >= 0.1 else \
            f"{self.nb_zero_runtime:,} ({share:.2g} %), {self.treatment}"

    def clock(self, swf_origin: float) -> LogClock:
        """:func:`log_clock` for a replay whose time 0 is SWF time ``swf_origin`` (s)."""
        return log_clock(self.swf, swf_origin)


def jobs_up_to(jobs: pd.DataFrame, last_line: int | None) -> pd.DataFrame:
    """The rows of an SWF jobs table (:attr:`SwfLog.jobs`) whose SWF ``line`` is at most ``last_line``; all of
    them for None."""
    return jobs if last_line is None else jobs[jobs["line"] <= last_line]


def log_facts(spec: CampaignSpec, log: LogSpec, last_line: int | None = None) -> LogFacts:
    """Read ``log``'s SWF file (``log.workload``) and count its jobs up to SWF line
    ``last_line`` (all for None) and those with a recorded run time of 0 s.

    Raises:
        FileNotFoundError: the log's file is missing.
        SwfFormatError: (:mod:`batreplay.workloads.swf`) the file is not an SWF log, e.g. a Batsim JSON
            workload (:attr:`LogSpec.is_json`), or has a malformed job line.
    """
    swf = read_swf(spec.resolve(log.workload))
    jobs = jobs_up_to(swf.jobs, last_line)
    return LogFacts(log, swf, last_line, jobs, len(jobs), int((jobs["run_time"] == 0).sum()),
                    ZERO_RUNTIME_TREATMENT[log.options["zero_runtime"]])


def recorded_log_metrics(spec: CampaignSpec, log: LogSpec, last_line: int | None = None,
                         *, jobs: pd.DataFrame | None = None) -> tuple[dict[str, Any], list[str]]:
    """Metrics of the schedule recorded in the log, for Table 1's first row (Madon, Da Costa, Pierson 2024).

    The jobs are those of the log's lines up to ``last_line`` (the last job line the runs replay, which
    differs from the log's end with ``max_jobs``; None: the whole log). Each job with known submission, wait
    and run times and a processor count (allocated, else requested) becomes a job of a jobs table (start =
    submission + wait, finish = start + run time; times from the first submission), summarised by
    :func:`batreplay.analysis.metrics.summarize` on the recorded platform's node count, after the log's warm-up
    (``warm_up``, as the runs' metrics: :func:`batreplay.analysis.metrics.warm_up_window`). Jobs left out are
    counted in the returned notes.

    Args:
        spec: the campaign (its root and platforms).
        log: one of its logs.
        last_line: the last SWF line of the selected jobs, or None.
        jobs: the jobs already selected up to ``last_line`` (:attr:`LogFacts.jobs`); else the log is read from
            ``log.workload`` and its jobs selected here.

    Returns:
        The metrics of :func:`~batreplay.analysis.metrics.summarize` (times in s) and one line of notes.

    Raises:
        FileNotFoundError: the log's file is missing (``jobs`` not given).
        SwfFormatError: (:mod:`batreplay.workloads.swf`, ``jobs`` not given) the file is not an SWF log (a Batsim
            JSON workload) or has a malformed job line.
        NoRecordedScheduleError: (a ValueError) no selected job has a usable recorded schedule (no job up to
            ``last_line``, or all miss a submission, wait or run time or a processor count).
    """
    path = spec.resolve(log.workload)
    frame = jobs if jobs is not None else jobs_up_to(read_swf(path).jobs, last_line)
    allocated = frame["allocated_processors"].to_numpy()
    processors = np.where(allocated > 0, allocated, frame["requested_processors"].to_numpy())
    submission = frame["submission_time"].to_numpy(dtype="float64")
    wait = frame["wait_time"].to_numpy(dtype="float64")
    run_time = frame["run_time"].to_numpy(dtype="float64")
    usable = (submission >= 0) & (wait >= 0) & (run_time >= 0) & (processors > 0)
    if not usable.any():
        raise NoRecordedScheduleError(
            f"{log.name}: no recorded schedule in {path.name}: none of its {len(frame)} jobs"
            + (f" up to SWF line {last_line}" if last_line is not None else "")
            + " has submission, wait and run times >= 0 and a processor count")
    origin = float(submission[usable].min())
    requested = frame["requested_time"].to_numpy(dtype="float64")
    start = submission + wait - origin
    schedule = pd.DataFrame({
        "job_id": frame["job_id"].astype(str).to_numpy(), "workload_name": "recorded",
        "submission_time": submission - origin, "requested_number_of_resources": processors,
        "requested_time": np.where(requested > 0, requested, run_time), "final_state": SUCCESS,
        "starting_time": start, "execution_time": run_time, "finish_time": start + run_time,
    })[usable].reset_index(drop=True)
    nodes = log.nodes if log.platform is None else read_platform(recorded_platform_path(spec, log)).nb_compute
    schedule = validate_out_jobs(schedule, source=f"recorded schedule of {path}")
    warm_up = float(log.options.get("warm_up", 0.0))
    try:  # the log's first warm_up seconds left out, as the runs' metrics leave theirs out
        window = warm_up_window(schedule, warm_up)
    except ValueError as err:
        raise NoRecordedScheduleError(f"{log.name}: recorded schedule of {path.name}: {err}") from None
    metrics = summarize(schedule, nb_resources=nodes, window=window)
    notes = [f"{log.name}: recorded-log row from {int(usable.sum())} of {len(frame)} jobs of {path.name}"
             + (f" ({int((~usable).sum())} left out: missing submission, wait or run time, or no processor count)"
                if (~usable).any() else "")
             + (f"; the first {warm_up:g} s after its first submission left out (warm_up), as in the runs"
                if warm_up else "")]
    return metrics, notes
