"""Conformance of the embedded engine with real Batsim 4.2.1 recordings (``../shared/batsim-golden/``).

Two checks per case:
1. Transcript replay: the engine, fed the recorded scheduler replies, must send exactly the recorded Batsim
   messages (same events, same grouping and order, the same numbers: Batsim's times as it prints them).
2. Outputs: pybatsim's easyBackfill on the engine writes Batsim's out_jobs.csv (every field as text but
   the stretch's last digit).
"""

from __future__ import annotations

import pandas as pd
import pytest
from batsim.tools.launcher import instanciate_scheduler

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.outputs import jobs_frame, schedule_summary, write_out_jobs
from batreplay.engine.simulator import BatsimEngine, EngineError
from batsim_doubles import batsim_options, json_difference, transcript_pairs
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
def test_pybatsim_easy_backfill_on_engine_gives_batsim_out_jobs(case, tmp_path):
    """pybatsim's own easyBackfill, run against the engine, writes Batsim's out_jobs.csv: every field of every
    row equal as text (times with Batsim's six decimals, sub-microsecond drift included) but the stretch (to
    its last printed digit), rows in the same order; and Batsim's out_schedule.csv aggregates."""
    engine = engine_for(case)
    run_scheduler(engine, instanciate_scheduler("easyBackfill", {}))
    write_out_jobs(engine.records, tmp_path / "out_jobs.csv")
    ours = pd.read_csv(tmp_path / "out_jobs.csv", dtype=str, keep_default_na=False)
    theirs = pd.read_csv(GOLDEN / case / "out_jobs.csv", dtype=str, keep_default_na=False)
    assert list(ours.columns) == list(theirs.columns)
    assert list(ours["job_id"]) == list(theirs["job_id"])
    # stretch: Batsim divides its unrounded clock values (long doubles); ours divides the printed ones, which
    # can move the sixth significant decimal (kth2000, job 1885: 1855.476190 against 1855.476191)
    stretch = ours.pop("stretch").astype(float), theirs.pop("stretch").astype(float)
    assert ((stretch[0] - stretch[1]).abs() <= 1e-9 * stretch[1] + 1e-6).all()
    for column in theirs.columns:
        differing = ours.index[ours[column] != theirs[column]]
        assert differing.empty, (f"{case}: column {column}, job {ours.at[differing[0], 'job_id']}: "
                                 f"{ours.at[differing[0], column]!r} != {theirs.at[differing[0], column]!r}")

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
