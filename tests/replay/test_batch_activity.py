"""Pure functions behind the replays by batches (no simulation).

What is checked:

- :func:`batreplay.replay.batches.batch_ids` and :func:`~batreplay.replay.batches.split_batches` (Zakay and
  Feitelson 2015, as Madon, Da Costa, Pierson 2024 section 7.5 describe batches): hand-made cases (overlapping jobs
  share a batch; a job submitted exactly when the batch ended opens a new one, as Definition 5 is not strict; jobs of
  the batch's first second share it even when the first job lasted 0 s; a new session always opens a new batch) and,
  on generated traces, that every job is in exactly one batch, each batch lies in one session, batch starts strictly
  increase per user, and a batch is exactly a run of jobs each submitted before the latest finish of the batch's
  earlier jobs (or in the batch's first second).
- :class:`batreplay.replay.activity.ActivityPeriods` (the fluid model's periods of activity): ``next_active`` inside
  a period, in a gap, after the last period, with overlapping periods, and on generated periods: the result is not
  before ``ready``, lies in a period (or after all of them), and no period touches ``[ready, result)``.
- :class:`~batreplay.replay.activity.ActivityWindow` (Schlagkamp's daily and weekly windows): ``next_active`` gives
  the earliest active time at or after ``ready``, with and without an origin; :func:`smallest_cover` against a brute
  force; :func:`fit_activity_windows` gives users with few jobs the shared window and recovers a weekday 9-17 window.
- :func:`batreplay.replay.think_times.drawn_think_times` on the first 3000 jobs of KTH-SP2 (seeded, graphs unchanged
  but for the think times, each value drawn from the user's own think times or from the pool as documented), and
  :func:`~batreplay.replay.think_times.fit_response_time` / :class:`ResponseTimeFit`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.replay.activity import (
    DAY,
    HOUR,
    MIN_WINDOW_JOBS,
    ActivityPeriods,
    ActivityWindow,
    activity_periods,
    fit_activity_windows,
    smallest_cover,
)
from batreplay.replay.batches import batch_ids, batches_for, split_batches
from batreplay.replay.protocol import ReplayError
from batreplay.replay.sessions import partition_sessions
from batreplay.replay.think_times import (
    MIN_USER_THINK_TIMES,
    ResponseTimeFit,
    drawn_think_times,
    fit_response_time,
)
from batreplay.workloads.loading import WorkloadOptions, load_workload
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
FAST = settings(max_examples=40, deadline=None)


def ids(sessions: list[int], submissions: list[float], finishes: list[float]) -> list[int]:
    return batch_ids(np.array(sessions, dtype=np.int64), np.array(submissions, dtype=float),
                     np.array(finishes, dtype=float)).tolist()


def trace(rows: list[tuple[int, int, float, float, float]]) -> pd.DataFrame:
    """Jobs from (job_id, user_id, submission, wait, run) tuples, seconds."""
    return pd.DataFrame(rows, columns=["job_id", "user_id", "submission_time", "wait_time", "run_time"])


# ------------------------------------------------------------------------------------------------ batches

def test_overlapping_jobs_share_a_batch():
    # j0 [0, 100], j1 at 50 (j0 still running), j2 at 120 while j1 runs to 200: one batch; j3 at 200 = end
    assert ids([0, 0, 0, 0], [0, 50, 120, 200], [100, 200, 150, 260]) == [0, 0, 0, 1]
    # the reach is the latest finish of the batch so far, not that of the previous job: j2 ends at 150, but j1 at 200
    assert ids([0, 0, 0, 0], [0, 50, 120, 180], [100, 200, 150, 190]) == [0, 0, 0, 0]


def test_a_job_submitted_when_the_batch_ended_opens_a_new_batch():
    # Definition 5 is not strict: submitted at 100, the very second j0 ended, j1 depends on j0
    assert ids([0, 0], [0, 100], [100, 150]) == [0, 1]
    assert ids([0, 0], [0, 99], [100, 150]) == [0, 0]
    assert ids([0, 0], [0, 101], [100, 150]) == [0, 1]


def test_same_second_submissions_share_a_batch_even_after_a_zero_length_job():
    # j0 lasts 0 s (its batch ended at 0): j1 submitted in that same second still joins it, j2 one second later not
    assert ids([0, 0, 0], [10, 10, 11], [10, 10, 11]) == [0, 0, 1]
    # the same-second rule is about the batch's *first* job: j2 at 20 is the first second of the second batch
    assert ids([0, 0, 0, 0], [10, 20, 20, 21], [10, 20, 25, 30]) == [0, 1, 1, 1]


def test_a_new_session_always_opens_a_new_batch():
    # j1 overlaps j0 in time, but lies in another session (as a different user's job would)
    assert ids([0, 1], [0, 50], [100, 150]) == [0, 1]
    assert ids([0, 1, 1], [0, 0, 0], [100, 100, 100]) == [0, 1, 1]
    assert ids([], [], []) == []


def test_split_batches_keeps_the_partition_and_maps_batches_to_sessions():
    # user 1: j1, j2 overlap (batch 0), j3 after both ended (batch 1), same a60 session; j4 two hours later: session 1
    # user 2: j5 alone
    partition = partition_sessions(trace([(1, 1, 0, 0, 100), (2, 1, 50, 10, 100), (3, 1, 160, 0, 10),
                                          (4, 1, 7400, 0, 5), (5, 2, 30, 0, 1000)]), "arrival", 60)
    batches, session_of_batch = split_batches(partition)
    table = batches.sessions
    assert [tuple(j) for j in table["job_ids"]] == [(1, 2), (3,), (4,), (5,)]
    assert session_of_batch.tolist() == [0, 0, 1, 2]
    assert table["first_submit"].tolist() == [0, 160, 7400, 30]
    assert table["last_finish"].tolist() == [160, 170, 7405, 1030]
    assert batches.jobs["offset_in_session"].tolist() == [0, 50, 0, 0, 0]
    assert (batches.method, batches.threshold_minutes) == ("arrival", 60.0)


@st.composite
def recorded_traces(draw):
    """A few users' jobs, user -1 (unknown) among them (submission, wait, run in s; some equal submissions, zero
    waits and runs)."""
    n = draw(st.integers(1, 30))
    rows, clock = [], 0
    for job in range(1, n + 1):
        clock += draw(st.sampled_from([0, 0, 1, 10, 100, 1000, 5000]) | st.integers(0, 8000))
        wait = draw(st.sampled_from([0, 0, 30]) | st.integers(0, 3000))
        run = draw(st.sampled_from([0, 1, 100]) | st.integers(0, 6000))
        rows.append((job, draw(st.integers(1, 3) | st.just(-1)), clock, wait, run))
    return trace(rows)


@FAST
@given(jobs=recorded_traces(), rule=st.sampled_from([("arrival", 0), ("arrival", 60), ("last", 10), ("max", 30)]))
def test_batches_partition_each_session_by_the_overlap_rule(jobs, rule):
    sessions = partition_sessions(jobs, *rule)
    batches, session_of_batch = split_batches(sessions)
    frame = batches.jobs
    # every job in exactly one batch, jobs in the same order as the sessions' frame
    assert sorted(frame["job_id"]) == sorted(jobs["job_id"])
    assert frame["job_id"].tolist() == sessions.jobs["job_id"].tolist()
    batch = frame["session_id"].to_numpy()
    session = sessions.jobs["session_id"].to_numpy()
    assert batch.tolist() == sorted(batch.tolist()) and set(batch.tolist()) == set(range(len(batches.sessions)))
    # each batch inside one session, and session_of_batch says which
    for b in np.unique(batch):
        assert set(session[batch == b].tolist()) == {session_of_batch[b]}
    # batch starts strictly increase per user (their graphs need distinct starts); the unknown user's jobs are
    # sessions of their own, several may start in one second
    for user, table in batches.sessions.groupby("user_id"):
        steps = np.diff(table["first_submit"].to_numpy())
        assert np.all(steps > 0) if user != -1 else np.all(steps >= 0)
    # the rule itself: a job joins the open batch iff same session and (submitted before the batch's latest finish,
    # or in the batch's first second)
    submitted, finished = frame["submission_time"].to_numpy(float), frame["finish_time"].to_numpy(float)
    for k in range(1, len(frame)):
        members = np.flatnonzero(batch[:k] == batch[k - 1])
        joins = session[k] == session[k - 1] and (submitted[k] < finished[members].max()
                                                   or submitted[k] == submitted[members[0]])
        assert (batch[k] == batch[k - 1]) == joins
        assert batch[k] in (batch[k - 1], batch[k - 1] + 1)
    assert (frame["offset_in_session"] >= 0).all()
    assert frame.groupby("session_id")["offset_in_session"].min().eq(0).all()


# ------------------------------------------------------------------------------------------------ activity periods

def test_periods_next_active_by_hand():
    periods = ActivityPeriods(np.array([100.0, 500.0, 520.0, 1000.0]), np.array([200.0, 600.0, 550.0, 1000.0]))
    assert periods.next_active(150.0) == 150.0        # inside
    assert periods.next_active(100.0) == 100.0 and periods.next_active(200.0) == 200.0  # closed ends
    assert periods.next_active(0.0) == 100.0          # before the first
    assert periods.next_active(201.0) == 500.0        # in a gap
    # [520, 550] lies inside [500, 600]: merged; 570 is still inside, 601 waits for the zero-length period at 1000
    assert periods.next_active(570.0) == 570.0 and periods.next_active(601.0) == 1000.0
    assert periods.next_active(1000.0) == 1000.0
    assert periods.next_active(1e6) == 1e6            # after the last: at once
    assert ActivityPeriods(np.zeros(0), np.zeros(0)).next_active(5.0) == 5.0


def test_activity_periods_are_the_recorded_sessions_in_simulated_time():
    partition = partition_sessions(trace([(1, 1, 1000, 0, 100), (2, 1, 1050, 0, 500), (3, 1, 9000, 0, 10),
                                          (4, 2, 1200, 0, 60)]), "arrival", 60)
    periods = activity_periods(partition.sessions, origin=1000.0)
    assert periods[1].starts.tolist() == [0.0, 8000.0] and periods[1].ends.tolist() == [550.0, 8010.0]
    assert periods[2].starts.tolist() == [200.0] and periods[2].ends.tolist() == [260.0]
    assert periods[1].next_active(600.0) == 8000.0


@st.composite
def period_sets(draw):
    n = draw(st.integers(1, 8))
    starts = sorted(draw(st.lists(st.integers(0, 2000), min_size=n, max_size=n)))
    ends = [s + draw(st.sampled_from([0, 5]) | st.integers(0, 700)) for s in starts]
    return np.array(starts, dtype=float), np.array(ends, dtype=float)


@FAST
@given(spans=period_sets(), ready=st.integers(-10, 3000).map(float) | st.floats(-10, 3000))
def test_periods_next_active_is_the_first_active_time(spans, ready):
    starts, ends = spans
    result = ActivityPeriods(starts, ends).next_active(ready)
    assert result >= ready
    inside = bool(np.any((starts <= result) & (result <= ends)))
    assert inside or result > ends.max()
    if result > ends.max():
        assert result == ready
    # no period has a point in [ready, result): the user was not active before the result
    assert not np.any((starts < result) & (ends >= ready)) or result == ready


# ------------------------------------------------------------------------------------------------ activity windows

def test_window_next_active_by_hand():
    window = ActivityWindow(hours=(9, 10, 11, 12, 13, 14, 15, 16, 17), days=(0, 1, 2, 3, 4))
    assert window.next_active(9 * HOUR) == 9 * HOUR
    assert window.next_active(12.5 * HOUR) == 12.5 * HOUR
    assert window.next_active(18 * HOUR) == DAY + 9 * HOUR               # evening: tomorrow 9:00
    assert window.next_active(4 * DAY + 18 * HOUR) == 7 * DAY + 9 * HOUR  # Friday evening: next week's day 0
    assert window.next_active(5 * DAY) == 7 * DAY + 9 * HOUR
    # an origin shifts simulated time onto the log's axis: simulated 0 is log 8:30 of day 0
    shifted = ActivityWindow(window.hours, window.days, origin=8.5 * HOUR)
    assert shifted.next_active(0.0) == 0.5 * HOUR
    assert shifted.next_active(HOUR) == HOUR
    assert shifted.next_active(9.5 * HOUR) == DAY + 0.5 * HOUR
    assert shifted.is_active(8.5 * HOUR + HOUR) and not shifted.is_active(8.5 * HOUR)


def active_at_some_point(window: ActivityWindow, start: float, stop: float) -> bool:
    """True when ``window`` is active at some log time of ``[start, stop)``: in the hour of ``start`` or at an hour
    boundary strictly inside (activity is constant within an hour of the log's axis)."""
    if stop <= start:
        return False
    if window.is_active(start):
        return True
    hour = math.floor(start / HOUR) + 1
    while hour * HOUR < stop:
        if window.is_active(hour * HOUR):
            return True
        hour += 1
    return False


windows = st.builds(ActivityWindow,
                    hours=st.sets(st.integers(0, 23), min_size=1).map(lambda s: tuple(sorted(s))),
                    days=st.sets(st.integers(0, 6), min_size=1).map(lambda s: tuple(sorted(s))),
                    origin=st.sampled_from([0.0, 3600.0, 12345.0]) | st.integers(0, 10 * 86400).map(float))


@FAST
@given(window=windows, ready=st.floats(0, 30 * 86400) | st.integers(0, 30 * 24).map(lambda h: h * 3600.0))
def test_window_next_active_is_the_first_active_time(window, ready):
    result = window.next_active(ready)
    assert result >= ready
    assert result - ready <= 7 * DAY
    assert window.is_active(result + window.origin)
    assert not active_at_some_point(window, ready + window.origin, result + window.origin)


def test_window_next_active_with_a_fractional_origin_lands_in_the_window():
    # The result must be active when read back on the log's axis, even when origin is not a whole number of seconds.
    for origin in (0.1, 0.3, 1234.7, 86399.9):
        window = ActivityWindow((5,), (2,), origin=origin)
        result = window.next_active(0.0)
        assert window.is_active(result + origin), (origin, result, result + origin)


@FAST
@given(counts=st.lists(st.integers(0, 6), min_size=1, max_size=7).filter(lambda c: sum(c) > 0),
       percent=st.integers(1, 100))
def test_smallest_cover_is_as_small_as_brute_force(counts, percent):
    array = np.array(counts, dtype=np.int64)
    total = int(array.sum())
    chosen = smallest_cover(array, percent / 100)
    assert list(chosen) == sorted(set(chosen))
    assert 100 * int(array[list(chosen)].sum()) >= percent * total
    fewest = next(size for size in range(1, len(counts) + 1)
                  if any(100 * sum(counts[i] for i in subset) >= percent * total
                         for subset in itertools.combinations(range(len(counts)), size)))
    assert len(chosen) == fewest


def test_smallest_cover_prefers_the_most_counted_then_the_lower_position():
    assert smallest_cover(np.array([1, 5, 5, 0, 2]), 0.3) == (1,)
    assert smallest_cover(np.array([1, 5, 5, 0, 2]), 0.6) == (1, 2)
    assert smallest_cover(np.array([3, 3, 3]), 0.5) == (0, 1)
    assert smallest_cover(np.array([0, 0, 4]), 1.0) == (2,)
    assert smallest_cover(np.array([2, 2, 2, 2]), 1.0) == (0, 1, 2, 3)


def test_fit_activity_windows_office_hours_and_shared_window():
    origin = 5 * HOUR  # simulated 0 is 05:00 of the log's day 0: windows are on the log's own axis
    office = [(1, week * 7 * DAY + day * DAY + hour * HOUR + 60.0 * minute)
              for week in range(2) for day in range(5) for hour in range(9, 18) for minute in (0, 30)]
    few = [(2, 3 * DAY + 22 * HOUR), (2, 6 * DAY + 1 * HOUR)]
    frame = pd.DataFrame(office + few, columns=["user_id", "submission_time"])
    for coverage in (1.0, 0.95):
        windows, shared = fit_activity_windows(frame, origin, coverage=coverage)
        assert windows[1].hours == tuple(range(9, 18)) and windows[1].days == (0, 1, 2, 3, 4)
        assert windows[1].origin == origin and windows[1] is not shared
        assert len(few) < MIN_WINDOW_JOBS and windows[2] is shared
    # the shared window is fitted on everyone's submissions: with coverage 1, user 2's hours and days are in it
    windows, shared = fit_activity_windows(frame, origin, coverage=1.0)
    assert shared.hours == (1, *range(9, 18), 22) and shared.days == (0, 1, 2, 3, 4, 6)
    # user 1 is active at 9:00 log time, i.e. at 4 h of simulated time
    assert windows[1].next_active(0.0) == 4 * HOUR
    # with min_jobs above user 1's count, both get the shared window
    windows, shared = fit_activity_windows(frame, origin, min_jobs=len(office) + 1)
    assert windows[1] is shared and windows[2] is shared
    with pytest.raises(ValueError, match="no recorded submission"):
        fit_activity_windows(frame.iloc[:0], origin)


# ------------------------------------------------------------------------------------------------ think times

@pytest.fixture(scope="module")
def kth_batches():
    loaded = load_workload(KTH, WorkloadOptions(max_jobs=3000))
    return batches_for(loaded.job_table, "arrival:60")


def test_drawn_think_times_are_seeded_and_change_only_the_think_times(kth_batches):
    graphs = kth_batches.graphs
    first, again, other = (drawn_think_times(graphs, seed) for seed in (7, 7, 8))
    differs = False
    for user, graph in graphs.items():
        for drawn in (first, other):
            new = drawn.graphs[user]
            np.testing.assert_array_equal(new.dependency_source, graph.dependency_source)
            np.testing.assert_array_equal(new.dependency_target, graph.dependency_target)
            np.testing.assert_array_equal(new.first_submit, graph.first_submit)  # root starts
            np.testing.assert_array_equal(new.last_finish, graph.last_finish)
            np.testing.assert_array_equal(new.job_ids, graph.job_ids)
            np.testing.assert_array_equal(new.job_offsets, graph.job_offsets)
            assert len(new.dependency_think_time) == len(graph.dependency_think_time)
        thinks = [drawn.graphs[user].dependency_think_time for drawn in (first, again, other)]
        np.testing.assert_array_equal(thinks[0], thinks[1])
        differs |= not np.array_equal(thinks[0], thinks[2])
    assert differs
    # the draws are not the recorded think times in another order only: they replace them
    assert any(not np.array_equal(first.graphs[u].dependency_think_time, g.dependency_think_time)
               for u, g in graphs.items())
    assert (first.own_users, first.shared_users) == (again.own_users, again.shared_users)


def batch_draws(recorded, drawn) -> dict[int, float]:
    """The value drawn for each dependent batch of one user: a dependency's drawn think time minus its recorded
    offset from the batch's think time (the smallest recorded one of its incoming dependencies); the same for all
    of them, checked."""
    frame = pd.DataFrame({"target": recorded.dependency_target, "recorded": recorded.dependency_think_time,
                          "drawn": drawn.dependency_think_time})
    frame["extra"] = frame["recorded"] - frame.groupby("target")["recorded"].transform("min")
    frame["draw"] = frame["drawn"] - frame["extra"]
    spread = frame.groupby("target")["draw"].agg(lambda v: v.max() - v.min())
    assert (spread <= 1e-6).all(), "the incoming dependencies of a batch kept different draws"
    return frame.groupby("target")["draw"].first().to_dict()


def batch_think_values(graph) -> np.ndarray:
    """A user's recorded think time of each dependent batch: from the end of its last predecessor (s)."""
    return pd.Series(graph.dependency_think_time).groupby(graph.dependency_target).min().to_numpy(dtype=float)


def within(values, allowed: np.ndarray) -> bool:
    allowed = np.sort(np.asarray(allowed, dtype=float))
    return all(np.min(np.abs(allowed - v)) <= 1e-6 for v in values)


def test_drawn_think_times_come_from_the_users_own_or_from_the_pool(kth_batches):
    graphs = kth_batches.graphs
    own_values = {user: batch_think_values(graph) for user, graph in graphs.items()}
    pool = np.concatenate(list(own_values.values()))
    drawn = drawn_think_times(graphs, 3)
    own = [u for u, v in own_values.items() if len(v) >= MIN_USER_THINK_TIMES]
    shared = [u for u, v in own_values.items() if 0 < len(v) < MIN_USER_THINK_TIMES]
    assert own and shared  # the 3000 jobs have users of both kinds
    assert (drawn.own_users, drawn.shared_users, drawn.pool_size) == (len(own), len(shared), len(pool))
    foreign_seen = False
    for user in own:
        draws = batch_draws(graphs[user], drawn.graphs[user])
        assert len(draws) == len(own_values[user])
        assert within(draws.values(), own_values[user]), user
    for user in shared:
        draws = batch_draws(graphs[user], drawn.graphs[user])
        assert within(draws.values(), pool), user
        foreign_seen |= not within(draws.values(), own_values[user])
    # a user with few think times draws from everyone's: some of their draws are not their own think times
    assert foreign_seen
    # every drawn think time is >= 0, and a batch with several predecessors keeps their recorded offsets
    assert all((g.dependency_think_time >= 0).all() for g in drawn.graphs.values())
    # users without dependency keep their (empty) graph as it is
    for user, graph in graphs.items():
        if graph.nb_dependencies == 0:
            assert drawn.graphs[user] is graph
    # min_user decides who draws from their own: with 1, everyone with a dependency does
    everyone = drawn_think_times(graphs, 3, min_user=1)
    assert (everyone.own_users, everyone.shared_users) == (len(own) + len(shared), 0)
    for user in shared:
        assert within(batch_draws(graphs[user], everyone.graphs[user]).values(), own_values[user])


def test_fit_response_time_recovers_a_line_and_refuses_what_cannot_be_fitted():
    response = np.array([10.0, 100.0, 400.0, 1000.0, 3600.0])
    fit = fit_response_time(response, 30.0 + 0.25 * response)
    assert fit.intercept == pytest.approx(30.0) and fit.slope == pytest.approx(0.25)
    assert fit.r_value == pytest.approx(1.0) and fit.nb_pairs == 5
    assert fit.think_time(200.0) == pytest.approx(80.0)
    falling = fit_response_time(np.array([0.0, 100.0]), np.array([50.0, 0.0]))
    assert falling.slope == pytest.approx(-0.5) and falling.r_value == pytest.approx(-1.0)
    assert falling.think_time(1000.0) == 0.0  # the line is below 0 there: never a negative think time
    for bad_response, bad_think in (([], []), ([5.0], [1.0]), ([7.0, 7.0, 7.0], [1.0, 2.0, 3.0])):
        with pytest.raises(ReplayError, match="cannot be fitted"):
            fit_response_time(np.array(bad_response), np.array(bad_think))


@FAST
@given(intercept=st.floats(-1e5, 1e5), slope=st.floats(-100, 100), response=st.floats(0, 1e7))
def test_fitted_think_time_is_never_negative(intercept, slope, response):
    fit = ResponseTimeFit(intercept, slope, 0.0, 2)
    value = fit.think_time(response)
    assert value >= 0.0
    assert value == max(0.0, intercept + slope * response)
