"""When each user of a log first submits: Madon, Da Costa, Pierson 2024, Fig. 10 (and Sect. 7.3.3).

In a replay with feedback the first job of each user keeps its recorded submission time. The paper draws a vertical
bar at each user's first submission, between two bars at the start and end of the log, and notes that on KTH-SP2 and
SDSC-SP2 users arrive up to a few days before the end of the record: they keep the submission period long, however
fast the simulated machine.

:func:`user_arrivals` reads a run's ``jobs.csv`` (``user_id``, ``recorded_submission_time``, and, for the end of the
log, ``swf_wait_time`` and ``run_time``) into a :class:`UserArrivals`; :func:`arrivals_by_workload` does so for
``batreplay analyze``, once per distinct workload (runs of the same jobs share one panel); :func:`draw_user_arrivals`
draws one panel, :func:`plot_user_arrivals` ``batreplay analyze``'s figure. Times are seconds on the simulation clock
(0 = the first recorded submission replayed), drawn in days.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from batreplay.analysis.metrics import SECONDS_PER_DAY
from batreplay.analysis.run_dir import RECORDED_SUBMISSION, RunData

#: The share of the log, at its end, whose new users the caption counts (the paper's point: users who arrive late).
LATE_SHARE = 0.1
#: Colours of the paper's figure: users' first submissions in blue, the log's start and end in red.
ARRIVAL_COLOUR = "C0"
BOUNDS_COLOUR = "C3"
#: How the end of the log was found (:attr:`UserArrivals.end_from`).
END_FINISH = "last recorded finish"
END_SUBMISSION = "last recorded submission"


@dataclass(frozen=True)
class UserArrivals:
    """The users' first submissions in a log and the log's span.

    Attributes:
        first_submission: user id -> the user's first recorded submission (s, simulation clock), sorted by time
            (then user id).
        start: the log's first recorded submission (s).
        end: the log's end (s): its last recorded finish (submission + recorded wait + run time, over the jobs whose
            wait is known), or its last recorded submission when no job's wait and run time are known
            (:attr:`end_from` says which).
        end_from: :data:`END_FINISH` or :data:`END_SUBMISSION`.
        nb_jobs: jobs read.
        nb_unknown_finish: jobs whose recorded wait or run time is unknown (-1), left out of the last finish.
    """

    first_submission: pd.Series
    start: float
    end: float
    end_from: str
    nb_jobs: int
    nb_unknown_finish: int = 0

    @property
    def late_threshold(self) -> float:
        """Start of the last :data:`LATE_SHARE` of the log (s): ``start + 0.9 (end - start)``."""
        return self.start + (1.0 - LATE_SHARE) * (self.end - self.start)

    @property
    def nb_late(self) -> int:
        """Users whose first submission is in the last :data:`LATE_SHARE` of the log."""
        return int((self.first_submission >= self.late_threshold).sum())

    def same_as(self, other: UserArrivals) -> bool:
        """Whether both describe the same log: same users, first submissions, start and end."""
        return (self.start, self.end, self.end_from, self.nb_jobs) == (other.start, other.end, other.end_from,
                                                                        other.nb_jobs) \
            and self.first_submission.equals(other.first_submission)

    def description(self) -> str:
        """One sentence for a caption: users, how many arrive in the last 10 % of the log, and the log's span."""
        users = len(self.first_submission)
        share = 100.0 * self.nb_late / users if users else 0.0
        unknown = (f" ({self.nb_unknown_finish} jobs of unknown wait or run time left out of it)"
                   if self.nb_unknown_finish and self.end_from == END_FINISH else "")
        return (f"{users} users; {self.nb_late} of them ({share:.1f} %) first submit in the last "
                f"{100 * LATE_SHARE:g} % of the log, after day {self.late_threshold / SECONDS_PER_DAY:.1f}; the log "
                f"spans days {self.start / SECONDS_PER_DAY:.1f} (first recorded submission) to "
                f"{self.end / SECONDS_PER_DAY:.1f} ({self.end_from}{unknown}).")

    def table(self) -> pd.DataFrame:
        """One row per user, in arrival order: ``user_id``, ``first_submission_s``, ``first_submission_days``,
        ``in_last_tenth`` (bool), and the log's ``log_start_s``, ``log_end_s`` and ``log_end_from``."""
        first = self.first_submission
        return pd.DataFrame({
            "user_id": first.index.to_numpy(), "first_submission_s": first.to_numpy(dtype="float64"),
            "first_submission_days": first.to_numpy(dtype="float64") / SECONDS_PER_DAY,
            "in_last_tenth": first.to_numpy(dtype="float64") >= self.late_threshold,
            "log_start_s": self.start, "log_end_s": self.end, "log_end_from": self.end_from})


def user_arrivals(job_table: pd.DataFrame | None) -> UserArrivals | None:
    """The :class:`UserArrivals` of a run's ``jobs.csv`` (Madon et al. 2024, Fig. 10), or None without one, without a
    job, or without the ``user_id`` and ``recorded_submission_time`` (s, simulation clock) columns.

    The end of the log is its last recorded finish when the table has ``swf_wait_time`` and ``run_time`` (the
    run time given to the job: the recorded one, 1 s for a job of 0 s kept with ``zero_runtime = "min"``) and some
    job's are known (>= 0); otherwise its last recorded submission.
    """
    if job_table is None or len(job_table) == 0 or not {"user_id", RECORDED_SUBMISSION} <= set(job_table.columns):
        return None
    submitted = job_table[RECORDED_SUBMISSION].to_numpy(dtype="float64")
    users = pd.Series(submitted, index=job_table["user_id"].to_numpy())
    first = users.groupby(level=0, sort=True).min()
    first = first.iloc[np.lexsort((np.arange(len(first)), first.to_numpy()))]
    first.index.name = "user_id"
    end, end_from, unknown = float(submitted.max()), END_SUBMISSION, 0
    if {"swf_wait_time", "run_time"} <= set(job_table.columns):
        wait = pd.to_numeric(job_table["swf_wait_time"], errors="coerce").to_numpy(dtype="float64")
        run = pd.to_numeric(job_table["run_time"], errors="coerce").to_numpy(dtype="float64")
        known = (wait >= 0) & (run >= 0)
        if known.any():
            end = max(end, float((submitted + wait + run)[known].max()))
            end_from, unknown = END_FINISH, int((~known).sum())
    return UserArrivals(first, float(submitted.min()), end, end_from, len(job_table), unknown)


def arrivals_by_workload(runs: Sequence[RunData]) -> tuple[list[tuple[list[str], UserArrivals]], list[str]]:
    """The user arrivals of ``runs``, once per distinct workload, for ``batreplay analyze``'s Fig. 10.

    Returns:
        ``([(names of the runs that share them, arrivals)], notes)``, in the order of the runs: runs whose
        arrivals are the same (:meth:`UserArrivals.same_as`: a rigid and a feedback replay of the same jobs) share
        one entry; each run without user ids and recorded submission times is named in a note.
    """
    groups: list[tuple[list[str], UserArrivals]] = []
    notes = []
    for run in runs:
        arrivals = user_arrivals(run.job_table if run.has_recorded_submissions else None)
        if arrivals is None:
            notes.append(f"run {run.name}: no user arrivals (cf. Madon et al. 2024, Fig. 10): no jobs.csv with user "
                         f"ids and recorded submission times")
            continue
        group = next((names for names, known in groups if known.same_as(arrivals)), None)
        if group is None:
            groups.append(([run.name], arrivals))
        else:
            group.append(run.name)
    return groups, notes


def draw_user_arrivals(axis, arrivals: UserArrivals) -> None:
    """Draw ``arrivals`` on ``axis`` as Madon et al. 2024's Fig. 10 (x in days): a thin blue bar at each user's first
    submission, red bars at the log's start and end, the last :data:`LATE_SHARE` of the log shaded, no y axis."""
    first = arrivals.first_submission.to_numpy(dtype="float64") / SECONDS_PER_DAY
    axis.axvspan(arrivals.late_threshold / SECONDS_PER_DAY, arrivals.end / SECONDS_PER_DAY, color="0.92", zorder=0,
                 label=f"last {100 * LATE_SHARE:g} % of the log: {arrivals.nb_late} users arrive")
    axis.vlines(first, 0.0, 1.0, color=ARRIVAL_COLOUR, linewidth=0.7,
                label=f"first submission of a user ({len(first)} users)")
    axis.vlines([arrivals.start / SECONDS_PER_DAY, arrivals.end / SECONDS_PER_DAY], 0.0, 1.0, color=BOUNDS_COLOUR,
                linewidth=2.0, label=f"start and end of the log (first recorded submission, {arrivals.end_from})")
    span = (arrivals.end - arrivals.start) / SECONDS_PER_DAY
    axis.set_xlim(arrivals.start / SECONDS_PER_DAY - 0.02 * span, arrivals.end / SECONDS_PER_DAY + 0.02 * span)
    axis.set_ylim(0.0, 1.0)
    axis.set_yticks([])
    axis.set_xlabel("time (days from the first recorded submission)")


def plot_user_arrivals(groups: Sequence[tuple[Sequence[str], UserArrivals]]) -> Figure:
    """``batreplay analyze``'s Fig. 10 (Madon et al. 2024): one panel per distinct workload
    (:func:`arrivals_by_workload`), titled with the runs that replay it.

    Raises:
        ValueError: ``groups`` is empty.
    """
    if not groups:
        raise ValueError("plot_user_arrivals: no run with user ids and recorded submission times")
    figure = Figure(figsize=(8.0, 1.9 * len(groups) + 0.9), layout="constrained")
    axes = figure.subplots(len(groups), 1, squeeze=False)[:, 0]
    for axis, (names, arrivals) in zip(axes, groups):
        draw_user_arrivals(axis, arrivals)
        axis.set_title(", ".join(names), fontsize="medium", loc="left")
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncols=2, fontsize="x-small", frameon=False)
    figure.suptitle("User arrivals: first submission of each user (cf. Madon et al. 2024, Fig. 10)")
    return figure
