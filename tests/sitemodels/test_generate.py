"""Open workloads drawn from a site model: seeded, back to the model's distributions when fitted again, on the
model's daily cycle and rate, and the same jobs as SWF or Batsim JSON."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from synthetic_logs import DAY_SHARE_OF_SUBMISSIONS, write_synthetic_log

from batreplay.sitemodels.distributions import EmpiricalDistribution
from batreplay.sitemodels.fit import FitOptions, fit_site_model
from batreplay.sitemodels.generate import GenerateOptions, generated_log, swf_text, write_generated
from batreplay.sitemodels.job_types import JobTypeRule
from batreplay.workloads.loading import WorkloadOptions, load_workload
from batreplay.workloads.swf import read_swf
from conftest import WORKLOADS

SPEED, IO_RATE = 2e9, 5e7


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    log = write_synthetic_log(tmp_path_factory.mktemp("synthetic") / "synthetic.swf", 30_000)
    options = FitOptions(seed=3, node_speed=SPEED, reference_io_rate=IO_RATE)
    return log, fit_site_model(log.path, JobTypeRule.parse("group"), options).model


def test_one_seed_gives_one_workload(model):
    _, site = model
    first = swf_text(generated_log(site, GenerateOptions(jobs=500, seed=5)))
    assert first == swf_text(generated_log(site, GenerateOptions(jobs=500, seed=5)))
    assert first != swf_text(generated_log(site, GenerateOptions(jobs=500, seed=6)))


def test_a_generated_log_fitted_again_gives_back_the_model(model, tmp_path):
    """20,000 drawn jobs, written as SWF, read and fitted on all of them: the same types (the group field written
    back), shares within 4 binomial sigmas, each demand within the KS bound of both fits of the model's."""
    _, site = model
    path, log, _ = write_generated(site, GenerateOptions(jobs=20_000, seed=8), tmp_path / "drawn.swf")
    refit = fit_site_model(path, JobTypeRule.parse("group"),
                           FitOptions(split=1.0, node_speed=SPEED, reference_io_rate=IO_RATE)).model
    assert [t.name for t in refit.types] == [t.name for t in site.types]
    for original, again in zip(site.types, refit.types):
        n = min(original.jobs, again.jobs)  # two fits' bins, DKW on the smaller, whole seconds
        bound = 2 / 50 + 2 * math.sqrt(math.log(2 / 1e-3) / (2 * n)) + 0.01
        assert again.share == pytest.approx(original.share, abs=4 * math.sqrt(0.25 / 20_000))
        assert again.job_slots.values == original.job_slots.values
        for name in ("cpu_demand", "io_demand", "requested_time_ratio"):
            before, after = getattr(original, name), getattr(again, name)
            if before is None:
                assert after is None
                continue
            grid = np.unique(np.concatenate([np.asarray(before.edges + before.values), after.edges, after.values]))
            assert np.max(np.abs(before.cdf(grid) - after.cdf(grid))) < bound, (original.name, name)
        assert again.cpu_io_correlation == pytest.approx(original.cpu_io_correlation, abs=0.02)


def test_submissions_follow_the_daily_cycle_and_the_sites_rate(model):
    log, site = model
    recorded = read_swf(log.path).jobs["submission_time"]
    per_day = len(recorded) / (recorded.max() / 86_400)
    drawn = generated_log(site, GenerateOptions(days=30, seed=9)).jobs["submission_time"].to_numpy()
    assert drawn.max() < 30 * 86_400 and np.all(np.diff(drawn) >= 0)
    assert len(drawn) / 30 == pytest.approx(per_day, rel=0.1)  # the whole site's rate, not the calibration half's
    hours = (drawn // 3600) % 24
    assert np.mean((hours >= 8) & (hours < 18)) == pytest.approx(DAY_SHARE_OF_SUBMISSIONS, abs=0.03)
    faster = generated_log(site, GenerateOptions(days=30, seed=9, rate_scale=2.0)).n_jobs
    assert faster / len(drawn) == pytest.approx(2.0, rel=0.1)


@pytest.fixture(scope="module")
def gridka():
    return fit_site_model(WORKLOADS / "LCG.swf.gz", JobTypeRule.parse("group"),
                          FitOptions(select={"partition": [156, 157]}, seed=1, io_share=0.2, demand_rounds=4)).model


def test_the_batsim_workload_is_the_swf_log_converted_as_batreplay_run_converts_it(gridka, tmp_path):
    options = GenerateOptions(jobs=300, seed=4)
    swf_path, log, _ = write_generated(gridka, options, tmp_path / "w.swf")
    json_path, same_log, notes = write_generated(gridka, options, tmp_path / "w.json")
    assert same_log.jobs.equals(log.jobs) and any("Batsim workload from w.json" in note for note in notes)
    by_run = load_workload(swf_path, WorkloadOptions(profile="parallel_homogeneous", recorded_speed=1e9,
                                                     demand_rounds=4, reference_io_rate=1e8))
    written = load_workload(json_path).document
    assert written["jobs"] == by_run.document["jobs"] and written["profiles"] == by_run.document["profiles"]
    composed = written["profiles"][written["jobs"][0]["profile"]]
    assert composed["type"] == "composed" and composed["repeat"] == 4
    # every job keeps its type: the group field written back is one of the model's groups, in its share
    groups = read_swf(swf_path).jobs["group_id"].value_counts(normalize=True)
    assert set(groups.index) <= {1, 2, 4, 6}
    for t in gridka.types:
        assert groups.get(int(t.name.split("=")[1]), 0.0) == pytest.approx(t.share, abs=4 * math.sqrt(0.25 / 300))


def test_bad_outputs_and_models_are_refused(gridka, tmp_path):
    with pytest.raises(ValueError, match=r"--out .*w.csv: expected a .swf"):
        write_generated(gridka, GenerateOptions(jobs=3), tmp_path / "w.csv")
    with pytest.raises(ValueError, match="that is the model file"):
        write_generated(gridka, GenerateOptions(jobs=3), tmp_path / "m.json", model_path=tmp_path / "m.json")
    mixed = dataclasses.replace(gridka, types=(
        dataclasses.replace(gridka.types[0], demand_rounds=EmpiricalDistribution.fit([2], integer=True)),
        *gridka.types[1:]))
    with pytest.raises(ValueError, match=r"the job types do not all have one same number of demand rounds"):
        write_generated(mixed, GenerateOptions(jobs=3), tmp_path / "w.json")
    assert list(tmp_path.iterdir()) == []
    for kwargs, message in (({}, "give --jobs N or --days D"), ({"jobs": 0}, "--jobs 0"),
                            ({"days": -1.0}, "--days -1.0"), ({"jobs": 3, "rate_scale": 0.0}, "--rate-scale 0.0")):
        with pytest.raises(ValueError, match=message):
            GenerateOptions(**kwargs)
