"""Drawing jobs of a site model's job types: the demands of one job at a time or of many at once.

Each job of a type gets its job slots, demand rounds and requested-time ratio drawn independently from the type's
distributions (a requested time at all with the type's ``requested_time_share``), and its CPU and I/O demand drawn
together: two standard normal variables with correlation
``2 sin(pi rho / 6)`` (the Pearson correlation whose Gaussian copula has Spearman's rank correlation ``rho``, the
type's ``cpu_io_correlation``) are turned into uniforms and then into demands through each distribution's quantile
function. So each demand keeps its fitted distribution, and the pair a rank correlation close to the type's (equal
for continuous demands; atoms, such as a share of jobs without I/O, tie ranks and move it). A log whose I/O is a
fixed share of the run time, ``rho`` = 1, gives CPU and I/O demands that grow together, as in the log.

What a job lasts on a node of the model's recorded speed and reference I/O rate, alone: ``cpu / node_speed +
io / reference_io_rate`` seconds. Imports numpy and scipy (the normal distribution).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from batreplay.sitemodels.model_file import JobTypeModel, SiteModel


@dataclass(frozen=True)
class DrawnJobs:
    """Demands of ``n`` drawn jobs, arrays of shape ``(n,)``: ``type_index`` (into the model's types), ``slots``
    (job slots), ``cpu`` (flop per slot), ``io`` (bytes per slot), ``rounds``, ``ratio`` (requested time / run time,
    NaN when the type has none)."""

    type_index: np.ndarray
    slots: np.ndarray
    cpu: np.ndarray
    io: np.ndarray
    rounds: np.ndarray
    ratio: np.ndarray


def draw_types(model: SiteModel, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` type indexes drawn by the types' shares, shape ``(n,)``."""
    shares = np.asarray([t.share for t in model.types])
    return rng.choice(len(shares), size=n, p=shares / shares.sum())


def draw_jobs(model: SiteModel, type_index: np.ndarray, rng: np.random.Generator) -> DrawnJobs:
    """The demands of jobs of the given types (shape ``(n,)``), drawn type by type in the order of the model's
    types (so a seed gives the same jobs whatever else was drawn before with another generator)."""
    n = type_index.size
    columns = {name: np.empty(n) for name in ("slots", "cpu", "io", "rounds", "ratio")}
    for k, job_type in enumerate(model.types):
        rows = np.flatnonzero(type_index == k)
        if rows.size:
            for name, values in _draw_type(job_type, rng, rows.size).items():
                columns[name][rows] = values
    return DrawnJobs(type_index, **columns)


def _draw_type(job_type: JobTypeModel, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    rho = 2 * math.sin(math.pi * job_type.cpu_io_correlation / 6)
    first, second = rng.standard_normal(n), rng.standard_normal(n)
    coupled = rho * first + math.sqrt(max(0.0, 1 - rho * rho)) * second
    ratio = job_type.requested_time_ratio
    drawn = {"slots": job_type.job_slots.sample(rng, n),
             "cpu": job_type.cpu_demand.quantile(ndtr(first)),
             "io": job_type.io_demand.quantile(ndtr(coupled)),
             "rounds": job_type.demand_rounds.sample(rng, n),
             "ratio": ratio.sample(rng, n) if ratio is not None else np.full(n, np.nan)}
    drawn["ratio"][rng.random(n) >= job_type.requested_time_share] = np.nan  # (jobs without a requested time)
    return drawn


def alone_seconds(model: SiteModel, jobs: DrawnJobs) -> np.ndarray:
    """Seconds each job lasts alone on a node of the model's recorded speed and reference I/O rate, ``(n,)``."""
    return jobs.cpu / model.reference["node_speed"] + jobs.io / model.reference["reference_io_rate"]
