"""Empirical distributions of a site model: fitted from a log's values, drawn from, written to and read from JSON.

Caspart et al. 2019 (Sect. 5, parameter extraction) describe each job parameter of a job type by a histogram
exported from the site's monitoring data. Here a distribution is one of two kinds:

- ``discrete``: the values seen and their probabilities, when the sample has at most ``max_bins`` distinct values
  (the few run times of a small type), or is of an integer quantity (job slots, demand rounds) with at most
  :data:`~batreplay.sitemodels.choices.MAX_DISCRETE_INTEGERS` of them. Drawing gives exactly those values.
- ``histogram``: atoms (values holding at least ``1 / max_bins`` of the sample each, such as 0 s inter-arrival
  times of jobs submitted together, or run times cut at one walltime) with their probabilities, and bins (edges)
  with the probability of the rest. The edges are quantiles of the values that are not atoms: up to ``max_bins``
  bins of equal probability, the first and the last split in halves again down to two values each (so that a long
  tail keeps its mean: the values of a bin are drawn at its middle on average). Drawing picks an atom or a bin by
  its probability, then a value uniformly within the bin.

Its cumulative distribution function (:meth:`EmpiricalDistribution.cdf`) steps at each atom and rises linearly
through each bin. Within a bin it and the sample's empirical one both rise by the bin's probability, so they differ by
at most the largest bin's probability: ``1 / max_bins`` for values without ties (a value tied at an edge adds its
share, below ``1 / max_bins`` too, or it would be an atom). With the Dvoretzky-Kiefer-Wolfowitz inequality, its
Kolmogorov-Smirnov distance to the distribution ``n`` values without ties came from is then below ``1 / max_bins +
sqrt(ln(2 / alpha) / (2 n))`` with probability ``1 - alpha`` (``tests/sitemodels/test_distributions.py`` checks it on
known distributions).

Units are those of the quantity fitted (seconds, flop, bytes, processors); a distribution holds no unit itself.
This module imports numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from batreplay.sitemodels.choices import DEFAULT_MAX_BINS, MAX_DISCRETE_INTEGERS

#: Probabilities of a distribution read from a file may sum to 1 within this tolerance.
PROBABILITY_SUM_TOLERANCE = 1e-9


class DistributionError(ValueError):
    """A distribution field of a model file that cannot be read; the message names the field (``where``)."""


@dataclass(frozen=True)
class EmpiricalDistribution:
    """A fitted distribution (module docstring).

    Attributes:
        kind: ``"discrete"`` or ``"histogram"``.
        values: discrete values, or the atoms of a histogram, increasing; shape ``(k,)``.
        value_probabilities: their probabilities, shape ``(k,)``.
        edges: a histogram's bin edges, increasing, shape ``(b + 1,)`` (empty for a discrete distribution).
        bin_probabilities: the probability of each bin, shape ``(b,)``.
        samples: number of values it was fitted on.
        integer: drawn values are rounded to whole numbers (processors, rounds).
    """

    kind: str
    values: tuple[float, ...]
    value_probabilities: tuple[float, ...]
    edges: tuple[float, ...]
    bin_probabilities: tuple[float, ...]
    samples: int
    integer: bool = False

    @classmethod
    def fit(cls, data: Any, *, max_bins: int = DEFAULT_MAX_BINS, integer: bool = False) -> EmpiricalDistribution:
        """The distribution of the finite values ``data`` (shape ``(n,)``, n >= 1).

        Raises:
            ValueError: no value, a value that is not finite, or ``max_bins`` < 1.
        """
        x = np.sort(np.asarray(data, dtype=np.float64).reshape(-1))
        if x.size == 0 or not np.isfinite(x).all() or max_bins < 1:
            raise ValueError(f"fit: need at least one finite value and max_bins >= 1 (got {x.size} values, "
                             f"max_bins {max_bins})")
        distinct, counts = np.unique(x, return_counts=True)
        n = x.size
        if distinct.size <= (max(max_bins, MAX_DISCRETE_INTEGERS) if integer else max_bins):
            return cls("discrete", tuple(distinct.tolist()), tuple((counts / n).tolist()), (), (), n, integer)
        heavy = counts * max_bins >= n
        rest = x[~np.isin(x, distinct[heavy])]
        if rest.size == 0 or np.unique(rest).size < 2:  # every value an atom, or one value left: all atoms
            return cls("discrete", tuple(distinct.tolist()), tuple((counts / n).tolist()), (), (), n, integer)
        n_bins = max(1, math.ceil(max_bins * rest.size / n))  # (rounding up: no bin above 1 / max_bins)
        edges = np.unique(np.quantile(rest, _probability_grid(n_bins, rest.size)))
        in_bins, _ = np.histogram(rest, bins=edges)
        return cls("histogram", tuple(distinct[heavy].tolist()), tuple((counts[heavy] / n).tolist()),
                   tuple(edges.tolist()), tuple((in_bins / n).tolist()), n, integer)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` values drawn from the distribution with ``rng``, shape ``(size,)``, float64 (whole numbers
        when :attr:`integer`)."""
        return self.quantile(rng.random(size))

    def quantile(self, u: Any) -> np.ndarray:
        """A value x with P(X <= x) >= u for each ``u`` in [0, 1) (any shape): the inverse of :meth:`cdf` (at a
        probability an atom reaches exactly, the atom or the next value), increasing in ``u``, so that one uniform
        draw per job maps to its value (and correlated uniforms to correlated values, see
        :mod:`batreplay.sitemodels.sampling`). Rounded when :attr:`integer`."""
        fs, xs = self._inverse
        out = np.interp(np.asarray(u, dtype=np.float64), fs, xs)
        return np.rint(out) if self.integer else out

    @cached_property
    def _inverse(self) -> tuple[np.ndarray, np.ndarray]:
        """The CDF as interpolation points ``(F, x)``: each atom and edge twice, with the CDF's left limit there and
        its value (they differ by an atom's probability, a jump), so that interpolating x over F inverts it."""
        points = np.unique(np.concatenate([self.values, self.edges]))
        at = self.cdf(points)
        jumps = np.zeros(points.size)
        jumps[np.searchsorted(points, self.values)] = self.value_probabilities
        return np.column_stack([at - jumps, at]).reshape(-1), np.repeat(points, 2)

    def cdf(self, x: Any) -> np.ndarray:
        """P(X <= x) at each point of ``x`` (any shape; the result has its shape)."""
        points = np.asarray(x, dtype=np.float64)
        total = np.zeros(points.shape)
        for value, p in zip(self.values, self.value_probabilities):
            total += p * (points >= value)
        for lo, hi, p in zip(self.edges[:-1], self.edges[1:], self.bin_probabilities):
            total += p * np.clip((points - lo) / (hi - lo), 0.0, 1.0)
        return total

    def mean(self) -> float:
        """The distribution's mean (atoms at their value, bins at their middle)."""
        atoms = float(np.dot(self.values, self.value_probabilities)) if self.values else 0.0
        mids = [(lo + hi) / 2 for lo, hi in zip(self.edges[:-1], self.edges[1:])]
        return atoms + float(np.dot(mids, self.bin_probabilities)) if mids else atoms

    def support(self) -> tuple[float, float]:
        """The smallest and largest value it can draw."""
        points = list(self.values) + list(self.edges)
        return min(points), max(points)

    def to_json(self) -> dict:
        """The JSON object of the model file (``docs/site-models.md``)."""
        document: dict[str, Any] = {"kind": self.kind, "samples": self.samples, "integer": self.integer,
                                    "values": list(self.values), "value_probabilities": list(self.value_probabilities)}
        if self.kind == "histogram":
            document.update(edges=list(self.edges), bin_probabilities=list(self.bin_probabilities))
        return document

    @classmethod
    def from_json(cls, document: Any, where: str) -> EmpiricalDistribution:
        """A distribution from its JSON object; ``where`` names it in errors (``file: field``).

        Raises:
            DistributionError: a missing or unknown key, a value of the wrong type, values or edges not increasing,
                probabilities negative or not summing to 1.
        """
        if not isinstance(document, dict):
            raise DistributionError(f"{where}: expected an object, got {type(document).__name__}")
        kind = document.get("kind")
        keys = {"kind", "samples", "integer", "values", "value_probabilities"}
        keys |= {"edges", "bin_probabilities"} if kind == "histogram" else set()
        if kind not in ("discrete", "histogram"):
            raise DistributionError(f"{where}.kind: expected 'discrete' or 'histogram', got {kind!r}")
        if set(document) != keys:
            raise DistributionError(f"{where}: keys {sorted(document)}, expected {sorted(keys)}")
        samples, integer = document["samples"], document["integer"]
        if type(samples) is not int or samples < 1:
            raise DistributionError(f"{where}.samples: expected an integer >= 1, got {samples!r}")
        if type(integer) is not bool:
            raise DistributionError(f"{where}.integer: expected true or false, got {integer!r}")
        values = _numbers(document["values"], f"{where}.values", increasing=True)
        value_p = _numbers(document["value_probabilities"], f"{where}.value_probabilities", length=len(values))
        edges = _numbers(document.get("edges", []), f"{where}.edges", increasing=True)
        bin_p = _numbers(document.get("bin_probabilities", []), f"{where}.bin_probabilities",
                         length=max(len(edges) - 1, 0))
        _check_probabilities(value_p + bin_p, where, kind, values, edges)
        return cls(kind, tuple(values), tuple(value_p), tuple(edges), tuple(bin_p), samples, integer)


def _probability_grid(n_bins: int, n: int) -> np.ndarray:
    """Probabilities of the bin edges: ``n_bins`` equal steps, and the first and last step halved again and again
    while a half holds two values or more (tails of run times are long: a last bin from the 98th percentile to the
    largest value would put its probability at their middle, far above the values' mean)."""
    grid = list(np.linspace(0.0, 1.0, n_bins + 1))
    step = 1.0 / n_bins / 2
    while step * n >= 2:
        grid += [step, 1.0 - step]
        step /= 2
    return np.unique(np.clip(grid, 0.0, 1.0))


def finite_number(value: Any) -> bool:
    """A JSON number (not a boolean) that is finite as a float (an integer of 400 digits is not)."""
    if type(value) not in (int, float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _numbers(items: Any, where: str, *, increasing: bool = False, length: int | None = None) -> list[float]:
    if not isinstance(items, list) or not all(finite_number(v) for v in items):
        raise DistributionError(f"{where}: expected a list of finite numbers")
    if length is not None and len(items) != length:
        raise DistributionError(f"{where}: {len(items)} numbers, expected {length}")
    if increasing and any(b <= a for a, b in zip(items, items[1:])):
        raise DistributionError(f"{where}: numbers must be strictly increasing")
    return [float(v) for v in items]


def _check_probabilities(probabilities: list[float], where: str, kind: str, values: list, edges: list) -> None:
    if kind == "discrete" and not values:
        raise DistributionError(f"{where}.values: a discrete distribution needs at least one value")
    if kind == "histogram" and len(edges) < 2:
        raise DistributionError(f"{where}.edges: a histogram needs at least two edges")
    if any(p < 0 for p in probabilities) or abs(sum(probabilities) - 1.0) > PROBABILITY_SUM_TOLERANCE:
        raise DistributionError(f"{where}: probabilities must be >= 0 and sum to 1 (sum {sum(probabilities)!r})")
