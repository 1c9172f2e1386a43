"""What a site model's validation compares: the held-out jobs of the log against the simulated jobs of the model.

Caspart et al. 2019 (Sect. 6, Fig. 4) validate their GridKa model on the half of the jobs they did not calibrate on:
simulated and measured throughput and CPU utilisation over time, and run times. Both sides here are job tables
(:class:`JobTable`) over one window of simulated time (s from the log's ``UnixStartTime``, the model's time 0). Each
measure is compared by a relative deviation, ``(simulated - measured) / measured``, and a distance between the two
distributions:

- **throughput**: jobs ending per hour in the window (mean) and the times they end (two-sample Kolmogorov-Smirnov
  distance, KS: the largest gap between the two empirical distribution functions);
- **job type shares** of the jobs ending in the window: the deviation of each type's share, and the total variation
  distance (half the sum of the absolute differences of the shares, from 0, the same shares, to 1);
- **utilisation**: the share of the platform's job slots busy (jobs' processors running), time-weighted, over the
  window and per hour (KS between the hourly values);
- **run times** and **waiting times** of the jobs submitted in the window (mean, KS), waits only where the log
  records them;
- **CPU efficiency**, CPU seconds / run time, of the jobs submitted in the window, where the log records CPU times.

A measure the log does not record is reported as such (``None``), never guessed. This module imports numpy and
scipy; :func:`batreplay.analysis.metrics.time_weighted_means` integrates the utilisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from batreplay.analysis.metrics import time_weighted_means

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class JobTable:
    """Jobs of one side, arrays of shape ``(n,)``: ``submit``, ``start``, ``end`` (s), ``processors`` (job slots),
    ``job_type`` (type names), ``cpu_seconds`` (NaN where not known). ``waits_known``: the start times are measured
    (a log without waits gives ``start = submit``, and its waits are not compared)."""

    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    processors: np.ndarray
    job_type: np.ndarray
    cpu_seconds: np.ndarray
    waits_known: bool = True


@dataclass(frozen=True)
class Comparison:
    """One row of the validation table: the measure, its unit, the measured and simulated values (None: not
    recorded), the relative deviation and the distance (name and value)."""

    measure: str
    unit: str
    measured: float | None
    simulated: float | None
    deviation: float | None
    distance_name: str
    distance: float | None


def relative_deviation(measured: float | None, simulated: float | None) -> float | None:
    """``(simulated - measured) / measured``, or None when either is missing or ``measured`` is 0."""
    if measured is None or simulated is None or measured == 0:
        return None
    return (simulated - measured) / measured


def ks_distance(first: np.ndarray, second: np.ndarray) -> float | None:
    """Two-sample Kolmogorov-Smirnov distance (scipy), or None when a side is empty."""
    if len(first) == 0 or len(second) == 0:
        return None
    return float(stats.ks_2samp(first, second).statistic)


def hourly_edges(window: tuple[float, float]) -> np.ndarray:
    """Edges of the whole hours of ``window`` (s), from its start; a last partial hour is left out."""
    hours = int((window[1] - window[0]) // SECONDS_PER_HOUR)
    if hours < 1:
        raise ValueError(f"validation window of {window[1] - window[0]:g} s: at least one hour is needed")
    return window[0] + SECONDS_PER_HOUR * np.arange(hours + 1)


def throughput_per_hour(jobs: JobTable, edges: np.ndarray) -> np.ndarray:
    """Jobs ending in each hour ``[edges[k], edges[k+1])``, shape ``(len(edges) - 1,)``."""
    return np.histogram(jobs.end, bins=edges)[0].astype(np.float64)


def utilisation_per_hour(jobs: JobTable, edges: np.ndarray, slots: int) -> np.ndarray:
    """Mean share of ``slots`` busy in each hour (time-weighted), shape ``(len(edges) - 1,)``."""
    times = np.concatenate([jobs.start, jobs.end])
    change = np.concatenate([jobs.processors, -jobs.processors]).astype(np.float64)
    order = np.argsort(times, kind="stable")
    moments, first = np.unique(times[order], return_index=True)
    busy = np.cumsum(change[order])[np.append(first[1:], len(order)) - 1]  # after every change at each moment
    return time_weighted_means(moments, busy, edges) / slots


def compare(log: JobTable, simulated: JobTable, window: tuple[float, float], slots: int) -> list[Comparison]:
    """The validation table of the module docstring, over ``window`` (s), on a platform of ``slots`` job slots.

    Raises:
        ValueError: a window shorter than an hour, or ``slots`` < 1.
    """
    if slots < 1:
        raise ValueError(f"validation: a platform of {slots} job slots")
    edges = hourly_edges(window)
    span = edges[-1] - edges[0]
    ended = [_within(side.end, edges) for side in (log, simulated)]
    submitted = [_within(side.submit, edges) for side in (log, simulated)]
    rows = [_row("throughput", "jobs/h", *(m.sum() * SECONDS_PER_HOUR / span for m in ended), "KS (end times)",
                 ks_distance(log.end[ended[0]], simulated.end[ended[1]]))]
    rows += _type_rows(log.job_type[ended[0]], simulated.job_type[ended[1]])
    usage = [utilisation_per_hour(side, edges, slots) for side in (log, simulated)]
    rows.append(_row("utilisation", "of job slots", *(u.mean() for u in usage), "KS (hourly values)",
                     ks_distance(*usage)))
    runs = [side.end[m] - side.start[m] for side, m in zip((log, simulated), submitted)]
    rows.append(_row("mean run time", "s", *(r.mean() if r.size else None for r in runs), "KS (run times)",
                     ks_distance(*runs)))
    waits = [side.start[m] - side.submit[m] for side, m in zip((log, simulated), submitted)]
    known = log.waits_known
    rows.append(_row("mean waiting time", "s", waits[0].mean() if known and waits[0].size else None,
                     waits[1].mean() if waits[1].size else None, "KS (waiting times)",
                     ks_distance(*waits) if known else None))
    efficiency = [side.cpu_seconds[m] / np.maximum(run, 1e-9) for side, m, run in zip((log, simulated), submitted,
                                                                                         runs)]
    recorded = efficiency[0][np.isfinite(efficiency[0])]
    rows.append(_row("CPU efficiency", "CPU s / s", recorded.mean() if recorded.size else None,
                     np.nanmean(efficiency[1]) if np.isfinite(efficiency[1]).any() else None,
                     "KS (efficiencies)", ks_distance(recorded, efficiency[1][np.isfinite(efficiency[1])])
                     if recorded.size else None))
    return rows


def _within(times: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return (times >= edges[0]) & (times < edges[-1])


def _row(measure: str, unit: str, measured, simulated, distance_name: str, distance) -> Comparison:
    measured = None if measured is None else float(measured)
    simulated = None if simulated is None else float(simulated)
    return Comparison(measure, unit, measured, simulated, relative_deviation(measured, simulated), distance_name,
                      distance)


def _type_rows(log_types: np.ndarray, simulated_types: np.ndarray) -> list[Comparison]:
    """One row per job type: its share of the jobs ending in the window; the total variation distance of all."""
    names = sorted(set(log_types.tolist()) | set(simulated_types.tolist()))
    shares = [np.array([np.mean(side == name) if side.size else 0.0 for name in names])
              for side in (log_types, simulated_types)]
    distance = 0.5 * float(np.abs(shares[0] - shares[1]).sum()) if log_types.size and simulated_types.size else None
    return [_row(f"share of {name}", "ended", shares[0][k], shares[1][k],
                 "total variation (all types)", distance) for k, name in enumerate(names)]
