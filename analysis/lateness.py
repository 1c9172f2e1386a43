"""Lateness metrics of a replay with feedback (Madon, Da Costa, Pierson 2024, Sect. 6.2).

For job ``j_i`` with recorded submission time ``a_i`` and submission time ``â_i`` in the replay:

- lateness ``l(i) = â_i - a_i`` (Def. 13);
- mean lateness ``l̄ = (1/n) sum_i l(i)`` (eq. 3);
- relative lateness ``1 + l̄ / (a_{n-1} - a_0)``, the jobs ordered by recorded submission time, so the
  denominator is the recorded length of the workload (eq. 4);
- additional lateness per job ``δ_i = l(i) - l(i-1)`` (eq. 5), and the aggregated additional lateness
  ``δ = 2 l̄ / (n - 1)`` (eq. 6), the constant per-job increment that would give the same mean lateness.

Each can be taken per user (the user's jobs, in recorded submission order) or on the whole simulation
(all jobs in recorded submission order). Madon et al. 2024's Fig. 5(c) gives the 10th, 50th and 90th percentiles
of the per-user additional lateness (:func:`additional_lateness_percentiles`). Times are seconds.

The recorded side comes as a table with columns ``job_id`` (full ``workload!job_id`` or bare Batsim id),
``user_id`` and ``recorded_submission_time`` (seconds, same origin as the simulation).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from batreplay.analysis.metric import Metric
from batreplay.formats.out_jobs import FULL_ID, attach_job_table

ORIGINALS_COLUMNS: tuple[str, ...] = ("job_id", "user_id", "recorded_submission_time")


def job_lateness(jobs: pd.DataFrame, originals: pd.DataFrame) -> pd.DataFrame:
    """Lateness of every job (Madon et al. 2024, Def. 13) and its increments (eq. 5).

    Rejected jobs count: they were submitted, so their submission time is known.

    Args:
        jobs: validated ``out_jobs.csv`` table of the replay (:func:`batreplay.formats.out_jobs.read_out_jobs`).
        originals: table with ``job_id``, ``user_id``, ``recorded_submission_time`` (s), one row per job.

    Returns:
        One row per job, sorted by (``recorded_submission_time``, ``full_job_id``), with ``full_job_id``,
        ``user_id``, ``recorded_submission_time`` (a_i), ``submission_time`` (â_i), ``lateness`` (l(i), s),
        ``user_increment`` (δ_i over the user's jobs: l(i) minus the lateness of the same user's previous
        job; NaN for the user's first job) and ``overall_increment`` (δ_i over all jobs; NaN for the first).

    Raises:
        ValueError: a column is missing, an original submission time is not a finite number (job named),
            or jobs are missing on either side (named), see
            :func:`batreplay.formats.out_jobs.attach_job_table`.
    """
    missing = [c for c in ORIGINALS_COLUMNS if c not in originals.columns]
    if missing:
        raise ValueError(f"originals table: missing column(s) {', '.join(missing)} "
                         f"(found: {', '.join(map(str, originals.columns))})")
    original = pd.to_numeric(originals["recorded_submission_time"], errors="coerce").to_numpy(dtype="float64")
    bad = ~np.isfinite(original)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"originals table: job {originals['job_id'].iloc[k]}: recorded_submission_time "
                         f"{originals['recorded_submission_time'].iloc[k]!r} is not a finite number")
    merged = attach_job_table(jobs, originals.assign(recorded_submission_time=original),
                              columns=["user_id", "recorded_submission_time"], table_name="originals table")
    frame = merged[[FULL_ID, "user_id", "recorded_submission_time", "submission_time"]]
    frame = frame.sort_values(["recorded_submission_time", FULL_ID], kind="stable").reset_index(drop=True)
    frame["lateness"] = frame["submission_time"] - frame["recorded_submission_time"]
    frame["user_increment"] = frame.groupby("user_id", sort=False)["lateness"].diff()
    frame["overall_increment"] = frame["lateness"].diff()
    return frame


def _metrics(lateness: np.ndarray, original: np.ndarray) -> tuple[float, float, float]:
    """(mean, relative, additional) lateness of one group, eqs. 3, 4, 6; NaN where undefined."""
    n = lateness.size
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(np.mean(lateness))
    length = float(np.max(original) - np.min(original))
    relative = 1.0 + mean / length if length > 0 else float("nan")
    additional = 2.0 * mean / (n - 1) if n > 1 else float("nan")
    return mean, relative, additional


def lateness_summary(lateness: pd.DataFrame) -> dict[str, float | int]:
    """Whole-simulation lateness metrics (Madon et al. 2024, eqs. 3, 4, 6) from :func:`job_lateness`'s table.

    Returns:
        ``{"nb_jobs": n, "mean_lateness": l̄ (s), "relative_lateness": 1 + l̄ / (a_{n-1} - a_0)
        (dimensionless; NaN when all recorded submissions are simultaneous), "additional_lateness":
        2 l̄ / (n - 1) (s; NaN when n < 2), "original_length": a_{n-1} - a_0 (s), "simulated_length": the same span
        of the simulated submissions (s), the length of the submission period Madon et al. 2024 discuss with
        Figs. 2 and 3}``.
    """
    late = lateness["lateness"].to_numpy(dtype="float64")
    original = lateness["recorded_submission_time"].to_numpy(dtype="float64")
    mean, relative, additional = _metrics(late, original)
    simulated = lateness["submission_time"].to_numpy(dtype="float64")
    return {"nb_jobs": int(late.size), "mean_lateness": mean, "relative_lateness": relative,
            "additional_lateness": additional,
            "original_length": float(np.ptp(original)) if original.size else float("nan"),
            "simulated_length": float(np.ptp(simulated)) if simulated.size else float("nan")}


def lateness_per_user(lateness: pd.DataFrame) -> pd.DataFrame:
    """Per-user lateness metrics (Madon et al. 2024, eqs. 3, 4, 6 over each user's jobs; Figs. 4 and 5).

    Args:
        lateness: table from :func:`job_lateness`.

    Returns:
        Frame indexed by ``user_id`` (sorted) with ``nb_jobs``, ``mean_lateness`` (s),
        ``relative_lateness`` (NaN when the user's recorded submissions are all at one instant) and
        ``additional_lateness`` (s, NaN for a user with a single job). Vectorised over users.
    """
    grouped = lateness.groupby("user_id", sort=True)
    n = grouped["lateness"].count()
    mean = grouped["lateness"].mean()
    length = grouped["recorded_submission_time"].max() - grouped["recorded_submission_time"].min()
    return pd.DataFrame({
        "nb_jobs": n.astype("int64"),
        "mean_lateness": mean,
        "relative_lateness": (1.0 + mean / length.where(length > 0)),
        "additional_lateness": 2.0 * mean / (n - 1).where(n > 1),
    })


def additional_lateness_percentiles(per_user: pd.DataFrame,
                                    percentiles: Sequence[float] = (10, 50, 90)) -> dict[str, float | int]:
    """Percentiles of the per-user additional lateness (Madon et al. 2024, Fig. 5(c)), seconds.

    Users with one job have no additional lateness (eq. 6 needs n >= 2); they are left out and counted.

    Args:
        per_user: table from :func:`lateness_per_user`.
        percentiles: in [0, 100]; numpy's linear interpolation.

    Returns:
        ``{"p10": ..., "p50": ..., "p90": ..., "nb_users": users used, "nb_users_undefined": users left out}``
        (keys follow ``percentiles``; NaN percentiles when no user qualifies).

    Raises:
        ValueError: a percentile outside [0, 100].
    """
    if any(not 0 <= q <= 100 for q in percentiles):
        raise ValueError(f"percentiles must be within [0, 100], got {list(percentiles)}")
    values = per_user["additional_lateness"].to_numpy(dtype="float64")
    defined = values[~np.isnan(values)]
    result: dict[str, float | int] = {}
    for q in percentiles:
        label = f"p{q:g}"
        result[label] = float(np.percentile(defined, q)) if defined.size else float("nan")
    result["nb_users"] = int(defined.size)
    result["nb_users_undefined"] = int(values.size - defined.size)
    return result


def _lateness_facts(lateness: pd.DataFrame) -> dict[str, float | int]:
    summary = lateness_summary(lateness)
    percentiles = additional_lateness_percentiles(lateness_per_user(lateness))
    return {**summary, **{f"user_{key}": value for key, value in percentiles.items()}}


_EQ = "Madon et al. 2024, "
#: The run-level lateness metrics of ``metrics.csv``; each ``compute`` takes the dict of
#: :func:`lateness_summary` merged with :func:`additional_lateness_percentiles` (keys prefixed ``user_``).
LATENESS_METRICS: tuple[Metric, ...] = (
    Metric("mean_lateness", "s", "mean lateness", "{:.1f}", lambda f: f["mean_lateness"], source=_EQ + "eq. 3"),
    Metric("relative_lateness", "", "relative lateness", "{:.4f}", lambda f: f["relative_lateness"],
           source=_EQ + "eq. 4"),
    Metric("additional_lateness", "s", "additional lateness", "{:.2f}", lambda f: f["additional_lateness"],
           source=_EQ + "eq. 6"),
    Metric("original_submission_span", "s", "recorded submission span", "{:.1f}", lambda f: f["original_length"]),
    Metric("submission_span", "s", "submission period (first to last simulated submission)", "{:.1f}",
           lambda f: f["simulated_length"], source=_EQ + "section 6.1, Figs. 2 and 3"),
    Metric("user_additional_lateness_p10", "s", "10th percentile of the per-user additional lateness", "{:.2f}",
           lambda f: f["user_p10"], source=_EQ + "Fig. 5(c)"),
    Metric("user_additional_lateness_p50", "s", "median per-user additional lateness", "{:.2f}",
           lambda f: f["user_p50"], source=_EQ + "Fig. 5(c)"),
    Metric("user_additional_lateness_p90", "s", "90th percentile of the per-user additional lateness", "{:.2f}",
           lambda f: f["user_p90"], source=_EQ + "Fig. 5(c)"),
    Metric("nb_users_single_job", "", "users with a single job", "{:d}", lambda f: f["user_nb_users_undefined"]),
)


def lateness_metrics(lateness: pd.DataFrame) -> dict[str, float | int]:
    """Every metric of :data:`LATENESS_METRICS`, in order, from :func:`job_lateness`'s table (all jobs).

    Keys: ``mean_lateness`` (s, eq. 3), ``relative_lateness`` (eq. 4), ``additional_lateness`` (s, eq. 6),
    ``original_submission_span`` (s), ``submission_span`` (s), ``user_additional_lateness_p10`` / ``_p50`` /
    ``_p90`` (s, Fig. 5(c))
    and ``nb_users_single_job`` (users left out of those percentiles).
    """
    facts = _lateness_facts(lateness)
    return {metric.name: metric.compute(facts) for metric in LATENESS_METRICS}
