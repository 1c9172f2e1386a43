"""Arrivals of a site model: local hours of the week (time zones, daylight saving), rates where the log is short,
and drawn streams that keep each hour's rate, on a real log whose hours are uneven (GridKa in LCG)."""

from __future__ import annotations

import numpy as np
import pytest

from batreplay.sitemodels.arrivals import ArrivalModel, hour_of_week
from batreplay.sitemodels.fit import FitOptions, fit_site_model
from batreplay.sitemodels.job_types import JobTypeRule
from batreplay.workloads.swf import read_swf
from conftest import WORKLOADS

#: 2024-03-31 01:00 UTC: clocks in London go from 01:00 GMT to 02:00 BST (a Sunday).
LONDON_SPRING = 1_711_846_800


def test_local_hours_of_the_week_follow_the_time_zone_and_daylight_saving():
    assert hour_of_week([LONDON_SPRING - 1800], "Europe/London").tolist() == [6 * 24 + 0]  # 00:30 GMT Sunday
    assert hour_of_week([LONDON_SPRING + 1800], "Europe/London").tolist() == [6 * 24 + 2]  # 02:30 BST
    assert hour_of_week([LONDON_SPRING + 1800], "UTC").tolist() == [6 * 24 + 1]
    assert hour_of_week([LONDON_SPRING], "Asia/Kolkata").tolist() == [6 * 24 + 6]  # 06:30, UTC+05:30
    with pytest.raises(ValueError, match="unknown time zone 'Europe/Stokholm'"):
        hour_of_week([0], "Europe/Stokholm")
    with pytest.raises(ValueError, match="outside the calendar"):
        hour_of_week([1e15], "UTC")


def test_a_drawn_stream_crosses_daylight_saving_at_the_local_hours_rates():
    """Submissions only from 09:00 to 10:00 local time, London, over the spring change: drawn submissions stay in
    that local hour, before and after the clocks move."""
    start = LONDON_SPRING - 10 * 86_400
    days = np.arange(20) * 86_400.0
    offsets = np.where(start + days + 8 * 3600 < LONDON_SPRING, 8 * 3600, 7 * 3600)  # time 0 is 01:00 GMT; BST
    times = (days[:, None] + offsets[:, None] + np.linspace(60, 3540, 30)[None, :]).reshape(-1)
    model = ArrivalModel.fit(times, start, "Europe/London")
    drawn = model.submission_times(np.random.default_rng(1), horizon=20 * 86_400.0)
    hours = hour_of_week(start + drawn, "Europe/London") % 24
    assert len(drawn) > 400 and set(hours[1:].tolist()) == {9} and hours[0] == 1  # (time 0: 01:00 local)


def test_a_log_shorter_than_a_week_takes_rates_from_the_hour_of_the_day_then_the_mean():
    inner = np.random.default_rng(2).uniform(0, 2.5 * 86_400 - 1800, 2998)
    times = np.sort(np.concatenate([[0.0, 2.5 * 86_400 - 1800], inner]))  # Monday 00:00 to Wednesday 11:30, UTC
    model = ArrivalModel.fit(times, 1_704_067_200, "UTC")
    assert model.rate_sources == {"week": 60, "day": 108, "pooled": 0}
    rates = np.asarray(model.hourly_rates).reshape(7, 24)
    hours_of_day = (times[1:] // 3600 % 24).astype(int)  # (the first submission opens the span: not counted)
    exposure = np.where(np.arange(24) < 11, 3 * 3600.0, 2 * 3600.0)
    exposure[11] += 1800  # Wednesday 11:00-11:30
    by_hand = np.bincount(hours_of_day, minlength=24) / exposure
    assert np.allclose(rates[3:], by_hand, rtol=1e-12)  # Thursday to Sunday: each hour of the day's rate
    assert rates.mean() * 86_400 == pytest.approx(1200, rel=0.05)  # 3,000 jobs in 2.5 days


def test_a_drawn_gridka_workload_keeps_the_logs_count_and_each_hours_rate():
    """The GridKa jobs of LCG (partitions 156-157) submit unevenly: 4,408 jobs over 9.56 days, each hour of the week
    seen once or twice. Each hour's rate is its submissions over the time the log spent in it, so over the log's
    own span a drawn stream has the log's count; over a drawn month, each busy hour keeps its rate."""
    fitted = fit_site_model(WORKLOADS / "LCG.swf.gz", JobTypeRule.parse("group"),
                            FitOptions(select={"partition": [156, 157]}, seed=1))
    arrivals = fitted.model.arrivals
    log = read_swf(WORKLOADS / "LCG.swf.gz").jobs
    recorded = log[log["partition_id"].isin([156, 157])]["submission_time"]
    calibration = recorded[~log.loc[recorded.index, "job_id"].isin(fitted.test_jobs["job_id"])]
    first, last = calibration.min(), calibration.max()
    counts = [np.count_nonzero((d >= first) & (d <= last))
              for d in (arrivals.submission_times(np.random.default_rng(seed), horizon=last + 1) for seed in range(5))]
    assert np.mean(counts) == pytest.approx(len(recorded), rel=0.05)  # the whole site's: twice the calibration half
    drawn = arrivals.submission_times(np.random.default_rng(3), horizon=28 * 86_400.0)
    hours = hour_of_week(arrivals.unix_start_time + drawn, arrivals.time_zone)
    expected = np.asarray(arrivals.hourly_rates) * 4 * 3600  # 4 weeks of each hour
    busy = expected > 150
    assert busy.sum() >= 15 and (np.abs(np.bincount(hours, minlength=168)[busy] / expected[busy] - 1) < 0.35).all()


def test_a_first_submission_just_before_an_hour_does_not_give_that_hour_a_huge_rate():
    """The span opens at the first submission, 1 s before 01:00 on a Monday: that hour is seen for 1 s. Counting
    the first submission in it would give it 3,600 submissions per hour; it is not counted."""
    times = np.sort(np.concatenate([[3599.0], np.random.default_rng(4).uniform(3600, 3 * 86_400, 2000)]))
    model = ArrivalModel.fit(times, 1_704_067_200, "UTC")
    assert model.hourly_rates[0] == 0.0
    per_day = 2000 / ((times[-1] - times[0]) / 86_400)
    assert np.mean(np.asarray(model.hourly_rates).reshape(7, 24)[:3]) * 86_400 == pytest.approx(per_day, rel=0.1)
