"""Lateness metrics of a replay with feedback (seed 004: Madon, Da Costa, Pierson 2024, Sect. 6.2).

For job ``j_i`` with recorded submission time ``a_i`` and submission time ``â_i`` in the replay:

- lateness ``l(i) = â_i - a_i`` (Def. 13);
- mean lateness ``l̄ = (1/n) sum_i l(i)`` (eq. 3);
- relative lateness ``1 + l̄ / (a_{n-1} - a_0)``, the jobs ordered by recorded submission time, so the
  denominator is the recorded length of the workload (eq. 4);
- additional lateness per job ``δ_i = l(i) - l(i-1)`` (eq. 5), and the aggregated additional lateness
  ``δ = 2 l̄ / (n - 1)`` (eq. 6), the constant per-job increment that would give the same mean lateness.

Each can be taken per user (the user's jobs, in recorded submission order) or on the whole simulation
(all jobs in recorded submission order). Seed 004's Fig. 5(c) gives the 10th, 50th and 90th percentiles
of the per-user additional lateness (:func:`additional_lateness_percentiles`). Times are seconds.

The recorded side comes as a table with columns ``job_id`` (full ``workload!job_id`` or bare Batsim id),
``user_id`` and ``original_submission_time`` (seconds, same origin as the simulation).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from batreplay.formats.out_jobs import FULL_ID, attach_job_table

ORIGINALS_COLUMNS: tuple[str, ...] = ("job_id", "user_id", "original_submission_time")


def job_lateness(jobs: pd.DataFrame, originals: pd.DataFrame) -> pd.DataFrame:
    """Lateness of every job (seed 004, Def. 13) and its increments (eq. 5).

    Rejected jobs count: they were submitted, so their submission time is known.

    Args:
        jobs: validated ``out_jobs.csv`` table of the replay (:func:`batreplay.formats.out_jobs.read_out_jobs`).
        originals: table with ``job_id``, ``user_id``, ``original_submission_time`` (s), one row per job.

    Returns:
        One row per job, sorted by (``original_submission_time``, ``full_job_id``), with ``full_job_id``,
        ``user_id``, ``original_submission_time`` (a_i), ``submission_time`` (â_i), ``lateness`` (l(i), s),
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
    original = pd.to_numeric(originals["original_submission_time"], errors="coerce").to_numpy(dtype="float64")
    bad = ~np.isfinite(original)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"originals table: job {originals['job_id'].iloc[k]}: original_submission_time "
                         f"{originals['original_submission_time'].iloc[k]!r} is not a finite number")
    merged = attach_job_table(jobs, originals.assign(original_submission_time=original),
                              columns=["user_id", "original_submission_time"], table_name="originals table")
    frame = merged[[FULL_ID, "user_id", "original_submission_time", "submission_time"]]
    frame = frame.sort_values(["original_submission_time", FULL_ID], kind="stable").reset_index(drop=True)
    frame["lateness"] = frame["submission_time"] - frame["original_submission_time"]
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
    """Whole-simulation lateness metrics (seed 004, eqs. 3, 4, 6) from :func:`job_lateness`'s table.

    Returns:
        ``{"nb_jobs": n, "mean_lateness": l̄ (s), "relative_lateness": 1 + l̄ / (a_{n-1} - a_0)
        (dimensionless; NaN when all recorded submissions are simultaneous), "additional_lateness":
        2 l̄ / (n - 1) (s; NaN when n < 2), "original_length": a_{n-1} - a_0 (s)}``.
    """
    late = lateness["lateness"].to_numpy(dtype="float64")
    original = lateness["original_submission_time"].to_numpy(dtype="float64")
    mean, relative, additional = _metrics(late, original)
    return {"nb_jobs": int(late.size), "mean_lateness": mean, "relative_lateness": relative,
            "additional_lateness": additional,
            "original_length": float(np.ptp(original)) if original.size else float("nan")}


def lateness_per_user(lateness: pd.DataFrame) -> pd.DataFrame:
    """Per-user lateness metrics (seed 004, eqs. 3, 4, 6 over each user's jobs; Figs. 4 and 5).

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
    length = grouped["original_submission_time"].max() - grouped["original_submission_time"].min()
    return pd.DataFrame({
        "nb_jobs": n.astype("int64"),
        "mean_lateness": mean,
        "relative_lateness": (1.0 + mean / length.where(length > 0)),
        "additional_lateness": 2.0 * mean / (n - 1).where(n > 1),
    })


def additional_lateness_percentiles(per_user: pd.DataFrame,
                                    percentiles: Sequence[float] = (10, 50, 90)) -> dict[str, float | int]:
    """Percentiles of the per-user additional lateness (seed 004, Fig. 5(c)), seconds.

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
