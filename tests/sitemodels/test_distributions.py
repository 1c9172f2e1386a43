"""Empirical distributions of site models: fitting recovers known distributions, drawing follows the fit, the JSON
form round-trips and is checked field by field."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from batreplay.sitemodels.distributions import DistributionError, EmpiricalDistribution

N = 20_000
ALPHA = 1e-3
#: KS bound of the module docstring: 1 / max_bins + the DKW term for N values at probability 1 - ALPHA.
BOUND = 1 / 50 + math.sqrt(math.log(2 / ALPHA) / (2 * N))


def sup_distance(fitted: EmpiricalDistribution, true_cdf, grid: np.ndarray) -> float:
    """sup |F_fit - F_true| on ``grid`` (both right-continuous; the grid holds every atom)."""
    return float(np.max(np.abs(fitted.cdf(grid) - true_cdf(grid))))


def test_a_lognormal_run_time_is_recovered_within_the_stated_bound():
    truth = stats.lognorm(s=1.5, scale=3600.0)
    fitted = EmpiricalDistribution.fit(truth.rvs(N, random_state=np.random.default_rng(1)))
    assert fitted.kind == "histogram" and fitted.values == ()
    grid = np.geomspace(1, 1e7, 4000)
    assert sup_distance(fitted, truth.cdf, grid) < BOUND
    drawn = fitted.sample(np.random.default_rng(2), N)  # drawing follows the fit, and so the truth
    assert stats.kstest(drawn, truth.cdf).statistic < BOUND + math.sqrt(math.log(2 / ALPHA) / (2 * N))


def test_atoms_are_kept_as_atoms_beside_a_continuous_part():
    """Inter-arrival times: 30 % of jobs submitted in the same second as the previous one (gap 0), the rest
    exponential; run times cut at a walltime of 172,800 s (an atom at the top)."""
    rng = np.random.default_rng(3)
    gaps = np.where(rng.random(N) < 0.3, 0.0, rng.exponential(600.0, N))
    fitted = EmpiricalDistribution.fit(gaps)
    assert fitted.kind == "histogram" and fitted.values == (0.0,)
    assert fitted.value_probabilities[0] == pytest.approx(np.mean(gaps == 0), abs=1e-12)

    def truth(x):
        return np.where(x >= 0, 0.3 + 0.7 * (1 - np.exp(-np.maximum(x, 0) / 600.0)), 0.0)

    assert sup_distance(fitted, truth, np.concatenate([[0.0], np.linspace(0, 6000, 3000)])) < BOUND
    assert np.mean(fitted.sample(rng, N) == 0) == pytest.approx(0.3, abs=0.015)


def test_a_few_distinct_values_give_a_discrete_distribution_with_exact_probabilities():
    values = np.repeat([1, 2, 4, 8], [500, 300, 150, 50])
    fitted = EmpiricalDistribution.fit(values, integer=True)
    assert fitted.kind == "discrete" and fitted.values == (1, 2, 4, 8)
    assert fitted.value_probabilities == pytest.approx((0.5, 0.3, 0.15, 0.05))
    drawn = fitted.sample(np.random.default_rng(4), N)
    assert set(np.unique(drawn).tolist()) == {1, 2, 4, 8}
    assert fitted.mean() == pytest.approx(values.mean())


def test_fit_refuses_no_value_and_values_that_are_not_finite():
    with pytest.raises(ValueError, match="at least one finite value"):
        EmpiricalDistribution.fit([])
    with pytest.raises(ValueError, match="at least one finite value"):
        EmpiricalDistribution.fit([1.0, np.nan])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=400),
       st.integers(1, 60), st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=50))
def test_the_quantile_function_inverts_the_cdf_and_stays_in_the_support(data, max_bins, uniforms):
    fitted = EmpiricalDistribution.fit(data, max_bins=max_bins)
    u = np.sort(np.asarray(uniforms))
    x = fitted.quantile(u)
    low, high = fitted.support()
    assert np.all(np.diff(x) >= 0)  # increasing in u: correlated uniforms give correlated values
    assert np.all((low <= x) & (x <= high))
    assert np.all(fitted.cdf(x) >= u - 1e-9)  # the smallest x with F(x) >= u ...
    assert sum(fitted.value_probabilities) + sum(fitted.bin_probabilities) == pytest.approx(1.0)


def test_json_round_trip_and_field_errors():
    fitted = EmpiricalDistribution.fit(np.random.default_rng(5).gamma(2.0, 100.0, 5000), integer=False)
    assert EmpiricalDistribution.from_json(fitted.to_json(), "m.json: x") == fitted
    broken = fitted.to_json() | {"edges": list(reversed(fitted.edges))}
    with pytest.raises(DistributionError, match=r"^m.json: x.edges: numbers must be strictly increasing$"):
        EmpiricalDistribution.from_json(broken, "m.json: x")
    halved = fitted.to_json() | {"bin_probabilities": [p / 2 for p in fitted.bin_probabilities]}
    with pytest.raises(DistributionError, match=r"^m.json: x: probabilities must be >= 0 and sum to 1"):
        EmpiricalDistribution.from_json(halved, "m.json: x")
    with pytest.raises(DistributionError, match=r"^m.json: x.kind: expected 'discrete' or 'histogram'"):
        EmpiricalDistribution.from_json(fitted.to_json() | {"kind": "normal"}, "m.json: x")
    with pytest.raises(DistributionError, match=r"^m.json: x.samples: expected an integer >= 1"):
        EmpiricalDistribution.from_json(fitted.to_json() | {"samples": 0}, "m.json: x")


def test_an_integer_quantity_with_many_values_draws_only_values_seen():
    """Processor counts of a real log take more than 50 values: kept discrete, drawing never invents one."""
    values = np.random.default_rng(6).choice(np.arange(1, 700, 7), size=5000)
    fitted = EmpiricalDistribution.fit(values, integer=True)
    assert fitted.kind == "discrete" and len(fitted.values) == len(np.unique(values)) > 50
    assert set(fitted.sample(np.random.default_rng(7), 5000).tolist()) <= set(values.tolist())
    continuous = EmpiricalDistribution.fit(values.astype(float))  # the same numbers, not counts: a histogram
    assert continuous.kind == "histogram"


def test_no_bin_holds_more_than_one_max_bins_th_of_the_values():
    """Atoms take most of the values, the rest clustered: bins are never wider than 1 / max_bins."""
    rng = np.random.default_rng(8)
    data = np.concatenate([np.zeros(93_000), rng.uniform(0, 1, 2300), rng.uniform(0.4, 0.45, 2400),
                           rng.uniform(0.5, 1, 2300)])
    fitted = EmpiricalDistribution.fit(data)
    assert max(fitted.bin_probabilities) <= 1 / 50 + 1e-12
