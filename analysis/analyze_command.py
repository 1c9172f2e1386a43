"""``batreplay analyze RUN_DIR...``: metrics, tables, figures and an HTML report of several runs side by side.

What :func:`analyze` writes in the output folder:

- ``metrics.csv`` / ``metrics.json``: one row / object per run: where it comes from (path, scheduler,
  platform, number of resources and how it was found), the scheduling metrics of
  :func:`batreplay.analysis.metrics.summarize` (over the ``window`` when given), the lateness metrics of
  Madon et al. 2024 (eqs. 3, 4, 6 and the per-user additional lateness percentiles of Fig. 5(c)) when the run knows
  its jobs' recorded submission times, and the adequacy measure P against the recorded log with ``--swf``;
- ``per_user.csv``: :func:`batreplay.analysis.metrics.per_user_summary` of every run with a job side table;
- ``lateness_per_user.csv``: :func:`batreplay.analysis.lateness.lateness_per_user` of every run that knows
  recorded submission times;
- ``adequacy_vs_log.csv`` (with ``swf_log``): Baranov et al. 2018's Table I of each run against the recorded log,
  with the paper's reference values (SUPPZ with virtual nodes) beside it;
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from batreplay.analysis import plots
from batreplay.analysis.adequacy import (
    StreamMismatchError,
    adequacy_metrics,
    adequacy_table,
    stream_from_out_jobs,
    stream_from_swf,
)
from batreplay.analysis.lateness import job_lateness, lateness_metrics, lateness_per_user
from batreplay.analysis.metric_registry import metric_unit
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
#: the reference value of an adequate model. The column names are those of ``adequacy_vs_log.csv``, kept as
#: first published.
BARANOV_TABLE_I = pd.DataFrame({
    "prefix": ["50", "100", "250", "500", "750", "1000"],
    "seed000_measure": [0.0, 12.0, 11.4, 12.0, 11.6, 11.2],
    "seed000_nb_different_jobs": [0, 4, 13, 20, 28, 35],
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


def window_from_days(window: TimeWindow | Sequence[float] | None) -> TimeWindow | None:
    """A :class:`TimeWindow` from ``(start, length)`` in days of simulated time from t = 0 (or a window as is).

    Raises:
        ValueError: not two numbers, a negative start, or a length that is not > 0.
    """
    if window is None or isinstance(window, TimeWindow):
        return window
    values = list(window)
    if len(values) != 2:
        raise ValueError(f"window: expected START LENGTH in days, got {values!r}")
    start, length = (float(v) for v in values)
    if not (math.isfinite(start) and start >= 0):
        raise ValueError(f"window: start must be >= 0 days, got {values[0]!r}")
    if not (math.isfinite(length) and length > 0):
        raise ValueError(f"window: length must be > 0 days, got {values[1]!r}")
    return TimeWindow(start * SECONDS_PER_DAY, (start + length) * SECONDS_PER_DAY)


def run_metrics(run: RunData, *, tau: float = DEFAULT_TAU, window: TimeWindow | None = None) -> dict[str, Any]:
    """One row of ``metrics.csv``: the run's identity, :func:`~batreplay.analysis.metrics.summarize`, and the
    lateness metrics of Madon et al. 2024 when the run knows recorded submission times.

    Lateness keys: ``mean_lateness`` (s, eq. 3), ``relative_lateness`` (eq. 4), ``additional_lateness``
    (s, eq. 6), ``original_submission_span`` (s), ``user_additional_lateness_p10`` / ``_p50`` / ``_p90``
    (s, Fig. 5(c)) and ``nb_users_single_job`` (users left out of those percentiles). They cover all jobs,
    not only the window.

    Raises:
        ValueError: the run's number of resources is unknown.
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
        row.update(lateness_metrics(job_lateness(run.jobs, run.job_table)))
    return row


def _best_resources_column(run: RunData, matched: pd.DataFrame) -> str:
    """The SWF processor count the run's jobs requested: the column agreeing with more jobs."""
    requested = run.jobs.set_index("job_id")["requested_number_of_resources"].reindex(matched["job_id"]).to_numpy()
    agree = {c: int((matched[c].to_numpy() == requested).sum())
             for c in ("allocated_processors", "requested_processors")}
    return max(agree, key=lambda c: (agree[c], c == "allocated_processors"))


def adequacy_against_log(run: RunData, log: SwfLog) -> tuple[pd.DataFrame, list[str]]:
    """Baranov et al. 2018's Table I of a run (model stream J) against the recorded log (stream j).

    Jobs are matched by the run's bare Batsim job id = the SWF job number. Log jobs the run does not hold
    (dropped by the conversion, or beyond ``--max-jobs``) are left out and counted in the notes. Recorded
    times are moved to the run's clock so that the earliest recorded submission of the matched jobs falls on
    the run's first submission (the conversion's rule: simulated submission = recorded submission - first
    recorded submission). The processor count compared is the SWF field (allocated or requested) that agrees
    with more of the run's jobs.

    Returns:
        (table, notes): :func:`batreplay.analysis.adequacy.adequacy_table` with the columns of
        :data:`BARANOV_TABLE_I` added (NaN where the paper has no such k), and human-readable notes.

    Raises:
        StreamMismatchError: a run job is not in the log, the log has duplicate job numbers, the run has
            rejected jobs, or a matched job differs in submission time, resources or requested time
            (first such job named), see :func:`batreplay.analysis.adequacy.align_streams`.
    """
    table = log.jobs.assign(job_id=log.jobs["job_id"].astype(str))
    duplicated = table["job_id"][table["job_id"].duplicated()]
    if len(duplicated):
        raise StreamMismatchError(f"{log.path}: job number {duplicated.iloc[0]} appears more than once")
    ids = run.jobs["job_id"].astype(str)
    if ids.duplicated().any():
        raise StreamMismatchError(f"job id {ids[ids.duplicated()].iloc[0]!r} appears in several workloads, jobs "
                                  "cannot be matched with SWF job numbers")
    absent = ids[~ids.isin(table["job_id"])]
    if len(absent):
        raise StreamMismatchError(
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
    shift = float(matched["submission_time"].min()) - float(run.jobs["submission_time"].min())
    column = _best_resources_column(run, matched)
    notes.append(f"run {run.name} vs log: {len(matched)} jobs compared, recorded processors from SWF field "
                 f"{column}, recorded times shifted by {-shift:g} s")
    stream_log = stream_from_swf(matched.assign(submission_time=matched["submission_time"] - shift),
                                 resources_column=column)
    stream_run = stream_from_out_jobs(run.jobs, id_column="job_id")
    result = adequacy_table(stream_log, stream_run, names=(f"log {Path(log.path).name}", f"run {run.name}"))
    result = result.merge(BARANOV_TABLE_I, on="prefix", how="left")
    result["seed000_nb_different_jobs"] = result["seed000_nb_different_jobs"].astype("Int64")
    return result, notes


def adequacy_between_runs(reference: RunData, model: RunData) -> pd.DataFrame:
    """Baranov et al. 2018's Table I of two runs of the same job stream (``reference`` = j, ``model`` = J).

    Jobs are matched by full id ``workload!job_id`` when both runs have the same workload names, else by
    bare job id.

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
    and a note for the windows left out.
    """
    rows, notes = [], []
    last_finish = float(run.jobs["finish_time"].max())
    months = (4, 6, 8)
    for length, window in zip(months, paper_windows(run.jobs, months=months)):
        if window.end > last_finish:
            notes.append(f"run {run.name}: Fig. 9 window of {length} months ends after the last finish "
                         f"({window.end:.0f} s > {last_finish:.0f} s), left out")
            continue
        values = summarize(run.jobs, nb_resources=run.nb_resources, tau=tau, window=window)
        rows.append({"run": run.name, "window_months": length, "window_start": window.start,
                     "window_end": window.end, "throughput_per_day": values["throughput_per_day"],
                     "mean_busy_nodes": values["mean_busy_nodes"], "utilisation": values["utilisation"]})
    return pd.DataFrame(rows, columns=["run", "window_months", "window_start", "window_end", "throughput_per_day",
                                       "mean_busy_nodes", "utilisation"]), notes


def _figures(runs: Sequence[RunData], lateness_tables: dict[str, pd.DataFrame], window: TimeWindow | None,
             folder: Path) -> list[ReportFigure]:
    gantt_window = window or plots.default_gantt_window(runs)
    made = [
        ("submissions", plots.plot_submissions(runs),
         "Jobs submitted per day: recorded submission times (rigid replay, dashed, when the runs know them) and "
         "each run's (Madon et al. 2024, Fig. 2)."),
        ("cumulative_jobs", plots.plot_cumulative_jobs(runs),
         "Cumulative number of jobs submitted (top) and finished (bottom) (Madon et al. 2024, Fig. 3)."),
    ]
    if lateness_tables:
        made.append(("user_mean_lateness", plots.plot_user_mean_lateness(lateness_tables),
                     "Mean lateness per user (submission in the replay minus recorded submission, averaged over "
                     "the user's jobs) against the number of jobs the user submitted (Madon et al. 2024, Fig. 4, "
                     "eq. 3)."))
    made.append(("utilisation_queue", plots.plot_utilisation_and_queue(runs),
                 "Utilisation (nodes used by running jobs / nodes of the platform) and number of waiting jobs "
                 "over time."))
    divisor, unit = plots.time_unit(gantt_window.length)
    made.append(("gantt", plots.plot_gantt(runs, gantt_window),
                 f"Gantt chart of [{gantt_window.start / divisor:g}, {gantt_window.end / divisor:g}] {unit} of "
                 "simulated time: each bar is a job on its allocated resources (one colour per job)."))
    figures = []
    for stem, figure, caption in made:
        paths = plots.save_figure(figure, folder, stem)
        figures.append(ReportFigure(caption=f"{caption} ({stem}.png, {stem}.svg)", png=paths["png"]))
    return figures


def _clean_outputs(out_dir: Path) -> None:
    """Remove what an earlier analysis wrote here, so that no stale table stays next to new ones."""
    for name in _OUTPUT_FILES:
        (out_dir / name).unlink(missing_ok=True)
    for stem in FIGURE_STEMS:
        for suffix in (".png", ".svg"):
            (out_dir / FIGURES_DIR / f"{stem}{suffix}").unlink(missing_ok=True)


def analyze(run_dirs: Sequence[str | Path], out_dir: str | Path, *, nb_resources: int | None = None,
            tau: float = DEFAULT_TAU, swf_log: str | Path | None = None,
            window: TimeWindow | Sequence[float] | None = None) -> Path:
    """Analyse runs side by side and write tables, figures and ``report.html`` into ``out_dir``.

    Args:
        run_dirs: batreplay run directories or Batsim output folders (at least one).
        out_dir: output folder (created; files of an earlier analysis there are replaced).
        nb_resources: number of compute resources for every run (nodes), overriding what the folders say.
        tau: bounded slowdown threshold, seconds (Rauch 2022).
        swf_log: recorded SWF log the runs replayed; adds the adequacy table of each run against it.
        window: ``(start, length)`` in days of simulated time, or a :class:`TimeWindow`: job metrics over
            the jobs submitted in it, time-based metrics clipped to it
            (:func:`batreplay.analysis.metrics.summarize`), and the Gantt chart's window (default: the first
            day).

    Returns:
        The path of ``report.html``.

    Raises:
        ValueError: no run; a bad window or tau. RunDirError / OutJobsError / PlatformError: a run that
            cannot be read (file, line, column named), an unknown number of resources. FileNotFoundError /
            SwfFormatError: an unreadable SWF log. StreamMismatchError: ``swf_log`` given but no run is a
            replay of it (each run's reason given).
    """
    if not run_dirs:
        raise ValueError("analyze: give at least one run directory")
    if not tau > 0:
        raise ValueError(f"tau must be > 0 s, got {tau}")
    window = window_from_days(window)
    names = unique_run_names(run_dirs)
    runs = [load_run(path, nb_resources=nb_resources, name=name) for path, name in zip(run_dirs, names)]
    log = None
    if swf_log is not None:
        if not Path(swf_log).is_file():
            raise FileNotFoundError(f"SWF log {swf_log}: no such file")
        log = read_swf(swf_log)

    notes: list[str] = []
    rows = [run_metrics(run, tau=tau, window=window) for run in runs]
    for run in runs:
        notes += [f"run {run.name}: {note}" for note in run.notes]
        notes += [f"run {run.name}, input: {note}" for note in run.manifest.get("input_notes", [])]
        odd = {k: v for k, v in out_jobs_anomalies(run.jobs).items() if v}
        if odd:
            notes.append(f"run {run.name}: out_jobs.csv rows whose redundant columns disagree or are degenerate: "
                         + ", ".join(f"{k} = {v}" for k, v in odd.items()))

    log_tables: list[pd.DataFrame] = []
    if log is not None:
        refusals = []
        for run, row in zip(runs, rows):
            try:
                table, log_notes = adequacy_against_log(run, log)
            except StreamMismatchError as err:
                refusals.append(f"run {run.name}: {err}")
                continue
            notes += log_notes
            row.update(adequacy_metrics(table))
            log_tables.append(table.assign(run=run.name))
        if not log_tables:
            raise StreamMismatchError(f"no run can be compared with the log {swf_log}: " + "; ".join(refusals))
        notes += [f"not compared with the log: {reason}" for reason in refusals]

    pair_tables = []
    for reference, model in itertools.combinations(runs, 2):
        try:
            table = adequacy_between_runs(reference, model)
        except StreamMismatchError as err:
            notes.append(f"runs {reference.name} and {model.name} not compared (not the same job stream): {err}")
            continue
        pair_tables.append(table.assign(reference=reference.name, model=model.name))

    window_tables = []
    for run in runs:
        table, window_notes = paper_window_metrics(run, tau=tau)
        window_tables.append(table)
        notes += window_notes

    user_tables = [per_user_summary(run.jobs, run.job_table, tau=tau).reset_index().assign(run=run.name)
                   for run in runs if run.has_users]
    lateness_tables = {run.name: lateness_per_user(job_lateness(run.jobs, run.job_table))
                       for run in runs if run.has_recorded_submissions}

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean_outputs(out_dir)
    metrics = pd.DataFrame(rows)
    metrics.to_csv(out_dir / METRICS_CSV, index=False)
    parameters = {"tau": tau, "window": None if window is None else {"start": window.start, "end": window.end},
                  "swf_log": None if swf_log is None else str(swf_log), "nb_resources": nb_resources}
    write_json_atomically(out_dir / METRICS_JSON, {"parameters": parameters, "runs": rows, "notes": notes})

    def first(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
        return frame[list(columns) + [c for c in frame.columns if c not in columns]]

    if user_tables:
        first(pd.concat(user_tables, ignore_index=True), ["run", "user_id"]).to_csv(out_dir / PER_USER_CSV, index=False)
    if lateness_tables:
        late = pd.concat([t.reset_index().assign(run=name) for name, t in lateness_tables.items()], ignore_index=True)
        first(late, ["run", "user_id"]).to_csv(out_dir / LATENESS_CSV, index=False)
    log_frame = first(pd.concat(log_tables, ignore_index=True), ["run"]) if log_tables else None
    if log_frame is not None:
        log_frame.to_csv(out_dir / ADEQUACY_LOG_CSV, index=False)
    pairs = first(pd.concat(pair_tables, ignore_index=True), ["reference", "model"]) if pair_tables else None
    if pairs is not None:
        pairs.to_csv(out_dir / ADEQUACY_PAIRS_CSV, index=False)
    windows = pd.concat(window_tables, ignore_index=True)
    windows.to_csv(out_dir / WINDOWS_CSV, index=False)

    figures = _figures(runs, lateness_tables, window, out_dir / FIGURES_DIR)
    content = _report_content(runs, metrics, log_frame, pairs, windows, figures, notes, parameters,
                               has_users=bool(user_tables), has_lateness=bool(lateness_tables))
    return write_report(content, out_dir / REPORT_HTML)


def _report_content(runs: Sequence[RunData], metrics: pd.DataFrame, log_frame: pd.DataFrame | None,
                    pairs: pd.DataFrame | None, windows: pd.DataFrame, figures: list[ReportFigure],
                    notes: list[str], parameters: dict[str, Any], *, has_users: bool,
                    has_lateness: bool) -> ReportContent:
    window = parameters["window"]
    shown = [
        ("runs", ", ".join(run.label for run in runs)),
        ("bounded slowdown threshold tau", f"{parameters['tau']:g} s (Rauch 2022)"),
        ("metrics window", "all jobs" if window is None else
         f"[{window['start']:g} s, {window['end']:g} s] (jobs submitted in it; time-based metrics clipped to it)"),
    ]
    if parameters["swf_log"]:
        shown.append(("recorded log", parameters["swf_log"]))
    identity = ["path", "scheduler", "platform", "workload", "replay", "nb_resources_source"]
    values = metrics.set_index("run").drop(columns=identity)
    side_by_side = values.T.astype(object)
    side_by_side.insert(0, "unit", [metric_unit(k) for k in side_by_side.index])
    side_by_side.index.name = "metric"
    side_by_side.columns.name = None
    sources = metrics.set_index("run")[identity].astype(object).where(metrics.set_index("run")[identity].notna(), "?")
    tables = [
        ReportTable("Runs", sources.reset_index(), "Where each run comes from and how its number of resources "
                    "was found."),
        ReportTable("Metrics", side_by_side.reset_index(),
                    "One column per run. Waiting time = start - submission (Madon et al. 2024, Def. 12); "
                    "makespan = last finish - first submission (Madon et al. 2024, Def. 11); slowdown = "
                    "turnaround / execution time; bounded slowdown with threshold tau (Rauch 2022); utilisation = "
                    "busy node-seconds / available node-seconds over the span; lateness = replay submission - "
                    "recorded submission (Madon et al. 2024, eqs. 3, 4, 6; Fig. 5(c) for the per-user "
                    "percentiles); adequacy_vs_log = P of Baranov et al. 2018, eq. 2, on all jobs. Full values "
                    "in metrics.csv / metrics.json."),
    ]
    if log_frame is not None:
        tables.append(ReportTable(
            "Adequacy against the recorded log (Baranov et al. 2018, Table I)",
            log_frame.rename(columns={"measure": "P (s)", "nb_different_jobs": "different waiting times",
                                      "seed000_measure": "Baranov et al. 2018: P (s)",
                                      "seed000_nb_different_jobs": "Baranov et al. 2018: different"}),
            "P = sqrt(mean over the first k jobs of (V_i - v_i)^2), V_i and v_i the residence times (waiting + "
            "processing) in the run and in the log (Baranov et al. 2018, eq. 2). Beside it, the paper's Table I for "
            f"SUPPZ against itself with virtual nodes, whose reference value P = {BARANOV_REFERENCE_P:g} s marks an "
            "adequate model."))
    if pairs is not None:
        tables.append(ReportTable(
            "Adequacy between runs of the same job stream (Baranov et al. 2018, Table I)",
            pairs.rename(columns={"measure": "P (s)", "nb_different_jobs": "different waiting times"}),
            "Each pair of runs replaying the same jobs (same submission times, resources and requested times): "
            "P of the second run against the first."))
    if len(windows):
        tables.append(ReportTable(
            "Throughput and utilisation on Madon et al. 2024's Fig. 9 windows", windows,
            "Windows start two weeks after the first submission and last 4, 6 or 8 months (a month = 365.25/12 "
            "days); throughput = jobs finished per day in the window, mean busy nodes = busy node-seconds / "
            "window length."))
    extra = []
    if has_users:
        extra.append(f"Per-user metrics of the runs with a job side table: {PER_USER_CSV}.")
    if has_lateness:
        extra.append(f"Per-user lateness: {LATENESS_CSV}.")
    return ReportContent(title="batreplay analysis: " + ", ".join(run.name for run in runs), parameters=shown,
                         tables=tables, figures=figures, notes=extra + list(notes))
