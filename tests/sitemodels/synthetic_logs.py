"""SWF logs drawn from known distributions, to check that fitting a site model recovers them.

Three groups (SWF field 13) of known shares; in each, a lognormal run time, a known pmf of processors, and:

- group 1: CPU time = run time (no I/O), requested time = run time x (1 + Exp(mean 0.5));
- group 2: CPU time = 0.75 x run time (I/O a quarter of it, rank correlation 1), requested time likewise;
- group 3: no CPU time (-1: all computing), no requested time (-1).

Submissions: a Poisson stream whose rate is 4 times higher from 08:00 to 18:00 (UTC, the log's time zone) than at
night, from a Monday 00:00 UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

#: A Monday, 00:00 UTC (2024-01-01).
MONDAY = 1_704_067_200
SHARES = {1: 0.5, 2: 0.3, 3: 0.2}
RUN_TIMES = {1: stats.lognorm(s=1.2, scale=3600.0), 2: stats.lognorm(s=0.8, scale=600.0),
             3: stats.lognorm(s=1.0, scale=20_000.0)}
PROCESSORS = {1: {1: 0.6, 2: 0.3, 8: 0.1}, 2: {1: 1.0}, 3: {4: 0.5, 16: 0.5}}
CPU_SHARE = {1: 1.0, 2: 0.75, 3: None}
RATIO = stats.expon(loc=1.0, scale=0.5)
#: Submissions per hour at night; 4 times this from 08:00 to 18:00.
NIGHT_RATE = 20.0
DAY_SHARE_OF_SUBMISSIONS = 10 * 4 / (10 * 4 + 14 * 1)


@dataclass(frozen=True)
class SyntheticLog:
    path: Path
    n_jobs: int


def _submissions(rng: np.random.Generator, n: int) -> np.ndarray:
    """n submission times (s) of the day/night Poisson stream (thinning of a rate 4 x NIGHT_RATE stream)."""
    times, now = [], 0.0
    peak = 4 * NIGHT_RATE / 3600.0
    while len(times) < n:
        now += rng.exponential(1 / peak)
        hour = (now // 3600) % 24
        if 8 <= hour < 18 or rng.random() < 0.25:
            times.append(now)
    return np.asarray(times)


def write_synthetic_log(path: Path, n: int, seed: int = 7) -> SyntheticLog:
    """Write the log (module docstring) of ``n`` jobs at ``path``."""
    rng = np.random.default_rng(seed)
    groups = rng.choice(list(SHARES), size=n, p=list(SHARES.values()))
    run = np.empty(n)
    procs = np.empty(n, dtype=np.int64)
    cpu, requested = np.full(n, -1.0), np.full(n, -1.0)
    for g in SHARES:
        rows = np.flatnonzero(groups == g)
        run[rows] = RUN_TIMES[g].rvs(rows.size, random_state=rng)
        values, p = zip(*PROCESSORS[g].items())
        procs[rows] = rng.choice(values, size=rows.size, p=p)
        if CPU_SHARE[g] is not None:
            cpu[rows] = CPU_SHARE[g] * run[rows]
            requested[rows] = run[rows] * RATIO.rvs(rows.size, random_state=rng)
    columns = [np.arange(1, n + 1), _submissions(rng, n), np.full(n, -1), run, procs, cpu, np.full(n, -1), procs,
               requested, np.full(n, -1), np.ones(n), np.full(n, 1), groups, *[np.full(n, -1)] * 5]
    header = f"; UnixStartTime: {MONDAY}\n; TimeZoneString: UTC\n; MaxProcs: 64\n"
    lines = [" ".join(repr(float(v)) if isinstance(v, float) else str(v) for v in row)
             for row in zip(*[c.tolist() for c in columns])]
    path.write_text(header + "\n".join(lines) + "\n")
    return SyntheticLog(path, n)
