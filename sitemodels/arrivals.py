"""The arrival process of a site model: inter-arrival times by hour of the day and day of the week.

Job submissions follow the working week (Caspart et al. 2019, Sect. 5, and Feitelson's "Workload Modeling", ch. 8:
daily and weekly cycles). The model keeps, for each of the 168 hours of the week (local time of the log, from its
``UnixStartTime`` and ``TimeZoneString`` headers), the empirical distribution of the times from a submission made in
that hour to the next submission. An hour of the week with fewer than ``min_gaps`` such times uses the times of that
hour of the day over the whole week; an hour of the day with fewer still uses all times. The model says how many
hours of the week each source serves (:attr:`ArrivalModel.sources`), and ``batreplay model fit`` prints it.

Calibration on a share ``f`` of the jobs (a random split) sees a thinned stream: its gaps are about ``1 / f`` times
the site's. The fitted gaps are multiplied by ``f`` (``rate_scale`` of the model file) so that the model describes the
whole site's arrivals (exact for a Poisson stream, whose random thinning is Poisson of rate ``f x lambda``).

Drawing (:meth:`ArrivalModel.submission_times`): from time 0 (the log's start, or ``start`` given), each next
submission comes a gap drawn from the distribution of the hour of the week the previous one fell in. Times are in
seconds. This module imports numpy and pandas (time zones).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from batreplay.sitemodels.choices import DEFAULT_MAX_BINS, DEFAULT_MIN_GAPS
from batreplay.sitemodels.distributions import DistributionError, EmpiricalDistribution

HOURS_PER_WEEK = 168
#: Most submissions drawn at once (a horizon of years at a busy site's rate stays below it).
MAX_JOBS = 10_000_000
#: Resolution of the calendar table used when drawing: every time zone's offset is a multiple of 15 min.
_SLOT = 900.0


def hour_of_week(unix_seconds: Any, time_zone: str) -> np.ndarray:
    """Hour of the week (0 = Monday 00:00-01:00 ... 167 = Sunday 23:00-24:00), local time in ``time_zone`` (an IANA
    name such as ``Europe/London``, or ``UTC``), of each Unix time (seconds), shape as ``unix_seconds`` flattened.

    Raises:
        ValueError: an unknown time zone.
    """
    seconds = np.asarray(unix_seconds, dtype=np.float64).reshape(-1)
    try:
        local = pd.to_datetime(seconds, unit="s", utc=True).tz_convert(time_zone)
    except Exception as err:  # pytz/zoneinfo raise their own classes for an unknown zone
        raise ValueError(f"time zone {time_zone!r}: {err}") from None
    return np.asarray(local.day_of_week * 24 + local.hour, dtype=np.int64)


@dataclass(frozen=True)
class ArrivalModel:
    """Inter-arrival times (s) per hour of the week (module docstring).

    Attributes:
        unix_start_time: Unix time of simulated time 0 (the log's ``UnixStartTime``).
        time_zone: IANA time zone of the site's local time.
        rate_scale: the factor the fitted gaps were multiplied by (the calibration share of the jobs).
        min_gaps: least number of gaps of an hour to have its own distribution.
        week: hour of the week -> its distribution (only the hours with ``min_gaps`` or more).
        day: hour of the day -> its distribution (same rule).
        pooled: the distribution of all gaps.
    """

    unix_start_time: float
    time_zone: str
    rate_scale: float
    min_gaps: int
    week: dict[int, EmpiricalDistribution]
    day: dict[int, EmpiricalDistribution]
    pooled: EmpiricalDistribution

    @classmethod
    def fit(cls, submission_times: Any, unix_start_time: float, time_zone: str, *, rate_scale: float = 1.0,
            min_gaps: int = DEFAULT_MIN_GAPS, max_bins: int = DEFAULT_MAX_BINS) -> ArrivalModel:
        """Fit on submission times (s from ``unix_start_time``, shape ``(n,)``, n >= 2; sorted here).

        Raises:
            ValueError: fewer than two submissions, or ``rate_scale`` not in (0, 1].
        """
        times = np.sort(np.asarray(submission_times, dtype=np.float64))
        if times.size < 2 or not 0 < rate_scale <= 1:
            raise ValueError(f"arrivals: need two submissions or more and 0 < rate_scale <= 1 (got {times.size}, "
                             f"{rate_scale})")
        gaps = np.diff(times) * rate_scale
        if not gaps.any():
            raise ValueError(f"arrivals: all {times.size} submissions are at the same time: no arrival process to fit")
        hours = hour_of_week(unix_start_time + times[:-1], time_zone)
        week = _grouped(gaps, hours, min_gaps, max_bins)
        day = _grouped(gaps, hours % 24, min_gaps, max_bins)
        pooled = EmpiricalDistribution.fit(gaps, max_bins=max_bins)
        return cls(float(unix_start_time), time_zone, rate_scale, min_gaps, week, day, pooled)

    def sources(self) -> dict[str, int]:
        """How many hours of the week draw from their own gaps (``week``), their hour of the day's (``day``), or
        all gaps (``pooled``)."""
        counts = {"week": 0, "day": 0, "pooled": 0}
        for hour in range(HOURS_PER_WEEK):
            counts["week" if hour in self.week else "day" if hour % 24 in self.day else "pooled"] += 1
        return counts

    def _distribution(self, hour: int) -> EmpiricalDistribution:
        return self.week.get(hour) or self.day.get(hour % 24) or self.pooled

    def submission_times(self, rng: np.random.Generator, *, jobs: int | None = None, horizon: float | None = None,
                         rate_scale: float = 1.0) -> np.ndarray:
        """Submission times (s, increasing, the first at 0): ``jobs`` of them, or all those before ``horizon``
        seconds (exactly one of the two), each gap drawn divided by ``rate_scale`` (2: twice the arrival rate)."""
        if (jobs is None) == (horizon is None):
            raise ValueError("arrivals: give a number of jobs or a horizon, not both")
        calendar = _Calendar(self.unix_start_time, self.time_zone)
        times = [0.0]
        while (jobs is None or len(times) < jobs) and (horizon is None or times[-1] < horizon):
            if len(times) >= MAX_JOBS:
                raise ValueError(f"arrivals: more than {MAX_JOBS:,} submissions: give fewer jobs or a shorter time")
            now = times[-1]
            gap = float(self._distribution(calendar.hour(now)).quantile(rng.random()))
            times.append(now + gap / rate_scale)
        if horizon is not None and times[-1] >= horizon:
            times.pop()
        return np.asarray(times)

    def to_json(self) -> dict:
        """The ``arrivals`` object of the model file (``docs/site-models.md``)."""
        return {"unix_start_time": self.unix_start_time, "time_zone": self.time_zone, "rate_scale": self.rate_scale,
                "min_gaps": self.min_gaps, "pooled": self.pooled.to_json(),
                "hour_of_week": {str(h): d.to_json() for h, d in sorted(self.week.items())},
                "hour_of_day": {str(h): d.to_json() for h, d in sorted(self.day.items())}}

    @classmethod
    def from_json(cls, document: Any, where: str) -> ArrivalModel:
        """The arrival model of a model file's ``arrivals`` object; errors name ``where`` and the field.

        Raises:
            DistributionError: a missing or wrong field.
        """
        keys = {"unix_start_time", "time_zone", "rate_scale", "min_gaps", "pooled", "hour_of_week", "hour_of_day"}
        if not isinstance(document, dict) or set(document) != keys:
            raise DistributionError(f"{where}: expected an object with keys {sorted(keys)}")
        if type(document["unix_start_time"]) not in (int, float):
            raise DistributionError(f"{where}.unix_start_time: expected a number of seconds")
        scale, min_gaps = document["rate_scale"], document["min_gaps"]
        if type(scale) not in (int, float) or not 0 < scale <= 1:
            raise DistributionError(f"{where}.rate_scale: expected a number in (0, 1], got {scale!r}")
        if type(min_gaps) is not int or min_gaps < 1:
            raise DistributionError(f"{where}.min_gaps: expected an integer >= 1, got {min_gaps!r}")
        zone = document["time_zone"]
        try:
            hour_of_week(0, zone)
        except (ValueError, TypeError):
            raise DistributionError(f"{where}.time_zone: unknown time zone {zone!r}") from None
        week = _hour_table(document["hour_of_week"], f"{where}.hour_of_week", HOURS_PER_WEEK)
        day = _hour_table(document["hour_of_day"], f"{where}.hour_of_day", 24)
        pooled = EmpiricalDistribution.from_json(document["pooled"], f"{where}.pooled")
        return cls(float(document["unix_start_time"]), zone, float(scale), min_gaps, week, day, pooled)


def _grouped(gaps: np.ndarray, groups: np.ndarray, min_gaps: int, max_bins: int) -> dict[int, EmpiricalDistribution]:
    table = {}
    for group in np.unique(groups).tolist():
        members = gaps[groups == group]
        if members.size >= min_gaps:
            table[int(group)] = EmpiricalDistribution.fit(members, max_bins=max_bins)
    return table


def _hour_table(document: Any, where: str, hours: int) -> dict[int, EmpiricalDistribution]:
    if not isinstance(document, dict):
        raise DistributionError(f"{where}: expected an object of hours")
    table = {}
    for key, value in document.items():
        if not key.isdigit() or not 0 <= int(key) < hours:
            raise DistributionError(f"{where}: key {key!r} is not an hour from 0 to {hours - 1}")
        table[int(key)] = EmpiricalDistribution.from_json(value, f"{where}.{key}")
    return table


class _Calendar:
    """Hour of the week of simulated times, looked up in a table of the 15-minute slots since the Unix epoch (local
    hours begin on such a slot in every time zone), computed a week at a time."""

    def __init__(self, unix_start_time: float, time_zone: str) -> None:
        self.start, self.zone = unix_start_time, time_zone
        self.first_slot = int(unix_start_time // _SLOT)
        self.table = np.empty(0, dtype=np.int64)

    def hour(self, now: float) -> int:
        slot = int((self.start + now) // _SLOT) - self.first_slot
        while slot >= self.table.size:
            first = self.first_slot + self.table.size
            more = hour_of_week(_SLOT * np.arange(first, first + 672, dtype=np.float64), self.zone)
            self.table = np.concatenate([self.table, more])
        return int(self.table[slot])
