"""Replay with feedback, end to end: SWF log -> sessions -> broker + scheduler <-> embedded engine.

Definitions: Madon, Da Costa, Pierson, "Replay with Feedback", FGCS 2024, sections 3-4 and Algorithm 1.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.platforms.generate import write_platform
from batreplay.platforms.reader import read_platform
from batreplay.replay.broker import BrokerConfigurationError
from batreplay.replay.registry import ReplaySpec, replay_decision_process
from batreplay.run.runner import RunError, RunSpec, run
from batreplay.schedulers.registry import load_scheduler
from batreplay.workloads.loading import WorkloadOptions, load_workload


def write_swf(path: Path, jobs: list[tuple[int, int, int, int, int, int, int]]) -> Path:
    """jobs: (job number, submit, wait, run, processors, requested time, user) -> a minimal SWF file."""
    lines = ["; MaxNodes: 64", "; MaxProcs: 64"]
    for number, submit, wait, run_time, procs, requested, user in jobs:
        fields = [number, submit, wait, run_time, procs, -1, -1, procs, requested, -1, 1, user, 1, -1, -1, -1, -1, -1]
        lines.append(" ".join(str(f) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def simulate(tmp_path: Path, swf: Path, nodes: int, speed: float, replay: str, sessions: str | None = None,
             name: str = "run") -> pd.DataFrame:
    """EASY on ``nodes`` nodes of ``speed`` flop/s, driven by the replay layer (:func:`replay_decision_process`)
    on the embedded engine; out_jobs rows by job id (str), with ``recorded_submission_time`` (the job
    table's ``submission_time``, the recorded one)."""
    platform = read_platform(write_platform(tmp_path / f"p{nodes}-{speed:g}.xml", nodes, speed))
    loaded = load_workload(swf, WorkloadOptions(), nb_res=platform.nb_compute)
    spec = ReplaySpec(replay, sessions)
    scheduler, _notes = replay_decision_process(spec, loaded.document, loaded.job_table, load_scheduler("easy"))
    if spec.dynamic:
        static = {"nb_res": loaded.document["nb_res"], "jobs": [], "profiles": {}}
        options = EngineOptions(dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    else:
        static, options = loaded.document, EngineOptions()
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": static}, {"w0": "workload.json"}, options)
    run_scheduler(engine, scheduler)
    recorded = loaded.job_table.rename(columns={"submission_time": "recorded_submission_time"})
    merged = jobs_frame(engine.records).astype({"job_id": str}).merge(
        recorded.astype({"job_id": str}), on="job_id", validate="one_to_one")
    return merged.set_index("job_id")


# One user: j1 (t=0, 100 s) and j2 (t=50, 100 s) form a session at a60; j3 comes two hours later, after
# both finished (recorded finish 150 s): think time 7200 - 150 = 7050 s.
FIG1_LIKE = [(1, 0, 0, 100, 1, 1000, 7), (2, 50, 0, 100, 1, 1000, 7), (3, 7200, 0, 100, 1, 1000, 7)]


def test_feedback_delays_next_session_by_simulated_finish(tmp_path):
    swf = write_swf(tmp_path / "log.swf", FIG1_LIKE)
    one_node = simulate(tmp_path, swf, 1, 1e9, "feedback", name="one")
    # j2 waits for j1 on a single node: session 1 ends at 200 s, so j3 comes at 200 + 7050
    assert one_node.loc["2", "starting_time"] == 100
    assert one_node.loc["3", "submission_time"] == pytest.approx(7250.0, abs=1e-6)
    two_nodes = simulate(tmp_path, swf, 2, 1e9, "feedback", name="two")
    assert two_nodes.loc["3", "submission_time"] == pytest.approx(7200.0, abs=1e-6)
    fast = simulate(tmp_path, swf, 2, 2e9, "feedback", name="fast")  # jobs last 50 s: session ends at 100 s
    assert fast.loc["3", "submission_time"] == pytest.approx(7150.0, abs=1e-6)
    rigid = simulate(tmp_path, swf, 1, 1e9, "rigid", name="rigid")
    assert rigid.loc["3", "submission_time"] == 7200.0
    assert rigid.loc["3", "workload_name"] == "w0" and one_node.loc["3", "workload_name"] == "dyn"


def test_a0_keeps_think_time_between_jobs(tmp_path):
    swf = write_swf(tmp_path / "log.swf", FIG1_LIKE)
    jobs = simulate(tmp_path, swf, 1, 1e9, "feedback", sessions="arrival:0")
    # a0: three sessions. j2 (recorded at 50) does not depend on j1 (finished at 100 > 50): root, at 50.
    assert jobs.loc["2", "submission_time"] == pytest.approx(50.0)
    # j3 depends on j2 only (transitive reduction), think time 7200 - 150; j2 ends at 200 in simulation
    assert jobs.loc["3", "submission_time"] == pytest.approx(7250.0)


def test_feedback_needs_an_swf_log(tmp_path, golden_dir):
    with pytest.raises(RunError, match="feedback replay needs an SWF log"):
        run(RunSpec.build(workload=golden_dir / "delays" / "workload.json", platform=golden_dir / "delays" / "platform.xml",
                    scheduler="easy", out_dir=tmp_path / "x", replay="feedback"))
    assert not (tmp_path / "x").exists()


def test_wider_jobs_are_rejected_and_free_their_session(tmp_path):
    swf = write_swf(tmp_path / "log.swf", [(1, 0, 0, 100, 4, 1000, 7), (2, 7200, 0, 10, 1, 1000, 7)])
    jobs = simulate(tmp_path, swf, 2, 1e9, "feedback")
    assert jobs.loc["1", "final_state"] == "REJECTED"
    # the rejection ends session 1 at t = 0: job 2 comes after its think time (7200 - 100)
    assert jobs.loc["2", "submission_time"] == pytest.approx(7100.0)


def test_broker_refuses_batsim_without_dynamic_jobs():
    from batreplay.replay.broker import FeedbackBroker

    class FakeBatsim:
        dynamic_job_registration_enabled = False
        ack_of_dynamic_jobs = False

        def reject_jobs_by_id(self, job_ids):
            pass

    broker = FeedbackBroker(inner=object.__new__(type("Inner", (), {})), users=None, jobs={})
    broker.bs = FakeBatsim()
    with pytest.raises(BrokerConfigurationError, match="--enable-dynamic-jobs --acknowledge-dynamic-jobs"):
        broker.onSimulationBegins()


# ---------------------------------------------------------------- properties on generated traces
@st.composite
def traces(draw, waits: bool):
    n = draw(st.integers(1, 12))
    jobs, clock = [], 0
    for number in range(1, n + 1):
        clock += draw(st.integers(0, 5000))
        run_time = draw(st.integers(1, 3000))
        wait = draw(st.integers(0, 2000)) if waits else 0
        procs = draw(st.integers(1, 3))
        user = draw(st.integers(1, 3))
        jobs.append((number, clock, wait, run_time, procs, run_time * 2 + 10, user))
    return jobs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(trace=traces(waits=True), speedup=st.sampled_from([1.0, 1.5, 2.0]), spec=st.sampled_from(["arrival:0", "arrival:60", "max:30"]))
def test_never_later_than_recorded_when_nothing_waits(tmp_path_factory, trace, speedup, spec):
    """Fast-enough, wide-enough platform: no job is submitted later than recorded (section 4)."""
    tmp = tmp_path_factory.mktemp("prop")
    swf = write_swf(tmp / "log.swf", trace)
    nodes = sum(job[4] for job in trace)
    jobs = simulate(tmp, swf, nodes, 1e9 * speedup, "feedback", sessions=spec)
    assert (jobs["waiting_time"] == 0).all()
    assert (jobs["submission_time"] <= jobs["recorded_submission_time"] + 1e-6).all()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(trace=traces(waits=False), spec=st.sampled_from(["arrival:0", "arrival:60", "last:10", "max:30"]))
def test_exact_replay_when_nothing_waited_and_same_speed(tmp_path_factory, trace, spec):
    """No recorded wait, recorded speed, no wait in simulation: feedback replay = recorded submissions."""
    tmp = tmp_path_factory.mktemp("prop")
    swf = write_swf(tmp / "log.swf", trace)
    nodes = sum(job[4] for job in trace)
    jobs = simulate(tmp, swf, nodes, 1e9, "feedback", sessions=spec)
    assert (jobs["submission_time"] == jobs["recorded_submission_time"]).all()
