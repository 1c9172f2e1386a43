"""``campaign report``: every instance of a campaign through the analysis package, into tables and figures.

What :func:`build_report` writes in the report folder (``[campaign] report_dir`` or ``--out``):

- ``README.md``: the tables in Markdown, links to the figures, the notes (failed or missing instances, input
  anomalies, differences with the published setup);
- ``report.html``: the same in one self-contained page (:mod:`batreplay.analysis.report`);
- ``instances.csv``: one row per instance: labels, status, wall time, and the metrics of
  :func:`batreplay.analysis.analyze_command.run_metrics` in raw units (seconds, nodes);
- one CSV per table kind of ``[report] tables``, ours and the published values side by side:

  * ``scheduling.csv`` (Madon et al. 2024, Table 1): makespan (Def. 11), mean and max waiting
    time (Def. 12), in days, for the recorded log and every experiment x replay model;
  * ``lateness.csv`` (Madon et al. 2024, Table 2): mean lateness (eq. 3, days), relative lateness (eq. 4) and
    additional lateness (eq. 6, seconds) of every feedback replay;
  * ``scheduler-comparison.csv`` (Rauch 2022, Tables I-III): average number of running jobs (one
    sample per submission or finish event), average bounded slowdown (tau = 10 s) and average waiting time
    (s) of each scheduler on each log;

- ``figures/*.png`` for ``[report] figures`` (:mod:`batreplay.campaign.figures`): ``submissions`` (Fig. 2),
  ``cumulative`` (Fig. 3), ``throughput-utilisation`` (Fig. 9), one file per log.

The recorded log's row of Table 1 comes from the SWF log itself (submission, wait and run times of its first
``max_jobs`` jobs, as a schedule fed to :func:`batreplay.analysis.metrics.summarize`). Published values come
from the CSV named by ``[report] published`` (columns ``log``, ``experiment``, ``replay``, ``metric``,
``value``, ``source``), matched on log name, experiment name and replay label.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console

from batreplay.analysis.analyze_command import paper_window_metrics, run_metrics
from batreplay.analysis.metric_registry import get_metric
from batreplay.analysis.metrics import summarize
from batreplay.formats.out_jobs import SUCCESS, validate_out_jobs
from batreplay.analysis.report import ReportContent, ReportFigure, ReportTable, write_report
from batreplay.analysis.run_dir import RECORDED_SUBMISSION, load_run
from batreplay.campaign import figures
from batreplay.campaign.platforms import recorded_platform_path
from batreplay.campaign.spec import CampaignSpec, Instance, LogSpec
from batreplay.campaign.worker import FAILED_SUFFIX, INSTANCE_MANIFEST, is_finished
from batreplay.platforms.reader import read_platform
from batreplay.workloads.swf import read_swf

RECORDED_EXPERIMENT = "recorded log"
RECORDED_REPLAY = "-"
PUBLISHED_COLUMNS = ("log", "experiment", "replay", "metric", "value", "source")

@dataclass(frozen=True)
class TableColumn:
    """One metric column of a comparison table; unit and label come from
    :mod:`batreplay.analysis.metric_registry`.

    Attributes:
        metric: registry name, a key of :func:`run_metrics` (``makespan``).
        unit: unit the table shows the value in (``"days"``), None for the metric's own; a unit given
            names the CSV column ``<metric>_<unit>`` (``makespan_days``), which the published values use.
        decimals: digits after the decimal point in the Markdown / HTML tables.
        label: the paper's wording of the column, instead of the registry's label.
    """

    metric: str
    unit: str | None = None
    decimals: int = 2
    label: str | None = None

    @property
    def key(self) -> str:
        """CSV column (and ``metric`` of the published values): ``makespan_days``, ``relative_lateness``."""
        return self.metric if self.unit is None else f"{self.metric}_{self.unit}"

    @property
    def heading(self) -> str:
        """Column heading: ``"makespan (days)"``."""
        metric = get_metric(self.metric)
        return (replace(metric, label=self.label) if self.label else metric).heading(self.unit)

    @property
    def divisor(self) -> float:
        """What the metric's value (seconds for times) is divided by to be in :attr:`unit`."""
        return 1.0 if self.unit is None else get_metric(self.metric).divisor(self.unit)


#: Table kind -> (title, columns).
TABLE_METRICS: dict[str, tuple[str, list[TableColumn]]] = {
    "scheduling": ("Scheduling metrics (cf. Madon et al. 2024, Table 1)", [
        TableColumn("makespan", "days"), TableColumn("mean_waiting_time", "days"),
        TableColumn("max_waiting_time", "days"),
    ]),
    "lateness": ("Lateness metrics (cf. Madon et al. 2024, Table 2)", [
        TableColumn("mean_lateness", "days"), TableColumn("relative_lateness"),
        TableColumn("additional_lateness", "s"),
    ]),
    "scheduler-comparison": ("FCFS and EASY (cf. Rauch 2022, Tables I-III)", [
        TableColumn("mean_running_jobs_per_event", decimals=1, label="avg. running jobs (per event)"),
        TableColumn("mean_bounded_slowdown", decimals=1, label="avg. bounded slowdown"),
        TableColumn("mean_waiting_time", "s", decimals=0, label="avg. waiting time"),
    ]),
}
FIGURE_CAPTIONS = {
    "submissions": "Jobs submitted per day with rigid replay (the recorded times) and the last feedback replay of "
                   "the campaign, per experiment (cf. Madon et al. 2024, Fig. 2).",
    "cumulative": "Cumulative number of jobs submitted (solid) and finished (dashed), per experiment and replay "
                  "model (cf. Madon et al. 2024, Fig. 3).",
    "throughput-utilisation": "Throughput (jobs finished per day) and mean number of busy nodes over windows of "
                              "4, 6 and 8 months starting 14 days after the first submission "
                              "(cf. Madon et al. 2024, Fig. 9).",
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


def load_instance(spec: CampaignSpec, instance: Instance) -> InstanceResult:
    """Read one instance's run directory (or failure record) and compute its metrics.

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
    metrics = run_metrics(run)
    windows, _ = paper_window_metrics(run)
    recorded = None
    if run.has_recorded_submissions:
        recorded = run.job_table[RECORDED_SUBMISSION].to_numpy(dtype="float64")
    last_line = None
    if run.job_table is not None and "swf_line" in run.job_table.columns:
        last_line = int(run.job_table["swf_line"].max())
    return InstanceResult(
        instance, "done", metrics=metrics, windows=windows,
        submissions=run.jobs["submission_time"].to_numpy(dtype="float64"),
        finishes=run.jobs["finish_time"].to_numpy(dtype="float64"), recorded_submissions=recorded,
        wall_seconds=float(manifest.get("wall_seconds", float("nan"))),
        input_notes=list(run.manifest.get("input_notes", [])), last_swf_line=last_line,
    )


def recorded_log_metrics(spec: CampaignSpec, log: LogSpec, last_line: int | None = None
                         ) -> tuple[dict[str, Any], list[str]]:
    """Metrics of the schedule recorded in the log, for Table 1's first row.

    The jobs are those of the log's lines up to ``last_line`` (the last job line the runs replay, which
    differs from the log's end with ``max_jobs``; None: the whole log). Each job with known submission, wait
    and run times and a processor count (allocated, else requested) becomes a job of a jobs table (start =
    submission + wait, finish = start + run time; times from the first submission), summarised by
    :func:`batreplay.analysis.metrics.summarize` on the recorded platform's node count. Jobs left out are
    counted in the returned notes.
    """
    path = spec.resolve(log.workload)
    frame = read_swf(path).jobs
    if last_line is not None:
        frame = frame[frame["line"] <= last_line]
    allocated = frame["allocated_processors"].to_numpy()
    processors = np.where(allocated > 0, allocated, frame["requested_processors"].to_numpy())
    submission = frame["submission_time"].to_numpy(dtype="float64")
    wait = frame["wait_time"].to_numpy(dtype="float64")
    run_time = frame["run_time"].to_numpy(dtype="float64")
    usable = (submission >= 0) & (wait >= 0) & (run_time >= 0) & (processors > 0)
    origin = float(submission[usable].min())
    requested = frame["requested_time"].to_numpy(dtype="float64")
    start = submission + wait - origin
    jobs = pd.DataFrame({
        "job_id": frame["job_id"].astype(str).to_numpy(), "workload_name": "recorded",
        "submission_time": submission - origin, "requested_number_of_resources": processors,
        "requested_time": np.where(requested > 0, requested, run_time), "final_state": SUCCESS,
        "starting_time": start, "execution_time": run_time, "finish_time": start + run_time,
    })[usable].reset_index(drop=True)
    nodes = log.nodes if log.platform is None else read_platform(recorded_platform_path(spec, log)).nb_compute
    metrics = summarize(validate_out_jobs(jobs, source=f"recorded schedule of {path}"), nb_resources=nodes)
    notes = [f"{log.name}: recorded-log row from {int(usable.sum())} of {len(frame)} jobs of {path.name}"
             + (f" ({int((~usable).sum())} left out: missing submission, wait or run time, or no processor count)"
                if (~usable).any() else "")]
    return metrics, notes


def read_published(path: Path | None) -> pd.DataFrame:
    """The published values (columns :data:`PUBLISHED_COLUMNS`), or an empty table for None.

    Raises:
        ValueError: missing columns (named), a value that is not a number (line named), or the same
            (log, experiment, replay, metric) twice.
    """
    if path is None:
        return pd.DataFrame(columns=list(PUBLISHED_COLUMNS))
    table = pd.read_csv(path, dtype={c: str for c in PUBLISHED_COLUMNS if c != "value"}, keep_default_na=False)
    missing = [c for c in PUBLISHED_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
    values = pd.to_numeric(table["value"], errors="coerce")
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(f"{path}, line {row + 2}, column 'value': {table['value'].iloc[row]!r} is not a number")
    table["value"] = values.astype("float64")
    keys = ["log", "experiment", "replay", "metric"]
    duplicated = table.duplicated(keys)
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise ValueError(f"{path}, line {row + 2}: {tuple(table.loc[row, keys])} given twice")
    return table


def _published_lookup(published: pd.DataFrame) -> dict[tuple[str, str, str, str], float]:
    return {(r.log, r.experiment.lower(), r.replay.lower(), r.metric): float(r.value)
            for r in published.itertuples(index=False)}


def comparison_table(kind: str, spec: CampaignSpec, results: list[InstanceResult],
                     recorded: dict[str, dict[str, Any]], published: pd.DataFrame) -> pd.DataFrame:
    """One table kind (:data:`TABLE_METRICS`), ours beside the published values, all logs.

    Returns:
        One row per log x experiment x replay (the recorded log first for ``scheduling``; feedback replays
        only for ``lateness``; rigid replays only for ``scheduler-comparison``), columns ``log``,
        ``experiment``, ``replay``, ``status``, then for each metric ``<metric>`` (ours, in the table's unit)
        and ``<metric>_published`` (NaN when the source gives none).
    """
    _, columns = TABLE_METRICS[kind]
    lookup = _published_lookup(published)
    rows = []
    for log in spec.logs:
        if kind == "scheduling" and log.name in recorded:
            row = {"log": log.name, "experiment": RECORDED_EXPERIMENT, "replay": RECORDED_REPLAY, "status": "log"}
            for column in columns:
                row[column.key] = recorded[log.name][column.metric] / column.divisor
                row[f"{column.key}_published"] = lookup.get((log.name, RECORDED_EXPERIMENT, RECORDED_REPLAY,
                                                             column.key), np.nan)
            rows.append(row)
        for result in results:
            instance = result.instance
            if instance.log.name != log.name:
                continue
            if kind == "lateness" and instance.replay.model != "feedback":
                continue
            if kind == "scheduler-comparison" and instance.replay.model != "rigid":
                continue
            row = {"log": log.name, "experiment": instance.experiment.name, "replay": instance.replay.label,
                   "status": result.status}
            if len(spec.seeds) > 1:
                row["seed"] = instance.seed
            for column in columns:
                value = result.metrics.get(column.metric, np.nan)
                row[column.key] = float(value) / column.divisor if value is not None else np.nan
                row[f"{column.key}_published"] = lookup.get((log.name, instance.experiment.name.lower(),
                                                             instance.replay.label.lower(), column.key), np.nan)
            rows.append(row)
    return pd.DataFrame(rows)


def _cell(value: Any, decimals: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "\u2013"
    if isinstance(value, (float, np.floating)):
        return f"{value:,.{decimals}f}"
    return str(value)


def display_table(kind: str, table: pd.DataFrame, spec: CampaignSpec, log: str) -> pd.DataFrame:
    """The rows of one log of a :func:`comparison_table`, as text cells (``ours`` / ``paper`` columns)."""
    _, metric_columns = TABLE_METRICS[kind]
    subset = table[table["log"] == log]
    has_published = any(subset[f"{column.key}_published"].notna().any() for column in metric_columns)
    columns: dict[str, list[str]] = {"experiment": list(subset["experiment"]), "replay": list(subset["replay"])}
    if "seed" in subset.columns:
        columns["seed"] = [_cell(v, 0) for v in subset["seed"]]
    for column in metric_columns:
        label, decimals = column.heading, column.decimals
        columns[label if not has_published else f"{label}: ours"] = [
            _cell(v, decimals) if s in ("done", "log") else s for v, s in zip(subset[column.key], subset["status"])]
        if has_published:
            columns[f"{label}: paper"] = [_cell(v, decimals) for v in subset[f"{column.key}_published"]]
    return pd.DataFrame(columns)


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a frame of text cells (``|`` escaped), header first."""
    def escape(text: Any) -> str:
        return str(text).replace("|", "\\|")

    numeric = [not frame[c].astype(str).str.match(r"^[A-Za-z]").any() for c in frame.columns]
    lines = ["| " + " | ".join(escape(c) for c in frame.columns) + " |",
             "|" + "|".join("---:" if right else "---" for right in numeric) + "|"]
    lines += ["| " + " | ".join(escape(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


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


def _figures(spec: CampaignSpec, results: list[InstanceResult], folder: Path) -> dict[tuple[str, str], Path]:
    """Write the figures of ``[report] figures`` for each log; returns (kind, log name) -> PNG path."""
    written: dict[tuple[str, str], Path] = {}
    experiments = [e.name for e in spec.experiments]
    replays = [r.label for r in spec.replays]
    for log in spec.logs:
        done = [r for r in results if r.instance.log.name == log.name and r.status == "done" and r.instance.seed
                == spec.seeds[0]]
        if not done:
            continue
        by_key = {(r.instance.experiment.name, r.instance.replay.label): r for r in done}
        recorded = next((r.recorded_submissions for r in done if r.recorded_submissions is not None), None)
        feedback = [label for label in replays if label != "rigid"]
        if "submissions" in spec.report.figures and recorded is not None and feedback:
            shown = feedback[-1:]  # as in the paper's Fig. 2: rigid against one feedback replay (a60)
            panels = {e: {f: by_key[(e, f)].submissions for f in shown if (e, f) in by_key} for e in experiments}
            figure = figures.submissions_grid(log.label, recorded, panels)
            written[("submissions", log.name)] = figures.save_png(figure, folder / f"fig2-submissions-{log.name}.png")
        if "cumulative" in spec.report.figures:
            panels = {e: {r: (by_key[(e, r)].submissions, by_key[(e, r)].finishes) for r in replays
                          if (e, r) in by_key} for e in experiments}
            panels = {e: p for e, p in panels.items() if p}
            figure = figures.cumulative_grid(log.label, panels)
            written[("cumulative", log.name)] = figures.save_png(figure, folder / f"fig3-cumulative-{log.name}.png")
        if "throughput-utilisation" in spec.report.figures:
            frames = [r.windows.assign(experiment=r.instance.experiment.name, replay=r.instance.replay.label)
                      for r in done if r.windows is not None and len(r.windows)]
            if frames:
                figure = figures.window_bars(log.label, pd.concat(frames, ignore_index=True), experiments, replays)
                written[("throughput-utilisation", log.name)] = figures.save_png(
                    figure, folder / f"fig9-throughput-utilisation-{log.name}.png")
    return written


def _caption(key: tuple[str, str], spec: CampaignSpec) -> str:
    kind, name = key
    label = next((log.label for log in spec.logs if log.name == name), name)
    return f"{label}: {FIGURE_CAPTIONS[kind]}"


def build_report(spec: CampaignSpec, out_dir: Path | None = None, *, console: Console | None = None) -> ReportResult:
    """Gather every instance of ``spec`` and write the report (see the module docstring).

    Instances not finished are listed (status ``failed`` / ``missing``) and left out of the figures; the
    report is written anyway.

    Raises:
        ValueError: an unreadable published-values file, or run directories that cannot be read.
    """
    out = Path(out_dir) if out_dir is not None else spec.report_dir
    console = console or Console(quiet=True)
    instances = spec.instances()
    results = []
    for number, instance in enumerate(instances, 1):
        console.print(f"[{number}/{len(instances)}] {instance.id}", highlight=False)
        results.append(load_instance(spec, instance))
    published = read_published(spec.report.published)
    notes: list[str] = list(spec.report.notes)
    recorded: dict[str, dict[str, Any]] = {}
    if "scheduling" in spec.report.tables:
        for log in spec.logs:
            lines = [r.last_swf_line for r in results if r.instance.log.name == log.name and r.last_swf_line]
            if log.max_jobs is not None and not lines:
                notes.append(f"{log.name}: no finished instance tells where max_jobs = {log.max_jobs} stops; "
                             f"no recorded-log row")
                continue
            recorded[log.name], log_notes = recorded_log_metrics(spec, log, max(lines) if lines else None)
            notes.extend(log_notes)

    if out.exists():
        for stale in ("figures",):
            shutil.rmtree(out / stale, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    csv: dict[str, Path] = {}
    everything = instances_table(results)
    csv["instances"] = out / "instances.csv"
    everything.to_csv(csv["instances"], index=False)
    tables: dict[str, pd.DataFrame] = {}
    for kind in spec.report.tables:
        tables[kind] = comparison_table(kind, spec, results, recorded, published)
        csv[kind] = out / f"{kind}.csv"
        tables[kind].to_csv(csv[kind], index=False, float_format="%.10g")
    written = _figures(spec, results, out / "figures")

    finished = [r for r in results if r.status == "done"]
    for result in results:
        if result.status == "failed":
            notes.append(f"instance {result.instance.id} FAILED: {result.error}")
        elif result.status == "missing":
            notes.append(f"instance {result.instance.id} has not run (run `campaign run` again)")
    seen_logs = set()
    for result in finished:
        if result.instance.log.name not in seen_logs:
            seen_logs.add(result.instance.log.name)
            notes.extend(f"{result.instance.log.name}: {line}" for line in result.input_notes)
    walls = [r.wall_seconds for r in finished if r.wall_seconds is not None]
    parameters = [
        ("campaign", spec.name), ("spec", spec.path.name), ("description", spec.description),
        ("instances", f"{len(finished)} finished of {len(results)}"),
        ("engine", spec.engine),
        ("instance wall time (s)", f"total {sum(walls):.0f}, longest {max(walls):.1f}" if walls else "-"),
    ]
    markdown = _markdown(spec, parameters, tables, written, notes, out)
    md_path = out / "README.md"
    md_path.write_text(markdown, encoding="utf-8")
    content = ReportContent(title=spec.report.title, parameters=parameters, notes=notes)
    for kind, table in tables.items():
        title, _ = TABLE_METRICS[kind]
        for log in spec.logs:
            content.tables.append(ReportTable(f"{title}: {log.label}", display_table(kind, table, spec, log.name),
                                              _table_description(kind, spec, table)))
    content.tables.append(ReportTable("All instances", _instances_display(everything),
                                      "Wall time of each instance and its main metrics (seconds)."))
    content.figures = [ReportFigure(_caption(key, spec), path) for key, path in written.items()]
    html = write_report(content, out / "report.html")
    return ReportResult(out, html, md_path, csv, written, notes, len(finished), len(results))


def _table_description(kind: str, spec: CampaignSpec, table: pd.DataFrame) -> str:
    published = [c for c in table.columns if c.endswith("_published")]
    has_values = spec.report.published is not None and bool(published) and table[published].notna().any().any()
    source = f" Published values: {spec.report.published.name}." if has_values else ""
    text = {
        "scheduling": "Makespan = last finish - first submission (Def. 11); waiting time = start - submission "
                      "(Def. 12); days.",
        "lateness": "Lateness of a job = its submission time in the replay - its recorded one (Def. 13); mean "
                    "lateness (eq. 3) in days, relative lateness (eq. 4), additional lateness 2 mean / (n - 1) "
                    "(eq. 6) in seconds.",
        "scheduler-comparison": "Average number of running jobs sampled at each submission and finish event "
                                "(Rauch's definition), bounded slowdown with tau = 10 s, waiting time in seconds.",
    }[kind]
    return text + source


def _instances_display(frame: pd.DataFrame) -> pd.DataFrame:
    keep = [c for c in ("id", "status", "wall_seconds", "nb_jobs", "makespan", "mean_waiting_time",
                        "max_waiting_time", "mean_bounded_slowdown", "mean_lateness") if c in frame.columns]
    return frame[keep]


def _markdown(spec: CampaignSpec, parameters: list[tuple[str, str]], tables: dict[str, pd.DataFrame],
              written: dict[tuple[str, str], Path], notes: list[str], out: Path) -> str:
    shown = spec.path.relative_to(spec.root) if spec.path.is_relative_to(spec.root) else spec.path.name
    csv_names = ", ".join(f"`{k}.csv`" for k in ["instances", *tables])
    lines = [f"# {spec.report.title}", "",
             (f"Generated by `batreplay campaign report {shown}` from the run directories of `campaign run`. "
              f"Tables as CSV beside this file ({csv_names}); the same content in `report.html`."), ""]
    lines += [f"- **{key}**: {value}" for key, value in parameters]
    for kind, table in tables.items():
        title, _ = TABLE_METRICS[kind]
        lines += ["", f"## {title}", "", _table_description(kind, spec, table)]
        for log in spec.logs:
            lines += ["", f"### {log.label}", "", markdown_table(display_table(kind, table, spec, log.name))]
    if written:
        lines += ["", "## Figures", ""]
        for key, path in written.items():
            lines += [f"![{_caption(key, spec)}]({path.relative_to(out).as_posix()})", "",
                      f"*{_caption(key, spec)}*", ""]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {note}".replace("\n", "\n  ") for note in notes]
    return "\n".join(lines) + "\n"
