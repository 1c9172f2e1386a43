"""The replays by batches (``adjusted``, ``distribution``, ``fluid``, ``schlagkamp``) simulated, and the broker's
tolerance of a call that arrives a microsecond early.

Each replay is a real run (:func:`batreplay.run.runner.run`, EASY, embedded engine) of a hand-made or generated SWF
log; its ``out_jobs.csv`` is read back and checked against the batches of the log
(:func:`batreplay.replay.batches.batches_for`, the same session rule):

- for every model: every job ends exactly once (dynamic ids ``<job number>`` of workload ``dyn``), no time goes back
  (submission <= start <= finish), no node runs two jobs at once and no more nodes are busy than the platform has,
  no job of a batch is submitted before every batch it depends on (Definition 5, all of them, not only the direct
  ones) has ended in the simulation, and the jobs of a batch keep their recorded offsets from its first one;
- per model, a batch starts when the model says: ``adjusted`` at the latest (end of a predecessor + recorded think
  time), to the microsecond; ``distribution`` likewise with the think times drawn with its seed (same seed: the
  same out_jobs.csv, byte for byte; another seed: another one); ``fluid`` inside one of its user's periods of
  activity (or after the last), not before its session's recorded start, and not before (end + recorded think
  time) inside a session; ``schlagkamp`` inside
  its user's activity window, after the fitted think time of the response time of the predecessor's last job inside
  a session;
- the broker (:class:`batreplay.replay.broker.FeedbackBroker`, ``CALL_SLACK``, ``CALL_SLACK_RELATIVE``) asks again
  for a call that arrived before the time it asked for (1e-6 s early, or 1.1e-5 s at 1.5e8 s), instead of waiting for
  ever; and ``distribution`` on the first 3000 jobs of KTH-SP2 (kth-sp2 platform, EASY) ends every job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from batsim.batsim import BatsimScheduler
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from batreplay.formats.out_jobs import read_out_jobs
from batreplay.platforms.generate import write_platform
from batreplay.replay.activity import activity_periods, fit_activity_windows
from batreplay.replay.batches import Batches, batches_for
from batreplay.replay.broker import CALL_SLACK, FeedbackBroker
from batreplay.replay.feedback import ThinkTimeUsers
from batreplay.replay.feedback_setup import simulation_origin
from batreplay.replay.session_graph import all_dependencies, build_session_graphs
from batreplay.replay.sessions import partition_sessions
from batreplay.replay.think_times import drawn_think_times, fit_response_time, within_session_pairs
from batreplay.run.runner import RunError, RunSpec, run
from batreplay.workloads.loading import LoadedWorkload, WorkloadOptions, load_workload
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
MODELS = ("adjusted", "distribution", "fluid", "schlagkamp")
SESSIONS = "arrival:60"
#: s: Batsim prints times with six decimals and the users round submissions to the microsecond.
TOL = 1e-6
NODES = 4
PROPERTY = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def write_swf(path: Path, jobs: list[tuple[int, int, int, int, int, int]]) -> Path:
    """jobs: (job number, submission, wait, run, processors, user), s -> an SWF log (requested time 5 x run + 10:
    no job reaches its walltime, even on nodes 4 times slower than recorded)."""
    lines = [f"; MaxNodes: {NODES}", f"; MaxProcs: {NODES}"]
    for number, submit, wait, run_time, procs, user in jobs:
        fields = [number, submit, wait, run_time, procs, -1, -1, procs, 5 * run_time + 10, -1, 1, user, 1,
                  -1, -1, -1, -1, -1]
        lines.append(" ".join(str(f) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class Replayed:
    """A run's out_jobs.csv (by job number), the log as converted, its batches and origin (s)."""

    out_dir: Path
    jobs: pd.DataFrame
    loaded: LoadedWorkload
    batches: Batches
    origin: float

    def start(self, graph, sid: int) -> float:
        """Simulated start of batch ``sid``: the submission of its first job."""
        return float(self.jobs.loc[graph.jobs_of(sid)[0][0], "submission_time"])

    def end(self, graph, sid: int) -> float:
        """Simulated end of batch ``sid``: the latest finish of its jobs."""
        return float(self.jobs.loc[[j for j, _ in graph.jobs_of(sid)], "finish_time"].max())


def replay(folder: Path, swf: Path, model: str, *, nodes: int = NODES, speed: float = 1e9, seed: int = 0,
           name: str = "run") -> Replayed:
    """``batreplay run --replay MODEL --sessions arrival:60`` with EASY on ``nodes`` nodes of ``speed`` flop/s."""
    platform = write_platform(folder / f"p{nodes}-{speed:g}.xml", nodes, speed)
    options = {"model_seed": seed} if seed else {}
    out_dir = folder / name
    run(RunSpec.build(workload=swf, platform=platform, scheduler="easy", out_dir=out_dir, replay=model,
                      sessions=SESSIONS, **options))
    jobs = read_out_jobs(out_dir / "out_jobs.csv")
    assert (jobs["workload_name"] == "dyn").all()
    assert jobs["job_id"].is_unique
    jobs.index = jobs["job_id"].astype(int)
    loaded = load_workload(swf, WorkloadOptions(), nb_res=nodes)
    return Replayed(out_dir, jobs, loaded, batches_for(loaded.job_table, SESSIONS), simulation_origin(loaded.job_table))


def check_common(result: Replayed, nodes: int = NODES) -> None:
    """What every model must do (see the module)."""
    jobs = result.jobs
    expected = sorted(result.loaded.job_table["job_id"].astype(int))
    assert sorted(jobs.index) == expected and len(jobs) == len(expected)
    assert (jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    assert (jobs["submission_time"] >= 0).all()
    assert (jobs["starting_time"] >= jobs["submission_time"]).all()
    assert (jobs["finish_time"] >= jobs["starting_time"]).all()
    check_resources(jobs, nodes)
    check_dependencies(result)


def parse_procset(text: str) -> set[int]:
    hosts: set[int] = set()
    for part in str(text).split():
        low, _, high = part.partition("-")
        hosts.update(range(int(low), int(high or low) + 1))
    return hosts


def check_resources(jobs: pd.DataFrame, nodes: int) -> None:
    """No host runs two jobs at once, each job has the nodes it asked for, and no more than ``nodes`` are busy."""
    hosts = {job: parse_procset(text) for job, text in jobs["allocated_resources"].items()}
    for job, used in hosts.items():
        assert len(used) == jobs.loc[job, "requested_number_of_resources"] and used <= set(range(nodes))
    # events at one time: ends before starts (a job may start on the nodes one ends on)
    events = sorted([(f, 0, -jobs.loc[j, "requested_number_of_resources"]) for j, f in jobs["finish_time"].items()]
                    + [(s, 1, jobs.loc[j, "requested_number_of_resources"]) for j, s in jobs["starting_time"].items()])
    busy = 0
    for _time, _kind, change in events:
        busy += change
        assert 0 <= busy <= nodes
    ordered = jobs.sort_values("starting_time")
    for a, b in ((a, b) for a in ordered.index for b in ordered.index if a < b):
        overlap = (jobs.loc[a, "starting_time"] < jobs.loc[b, "finish_time"]
                   and jobs.loc[b, "starting_time"] < jobs.loc[a, "finish_time"])
        assert not (overlap and hosts[a] & hosts[b]), (a, b)


def check_dependencies(result: Replayed) -> None:
    """No job of a batch before every batch it depends on (Definition 5, transitively) has ended; the jobs of a
    batch at their recorded offsets from its first one."""
    for graph in result.batches.graphs.values():
        # the unknown user's batches (each job its own session) depend on nothing
        none = np.zeros(0, np.int64)
        sources, targets = ((none, none) if graph.independent_sessions
                            else all_dependencies(graph.first_submit, graph.last_finish))
        for source, target in zip(graph.session_ids[sources], graph.session_ids[targets]):
            target_jobs = [j for j, _ in graph.jobs_of(int(target))]
            first = result.jobs.loc[target_jobs, "submission_time"].min()
            assert first >= result.end(graph, int(source)) - TOL, (graph.user_id, source, target)
        for sid in graph.session_ids:
            start = result.start(graph, int(sid))
            for job, offset in graph.jobs_of(int(sid)):
                assert result.jobs.loc[job, "submission_time"] == pytest.approx(start + offset, abs=TOL)


def ready_times(result: Replayed, graph, sid: int, think) -> tuple[float, float]:
    """Bounds of when batch ``sid`` is free: the latest, over its direct predecessors ``p``, of (end of p +
    ``think(p, sid, recorded think time, job)``), ``job`` the job of ``p`` that ended last (one unless several ended
    in the same instant: then the bounds are over them). A root batch: its recorded start."""
    preds = graph.predecessors(sid)
    if not preds:
        start = float(graph.first_submit[graph.position_of(sid)]) - result.origin
        return start, start
    low = high = -math.inf
    for pred, recorded in preds:
        end = result.end(graph, pred)
        ends = result.jobs.loc[[j for j, _ in graph.jobs_of(pred)], "finish_time"]
        values = [think(pred, sid, recorded, job) for job in ends.index[ends >= end - 1e-9]]
        low, high = max(low, end + min(values)), max(high, end + max(values))
    return low, high


def check_starts(result: Replayed, think, submission_start) -> None:
    """Every batch starts at ``submission_start(user, ready, batch id)`` for its ready time (see
    :func:`ready_times`)."""
    for user, graph in result.batches.graphs.items():
        for sid in graph.session_ids.tolist():
            low, high = ready_times(result, graph, sid, think)
            start = result.start(graph, sid)
            if len(graph.predecessors(sid)) > 1:
                event("a batch with several direct predecessors")
            if start > high + TOL:
                event("a batch moved later than it was ready")
            if low < high:
                event("predecessor's jobs ended in the same instant")
            earliest, latest = submission_start(user, low, sid), submission_start(user, high, sid)
            assert earliest - TOL <= start <= latest + TOL, (user, sid)


def recorded_think(pred: int, successor: int, recorded: float, job: int) -> float:
    return recorded


# ------------------------------------------------------------------------------------------------ hand-made cases

# One user, a60. j1 (0, 100 s) and j2 (50, 100 s) overlap: batch B0 (recorded end 150). j3 at 1000: batch B1, think
# time 850. j4 at 1010 overlaps j3 (B1). j5 at 8000 (a new session, think time 8000 - 1040 = 6960), j6 at 8100 (B3,
# think time 90): two pairs (response time, think time) in a session, (100, 850) and (10, 90), for schlagkamp.
CHAIN = [(1, 0, 0, 100, 1, 7), (2, 50, 0, 100, 1, 7), (3, 1000, 0, 30, 2, 7), (4, 1010, 0, 30, 1, 7),
         (5, 8000, 0, 10, 1, 7), (6, 8100, 0, 10, 1, 7)]
# Two sessions ending before a third: j1 (0, runs 10000 s, session S0), j2 at 4000 (gap > 60 min: session S1, 100 s),
# j3 at 12000 (S2): B2 depends directly on B0 (think 2000) and on B1 (think 7900), as B1 started before B0 ended.
TWO_PREDECESSORS = [(1, 0, 0, 10000, 1, 3), (2, 4000, 0, 100, 1, 3), (3, 12000, 0, 10, 1, 3)]


@pytest.mark.parametrize("model", MODELS)
def test_every_model_runs_the_hand_made_logs(tmp_path, model):
    for name, trace, nodes in (("chain", CHAIN, 2), ("chain4", CHAIN, 4), ("two", TWO_PREDECESSORS, 1)):
        swf = write_swf(tmp_path / f"{name}.swf", trace)
        if model == "schlagkamp" and name == "two":
            continue  # no two batches in one session: nothing to fit (see the test of its refusal)
        result = replay(tmp_path, swf, model, nodes=nodes, name=f"{name}-{model}")
        check_common(result, nodes)


def test_adjusted_keeps_the_recorded_think_time_to_the_microsecond(tmp_path):
    swf = write_swf(tmp_path / "chain.swf", CHAIN)
    # 2 nodes of 3 Gflop/s: jobs last a third of their recorded run time, not a whole number of seconds
    result = replay(tmp_path, swf, "adjusted", nodes=2, speed=3e9)
    jobs = result.jobs
    check_common(result, 2)
    b0_end = jobs.loc[[1, 2], "finish_time"].max()
    assert b0_end == pytest.approx(50 + 100 / 3, abs=TOL)
    assert jobs.loc[3, "submission_time"] == pytest.approx(b0_end + 850, abs=TOL)
    assert jobs.loc[4, "submission_time"] == pytest.approx(jobs.loc[3, "submission_time"] + 10, abs=TOL)
    b1_end = jobs.loc[[3, 4], "finish_time"].max()
    assert jobs.loc[5, "submission_time"] == pytest.approx(b1_end + 6960, abs=TOL)
    assert jobs.loc[5, "submission_time"] < 8000  # the user is ahead of the log
    assert jobs.loc[6, "submission_time"] == pytest.approx(jobs.loc[5, "finish_time"] + 90, abs=TOL)


def test_adjusted_waits_for_the_latest_of_several_predecessors(tmp_path):
    swf = write_swf(tmp_path / "two.swf", TWO_PREDECESSORS)
    one = replay(tmp_path, swf, "adjusted", nodes=1, name="one").jobs
    # one node: j2 waits for j1 (ends 10000), runs to 10100; j3 at max(10000 + 2000, 10100 + 7900)
    assert one.loc[2, "finish_time"] == 10100
    assert one.loc[3, "submission_time"] == pytest.approx(18000, abs=TOL)
    two = replay(tmp_path, swf, "adjusted", nodes=2, name="two").jobs
    assert two.loc[3, "submission_time"] == pytest.approx(12000, abs=TOL)  # as recorded


def test_fluid_moves_batches_into_periods_of_activity(tmp_path):
    # session S0 = j1 (0, 100 s), j2 at 150 (after j1 ended: a batch of its own, think time 50): period [0, 250];
    # session S1 = j3 at 10000 (100 s): period [10000, 10100]
    swf = write_swf(tmp_path / "fluid.swf", [(1, 0, 0, 100, 1, 5), (2, 150, 0, 100, 1, 5), (3, 10000, 0, 100, 1, 5)])
    # a quarter of the speed: j1 ends at 400, j2 is ready at 450, after the period: it waits for the next one (10000),
    # ends at 10400, after the last period: j3 at once
    slow = replay(tmp_path, swf, "fluid", nodes=1, speed=0.25e9, name="slow")
    check_common(slow, 1)
    assert slow.jobs.loc[2, "submission_time"] == 10000
    assert slow.jobs.loc[3, "submission_time"] == pytest.approx(10400, abs=TOL)
    # half speed: j1 ends at 200, j2 at 250 (the last instant of the period) keeps its think time; j3 opens a session:
    # ready when j2 ends (450), outside every period: the next one (10000)
    half = replay(tmp_path, swf, "fluid", nodes=1, speed=0.5e9, name="half")
    assert half.jobs.loc[2, "submission_time"] == 250 and half.jobs.loc[3, "submission_time"] == 10000
    # the recorded speed: S0 ends at 250, as recorded; S1 keeps its recorded start: every job at its recorded time
    same = replay(tmp_path, swf, "fluid", nodes=1, speed=1e9, name="same")
    assert same.jobs.loc[2, "submission_time"] == 150 and same.jobs.loc[3, "submission_time"] == 10000
    # twice the speed: j1 ends at 50, j2 keeps its offset from j1's end (think 50: at 100); S1 not before its start
    fast = replay(tmp_path, swf, "fluid", nodes=1, speed=2e9, name="fast")
    assert fast.jobs.loc[2, "submission_time"] == 100 and fast.jobs.loc[3, "submission_time"] == 10000


def test_fluid_keeps_the_think_time_into_a_later_batch_of_a_session_from_an_earlier_session(tmp_path):
    # j1 (0, 8000 s): session S0. j2 at 7200 (gap > 60 min): S1, batch B1, no dependency (j1 still runs). j3 at 9000:
    # S1 too, batch B2, depends on B0 (think 1000) and B1 (think 1700). At half speed j1 ends at 16000: B2 is not the
    # first batch of S1, so both recorded think times hold: 16000 + 1000, as adjusted gives, after S1's period
    swf = write_swf(tmp_path / "late.swf", [(1, 0, 0, 8000, 1, 5), (2, 7200, 0, 100, 1, 5), (3, 9000, 0, 100, 1, 5)])
    fluid = replay(tmp_path, swf, "fluid", nodes=2, speed=0.5e9, name="fluid")
    adjusted = replay(tmp_path, swf, "adjusted", nodes=2, speed=0.5e9, name="adjusted")
    assert fluid.jobs.loc[2, "submission_time"] == 7200
    assert fluid.jobs.loc[3, "submission_time"] == adjusted.jobs.loc[3, "submission_time"] == 17000


def test_schlagkamp_refuses_a_log_without_pairs_to_fit(tmp_path):
    swf = write_swf(tmp_path / "two.swf", TWO_PREDECESSORS)
    with pytest.raises(RunError, match="cannot be fitted"):
        replay(tmp_path, swf, "schlagkamp", nodes=1)


def test_schlagkamp_fitted_think_times_and_activity_window_by_hand(tmp_path):
    swf = write_swf(tmp_path / "chain.swf", CHAIN)
    # the two pairs (100, 850) and (10, 90) give think = 90 + (R - 10) * 760 / 90; user 7 has fewer than 20 jobs:
    # the window of all submissions, hours 0 and 2 of day 0 of the log
    slope = 760 / 90

    def think(response):
        return 90 + (response - 10) * slope

    # nodes 4 times slower: j1 [0, 400], j2 [50, 450] (response 400): B1 ready at 450 + think(400) = 3833.3, in hour
    # 1, outside the window: at 7200 (hour 2). j3 (2 nodes) [7200, 7320], j4 at 7210 runs [7320, 7440]. B2 opens a
    # session: the recorded think time, ready at 7440 + 6960 = 14400, hour 4: the window's next hour is hour 0 of
    # day 0 of next week. j6: think(40) after j5 (response 40)
    result = replay(tmp_path, swf, "schlagkamp", nodes=2, speed=0.25e9)
    check_common(result, 2)
    jobs = result.jobs
    assert think(400) + 450 == pytest.approx(3833.3333)
    assert jobs.loc[3, "submission_time"] == 7200 and jobs.loc[4, "submission_time"] == 7210
    assert jobs.loc[[3, 4], "finish_time"].max() == 7440
    assert jobs.loc[5, "submission_time"] == 7 * 86400
    assert jobs.loc[6, "submission_time"] == pytest.approx(7 * 86400 + 40 + think(40), abs=TOL)
    # at twice the speed nothing leaves the window: B1 after think(50) = 427.8 s, not the recorded 850 s
    fast = replay(tmp_path, swf, "schlagkamp", nodes=2, speed=2e9, name="fast").jobs
    assert fast.loc[2, "finish_time"] == 100
    assert fast.loc[3, "submission_time"] == pytest.approx(100 + think(50), abs=TOL)


def test_distribution_same_seed_same_out_jobs_other_seed_another(tmp_path):
    # one user, 31 batches one after the other in one session, think times 0, 7, 14, ... 210 s (all distinct): the
    # draws of two seeds agreeing on all 30 would be a 1 in 30**30 event
    trace, clock = [], 0
    for number in range(1, 32):
        trace.append((number, clock, 0, 20, 1, 4))
        clock += 20 + 7 * (number - 1)
    swf = write_swf(tmp_path / "thinks.swf", trace)
    first = replay(tmp_path, swf, "distribution", seed=5, name="a")
    again = replay(tmp_path, swf, "distribution", seed=5, name="b")
    other = replay(tmp_path, swf, "distribution", seed=6, name="c")
    for result in (first, other):
        check_common(result)
    assert (first.out_dir / "out_jobs.csv").read_bytes() == (again.out_dir / "out_jobs.csv").read_bytes()
    assert (first.out_dir / "out_jobs.csv").read_bytes() != (other.out_dir / "out_jobs.csv").read_bytes()
    # and the adjusted replay (the recorded think times) is neither
    adjusted = replay(tmp_path, swf, "adjusted", name="d")
    assert not first.jobs["submission_time"].equals(adjusted.jobs["submission_time"])


# ------------------------------------------------------------------------------------------------ generated logs

@st.composite
def traces(draw, calibrated: bool = False):
    """2 to 30 jobs of users 1 to 3 (and -1, unknown), 1 to 4 nodes each; with ``calibrated``, a user 9 whose three
    batches in one session give the schlagkamp fit two pairs of distinct response times."""
    n = draw(st.integers(2, 30))
    jobs, clock = [], draw(st.integers(0, 90000))
    for number in range(1, n + 1):
        clock += draw(st.sampled_from([0, 1, 60, 4000, 9000]) | st.integers(0, 3000))
        run_time = draw(st.sampled_from([100, 12000]) | st.integers(1, 2000))
        wait = draw(st.sampled_from([0, 0, 500]) | st.integers(0, 2000))
        user = draw(st.integers(1, 3) | st.just(-1))  # -1: unknown, each job a session of its own
        jobs.append((number, clock, wait, run_time, draw(st.integers(1, NODES)), user))
    if calibrated:
        start = jobs[0][1]
        jobs += [(n + 1, start, 0, 100, 1, 9), (n + 2, start + 200, 0, 300, 1, 9), (n + 3, start + 600, 0, 50, 1, 9)]
        jobs.sort(key=lambda job: (job[1], job[0]))
    return jobs


SPEEDS = st.sampled_from([0.5e9, 1e9, 3e9])


def generated_replay(tmp_path_factory, trace, model: str, speed: float, seed: int = 0) -> Replayed:
    """``model`` replaying a generated log (:func:`traces`), with the checks every model passes (check_common)."""
    folder = tmp_path_factory.mktemp(model)
    result = replay(folder, write_swf(folder / "log.swf", trace), model, speed=speed, seed=seed)
    check_common(result)
    return result


@PROPERTY
@given(trace=traces(), speed=SPEEDS)
def test_adjusted_on_generated_logs(tmp_path_factory, trace, speed):
    result = generated_replay(tmp_path_factory, trace, "adjusted", speed)
    check_starts(result, recorded_think, lambda user, ready, sid: ready)


@PROPERTY
@given(trace=traces(), speed=SPEEDS, seed=st.integers(1, 1000))
def test_distribution_on_generated_logs(tmp_path_factory, trace, speed, seed):
    result = generated_replay(tmp_path_factory, trace, "distribution", speed, seed=seed)
    drawn = drawn_think_times(result.batches.graphs, seed).graphs
    for user, graph in result.batches.graphs.items():
        # the drawn graph's think times, on the same edges
        drawn_think = {(int(s), int(t)): float(w) for s, t, w in zip(drawn[user].dependency_source,
                                                                     drawn[user].dependency_target,
                                                                     drawn[user].dependency_think_time)}
        for sid in graph.session_ids.tolist():
            preds = graph.predecessors(sid)
            if preds:
                ready = max(result.end(graph, p) + drawn_think[(p, sid)] for p, _ in preds)
            else:
                ready = float(graph.first_submit[graph.position_of(sid)]) - result.origin
            assert result.start(graph, sid) == pytest.approx(ready, abs=TOL), (user, sid)


@PROPERTY
@given(trace=traces(), speed=SPEEDS)
def test_fluid_on_generated_logs(tmp_path_factory, trace, speed):
    result = generated_replay(tmp_path_factory, trace, "fluid", speed)
    periods = activity_periods(result.batches.sessions.sessions, result.origin)
    session_of = result.batches.session_of_batch
    for user, graph in result.batches.graphs.items():
        spans = periods[user]
        for sid in graph.session_ids.tolist():
            start = result.start(graph, sid)
            inside = np.any((spans.starts - TOL <= start) & (start <= spans.ends + TOL))
            assert inside or start > spans.ends.max(), (user, sid, start)
            for pred, recorded in graph.predecessors(sid):
                if session_of[pred] == session_of[sid]:  # inside a session: the recorded think time at least
                    assert start >= result.end(graph, pred) + recorded - TOL

    def think(pred, successor, recorded, job):  # 0 into the first batch of a session from another session
        opens = successor == 0 or session_of[successor - 1] != session_of[successor]
        return 0.0 if opens and session_of[pred] != session_of[successor] else recorded

    session_start = result.batches.sessions.sessions["first_submit"].to_numpy(dtype=float) - result.origin
    for user, graph in result.batches.graphs.items():  # never before the recorded start of the batch's session
        for sid in graph.session_ids.tolist():
            assert result.start(graph, sid) >= session_start[session_of[sid]] - TOL

    def fluid_start(user, ready, sid):
        return periods[user].next_active(max(ready, session_start[session_of[sid]]))

    check_starts(result, think, fluid_start)


@PROPERTY
@given(trace=traces(calibrated=True), speed=SPEEDS)
def test_schlagkamp_on_generated_logs(tmp_path_factory, trace, speed):
    result = generated_replay(tmp_path_factory, trace, "schlagkamp", speed)
    batches = result.batches
    fit = fit_response_time(*within_session_pairs(batches.partition.jobs, batches.graphs, batches.session_of_batch))
    windows, _shared = fit_activity_windows(batches.sessions.jobs, result.origin)
    session_of = batches.session_of_batch
    jobs = result.jobs
    for user, graph in batches.graphs.items():
        for sid in graph.session_ids.tolist():
            assert windows[user].is_active(result.start(graph, sid) + result.origin), (user, sid)

    def think(pred, successor, recorded, job):
        if session_of[pred] != session_of[successor]:
            return recorded
        return fit.think_time(jobs.loc[job, "finish_time"] - jobs.loc[job, "submission_time"])

    check_starts(result, think, lambda user, ready, sid: windows[user].next_active(ready))


# ------------------------------------------------------------------------------------------------ the broker's calls

class FakeBatsim:
    """What the broker uses of pybatsim's ``Batsim``: a clock set by the test, and the requests it sends."""

    dynamic_job_registration_enabled = True
    ack_of_dynamic_jobs = True

    def __init__(self) -> None:
        self.now = 0.0
        self.wakeups: list[float] = []
        self.registered: list[tuple[str, float]] = []
        self.finished = False

    def time(self) -> float:
        return self.now

    def wake_me_up_at(self, when: float) -> None:
        self.wakeups.append(when)

    def register_profiles(self, workload, profiles) -> None:
        pass

    def register_job(self, job_id, res, walltime, profile, subtime) -> None:
        self.registered.append((job_id, subtime))

    def notify_registration_finished(self) -> None:
        self.finished = True

    def reject_jobs_by_id(self, job_ids) -> None:
        pass


class Inner(BatsimScheduler):
    """An inner scheduler that does nothing (and has no onRequestedCall of its own)."""

    def onJobSubmission(self, job) -> None:
        pass

    def onJobCompletion(self, job) -> None:
        pass


def one_job_at(when: float) -> ThinkTimeUsers:
    """One user whose only job is due at ``when`` (s of simulated time)."""
    jobs = pd.DataFrame({"job_id": [1], "user_id": [1], "submission_time": [when], "wait_time": [0.0],
                         "run_time": [10.0]})
    return ThinkTimeUsers(build_session_graphs(partition_sessions(jobs)), origin=0.0)


@pytest.mark.parametrize(("due", "early"), [(98.0, 1e-6), (98.0, 0.4e-6), (98.0, CALL_SLACK / 2),
                                            (150544755.001303, 150544755.001303 - 150544755.001292)])
def test_a_call_arriving_a_microsecond_early_is_asked_for_again(due, early):
    """The last case is one seen on SDSC-SP2 (FCFS, nodes half as fast, adjusted): a call asked for at 1.5e8 s
    arrived 1.1e-5 s early, beyond Batsim's shortest sleep; the slack grows with the time (CALL_SLACK_RELATIVE)."""
    bs = FakeBatsim()
    request = {"res": 1, "walltime": 100.0, "profile": {"type": "delay", "delay": 10.0}}
    broker = FeedbackBroker(Inner(), one_job_at(due), {1: request})
    broker.bs = bs
    broker.onSimulationBegins()
    broker.onNoMoreEvents()  # t = 0: nothing due, a call asked for the due time
    assert bs.wakeups == [due] and bs.registered == []
    # SimGrid's clock rounding: the call arrives early, before the job is due (more than half a microsecond
    # early) or just at it
    bs.now = due - early
    broker.onRequestedCall()
    broker.onNoMoreEvents()
    if bs.registered:  # within half a microsecond, the job counts as due
        assert early <= 0.5e-6 and bs.registered == [("dyn!1", bs.now)]
    else:  # not yet due: the broker must ask again, else no event ever comes (a deadlock)
        assert bs.wakeups == [due, due]
        bs.now = due
        broker.onRequestedCall()
        broker.onNoMoreEvents()
        assert bs.registered == [("dyn!1", due)]
    assert bs.finished


def test_a_call_is_asked_for_once_while_pending():
    bs = FakeBatsim()
    request = {"res": 1, "walltime": 100.0, "profile": {"type": "delay", "delay": 10.0}}
    broker = FeedbackBroker(Inner(), one_job_at(98.0), {1: request})
    broker.bs = bs
    broker.onSimulationBegins()
    broker.onNoMoreEvents()
    bs.now = 50.0  # another event (not the call) in between: no second request for the same time
    broker.onNoMoreEvents()
    assert bs.wakeups == [98.0]
    # a call that arrives for another, earlier request does not consume the one for 98 (more than CALL_SLACK away)
    bs.now = 97.0
    broker.onRequestedCall()
    broker.onNoMoreEvents()
    assert bs.wakeups == [98.0] and bs.registered == []


def test_distribution_on_the_first_3000_kth_jobs_ends_every_job(tmp_path):
    out_dir = tmp_path / "kth"
    result = run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=out_dir,
                               replay="distribution", sessions=SESSIONS, model_seed=3, max_jobs=3000))
    jobs = read_out_jobs(out_dir / "out_jobs.csv")
    assert len(jobs) == 3000 and jobs["job_id"].is_unique
    assert result.metrics["nb_finished"] == len(jobs) and result.metrics["nb_rejected"] == 0
    assert (jobs["workload_name"] == "dyn").all()
    assert (jobs["starting_time"] >= jobs["submission_time"]).all()
