"""Conformance of the embedded engine with real Batsim 4.2.1 recordings (``../shared/batsim-golden/``, and
``../shared/batsim-golden-sharing/`` for compute sharing).

Two checks per case:
1. Transcript replay: the engine, fed the recorded scheduler replies, must send exactly the recorded Batsim
   messages (same events, same grouping and order, the same numbers: Batsim's times as it prints them).
2. Outputs: pybatsim's easyBackfill on the engine writes Batsim's out_jobs.csv byte for byte.
"""

from __future__ import annotations

import pandas as pd
import pytest
from batsim.tools.launcher import instanciate_scheduler

from batreplay.engine.inprocess import run_scheduler
from batreplay.formats.out_jobs_writer import jobs_frame, write_out_jobs_columns
from batreplay.formats.out_schedule import SUMMARY_COLUMNS, schedule_summary
from batreplay.engine.simulator import BatsimEngine, EngineError
from batsim_doubles import batsim_options, replay_transcript, transcript_pairs
from batsim_doubles import engine_for as shared_engine_for
from conftest import GOLDEN, golden_cases, golden_folder


def engine_for(case: str) -> BatsimEngine:
    folder = golden_folder(case)
    return shared_engine_for(folder / "platform.xml", folder / "workload.json", batsim_options(folder))


@pytest.mark.parametrize("case", golden_cases(sharing=True))
def test_engine_replays_batsim_transcript(case):
    assert replay_transcript(golden_folder(case)) > 2


def _easy_backfill_cases() -> list[str]:
    return [c for c in golden_cases() if (GOLDEN / c / "scheduler.txt").read_text().strip() == "easyBackfill"]


@pytest.mark.parametrize("case", _easy_backfill_cases())
def test_pybatsim_easy_backfill_on_engine_gives_batsim_out_jobs(case, tmp_path):
    """pybatsim's own easyBackfill, run against the engine, writes Batsim's out_jobs.csv byte for byte (times
    with Batsim's six decimals, sub-microsecond drift and the long-double stretch included, rows in the same
    order, metadata quoted); and Batsim's out_schedule.csv aggregates."""
    engine = engine_for(case)
    run_scheduler(engine, instanciate_scheduler("easyBackfill", {}))
    columns = engine.record_columns()  # what a run writes (batreplay.engine.simulate)
    write_out_jobs_columns(columns, tmp_path / "out_jobs.csv")
    ours = (tmp_path / "out_jobs.csv").read_text().splitlines()
    theirs = (GOLDEN / case / "out_jobs.csv").read_text().splitlines()
    differing = [(a, b) for a, b in zip(ours, theirs) if a != b]
    assert not differing, f"{case}: {len(differing)} rows differ, first:\n{differing[0][0]}\n{differing[0][1]}"
    assert len(ours) == len(theirs)

    summary = schedule_summary(pd.DataFrame({name: columns[name] for name in SUMMARY_COLUMNS}), engine.nb_hosts,
                               0.0, 0.0, check=False)  # (checked by the writer)
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


# Exact clocks logged by a real Batsim 4.2.1 (``--sg-log "root.fmt:[%.40r]%e%m%n"``: SimGrid's clock with 40
# decimals) on the small cases below, with batreplay's FCFS on a platform of ``batreplay platform --nodes N``.
# Batsim prints 6 decimals only; these sub-microsecond differences move printed digits on long runs (first
# 3,000 KTH-SP2 jobs in test_real_batsim_compat.py).

def _fcfs_job_ends(nb_hosts: int, jobs: list[tuple[int, int, float]]) -> dict[str, float]:
    """Run FCFS on jobs ``(subtime, res, seconds at 1 Gflop/s)`` (ids 0, 1, ...); each job's end clock."""
    from batreplay.schedulers.registry import load_scheduler

    workload = {"nb_res": nb_hosts, "jobs": [], "profiles": {}}
    for number, (subtime, res, seconds) in enumerate(jobs):
        workload["profiles"][f"p{number}"] = {"type": "parallel_homogeneous", "cpu": seconds * 1e9, "com": 0}
        workload["jobs"].append({"id": str(number), "subtime": subtime, "walltime": -1, "res": res,
                                 "profile": f"p{number}"})
    engine = BatsimEngine([(f"node_{i}", 1e9) for i in range(nb_hosts)], {"w0": workload})
    run_scheduler(engine, load_scheduler("fcfs"))
    return {job.name: job.end for job in engine.jobs.values()}


def test_submitter_woken_within_timing_precision_submits_without_sleeping_again():
    """The submitter's long sleep ends, within SimGrid's 1e-9 s, in the step of job 0's end, a hair before job 2's
    submission time: Batsim submits job 2 then (it does not compare the clock with the submission time again)."""
    ends = _fcfs_job_ends(4, [(33086, 4, 99741), (61823, 4, 61899), (133729, 1, 27520), (259750, 1, 63945),
                              (298426, 4, 51094)])
    logged = ["132827.0000000160362105816602706909179687500000", "194726.0000000320724211633205413818359375000000",
              "222246.0000000480795279145240783691406250000000", "323695.0000000239233486354351043701171875000000",
              "374789.0000000398140400648117065429687500000000"]
    assert ends == {str(number): float(clock) for number, clock in enumerate(logged)}


@pytest.mark.parametrize(("seconds", "logged_end_of_2"), [
    (4, "9.0000000639999981899563863407820463180542"),
    (180, "185.0000000640000052953837439417839050292969"),
])
def test_completion_reaches_server_before_the_decisions_of_the_same_step(seconds, logged_end_of_2):
    """Jobs 0 and 1 (started 8 ns apart) end in the steps of their completion transfers: job 1's JOB_COMPLETED
    reaches the server before the EXECUTE_JOB the scheduler sends in reply to job 0's completion, so job 2
    starts one message later than the decision alone would make it."""
    ends = _fcfs_job_ends(2, [(0, 1, seconds), (0, 1, seconds), (0, 1, 5)])
    assert ends["2"] == float(logged_end_of_2)


@pytest.mark.parametrize(("subtime", "walltime", "extra_flop", "logged_end_of_1"), [
    (0, 100, 3, "105.0000000559999904226060607470571994781494"),
    (1000, 10, 4, "1015.0000000320000026476918719708919525146484"),
])
def test_parallel_task_outlives_its_walltime_until_the_executor_exits(subtime, walltime, extra_flop,
                                                                      logged_end_of_1):
    """Job 0's walltime ends a few ns before its parallel task: Batsim does not cancel the task, which ends
    (one more clock step) while the executor's JOB_COMPLETED is in transfer; job 1 starts after it, at a clock
    rounded as in real Batsim (KTH-SP2 job 5464 under FCFS and conservative)."""
    from batreplay.schedulers.registry import load_scheduler

    workload = {"nb_res": 2, "profiles": {
        "pa": {"type": "parallel_homogeneous", "cpu": walltime * 10**9 + extra_flop, "com": 0},
        "pb": {"type": "parallel_homogeneous", "cpu": 5 * 10**9, "com": 0}}, "jobs": [
        {"id": "0", "subtime": subtime, "walltime": walltime, "res": 1, "profile": "pa"},
        {"id": "1", "subtime": subtime, "walltime": -1, "res": 2, "profile": "pb"}]}
    engine = BatsimEngine([("node_0", 1e9), ("node_1", 1e9)], {"w0": workload})
    run_scheduler(engine, load_scheduler("fcfs"))
    assert engine.jobs["w0!0"].state == "COMPLETED_WALLTIME_REACHED"
    assert engine.jobs["w0!1"].end == float(logged_end_of_1)
