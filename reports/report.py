"""``campaign report``: every instance of a campaign through the analysis package, into tables and figures.

What :func:`build_report` writes in the report folder (``[campaign] report_dir`` or ``--out``):

- ``README.md``: the tables in Markdown, links to the figures, the notes (failed or missing instances, input
  anomalies, differences with the published setup) and the written explanations of ``[report] explanations``
  (:mod:`batreplay.reports.explanations`);
- ``report.html``: the same in one self-contained page (:mod:`batreplay.analysis.report`);
- ``instances.csv``: one row per instance: labels, status, wall time, and the metrics of
  :func:`batreplay.analysis.analyze_command.run_metrics` in raw units (seconds, nodes);
- ``logs.csv``: per SWF log, its jobs up to the last one replayed and those with a recorded run time of 0 s,
  dropped or kept (``zero_runtime``; :mod:`batreplay.reports.log_facts`); a Batsim JSON workload (rigid replays
  only) has no SWF to read these from: it is left out, with a note, and shown as "–" in the table;
- one CSV per table kind of ``[report] tables`` (:mod:`batreplay.reports.tables`): ours, the published value,
  and their difference, absolute and in %:

  * ``scheduling.csv`` (Madon, Da Costa, Pierson 2024, Table 1): makespan (Def. 11), mean and max waiting
    time (Def. 12), in days, for the recorded log and every experiment x replay model;
  * ``lateness.csv`` (Madon et al. 2024, Table 2): mean lateness (eq. 3, days), relative lateness (eq. 4) and
    additional lateness (eq. 6, seconds) of every feedback replay;
  * ``user-lateness-percentiles.csv`` (Madon et al. 2024, Fig. 5(c)): 10th, 50th and 90th percentiles of the
    per-user additional lateness (s) of every feedback replay;
  * ``scheduler-comparison.csv`` (Rauch 2022, Tables I-III): average number of running jobs (one
    sample per submission or finish event), average bounded slowdown (tau = 10 s) and average waiting time
    (s) of each scheduler on each log;

- ``session-graphs.csv`` with the ``session-graphs`` figure (Madon et al. 2024, Sect. 7.2), ``fig9-windows.csv``
  (throughput, mean busy nodes and utilisation of every instance on each window) with ``throughput-utilisation``,
  ``fig7-submission-differences.csv`` (per log, experiment and reactive replay: the distribution of the jobs'
  lateness in numbers), ``fig10-user-arrivals.csv`` (each user's first recorded submission, the log's start and end)
  and ``fig11-additional-lateness-scaling.csv`` (the points of Fig. 11) with their figures;
- ``figures/*.png`` for ``[report] figures``, one file per log: ``submissions`` (Fig. 2), ``cumulative``
  (Fig. 3), ``user-mean-lateness`` (Fig. 4), ``user-additional-lateness`` (Fig. 5), ``session-graphs`` (Fig. 6),
  ``submission-differences`` (Fig. 7), ``weekly-submissions`` (Fig. 8), ``throughput-utilisation`` (Fig. 9),
  ``user-arrivals`` (Fig. 10); ``additional-lateness-scaling`` (Fig. 11): one file per group of logs of one workload
  file that differ in ``max_jobs`` only (:mod:`batreplay.reports.figures`, :mod:`batreplay.reports.user_figures`,
  :mod:`batreplay.reports.session_structure`, :mod:`batreplay.reports.weekly`,
  :mod:`batreplay.reports.lateness_figures`).

The recorded log's row of Table 1 comes from the SWF log itself (:func:`batreplay.reports.log_facts.
recorded_log_metrics`). Published values come from the CSV named by ``[report] published`` (columns ``log``,
``experiment``, ``replay``, ``metric``, ``value``, ``source``), matched on log name, experiment name and replay
label. Loading the instances and drawing the figures show a progress bar with an estimate of the time left when
the console is a terminal.

The tables and figures about some user models only (the lateness tables and Figs. 2, 4, 5, 7, 8 and 11: the replays
whose users react, Fig. 6: feedback replays; the scheduler comparison: rigid replays) show the replays of the models
that declare them in the replay registry, which the report asks (:mod:`batreplay.reports.user_models`); the others
show every replay.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from batreplay.analysis.analyze_command import paper_window_metrics, run_metrics
from batreplay.analysis.lateness import job_lateness, lateness_per_user
from batreplay.analysis.report import ReportContent, ReportFigure, ReportTable, write_report
from batreplay.analysis.run_dir import RECORDED_SUBMISSION, load_run
from batreplay.campaign.spec import CampaignSpec, Instance
from batreplay.campaign.worker import FAILED_SUFFIX, INSTANCE_MANIFEST, is_finished
from batreplay.reports import explanations, figures
from batreplay.reports.lateness_figures import KINDS as LATENESS_KINDS
from batreplay.reports.lateness_figures import LatenessFigures, lateness_figures
from batreplay.reports.log_facts import LogFacts, NoRecordedScheduleError, log_facts, recorded_log_metrics
from batreplay.reports.session_structure import (PAPER_STATEMENT, session_display, session_figure, session_statistics,
                                                 session_table)
from batreplay.reports.tables import (DESCRIPTIONS, DIFFERENCE_NOTE, comparison_table, display_table, has_published,
                                      instances_display, markdown_table, read_published, section_title)
from batreplay.reports.user_figures import USER_METRICS, user_scatter_grid
from batreplay.reports.user_models import labels_shown, none_shown, shows
from batreplay.reports.weekly import weekly_figure

__all__ = ["InstanceResult", "ReportResult", "build_report", "load_instance", "markdown_table", "read_published",
           "recorded_log_metrics"]

@dataclass(frozen=True)
class FigureKind:
    """A figure kind of ``[report] figures``: its file and caption.

    Attributes:
        stem: file name stem, the paper's figure number first (``fig2-submissions``; Madon, Da Costa, Pierson
            2024); the file of a log is ``<stem>-<log>.png``.
        caption: what the figure shows (after the log's label).
    """

    stem: str
    caption: str

    @property
    def paper_label(self) -> str:
        """The paper's figure it corresponds to, from :attr:`stem`, shown beside the report's own figure number:
        ``"cf. Fig. 2"``."""
        number = re.match(r"fig(\d+)-", self.stem).group(1)
        return f"cf. Fig. {number}"


#: Figure kind -> file stem and caption. The keys are also :data:`batreplay.campaign.spec.REPORT_FIGURES`, the
#: allowed values of ``[report] figures``: spec.py cannot import this module (this module imports it); a test
#: checks that both agree.
FIGURE_KINDS: dict[str, FigureKind] = {
    "submissions": FigureKind(
        "fig2-submissions",
        "Jobs submitted per day with rigid replay (the recorded times) and the last feedback replay of the campaign, "
        "per experiment (cf. Madon et al. 2024, Fig. 2)."),
    "cumulative": FigureKind(
        "fig3-cumulative",
        "Cumulative number of jobs submitted (solid) and finished (dashed), per experiment and replay model (cf. "
        "Madon et al. 2024, Fig. 3)."),
    "user-mean-lateness": FigureKind(
        "fig4-user-mean-lateness",
        "Mean lateness of each user (eq. 3 over the user's jobs; hours, symmetric-log scale, linear within 1 h) "
        "against the number of jobs the user submitted, per experiment, for the last feedback replay of the "
        "campaign (cf. Madon et al. 2024, Fig. 4)."),
    "user-additional-lateness": FigureKind(
        "fig5-user-additional-lateness",
        "Additional lateness of each user (eq. 6 over the user's jobs; seconds, symmetric-log scale, linear within "
        "10 s) against the number of jobs the user submitted, per experiment, for the last feedback replay of the "
        "campaign; users with one job have none (cf. Madon et al. 2024, Fig. 5; percentiles in the per-user "
        "additional lateness table)."),
    "session-graphs": FigureKind(
        "fig6-session-graphs",
        "Users by the longest path and by the arity of their session graph, and the cumulative distribution of "
        "the think times between dependent sessions, per session method (cf. Madon et al. 2024, Fig. 6 and Sect. "
        "7.2)."),
    "submission-differences": FigureKind(
        "fig7-submission-differences",
        "Distribution of the per-job difference in submission time between each reactive replay and rigid replay (the "
        "recorded submission times), that is of each job's lateness (Def. 13): jobs per bin of a symmetric-log axis in "
        "hours (linear within 1 h), one panel per experiment; the legend gives the mean and the shares of jobs "
        "submitted earlier, at the same time and later (cf. Madon et al. 2024, Fig. 7; numbers in "
        "fig7-submission-differences.csv)."),
    "weekly-submissions": FigureKind(
        "fig8-weekly-submissions",
        "Mean number of jobs submitted in each hour of the week, recorded times (rigid) and each feedback replay "
        "of the first experiment (cf. Madon et al. 2024, Fig. 8)."),
    "throughput-utilisation": FigureKind(
        "fig9-throughput-utilisation",
        "Throughput (jobs finished per day) and utilisation (mean busy nodes / nodes of the instance's platform, so "
        "that node-count variants compare) over windows of 4, 6 and 8 months starting 14 days after the first "
        "submission (cf. Madon et al. 2024, Fig. 9)."),
    "user-arrivals": FigureKind(
        "fig10-user-arrivals",
        "First recorded submission of each user (blue bars) between the start and the end of the log (red bars), in "
        "days from the first recorded submission; the last 10 % of the log is shaded (cf. Madon et al. 2024, Fig. 10; "
        "times in fig10-user-arrivals.csv)."),
    "additional-lateness-scaling": FigureKind(
        "fig11-additional-lateness-scaling",
        "Additional lateness (eq. 6, s) of runs on the first n jobs of the log against the number of jobs simulated, "
        "n swept by the campaign's logs of this workload file that differ in max_jobs only; one line per reactive "
        "replay, one panel per experiment (cf. Madon et al. 2024, Fig. 11; points in "
        "fig11-additional-lateness-scaling.csv)."),
}


@dataclass
class InstanceResult:
    """One instance as the report sees it.

    Attributes:
        instance: the campaign instance.
        status: ``done``, ``failed`` (failure record) or ``missing`` (never run or interrupted).
        metrics: :func:`run_metrics` of the run (empty unless done).
        windows: Fig. 9 window metrics (empty unless done).
        submissions, finishes: job submission / finish times (s), for the figures (None unless done).
        recorded_submissions: recorded submission times of the same jobs (s), None unless done.
        per_user: per-user lateness (:func:`batreplay.analysis.lateness.lateness_per_user`) of a replay the
            per-user figures (Figs. 4 and 5) show (:mod:`batreplay.reports.user_models`), else None.
        job_lateness: each job's lateness (s, submission - recorded submission, Def. 13; in recorded submission
            order), None unless done with recorded submission times (Fig. 7).
        swf_origin: SWF submission time (s) of the run's time 0 (the first replayed job), None unless known.
        job_table: the run's ``jobs.csv``, kept only when asked (:func:`load_instance`).
        wall_seconds: wall time of the instance (``instance.json``), None unless done.
        error: the failure's message.
        input_notes: what the SWF reader and converter counted (``run.json``).
        last_swf_line: line of the log's last job replayed (``jobs.csv``), None unless done.
    """

    instance: Instance
    status: str
    metrics: dict[str, Any] = field(default_factory=dict)
    windows: pd.DataFrame | None = None
    submissions: np.ndarray | None = None
    finishes: np.ndarray | None = None
    recorded_submissions: np.ndarray | None = None
    per_user: pd.DataFrame | None = None
    job_lateness: np.ndarray | None = None
    swf_origin: float | None = None
    job_table: pd.DataFrame | None = None
    wall_seconds: float | None = None
    error: str = ""
    input_notes: list[str] = field(default_factory=list)
    last_swf_line: int | None = None


@dataclass
class ReportResult:
    """What :func:`build_report` wrote: folder, files, and counts."""

    out_dir: Path
    html: Path
    markdown: Path
    csv: dict[str, Path]
    figures: dict[tuple[str, str], Path]
    notes: list[str]
    instances_found: int
    instances_total: int


def load_instance(spec: CampaignSpec, instance: Instance, *, keep_job_table: bool = False) -> InstanceResult:
    """Read one instance's run directory (or failure record) and compute its metrics.

    Args:
        keep_job_table: keep the run's ``jobs.csv`` table in the result (for the session graphs and the user
            arrivals).

    Raises:
        RunDirError, OutJobsError: a finished run directory that cannot be read (file named).
    """
    folder = spec.output_root / instance.id
    if not is_finished(spec.output_root, instance.id):
        failed = spec.output_root / f"{instance.id}{FAILED_SUFFIX}"
        if failed.is_file():
            record = json.loads(failed.read_text())
            return InstanceResult(instance, "failed", error=str(record.get("error", "")))
        return InstanceResult(instance, "missing")
    manifest = json.loads((folder / INSTANCE_MANIFEST).read_text())
    run = load_run(folder, name=instance.id)
    lateness = job_lateness(run.jobs, run.job_table) if run.has_recorded_submissions else None
    metrics = run_metrics(run, lateness=lateness)
    windows, _ = paper_window_metrics(run)
    recorded = per_user = origin = None
    if run.has_recorded_submissions:
        recorded = run.job_table[RECORDED_SUBMISSION].to_numpy(dtype="float64")
        if any(shows(kind, instance.replay.model) for kind in USER_METRICS):  # the replays Figs. 4 and 5 show
            per_user = lateness_per_user(lateness)
        if "swf_submission_time" in run.job_table.columns:
            origin = float(run.job_table["swf_submission_time"].min() - run.job_table[RECORDED_SUBMISSION].min())
    last_line = None
    if run.job_table is not None and "swf_line" in run.job_table.columns:
        last_line = int(run.job_table["swf_line"].max())
    return InstanceResult(
        instance, "done", metrics=metrics, windows=windows,
        submissions=run.jobs["submission_time"].to_numpy(dtype="float64"),
        finishes=run.jobs["finish_time"].to_numpy(dtype="float64"), recorded_submissions=recorded,
        per_user=per_user, swf_origin=origin,
        job_lateness=None if lateness is None else lateness["lateness"].to_numpy(dtype="float64"),
        job_table=run.job_table if keep_job_table else None,
        wall_seconds=float(manifest.get("wall_seconds", float("nan"))),
        input_notes=list(run.manifest.get("input_notes", [])), last_swf_line=last_line,
    )


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console, transient=True, disable=not console.is_terminal)


def _load_all(spec: CampaignSpec, console: Console) -> list[InstanceResult]:
    """:func:`load_instance` of every instance, in the campaign's order, with a progress bar; the job table of one
    instance per log is kept for the session graphs and the user arrivals (Madon et al. 2024, Figs. 6 and 10)."""
    instances = spec.instances()
    kept: set[str] = set()  # logs whose job table is kept (one instance each, on the recorded machine if any)
    wants_tables = bool({"session-graphs", "user-arrivals"} & set(spec.report.figures))
    console.print(f"campaign report {spec.name}: loading {len(instances)} instances from {spec.output_root}",
                  highlight=False)
    ordered = sorted(instances, key=lambda i: not i.experiment.variant.is_recorded)
    results: dict[str, InstanceResult] = {}
    with _progress(console) as progress:
        task = progress.add_task("loading instances", total=len(instances))
        for instance in ordered:
            keep = wants_tables and instance.log.name not in kept
            result = load_instance(spec, instance, keep_job_table=keep)
            if keep and result.job_table is not None:
                kept.add(instance.log.name)
            results[instance.id] = result
            progress.advance(task)
    return [results[i.id] for i in instances]


@dataclass
class _Figure:
    """A figure to draw: kind, log name, file, how to draw it, extra caption text."""

    kind: str
    log: str
    path: Path
    draw: Callable[[], Figure]
    caption: str = ""


def _plans(spec: CampaignSpec, results: list[InstanceResult], facts: dict[str, LogFacts],
           sessions: dict[str, dict[str, Any]], folder: Path, notes: list[str],
           lateness: LatenessFigures) -> list[_Figure]:
    """The figures of ``[report] figures`` that can be drawn, in kind order then log order (Figs. 7, 10 and 11 as
    ``lateness`` found them, :mod:`batreplay.reports.lateness_figures`); what cannot be drawn is said in ``notes``."""
    plans: list[_Figure] = []
    experiments = [e.name for e in spec.experiments]
    for kind in spec.report.figures:
        if kind in LATENESS_KINDS:
            notes.extend(lateness.notes.get(kind, []))
            plans += [_Figure(kind, f.name, folder / f"{FIGURE_KINDS[kind].stem}-{f.name}.png", f.draw, f.caption)
                      for f in lateness.figures.get(kind, [])]
            continue
        shown = labels_shown(kind, spec.replays)  # the replays of the user models that declare the kind, or all
        for log in spec.logs:
            done = [r for r in results if r.instance.log.name == log.name and r.status == "done"
                    and r.instance.seed == spec.seeds[0]]
            if not done:
                continue
            by_key = {(r.instance.experiment.name, r.instance.replay.label): r for r in done}
            recorded = next((r.recorded_submissions for r in done if r.recorded_submissions is not None), None)
            path = folder / f"{FIGURE_KINDS[kind].stem}-{log.name}.png"
            title = log.label

            def add(draw: Callable[[], Figure], caption: str = "") -> None:
                plans.append(_Figure(kind, log.name, path, draw, caption))

            if kind == "submissions" and recorded is not None and shown:
                last = shown[-1:]  # as in the paper's Fig. 2: rigid against one feedback replay (a60)
                panels = {e: {f: by_key[(e, f)].submissions for f in last if (e, f) in by_key} for e in experiments}
                add(lambda t=title, r=recorded, p=panels: figures.submissions_grid(t, r, p))
            elif kind == "cumulative":
                panels = {e: {r: (by_key[(e, r)].submissions, by_key[(e, r)].finishes) for r in shown
                              if (e, r) in by_key} for e in experiments}
                panels = {e: p for e, p in panels.items() if p}
                add(lambda t=title, p=panels: figures.cumulative_grid(t, p))
            elif kind in ("user-mean-lateness", "user-additional-lateness"):
                if not shown:
                    notes.append(f"figure {kind}: {none_shown(kind)}")
                    continue
                label = shown[-1]
                panels = {e: by_key[(e, label)].per_user for e in experiments
                          if (e, label) in by_key and by_key[(e, label)].per_user is not None}
                if panels:
                    add(lambda k=kind, t=title, p=panels, r=label: user_scatter_grid(k, t, p, r),
                        f" Replay {label}.")
            elif kind == "session-graphs":
                if log.name not in sessions:
                    notes.append(f"{log.name}: no session graph figure (Fig. 6): {none_shown(kind)}")
                    continue
                add(lambda t=title, s=sessions[log.name]: session_figure(t, s))
            elif kind == "weekly-submissions":
                chosen = next((e for e in spec.experiments if e.variant.is_recorded), spec.experiments[0]).name
                origin = next((r.swf_origin for r in done if r.swf_origin is not None), None)
                clock = facts[log.name].clock(origin) if origin is not None and log.name in facts else None
                if clock is None or clock.unix_origin is None or recorded is None:
                    reason = clock.description if clock is not None else "no recorded submission times"
                    notes.append(f"{log.name}: no submissions-by-hour figure (Fig. 8): {reason}")
                    continue
                series = {"rigid": recorded, **{f: by_key[(chosen, f)].submissions for f in shown
                                                if (chosen, f) in by_key}}
                add(lambda t=title, c=clock, s=series, e=chosen: weekly_figure(t, c, s, e),
                    f" Experiment {chosen}; hours in {clock.description}.")
            elif kind == "throughput-utilisation":
                frames = [r.windows.assign(experiment=r.instance.experiment.name, replay=r.instance.replay.label)
                          for r in done if r.windows is not None and len(r.windows)]
                if frames:
                    add(lambda t=title, w=pd.concat(frames, ignore_index=True):
                        figures.window_bars(t, w, experiments, shown))
                else:
                    notes.append(f"{log.name}: no Fig. 9 window fits in the runs (the shortest is 14 days + 4 "
                                 f"months)")
    return plans


def _draw(plans: list[_Figure], console: Console) -> dict[tuple[str, str], tuple[Path, str]]:
    """Draw and write each planned figure; ``(kind, log) -> (PNG file, extra caption text)``."""
    written: dict[tuple[str, str], tuple[Path, str]] = {}
    if not plans:
        return written
    console.print(f"drawing {len(plans)} figures", highlight=False)
    with _progress(console) as progress:
        task = progress.add_task("drawing figures", total=len(plans))
        for plan in plans:
            written[(plan.kind, plan.log)] = (figures.save_png(plan.draw(), plan.path), plan.caption)
            progress.advance(task)
    return written


def _session_statistics(spec: CampaignSpec, results: list[InstanceResult]) -> dict[str, dict[str, Any]]:
    """Session graph statistics (Madon et al. 2024, Sect. 7.2 and Fig. 6) per log and session label of the replays
    the ``session-graphs`` figure shows; empty without that figure or such a replay."""
    labels = labels_shown("session-graphs", spec.replays)
    if "session-graphs" not in spec.report.figures or not labels:
        return {}
    statistics = {}
    for log in spec.logs:
        table = next((r.job_table for r in results if r.instance.log.name == log.name and r.job_table is not None),
                     None)
        if table is not None:
            statistics[log.name] = session_statistics(table, labels)
    return statistics


def _windows_table(results: list[InstanceResult]) -> pd.DataFrame:
    """The Fig. 9 windows of every finished instance: log, experiment, replay, seed, then
    :func:`batreplay.analysis.analyze_command.paper_window_metrics`'s columns but the run name."""
    frames = [r.windows.drop(columns="run").assign(log=r.instance.log.name, experiment=r.instance.experiment.name,
                                                   replay=r.instance.replay.label, seed=r.instance.seed)
              for r in results if r.windows is not None and len(r.windows)]
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True)
    first = ["log", "experiment", "replay", "seed"]
    return table[first + [c for c in table.columns if c not in first]]


def _logs_table(spec: CampaignSpec, facts: dict[str, LogFacts], results: list[InstanceResult]) -> pd.DataFrame:
    """The report's "Workload logs" table (no paper's): jobs of each log, those of 0 s, jobs simulated."""
    rows = []
    for log in spec.logs:
        fact = facts.get(log.name)
        replayed = next((r.metrics.get("nb_jobs") for r in results if r.instance.log.name == log.name
                         and r.status == "done" and r.instance.experiment.variant.is_recorded), None)
        rows.append({
            "log": log.label, "file": Path(log.workload).name,
            "jobs in the log": f"{fact.nb_jobs:,}" if fact else "\u2013",
            "jobs with run time 0 s": fact.zero_runtime_text if fact else "\u2013",
            "jobs simulated": f"{int(replayed):,}" if replayed is not None else "\u2013",
        })
    return pd.DataFrame(rows)


def _logs_csv(spec: CampaignSpec, facts: dict[str, LogFacts]) -> pd.DataFrame:
    """``logs.csv``: the :class:`LogFacts` of each SWF log in raw numbers."""
    columns = ["log", "workload", "last_swf_line", "nb_jobs", "nb_zero_runtime", "zero_runtime", "treatment"]
    return pd.DataFrame([[name, fact.log.as_written, fact.last_line, fact.nb_jobs, fact.nb_zero_runtime,
                          fact.log.options["zero_runtime"], fact.treatment] for name, fact in facts.items()], columns=columns)


@dataclass
class _Section:
    """A table of the report: its title, the log it is about (None: all logs), the text cells, a description."""

    title: str
    log: str | None
    frame: pd.DataFrame
    description: str


@dataclass
class _Tables:
    """The report's tables as written: CSV file per name (in the order the README lists them), the comparison
    tables by kind, every instance, the session graph statistics (log name -> label -> statistics) and their
    table (None without the ``session-graphs`` figure or a replay it shows)."""

    csv: dict[str, Path]
    comparison: dict[str, pd.DataFrame]
    instances: pd.DataFrame
    sessions: dict[str, dict[str, Any]]
    session_frame: pd.DataFrame | None


def build_report(spec: CampaignSpec, out_dir: Path | None = None, *, console: Console | None = None) -> ReportResult:
    """Gather every instance of ``spec`` and write the report (see the module docstring).

    Instances not finished are listed (status ``failed`` / ``missing``) and left out of the figures; the
    report is written anyway.

    Raises:
        ValueError: an unreadable published-values file, or run directories that cannot be read.
        CampaignSpecError: the ``[report] explanations`` file is missing (spec file and key named).
    """
    out = Path(out_dir) if out_dir is not None else spec.report_dir
    console = console or Console(quiet=True)
    explanation_text = explanations.read_explanations(spec)
    results = _load_all(spec, console)
    published = read_published(spec.report.published)
    notes: list[str] = list(spec.report.notes)
    facts, recorded = _read_logs(spec, results, notes)
    if out.exists():
        shutil.rmtree(out / "figures", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    lateness = lateness_figures(spec, results)
    tables = _write_tables(spec, results, facts, recorded, published, out, lateness.tables)
    written = _draw(_plans(spec, results, facts, tables.sessions, out / "figures", notes, lateness), console)
    notes += _instance_notes(results)
    for kind, table in tables.comparison.items():  # a log whose replays a table does not show: said, not hidden
        shown = set(table["log"]) if "log" in table.columns else set()
        notes += [f"{log.name}: no {kind} table ({none_shown(kind)} of this log)"
                  for log in spec.logs if log.name not in shown]
    parameters = _parameters(spec, results, explanation_text)
    sections = _sections(spec, facts, results, tables)
    md_path = out / "README.md"
    md_path.write_text(_markdown(spec, parameters, sections, written, notes, list(tables.csv.values()),
                                 explanation_text), encoding="utf-8")
    content = ReportContent(title=spec.report.title, parameters=parameters, notes=notes)
    # a table per log: one section per table kind (group), one sub-heading per log
    content.tables = [ReportTable(s.log, s.frame, group=s.title) if s.log
                      else ReportTable(s.title, s.frame, s.description) for s in sections]
    content.group_descriptions = {s.title: s.description for s in sections if s.log}
    content.figures = [ReportFigure(_caption(key, spec, extra), path, label=FIGURE_KINDS[key[0]].paper_label)
                       for key, (path, extra) in written.items()]
    if explanation_text is not None:
        content.texts.append(explanations.report_text(explanation_text, explanations.source_name(spec)))
    html = write_report(content, out / "report.html")
    finished = sum(r.status == "done" for r in results)
    return ReportResult(out, html, md_path, tables.csv, {key: path for key, (path, _) in written.items()}, notes,
                        finished, len(results))


def _read_logs(spec: CampaignSpec, results: list[InstanceResult],
               notes: list[str]) -> tuple[dict[str, LogFacts], dict[str, dict[str, Any]]]:
    """What the report reads from each SWF log: its :class:`LogFacts` (jobs up to the last one replayed, those of
    0 s, its clock) and, with the ``scheduling`` table, the metrics of the schedule it recorded (Madon, Da Costa,
    Pierson 2024, Table 1, first row), both by log name; a log that gives neither (a Batsim JSON workload, a site
    model, a ``max_jobs`` no finished instance locates) or no recorded schedule is said in ``notes``."""
    facts: dict[str, LogFacts] = {}
    recorded: dict[str, dict[str, Any]] = {}
    for log in spec.logs:
        if log.site_model:  # jobs drawn from a model: no log to read
            notes.append(f"{log.name}: {Path(log.workload).name} is a site model whose replays draw their jobs: no "
                         "count of a log's jobs, no recorded-log row and no wall clock")
            continue
        if log.is_json:  # rigid replays of a Batsim workload: no SWF to read
            notes.append(f"{log.name}: {Path(log.workload).name} is a Batsim JSON workload, not an SWF log: "
                         f"no count of the log's jobs, no recorded-log row and no wall clock (they come from the "
                         f"SWF file)")
            continue
        lines = [r.last_swf_line for r in results if r.instance.log.name == log.name and r.last_swf_line]
        if log.options["max_jobs"] is not None and not lines:
            notes.append(f"{log.name}: no finished instance tells where max_jobs = {log.options['max_jobs']} stops; "
                         f"no recorded-log row and no count of the log's jobs")
            continue
        facts[log.name] = log_facts(spec, log, max(lines) if log.options["max_jobs"] is not None else None)
        if "scheduling" in spec.report.tables:
            try:
                recorded[log.name], log_notes = recorded_log_metrics(spec, log, facts[log.name].last_line,
                                                                     jobs=facts[log.name].jobs)
            except NoRecordedScheduleError as err:  # e.g. a synthetic log: wait times all -1
                log_notes = [f"{err}: no recorded-log row"]
            notes.extend(log_notes)
    return facts, recorded


def _write_tables(spec: CampaignSpec, results: list[InstanceResult], facts: dict[str, LogFacts],
                  recorded: dict[str, dict[str, Any]], published: pd.DataFrame, out: Path,
                  figure_tables: dict[str, pd.DataFrame]) -> _Tables:
    """Write the report's CSV files in ``out``: ``instances.csv``, ``logs.csv``, one per table kind (ours beside
    the published values), ``fig9-windows.csv`` (Madon et al. 2024, Fig. 9) and ``session-graphs.csv`` (Fig. 6,
    Sect. 7.2) when their figures are asked for, and ``figure_tables`` (file stem -> table: the numbers of Figs. 7,
    10 and 11, :mod:`batreplay.reports.lateness_figures`)."""
    csv: dict[str, Path] = {"instances": out / "instances.csv", "logs": out / "logs.csv"}
    everything = instances_table(results)
    everything.to_csv(csv["instances"], index=False)
    _logs_csv(spec, facts).to_csv(csv["logs"], index=False)
    tables: dict[str, pd.DataFrame] = {}
    for kind in spec.report.tables:
        tables[kind] = comparison_table(kind, spec, results, recorded, published)
        csv[kind] = out / f"{kind}.csv"
        tables[kind].to_csv(csv[kind], index=False, float_format="%.10g")
    windows = _windows_table(results)
    if "throughput-utilisation" in spec.report.figures and len(windows):
        csv["fig9-windows"] = out / "fig9-windows.csv"
        windows.to_csv(csv["fig9-windows"], index=False, float_format="%.10g")
    sessions = _session_statistics(spec, results)
    session_frame = None
    if sessions:
        session_frame = session_table(sessions, {log.name: log.label for log in spec.logs})
        csv["session-graphs"] = out / "session-graphs.csv"
        session_frame.to_csv(csv["session-graphs"], index=False, float_format="%.10g")
    for stem, table in figure_tables.items():
        csv[stem] = out / f"{stem}.csv"
        table.to_csv(csv[stem], index=False, float_format="%.10g")
    return _Tables(csv, tables, everything, sessions, session_frame)


def _instance_notes(results: list[InstanceResult]) -> list[str]:
    """The report's notes on the instances: each one failed or not run, then what the input reader and
    converter said of each log (from its first finished instance)."""
    notes = []
    for result in results:
        if result.status == "failed":
            notes.append(f"instance {result.instance.id} FAILED: {result.error}")
        elif result.status == "missing":
            notes.append(f"instance {result.instance.id} has not run (run `campaign run` again)")
    seen_logs = set()
    for result in results:
        if result.status == "done" and result.instance.log.name not in seen_logs:
            seen_logs.add(result.instance.log.name)
            notes.extend(f"{result.instance.log.name}: {line}" for line in result.input_notes)
    return notes


def _parameters(spec: CampaignSpec, results: list[InstanceResult],
                explanation_text: str | None) -> list[tuple[str, str]]:
    """The report's header: the campaign, its spec file, the instances finished, the engine, the wall time."""
    finished = [r for r in results if r.status == "done"]
    walls = [r.wall_seconds for r in finished if r.wall_seconds is not None]
    parameters = [
        ("campaign", spec.name), ("spec", spec.path.name), ("description", spec.description),
        ("instances", f"{len(finished)} finished of {len(results)}"),
        ("engine", spec.engine),
        ("instance wall time (s)", f"total {sum(walls):.0f}, longest {max(walls):.1f}" if walls else "-"),
    ]
    if explanation_text is not None:
        parameters.append(("explanations", f"{explanations.source_name(spec)} (at the end of this page)"))
    return parameters


def _sections(spec: CampaignSpec, facts: dict[str, LogFacts], results: list[InstanceResult],
              tables: _Tables) -> list[_Section]:
    """The report's tables, in page order: the workload logs, each table kind (one sub-section per log), the
    session graphs (Madon et al. 2024, Fig. 6, Sect. 7.2), every instance."""
    sections = [_Section("Workload logs", None, _logs_table(spec, facts, results), LOGS_DESCRIPTION)]
    for kind, table in tables.comparison.items():
        title = section_title(kind, table)
        shown = set(table["log"]) if "log" in table.columns else set()  # (a log without the replays it shows: none)
        sections += [_Section(title, log.label, display_table(kind, table, log.name),
                              _table_description(kind, spec, table)) for log in spec.logs if log.name in shown]
    if tables.session_frame is not None:
        sections.append(_Section("Session graphs (cf. Madon et al. 2024, Fig. 6, Sect. 7.2)", None,
                                 session_display(tables.session_frame), SESSIONS_DESCRIPTION))
    sections.append(_Section("All instances", None, instances_display(tables.instances), INSTANCES_DESCRIPTION))
    return sections


LOGS_DESCRIPTION = ("Jobs of each log up to the last one the campaign replays, and those whose recorded run time is "
                    "0 s: Batsim refuses a job of 0 s, so they are dropped (zero_runtime = \"drop\", the default) or "
                    "run for 1 s (zero_runtime = \"min\"). Jobs simulated: the first experiment on the recorded "
                    "machine. Per-log counts in logs.csv. \u2013: not known (a Batsim JSON workload, or no "
                    "finished instance to tell where max_jobs stops).")
SESSIONS_DESCRIPTION = ("Session graphs built from each log's replayed jobs as the feedback replay builds them: "
                        "longest path = sessions on the longest dependency chain, arity = largest number of direct "
                        "predecessors or successors of a session, think time = submission of a session - last "
                        "finish of a session it depends on (Def. 6). " + PAPER_STATEMENT)
INSTANCES_DESCRIPTION = ("Each instance's status, wall time and main metrics, in the units shown; instances.csv "
                         "holds their ids and every metric in raw units (seconds, nodes).")

#: Keys of :func:`run_metrics` that describe where a run is (local paths) rather than what it measured; the
#: instance's labels say it instead.
_RUN_IDENTITY = frozenset({"run", "path", "scheduler", "platform", "workload", "replay", "nb_resources_source"})


def instances_table(results: list[InstanceResult]) -> pd.DataFrame:
    """One row per instance: id, labels, status, wall time (s), error, and the metrics of :func:`run_metrics`
    (without its local paths)."""
    rows = []
    for result in results:
        row = {"id": result.instance.id, **result.instance.labels, "status": result.status,
               "wall_seconds": result.wall_seconds, "error": result.error}
        row.update({k: v for k, v in result.metrics.items() if k not in _RUN_IDENTITY})
        rows.append(row)
    return pd.DataFrame(rows)


def _caption(key: tuple[str, str], spec: CampaignSpec, extra: str = "") -> str:
    kind, name = key
    label = next((log.label for log in spec.logs if log.name == name), name)
    return f"{label}: {FIGURE_KINDS[kind].caption}{extra}"


def _table_description(kind: str, spec: CampaignSpec, table: pd.DataFrame) -> str:
    has_values = spec.report.published is not None and has_published(table)
    source = f" Published values: {spec.report.published.name}. {DIFFERENCE_NOTE}" if has_values else ""
    return DESCRIPTIONS[kind] + source


def _markdown(spec: CampaignSpec, parameters: list[tuple[str, str]], sections: list[_Section],
              written: dict[tuple[str, str], tuple[Path, str]], notes: list[str], csv_files: list[Path],
              explanation_text: str | None) -> str:
    shown = spec.path.relative_to(spec.root) if spec.path.is_relative_to(spec.root) else spec.path.name
    csv_names = ", ".join(f"`{p.name}`" for p in csv_files)
    out = csv_files[0].parent
    lines = [f"# {spec.report.title}", "",
             (f"Generated by `batreplay campaign report {shown}` from the run directories of `campaign run`. "
              f"Tables as CSV beside this file ({csv_names}); the same content in `report.html`."), ""]
    lines += [f"- **{key}**: {value}" for key, value in parameters]
    previous = None
    for section in sections:
        if section.title != previous:
            lines += ["", f"## {section.title}", "", section.description]
        previous = section.title
        lines += (["", f"### {section.log}"] if section.log else []) + ["", markdown_table(section.frame)]
    if written:
        lines += ["", "## Figures", ""]
        for key, (path, extra) in written.items():
            caption = _caption(key, spec, extra)
            lines += [f"![{caption}]({path.relative_to(out).as_posix()})", "", f"*{caption}*", ""]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {note}".replace("\n", "\n  ") for note in notes]
    if explanation_text is not None:
        lines += ["", explanations.markdown_section(explanation_text, explanations.source_name(spec))]
    return "\n".join(lines) + "\n"
