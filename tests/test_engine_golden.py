"""Conformance of the embedded engine with real Batsim 4.2.1 recordings (``../shared/batsim-golden/``).

Two checks per case:
1. Transcript replay: the engine, fed the recorded scheduler replies, must send exactly the recorded Batsim
   messages (same events, same grouping and order, times equal to 1e-6 s).
2. Outputs: the engine's out_jobs.csv values equal Batsim's for the same jobs.
"""

from __future__ import annotations

import pandas as pd
import pytest
from batsim.tools.launcher import instanciate_scheduler

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.outputs import jobs_frame, schedule_summary
from batreplay.engine.simulator import BatsimEngine, EngineError
from batsim_doubles import TOLERANCE, batsim_options, json_difference, transcript_pairs
from batsim_doubles import engine_for as shared_engine_for
from conftest import GOLDEN, golden_cases

def engine_for(case: str) -> BatsimEngine:
    folder = GOLDEN / case
    return shared_engine_for(folder / "platform.xml", folder / "workload.json", batsim_options(folder))


@pytest.mark.parametrize("case", golden_cases())
def test_engine_replays_batsim_transcript(case):
    engine = engine_for(case)
    for seq, (request, reply) in enumerate(transcript_pairs(GOLDEN / case)):
        got = engine.next_request()
        assert got is not None, f"{case}: the engine ended before message {seq}"
        difference = json_difference(got, request)
        assert difference is None, f"{case}, message {seq}: {difference}"
        engine.apply_reply(reply)
    assert engine.next_request() is None, f"{case}: the engine goes on after SIMULATION_ENDS"


def _easy_backfill_cases() -> list[str]:
    return [c for c in golden_cases() if (GOLDEN / c / "scheduler.txt").read_text().strip() == "easyBackfill"]


@pytest.mark.parametrize("case", _easy_backfill_cases())
def test_pybatsim_easy_backfill_on_engine_gives_batsim_out_jobs(case):
    """pybatsim's own easyBackfill, run against the engine, produces Batsim's out_jobs.csv values."""
    engine = engine_for(case)
    run_scheduler(engine, instanciate_scheduler("easyBackfill", {}))
    ours = jobs_frame(engine.records).astype({"job_id": str}).set_index("job_id")
    theirs = pd.read_csv(GOLDEN / case / "out_jobs.csv", dtype={"job_id": str}).set_index("job_id")
    assert sorted(ours.index) == sorted(theirs.index)
    ours = ours.loc[theirs.index]
    for column in ["submission_time", "requested_number_of_resources", "requested_time", "starting_time",
                   "execution_time", "finish_time", "waiting_time", "turnaround_time"]:
        gap = (ours[column].astype(float) - theirs[column].astype(float)).abs().max()
        assert gap <= TOLERANCE, f"{case}: column {column} differs by {gap}"
    assert (ours["final_state"] == theirs["final_state"]).all()
    assert (ours["success"] == theirs["success"]).all()
    assert (ours["allocated_resources"].astype(str) == theirs["allocated_resources"].astype(str)).all()
    assert ((ours["stretch"] - theirs["stretch"]).abs() <= 1e-5 * theirs["stretch"]).all()

    summary = schedule_summary(jobs_frame(engine.records), engine.nb_hosts, 0.0, 0.0)
    batsim = pd.read_csv(GOLDEN / case / "out_schedule.csv").iloc[0]
    for column in ["makespan", "max_waiting_time", "mean_waiting_time", "mean_turnaround_time", "nb_jobs",
                   "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_success", "time_computing", "success_rate"]:
        assert summary[column] == pytest.approx(float(batsim[column]), rel=1e-9, abs=1e-5), column


def test_rows_follow_termination_order_on_dynamic_case():
    """Rejected jobs are written when rejected, others when they terminate (case `dynamic`)."""
    engine = engine_for("dynamic")
    for _request, reply in transcript_pairs(GOLDEN / "dynamic"):
        engine.next_request()
        engine.apply_reply(reply)
    theirs = pd.read_csv(GOLDEN / "dynamic" / "out_jobs.csv", dtype={"job_id": str})
    ours = jobs_frame(engine.records)
    assert list(ours["job_id"]) == list(theirs["job_id"])
    assert list(ours["final_state"]) == list(theirs["final_state"])
    assert ours["starting_time"].isna().tolist() == theirs["starting_time"].isna().tolist()


def test_call_me_later_in_the_past_is_refused():
    engine = engine_for("delays")
    request = engine.next_request()
    engine.apply_reply({"now": request["now"], "events": [
        {"timestamp": 0.0, "type": "CALL_ME_LATER", "data": {"timestamp": 0.0}}]})
    with pytest.raises(EngineError, match="strictly later"):
        engine.next_request()


def test_double_allocation_is_refused():
    engine = engine_for("simultaneous")
    engine.next_request()
    engine.apply_reply({"now": 0.0, "events": []})
    request = engine.next_request()
    assert [e["type"] for e in request["events"]] == ["JOB_SUBMITTED"] * 4
    engine.apply_reply({"now": 0.0, "events": [
        {"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!0", "alloc": "0-1"}},
        {"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "1-2"}}]})
    with pytest.raises(EngineError, match="already computing"):
        engine.next_request()


def test_unsupported_event_names_real_batsim():
    engine = engine_for("delays")
    engine.next_request()
    with pytest.raises(EngineError, match="--engine batsim"):
        engine.apply_reply({"now": 0.0, "events": [
            {"timestamp": 0.0, "type": "SET_RESOURCE_STATE", "data": {"resources": "0", "state": "1"}}]})
