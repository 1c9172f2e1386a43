"""Submissions by hour of the week: Madon, Da Costa, Pierson 2024, Fig. 8 (and Sect. 7.3.2).

Recorded submissions follow the users' days and weeks (busy working hours, quiet nights and weekends); a
feedback replay shifts submission times by the simulated waits, and the paper shows that this rhythm fades.
:func:`hour_of_week_counts` counts the submissions in each of the 168 hours of the week (Monday 0-1 h first),
divided by the number of weeks the submissions span (mean submissions per hour of the week);
:func:`weekly_figure` draws one panel per replay (rigid = the recorded times, then the feedback replays).

Simulated times become wall-clock times through the log's clock (:class:`batreplay.reports.log_facts.LogClock`:
``UnixStartTime`` and ``TimeZoneString`` of the SWF header); a log without ``UnixStartTime`` has no such figure.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from batreplay.reports.figures import colour
from batreplay.reports.log_facts import LogClock

HOURS_PER_WEEK = 168
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def hour_of_week_counts(local: pd.DatetimeIndex) -> np.ndarray:
    """Mean submissions in each hour of the week, shape (168,), Monday 0-1 h first: the count in each hour of
    the week divided by the number of weeks from the first to the last submission (at least one)."""
    if len(local) == 0:
        return np.zeros(HOURS_PER_WEEK)
    index = np.asarray(local.day_of_week, dtype=np.int64) * 24 + np.asarray(local.hour, dtype=np.int64)
    weeks = max((local.max() - local.min()).total_seconds() / (7 * 86400.0), 1.0)
    return np.bincount(index, minlength=HOURS_PER_WEEK) / weeks


def weekly_figure(title: str, clock: LogClock, replays: Mapping[str, np.ndarray], experiment: str) -> Figure:
    """Madon et al. 2024, Fig. 8: mean submissions per hour of the week, one panel per replay, in the log's
    local time.

    Args:
        title: figure title (the log).
        clock: the log's clock (must know its Unix start).
        replays: replay label (``rigid`` first, for the recorded submission times) -> submission times (s,
            simulated clock).
        experiment: the experiment the feedback replays ran (``EASY``), for the titles.

    Raises:
        ValueError: the clock has no Unix start.
    """
    labels = list(replays)
    others = [label for label in labels if label != "rigid"]
    figure = Figure(figsize=(11.0, 1.9 * len(labels) + 0.7), layout="constrained")
    axes = figure.subplots(len(labels), 1, sharex=True, sharey=True, squeeze=False).ravel()
    hours = np.arange(HOURS_PER_WEEK + 1)
    for axis, label in zip(axes, labels):
        counts = hour_of_week_counts(clock.local_times(replays[label]))
        axis.stairs(counts, hours, fill=True, color=colour(label, others), alpha=0.8)
        for day in range(1, 7):
            axis.axvline(24 * day, color="0.6", linewidth=0.6)
        name = "rigid (recorded submission times)" if label == "rigid" else f"{experiment}, feedback {label}"
        axis.set_title(name, fontsize="medium", loc="left")
        axis.set_ylabel("jobs / hour")
    axes[-1].set_xticks(24 * np.arange(7) + 12, DAY_NAMES)
    axes[-1].set_xlim(0, HOURS_PER_WEEK)
    axes[-1].set_xlabel("hour of the week (local time; ticks at noon)")
    figure.suptitle(f"{title}: mean submissions per hour of the week (cf. Madon et al. 2024, Fig. 8)")
    return figure
