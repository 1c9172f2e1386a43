"""Campaign figures: one panel per experiment, as in Madon et al. 2024, Figs. 2, 3 and 9 (Figs. 4, 5, 6 and 8 are
in :mod:`batreplay.reports.user_figures`, :mod:`batreplay.reports.session_structure` and
:mod:`batreplay.reports.weekly`; they use this module's grid, colours and PNG writer).

:mod:`batreplay.analysis.plots` draws the runs it is given on one axis; a campaign compares the same replay
models across six experiments, which the paper shows as a grid of panels. These functions draw such grids
(matplotlib object API, headless) from plain arrays, one figure per log:

- :func:`submissions_grid` (Fig. 2): jobs submitted per day, rigid replay (the recorded submission times)
  against feedback replay;
- :func:`cumulative_grid` (Fig. 3): cumulative jobs submitted and finished, rigid against feedback;
- :func:`window_bars` (Fig. 9): throughput (jobs finished per day) and utilisation (busy nodes as a fraction of
  the platform's nodes, so that a 200-node variant compares with the 100-node machine) over the paper's windows
  (two weeks after the first submission, 4, 6 and 8 months long), per experiment and replay.

Times are in days from the first recorded submission (Batsim's time 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from batreplay.analysis.metrics import SECONDS_PER_DAY

RIGID_COLOUR = "C0"
#: Colour of each replay label but ``rigid``, in order, in the paper's spirit (rigid blue, feedback orange).
REPLAY_COLOURS = ("C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9")
PNG_DPI = 100


def grid(count: int, *, width: float = 11.0, panel_height: float = 2.6, sharey: bool = False) -> tuple[Figure, list]:
    """A figure of ``count`` panels in two columns (one when ``count`` is 1), x axes shared; returns the figure
    and its ``count`` axes in reading order (extra cells hidden)."""
    columns = 2 if count > 1 else 1
    rows = math.ceil(count / columns)
    figure = Figure(figsize=(width, panel_height * rows + 0.6), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False, sharex=True, sharey=sharey).ravel()
    for extra in axes[count:]:
        extra.set_visible(False)
    return figure, list(axes[:count])


def colour(replay: str, labels: Sequence[str]) -> str:
    """Colour of a replay label: :data:`RIGID_COLOUR` for ``rigid`` (the recorded submission times), else the
    label's place in ``labels``, the other replays shown (:data:`REPLAY_COLOURS`)."""
    if replay == "rigid":
        return RIGID_COLOUR
    return REPLAY_COLOURS[list(labels).index(replay) % len(REPLAY_COLOURS)]


def submissions_grid(title: str, recorded: np.ndarray, panels: Mapping[str, Mapping[str, np.ndarray]]) -> Figure:
    """Jobs submitted per day (Madon et al. 2024, Fig. 2), one panel per experiment.

    Bins are one day wide for spans up to 60 days and one week wide beyond (the count divided by 7, still
    per day), so that a year-long log stays readable. Each curve covers its own first to last submission.

    Args:
        title: figure title (the log).
        recorded: recorded submission times (s), which rigid replay keeps.
        panels: experiment name -> {feedback replay label (``a60``) -> submission times (s)}.

    Returns:
        The figure: in each panel, one step line for ``rigid`` and one per feedback replay.
    """
    figure, axes = grid(len(panels))
    high = max([float(np.max(recorded))] + [float(np.max(v)) for runs in panels.values() for v in runs.values()
                                           if len(v)])
    days = 1 if high <= 60 * SECONDS_PER_DAY else 7
    width = days * SECONDS_PER_DAY
    edges = np.arange(0.0, high + width, width)
    for axis, (experiment, runs) in zip(axes, panels.items()):
        labels = list(runs)
        for label, values in [("rigid", recorded), *runs.items()]:
            counts, _ = np.histogram(values, bins=edges)
            used = (edges[1:] > np.min(values)) & (edges[:-1] <= np.max(values))
            axis.step(edges[:-1][used] / SECONDS_PER_DAY, counts[used] / days, where="post", linewidth=0.8,
                      color=colour(label, labels), label=label)
        axis.set_title(experiment, fontsize="medium")
        axis.set_ylabel("jobs / day" + (" (weekly mean)" if days == 7 else ""))
        axis.legend(loc="upper right", fontsize="x-small")
    for axis in axes[-2:]:
        axis.set_xlabel("submission time (days)")
    figure.suptitle(f"{title}: distribution of submission times (cf. Madon et al. 2024, Fig. 2)")
    return figure


def _cumulative(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    ordered = np.sort(values[~np.isnan(values)])
    return np.searchsorted(ordered, grid, side="right")


def cumulative_grid(title: str, panels: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]],
                    *, points: int = 600) -> Figure:
    """Cumulative number of jobs submitted (solid) and finished (dashed) (Madon et al. 2024, Fig. 3), per experiment.

    Args:
        title: figure title (the log).
        panels: experiment name -> {replay label (``rigid``, ``a60``) -> (submission times, finish times)} (s).
        points: the curves are counted exactly at this many regular instants.
    """
    figure, axes = grid(len(panels))
    high = max(float(np.nanmax(np.concatenate(pair))) for runs in panels.values() for pair in runs.values())
    instants = np.linspace(0.0, high, points)
    for axis, (experiment, runs) in zip(axes, panels.items()):
        others = [label for label in runs if label != "rigid"]
        for label, (submitted, finished) in runs.items():
            shade = colour(label, others)
            axis.plot(instants / SECONDS_PER_DAY, _cumulative(submitted, instants), color=shade, linewidth=0.9,
                      label=f"{label} submitted")
            axis.plot(instants / SECONDS_PER_DAY, _cumulative(finished, instants), color=shade, linewidth=0.9,
                      linestyle="--", label=f"{label} finished")
        axis.set_title(experiment, fontsize="medium")
        axis.set_ylabel("jobs")
        axis.legend(loc="lower right", fontsize="x-small", ncol=2)
    for axis in axes[-2:]:
        axis.set_xlabel("time (days)")
    figure.suptitle(f"{title}: cumulative jobs submitted and finished (cf. Madon et al. 2024, Fig. 3)")
    return figure


#: The two rows of :func:`window_bars`: column of the windows table, y-axis label.
WINDOW_ROWS: tuple[tuple[str, str], ...] = (
    ("throughput_per_day", "throughput (jobs/day)"),
    ("utilisation", "utilisation (busy / platform nodes)"),
)


def window_bars(title: str, windows: pd.DataFrame, experiments: Sequence[str], replays: Sequence[str]) -> Figure:
    """Throughput and utilisation over Madon et al. 2024's Fig. 9 windows, grouped bars per experiment.

    The paper plots the mean number of busy nodes; a campaign that doubles or halves the node count needs the
    fraction of each platform's own nodes instead (``utilisation`` = mean busy nodes / nodes of the instance's
    platform, in [0, 1]), so that the bars of every experiment share one scale.

    Args:
        title: figure title (the log).
        windows: rows with ``experiment``, ``replay``, ``window_months``, ``throughput_per_day`` (jobs / day)
            and ``utilisation`` (fraction of the platform's nodes busy)
            (:func:`batreplay.analysis.analyze_command.paper_window_metrics`).
        experiments, replays: order of the groups and of the bars in a group.

    Returns:
        Two rows of panels (:data:`WINDOW_ROWS`: throughput, utilisation) and one column per window length.
    """
    months = sorted(windows["window_months"].unique()) if len(windows) else [4, 6, 8]
    figure = Figure(figsize=(12.0, 6.0), layout="constrained")
    axes = figure.subplots(2, len(months), squeeze=False, sharey="row")
    width = 0.8 / max(len(replays), 1)
    x = np.arange(len(experiments))
    others = [r for r in replays if r != "rigid"]
    for column, length in enumerate(months):
        subset = windows[windows["window_months"] == length]
        for row, (metric, ylabel) in enumerate(WINDOW_ROWS):
            axis = axes[row][column]
            for k, replay in enumerate(replays):
                values = [subset.loc[(subset["experiment"] == e) & (subset["replay"] == replay), metric]
                          for e in experiments]
                heights = [float(v.iloc[0]) if len(v) else np.nan for v in values]
                axis.bar(x + (k - (len(replays) - 1) / 2) * width, heights, width, label=replay,
                         color=colour(replay, others))
            axis.set_xticks(x, experiments, fontsize="small", rotation=30)
            if column == 0:
                axis.set_ylabel(ylabel)
            if metric == "utilisation":
                axis.set_ylim(0.0, 1.0)
            if row == 0:
                axis.set_title(f"window of {length:g} months", fontsize="medium")
    handles, labels = axes[0][0].get_legend_handles_labels()  # above the panels, where it hides no bar
    figure.legend(handles, labels, loc="outside upper right", ncols=len(labels), fontsize="small")
    figure.suptitle(f"{title}: throughput and utilisation from day 14 (cf. Madon et al. 2024, Fig. 9)")
    return figure


def save_png(figure: Figure, path: Path) -> Path:
    """Write ``figure`` as PNG (no date in the metadata, so equal figures give equal files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=PNG_DPI, metadata={"Software": None})
    return path
