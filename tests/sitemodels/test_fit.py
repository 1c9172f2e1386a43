"""Fitting a site model: the seeded, disjoint split; known distributions of a synthetic log recovered within the
bound of :mod:`batreplay.sitemodels.distributions`; the GridKa jobs of the LCG log; the model file."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from synthetic_logs import (CPU_SHARE, MONDAY, PROCESSORS, RATIO, RUN_TIMES, SHARES, write_synthetic_log)

from batreplay.sitemodels.fit import FitOptions, fit_site_model, held_out_path, save_fit
from batreplay.sitemodels.job_types import JobTypeRule
from batreplay.sitemodels.model_file import ModelFileError, read_model
from batreplay.workloads.swf import read_swf
from conftest import WORKLOADS

N = 30_000
SPEED, IO_RATE = 2e9, 5e7


def ks_bound(n: int, max_bins: int = 50, alpha: float = 1e-3) -> float:
    """The bound stated in batreplay.sitemodels.distributions for n values."""
    return 1 / max_bins + math.sqrt(math.log(2 / alpha) / (2 * n))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    log = write_synthetic_log(tmp_path_factory.mktemp("synthetic") / "synthetic.swf", N)
    fitted = fit_site_model(log.path, JobTypeRule.parse("group"),
                            FitOptions(seed=11, node_speed=SPEED, reference_io_rate=IO_RATE, demand_rounds=3))
    return log, fitted


def test_the_split_is_seeded_disjoint_and_covers_every_kept_job(synthetic, tmp_path):
    log, fitted = synthetic
    jobs = read_swf(log.path).jobs
    test_ids = set(fitted.test_jobs["job_id"])
    assert fitted.model.source["calibration_jobs"] == N // 2 and len(test_ids) == N - N // 2
    again = fit_site_model(log.path, JobTypeRule.parse("all"), FitOptions(seed=11))
    assert again.test_jobs.equals(fitted.test_jobs)  # the seed alone decides
    other = fit_site_model(log.path, JobTypeRule.parse("all"), FitOptions(seed=12))
    assert set(other.test_jobs["job_id"]) != test_ids
    third = fit_site_model(log.path, JobTypeRule.parse("all"), FitOptions(seed=11, split=0.8))
    assert len(third.test_jobs) == N - round(0.8 * N)
    # the calibration jobs are exactly those not in the test set: the type counts add up over the kept jobs
    assert sum(t.jobs for t in fitted.model.types) + len(test_ids) == len(jobs)
    model_path, test_path = save_fit(fitted, tmp_path / "m.json")
    assert test_path == held_out_path(model_path) == tmp_path / "m.test-jobs.csv"
    written = pd.read_csv(test_path)
    assert list(written.columns) == ["job_id", "swf_line"] and set(written["job_id"]) == test_ids
    by_line = jobs.set_index("line")["job_id"]
    assert (by_line.loc[written["swf_line"]].to_numpy() == written["job_id"].to_numpy()).all()
    assert read_model(model_path).source["test_jobs_file"] == "m.test-jobs.csv"


def test_type_shares_and_processors_are_recovered(synthetic):
    _, fitted = synthetic
    types = {t.name: t for t in fitted.model.types}
    n = fitted.model.source["calibration_jobs"]
    assert sorted(types) == ["group=1", "group=2", "group=3"]
    for g, share in SHARES.items():
        assert types[f"group={g}"].share == pytest.approx(share, abs=4 * math.sqrt(share * (1 - share) / n))
        slots = types[f"group={g}"].job_slots
        assert slots.kind == "discrete" and set(slots.values) == set(PROCESSORS[g])
        for value, p in zip(slots.values, slots.value_probabilities):
            m = types[f"group={g}"].jobs
            assert p == pytest.approx(PROCESSORS[g][value], abs=4 * math.sqrt(0.25 / m) + 1e-12)
        assert types[f"group={g}"].demand_rounds.values == (3.0,)


@pytest.mark.parametrize("group", [1, 2, 3])
def test_cpu_and_io_demands_are_recovered_in_flop_and_bytes(synthetic, group):
    """CPU demand = CPU seconds x recorded speed (all the run time without a CPU time), I/O demand = the rest x
    reference I/O rate; each within the KS bound of its known lognormal."""
    _, fitted = synthetic
    t = {t.name: t for t in fitted.model.types}[f"group={group}"]
    cpu_share = CPU_SHARE[group] if CPU_SHARE[group] is not None else 1.0
    grid = np.geomspace(1e-2, 1e7, 5000)
    truth = RUN_TIMES[group]
    assert np.max(np.abs(t.cpu_demand.cdf(grid * cpu_share * SPEED) - truth.cdf(grid))) < ks_bound(t.jobs)
    if cpu_share < 1:
        assert np.max(np.abs(t.io_demand.cdf(grid * (1 - cpu_share) * IO_RATE) - truth.cdf(grid))) < ks_bound(t.jobs)
        assert t.cpu_io_correlation == pytest.approx(1.0)
    else:
        assert t.io_demand.values == (0.0,) and t.cpu_io_correlation == 0.0


def test_requested_time_ratios_are_recovered_and_absent_where_the_log_has_none(synthetic):
    _, fitted = synthetic
    types = {t.name: t for t in fitted.model.types}
    grid = np.linspace(1, 6, 2000)
    for g in (1, 2):
        t = types[f"group={g}"]
        assert np.max(np.abs(t.requested_time_ratio.cdf(grid) - RATIO.cdf(grid))) < ks_bound(t.jobs)
    assert types["group=3"].requested_time_ratio is None


def test_arrivals_keep_the_rate_of_each_hour_of_the_week_at_the_whole_sites_scale(synthetic):
    """The synthetic stream: 20 submissions per hour at night, 80 from 08:00 to 18:00 (UTC), Poisson. The model's
    hourly rates are the whole site's (the calibration half's divided by 0.5), and its rescaled gaps exponential of
    mean 1."""
    _, fitted = synthetic
    arrivals = fitted.model.arrivals
    assert arrivals.unix_start_time == MONDAY and arrivals.time_zone == "UTC" and arrivals.rate_scale == 0.5
    per_hour = np.asarray(arrivals.hourly_rates).reshape(7, 24) * 3600
    night, day = per_hour[:, [0, 1, 2, 3, 4, 5, 20, 21, 22, 23]], per_hour[:, 9:17]
    # each hour of the week is seen about 4 times, 10 (night) or 40 (day) calibration submissions each time
    assert night.mean() == pytest.approx(20.0, rel=0.05) and day.mean() == pytest.approx(80.0, rel=0.05)
    assert arrivals.rate_sources == {"week": 168, "day": 0, "pooled": 0}
    gaps = arrivals.gaps
    assert gaps.mean() == pytest.approx(1.0, rel=0.02)
    grid = np.linspace(0, 8, 400)
    assert np.max(np.abs(gaps.cdf(grid) - (1 - np.exp(-grid)))) < ks_bound(gaps.samples)


def test_dropped_and_unselected_jobs_are_counted(tmp_path):
    log = tmp_path / "few.swf"
    rows = ["1 0 -1 100 1 -1 -1 1 200 -1 1 1 1 -1 -1 5 -1 -1", "2 10 -1 0 1 -1 -1 1 200 -1 1 1 1 -1 -1 5 -1 -1",
            "3 20 -1 50 -1 -1 -1 -1 200 -1 1 1 1 -1 -1 5 -1 -1", "4 30 -1 70 2 -1 -1 2 -1 -1 1 1 2 -1 -1 5 -1 -1",
            "5 40 -1 70 2 -1 -1 2 -1 -1 1 1 2 -1 -1 6 -1 -1", "6 50 -1 90 2 -1 -1 2 -1 -1 1 1 2 -1 -1 5 -1 -1"]
    log.write_text("\n".join(rows) + "\n")
    fitted = fit_site_model(log, JobTypeRule.parse("group"), FitOptions(select={"partition": [5]}, split=1.0))
    source = fitted.model.source
    assert source["not_selected"] == 1 and source["dropped"] == {"run_time": 1, "processors": 1,
                                                                 "submission_time": 0}
    assert source["requested_processors_used"] == 0 and source["max_procs"] is None  # (a selection: no MaxProcs)
    assert source["kept"] == 3 and source["calibration_jobs"] == 3 and len(fitted.test_jobs) == 0
    assert "1 not selected; dropped: 1 run time missing or 0 s, 1 no processor count" in fitted.notes[1]
    assert fitted.notes[0].startswith(f"SWF anomalies in {log}")
    assert any("2 of 3 calibration jobs have no requested time" in note for note in fitted.notes)
    assert [t.requested_time_share for t in fitted.model.types] == [1.0, 0.0]
    assert any("no UnixStartTime header" in note for note in fitted.notes)
    with pytest.raises(ValueError, match="no job left to fit"):
        fit_site_model(log, JobTypeRule.parse("all"), FitOptions(select={"partition": [9]}))


@pytest.fixture(scope="module")
def gridka():
    return fit_site_model(WORKLOADS / "LCG.swf.gz", JobTypeRule.parse("group"),
                          FitOptions(select={"partition": [156, 157]}, seed=1, io_share=0.2, demand_rounds=4))


def test_the_gridka_jobs_of_the_lcg_log(gridka):
    """Partitions 156-157 of the LCG log: 4,408 jobs, 4 groups (virtual organisations), one processor each; with an
    I/O share of 0.2 every type's mean CPU + I/O seconds is the mean run time of its calibration jobs, to within what
    drawing uniformly within a histogram's bins moves a mean (1.5 % at most on half of group 1's jobs, whose last
    bins span thousands of seconds; a unit slip, flop for bytes or a wrong rate, would be 10 times off or more)."""
    log = read_swf(WORKLOADS / "LCG.swf.gz")
    jobs = log.jobs[log.jobs["partition_id"].isin([156, 157])]
    source = gridka.model.source
    assert source["kept"] == 4408 and source["calibration_jobs"] == 2204 and source["test_jobs"] == 2204
    assert [t.name for t in gridka.model.types] == ["group=1", "group=2", "group=4", "group=6"]
    calibration = jobs[~jobs["job_id"].isin(gridka.test_jobs["job_id"])]
    for t in gridka.model.types:
        own = calibration[calibration["group_id"] == int(t.name.split("=")[1])]
        assert t.jobs == len(own) and t.job_slots.values == (1.0,)
        alone = t.cpu_demand.mean() / 1e9 + t.io_demand.mean() / 1e8
        assert alone == pytest.approx(own["run_time"].mean(), rel=0.025)
        assert t.cpu_io_correlation == pytest.approx(1.0)


def test_the_model_file_round_trips_and_names_a_wrong_field(gridka, tmp_path):
    path, _ = save_fit(gridka, tmp_path / "gridka.json")
    model = read_model(path)
    assert model.types == gridka.model.types and model.rule == gridka.model.rule
    assert model.arrivals == gridka.model.arrivals and model.reference == gridka.model.reference
    document = json.loads(path.read_text())
    cases = [
        (("version",), 2, "version 2; this batreplay reads version 1"),
        (("types", 1, "share"), 1.5, r"types\[1\].share: expected a number in \(0, 1\]"),
        (("types", 0, "cpu_demand", "edges"), [3, 2, 1], r"types\[0\].cpu_demand.edges: numbers must be strictly"),
        (("reference", "node_speed"), 0, r"reference.node_speed: expected a number > 0"),
        (("arrivals", "time_zone"), "Mars/Olympus", "arrivals.time_zone: unknown time zone 'Mars/Olympus'"),
        (("types", 0, "job_slots", "values"), [0.0], r"types\[0\].job_slots: values must be from 1 to"),
        (("types", 0, "job_slots", "integer"), False, r"types\[0\].job_slots: a count: integer must be true"),
        (("types", 0, "cpu_demand", "values"), [10**400], r"types\[0\].cpu_demand.values: expected a list of finite"),
        (("types", 2, "name"), "group=abc", r"types\[2\].name: job type 'group=abc': the rule 'group' writes no"),
        (("arrivals", "unix_start_time"), float("nan"), "arrivals.unix_start_time: expected a Unix time"),
        (("arrivals", "unix_start_time"), 1e15, "arrivals.unix_start_time: expected a Unix time"),
        (("arrivals", "time_zone"), 5, "arrivals.time_zone: time zone 5: expected an IANA name"),
        (("arrivals", "gaps", "values"), [-1.0], r"arrivals.gaps: gaps must be >= 0"),
        (("arrivals", "hourly_rates"), [0.0] * 168, "arrivals.hourly_rates: expected 168 finite numbers >= 0, not all"),
        (("source", "max_procs"), "abc", "source.max_procs: expected null or an integer >= 1"),
        (("source", "kept"), 0, "source: kept, calibration_jobs and test_jobs: expected whole numbers"),
        (("source", "sha256"), None, r"source.sha256: expected the log's SHA-256"),
        (("types", 0, "requested_time_share"), 0.0, "requested_time_ratio is null exactly when"),
    ]
    for keys, value, message in cases:
        broken = json.loads(json.dumps(document))
        target = broken
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
        path.write_text(json.dumps(broken))
        with pytest.raises(ModelFileError, match=f"^{path}: .*{message}"):
            read_model(path)
    path.write_text('{"format": ')
    with pytest.raises(ModelFileError, match=f"^{path}: line 1, column 12: not JSON"):
        read_model(path)


def test_a_model_file_must_be_json(gridka, tmp_path):
    with pytest.raises(ValueError, match="give a name ending in .json"):
        save_fit(gridka, tmp_path / "model.txt")
    assert list(tmp_path.iterdir()) == []
