"""The content of ``batreplay analyze``'s HTML report: its tables, figures and notes, in the page's order.

:func:`report_content` turns what :func:`batreplay.analysis.analyze_command.analyze` computed (one metrics row
per run, the adequacy tables, the Fig. 9 window table, the figures, the notes) into a
:class:`~batreplay.analysis.report.ReportContent`: the runs' identity, then one group per metric section of
:data:`~batreplay.analysis.metric_registry.METRIC_GROUPS`, each time column shown in a readable unit (seconds,
hours or days) named in its heading. :func:`table_i_side_by_side` lays the runs' P against the recorded log
next to Baranov et al. 2018's Table I; :func:`draw_figures` draws the figures of
:mod:`batreplay.analysis.plots` and saves them; :func:`merge_run_notes` says each note of several runs once.
The page itself is rendered by :mod:`batreplay.analysis.report`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from batreplay.analysis import plots
from batreplay.analysis.adequacy import StreamMismatchError
from batreplay.analysis.metric import SECONDS_IN, readable_time_unit
from batreplay.analysis.metric_registry import METRIC_GROUPS, get_metric, metric_sections
from batreplay.analysis.metrics import SECONDS_PER_DAY, TimeWindow
from batreplay.analysis.report import ReportContent, ReportFigure, ReportTable
from batreplay.analysis.run_adequacy import BARANOV_REFERENCE_P, BARANOV_TABLE_I
from batreplay.analysis.run_dir import RunData
from batreplay.analysis.submission_differences import plot_submission_differences
from batreplay.analysis.user_arrivals import UserArrivals, plot_user_arrivals


def merge_run_notes(per_run: Mapping[str, Sequence[str]]) -> list[str]:
    """Notes of several runs, each said once: the ones all runs share without a run name, the others with
    the runs they concern. Nothing is dropped: every line of every note is in the result.

    Identical notes (same full text) of several runs are one note. Notes of different runs whose first line
    starts alike (up to its first ``:``, e.g. ``"SWF anomalies in LOG"``) are then merged line by line, never two
    notes of the same run: a line every such run has is written once, a line only some have ends with
    ``[runs ...]`` (so per-run counts that differ show side by side). A line a note repeats is kept as many
    times as it appears; a note a run has twice is said twice.

    Args:
        per_run: run name -> its notes, in order (runs in the order of the page).

    Returns:
        The merged notes, in first-seen order, each prefixed with the runs it concerns unless it concerns all
        (and there are several runs).
    """
    runs = list(per_run)
    # (full text, how many times this run said it before) -> the runs that say it: one unit per identical note
    units: dict[tuple[str, int], list[str]] = {}
    for run, notes in per_run.items():
        seen: Counter[str] = Counter()
        for note in notes:
            units.setdefault((note, seen[note]), []).append(run)
            seen[note] += 1
    # units of the same head, at most one per run, merged line by line
    groups: list[tuple[str, list[tuple[str, list[str]]]]] = []
    for (note, _), holders in units.items():
        head = _note_head(note)
        group = next((members for key, members in groups if key == head
                      and not any(set(holders) & set(other) for _, other in members)), None)
        if group is None:
            groups.append((head, [(note, holders)]))
        else:
            group.append((note, holders))
    return [_merged_note(members, runs) for _, members in groups]


def _note_head(note: str) -> str:
    """What notes merged line by line share: their first line up to its first ``:`` (all of it without one)."""
    return note.split("\n", 1)[0].split(":", 1)[0]


def _merged_note(members: Sequence[tuple[str, Sequence[str]]], runs: Sequence[str]) -> str:
    """One note from ``members`` (note text, the runs that say it; no run twice): each line as many times as a
    note has it, tagged with its runs when not all of the members' runs have it that many times. A member's
    lines keep their order: a line the merged note does not have yet goes just before the next one it has."""
    order: list[tuple[str, int]] = []  # (line, how many times the note had it before)
    holders_of: dict[tuple[str, int], set[str]] = {}
    for note, holders in members:
        seen: Counter[str] = Counter()
        keys = []
        for line in note.split("\n"):
            keys.append((line, seen[line]))
            seen[line] += 1
        mine, cursor = set(keys), -1
        for key in keys:
            if key in holders_of:
                cursor = order.index(key)
            else:
                cursor = next((i for i in range(cursor + 1, len(order)) if order[i] in mine), len(order))
                order.insert(cursor, key)
                holders_of[key] = set()
            holders_of[key].update(holders)
    concerned = {run for _, holders in members for run in holders}
    lines = [line if holders_of[line, count] == concerned
             else f"{line} [{_runs_text([r for r in runs if r in holders_of[line, count]])}]"
             for line, count in order]
    everyone = len(concerned) == len(runs) and len(runs) > 1
    prefix = "" if everyone else f"{_runs_text([r for r in runs if r in concerned])}: "
    return prefix + "\n".join(lines)


def _runs_text(names: Sequence[str]) -> str:
    return ("run " if len(names) == 1 else "runs ") + ", ".join(names)


#: File stems of :func:`draw_figures`' figures, in report order (``user_mean_lateness`` only for runs that know
#: recorded submission times, ``submission_differences`` for runs of the first run's jobs, ``user_arrivals`` for runs
#: with user ids).
FIGURE_STEMS: tuple[str, ...] = ("submissions", "cumulative_jobs", "user_mean_lateness", "submission_differences",
                                 "user_arrivals", "utilisation_queue", "waiting_times", "node_type_occupancy",
                                 "node_io", "gantt")


def _submission_makers(runs: Sequence[RunData], differences: Mapping[str, np.ndarray] | None,
                       arrival_groups: Sequence[tuple[Sequence[str], UserArrivals]] | None, shifts: str,
                       arrivals: str) -> list[tuple[str, str, Callable[[], Any], str]]:
    """:func:`draw_figures`' entries (stem, label, drawing, caption) of Madon et al. 2024's Fig. 7 (stem ``shifts``,
    with ``differences``) and Fig. 10 (stem ``arrivals``, with ``arrival_groups``); the caption of Fig. 10 says how
    many users arrive in the last 10 % of each workload."""
    makers: list[tuple[str, str, Callable[[], Any], str]] = []
    if differences:
        makers.append((shifts, "submission differences",
                       lambda: plot_submission_differences(runs[0].name, differences, {
                           run.name: plots.run_colour(index) for index, run in enumerate(runs)}),
                       f"Distribution of the per-job difference in submission time of each run against the first, "
                       f"{runs[0].name} (jobs matched by id; positive: later; hours on a symmetric-log scale, linear "
                       f"within 1 h); against a rigid replay, the difference is the job's lateness (Madon et al. 2024, "
                       f"Fig. 7, Def. 13; submission_differences.csv holds the numbers)."))
    if arrival_groups:
        makers.append((arrivals, "user arrivals", lambda: plot_user_arrivals(arrival_groups),
                       "First recorded submission of each user (blue) between the start and end of the log (red), "
                       "once per distinct workload (Madon et al. 2024, Fig. 10; user_arrivals.csv holds the times). "
                       + " ".join(f"{', '.join(names)}: {group.description()}" for names, group in arrival_groups)))
    return makers


def draw_figures(runs: Sequence[RunData], lateness_tables: Mapping[str, pd.DataFrame], gantt_window: TimeWindow,
                 folder: Path, on_figure: Callable[[int, int], None], *,
                 node_io_tables: Mapping[str, pd.DataFrame] | None = None,
                 differences: Mapping[str, np.ndarray] | None = None,
                 arrival_groups: Sequence[tuple[Sequence[str], UserArrivals]] | None = None) -> list[ReportFigure]:
    """Draw the report's figures of ``runs`` and save each as PNG and SVG in ``folder``.

    In order (file stems in brackets, :data:`FIGURE_STEMS`): jobs submitted per day (``submissions``, Madon et al. 2024, Fig. 2),
    cumulative jobs submitted and finished (``cumulative_jobs``, Fig. 3), mean lateness per user
    (``user_mean_lateness``, Fig. 4; only when ``lateness_tables`` is not empty), the per-job submission difference
    of each run against the first (``submission_differences``, Fig. 7; only with ``differences``), the users' first
    submissions (``user_arrivals``, Fig. 10; only with ``arrival_groups``), utilisation and waiting jobs
    (``utilisation_queue``), the waiting-time distribution (``waiting_times``), the slot occupancy per node type
    over time (``node_type_occupancy``; only when a run's platform has node types), node I/O per node type over
    time (``node_io``; only with ``node_io_tables``) and a Gantt chart of ``gantt_window`` (``gantt``).

    Args:
        lateness_tables: run name -> :func:`batreplay.analysis.lateness.lateness_per_user` of the runs that know
            recorded submission times.
        gantt_window: the Gantt chart's window of simulated time (seconds).
        on_figure: called as ``on_figure(done, total)`` before the first figure (``done = 0``) and after each.
        node_io_tables: run name -> :func:`batreplay.analysis.node_io.node_io_over_time` of the runs whose folder
            holds ``node_io_rates.csv``.
        differences: run name -> per-job submission differences (s) against the first run, ``runs[0]``
            (:func:`batreplay.analysis.submission_differences.differences_against_first`).
        arrival_groups: (run names, :class:`~batreplay.analysis.user_arrivals.UserArrivals`) of each distinct
            workload (:func:`batreplay.analysis.user_arrivals.arrivals_by_workload`).

    Returns:
        One :class:`~batreplay.analysis.report.ReportFigure` per figure, captioned, in report order.

    Raises:
        ValueError: ``runs`` is empty, a run's number of resources is unknown (utilisation figure), or a job's
            ``allocated_resources`` is not an interval set (Gantt chart; the job is named).
        OSError: ``folder`` cannot be created or a figure file cannot be written.
    """
    divisor, unit = plots.time_unit(gantt_window.length)
    start_day, length_day = gantt_window.start / SECONDS_PER_DAY, gantt_window.length / SECONDS_PER_DAY
    (submissions, cumulative, user_lateness, shifts, arrivals, utilisation, waiting, node_types, node_io,
     gantt) = FIGURE_STEMS
    makers: list[tuple[str, str, Callable[[], Any], str]] = [
        (submissions, "submissions", lambda: plots.plot_submissions(runs),
         "Jobs submitted per day: recorded submission times (rigid replay, dashed, when the runs know them) and "
         "each run's (Madon et al. 2024, Fig. 2)."),
        (cumulative, "cumulative jobs", lambda: plots.plot_cumulative_jobs(runs),
         "Cumulative number of jobs submitted (top) and finished (bottom) (Madon et al. 2024, Fig. 3)."),
    ]
    if lateness_tables:
        makers.append((user_lateness, "lateness per user",
                       lambda: plots.plot_user_mean_lateness(lateness_tables),
                       "Mean lateness per user (submission in the replay minus recorded submission, averaged over "
                       "the user's jobs) against the number of jobs the user submitted (Madon et al. 2024, Fig. 4, "
                       "eq. 3); symmetric logarithmic scale, linear within one minute of 0."))
    makers += _submission_makers(runs, differences, arrival_groups, shifts, arrivals)
    makers.append((utilisation, "utilisation and queue", lambda: plots.plot_utilisation_and_queue(runs),
                   "Utilisation (nodes used by running jobs / nodes of the platform, top) and number of waiting "
                   "jobs (bottom) over time; on long runs, time-weighted means over bins whose width the axis "
                   "labels give."))
    makers.append((waiting, "waiting times", lambda: plots.plot_waiting_times(runs),
                   "Distribution of the waiting time of the jobs that ran (fraction of jobs that waited at most x "
                   "seconds; logarithmic axis from 1 s)."))
    if any(run.platform is not None and run.platform.node_types for run in runs):
        makers.append((node_types, "node types", lambda: plots.plot_node_type_occupancy(runs),
                       "Slot occupancy of each node type over time (job slots held / slots of the type; one panel "
                       "per run on a platform of node types; node_types.csv gives the totals)."))
    if node_io_tables:
        makers.append((node_io, "node I/O", lambda: plots.plot_node_io(node_io_tables),
                       "Node I/O per node type over time: bytes/s its nodes read from and wrote to storage, over the "
                       "type's I/O rate times its nodes when the platform states it (means over bins; "
                       "node_io_over_time.csv holds the values; recorded by the embedded engine)."))
    makers.append((gantt, "Gantt chart", lambda: plots.plot_gantt(runs, gantt_window),
                   f"Gantt chart of [{gantt_window.start / divisor:g}, {gantt_window.end / divisor:g}] {unit} of "
                   f"simulated time (from day {start_day:g}, {length_day:g} day{'s' if length_day != 1 else ''} "
                   "long; choose another window with --gantt-window START LENGTH, in days): each bar is a job on "
                   "its allocated resources, one colour per job (the same in every run), labelled with its job id "
                   "where the id fits in the bar."))
    figures = []
    on_figure(0, len(makers))
    for done, (stem, label, make, caption) in enumerate(makers, start=1):
        paths = plots.save_figure(make(), folder, stem)
        figures.append(ReportFigure(caption=f"{caption} ({stem}.png, {stem}.svg)", png=paths["png"], label=label))
        on_figure(done, len(makers))
    return figures


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


def table_i_side_by_side(log_frame: pd.DataFrame, reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """``adequacy_vs_log.csv`` (one row per run and k) as the report shows it: one row per k, P and the number of
    jobs whose waiting time differs for each run, then the reference of these runs when two repetitions of one
    experiment were given (``reference``: :func:`batreplay.analysis.run_adequacy.reference_table`), then the paper's
    values (Baranov et al. 2018, Table I). P is in seconds in every column, the paper's unit, so that a run's P reads
    against the reference value of 12 s.
    Row ``all`` says how many jobs when all runs agree."""
    prefixes = list(dict.fromkeys(log_frame["prefix"]))
    table = pd.DataFrame({"first k jobs": prefixes})
    totals = log_frame.loc[log_frame["prefix"] == "all", "nb_jobs"].unique()
    if len(totals) == 1:
        table["first k jobs"] = [f"all ({int(totals[0]):,})" if k == "all" else k for k in prefixes]
    for run, rows in log_frame.groupby("run", sort=False):
        rows = rows.set_index("prefix").reindex(prefixes)
        table[f"{run}: P (s)"] = rows["measure"].to_numpy()
        table[f"{run}: jobs whose waiting time differs"] = rows["nb_different_jobs"].astype("Int64").to_numpy()
    if reference is not None:  # the runs' own reference: two repetitions of one experiment (section VIII)
        ideal = reference.set_index("prefix").reindex(prefixes)
        table["P_ideal, repetitions (s)"] = ideal["p_ideal"].to_numpy()
        table["repetitions: jobs whose waiting time differs"] = ideal["nb_different_jobs_ideal"].to_numpy()
    paper = BARANOV_TABLE_I.set_index("prefix").reindex(prefixes)
    for column, label in _PAPER_I.items():
        table[label] = paper[column].to_numpy()
    table[_PAPER_I["baranov2018_nb_different_jobs"]] = table[_PAPER_I["baranov2018_nb_different_jobs"]].astype("Int64")
    return table.astype(object).where(table.notna(), None)


def _adequacy_tables(log_frame: pd.DataFrame | None, refusals: Mapping[str, StreamMismatchError],
                     pairs: pd.DataFrame | None, group: str,
                     reference: pd.DataFrame | None = None) -> list[ReportTable]:
    """The adequacy group's tables (Baranov et al. 2018): each run against the log, the runs not compared with
    it and why, and the pairs of runs of the same job stream; each only when there is something to show."""
    tables = []
    if log_frame is not None:
        tables.append(ReportTable(
            "Against the recorded log, on the first k jobs (Baranov et al. 2018, Table I)",
            table_i_side_by_side(log_frame, reference),
            "P on the first k jobs in submission order, and how many of them wait another time than in the log, "
            "for each run. "
            + ("Beside it, P_ideal: P between two repetitions of one experiment, runs that differ only by the seed "
               "of their random job overheads (Baranov et al. 2018, section VIII); a run whose P is no larger "
               "cannot be told from a repetition. " if reference is not None else "")
            + "Then the paper's Table I for SUPPZ against itself with virtual nodes, whose "
            f"reference value P = {BARANOV_REFERENCE_P:g} s marks an adequate model.", group=group))
    if reference is not None:
        tables.append(ReportTable(
            "Reference value P_ideal: repetitions of one experiment (Baranov et al. 2018, section VIII, Table I)",
            reference.rename(columns={"p_ideal": "P_ideal (s)", "nb_different_jobs_ideal":
                                      "jobs whose waiting time differs (mean over pairs)",
                                      "nb_repetition_pairs": "pairs of repetitions", **_TABLE_I, **_PAPER_I}),
            "P between runs that differ only by the seed of their random job launch and completion overheads "
            "(--overheads, --overhead-seed), mean over the pairs: the reference value of the adequacy measure.",
            group=group))
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
            pairs.rename(columns={"measure": "P (s)", **_TABLE_I}),
            "Each pair of runs replaying the same jobs (same submission times, resources and requested times): "
            "P of the second run against the first, in seconds like the table against the log.", group=group))
    return tables


#: What the report says of ``io_per_node_type.csv``.
IO_TABLE_DESCRIPTION = (
    "Jobs that completed successfully, from their profiles (Caspart et al. 2019: CPU demand and I/O demand): CPU "
    "time = flop computed on the type's hosts over their speed (s); I/O host-seconds = each job's run time beyond "
    "its computing and sleeping, times its hosts of the type (under compute sharing it also holds the wait for a "
    "share of the hosts); CPU efficiency = CPU time / host-seconds (run time x hosts: one thread per allocated "
    "host, as batreplay's schedulers run jobs); bytes read from and written to storage by the type's hosts. "
    "io_per_job.csv gives each job; jobs left out are counted in the notes.")


def report_content(runs: Sequence[RunData], rows: Sequence[Mapping[str, Any]], log_frame: pd.DataFrame | None,
                   refusals: Mapping[str, StreamMismatchError], pairs: pd.DataFrame | None, windows: pd.DataFrame,
                   figures: list[ReportFigure], notes: list[str], parameters: dict[str, Any],
                   written: Sequence[str], figures_dir: str,
                   node_types: pd.DataFrame | None = None, io_types: pd.DataFrame | None = None,
                   reference: pd.DataFrame | None = None) -> ReportContent:
    """The report of an analysis: the runs' identity, then each metric group of
    :data:`~batreplay.analysis.metric_registry.METRIC_GROUPS` that has something to show, the figures and the notes.

    Args:
        runs: the runs, in the order of the page's columns.
        rows: one ``metrics.csv`` row per run (:func:`batreplay.analysis.analyze_command.run_metrics`, plus the
            adequacy metrics against the log when computed), times in seconds.
        log_frame: ``adequacy_vs_log.csv`` (Baranov et al. 2018, Table I of each run against the log), or None.
        refusals: run name -> why it was not compared with the log.
        pairs: ``adequacy_pairs.csv`` (Table I of each pair of runs of the same job stream), or None.
        windows: ``windows.csv`` (throughput and utilisation on Madon et al. 2024's Fig. 9 windows), maybe empty.
        figures: the figures, from :func:`draw_figures`.
        notes: the notes, from :func:`merge_run_notes` and the pairs not compared.
        parameters: ``metrics.json``'s parameters: ``tau`` (s), ``window`` (``start``, ``end`` in s, or None),
            ``swf_log`` (path or None), ``adequacy_requested_times``.
        written: names of the files written next to the page, in order.
        figures_dir: the folder of the figure files, relative to the page.
        node_types: ``node_types.csv`` (occupancy per node type, :mod:`batreplay.analysis.node_types`), or None.
        io_types: ``io_per_node_type.csv`` (CPU and I/O per node type, :mod:`batreplay.analysis.job_io`), or None.
        reference: ``adequacy_reference.csv`` (P_ideal of repetitions, Baranov et al. 2018, section VIII), or None.

    Returns:
        The page's content, for :func:`batreplay.analysis.report.write_report`.

    Raises:
        ValueError: ``rows`` and ``runs`` differ in length.
        KeyError: a row lacks an identity field (``run``, ``scheduler``, ``platform``, ``replay``,
            ``nb_resources``, ``nb_resources_source``, ``workload``, ``path``) or ``parameters`` lacks ``tau``,
            ``window``, ``swf_log`` or ``adequacy_requested_times``.
    """
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
        "calls for (under an hour: s; under two days: h; beyond: days), named in its label; P (Baranov et al. "
        "2018) stays in seconds, the paper's unit, in every adequacy table. The files next to "
        f"this page keep seconds: {', '.join(written)}; figures in {figures_dir}/ (PNG and SVG).",
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
        if key == "utilisation" and node_types is not None:
            extra.append(ReportTable(
                "Per node type", node_types,
                "Node utilisation: time a node computes while at least one job runs on it (Batsim's convention), "
                "over the type's nodes and the span; slot occupancy: job-slot time held (one slot per job on each "
                "of its nodes), over the type's slots and the span (above 1 when a scheduler puts more jobs on a "
                "node than its slots, under compute sharing); mean waiting time of the jobs that ran on the type "
                "(s); speed in flop/s per core (Caspart et al.'s node types).", group=title))
        if key == "utilisation" and io_types is not None:
            extra.append(ReportTable("CPU and I/O per node type", io_types, IO_TABLE_DESCRIPTION, group=title))
        if key == "adequacy":
            extra += _adequacy_tables(log_frame, refusals, pairs, title, reference)
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
