"""Madon, Da Costa, Pierson 2024, Figs. 7, 10 and 11 in a campaign report: the numbers behind each figure (a CSV file
written beside the report) and the figures.

- ``submission-differences`` (Fig. 7): per log, one panel per experiment, the distribution of each reactive replay's
  per-job difference in submission time against rigid replay, that is against the recorded submission times: each
  job's lateness (Def. 13). Step lines over bins of a symmetric-log axis in hours
  (:mod:`batreplay.analysis.submission_differences`); ``fig7-submission-differences.csv`` sums each distribution up.
- ``user-arrivals`` (Fig. 10): per log, each user's first recorded submission between the start and the end of the
  log, read from a finished instance's ``jobs.csv`` (:mod:`batreplay.analysis.user_arrivals`); the caption counts the
  users who arrive in the last 10 % of the log. ``fig10-user-arrivals.csv`` holds the times.
- ``additional-lateness-scaling`` (Fig. 11): the additional lateness (eq. 6) of runs on the first n jobs of a log, n
  swept by several ``[[logs]]`` tables of one workload file that differ in ``max_jobs`` only (the same machine and
  conversion options); one figure per such group, named after the workload file: x = jobs simulated (the instance's
  ``nb_jobs``), one line per reactive replay, one panel per experiment. ``fig11-additional-lateness-scaling.csv``
  holds the points. A log with no such sibling is left out, with a note.

Which replays Figs. 7 and 11 show is declared by the user models (:mod:`batreplay.reports.user_models`: the models
whose users react to the simulated schedule); Fig. 10 is about the log. Like the other figures, they show the
instances of the campaign's first seed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from batreplay.analysis.submission_differences import difference_edges, difference_summary, draw_difference_steps
from batreplay.analysis.user_arrivals import UserArrivals, draw_user_arrivals, user_arrivals
from batreplay.campaign.spec import CampaignSpec, LogSpec
from batreplay.reports.figures import colour, grid
from batreplay.reports.user_models import labels_shown, none_shown

if TYPE_CHECKING:
    from batreplay.reports.report import InstanceResult

DIFFERENCES, ARRIVALS, SCALING = "submission-differences", "user-arrivals", "additional-lateness-scaling"
#: The figure kinds of this module, in paper order.
KINDS: tuple[str, ...] = (DIFFERENCES, ARRIVALS, SCALING)
#: Stem of the CSV file written beside each figure kind.
CSV_STEMS: dict[str, str] = {DIFFERENCES: "fig7-submission-differences", ARRIVALS: "fig10-user-arrivals",
                             SCALING: "fig11-additional-lateness-scaling"}
#: Suffixes stripped from a workload file's name to name its Fig. 11 group.
_WORKLOAD_SUFFIXES = (".gz", ".swf", ".json")


@dataclass
class PlannedFigure:
    """A figure to draw: ``name`` (a log's name, or a Fig. 11 group's: the file's suffix), how to draw it, and the
    text added to the kind's caption."""

    name: str
    draw: Callable[[], Figure]
    caption: str = ""


@dataclass
class LatenessFigures:
    """What :func:`lateness_figures` found for Madon et al. 2024's Figs. 7, 10 and 11: the figures of each kind
    (kind -> list), the CSV tables (file stem, :data:`CSV_STEMS` -> table, times in s; only non-empty ones) and the
    notes of each kind (kind -> what was left out, and why)."""

    figures: dict[str, list[PlannedFigure]] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)


def lateness_figures(spec: CampaignSpec, results: Sequence[InstanceResult]) -> LatenessFigures:
    """The figures of this module (Madon et al. 2024, Figs. 7, 10 and 11) that ``[report] figures`` asks for, their
    tables and their notes (see the module docstring for what each shows).

    Args:
        spec: the campaign.
        results: every instance (:func:`batreplay.reports.report.load_instance`): a finished one carries its jobs'
            lateness (``job_lateness``, s) and its metrics; one per log carries its ``jobs.csv`` (``job_table``) when
            ``user-arrivals`` is asked for.
    """
    found = LatenessFigures()
    for kind, gather in ((DIFFERENCES, _differences), (ARRIVALS, _arrivals), (SCALING, _scaling)):
        if kind in spec.report.figures:
            found.figures[kind], found.notes[kind] = [], []
            table = gather(spec, results, found.figures[kind], found.notes[kind])
            if len(table):
                found.tables[CSV_STEMS[kind]] = table
    return found


def _done(spec: CampaignSpec, results: Sequence[InstanceResult], log: str) -> dict[tuple[str, str], InstanceResult]:
    """The finished instances of ``log`` at the campaign's first seed, by (experiment, replay label)."""
    return {(r.instance.experiment.name, r.instance.replay.label): r for r in results
            if r.instance.log.name == log and r.status == "done" and r.instance.seed == spec.seeds[0]}


def _differences(spec: CampaignSpec, results: Sequence[InstanceResult], figures: list[PlannedFigure],
                 notes: list[str]) -> pd.DataFrame:
    """Fig. 7: per log, experiment -> reactive replay label -> its jobs' lateness; returns the summary table
    (``log``, ``experiment``, ``replay``, then :func:`~batreplay.analysis.submission_differences.difference_summary`
    of replay - recorded submission, seconds)."""
    shown = labels_shown(DIFFERENCES, spec.replays)
    if not shown:
        notes.append(f"figure {DIFFERENCES}: {none_shown(DIFFERENCES)}")
        return pd.DataFrame()
    rows = []
    for log in spec.logs:
        done = _done(spec, results, log.name)
        panels = {e.name: {label: done[(e.name, label)].job_lateness for label in shown
                           if (e.name, label) in done and done[(e.name, label)].job_lateness is not None}
                  for e in spec.experiments}
        panels = {experiment: series for experiment, series in panels.items() if series}
        if not panels:
            notes.append(f"{log.name}: no submission differences figure (Fig. 7): no finished replay of "
                         f"{', '.join(shown)} with recorded submission times")
            continue
        rows += [{"log": log.name, "experiment": experiment, "replay": label, **difference_summary(values)}
                 for experiment, series in panels.items() for label, values in series.items()]
        figures.append(PlannedFigure(log.name, lambda t=log.label, p=panels: differences_grid(t, p)))
    return pd.DataFrame(rows)


def differences_grid(title: str, panels: Mapping[str, Mapping[str, np.ndarray]]) -> Figure:
    """Madon et al. 2024, Fig. 7 for a campaign: one panel per experiment, one step line per reactive replay: the
    number of jobs by difference in submission time against the recorded times (the jobs' lateness), in hours on a
    symmetric-log axis shared by all panels.

    Args:
        title: figure title (the log).
        panels: experiment -> replay label -> each job's lateness (s).
    """
    figure, axes = grid(len(panels), panel_height=2.8)
    edges = difference_edges([values for series in panels.values() for values in series.values()])
    labels = list(dict.fromkeys(label for series in panels.values() for label in series))
    for axis, (experiment, series) in zip(axes, panels.items()):
        counts = draw_difference_steps(axis, series, {label: colour(label, labels) for label in series}, edges)
        highest = max(float(c.max()) for c in counts.values()) if counts else 1.0
        axis.set_ylim(0.0, max(highest, 1.0) * (1.15 + 0.12 * len(series)))  # room for the legend above the steps
        axis.set_title(experiment, fontsize="medium")
        axis.set_ylabel("jobs")
        axis.legend(loc="upper left", fontsize="x-small")
    for axis in axes[-2:]:
        axis.set_xlabel("submission \u2212 recorded submission = lateness (h, symmetric-log)")
    figure.suptitle(f"{title}: per-job submission difference, reactive replays \u2212 rigid "
                    f"(cf. Madon et al. 2024, Fig. 7)")
    return figure


def _arrivals(spec: CampaignSpec, results: Sequence[InstanceResult], figures: list[PlannedFigure],
              notes: list[str]) -> pd.DataFrame:
    """Fig. 10: per log, the users' first submissions from a finished instance's ``jobs.csv``; returns the table of
    every log (``log``, then :meth:`~batreplay.analysis.user_arrivals.UserArrivals.table`)."""
    tables = []
    for log in spec.logs:
        if log.site_model:
            notes.append(f"{log.name}: no user arrivals figure (Fig. 10): a site model's replays draw their jobs, "
                         f"there is no recorded log")
            continue
        job_table = next((r.job_table for r in results if r.instance.log.name == log.name and r.job_table is not None),
                         None)
        arrivals = user_arrivals(job_table)
        if arrivals is None:
            notes.append(f"{log.name}: no user arrivals figure (Fig. 10): no finished instance with a jobs.csv of user "
                         f"ids and recorded submission times")
            continue
        tables.append(arrivals.table().assign(log=log.name))
        figures.append(PlannedFigure(log.name, lambda t=log.label, a=arrivals: arrivals_figure(t, a),
                                     f" {arrivals.description()}"))
    if not tables:
        return pd.DataFrame()
    table = pd.concat(tables, ignore_index=True)
    return table[["log"] + [c for c in table.columns if c != "log"]]


def arrivals_figure(title: str, arrivals: UserArrivals) -> Figure:
    """Madon et al. 2024, Fig. 10 for one log: a blue bar at each user's first recorded submission, red bars at the
    start and end of the log, x in days (:func:`~batreplay.analysis.user_arrivals.draw_user_arrivals`)."""
    figure = Figure(figsize=(11.0, 2.9), layout="constrained")
    axis = figure.subplots()
    draw_user_arrivals(axis, arrivals)
    handles, labels = axis.get_legend_handles_labels()  # below the axis: the bars fill its height
    figure.legend(handles, labels, loc="outside lower center", ncols=3, fontsize="small", frameon=False)
    figure.suptitle(f"{title}: user arrivals (cf. Madon et al. 2024, Fig. 10)")
    return figure


def _sweep_key(spec: CampaignSpec, log: LogSpec) -> str:
    """What the logs of one Fig. 11 sweep share: the workload file, the machine, every option but ``max_jobs``."""
    options = {key: value for key, value in log.options.items() if key != "max_jobs"}
    return json.dumps([str(spec.resolve(log.workload).resolve()), log.platform_parameter, options], sort_keys=True,
                      default=str)


def _group_name(log: LogSpec, taken: set[str]) -> str:
    """A Fig. 11 group's name: its workload file's name without suffixes (then with its first log's name)."""
    name = Path(log.workload).name
    while name.lower().endswith(_WORKLOAD_SUFFIXES):
        name = name[: name.rfind(".")]
    return name if name not in taken else f"{name}-{log.name}"


def _scaling(spec: CampaignSpec, results: Sequence[InstanceResult], figures: list[PlannedFigure],
             notes: list[str]) -> pd.DataFrame:
    """Fig. 11: the logs grouped by :func:`_sweep_key`; returns the points of every group of two logs or more
    (``group``, ``log``, ``max_jobs``, ``experiment``, ``replay``, ``nb_jobs``, ``additional_lateness_s``)."""
    shown = labels_shown(SCALING, spec.replays)
    if not shown:
        notes.append(f"figure {SCALING}: {none_shown(SCALING)}")
        return pd.DataFrame()
    groups: dict[str, list[LogSpec]] = {}
    for log in spec.logs:
        if not log.site_model:
            groups.setdefault(_sweep_key(spec, log), []).append(log)
    tables, taken = [], set()
    for logs in groups.values():
        if len(logs) < 2:
            notes.append(f"{logs[0].name}: left out of the additional lateness scaling figure (Fig. 11): no other log "
                         f"of {Path(logs[0].workload).name} on the same machine with the same options but max_jobs")
            continue
        name = _group_name(logs[0], taken)
        taken.add(name)
        rows = [{"group": name, "log": log.name, "max_jobs": log.options.get("max_jobs"), "experiment": experiment,
                 "replay": label, "nb_jobs": result.metrics.get("nb_jobs"),
                 "additional_lateness_s": result.metrics.get("additional_lateness", float("nan"))}
                for log in logs for (experiment, label), result in _done(spec, results, log.name).items()
                if label in shown]
        if not rows:
            notes.append(f"{name}: no additional lateness scaling figure (Fig. 11): no finished replay of "
                         f"{', '.join(shown)} of logs {', '.join(log.name for log in logs)}")
            continue
        table = pd.DataFrame(rows).sort_values(["experiment", "replay", "nb_jobs"], kind="stable")
        tables.append(table)
        experiments = [e.name for e in spec.experiments if e.name in set(table["experiment"])]
        sweep = ", ".join(f"{log.name} ({log.options.get('max_jobs') or 'whole log'})" for log in logs)
        figures.append(PlannedFigure(name, lambda t=name, d=table, e=experiments: scaling_grid(t, d, e, shown),
                                     f" Logs (max_jobs): {sweep}."))
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def scaling_grid(title: str, points: pd.DataFrame, experiments: Sequence[str], labels: Sequence[str]) -> Figure:
    """Madon et al. 2024, Fig. 11 for a campaign: additional lateness (eq. 6, s) against the number of jobs simulated
    (log axis, ticks at the points), one line with markers per replay label, one panel per experiment.

    Args:
        title: figure title (the workload).
        points: rows with ``experiment``, ``replay``, ``nb_jobs`` and ``additional_lateness_s``.
        experiments: the panels, in order.
        labels: the replay labels shown, in the campaign's order (their colours, :func:`batreplay.reports.figures.
            colour`).
    """
    figure, axes = grid(len(experiments), panel_height=3.0)
    ticks = sorted({int(n) for n in points["nb_jobs"]})
    for axis, experiment in zip(axes, experiments):
        for label in labels:
            rows = points[(points["experiment"] == experiment) & (points["replay"] == label)].sort_values("nb_jobs")
            if len(rows):
                axis.plot(rows["nb_jobs"], rows["additional_lateness_s"], marker="o", markersize=4, linewidth=1.2,
                          color=colour(label, labels), label=label)
        axis.axhline(0.0, color="0.5", linewidth=0.6)
        axis.set_xscale("log")
        axis.set_xticks(ticks, [f"{n:,}" for n in ticks])
        axis.xaxis.set_minor_locator(NullLocator())
        axis.set_title(experiment, fontsize="medium")
        axis.set_ylabel("additional lateness (s)")
        axis.grid(True, color="0.9", linewidth=0.5)
        axis.legend(loc="best", fontsize="x-small")
    for axis in axes[-2:]:
        axis.set_xlabel("jobs simulated (the first n jobs of the log)")
    figure.suptitle(f"{title}: additional lateness against the number of jobs (cf. Madon et al. 2024, Fig. 11)")
    return figure
