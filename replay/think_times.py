"""Think times other than the recorded ones: drawn from the log's distribution, or a linear function of the response
time of the job before.

A *think time* is the time from the end of a batch (or session) to the first submission of one that depends on it
(Madon, Da Costa, Pierson 2024, Definition 6), s. Two models of :mod:`batreplay.replay.batch_replay` replace the
recorded ones:

- ``distribution`` (Zakay and Feitelson 2015, distribution-based; :func:`drawn_think_times`): each batch's think
  time (from the end of its last predecessor) is drawn, independently and with a seed, from the think times of the
  log: those of the user when the user has at least :data:`MIN_USER_THINK_TIMES` of them, else those of all users
  together. The draws keep the distribution of think times and lose which think time followed which batch.
- ``schlagkamp`` (Schlagkamp 2017, as Madon et al. 2024 section 2 describe it: "think times ... calculated as a
  linear function of the response time of the previously terminated job"; :class:`ResponseTimeFit`): inside a
  session, the think time after a batch is ``intercept + slope * R``, ``R`` the response time (wait + run, s) of
  the batch's job that ended last, fitted by least squares on the log's pairs (R, think time) of consecutive
  batches of one session; never below 0.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from batreplay.replay.protocol import ReplayError
from batreplay.replay.session_graph import SessionGraphs, UserSessionGraph

#: Fewest think times a user needs for draws from their own; users with fewer draw from all users' think times.
MIN_USER_THINK_TIMES = 20


@dataclass(frozen=True)
class DrawnThinkTimes:
    """Session graphs whose think times were drawn (:func:`drawn_think_times`).

    Attributes:
        graphs: the graphs, dependencies unchanged, think times drawn (root starts unchanged).
        own_users: users who drew from their own think times.
        shared_users: users with at least one dependent batch who drew from all users' think times.
        pool_size: the number of think times of all users together (one per dependent batch).
    """

    graphs: SessionGraphs
    own_users: int
    shared_users: int
    pool_size: int


def batch_think_times(graph: UserSessionGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each dependent batch's own think time and each dependency's share of it, for one user's graph.

    A batch with several predecessors has one think time per incoming dependency (Definition 6); they differ by
    how much earlier than the last one each predecessor ended. The batch's think time is the smallest, the time
    from the end of its last predecessor to its first submission.

    Returns:
        ``(think, target, extra)``: float ``(b,)``, the think time of each dependent batch in increasing batch id
        (s); int ``(e,)``, the position in ``think`` of each dependency's target; float ``(e,)``, the dependency's
        recorded think time minus its target's (s, >= 0).
    """
    targets, target = np.unique(graph.dependency_target, return_inverse=True)
    think = np.full(len(targets), np.inf)
    np.minimum.at(think, target, graph.dependency_think_time)
    return think, target, graph.dependency_think_time - think[target]


def drawn_think_times(graphs: SessionGraphs, seed: int, *,
                      min_user: int = MIN_USER_THINK_TIMES) -> DrawnThinkTimes:
    """``graphs`` with every dependent batch's think time drawn from the log's think times (see the module).

    A batch's think time is the time from the end of its last predecessor to its first submission
    (:func:`batch_think_times`); one value is drawn per batch, and each incoming dependency keeps its recorded
    offset from it, so that the batch starts its drawn think time after its predecessors' last end when they end
    as recorded. Draws are made user by user in increasing user id, batches in increasing batch id, with
    ``numpy.random.default_rng(seed)``: one seed gives one set of think times.
    """
    per_user = {user: batch_think_times(graph) for user, graph in graphs.items()}
    pool = np.concatenate([think for think, _target, _extra in per_user.values()] or [np.zeros(0)])
    rng = np.random.default_rng(seed)
    drawn, own, shared = {}, 0, 0
    for user, graph in graphs.items():
        think, target, extra = per_user[user]
        if len(think) == 0:
            drawn[user] = graph
            continue
        source = think if len(think) >= min_user else pool
        own, shared = (own + 1, shared) if source is think else (own, shared + 1)
        draws = rng.choice(source, size=len(think))
        drawn[user] = dataclasses.replace(graph, dependency_think_time=draws[target] + extra)
    return DrawnThinkTimes(dataclasses.replace(graphs, graphs=drawn), own, shared, len(pool))


@dataclass(frozen=True)
class ResponseTimeFit:
    """Think time as a linear function of the response time of the job before (Schlagkamp 2017).

    Attributes:
        intercept: s. slope: think time (s) per second of response time. r_value: correlation of the fit's pairs.
        nb_pairs: the pairs (response time, think time) fitted on.
    """

    intercept: float
    slope: float
    r_value: float
    nb_pairs: int

    def think_time(self, response_time: float) -> float:
        """``max(0, intercept + slope * response_time)`` (s) for a response time in s."""
        return max(0.0, self.intercept + self.slope * response_time)


def fit_response_time(response_times: np.ndarray, think_times: np.ndarray) -> ResponseTimeFit:
    """Least-squares fit of think time on response time (``scipy.stats.linregress``); arrays ``(n,)``, s.

    Raises:
        ReplayError: fewer than 2 pairs, or every response time equal (no slope can be fitted).
    """
    if len(response_times) < 2 or np.ptp(response_times) == 0:
        raise ReplayError(f"the log has {len(response_times)} pairs of batches inside a session with distinct response "
                          "times; a think time as a function of response time cannot be fitted (try a longer log or "
                          "a longer session threshold)")
    result = stats.linregress(response_times, think_times)
    return ResponseTimeFit(float(result.intercept), float(result.slope), float(result.rvalue), len(response_times))


def within_session_pairs(jobs: pd.DataFrame, graphs: SessionGraphs,
                         session_of_batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The log's pairs (response time, think time) of dependencies between two batches of one session.

    Args:
        jobs: the batches' jobs (:attr:`batreplay.replay.sessions.SessionPartition.jobs` of the batches:
            ``session_id`` is the batch, ``submission_time`` and ``finish_time`` in s).
        graphs: the batch graphs. session_of_batch: the session of each batch id.

    Returns:
        ``(response_times, think_times)``, float ``(n,)`` each, s: the response time (finish - submission) of the
        source batch's job that ended last, and the dependency's think time.
    """
    last = jobs.loc[jobs.groupby("session_id", sort=True)["finish_time"].idxmax()]
    response = pd.Series((last["finish_time"] - last["submission_time"]).to_numpy(dtype=float),
                         index=last["session_id"].to_numpy())
    sources = np.concatenate([g.dependency_source for g in graphs.values()] or [np.zeros(0, np.int64)])
    targets = np.concatenate([g.dependency_target for g in graphs.values()] or [np.zeros(0, np.int64)])
    thinks = np.concatenate([g.dependency_think_time for g in graphs.values()] or [np.zeros(0)])
    inside = session_of_batch[sources] == session_of_batch[targets]
    return response.loc[sources[inside]].to_numpy(dtype=float), thinks[inside]
