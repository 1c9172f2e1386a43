"""Per-job difference in submission time between two replays of the same jobs: Madon, Da Costa, Pierson 2024,
Fig. 7.

For job ``j_i`` submitted at ``â_i(A)`` in replay A and ``â_i(B)`` in replay B, the difference is
``â_i(B) - â_i(A)`` (s). The paper plots its distribution on KTH-SP2 for rigid against a60 (top: a rigid replay
submits every job at its recorded time, so this is the lateness of Def. 13) and for a60 against a0 (bottom: a0
submits a few days later than a60).

- :func:`submission_differences` matches the jobs of two runs and gives each job's difference;
  :func:`differences_against_first` does so for every run against the first one given, and says in a note why a run
  with other jobs is left out;
- :func:`difference_summary` sums a distribution up (the table written next to the figure);
- :func:`difference_edges` and :func:`draw_difference_steps` draw the distributions as step lines over bins on a
  symmetric-logarithmic axis in hours (linear within :data:`LINEAR_HOURS`, logarithmic beyond), so that both signs
  and spans from minutes to months show; :func:`plot_submission_differences` is ``batreplay analyze``'s figure.

Jobs are matched by their bare Batsim job id (``15``): a rigid replay's job is ``w0!15``, the same job replayed
with feedback ``dyn!15``. A run whose bare ids repeat (several workloads) is matched on its full ids instead. Two
runs hold the same jobs when their ids are the same and, where both know them, their recorded submission times
(``jobs.csv``) are equal too (two logs both numbered from 1 are not the same jobs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from batreplay.formats.out_jobs import FULL_ID, attach_job_table
from batreplay.analysis.run_dir import RECORDED_SUBMISSION, RunData

SECONDS_PER_HOUR = 3600.0
#: Half-width (h) of the linear part of the symmetric-log axis; beyond it the axis is logarithmic.
LINEAR_HOURS = 1.0
#: Bins across [-:data:`LINEAR_HOURS`, +:data:`LINEAR_HOURS`]: odd, so that one bin is centred on 0 (jobs
#: submitted at the same time in both runs).
LINEAR_BINS = 9
#: Bins per decade of hours beyond :data:`LINEAR_HOURS`.
BINS_PER_DECADE = 5
#: Differences within this many seconds of 0 count as "same time" (Batsim prints times to the microsecond).
SAME_TOLERANCE = 1e-6
#: Job ids named in a refusal at most.
_NAMED = 3


class DifferentJobsError(ValueError):
    """Two runs that do not hold the same jobs (ids, or recorded submission times, differ); the message says how
    many jobs differ and names the first ones."""


def _keyed(run: RunData) -> pd.DataFrame:
    """``run``'s jobs indexed by their match key (bare id, or full id when bare ids repeat), with
    ``submission_time`` and ``recorded`` (recorded submission time, s; NaN when the run does not know it)."""
    jobs = run.jobs
    key = jobs["job_id"].astype(str)
    if key.duplicated().any():
        key = jobs[FULL_ID].astype(str)
    recorded = np.full(len(jobs), np.nan)
    if run.has_recorded_submissions:
        recorded = attach_job_table(jobs, run.job_table, columns=[RECORDED_SUBMISSION],
                                    table_name=f"{run.name}: jobs.csv")[RECORDED_SUBMISSION].to_numpy(dtype="float64")
    return pd.DataFrame({"submission_time": jobs["submission_time"].to_numpy(dtype="float64"), "recorded": recorded},
                        index=pd.Index(key.to_numpy(), name="job_id"))


def _named(ids: pd.Index) -> str:
    shown = ", ".join(map(str, sorted(ids, key=str)[:_NAMED]))
    return shown + (", ..." if len(ids) > _NAMED else "")


def submission_differences(reference: RunData, run: RunData) -> pd.DataFrame:
    """Each job's submission in ``run`` minus its submission in ``reference`` (Madon et al. 2024, Fig. 7).

    Returns:
        One row per job, sorted by the reference's submission time (then id): ``job_id`` (the match key),
        ``reference_submission`` and ``submission`` (s, simulation clock) and ``difference`` (s; positive: later in
        ``run``). With a rigid ``reference``, ``difference`` is the lateness of ``run``'s jobs (Def. 13).

    Raises:
        DifferentJobsError: the runs do not hold the same jobs: ids on one side only (counted both ways, the first
            named), or recorded submission times that differ (counted, the first named).
    """
    left, right = _keyed(reference), _keyed(run)
    only_left, only_right = left.index.difference(right.index), right.index.difference(left.index)
    if len(only_left) or len(only_right):
        raise DifferentJobsError(
            f"not the same jobs: {len(only_right)} of the {len(right)} jobs of {run.name} are not in {reference.name}"
            + (f" ({_named(only_right)})" if len(only_right) else "")
            + f", {len(only_left)} of the {len(left)} jobs of {reference.name} are not in {run.name}"
            + (f" ({_named(only_left)})" if len(only_left) else ""))
    right = right.reindex(left.index)
    both = left["recorded"].notna() & right["recorded"].notna()
    moved = both & ((left["recorded"] - right["recorded"]).abs() > SAME_TOLERANCE)
    if moved.any():
        raise DifferentJobsError(
            f"not the same jobs: {int(moved.sum())} of the {len(left)} jobs have other recorded submission times in "
            f"{run.name} than in {reference.name} ({_named(left.index[moved.to_numpy()])}): another log")
    frame = pd.DataFrame({"job_id": left.index.to_numpy(), "reference_submission": left["submission_time"].to_numpy(),
                          "submission": right["submission_time"].to_numpy()})
    frame["difference"] = frame["submission"] - frame["reference_submission"]
    return frame.sort_values(["reference_submission", "job_id"], kind="stable").reset_index(drop=True)


def differences_against_first(runs: Sequence[RunData]) -> tuple[dict[str, np.ndarray], list[str]]:
    """Each run's per-job submission difference against the first run (:func:`submission_differences`), for
    ``batreplay analyze``'s Fig. 7.

    Returns:
        ``({run name: differences (s), in the first run's submission order}, notes)``: runs 2.. that hold the first
        run's jobs; every other run is left out and named in a note, with the reason. Nothing with fewer than two
        runs.
    """
    if len(runs) < 2:
        return {}, []
    reference, found, notes = runs[0], {}, []
    for run in runs[1:]:
        try:
            found[run.name] = submission_differences(reference, run)["difference"].to_numpy(dtype="float64")
        except DifferentJobsError as err:
            notes.append(f"run {run.name}: left out of the submission differences against the first run, "
                         f"{reference.name} (cf. Madon et al. 2024, Fig. 7): {err}")
    return found, notes


def difference_summary(values: np.ndarray) -> dict[str, float | int]:
    """The distribution of per-job differences (s) in numbers.

    Returns:
        ``nb_jobs``; ``mean_s`` (with a rigid reference: the mean lateness, eq. 3), ``min_s``, ``p10_s``, ``p50_s``,
        ``p90_s``, ``max_s`` (numpy's linear percentiles; NaN without a job); ``nb_earlier``, ``nb_same``,
        ``nb_later``: jobs submitted earlier than, at (within :data:`SAME_TOLERANCE`) and later than the reference.
    """
    values = np.asarray(values, dtype="float64")
    empty = values.size == 0
    quantiles = [float("nan")] * 3 if empty else [float(v) for v in np.percentile(values, [10, 50, 90])]
    return {
        "nb_jobs": int(values.size),
        "mean_s": float("nan") if empty else float(values.mean()),
        "min_s": float("nan") if empty else float(values.min()),
        "p10_s": quantiles[0], "p50_s": quantiles[1], "p90_s": quantiles[2],
        "max_s": float("nan") if empty else float(values.max()),
        "nb_earlier": int((values < -SAME_TOLERANCE).sum()),
        "nb_same": int((np.abs(values) <= SAME_TOLERANCE).sum()),
        "nb_later": int((values > SAME_TOLERANCE).sum()),
    }


def difference_edges(series: Sequence[np.ndarray]) -> np.ndarray:
    """Bin edges (h) shared by the distributions of ``series`` (differences in s): :data:`LINEAR_BINS` equal bins
    across [-:data:`LINEAR_HOURS`, +:data:`LINEAR_HOURS`], then :data:`BINS_PER_DECADE` bins per decade on each
    side, up to the first edge beyond the largest difference of that side (none on a side without one)."""
    every = np.concatenate([np.asarray(s, dtype="float64") for s in series] or [np.zeros(0)]) / SECONDS_PER_HOUR
    every = every[np.isfinite(every)]
    edges = [np.linspace(-LINEAR_HOURS, LINEAR_HOURS, LINEAR_BINS + 1)]
    for sign, side in ((1.0, every[every > LINEAR_HOURS]), (-1.0, -every[every < -LINEAR_HOURS])):
        if side.size:
            steps = int(np.ceil(BINS_PER_DECADE * np.log10(float(side.max()) / LINEAR_HOURS) + 1e-9))
            edges.append(sign * LINEAR_HOURS * 10.0 ** (np.arange(1, max(steps, 1) + 1) / BINS_PER_DECADE))
    return np.unique(np.concatenate(edges))


def _hours_label(value: float) -> str:
    if value == 0:
        return "0"
    sign = "\u2212" if value < 0 else ""
    exponent = int(round(np.log10(abs(value))))
    return f"{sign}{abs(value):g}" if exponent < 3 else f"{sign}$10^{{{exponent}}}$"


def draw_difference_steps(axis, series: Mapping[str, np.ndarray], colours: Mapping[str, str],
                          edges: np.ndarray) -> dict[str, np.ndarray]:
    """Draw on ``axis`` one step line per entry of ``series`` (label -> per-job differences, s): the number of jobs
    in each bin of ``edges`` (h, :func:`difference_edges`), on a symmetric-log x axis in hours (linear within
    :data:`LINEAR_HOURS`), ticks at 0 and at each decade; a grey line at 0.

    Returns:
        Label -> the counts drawn (one per bin of ``edges``).
    """
    drawn = {}
    for label, values in series.items():
        hours = np.asarray(values, dtype="float64") / SECONDS_PER_HOUR
        counts, _ = np.histogram(hours, bins=edges)
        summary = difference_summary(np.asarray(values, dtype="float64"))
        share = 100.0 / max(summary["nb_jobs"], 1)
        axis.stairs(counts, edges, color=colours[label], linewidth=1.1,
                    label=f"{label}: mean {summary['mean_s'] / SECONDS_PER_HOUR:+.3g} h; earlier "
                          f"{share * summary['nb_earlier']:.0f} %, same {share * summary['nb_same']:.0f} %, later "
                          f"{share * summary['nb_later']:.0f} %")
        drawn[label] = counts
    axis.set_xscale("symlog", linthresh=LINEAR_HOURS, linscale=1.0)
    axis.set_xlim(float(edges[0]), float(edges[-1]))
    decades = [LINEAR_HOURS * 10.0 ** k for k in range(0, 8)]
    ticks = sorted([-d for d in decades if -d >= edges[0]] + [0.0] + [d for d in decades if d <= edges[-1]])
    axis.set_xticks(ticks, [_hours_label(t) for t in ticks])
    axis.xaxis.set_minor_locator(NullLocator())
    axis.axvline(0.0, color="0.5", linewidth=0.6)
    axis.set_ylim(bottom=0.0)
    axis.grid(True, axis="y", color="0.9", linewidth=0.5)
    return drawn


def plot_submission_differences(reference: str, series: Mapping[str, np.ndarray],
                                colours: Mapping[str, str]) -> Figure:
    """``batreplay analyze``'s Fig. 7 (Madon et al. 2024): the distribution of each run's per-job submission
    difference against the first run (``reference``), one step line per run in its run colour (``C1``, ``C2``...: the
    first run is ``C0``).

    Args:
        reference: the first run's name.
        series: run name -> per-job differences (s), from :func:`differences_against_first`.
        colours: run name -> its colour in every figure of the analysis (``plots.run_colour`` of its place).

    Raises:
        ValueError: ``series`` is empty.
    """
    if not series:
        raise ValueError("plot_submission_differences: no run holds the first run's jobs")
    figure = Figure(figsize=(8.0, 3.8), layout="constrained")
    axis = figure.subplots()
    draw_difference_steps(axis, series, colours, difference_edges(list(series.values())))
    axis.set(xlabel=f"submission in the run \u2212 submission in {reference} (hours, symmetric-log scale)",
             ylabel="jobs")
    handles, labels = axis.get_legend_handles_labels()  # below the axes, where it hides no bar
    figure.legend(handles, labels, loc="outside lower center", fontsize="x-small", frameon=False)
    figure.suptitle(f"Per-job submission difference against {reference} (cf. Madon et al. 2024, Fig. 7)")
    return figure
