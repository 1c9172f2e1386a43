"""``batreplay analyze RUN_DIR...``: metrics, tables, figures and an HTML report of several runs side by side.

What :func:`analyze` writes in the output folder (every time in seconds in the CSV and JSON files; the report
shows seconds, hours or days, see :mod:`batreplay.analysis.metric`):

- ``metrics.csv`` / ``metrics.json``: one row / object per run: where it comes from (path, scheduler,
  platform, number of resources and how it was found), the scheduling metrics of
  :func:`batreplay.analysis.metrics.summarize` (over the ``window`` when given), the lateness metrics of
  Madon et al. 2024 (eqs. 3, 4, 6 and the per-user additional lateness percentiles of Fig. 5(c)) when the run knows
  its jobs' recorded submission times, and the adequacy measure P against the recorded log with ``--swf``;
- ``per_user.csv``: :func:`batreplay.analysis.metrics.per_user_summary` of every run with a job side table;
- ``lateness_per_user.csv``: :func:`batreplay.analysis.lateness.lateness_per_user` of every run that knows
  recorded submission times;
- ``adequacy_vs_log.csv`` (with ``swf_log``): Baranov et al. 2018's Table I of each run that replays the log's
  job stream, with the paper's reference values (SUPPZ with virtual nodes) beside it (columns
  ``baranov2018_p``, ``baranov2018_nb_different_jobs``); runs that do not (feedback replays, changed
  walltimes) are named in the notes, with the reason;
- ``adequacy_pairs.csv``: Table I of every pair of runs that replay the same job stream (same jobs, same
  submission times, resources and requested times); pairs that do not are listed in the report's notes;
- ``windows.csv``: throughput and utilisation over Madon et al. 2024's Fig. 9 windows (two weeks after the first
  submission, 4, 6 and 8 months long) that fit in a run;
- ``figures/``: PNG and SVG of each figure of :mod:`batreplay.analysis.plots`;
- ``report.html``: one self-contained page with these tables and figures (:mod:`batreplay.analysis.report`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from batreplay.analysis import plots
from batreplay.analysis.adequacy import (
    DEFAULT_TIME_TOLERANCE,
    StreamMismatchError,
    adequacy_metrics,
    adequacy_table,
    stream_from_out_jobs,
    stream_from_swf,
)
from batreplay.analysis.lateness import job_lateness, lateness_metrics, lateness_per_user
from batreplay.analysis.metric import SECONDS_IN, readable_time_unit
from batreplay.analysis.metric_registry import METRIC_GROUPS, get_metric, metric_sections
from batreplay.analysis.metrics import (
    DEFAULT_TAU,
    SECONDS_PER_DAY,
    TimeWindow,
    paper_windows,
    per_user_summary,
    summarize,
)
from batreplay.formats.out_jobs import out_jobs_anomalies
from batreplay.analysis.report import ReportContent, ReportFigure, ReportTable, write_report
from batreplay.analysis.run_dir import RunData, RunDirError, load_run, unique_run_names
from batreplay.atomic import write_json_atomically
from batreplay.workloads.swf import SwfLog, read_swf

#: Baranov et al. 2018, Table I: P (s) and number of jobs whose waiting time differs, on the first k
#: jobs, for the SUPPZ job management system against itself with virtual nodes. The paper takes P = 12 s as
#: the reference value of an adequate model. Column names as in ``adequacy_vs_log.csv``.
BARANOV_TABLE_I = pd.DataFrame({
    "prefix": ["50", "100", "250", "500", "750", "1000"],
    "baranov2018_p": [0.0, 12.0, 11.4, 12.0, 11.6, 11.2],
    "baranov2018_nb_different_jobs": [0, 4, 13, 20, 28, 35],
})
BARANOV_REFERENCE_P = 12.0

METRICS_CSV = "metrics.csv"
METRICS_JSON = "metrics.json"
PER_USER_CSV = "per_user.csv"
LATENESS_CSV = "lateness_per_user.csv"
ADEQUACY_LOG_CSV = "adequacy_vs_log.csv"
ADEQUACY_PAIRS_CSV = "adequacy_pairs.csv"
WINDOWS_CSV = "windows.csv"
REPORT_HTML = "report.html"
FIGURES_DIR = "figures"
_OUTPUT_FILES = (METRICS_CSV, METRICS_JSON, PER_USER_CSV, LATENESS_CSV, ADEQUACY_LOG_CSV, ADEQUACY_PAIRS_CSV,
                 WINDOWS_CSV, REPORT_HTML)
#: Figure file stems, in report order.
FIGURE_STEMS = ("submissions", "cumulative_jobs", "user_mean_lateness", "utilisation_queue", "gantt")
#: Values of ``adequacy_requested_times`` (see :func:`adequacy_against_log`).
REQUESTED_TIMES_CHOICES = ("run", "log")
#: Steps reported to ``on_progress`` by :func:`analyze`, in order.
PROGRESS_STEPS = ("reading runs", "computing metrics", "drawing figures", "writing report")
#: ``on_progress(step, done, total)``: ``done`` of ``total`` items of ``step`` (one of :data:`PROGRESS_STEPS`).
ProgressCallback = Callable[[str, int, int], None]


class NotInLogError(StreamMismatchError):
    """A run holds jobs that the recorded log does not: it is not a replay of that log."""


class RequestedTimesDifferError(StreamMismatchError):
    """A run's requested times (walltimes) differ from the log's, so P is undefined (Baranov et al. 2018,
    Sect. VII) unless the log's requested times are used for both streams."""


def window_from_days(window: TimeWindow | Sequence[float] | None, *, what: str = "window") -> TimeWindow | None:
    """A :class:`TimeWindow` from ``(start, length)`` in days of simulated time from t = 0 (or a window as is).

    Args:
        window: ``(start, length)`` in days, a :class:`TimeWindow` (seconds), or None.
        what: the name used in error messages (``"window"``, ``"gantt window"``).

    Raises:
        ValueError: not two numbers, a negative start, or a length that is not > 0.
    """
    if window is None or isinstance(window, TimeWindow):
        return window
    values = list(window)
    if len(values) != 2:
        raise ValueError(f"{what}: expected START LENGTH in days, got {values!r}")
    start, length = (float(v) for v in values)
    if not (math.isfinite(start) and start >= 0):
        raise ValueError(f"{what}: start must be >= 0 days, got {values[0]!r}")
    if not (math.isfinite(length) and length > 0):
        raise ValueError(f"{what}: length must be > 0 days, got {values[1]!r}")
    return TimeWindow(start * SECONDS_PER_DAY, (start + length) * SECONDS_PER_DAY)


def run_metrics(run: RunData, *, tau: float = DEFAULT_TAU, window: TimeWindow | None = None,
                lateness: pd.DataFrame | None = None) -> dict[str, Any]:
    """One row of ``metrics.csv``: the run's identity, :func:`~batreplay.analysis.metrics.summarize`, and the
    lateness metrics of Madon et al. 2024 when the run knows recorded submission times.

    Lateness keys: ``mean_lateness`` (s, eq. 3), ``relative_lateness`` (eq. 4), ``additional_lateness``
    (s, eq. 6), ``original_submission_span`` (s), ``user_additional_lateness_p10`` / ``_p50`` / ``_p90``
    (s, Fig. 5(c)) and ``nb_users_single_job`` (users left out of those percentiles). They cover all jobs,
    not only the window.

    Args:
        lateness: the run's :func:`~batreplay.analysis.lateness.job_lateness` table when already computed.

    Raises:
        RunDirError: the run's number of resources is unknown.
    """
    if run.nb_resources is None:
        raise RunDirError(f"{run.path}: number of resources unknown (no run.json platform, no out_schedule.csv, "
                          "no platform.xml); pass --nb-resources N")
    row: dict[str, Any] = {
        "run": run.name, "path": str(run.path), "scheduler": run.spec.get("scheduler"),
        "platform": run.spec.get("platform"), "workload": run.spec.get("workload"),
        "replay": run.spec.get("replay"), "nb_resources": run.nb_resources,
        "nb_resources_source": run.nb_resources_source,
    }
    row.update(summarize(run.jobs, nb_resources=run.nb_resources, tau=tau, window=window))
    if run.has_recorded_submissions:
        if lateness is None:
            lateness = job_lateness(run.jobs, run.job_table)
        row.update(lateness_metrics(lateness))
    return row


def _best_resources_column(run: RunData, matched: pd.DataFrame) -> str:
    """The SWF processor count the run's jobs requested: the column agreeing with more jobs."""
    requested = run.jobs.set_index("job_id")["requested_number_of_resources"].reindex(matched["job_id"]).to_numpy()
    agree = {c: int((matched[c].to_numpy() == requested).sum())
             for c in ("allocated_processors", "requested_processors")}
    return max(agree, key=lambda c: (agree[c], c == "allocated_processors"))


def adequacy_against_log(run: RunData, log: SwfLog, *,
                         requested_times: Literal["run", "log"] = "run") -> tuple[pd.DataFrame, list[str]]:
    """Baranov et al. 2018's Table I of a run (model stream J) against the recorded log (stream j).

    Jobs are matched by the run's bare Batsim job id = the SWF job number. Log jobs the run does not hold
    (dropped by the conversion, or beyond ``--max-jobs``) are left out and counted in the notes. Recorded
    times are moved to the run's clock so that the earliest recorded submission of the matched jobs falls on
    the run's first submission (the conversion's rule: simulated submission = recorded submission - first
    recorded submission). The processor count compared is the SWF field (allocated or requested) that agrees
    with more of the run's jobs.

    P is defined for two streams of the same jobs: same submission times, resources and requested times
    (Baranov et al. 2018, Sect. VII). A run whose walltimes were changed (``--walltime-factor 2``, as in
    Madon et al. 2024) has other requested times than the log, so:

    - ``requested_times="run"`` (default, the paper's definition): such a run is refused
      (:class:`RequestedTimesDifferError`);
    - ``requested_times="log"``: both streams take the log's requested time ``e_i``. The changed walltimes are
      then taken as part of the model (like its scheduler): P measures how far the model's residence times
      are from the recorded ones for the jobs users submitted, whatever walltime the model gave them. The
      notes say how many jobs had another requested time in the run.

    Returns:
        (table, notes): :func:`batreplay.analysis.adequacy.adequacy_table` with the columns of
        :data:`BARANOV_TABLE_I` added (NaN where the paper has no such k), and human-readable notes.

    Raises:
        NotInLogError: a run job is not in the log, or the log has duplicate job numbers.
        RequestedTimesDifferError: requested times differ and ``requested_times="run"``.
        StreamMismatchError: the run has rejected jobs, or a matched job differs in submission time or
            resources (first such job named), see :func:`batreplay.analysis.adequacy.align_streams`.
        ValueError: ``requested_times`` is neither ``"run"`` nor ``"log"``.
    """
    if requested_times not in REQUESTED_TIMES_CHOICES:
        raise ValueError(f"requested_times must be 'run' or 'log', got {requested_times!r}")
    table = log.jobs.assign(job_id=log.jobs["job_id"].astype(str))
    duplicated = table["job_id"][table["job_id"].duplicated()]
    if len(duplicated):
        raise NotInLogError(f"{log.path}: job number {duplicated.iloc[0]} appears more than once")
    ids = run.jobs["job_id"].astype(str)
    if ids.duplicated().any():
        raise NotInLogError(f"job id {ids[ids.duplicated()].iloc[0]!r} appears in several workloads, jobs "
                            "cannot be matched with SWF job numbers")
    absent = ids[~ids.isin(table["job_id"])]
    if len(absent):
        raise NotInLogError(
            f"{len(absent)} of the run's {len(ids)} job(s) are not in the log {log.path} "
            f"(first: {', '.join(absent.head(5))}); is it a run of this log?")
    matched = table[table["job_id"].isin(ids)].reset_index(drop=True)
    notes = []
    left_out = len(table) - len(matched)
    if left_out:
        lines = table.loc[~table["job_id"].isin(ids), "line"].head(5).astype(str)
        notes.append(f"run {run.name} vs log: {left_out} of the log's {len(table)} jobs are not in the run "
                     f"(dropped by the conversion or not simulated) and are left out (SWF lines {', '.join(lines)}"
                     f"{', ...' if left_out > 5 else ''})")
    in_run = run.jobs.set_index("job_id")["requested_time"].reindex(matched["job_id"]).to_numpy(dtype="float64")
    in_log = matched["requested_time"].to_numpy(dtype="float64")
    differ = ~(np.abs(in_run - in_log) <= DEFAULT_TIME_TOLERANCE)
    if differ.any() and requested_times == "run":
        k = int(np.flatnonzero(differ)[0])
        factor = run.spec.get("walltime_factor")
        raise RequestedTimesDifferError(
            f"the requested times (walltimes) of {int(differ.sum())} of its {len(matched)} jobs differ from the "
            f"log's (first: job {matched['job_id'].iloc[k]}, {in_log[k]:g} s in the log, {in_run[k]:g} s in the run)"
            + (f"; the run raised walltimes with walltime_factor = {factor:g}" if factor else ""))
    shift = float(matched["submission_time"].min()) - float(run.jobs["submission_time"].min())
    column = _best_resources_column(run, matched)
    notes.append(f"run {run.name} vs log: {len(matched)} jobs compared, recorded processors from SWF field "
                 f"{column}, recorded times shifted by {-shift:g} s")
    stream_log = stream_from_swf(matched.assign(submission_time=matched["submission_time"] - shift),
                                 resources_column=column)
    stream_run = stream_from_out_jobs(run.jobs, id_column="job_id")
    if requested_times == "log":
        stream_run["requested_time"] = stream_run["job_id"].map(stream_log.set_index("job_id")["requested_time"])
        if differ.any():
            notes.append(f"run {run.name} vs log: the log's requested times are used for both streams; "
                         f"{int(differ.sum())} of the {len(matched)} jobs had another walltime in the run")
    result = adequacy_table(stream_log, stream_run, names=(f"log {Path(log.path).name}", f"run {run.name}"))
    result = result.merge(BARANOV_TABLE_I, on="prefix", how="left")
    result["baranov2018_nb_different_jobs"] = result["baranov2018_nb_different_jobs"].astype("Int64")
    return result, notes


def adequacy_between_runs(reference: RunData, model: RunData) -> pd.DataFrame:
    """Baranov et al. 2018's Table I of two runs of the same job stream (``reference`` = j, ``model`` = J).

    Jobs are matched by full id ``workload!job_id`` when both runs have the same workload names, else by
    bare job id. Requested times must agree (runs with different walltimes are not the same job stream).

    Raises:
        StreamMismatchError: the runs are not of the same job stream (see
            :func:`batreplay.analysis.adequacy.align_streams`) or have rejected jobs.
    """
    same_names = set(reference.jobs["workload_name"]) == set(model.jobs["workload_name"])
    id_column = "full_job_id" if same_names else "job_id"
    return adequacy_table(stream_from_out_jobs(reference.jobs, id_column=id_column),
                          stream_from_out_jobs(model.jobs, id_column=id_column),
                          names=(f"run {reference.name}", f"run {model.name}"))


def paper_window_metrics(run: RunData, *, tau: float = DEFAULT_TAU) -> tuple[pd.DataFrame, list[str]]:
    """Throughput (jobs finished per day) and utilisation on Madon et al. 2024's Fig. 9 windows that fit in the run.

    A window fits when it ends before the run's last finish. Returns the rows (``run``, ``window_months``,
    ``window_start``, ``window_end`` in s, ``throughput_per_day``, ``mean_busy_nodes``, ``utilisation``)
    and one note naming the windows left out, if any.
    """
    rows, too_long = [], []
    last_finish = float(run.jobs["finish_time"].max())
    months = (4, 6, 8)
    for length, window in zip(months, paper_windows(run.jobs, months=months)):
        if window.end > last_finish:
            too_long.append((length, window.end))
            continue
        values = summarize(run.jobs, nb_resources=run.nb_resources, tau=tau, window=window)
        rows.append({"run": run.name, "window_months": length, "window_start": window.start,
                     "window_end": window.end, "throughput_per_day": values["throughput_per_day"],
                     "mean_busy_nodes": values["mean_busy_nodes"], "utilisation": values["utilisation"]})
    notes = []
    if too_long:
        ends = ", ".join(f"{length} months ends on day {end / SECONDS_PER_DAY:.1f}" for length, end in too_long)
        notes.append(f"run {run.name}: Fig. 9 windows left out, the run's last job finishes on day "
                     f"{last_finish / SECONDS_PER_DAY:.1f} ({ends})")
    return pd.DataFrame(rows, columns=["run", "window_months", "window_start", "window_end", "throughput_per_day",
                                       "mean_busy_nodes", "utilisation"]), notes


def merge_run_notes(per_run: Mapping[str, Sequence[str]]) -> list[str]:
    """Notes of several runs, each said once: the ones all runs share without a run name, the others with
    the runs they concern.

    A note is one or more lines; notes whose first line starts alike (up to its first ``:``, e.g. ``"SWF
    anomalies in LOG"``) are merged line by line: a line every such run has is written once, a line only
    some have ends with ``[runs ...]`` (so per-run counts that differ show side by side).

    Args:
        per_run: run name -> its notes, in order (runs in the order of the page).

    Returns:
        The merged notes, in first-seen order, each prefixed with the runs it concerns unless it concerns all.
    """
    runs = list(per_run)
    groups: dict[str, dict[str, Any]] = {}
    for run, notes in per_run.items():
        for note in notes:
            first = note.split("\n", 1)[0]
            key = first.split(":", 1)[0] if ":" in first else first
            group = groups.setdefault(key, {"runs": [], "lines": {}})
            if run not in group["runs"]:
                group["runs"].append(run)
            for line in note.split("\n"):
                holders = group["lines"].setdefault(line, [])
                if run not in holders:
                    holders.append(run)
    merged = []
    for group in groups.values():
        concerned = group["runs"]
        lines = [line if holders == concerned else f"{line} [{_runs_text(holders)}]"
                 for line, holders in group["lines"].items()]
        prefix = "" if len(concerned) == len(runs) and len(runs) > 1 else f"{_runs_text(concerned)}: "
        merged.append(prefix + "\n".join(lines))
    return merged


def _runs_text(names: Sequence[str]) -> str:
    return ("run " if len(names) == 1 else "runs ") + ", ".join(names)


def _figures(runs: Sequence[RunData], lateness_tables: Mapping[str, pd.DataFrame], gantt_window: TimeWindow,
             folder: Path, progress: ProgressCallback) -> list[ReportFigure]:
    divisor, unit = plots.time_unit(gantt_window.length)
    start_day, length_day = gantt_window.start / SECONDS_PER_DAY, gantt_window.length / SECONDS_PER_DAY
    makers: list[tuple[str, str, Callable[[], Any], str]] = [
        ("submissions", "submissions", lambda: plots.plot_submissions(runs),
         "Jobs submitted per day: recorded submission times (rigid replay, dashed, when the runs know them) and "
         "each run's (Madon et al. 2024, Fig. 2)."),
        ("cumulative_jobs", "cumulative jobs", lambda: plots.plot_cumulative_jobs(runs),
         "Cumulative number of jobs submitted (top) and finished (bottom) (Madon et al. 2024, Fig. 3)."),
    ]
    if lateness_tables:
        makers.append(("user_mean_lateness", "lateness per user",
                       lambda: plots.plot_user_mean_lateness(lateness_tables),
                       "Mean lateness per user (submission in the replay minus recorded submission, averaged over "
                       "the user's jobs) against the number of jobs the user submitted (Madon et al. 2024, Fig. 4, "
                       "eq. 3); symmetric logarithmic scale, linear within one minute of 0."))
    makers.append(("utilisation_queue", "utilisation and queue", lambda: plots.plot_utilisation_and_queue(runs),
                   "Utilisation (nodes used by running jobs / nodes of the platform, top) and number of waiting "
                   "jobs (bottom) over time; on long runs, time-weighted means over bins whose width the axis "
                   "labels give."))
    makers.append(("gantt", "Gantt chart", lambda: plots.plot_gantt(runs, gantt_window),
                   f"Gantt chart of [{gantt_window.start / divisor:g}, {gantt_window.end / divisor:g}] {unit} of "
                   f"simulated time (from day {start_day:g}, {length_day:g} day{'s' if length_day != 1 else ''} "
                   "long; choose another window with --gantt-window START LENGTH, in days): each bar is a job on "
                   "its allocated resources, one colour per job (the same in every run), labelled with its job id "
                   "where the id fits in the bar."))
    figures = []
    progress(PROGRESS_STEPS[2], 0, len(makers))
    for done, (stem, label, make, caption) in enumerate(makers, start=1):
        paths = plots.save_figure(make(), folder, stem)
        figures.append(ReportFigure(caption=f"{caption} ({stem}.png, {stem}.svg)", png=paths["png"], label=label))
        progress(PROGRESS_STEPS[2], done, len(makers))
    return figures


def _clean_outputs(out_dir: Path) -> None:
    """Remove what an earlier analysis wrote here, so that no stale table stays next to new ones."""
    for name in _OUTPUT_FILES:
        (out_dir / name).unlink(missing_ok=True)
    for stem in FIGURE_STEMS:
        for suffix in (".png", ".svg"):
            (out_dir / FIGURES_DIR / f"{stem}{suffix}").unlink(missing_ok=True)


def _refusal_note(run: RunData, err: StreamMismatchError) -> str:
    why = ("P of Baranov et al. 2018 (eq. 2) compares two runs of the same job stream: same jobs, submission "
           "times, resources and requested times (Sect. VII)")
    if isinstance(err, RequestedTimesDifferError):
        why += ("; adequacy_requested_times='log' (--adequacy-requested-times log) compares with the log's "
                "requested times")
    return f"not compared with the log, no adequacy table for this run: {err}. {why}"


def _no_progress(step: str, done: int, total: int) -> None:
    """The default ``on_progress``: nothing."""


def analyze(run_dirs: Sequence[str | Path], out_dir: str | Path, *, nb_resources: int | None = None,
            tau: float = DEFAULT_TAU, swf_log: str | Path | None = None,
            window: TimeWindow | Sequence[float] | None = None,
            gantt_window: TimeWindow | Sequence[float] | None = None,
            adequacy_requested_times: Literal["run", "log"] = "run",
            on_progress: ProgressCallback | None = None) -> Path:
    """Analyse runs side by side and write tables, figures and ``report.html`` into ``out_dir``.

    Args:
        run_dirs: batreplay run directories or Batsim output folders (at least one).
        out_dir: output folder (created; files of an earlier analysis there are replaced).
        nb_resources: number of compute resources for every run (nodes), overriding what the folders say.
        tau: bounded slowdown threshold, seconds (Rauch 2022).
        swf_log: recorded SWF log the runs replayed; adds the adequacy table of each run that replays its job
            stream (Baranov et al. 2018, Table I). Runs that do not (feedback replays move submissions; changed
            walltimes change requested times) get no such table, and a note saying why; nothing else changes.
        window: ``(start, length)`` in days of simulated time from t = 0, or a :class:`TimeWindow`: job
            metrics over the jobs submitted in it, time-based metrics clipped to it
            (:func:`batreplay.analysis.metrics.summarize`).
        gantt_window: ``(start, length)`` in days of simulated time from t = 0 (``(0.5, 0.25)``: from 12 h to
            18 h), or a :class:`TimeWindow`, of the Gantt chart. Default: the first 24 h of ``window`` when
            given, else of the runs (from their first submission).
        adequacy_requested_times: ``"run"`` (default) compares a run with the log only when its requested
            times are the log's; ``"log"`` uses the log's requested times for both streams, so that a run with
            changed walltimes is compared too (see :func:`adequacy_against_log`).
        on_progress: called as ``on_progress(step, done, total)`` when a step starts (``done = 0``) and after
            each of its items: ``"reading runs"`` (each run, then the SWF log), ``"computing metrics"`` (each
            run, then the pairs of runs), ``"drawing figures"`` (each figure), ``"writing report"``
            (:data:`PROGRESS_STEPS`).

    Returns:
        The path of ``report.html``.

    Raises:
        ValueError: no run; a bad window, Gantt window, tau or ``adequacy_requested_times``. RunDirError /
            OutJobsError / PlatformError: a run that cannot be read (file, line, column named), an unknown
            number of resources. FileNotFoundError / SwfFormatError: an unreadable SWF log.
            NotInLogError: ``swf_log`` given but no run's jobs are all in it (each run's reason given).
    """
    if not run_dirs:
        raise ValueError("analyze: give at least one run directory")
    if not tau > 0:
        raise ValueError(f"tau must be > 0 s, got {tau}")
    if adequacy_requested_times not in REQUESTED_TIMES_CHOICES:
        raise ValueError(f"adequacy_requested_times must be 'run' or 'log', got {adequacy_requested_times!r}")
    progress = on_progress or _no_progress
    window = window_from_days(window)
    gantt = window_from_days(gantt_window, what="gantt window")
    names = unique_run_names(run_dirs)
    if swf_log is not None and not Path(swf_log).is_file():
        raise FileNotFoundError(f"SWF log {swf_log}: no such file")
    reads = len(run_dirs) + (swf_log is not None)
    progress(PROGRESS_STEPS[0], 0, reads)
    runs = []
    for path, name in zip(run_dirs, names):
        runs.append(load_run(path, nb_resources=nb_resources, name=name))
        progress(PROGRESS_STEPS[0], len(runs), reads)
    log = None
    if swf_log is not None:
        log = read_swf(swf_log)
        progress(PROGRESS_STEPS[0], reads, reads)

    per_run_notes: dict[str, list[str]] = {}
    rows, user_tables, window_tables, log_tables = [], [], [], []
    lateness_tables: dict[str, pd.DataFrame] = {}
    refusals: dict[str, StreamMismatchError] = {}
    steps = len(runs) + 1
    progress(PROGRESS_STEPS[1], 0, steps)
    for done, run in enumerate(runs, start=1):
        notes = per_run_notes[run.name] = list(run.notes) + list(run.manifest.get("input_notes", []))
        odd = {k: v for k, v in out_jobs_anomalies(run.jobs).items() if v}
        if odd:
            notes.append("out_jobs.csv rows whose redundant columns disagree or are degenerate: "
                         + ", ".join(f"{k} = {v}" for k, v in odd.items()))
        lateness = job_lateness(run.jobs, run.job_table) if run.has_recorded_submissions else None
        row = run_metrics(run, tau=tau, window=window, lateness=lateness)
        if lateness is not None:
            lateness_tables[run.name] = lateness_per_user(lateness)
        if run.has_users:
            user_tables.append(per_user_summary(run.jobs, run.job_table, tau=tau).reset_index().assign(run=run.name))
        table, window_notes = paper_window_metrics(run, tau=tau)
        window_tables.append(table)
        notes += [note.removeprefix(f"run {run.name}: ") for note in window_notes]
        if log is not None:
            try:
                table, log_notes = adequacy_against_log(run, log, requested_times=adequacy_requested_times)
            except StreamMismatchError as err:
                refusals[run.name] = err
                notes.append(_refusal_note(run, err))
            else:
                notes += [note.removeprefix(f"run {run.name} ") for note in log_notes]
                row.update(adequacy_metrics(table))
                log_tables.append(table.assign(run=run.name))
        rows.append(row)
        progress(PROGRESS_STEPS[1], done, steps)
    if log is not None and not log_tables and all(isinstance(e, NotInLogError) for e in refusals.values()):
        raise NotInLogError(f"no run can be compared with the log {swf_log}: "
                            + "; ".join(f"run {name}: {err}" for name, err in refusals.items()))
    notes = merge_run_notes(per_run_notes)

    pair_tables = []
    for reference, model in itertools.combinations(runs, 2):
        try:
            table = adequacy_between_runs(reference, model)
        except StreamMismatchError as err:
            notes.append(f"runs {reference.name} and {model.name} not compared (not the same job stream): {err}")
            continue
        pair_tables.append(table.assign(reference=reference.name, model=model.name))
    progress(PROGRESS_STEPS[1], steps, steps)

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean_outputs(out_dir)
    metrics = pd.DataFrame(rows)
    metrics.to_csv(out_dir / METRICS_CSV, index=False)
    parameters = {"tau": tau, "window": None if window is None else {"start": window.start, "end": window.end},
                  "swf_log": None if swf_log is None else str(swf_log), "nb_resources": nb_resources,
                  "adequacy_requested_times": adequacy_requested_times}
    write_json_atomically(out_dir / METRICS_JSON, {"parameters": parameters, "runs": rows, "notes": notes})

    def first(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
        return frame[list(columns) + [c for c in frame.columns if c not in columns]]

    written = [METRICS_CSV, METRICS_JSON]
    if user_tables:
        first(pd.concat(user_tables, ignore_index=True), ["run", "user_id"]).to_csv(out_dir / PER_USER_CSV, index=False)
        written.append(PER_USER_CSV)
    if lateness_tables:
        late = pd.concat([t.reset_index().assign(run=name) for name, t in lateness_tables.items()], ignore_index=True)
        first(late, ["run", "user_id"]).to_csv(out_dir / LATENESS_CSV, index=False)
        written.append(LATENESS_CSV)
    log_frame = first(pd.concat(log_tables, ignore_index=True), ["run"]) if log_tables else None
    if log_frame is not None:
        log_frame.to_csv(out_dir / ADEQUACY_LOG_CSV, index=False)
        written.append(ADEQUACY_LOG_CSV)
    pairs = first(pd.concat(pair_tables, ignore_index=True), ["reference", "model"]) if pair_tables else None
    if pairs is not None:
        pairs.to_csv(out_dir / ADEQUACY_PAIRS_CSV, index=False)
        written.append(ADEQUACY_PAIRS_CSV)
    windows = pd.concat(window_tables, ignore_index=True)
    windows.to_csv(out_dir / WINDOWS_CSV, index=False)
    written.append(WINDOWS_CSV)

    if gantt is None:
        gantt = plots.default_gantt_window(runs, start=None if window is None else window.start)
    figures = _figures(runs, lateness_tables, gantt, out_dir / FIGURES_DIR, progress)
    progress(PROGRESS_STEPS[3], 0, 1)
    content = _report_content(runs, rows, log_frame, refusals, pairs, windows, figures, notes, parameters,
                              written)
    report = write_report(content, out_dir / REPORT_HTML)
    progress(PROGRESS_STEPS[3], 1, 1)
    return report


def _time_columns(frame: pd.DataFrame, columns: Mapping[str, str]) -> pd.DataFrame:
    """``frame`` with each time column (seconds) converted to its readable unit and renamed ``label (unit)``."""
    renamed = {}
    frame = frame.copy()
    for column, label in columns.items():
        unit = readable_time_unit(frame[column].to_numpy(dtype="float64"))
        frame[column] = frame[column].astype("float64") / SECONDS_IN[unit]
        renamed[column] = f"{label} ({unit})"
    return frame.rename(columns=renamed)


def _metric_columns(frame: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """``frame`` with the columns named after metrics headed ``label (unit)`` (display unit of the column)."""
    frame = frame.copy()
    renamed = {}
    for name in names:
        metric = get_metric(name)
        unit = metric.display_unit(frame[name].to_numpy(dtype="float64"))
        frame[name] = frame[name].astype("float64") / metric.divisor(unit)
        renamed[name] = metric.heading(unit)
    return frame.rename(columns=renamed)


_TABLE_I = {"prefix": "first k jobs", "nb_jobs": "jobs compared",
            "nb_different_jobs": "jobs whose waiting time differs"}
_PAPER_I = {"baranov2018_p": "Baranov et al. 2018, Table I: P (s)",
            "baranov2018_nb_different_jobs": "Baranov et al. 2018, Table I: jobs whose waiting time differs"}


def table_i_side_by_side(log_frame: pd.DataFrame) -> pd.DataFrame:
    """``adequacy_vs_log.csv`` (one row per run and k) as the report shows it: one row per k, P and the number of
    jobs whose waiting time differs for each run, then the paper's values (Baranov et al. 2018, Table I). P is in
    seconds in every column, the paper's unit, so that a run's P reads against the reference value of 12 s.
    Row ``all`` says how many jobs when all runs agree."""
    unit = "s"
    prefixes = list(dict.fromkeys(log_frame["prefix"]))
    table = pd.DataFrame({"first k jobs": prefixes})
    totals = log_frame.loc[log_frame["prefix"] == "all", "nb_jobs"].unique()
    if len(totals) == 1:
        table["first k jobs"] = [f"all ({int(totals[0]):,})" if k == "all" else k for k in prefixes]
    for run, rows in log_frame.groupby("run", sort=False):
        rows = rows.set_index("prefix").reindex(prefixes)
        table[f"{run}: P ({unit})"] = (rows["measure"] / SECONDS_IN[unit]).to_numpy()
        table[f"{run}: jobs whose waiting time differs"] = rows["nb_different_jobs"].astype("Int64").to_numpy()
    paper = BARANOV_TABLE_I.set_index("prefix").reindex(prefixes)
    for column, label in _PAPER_I.items():
        table[label] = paper[column].to_numpy()
    table[_PAPER_I["baranov2018_nb_different_jobs"]] = table[_PAPER_I["baranov2018_nb_different_jobs"]].astype("Int64")
    return table.astype(object).where(table.notna(), None)


def _adequacy_tables(log_frame: pd.DataFrame | None, refusals: Mapping[str, StreamMismatchError],
                     pairs: pd.DataFrame | None, group: str) -> list[ReportTable]:
    tables = []
    if log_frame is not None:
        tables.append(ReportTable(
            "Against the recorded log, on the first k jobs (Baranov et al. 2018, Table I)",
            table_i_side_by_side(log_frame),
            "P on the first k jobs in submission order, and how many of them wait another time than in the log, "
            "for each run. Beside it, the paper's Table I for SUPPZ against itself with virtual nodes, whose "
            f"reference value P = {BARANOV_REFERENCE_P:g} s marks an adequate model.", group=group))
    if refusals:
        tables.append(ReportTable(
            "Runs not compared with the log",
            pd.DataFrame({"run": list(refusals), "why": [str(err) for err in refusals.values()]}),
            "P is defined for two runs of the same job stream (same jobs, submission times, resources and "
            "requested times; Baranov et al. 2018, Sect. VII). A feedback replay moves submissions; a run "
            "with changed walltimes (--walltime-factor) has other requested times: compare it with the log's "
            "requested times with --adequacy-requested-times log.", group=group))
    if pairs is not None:
        tables.append(ReportTable(
            "Between runs of the same job stream (Baranov et al. 2018, Table I)",
            _time_columns(pairs, {"measure": "P"}).rename(columns=_TABLE_I),
            "Each pair of runs replaying the same jobs (same submission times, resources and requested times): "
            "P of the second run against the first.", group=group))
    return tables


def _report_content(runs: Sequence[RunData], rows: Sequence[Mapping[str, Any]], log_frame: pd.DataFrame | None,
                    refusals: Mapping[str, StreamMismatchError], pairs: pd.DataFrame | None, windows: pd.DataFrame,
                    figures: list[ReportFigure], notes: list[str], parameters: dict[str, Any],
                    written: Sequence[str]) -> ReportContent:
    window = parameters["window"]
    shown = [
        ("bounded slowdown threshold tau", f"{parameters['tau']:g} s (Rauch 2022)"),
        ("metrics window", "all jobs" if window is None else
         f"days {window['start'] / SECONDS_PER_DAY:g} to {window['end'] / SECONDS_PER_DAY:g} of simulated time "
         "(jobs submitted in it; time-based metrics clipped to it)"),
    ]
    if parameters["swf_log"]:
        shown.append(("recorded log", parameters["swf_log"]))
        shown.append(("requested times compared with the log",
                      "the log's, for both streams" if parameters["adequacy_requested_times"] == "log"
                      else "each stream's own (runs with other walltimes are not compared)"))
    intro = [
        "One column per run. Times are in seconds, hours or days: each metric in the unit its largest value "
        "calls for (under an hour: s; under two days: h; beyond: days), named in its label. The files next to "
        f"this page keep seconds: {', '.join(written)}; figures in {FIGURES_DIR}/ (PNG and SVG).",
    ]
    identity = pd.DataFrame([{
        "run": row["run"], "scheduler": row["scheduler"], "platform": row["platform"], "replay": row["replay"],
        "compute nodes": row["nb_resources"], "node count from": row["nb_resources_source"],
        "workload": row["workload"], "path": row["path"]} for row in rows]).astype(object)
    tables = [ReportTable("Runs", identity.where(identity.notna(), "?"), "Where each run comes from.")]
    group_descriptions = {}
    sections = {key: (title, description, frame) for key, title, description, frame
                in metric_sections(rows, [run.name for run in runs], tau=parameters["tau"])}
    for key, title, description in METRIC_GROUPS:
        extra: list[ReportTable] = []
        if key == "utilisation" and len(windows):
            extra.append(ReportTable(
                "On Madon et al. 2024's Fig. 9 windows",
                _metric_columns(_time_columns(windows, {"window_start": "start", "window_end": "end"}),
                                ["throughput_per_day", "mean_busy_nodes", "utilisation"]
                                ).rename(columns={"window_months": "window (months)"}),
                "Windows start two weeks after the first submission and last 4, 6 or 8 months (a month = "
                "365.25/12 days); throughput = jobs finished per day in the window; mean busy nodes = busy "
                "node-seconds / window length.", group=title))
        if key == "adequacy":
            extra += _adequacy_tables(log_frame, refusals, pairs, title)
        if key in sections:
            _, _, frame = sections[key]
            heading = "Against the recorded log, all jobs" if key == "adequacy" else title
            tables.append(ReportTable(heading, frame.reset_index(), group=title))
        if key in sections or extra:
            tables += extra
            group_descriptions[title] = description
    return ReportContent(title="batreplay analysis: " + ", ".join(run.name for run in runs), parameters=shown,
                         tables=tables, figures=figures, notes=notes, intro=intro,
                         group_descriptions=group_descriptions)
