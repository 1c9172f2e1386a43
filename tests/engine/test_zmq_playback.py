"""The protocol over real ZeroMQ sockets, without Batsim (runs in CI).

1. Transcript playback, every golden case: a Batsim double (REQ socket) sends the recorded Batsim messages one
   by one to the recorded decision process, started by pybatsim's own launcher in a separate process and
   listening on a free port (pybatsim's ``easyBackfill``; for ``dynamic`` and ``coincide``, the probe
   schedulers of ``tests/probes/``, written from the golden README's description). Every reply must equal the
   recorded one: same events in the same order, times within 1e-6 s.
2. Our schedulers (``fcfs``, ``easy``, ``conservative``), whose decisions differ from the recording: the
   embedded engine plays Batsim over the REQ socket to ``pybatsim schedulers/NAME.py`` (a separate process);
   the engine checks every reply (it raises on anything Batsim would refuse), and the resulting out_jobs table
   must be identical to an in-process run of the same scheduler on the same golden inputs.
3. Dynamic jobs over ZeroMQ: the engine, with Batsim's dynamic-job flags, against the probe schedulers gives
   the out_jobs.csv values that real Batsim wrote for ``dynamic`` and ``coincide``.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from batreplay.engine.inprocess import run_scheduler
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.schedulers.registry import load_scheduler
from batsim_doubles import (
    PROBES_DIR,
    TOLERANCE,
    batsim_options,
    drive_engine,
    engine_for,
    json_difference,
    pybatsim_process,
    transcript_pairs,
    wait_exit,
)
from conftest import GOLDEN, REPO_ROOT, golden_cases, golden_folder, slow_when_large

#: The decision process of each golden case, by the first word of its scheduler.txt, as pybatsim's launcher
#: takes it: a scheduler of pybatsim's own package, or a scheduler file.
RECORDED_SCHEDULERS = {
    "easyBackfill": "easyBackfill",
    "probeDynamic": str(PROBES_DIR / "probeDynamic.py"),
    "probeCoincide": str(PROBES_DIR / "probeCoincide.py"),
}
OUR_SCHEDULERS = ["fcfs", "easy", "conservative"]


def recorded_scheduler(case: str) -> str:
    folder = golden_folder(case)
    words = (folder / "scheduler.txt").read_text().split()
    if words and (folder / f"{words[0]}.py").is_file():  # a probe kept beside its recording (compute sharing)
        return str(folder / f"{words[0]}.py")
    assert words and words[0] in RECORDED_SCHEDULERS, (
        f"golden case {case}: no decision process known for scheduler {words[:1]}: add it to RECORDED_SCHEDULERS")
    return RECORDED_SCHEDULERS[words[0]]


def static_cases() -> list[str]:
    return [c for c in golden_cases(sharing=True) if not batsim_options(golden_folder(c)).dynamic_jobs]


def dynamic_cases() -> list[str]:
    return [c for c in golden_cases(sharing=True) if batsim_options(golden_folder(c)).dynamic_jobs]


@pytest.mark.parametrize("case", golden_cases(sharing=True))
def test_recorded_decision_process_replies_as_recorded(case, tmp_path):
    pairs = transcript_pairs(golden_folder(case))
    with pybatsim_process(recorded_scheduler(case), tmp_path, cwd=tmp_path) as (batsim, process):
        for seq, (request, recorded) in enumerate(pairs):
            reply = batsim.exchange(request)
            difference = json_difference(reply, recorded)
            assert difference is None, f"{case}, reply {seq}: {difference}"
        # pybatsim's launcher exits 0 once SIMULATION_ENDS is answered and every job was started or rejected
        assert wait_exit(process) == 0


def test_playback_detects_a_different_decision(tmp_path):
    """A changed Batsim message changes the decision: the comparison is not vacuous. In case `delays`, the
    first job asks for 1 host and easyBackfill gives it host 0; asking for all 4 hosts must give "0-3"."""
    pairs = transcript_pairs(GOLDEN / "delays")
    first_job = pairs[1][0]["events"][0]["data"]["job"]
    assert first_job["res"] == 1 and pairs[1][1]["events"][0]["data"]["alloc"] == "0"
    first_job["res"] = 4
    with pybatsim_process("easyBackfill", tmp_path, cwd=tmp_path) as (batsim, _):
        assert json_difference(batsim.exchange(pairs[0][0]), pairs[0][1]) is None
        reply = batsim.exchange(pairs[1][0])
    assert reply["events"][0]["type"] == "EXECUTE_JOB" and reply["events"][0]["data"]["alloc"] == "0-3"
    assert json_difference(reply, pairs[1][1]) is not None


@pytest.mark.parametrize("scheduler", OUR_SCHEDULERS)
@pytest.mark.parametrize("case", slow_when_large(static_cases()))
def test_our_scheduler_over_zmq_equals_in_process_run(case, scheduler, tmp_path):
    folder = golden_folder(case)
    over_zmq = engine_for(folder / "platform.xml", folder / "workload.json", batsim_options(folder))
    scheduler_file = str(REPO_ROOT / "schedulers" / f"{scheduler}.py")
    with pybatsim_process(scheduler_file, tmp_path, cwd=tmp_path) as (batsim, process):
        messages = drive_engine(over_zmq, batsim)
        assert wait_exit(process) == 0
    in_process = engine_for(folder / "platform.xml", folder / "workload.json", batsim_options(folder))
    connection = run_scheduler(in_process, load_scheduler(scheduler))
    assert messages == connection.messages
    expected = jobs_frame(in_process.records)
    assert len(expected) == len(json.loads((folder / "workload.json").read_text())["jobs"])
    pd.testing.assert_frame_equal(jobs_frame(over_zmq.records), expected)


@pytest.mark.parametrize("case", dynamic_cases())
def test_dynamic_jobs_over_zmq_give_batsim_out_jobs(case, tmp_path):
    folder = golden_folder(case)
    engine = engine_for(folder / "platform.xml", folder / "workload.json", batsim_options(folder))
    with pybatsim_process(recorded_scheduler(case), tmp_path, cwd=tmp_path) as (batsim, process):
        drive_engine(engine, batsim)
        assert wait_exit(process) == 0
    ours = jobs_frame(engine.records).astype({"job_id": str}).set_index("job_id")
    batsim_jobs = pd.read_csv(folder / "out_jobs.csv", dtype={"job_id": str}).set_index("job_id")
    assert list(ours.index) == list(batsim_jobs.index)  # same jobs, written in the same order
    for column in ["submission_time", "starting_time", "execution_time", "finish_time", "requested_time"]:
        got, expected = ours[column].astype(float), batsim_jobs[column].astype(float)
        assert (got.isna() == expected.isna()).all(), column  # rejected jobs have no times
        assert ((got - expected).abs().fillna(0.0) <= TOLERANCE).all(), column
    assert (ours["final_state"] == batsim_jobs["final_state"]).all()
    assert (ours["workload_name"] == batsim_jobs["workload_name"]).all()
    ran = batsim_jobs["starting_time"].notna()
    assert (ours.loc[ran, "allocated_resources"].astype(str) == batsim_jobs.loc[ran, "allocated_resources"].astype(str)).all()


# --- the comparison itself, on hand-made values ------------------------------------------------------------------

def test_json_difference_rules():
    message = {"now": 3.0, "events": [{"timestamp": 3.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}]}
    assert json_difference(message, message) is None
    assert json_difference({"now": 3.0, "events": []}, {"now": 3, "events": []}) is None  # int 3 is 3.0
    assert json_difference({"now": 3.000001, "events": []}, {"now": 3.0, "events": []}) is not None  # 1 us
    swapped = {"now": 0.0, "events": [{"type": "B"}, {"type": "A"}]}
    assert json_difference(swapped, {"now": 0.0, "events": [{"type": "A"}, {"type": "B"}]}) is not None  # order
    assert json_difference({"now": 0.0, "events": []}, {"now": 0.0, "events": [], "x": 1}) is not None  # keys
    assert json_difference({"a": "0-3"}, {"a": "0"}) == "msg.a: '0-3' != '0'"
    assert json_difference({"a": True}, {"a": 1}) is not None  # a boolean is not the number 1


@given(st.floats(min_value=-1e7, max_value=1e7, allow_nan=False))
def test_json_difference_compares_numbers_exactly(value):
    """The engine sends Batsim's printed times: numbers must be equal, not close."""
    assert json_difference({"t": value}, {"t": value}) is None
    assert json_difference({"t": value + max(abs(value), 1.0) * 1e-15}, {"t": value}) is not None
