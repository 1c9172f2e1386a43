"""Rewards of the scheduling environment: a metric of the episode's ``out_jobs.csv`` rows, at its end or shaped
over its steps.

Built-in rewards (the definitions of :func:`batreplay.analysis.metrics.summarize`, over the jobs that ran):

- ``bounded-slowdown``: minus the mean bounded slowdown, ``max((T_w + T_r) / max(T_r, 10 s), 1)`` (Rauch 2022,
  Sect. IV);
- ``waiting-time``: minus the mean waiting time, in hours (start - submission; Madon et al. 2024, Def. 12);
- ``utilisation``: busy node-seconds over the nodes x [first submission, last finish] (in [0, 1]).

A callable ``reward(rows) -> float`` may be given instead: ``rows`` is the episode's jobs as
:func:`batreplay.formats.out_jobs.read_out_jobs` reads ``out_jobs.csv`` (a pandas DataFrame), and the value is
the reward as it is (higher is better).

Timing: ``end`` (default) gives the reward once, at the step that ends the episode, 0 before. ``step`` shapes it:
the reward of step k is ``phi_k - phi_(k-1)``, with ``phi`` the same metric over the jobs ended so far (0 before
any), and the last step gets the end value minus ``phi`` of the step before, so an episode's rewards add up to the
end reward exactly. Built-in metrics update ``phi`` as jobs end (their own sums, in floats: within rounding of
the end value); a callable is called on the rows of the jobs ended so far at each step, which costs a table per
step.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from batreplay.analysis.metrics import DEFAULT_TAU, summarize

#: Seconds per hour: the waiting-time reward is in hours.
SECONDS_PER_HOUR = 3600.0
#: Built-in rewards: name -> (metric of :func:`summarize`, factor applied to it).
REWARDS: dict[str, tuple[str, float]] = {
    "bounded-slowdown": ("mean_bounded_slowdown", -1.0),
    "waiting-time": ("mean_waiting_time", -1.0 / SECONDS_PER_HOUR),
    "utilisation": ("utilisation", 1.0),
}
#: When the reward is given.
REWARD_TIMINGS: tuple[str, ...] = ("end", "step")


def end_reward(reward: str | Callable[[pd.DataFrame], float], rows: pd.DataFrame, nb_resources: int,
               shared_hosts: bool = False) -> float:
    """The episode's reward from its ``rows`` (out_jobs.csv as read) on ``nb_resources`` nodes (``shared_hosts``:
    several jobs may run on one host, counted once as :func:`summarize` counts them); 0.0 when the metric is
    undefined (NaN: no job ran)."""
    if callable(reward):
        return float(reward(rows))
    metric, factor = REWARDS[reward]
    value = summarize(rows, nb_resources=nb_resources, shared_hosts=shared_hosts)[metric] * factor
    return 0.0 if math.isnan(value) else float(value)


class RunningMetric:
    """``phi`` of a built-in reward over the jobs ended so far, updated as they end (see the module docstring).

    Args:
        reward: a name of :data:`REWARDS`.
        nb_resources: the platform's nodes.
    """

    def __init__(self, reward: str, nb_resources: int) -> None:
        self.metric, self.factor = REWARDS[reward]
        self.nb_resources = nb_resources
        self.count = 0
        self.total = 0.0  # sum of the per-job values, or of busy node-seconds
        self.first_submission = math.inf
        self.last_finish = -math.inf

    def add(self, submission: float, start: float | None, finish: float, nodes: int) -> None:
        """One more ended job (times in s; ``start`` None for a rejected job, which counts for nothing)."""
        if start is None:
            return
        self.count += 1
        self.first_submission = min(self.first_submission, submission)
        self.last_finish = max(self.last_finish, finish)
        run = finish - start
        if self.metric == "mean_bounded_slowdown":
            self.total += max((finish - submission) / max(run, DEFAULT_TAU), 1.0)
        elif self.metric == "mean_waiting_time":
            self.total += start - submission
        else:
            self.total += nodes * run

    @property
    def value(self) -> float:
        """``phi`` now (0 before any job ran)."""
        if self.count == 0:
            return 0.0
        if self.metric == "utilisation":
            span = self.last_finish - self.first_submission
            return self.factor * self.total / (self.nb_resources * span) if span > 0 else 0.0
        return self.factor * self.total / self.count

