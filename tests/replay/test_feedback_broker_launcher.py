"""The feedback broker started by pybatsim's own launcher (``pybatsim replay/feedbackBroker.py -o ...``)."""

from __future__ import annotations

from batsim.tools.launcher import instanciate_scheduler

from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.platforms.reader import read_platform
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.engine.inprocess import run_scheduler
from batreplay.replay.registry import ReplaySpec, replay_decision_process
from batreplay.schedulers.registry import load_scheduler
from batreplay.workloads.loading import WorkloadOptions, load_workload
from batsim_doubles import drive_engine, pybatsim_process, wait_exit
from conftest import REPO_ROOT, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
OPTIONS = {"swf": str(KTH), "sessions": "arrival:60", "scheduler": "easy", "max_jobs": 300}


def _engine() -> BatsimEngine:
    hosts = [(h.name, h.speed) for h in read_platform(SHIPPED_PLATFORMS["kth-sp2"]).hosts]
    empty = {"nb_res": 100, "jobs": [], "profiles": {}}
    return BatsimEngine(hosts, {"w0": empty}, options=EngineOptions(dynamic_jobs=True, acknowledge_dynamic_jobs=True))


def test_broker_file_over_zeromq_equals_the_in_process_broker(tmp_path):
    """pybatsim's launcher + ZeroMQ give the schedule of the broker ``batreplay run --replay feedback`` builds
    in-process (:func:`batreplay.replay.registry.replay_decision_process`)."""
    loaded = load_workload(KTH, WorkloadOptions(max_jobs=300), nb_res=100)
    in_process, _notes = replay_decision_process(ReplaySpec("feedback", "arrival:60"), loaded.document, loaded.job_table,
                                                   load_scheduler("easy"))
    reference = _engine()
    run_scheduler(reference, in_process)
    expected = jobs_frame(reference.records)
    assert len(expected) == 300

    engine = _engine()
    with pybatsim_process(str(REPO_ROOT / "replay" / "feedbackBroker.py"), tmp_path, OPTIONS) as (batsim, process):
        drive_engine(engine, batsim)
        assert wait_exit(process) == 0
    got = jobs_frame(engine.records)
    assert list(got["job_id"].astype(str)) == list(expected["job_id"].astype(str))
    assert (got["submission_time"] - expected["submission_time"]).abs().max() <= 1e-6
    assert (got["starting_time"] - expected["starting_time"]).abs().max() <= 1e-6


def test_broker_file_loads_with_pybatsim_and_needs_a_log():
    broker = instanciate_scheduler(str(REPO_ROOT / "replay" / "feedbackBroker.py"), OPTIONS)
    assert broker.users.nb_jobs == 300
    try:
        instanciate_scheduler(str(REPO_ROOT / "replay" / "feedbackBroker.py"), {})
    except ValueError as error:
        assert "swf" in str(error)
    else:
        raise AssertionError("a broker without an SWF log was accepted")


def test_broker_file_without_sessions_uses_the_default_of_feedback_replay():
    """The file's documented default (``arrival:60``): it read ``ReplaySpec.sessions``, None since a rigid replay
    takes no sessions, and failed with an AttributeError."""
    from batreplay.replay.feedbackBroker import FeedbackBroker

    without = FeedbackBroker({key: value for key, value in OPTIONS.items() if key != "sessions"})
    given = FeedbackBroker(OPTIONS)
    assert len(without.users.sessions) == len(given.users.sessions) > 0
    assert without.users.sessions.keys() == given.users.sessions.keys()
    assert without.users.next_submission_time() == given.users.next_submission_time()
