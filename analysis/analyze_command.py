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
  submission times, resources and requested times), ``repetition`` true for two repetitions of one experiment
  (runs that differ only by the seed of their random job overheads); pairs that do not are listed in the notes;
- ``adequacy_reference.csv`` (pairs of repetitions of one experiment): the reference value P_ideal per first-k
  prefix (Baranov et al. 2018, section VIII, Table I), shown beside each run's P against the log;
- ``windows.csv``: throughput and utilisation over Madon et al. 2024's Fig. 9 windows (two weeks after the first
  submission, 4, 6 and 8 months long) that fit in a run;
- ``node_types.csv``: node utilisation and slot occupancy per node type (:mod:`batreplay.analysis.node_types`) of
  every run whose platform has node types, job slots or shared hosts;
- ``io_per_job.csv`` and ``io_per_node_type.csv``: what each job computed and moved (CPU time, I/O time, CPU
  efficiency, bytes read, written, sent and staged) and their sums per node type (:mod:`batreplay.analysis.job_io`),
  for every run directory whose jobs moved bytes;
- ``node_io_over_time.csv``: mean bytes/s read and written and the I/O utilisation of each node type over bins of
  time (:mod:`batreplay.analysis.node_io`), for every run whose folder holds the embedded engine's
  ``node_io_rates.csv`` and whose platform is known;
- ``submission_differences.csv`` (two runs or more): the distribution of each run's per-job submission difference
  against the first run given (Madon et al. 2024, Fig. 7: mean, percentiles, jobs earlier, at the same time, later;
  :mod:`batreplay.analysis.submission_differences`), for the runs that hold the first run's jobs (the others are
  named in the notes);
- ``user_arrivals.csv``: each user's first recorded submission and the log's start and end, once per distinct
  workload (Madon et al. 2024, Fig. 10; :mod:`batreplay.analysis.user_arrivals`), for the runs with user ids and
  recorded submission times;
- ``figures/``: PNG and SVG of each figure of :mod:`batreplay.analysis.plots`;
- ``report.html``: one self-contained page with these tables and figures (:mod:`batreplay.analysis.report`).

The output folder is checked before any work (:func:`check_out_dir`): it may not be a run directory or a Batsim output
folder (``run.json``, ``out_jobs.csv``, ``<prefix>_jobs.csv`` or ``out_schedule.csv`` in it), whose ``metrics.json``
analyze would overwrite; and it may hold files of the names above only when an earlier ``batreplay analyze`` wrote
them, which its ``metrics.json`` says with ``"written_by": "batreplay analyze"`` (:data:`WRITTEN_BY`; written first,
so every later file of an interrupted analysis is covered). The ``metrics.json`` of earlier versions, without the
marker, is recognised by its keys (``parameters``, ``runs``, ``notes``).

This module reads the runs, computes each run's metrics (:func:`run_metrics`, :func:`paper_window_metrics`) and
writes the files. The tables of Baranov et al. 2018 against the log and between runs come from
:mod:`batreplay.analysis.run_adequacy`; what the page shows, the figures and the merged notes from
:mod:`batreplay.analysis.analyze_report`.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from batreplay.analysis import plots
from batreplay.analysis.adequacy import StreamMismatchError, adequacy_metrics
from batreplay.analysis.analyze_report import FIGURE_STEMS, draw_figures, merge_run_notes, report_content
from batreplay.analysis.job_io import run_io
from batreplay.analysis.lateness import job_lateness, lateness_metrics, lateness_per_user
from batreplay.analysis.node_io import run_node_io
from batreplay.analysis.node_types import UNTYPED, node_type_occupancy
from batreplay.analysis.metrics import (
    DEFAULT_TAU,
    SECONDS_PER_DAY,
    TimeWindow,
    paper_windows,
    per_user_summary,
    summarize,
    warm_up_window,
)
from batreplay.formats.out_jobs import out_jobs_anomalies
from batreplay.analysis.report import write_report
from batreplay.analysis.run_adequacy import (
    REQUESTED_TIMES_CHOICES,
    NotInLogError,
    adequacy_against_log,
    adequacy_between_runs,
    are_repetitions,
    reference_table,
    refusal_note,
    setting_difference,
    setting_of,
)
from batreplay.analysis.submission_differences import difference_summary, differences_against_first
from batreplay.analysis.user_arrivals import UserArrivals, arrivals_by_workload
from batreplay.analysis.run_dir import (MANIFEST_NAME, OUT_JOBS_NAME, OUT_SCHEDULE_NAME, RunData, RunDirError,
                                        load_run, unique_run_names)
from batreplay.atomic import write_json_atomically
from batreplay.workloads.swf import read_swf

METRICS_CSV = "metrics.csv"
METRICS_JSON = "metrics.json"
PER_USER_CSV = "per_user.csv"
LATENESS_CSV = "lateness_per_user.csv"
ADEQUACY_LOG_CSV = "adequacy_vs_log.csv"
ADEQUACY_PAIRS_CSV = "adequacy_pairs.csv"
ADEQUACY_REFERENCE_CSV = "adequacy_reference.csv"
WINDOWS_CSV = "windows.csv"
NODE_TYPES_CSV = "node_types.csv"
JOB_IO_CSV = "io_per_job.csv"
NODE_TYPE_IO_CSV = "io_per_node_type.csv"
NODE_IO_CSV = "node_io_over_time.csv"
SUBMISSION_DIFFERENCES_CSV = "submission_differences.csv"
USER_ARRIVALS_CSV = "user_arrivals.csv"
REPORT_HTML = "report.html"
FIGURES_DIR = "figures"
_OUTPUT_FILES = (METRICS_CSV, METRICS_JSON, PER_USER_CSV, LATENESS_CSV, ADEQUACY_LOG_CSV, ADEQUACY_PAIRS_CSV,
                 ADEQUACY_REFERENCE_CSV,
                 WINDOWS_CSV, NODE_TYPES_CSV, JOB_IO_CSV, NODE_TYPE_IO_CSV, NODE_IO_CSV, SUBMISSION_DIFFERENCES_CSV,
                 USER_ARRIVALS_CSV, REPORT_HTML)
#: The first key of the ``metrics.json`` that :func:`analyze` writes, and its value: the mark by which a later analyze
#: knows the folder's files are its own, to replace.
WRITTEN_BY = ("written_by", "batreplay analyze")
#: Files of a run directory or a Batsim output folder: an output folder holding one is refused.
_RUN_FILES = (MANIFEST_NAME, OUT_JOBS_NAME, OUT_SCHEDULE_NAME)
#: Steps reported to ``on_progress`` by :func:`analyze`, in order.
PROGRESS_STEPS = ("reading runs", "computing metrics", "drawing figures", "writing report")
#: ``on_progress(step, done, total)``: ``done`` of ``total`` items of ``step`` (one of :data:`PROGRESS_STEPS`).
ProgressCallback = Callable[[str, int, int], None]


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
        window: the span the metrics cover; None: the run's own, after its warm-up (``warm_up`` of its ``run.json``
            spec, :func:`~batreplay.analysis.metrics.warm_up_window`), as its ``metrics.json`` has them.
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
    if window is None:  # the run's own warm-up (batreplay run --warm-up), as its metrics.json left it out
        window = _recorded_warm_up(run)
    row.update(summarize(run.jobs, nb_resources=run.nb_resources, tau=tau, window=window,
                         shared_hosts=run.shared_hosts))
    if run.has_recorded_submissions:
        if lateness is None:
            lateness = job_lateness(run.jobs, run.job_table)
        row.update(lateness_metrics(lateness))
    return row


def _recorded_warm_up(run: RunData) -> TimeWindow | None:
    """The span after the warm-up ``run.json`` records (:func:`~batreplay.analysis.metrics.warm_up_window`).

    Raises:
        RunDirError: a recorded warm-up that is no number of seconds >= 0, or leaves no job (the run named).
    """
    warm_up = run.spec.get("warm_up", 0.0)
    if isinstance(warm_up, bool) or not isinstance(warm_up, (int, float)) or not 0 <= warm_up < math.inf:
        raise RunDirError(f"{run.path}: run.json: spec.warm_up: expected a number of seconds >= 0, got {warm_up!r}")
    try:
        return warm_up_window(run.jobs, float(warm_up))
    except ValueError as err:
        raise RunDirError(f"{run.path}: {err}: give --window-days") from None


def paper_window_metrics(run: RunData, *, tau: float = DEFAULT_TAU) -> tuple[pd.DataFrame, list[str]]:
    """Throughput (jobs finished per day) and utilisation on Madon et al. 2024's Fig. 9 windows that fit in the run.

    A window fits when it ends before the run's last finish. Returns the rows (``run``, ``window_months``,
    ``window_start``, ``window_end`` in s, ``throughput_per_day``, ``mean_busy_nodes``, ``utilisation``)
    and one note naming the windows left out, if any (without the run's name, which
    :func:`~batreplay.analysis.analyze_report.merge_run_notes` adds).
    """
    rows, too_long = [], []
    last_finish = float(run.jobs["finish_time"].max())
    months = (4, 6, 8)
    for length, window in zip(months, paper_windows(run.jobs, months=months)):
        if window.end > last_finish:
            too_long.append((length, window.end))
            continue
        values = summarize(run.jobs, nb_resources=run.nb_resources, tau=tau, window=window,
                           shared_hosts=run.shared_hosts)
        rows.append({"run": run.name, "window_months": length, "window_start": window.start,
                     "window_end": window.end, "throughput_per_day": values["throughput_per_day"],
                     "mean_busy_nodes": values["mean_busy_nodes"], "utilisation": values["utilisation"]})
    notes = []
    if too_long:
        ends = ", ".join(f"{length} months ends on day {end / SECONDS_PER_DAY:.1f}" for length, end in too_long)
        notes.append(f"Fig. 9 windows left out, the run's last job finishes on day "
                     f"{last_finish / SECONDS_PER_DAY:.1f} ({ends})")
    return pd.DataFrame(rows, columns=["run", "window_months", "window_start", "window_end", "throughput_per_day",
                                       "mean_busy_nodes", "utilisation"]), notes


def node_type_table(runs: Sequence[RunData]) -> pd.DataFrame | None:
    """``node_types.csv``: :func:`batreplay.analysis.node_types.node_type_occupancy` of every run whose platform is
    known and has node types, job slots (more than one slot on a node) or shared hosts; None when no run has any
    (a single untyped node type would repeat the run's utilisation)."""
    frames = []
    for run in runs:
        platform = run.platform
        if platform is None or not (platform.node_types or any(h.slots > 1 for h in platform.hosts)
                                    or run.shared_hosts):
            continue
        table = node_type_occupancy(run.jobs, [h.node_type or UNTYPED for h in platform.hosts],
                                    [h.slots for h in platform.hosts], [h.speed for h in platform.hosts])
        frames.append(table.assign(run=run.name))
    if not frames:
        return None
    table = pd.concat(frames, ignore_index=True)
    return table[["run", *[c for c in table.columns if c != "run"]]]


class AnalyzeOutputError(ValueError):
    """An output folder that :func:`analyze` refuses to write in; the message names ``--out`` and what to do."""


def _written_by_analyze(metrics_json: Path) -> bool:
    """True when ``metrics_json`` is one that :func:`analyze` wrote: it holds the :data:`WRITTEN_BY` mark, or (earlier
    versions) exactly the keys ``parameters``, ``runs`` (a list) and ``notes``."""
    try:
        document = json.loads(metrics_json.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    if not isinstance(document, dict):
        return False
    key, value = WRITTEN_BY
    return document.get(key) == value or (set(document) == {"parameters", "runs", "notes"}
                                         and isinstance(document["runs"], list))


def check_out_dir(out_dir: str | Path, run_dirs: Sequence[str | Path] = ()) -> None:
    """Refuse an output folder where :func:`analyze` would overwrite files it did not write (see the module docstring).

    Args:
        out_dir: the output folder (``--out``); it need not exist.
        run_dirs: the runs to analyse (folders, or their jobs files).

    Raises:
        AnalyzeOutputError: ``out_dir`` is a file, one of ``run_dirs``, a run directory or a Batsim output folder,
            or holds files of analyze's names (``metrics.json``, ``report.html``, ...) that analyze did not write.
    """
    out = Path(out_dir)
    advice = f"give another folder, e.g. --out {out / 'analysis'}"
    if not out.exists():
        return
    if not out.is_dir():
        raise AnalyzeOutputError(f"--out {out}: not a folder; give the folder to write the analysis in")
    for run_dir in run_dirs:
        folder = Path(run_dir).parent if Path(run_dir).is_file() else Path(run_dir)
        if folder.exists() and folder.resolve() == out.resolve():
            raise AnalyzeOutputError(f"--out {out}: this is the run directory {run_dir} being analysed, whose "
                                     f"metrics.json analyze would overwrite; {advice}")
    held = [name for name in _RUN_FILES if (out / name).exists()] + sorted(
        p.name for p in out.glob("*_jobs.csv") if p.name != OUT_JOBS_NAME)
    if held:
        raise AnalyzeOutputError(f"--out {out}: a run directory or a Batsim output folder (it holds "
                                 f"{', '.join(held)}), whose files analyze would overwrite; {advice}")
    ours = [name for name in _OUTPUT_FILES if (out / name).exists()] + [
        f"{FIGURES_DIR}/{stem}{suffix}" for stem in FIGURE_STEMS for suffix in (".png", ".svg")
        if (out / FIGURES_DIR / f"{stem}{suffix}").exists()]
    if ours and not _written_by_analyze(out / METRICS_JSON):
        shown = ", ".join(ours[:4]) + (f" and {len(ours) - 4} more" if len(ours) > 4 else "")
        raise AnalyzeOutputError(
            f"--out {out}: holds {shown}, which analyze would replace but did not write (its {METRICS_JSON} has no "
            f'"{WRITTEN_BY[0]}": "{WRITTEN_BY[1]}"); give a new or empty folder, or move those files away')


def _clean_outputs(out_dir: Path) -> None:
    """Remove what an earlier analysis wrote here, so that no stale table stays next to new ones."""
    for name in _OUTPUT_FILES:
        (out_dir / name).unlink(missing_ok=True)
    for stem in FIGURE_STEMS:
        for suffix in (".png", ".svg"):
            (out_dir / FIGURES_DIR / f"{stem}{suffix}").unlink(missing_ok=True)


@dataclass
class _RunResults:
    """What :func:`analyze` computes run by run: one metrics row each, notes by run name, and the tables to write."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)
    user_tables: list[pd.DataFrame] = field(default_factory=list)
    window_tables: list[pd.DataFrame] = field(default_factory=list)
    log_tables: list[pd.DataFrame] = field(default_factory=list)
    lateness_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    refusals: dict[str, StreamMismatchError] = field(default_factory=dict)
    io_job_tables: list[pd.DataFrame] = field(default_factory=list)
    io_type_tables: list[pd.DataFrame] = field(default_factory=list)
    node_io_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    differences: dict[str, np.ndarray] = field(default_factory=dict)
    arrival_groups: list[tuple[list[str], UserArrivals]] = field(default_factory=list)


def _per_run_results(runs: Sequence[RunData], log: pd.DataFrame | None, *, tau: float, window: TimeWindow | None,
                     requested_times: Literal["run", "log"], progress: ProgressCallback) -> _RunResults:
    """Each run's metrics, per-user and lateness tables, Fig. 9 windows and, with ``log``, its adequacy against the
    log (a refusal is kept, with its note); reports ``"computing metrics"`` after each run (of ``len(runs) + 1``)."""
    results = _RunResults()
    steps = len(runs) + 1
    progress(PROGRESS_STEPS[1], 0, steps)
    for done, run in enumerate(runs, start=1):
        notes = results.notes[run.name] = list(run.notes) + list(run.manifest.get("input_notes", []))
        odd = {k: v for k, v in out_jobs_anomalies(run.jobs).items() if v}
        if odd:
            notes.append("out_jobs.csv rows whose redundant columns disagree or are degenerate: "
                         + ", ".join(f"{k} = {v}" for k, v in odd.items()))
        _add_job_io(run, results, notes)
        lateness = job_lateness(run.jobs, run.job_table) if run.has_recorded_submissions else None
        row = run_metrics(run, tau=tau, window=window, lateness=lateness)
        if lateness is not None:
            results.lateness_tables[run.name] = lateness_per_user(lateness)
        if run.has_users:
            results.user_tables.append(
                per_user_summary(run.jobs, run.job_table, tau=tau).reset_index().assign(run=run.name))
        table, window_notes = paper_window_metrics(run, tau=tau)
        results.window_tables.append(table)
        notes += window_notes
        if log is not None:
            try:
                table, log_notes = adequacy_against_log(run, log, requested_times=requested_times)
            except StreamMismatchError as err:
                results.refusals[run.name] = err
                notes.append(refusal_note(run, err))
            else:
                notes += log_notes
                row.update(adequacy_metrics(table))
                results.log_tables.append(table.assign(run=run.name))
        results.rows.append(row)
        progress(PROGRESS_STEPS[1], done, steps)
    return results


def _add_job_io(run: RunData, results: _RunResults, notes: list[str]) -> None:
    """Add ``run``'s CPU and I/O tables (:func:`batreplay.analysis.job_io.run_io`), when its jobs moved bytes, and
    its node I/O over time (:func:`batreplay.analysis.node_io.run_node_io`), when its folder holds the engine's
    rates, to ``results``, and their notes to ``notes`` (a file that cannot be read is said there)."""
    measured, unreadable = None, False
    try:
        measured = run_io(run)
    except ValueError as err:
        notes.append(f"no CPU and I/O times: {err}")
        unreadable = True
    if measured is not None:
        jobs, per_type = measured
        results.io_job_tables.append(jobs.jobs.assign(run=run.name))
        results.io_type_tables.append(per_type.assign(run=run.name))
        notes += jobs.notes
    try:
        over_time, io_notes = run_node_io(run, plots.smoothing_bin, moved_bytes=measured is not None or unreadable)
    except ValueError as err:  # (NodeIoError too)
        notes.append(f"no node I/O over time: {err}")
        return
    notes += io_notes
    if over_time is not None:
        results.node_io_tables[run.name] = over_time


def _add_submission_figures(runs: Sequence[RunData], results: _RunResults, notes: list[str]) -> None:
    """Add to ``results`` the data of Madon et al. 2024's Figs. 7 and 10: each run's per-job submission difference
    against the first run (:func:`~batreplay.analysis.submission_differences.differences_against_first`) and the user
    arrivals of each distinct workload (:func:`~batreplay.analysis.user_arrivals.arrivals_by_workload`); the runs left
    out of either are named in ``notes``."""
    results.differences, difference_notes = differences_against_first(runs)
    results.arrival_groups, arrival_notes = arrivals_by_workload(runs)
    notes += difference_notes + arrival_notes


def _submission_tables(runs: Sequence[RunData], results: _RunResults) -> dict[str, pd.DataFrame | None]:
    """``submission_differences.csv`` (one row per run compared with the first: ``reference``, ``run`` and
    :func:`~batreplay.analysis.submission_differences.difference_summary`, seconds) and ``user_arrivals.csv`` (one row
    per user of each distinct workload: ``runs``, joined by ``;``, then :meth:`UserArrivals.table`); None when empty."""
    differences = pd.DataFrame([{"reference": runs[0].name, "run": name, **difference_summary(values)}
                                for name, values in results.differences.items()]) if results.differences else None
    arrivals = pd.concat([arrivals.table().assign(runs=";".join(names)) for names, arrivals in results.arrival_groups],
                         ignore_index=True) if results.arrival_groups else None
    return {"differences": differences, "arrivals": None if arrivals is None else _first(arrivals, ["runs"])}


def _pair_tables(runs: Sequence[RunData], notes: list[str]) -> list[pd.DataFrame]:
    """Table I of every pair of runs that replay the same job stream, ``repetition`` telling the pairs of two
    repetitions of one experiment (:func:`~batreplay.analysis.run_adequacy.are_repetitions`); a note in ``notes``
    for each other pair."""
    tables = []
    for reference, model in itertools.combinations(runs, 2):
        try:
            table = adequacy_between_runs(reference, model)
        except StreamMismatchError as err:
            notes.append(f"runs {reference.name} and {model.name} not compared (not the same job stream): {err}")
            continue
        tables.append(table.assign(reference=reference.name, model=model.name,
                                   repetition=are_repetitions(reference, model)))
    return tables


def _reference(runs: Sequence[RunData], pairs: pd.DataFrame | None, notes: list[str]) -> pd.DataFrame | None:
    """P_ideal (:func:`~batreplay.analysis.run_adequacy.reference_table`) of the pairs of repetitions, when they
    all repeat one experiment; a note says whose it is, or why there is none."""
    if pairs is None or not pairs["repetition"].any():
        with_overheads = [run for run in runs if setting_of(run) is not None]
        if len(with_overheads) == 1:
            notes.append("adequacy reference: one run has random overheads; P_ideal needs two runs that differ only "
                         "by --overhead-seed")
        elif with_overheads:
            first, second = with_overheads[:2]
            key = setting_difference(first, second) or "overhead_seed (the same seed: the same run)"
            notes.append(f"adequacy reference: no two of the {len(with_overheads)} runs with random overheads are "
                         f"repetitions of one experiment (e.g. {first.name} and {second.name} differ in {key}, or "
                         "are not the same job stream)")
        return None
    repeated = pairs[pairs["repetition"]]
    by_name = {run.name: run for run in runs}
    settings = {json.dumps(setting_of(by_name[name]), sort_keys=True, default=str) for name in repeated["reference"]}
    if len(settings) > 1:
        notes.append(f"adequacy reference: the pairs of repetitions repeat {len(settings)} experiments; their P is in "
                     f"{ADEQUACY_PAIRS_CSV} (repetition = True), and no single P_ideal is given")
        return None
    names = sorted(set(repeated["reference"]) | set(repeated["model"]))
    notes.append(f"adequacy reference: P_ideal from {len(repeated.groupby(['reference', 'model']))} pair(s) of "
                 f"repetitions of one experiment (runs {', '.join(names)}; Baranov et al. 2018, section VIII)")
    return reference_table(repeated)


def _first(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` with ``columns`` in front."""
    return frame[list(columns) + [c for c in frame.columns if c not in columns]]


def _write_tables(out_dir: Path, runs: Sequence[RunData], results: _RunResults, pair_tables: list[pd.DataFrame],
                  reference: pd.DataFrame | None) -> tuple[list[str], dict[str, pd.DataFrame | None]]:
    """Write the CSV tables (``metrics.json`` is written before); return the names written (``metrics.json`` among
    them) and the tables the report shows: ``log``, ``pairs``, ``reference`` (P_ideal, :func:`_reference`),
    ``windows``, ``node_types``, ``io_jobs``, ``io_types``, ``node_io``, ``differences``, ``arrivals`` (None when
    absent)."""
    pd.DataFrame(results.rows).to_csv(out_dir / METRICS_CSV, index=False)
    written = [METRICS_CSV, METRICS_JSON]
    if results.user_tables:
        _first(pd.concat(results.user_tables, ignore_index=True), ["run", "user_id"]).to_csv(
            out_dir / PER_USER_CSV, index=False)
        written.append(PER_USER_CSV)
    if results.lateness_tables:
        late = pd.concat([t.reset_index().assign(run=name) for name, t in results.lateness_tables.items()],
                         ignore_index=True)
        _first(late, ["run", "user_id"]).to_csv(out_dir / LATENESS_CSV, index=False)
        written.append(LATENESS_CSV)
    tables: dict[str, pd.DataFrame | None] = {
        "log": _first(pd.concat(results.log_tables, ignore_index=True), ["run"]) if results.log_tables else None,
        "pairs": (_first(pd.concat(pair_tables, ignore_index=True), ["reference", "model"]) if pair_tables
                  else None),
        "windows": pd.concat(results.window_tables, ignore_index=True),
        "node_types": node_type_table(runs),
        "io_jobs": _first(pd.concat(results.io_job_tables, ignore_index=True), ["run"]) if results.io_job_tables
        else None,
        "io_types": _first(pd.concat(results.io_type_tables, ignore_index=True), ["run"]) if results.io_type_tables
        else None,
        "node_io": _first(pd.concat([t.assign(run=name) for name, t in results.node_io_tables.items()],
                                    ignore_index=True), ["run"]) if results.node_io_tables else None,
    }
    tables.update(_submission_tables(runs, results))
    tables["reference"] = reference
    for key, name in (("log", ADEQUACY_LOG_CSV), ("pairs", ADEQUACY_PAIRS_CSV),
                      ("reference", ADEQUACY_REFERENCE_CSV), ("windows", WINDOWS_CSV),
                      ("node_types", NODE_TYPES_CSV), ("io_jobs", JOB_IO_CSV), ("io_types", NODE_TYPE_IO_CSV),
                      ("node_io", NODE_IO_CSV), ("differences", SUBMISSION_DIFFERENCES_CSV),
                      ("arrivals", USER_ARRIVALS_CSV)):
        if tables[key] is not None:
            tables[key].to_csv(out_dir / name, index=False)
            written.append(name)
    return written, tables


def _check_arguments(run_dirs: Sequence[str | Path], tau: float, swf_log: str | Path | None,
                     requested_times: str) -> None:
    """The checks of :func:`analyze`'s arguments that need no file read (but the SWF log's existence)."""
    if not run_dirs:
        raise ValueError("analyze: give at least one run directory")
    if not tau > 0:
        raise ValueError(f"tau must be > 0 s, got {tau}")
    if requested_times not in REQUESTED_TIMES_CHOICES:
        raise ValueError(f"adequacy_requested_times must be 'run' or 'log', got {requested_times!r}")
    if swf_log is not None and not Path(swf_log).is_file():
        raise FileNotFoundError(f"SWF log {swf_log}: no such file")


def _run_names(run_dirs: Sequence[str | Path], names: Sequence[str] | None) -> Sequence[str]:
    """The runs' names: ``names`` checked (one distinct non-empty name per run directory), or the folder names.

    Raises:
        ValueError: ``names`` of another length, repeated or empty.
    """
    if names is None:
        return unique_run_names(run_dirs)
    if len(names) != len(run_dirs) or len(set(names)) != len(names) or not all(str(n).strip() for n in names):
        raise ValueError(f"--names: give {len(run_dirs)} distinct non-empty names, one per run directory, got "
                         f"{list(names)!r}")
    return names


def _no_progress(step: str, done: int, total: int) -> None:
    """The default ``on_progress``: nothing."""


def analyze(run_dirs: Sequence[str | Path], out_dir: str | Path, *, nb_resources: int | None = None,
            tau: float = DEFAULT_TAU, swf_log: str | Path | None = None,
            window: TimeWindow | Sequence[float] | None = None,
            gantt_window: TimeWindow | Sequence[float] | None = None,
            adequacy_requested_times: Literal["run", "log"] = "run",
            on_progress: ProgressCallback | None = None, names: Sequence[str] | None = None,
            may_read: Callable[[Path], bool] | None = None) -> Path:
    """Analyse runs side by side and write tables, figures and ``report.html`` into ``out_dir``.

    Args:
        run_dirs: batreplay run directories or Batsim output folders (at least one).
        out_dir: output folder (created; files of an earlier analysis there are replaced; a run directory or a
            folder holding files of these names that analyze did not write is refused, :func:`check_out_dir`).
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
            changed walltimes is compared too (see :func:`batreplay.analysis.run_adequacy.adequacy_against_log`).
        on_progress: called as ``on_progress(step, done, total)`` when a step starts (``done = 0``) and after
            each of its items: ``"reading runs"`` (each run, then the SWF log), ``"computing metrics"`` (each
            run, then the pairs of runs), ``"drawing figures"`` (each figure), ``"writing report"``
            (:data:`PROGRESS_STEPS`).
        names: what tables and figures call the runs, one distinct name per run directory, in order; default the
            folder names (:func:`~batreplay.analysis.run_dir.unique_run_names`).
        may_read: which platform files named by the runs' ``run.json`` may be opened (see
            :func:`~batreplay.analysis.run_dir.load_run`); None: any.

    Returns:
        The path of ``report.html``.

    Raises:
        ValueError: no run; a bad window, Gantt window, tau or ``adequacy_requested_times``.
            AnalyzeOutputError: an output folder refused by :func:`check_out_dir` (before anything is read).
            RunDirError /
            OutJobsError / PlatformError: a run that cannot be read (file, line, column named), an unknown
            number of resources. FileNotFoundError / SwfFormatError: an unreadable SWF log.
            NotInLogError: ``swf_log`` given but no run's jobs are all in it (each run's reason given).
    """
    _check_arguments(run_dirs, tau, swf_log, adequacy_requested_times)
    progress = on_progress or _no_progress
    window = window_from_days(window)
    gantt = window_from_days(gantt_window, what="gantt window")
    names = _run_names(run_dirs, names)
    check_out_dir(out_dir, run_dirs)  # before any work
    reads = len(run_dirs) + (swf_log is not None)
    progress(PROGRESS_STEPS[0], 0, reads)
    runs = []
    for path, name in zip(run_dirs, names):
        runs.append(load_run(path, nb_resources=nb_resources, name=name, may_read=may_read))
        progress(PROGRESS_STEPS[0], len(runs), reads)
    log = None
    if swf_log is not None:
        log = read_swf(swf_log)
        progress(PROGRESS_STEPS[0], reads, reads)

    results = _per_run_results(runs, log, tau=tau, window=window, requested_times=adequacy_requested_times,
                               progress=progress)
    if log is not None and not results.log_tables and all(isinstance(e, NotInLogError)
                                                          for e in results.refusals.values()):
        raise NotInLogError(f"no run can be compared with the log {swf_log}: "
                            + "; ".join(f"run {name}: {err}" for name, err in results.refusals.items()))
    notes = merge_run_notes(results.notes)
    pair_tables = _pair_tables(runs, notes)
    reference = _reference(runs, pd.concat(pair_tables, ignore_index=True) if pair_tables else None, notes)
    _add_submission_figures(runs, results, notes)
    progress(PROGRESS_STEPS[1], len(runs) + 1, len(runs) + 1)

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean_outputs(out_dir)
    parameters = {"tau": tau, "window": None if window is None else {"start": window.start, "end": window.end},
                  "swf_log": None if swf_log is None else str(swf_log), "nb_resources": nb_resources,
                  "adequacy_requested_times": adequacy_requested_times}
    # first, with the mark: the files written after it are known as analyze's even if this run is interrupted
    write_json_atomically(out_dir / METRICS_JSON, {WRITTEN_BY[0]: WRITTEN_BY[1], "parameters": parameters,
                                                   "runs": results.rows, "notes": notes})
    written, tables = _write_tables(out_dir, runs, results, pair_tables, reference)

    if gantt is None:
        gantt = plots.default_gantt_window(runs, start=None if window is None else window.start)
    figures = draw_figures(runs, results.lateness_tables, gantt, out_dir / FIGURES_DIR,
                           lambda done, total: progress(PROGRESS_STEPS[2], done, total),
                           node_io_tables=results.node_io_tables, differences=results.differences,
                           arrival_groups=results.arrival_groups)
    progress(PROGRESS_STEPS[3], 0, 1)
    content = report_content(runs, results.rows, tables["log"], results.refusals, tables["pairs"], tables["windows"],
                             figures, notes, parameters, written, FIGURES_DIR, tables["node_types"], tables["io_types"],
                             reference=reference)
    report = write_report(content, out_dir / REPORT_HTML)
    progress(PROGRESS_STEPS[3], 1, 1)
    return report

