"""Per-user lateness across a campaign: Madon, Da Costa, Pierson 2024, Figs. 4 and 5.

Each user of a feedback replay has a mean lateness (eq. 3 over the user's jobs: how much later, on average, the
user submitted than recorded) and an additional lateness (eq. 6 over the user's jobs: the delay the user adds at
each submission; undefined for a user with a single job). The paper plots both against the number of jobs the
user submitted, one dot per user, one panel per experiment, for the a60 replay: mean lateness drifts with the
number of jobs (Fig. 4), additional lateness does not (Fig. 5).

Values span several orders of magnitude on both sides of 0, so the y axis is symmetric-logarithmic: linear
within one unit of 0 (one hour for Fig. 4, ten seconds for Fig. 5) and logarithmic beyond, with limits taken
from the data so that no dot is clipped.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from batreplay.reports.figures import REPLAY_COLOURS, grid

#: Figure kind -> (column of :func:`batreplay.analysis.lateness.lateness_per_user`, divisor to the unit shown,
#: y-axis label, linear threshold of the symlog axis in that unit, paper's figure).
USER_METRICS: dict[str, tuple[str, float, str, float, str]] = {
    "user-mean-lateness": ("mean_lateness", 3600.0, "mean lateness (h)", 1.0, "Fig. 4"),
    "user-additional-lateness": ("additional_lateness", 1.0, "additional lateness (s)", 10.0, "Fig. 5"),
}


def _tick_label(value: float) -> str:
    if value == 0:
        return "0"
    sign = "\u2212" if value < 0 else ""
    exponent = int(round(np.log10(abs(value))))
    return f"{sign}{abs(value):g}" if -2 <= exponent < 4 else f"{sign}$10^{{{exponent}}}$"


def symlog_axis(axis, values: np.ndarray, linthresh: float, *, most_ticks_per_side: int = 4) -> None:
    """Make ``axis``'s y axis symmetric-logarithmic around 0 (linear within ``linthresh``, a power of 10), with
    limits at the decades beyond the data (nothing clipped) and labelled ticks at 0 and at ±``linthresh`` x 10^k,
    every decade or every other one so that each side has at most ``most_ticks_per_side`` ticks."""
    finite = values[np.isfinite(values)]
    top = max(float(finite.max()) if finite.size else 0.0, linthresh)
    bottom = max(-float(finite.min()) if finite.size else 0.0, linthresh)
    high = [10.0 ** np.ceil(np.log10(v) + 1e-9) for v in (top, bottom)]
    axis.set_yscale("symlog", linthresh=linthresh, linscale=0.8)
    axis.set_ylim(-high[1], high[0])
    decades = int(round(np.log10(max(high) / linthresh)))
    step = max(1, int(np.ceil((decades + 1) / most_ticks_per_side)))
    powers = [linthresh * 10.0 ** k for k in range(0, decades + 1, step)]
    ticks = sorted([-p for p in powers if p <= high[1]] + [0.0] + [p for p in powers if p <= high[0]])
    axis.set_yticks(ticks, [_tick_label(t) for t in ticks])
    axis.yaxis.set_minor_locator(NullLocator())
    axis.axhline(0.0, color="0.5", linewidth=0.6)


def user_scatter_grid(kind: str, title: str, panels: Mapping[str, pd.DataFrame], replay: str) -> Figure:
    """Madon et al. 2024, Fig. 4 (``kind = "user-mean-lateness"``) or Fig. 5 (``"user-additional-lateness"``):
    one dot per user, number of jobs (x, logarithmic) against the user's lateness metric (y, symmetric-log), one
    panel per experiment.

    Args:
        kind: a key of :data:`USER_METRICS`.
        title: figure title (the log).
        panels: experiment name -> per-user table (:func:`batreplay.analysis.lateness.lateness_per_user`:
            ``nb_jobs``, ``mean_lateness`` and ``additional_lateness`` in seconds) of the replay ``replay``.
        replay: the feedback replay shown (``a60``), for the legend.

    Returns:
        The figure; users whose value is undefined (one job, for Fig. 5) are left out and counted in the panel.
    """
    column, divisor, ylabel, linthresh, paper = USER_METRICS[kind]
    figure, axes = grid(len(panels), panel_height=2.8, sharey=True)
    values = np.concatenate([t[column].to_numpy(dtype="float64") / divisor for t in panels.values()] or [np.zeros(0)])
    for axis, (experiment, table) in zip(axes, panels.items()):
        y = table[column].to_numpy(dtype="float64") / divisor
        x = table["nb_jobs"].to_numpy(dtype="float64")
        shown = np.isfinite(y)
        axis.scatter(x[shown], y[shown], s=9, alpha=0.65, color=REPLAY_COLOURS[0], edgecolors="none",
                     label=f"{replay}: {int(shown.sum())} users")
        axis.set_xscale("log")
        symlog_axis(axis, values, linthresh)
        axis.set_title(experiment, fontsize="medium")
        axis.set_ylabel(ylabel)
        axis.grid(True, which="major", axis="y", color="0.9", linewidth=0.5)
        axis.legend(loc="upper left", fontsize="x-small")
    for axis in axes[-2:]:
        axis.set_xlabel("jobs submitted by the user")
    what = "mean lateness" if kind == "user-mean-lateness" else "additional lateness"
    figure.suptitle(f"{title}: {what} per user, replay {replay} (cf. Madon et al. 2024, {paper})")
    return figure
