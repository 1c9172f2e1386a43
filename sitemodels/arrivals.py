"""The arrival process of a site model: a submission rate per hour of the week, and gaps in rescaled time.

Job submissions follow the working day and week (Feitelson, "Workload Modeling", ch. 8: daily and weekly cycles;
Caspart et al. 2019 fit arrivals per hour of the day and day of the week). The model keeps two things:

- the *rate* of each of the 168 hours of the week (local time of the log, from its ``UnixStartTime`` and
  ``TimeZoneString`` headers): the submissions made in that hour of the week divided by the time the log spends in
  it, from its first to its last submission (the first one, which opens that span, is not counted). An hour of the week the log never spends time in (a log shorter than
  a week) takes the rate of its hour of the day, and an hour of the day never seen takes the log's mean rate;
  :meth:`ArrivalModel.sources` counts the hours each way, and ``batreplay model fit`` prints them;
- the distribution of the gaps between successive submissions in *rescaled time*, ``Λ(t) = ∫ λ(s) ds`` (the
  time-rescaling theorem of point processes, Brown et al. 2002): a Poisson stream of rate ``λ(t)`` has gaps of mean 1
  there, exponentially distributed; a bursty one has more short and long gaps, which the distribution keeps.

Drawing (:meth:`ArrivalModel.submission_times`): from time 0 (the log's ``UnixStartTime``), each next submission
comes a rescaled gap drawn from the distribution later, ``Λ`` advancing at the rate of each hour of the week it
goes through (hours of rate 0 are skipped). The expected number of submissions in an hour of the week is its rate,
whatever the gaps; the gaps set how they bunch.

Calibration on a random share ``f`` of the jobs sees a thinned stream of rate ``f λ``. Its rates are divided by
``f`` (``rate_scale`` of the model file keeps ``f``), so the model describes the whole site's arrivals; the rescaled
gaps need no change (exact for a Poisson stream, whose random thinning is Poisson).

Local hours are counted on 15-minute slots since the Unix epoch, on which every time zone's offset has fallen since
1972. Times are in seconds, rates in submissions per second. This module imports numpy and pandas (time zones).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from batreplay.sitemodels.choices import DEFAULT_MAX_BINS
from batreplay.sitemodels.distributions import DistributionError, EmpiricalDistribution, finite_number

HOURS_PER_WEEK = 168
#: Most submissions drawn at once.
MAX_JOBS = 10_000_000
#: Resolution of the calendar (s): every time zone's offset since 1972 is a multiple of 15 min.
SLOT = 900.0
#: Unix times pandas can place in a calendar (its nanosecond timestamps reach the year 2262).
UNIX_TIME_RANGE = (-9.2e9, 9.2e9)


def hour_of_week(unix_seconds: Any, time_zone: str) -> np.ndarray:
    """Hour of the week (0 = Monday 00:00-01:00 ... 167 = Sunday 23:00-24:00), local time in ``time_zone`` (an IANA
    name such as ``Europe/London``, or ``UTC``), of each Unix time (seconds), shape as ``unix_seconds`` flattened.

    Raises:
        ValueError: an unknown time zone (named), or times outside :data:`UNIX_TIME_RANGE`.
    """
    seconds = np.asarray(unix_seconds, dtype=np.float64).reshape(-1)
    if seconds.size and not (UNIX_TIME_RANGE[0] <= seconds.min() and seconds.max() <= UNIX_TIME_RANGE[1]):
        raise ValueError(f"Unix times from {seconds.min():g} to {seconds.max():g} s: outside the calendar "
                         f"({UNIX_TIME_RANGE[0]:g} to {UNIX_TIME_RANGE[1]:g} s)")
    if not isinstance(time_zone, str):
        raise ValueError(f"time zone {time_zone!r}: expected an IANA name such as Europe/London")
    try:
        local = pd.to_datetime(seconds, unit="s", utc=True).tz_convert(time_zone)
    except Exception as err:  # zoneinfo and pytz raise classes of their own for an unknown zone
        raise ValueError(f"unknown time zone {time_zone!r} ({type(err).__name__})") from None
    return np.asarray(local.day_of_week * 24 + local.hour, dtype=np.int64)


@dataclass(frozen=True)
class ArrivalModel:
    """Submission rates per hour of the week and rescaled gaps (module docstring).

    Attributes:
        unix_start_time: Unix time of simulated time 0 (the log's ``UnixStartTime``).
        time_zone: IANA time zone of the site's local time.
        rate_scale: the calibration share ``f`` the fitted rates were divided by.
        hourly_rates: the whole site's submissions per second in each hour of the week, shape ``(168,)``.
        rate_sources: how many hours of the week got their rate from their own time (``week``), their hour of the
            day (``day``) or the log's mean rate (``pooled``).
        gaps: the distribution of gaps between submissions in rescaled time (dimensionless, mean about 1).
    """

    unix_start_time: float
    time_zone: str
    rate_scale: float
    hourly_rates: tuple[float, ...]
    rate_sources: dict[str, int]
    gaps: EmpiricalDistribution

    @classmethod
    def fit(cls, submission_times: Any, unix_start_time: float, time_zone: str, *, rate_scale: float = 1.0,
            max_bins: int = DEFAULT_MAX_BINS) -> ArrivalModel:
        """Fit on submission times (s from ``unix_start_time``, shape ``(n,)``; sorted here).

        Raises:
            ValueError: fewer than two distinct submission times, ``rate_scale`` not in (0, 1], an unknown time
                zone or times outside the calendar.
        """
        times = np.sort(np.asarray(submission_times, dtype=np.float64))
        if not 0 < rate_scale <= 1:
            raise ValueError(f"arrivals: rate_scale must be in (0, 1], got {rate_scale}")
        if times.size < 2 or times[-1] == times[0]:
            raise ValueError(f"arrivals: the {times.size} submissions need two distinct times to have a rate")
        calendar = _Calendar(unix_start_time, time_zone)
        # the submissions after the first over the time from the first to the last: the first one opens the span
        # (counting it would give its hour, seen for a moment only, a rate without bound)
        hours = calendar.hours_of(unix_start_time + times[1:])
        exposure = calendar.exposure(times[0], times[-1])  # seconds spent in each hour of the week
        rates, sources = _rates(np.bincount(hours, minlength=HOURS_PER_WEEK), exposure)
        rescaled = calendar.rescaled(times, rates)
        gaps = EmpiricalDistribution.fit(np.diff(rescaled), max_bins=max_bins)
        return cls(float(unix_start_time), time_zone, rate_scale, tuple((rates / rate_scale).tolist()), sources, gaps)

    def sources(self) -> dict[str, int]:
        """How many hours of the week take their rate from their own time, their hour of the day's, the mean."""
        return dict(self.rate_sources)

    def mean_rate(self) -> float:
        """Submissions per second over a whole week."""
        return float(np.mean(self.hourly_rates))

    def submission_times(self, rng: np.random.Generator, *, jobs: int | None = None, horizon: float | None = None,
                         rate_scale: float = 1.0) -> np.ndarray:
        """Submission times (s, increasing, the first at 0): ``jobs`` of them, or all those before ``horizon``
        seconds (exactly one of the two), at ``rate_scale`` times the model's rates (2: twice as many).

        Raises:
            ValueError: both or neither of ``jobs`` and ``horizon``, or more than :data:`MAX_JOBS` submissions.
        """
        if (jobs is None) == (horizon is None):
            raise ValueError("arrivals: give a number of jobs or a horizon, not both")
        expected = jobs if jobs is not None else self.mean_rate() * rate_scale * horizon
        if expected > MAX_JOBS:
            raise ValueError(f"arrivals: about {expected:,.0f} submissions, more than {MAX_JOBS:,}: give fewer jobs or "
                             "a shorter time")
        calendar = _Calendar(self.unix_start_time, self.time_zone)
        rates = np.asarray(self.hourly_rates) * rate_scale
        count = jobs if jobs is not None else int(expected * 1.5 + 100)
        times = [0.0]
        while True:
            gaps = self.gaps.sample(rng, count)
            times.extend(calendar.advance(times[-1], gaps, rates))
            if jobs is not None and len(times) >= jobs:
                return np.asarray(times[:jobs])
            if horizon is not None and times[-1] >= horizon:
                array = np.asarray(times)
                return array[array < horizon]
            count = max(count // 2, 100)

    def to_json(self) -> dict:
        """The ``arrivals`` object of the model file (``docs/site-models.md``)."""
        return {"unix_start_time": self.unix_start_time, "time_zone": self.time_zone, "rate_scale": self.rate_scale,
                "hourly_rates": list(self.hourly_rates), "rate_sources": dict(self.rate_sources),
                "gaps": self.gaps.to_json()}

    @classmethod
    def from_json(cls, document: Any, where: str) -> ArrivalModel:
        """The arrival model of a model file's ``arrivals`` object; errors name ``where`` and the field.

        Raises:
            DistributionError: a missing or wrong field.
        """
        keys = {"unix_start_time", "time_zone", "rate_scale", "hourly_rates", "rate_sources", "gaps"}
        if not isinstance(document, dict) or set(document) != keys:
            raise DistributionError(f"{where}: expected an object with keys {sorted(keys)}")
        start, scale, zone = document["unix_start_time"], document["rate_scale"], document["time_zone"]
        if not finite_number(start) or not UNIX_TIME_RANGE[0] <= start <= UNIX_TIME_RANGE[1]:
            raise DistributionError(f"{where}.unix_start_time: expected a Unix time in seconds, from "
                                    f"{UNIX_TIME_RANGE[0]:g} to {UNIX_TIME_RANGE[1]:g}")
        if not finite_number(scale) or not 0 < scale <= 1:
            raise DistributionError(f"{where}.rate_scale: expected a number in (0, 1], got {scale!r}")
        try:
            hour_of_week(start, zone)
        except ValueError as err:
            raise DistributionError(f"{where}.time_zone: {err}") from None
        rates = document["hourly_rates"]
        if (not isinstance(rates, list) or len(rates) != HOURS_PER_WEEK
                or not all(finite_number(r) and r >= 0 for r in rates) or not any(rates)):
            raise DistributionError(f"{where}.hourly_rates: expected 168 finite numbers >= 0, not all 0")
        sources = document["rate_sources"]
        if (not isinstance(sources, dict) or set(sources) != {"week", "day", "pooled"}
                or not all(type(v) is int and v >= 0 for v in sources.values())):
            raise DistributionError(f"{where}.rate_sources: expected the counts week, day and pooled")
        gaps = EmpiricalDistribution.from_json(document["gaps"], f"{where}.gaps")
        if gaps.support()[0] < 0 or gaps.mean() <= 0:
            raise DistributionError(f"{where}.gaps: gaps must be >= 0, and their mean > 0")
        return cls(float(start), zone, float(scale), tuple(float(r) for r in rates), dict(sources), gaps)


def _rates(counts: np.ndarray, exposure: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """Submissions per second of each hour of the week (module docstring), and the count of each source."""
    mean = counts.sum() / exposure.sum()
    day_counts = counts.reshape(7, 24).sum(axis=0)
    day_exposure = exposure.reshape(7, 24).sum(axis=0)
    day_rates = np.divide(day_counts, day_exposure, out=np.full(24, mean), where=day_exposure > 0)
    own = exposure > 0
    rates = np.where(own, np.divide(counts, exposure, out=np.zeros(HOURS_PER_WEEK), where=own),
                     np.tile(day_rates, 7))
    by_day = ~own & np.tile(day_exposure > 0, 7)
    return rates, {"week": int(own.sum()), "day": int(by_day.sum()), "pooled": int((~own & ~by_day).sum())}


class _Calendar:
    """Hours of the week of times, on 15-minute slots since the Unix epoch (:data:`SLOT`), computed a week at a
    time for the slots from the model's start on."""

    def __init__(self, unix_start_time: float, time_zone: str) -> None:
        self.start, self.zone = float(unix_start_time), time_zone
        self.first_slot = math.floor(self.start / SLOT)
        self.table = np.empty(0, dtype=np.int64)

    def hours_of(self, unix_seconds: np.ndarray) -> np.ndarray:
        return hour_of_week(unix_seconds, self.zone)

    def _hours(self, last_slot: int) -> np.ndarray:
        """The table of hours of the week of the slots from the model's start to ``last_slot`` at least."""
        while self.table.size <= last_slot:
            first = self.first_slot + self.table.size
            more = hour_of_week(SLOT * np.arange(first, first + 672, dtype=np.float64), self.zone)
            self.table = np.concatenate([self.table, more])
        return self.table

    def _slot(self, t: float) -> int:
        return math.floor((self.start + t) / SLOT) - self.first_slot

    def exposure(self, t0: float, t1: float) -> np.ndarray:
        """Seconds of [t0, t1] (simulated time, ``t0 >= 0``) in each hour of the week, shape ``(168,)``."""
        first, last = self._slot(t0), self._slot(t1)
        hours = self._hours(last)[first:last + 1]
        seconds = np.full(hours.size, SLOT)
        slot_start = (self.first_slot + np.arange(first, last + 1)) * SLOT - self.start
        seconds[0] -= t0 - slot_start[0]
        seconds[-1] -= slot_start[-1] + SLOT - t1
        return np.bincount(hours, weights=seconds, minlength=HOURS_PER_WEEK)

    def rescaled(self, times: np.ndarray, rates: np.ndarray) -> np.ndarray:
        """``Λ`` at each time (sorted, >= 0): the integral from time 0 of the hour-of-week ``rates``."""
        last = self._slot(times[-1])
        slot_rates = rates[self._hours(last)[: last + 1]]
        ends = (self.first_slot + np.arange(1, last + 2)) * SLOT - self.start
        starts = np.concatenate([[0.0], ends[:-1]])  # (time 0 may fall inside the first slot)
        before = np.concatenate([[0.0], np.cumsum(slot_rates * (ends - starts))[:-1]])  # Λ at each slot's start
        slots = np.floor((self.start + times) / SLOT).astype(np.int64) - self.first_slot
        return before[slots] + slot_rates[slots] * (times - starts[slots])

    def advance(self, now: float, gaps: np.ndarray, rates: np.ndarray) -> list[float]:
        """The times reached from ``now`` after each rescaled gap in turn, at the hour-of-week ``rates``."""
        out = []
        slot = self._slot(now)
        for gap in gaps.tolist():
            while True:
                rate = rates[self._hours(slot)[slot]]
                slot_end = (self.first_slot + slot + 1) * SLOT - self.start
                room = rate * (slot_end - now)
                if rate > 0 and gap <= room:
                    now += gap / rate
                    break
                gap -= room
                now, slot = slot_end, slot + 1
            out.append(now)
        return out
