"""Campaign comparison tables: ours beside the published values, with the difference, absolute and in %.

A table kind (:data:`TABLE_METRICS`) is a list of metric columns, each shown in one unit. For every log x
experiment x replay of a campaign, :func:`comparison_table` gives, per column ``<key>`` (``makespan_days``):

- ``<key>``: our value, in the column's unit;
- ``<key>_published``: the published value, from the CSV of ``[report] published`` (columns
  :data:`PUBLISHED_COLUMNS`, matched on log name, experiment name and replay label), NaN when none;
- ``<key>_diff`` = ours - published and ``<key>_diff_pct`` = 100 x (ours - published) / |published| (NaN when the
  published value is 0 or absent). Ours is first rounded to the column's decimals, the precision the papers
  print, so that equal printed values differ by 0.

The published values come from Madon, Da Costa, Pierson 2024 (Tables 1 and 2, Fig. 5(c)) and Rauch 2022
(Tables I-III); see ``expe/published/``. A table's section title names the paper whose table it has the form of
(:data:`PAPER_TABLES`) only when the campaign sets published values beside ours (:func:`section_title`): the same
form on other logs or machines is not a comparison with that paper.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from batreplay.analysis.metric_registry import get_metric
from batreplay.reports.user_models import shows

if TYPE_CHECKING:
    from batreplay.campaign.spec import CampaignSpec

RECORDED_EXPERIMENT = "recorded log"
RECORDED_REPLAY = "-"
PUBLISHED_COLUMNS = ("log", "experiment", "replay", "metric", "value", "source")
#: Heading suffixes of the three columns a metric gets when published values exist.
OURS, PAPER, DIFFERENCE = "ours", "paper", "ours \u2212 paper"


@dataclass(frozen=True)
class TableColumn:
    """One metric column of a comparison table; unit and label come from
    :mod:`batreplay.analysis.metric_registry`.

    Attributes:
        metric: registry name, a key of :func:`batreplay.analysis.analyze_command.run_metrics` (``makespan``).
        unit: unit the table shows the value in (``"days"``), None for the metric's own; a unit given
            names the CSV column ``<metric>_<unit>`` (``makespan_days``), which the published values use.
        decimals: digits after the decimal point in the Markdown / HTML tables (and the rounding of ours before
            the difference with the published value).
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


#: Table kind -> (title, columns). The title names no paper: :func:`section_title` adds it.
TABLE_METRICS: dict[str, tuple[str, list[TableColumn]]] = {
    "scheduling": ("Scheduling metrics", [
        TableColumn("makespan", "days"), TableColumn("mean_waiting_time", "days"),
        TableColumn("max_waiting_time", "days"),
    ]),
    "lateness": ("Lateness metrics", [
        TableColumn("mean_lateness", "days"), TableColumn("relative_lateness"),
        TableColumn("additional_lateness", "s"),
    ]),
    "user-lateness-percentiles": ("Per-user additional lateness", [
        TableColumn("user_additional_lateness_p10", "s", decimals=0, label="10th percentile"),
        TableColumn("user_additional_lateness_p50", "s", decimals=0, label="median"),
        TableColumn("user_additional_lateness_p90", "s", decimals=0, label="90th percentile"),
    ]),
    "scheduler-comparison": ("Scheduler comparison", [
        TableColumn("mean_running_jobs_per_event", decimals=1, label="avg. running jobs (per event)"),
        TableColumn("mean_bounded_slowdown", decimals=1, label="avg. bounded slowdown"),
        TableColumn("mean_waiting_time", "s", decimals=0, label="avg. waiting time"),
    ]),
    "user-model-comparison": ("User models compared", [
        TableColumn("makespan", "days"), TableColumn("mean_waiting_time", "h"),
        TableColumn("mean_bounded_slowdown", decimals=1),
        TableColumn("mean_lateness", "days"), TableColumn("relative_lateness", decimals=3),
        TableColumn("additional_lateness", "s", decimals=1),
        TableColumn("submission_span", "days", label="submission period"),
    ]),
    "co-scheduling": ("Co-scheduling against exclusive nodes", [
        TableColumn("makespan", "days", decimals=2),
        TableColumn("mean_waiting_time", "s", decimals=0),
        TableColumn("mean_bounded_slowdown", decimals=2),
        TableColumn("nb_killed", decimals=0, label="jobs killed at their walltime"),
        TableColumn("utilisation", decimals=3),
    ]),
}

#: Table kind -> the published table it has the form of, cited in the section title when published values are
#: set beside ours (:func:`section_title`).
PAPER_TABLES: dict[str, str] = {
    "scheduling": "Madon et al. 2024, Table 1",
    "lateness": "Madon et al. 2024, Table 2",
    "user-lateness-percentiles": "Madon et al. 2024, Fig. 5(c)",
    "scheduler-comparison": "Rauch 2022, Tables I-III",
}

DESCRIPTIONS = {
    "scheduling": "Makespan = last finish - first submission (Def. 11); waiting time = start - submission "
                  "(Def. 12); days.",
    "lateness": "Lateness of a job = its submission time in the replay - its recorded one (Def. 13); mean "
                "lateness (eq. 3) in days, relative lateness (eq. 4), additional lateness 2 mean / (n - 1) "
                "(eq. 6) in seconds.",
    "user-lateness-percentiles": "Additional lateness (eq. 6) of each user over the user's own jobs, in seconds; "
                                 "10th, 50th and 90th percentiles over the users with at least two jobs. The paper "
                                 "gives them for the a60 replay only.",
    "scheduler-comparison": "Average number of running jobs sampled at each submission and finish event "
                            "(as Rauch 2022, Sect. IV, computes it), bounded slowdown with tau = 10 s, waiting time "
                            "in seconds.",
    "user-model-comparison": "Each replay of a log, scheduler and platform under each user model: makespan (last "
                             "finish - first submission) in days, mean waiting time in hours, mean bounded slowdown "
                             "(tau = 10 s), mean lateness (eq. 3, days), relative lateness (eq. 4), additional "
                             "lateness (eq. 6, s; Madon et al. 2024) and the submission period (first to last "
                             "submission of the replay, days).",
    "co-scheduling": "Makespan = last finish - first submission, in days; waiting time = start - submission, in "
                     "seconds; bounded slowdown with tau = 10 s; jobs Batsim stopped at their walltime (a job "
                     "slowed by its neighbours runs longer); utilisation = busy node-seconds over nodes x makespan "
                     "(a shared node counts once while any job runs on it).",
}
DIFFERENCE_NOTE = ("Ours \u2212 paper: our value as printed (rounded to the table's decimals) minus the published "
                   "one, and in % of the published one (\u2013 when it is 0).")


def has_published(table: pd.DataFrame) -> bool:
    """Whether a :func:`comparison_table` sets at least one published value beside ours."""
    columns = [c for c in table.columns if c.endswith("_published")]
    return bool(columns) and bool(table[columns].notna().any().any())


def section_title(kind: str, table: pd.DataFrame) -> str:
    """The report's section title of a table kind: :data:`TABLE_METRICS`'s title, with ``(cf. <paper>)`` of
    :data:`PAPER_TABLES` only when ``table`` (:func:`comparison_table`) has published values beside ours."""
    title, _ = TABLE_METRICS[kind]
    paper = PAPER_TABLES.get(kind)
    return f"{title} (cf. {paper})" if paper is not None and has_published(table) else title


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


def published_lookup(published: pd.DataFrame) -> dict[tuple[str, str, str, str], float]:
    """``(log, experiment, replay, metric) -> value`` of :func:`read_published`'s table; experiment and replay
    lower-cased (``("kth-sp2", "perf/2", "a60", "makespan_days")``)."""
    return {(r.log, r.experiment.lower(), r.replay.lower(), r.metric): float(r.value)
            for r in published.itertuples(index=False)}


def difference(ours: float, published: float, decimals: int) -> tuple[float, float]:
    """``(ours - published, 100 x (ours - published) / |published|)``, ours first rounded to ``decimals``.

    NaN for the difference when either value is NaN; NaN for the percentage also when ``published`` is 0.
    """
    if math.isnan(ours) or math.isnan(published):
        return float("nan"), float("nan")
    delta = round(ours, decimals) - published
    delta = round(delta, decimals + 6)  # no -0.0000000001 from the binary rounding
    return delta, (100.0 * delta / abs(published) if published != 0 else float("nan"))


def add_differences(row: dict[str, Any], column: TableColumn) -> None:
    """Set ``<key>_diff`` and ``<key>_diff_pct`` of ``row`` from its ``<key>`` and ``<key>_published``."""
    delta, percent = difference(row[column.key], row[f"{column.key}_published"], column.decimals)
    row[f"{column.key}_diff"], row[f"{column.key}_diff_pct"] = delta, percent


def comparison_table(kind: str, spec: CampaignSpec, results: Sequence[Any], recorded: dict[str, dict[str, Any]],
                     published: pd.DataFrame) -> pd.DataFrame:
    """One table kind (:data:`TABLE_METRICS`), ours beside the published values and their difference, all logs.

    Args:
        kind: a key of :data:`TABLE_METRICS`.
        spec: the campaign.
        results: :class:`batreplay.reports.report.InstanceResult` of every instance (``instance``, ``status``,
            ``metrics`` in raw units: seconds, nodes).
        recorded: log name -> metrics of the schedule recorded in the log (the ``recorded log`` row of
            ``scheduling``).
        published: :func:`read_published`'s table.

    Returns:
        One row per log x experiment x replay (the recorded log first for ``scheduling``; for a kind that user
        models declare, the replays of those models only: :mod:`batreplay.reports.user_models`), columns ``log``,
        ``experiment``, ``replay``, ``status`` (``seed`` when the campaign has several), then for each metric
        ``<key>``, ``<key>_published``, ``<key>_diff`` and ``<key>_diff_pct`` (see the module docstring).
    """
    _, columns = TABLE_METRICS[kind]
    lookup = published_lookup(published)
    rows = []

    def fill(row: dict[str, Any], values: dict[str, Any], experiment: str, replay: str) -> None:
        for column in columns:
            value = values.get(column.metric)
            row[column.key] = float(value) / column.divisor if value is not None else np.nan
            row[f"{column.key}_published"] = lookup.get((row["log"], experiment.lower(), replay.lower(),
                                                         column.key), np.nan)
            add_differences(row, column)
        rows.append(row)

    for log in spec.logs:
        if kind == "scheduling" and log.name in recorded:
            fill({"log": log.name, "experiment": RECORDED_EXPERIMENT, "replay": RECORDED_REPLAY, "status": "log"},
                 recorded[log.name], RECORDED_EXPERIMENT, RECORDED_REPLAY)
        for result in results:
            instance = result.instance
            if instance.log.name != log.name:
                continue
            if not shows(kind, instance.replay.model):
                continue
            row = {"log": log.name, "experiment": instance.experiment.name, "replay": instance.replay.label,
                   "status": result.status}
            if len(spec.seeds) > 1:
                row["seed"] = instance.seed
            fill(row, result.metrics, instance.experiment.name, instance.replay.label)
    return pd.DataFrame(rows)


def cell(value: Any, decimals: int) -> str:
    """Text of a number with ``decimals`` digits and thousands separators; an en dash for NaN / None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "\u2013"
    if isinstance(value, (float, np.floating)):
        return f"{value:,.{decimals}f}"
    return str(value)


def difference_cell(delta: float, percent: float, decimals: int) -> str:
    """``"+0.23 (+1.5%)"`` (the percentage with 0 decimals from 100 %, 2 below 0.1 %); ``"0"`` for equal
    values; the percentage left out when undefined; an en dash when there is nothing to compare."""
    if math.isnan(delta):
        return "\u2013"
    if delta == 0:
        return "0"
    text = f"{delta:+,.{decimals}f}"
    if not math.isnan(percent):
        digits = 0 if abs(percent) >= 100 else 1 if abs(percent) >= 0.1 else 2
        text += f" ({percent:+,.{digits}f}%)"
    return text


def display_table(kind: str, table: pd.DataFrame, log: str) -> pd.DataFrame:
    """The rows of one log of a :func:`comparison_table` as text
    cells: per metric ``<heading>: ours``, ``: paper`` and ``: ours − paper`` (``"+0.23 (+1.5 %)"``) when the log
    has published values for it, else ``<heading>`` alone."""
    _, metric_columns = TABLE_METRICS[kind]
    subset = table[table["log"] == log]
    columns: dict[str, list[str]] = {"experiment": list(subset["experiment"]), "replay": list(subset["replay"])}
    if "seed" in subset.columns:
        columns["seed"] = [cell(v, 0) for v in subset["seed"]]
    for column in metric_columns:
        label, decimals = column.heading, column.decimals
        has_published = subset[f"{column.key}_published"].notna().any()
        ours = [cell(v, decimals) if s in ("done", "log") else s for v, s in zip(subset[column.key], subset["status"])]
        if not has_published:
            columns[label] = ours
            continue
        columns[f"{label}: {OURS}"] = ours
        columns[f"{label}: {PAPER}"] = [cell(v, decimals) for v in subset[f"{column.key}_published"]]
        deltas, percents = subset[f"{column.key}_diff"], subset[f"{column.key}_diff_pct"]
        columns[f"{label}: {DIFFERENCE}"] = [difference_cell(d, p, decimals) for d, p in zip(deltas, percents)]
    return pd.DataFrame(columns)


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a frame of text cells (``|`` escaped), header first; columns whose
    cells do not start with a letter are right-aligned."""
    def escape(text: Any) -> str:
        return str(text).replace("|", "\\|")

    numeric = [not frame[c].astype(str).str.match(r"^[A-Za-z]").any() for c in frame.columns]
    lines = ["| " + " | ".join(escape(c) for c in frame.columns) + " |",
             "|" + "|".join("---:" if right else "---" for right in numeric) + "|"]
    lines += ["| " + " | ".join(escape(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


#: Columns of the "All instances" table of the report: metric, unit shown, decimals (``instances.csv`` keeps
#: every metric in raw units).
INSTANCE_COLUMNS: tuple[TableColumn, ...] = (
    TableColumn("nb_jobs", decimals=0),
    TableColumn("makespan", "days"),
    TableColumn("mean_waiting_time", "h"),
    TableColumn("max_waiting_time", "days"),
    TableColumn("mean_bounded_slowdown", decimals=1),
    TableColumn("utilisation", decimals=3),
    TableColumn("mean_lateness", "days"),
)


def instances_display(frame: pd.DataFrame) -> pd.DataFrame:
    """The "All instances" table of the report, narrow enough for a 1400-pixel page: log, experiment, replay
    (seed when several), status, wall time (s) and the :data:`INSTANCE_COLUMNS` in readable units (the ids and
    every metric in raw units are in ``instances.csv``)."""
    columns: dict[str, list[str]] = {name: list(frame[name]) for name in ("log", "experiment", "replay")
                                     if name in frame.columns}
    if "seed" in frame.columns and frame["seed"].nunique() > 1:
        columns["seed"] = [cell(v, 0) for v in frame["seed"]]
    columns["status"] = list(frame["status"]) if "status" in frame.columns else []
    if "wall_seconds" in frame.columns:
        seconds = pd.to_numeric(frame["wall_seconds"], errors="coerce").to_numpy(dtype="float64")
        columns["wall time (s)"] = [cell(float(v), 1) for v in seconds]
    for column in INSTANCE_COLUMNS:
        if column.metric not in frame.columns:
            continue
        values = pd.to_numeric(frame[column.metric], errors="coerce").to_numpy(dtype="float64") / column.divisor
        columns[column.heading] = [cell(float(v), column.decimals) for v in values]
    return pd.DataFrame(columns)
