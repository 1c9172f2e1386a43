"""Figures of a site model's validation, in the style of Caspart et al. 2019, Fig. 4: measured (the log's held-out
jobs) and simulated throughput and utilisation over time, hour by hour over the validation window; and the two run
time distributions. Written as PNG and SVG (:func:`batreplay.analysis.plots.save_figure`). Imports matplotlib.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from batreplay.analysis.plots import new_figure, run_colour, save_figure
from batreplay.validation.measures import JobTable, hourly_edges, throughput_per_hour, utilisation_per_hour
from batreplay.validation.sides import HeldOut


def write_figures(folder: Path, held: HeldOut, simulated: JobTable, slots: int) -> dict[str, dict[str, Path]]:
    """Write ``throughput_utilisation`` (two panels over time) and ``run_times`` (distribution functions) in
    ``folder / "figures"``; returns the paths by figure and format."""
    edges = hourly_edges(held.window)
    hours = (edges[:-1] - edges[0]) / 3600
    figure, (top, bottom) = new_figure(2, height=5.2)
    for index, (name, side) in enumerate((("measured (held-out jobs)", held.jobs), ("simulated", simulated))):
        top.step(hours, throughput_per_hour(side, edges), where="post", color=run_colour(index), label=name)
        bottom.step(hours, utilisation_per_hour(side, edges, slots), where="post", color=run_colour(index))
    top.set_ylabel("jobs ending per hour")
    bottom.set_ylabel("share of job slots busy")
    bottom.set_xlabel(f"hours from {edges[0]:.0f} s (validation window)")
    top.legend(loc="upper right")
    paths = {"throughput_utilisation": save_figure(figure, folder / "figures", "throughput_utilisation")}
    figure, (axis,) = new_figure(1)
    for index, (name, side) in enumerate((("measured", held.jobs), ("simulated", simulated))):
        chosen = (side.submit >= edges[0]) & (side.submit < edges[-1])
        runs = np.sort(side.end[chosen] - side.start[chosen])
        axis.step(runs, np.arange(1, runs.size + 1) / max(runs.size, 1), where="post", color=run_colour(index),
                  label=name)
    axis.set_xscale("symlog", linthresh=60)
    axis.set_xlabel("run time (s)")
    axis.set_ylabel("share of jobs submitted in the window")
    axis.legend(loc="lower right")
    paths["run_times"] = save_figure(figure, folder / "figures", "run_times")
    return paths
