"""User models by name, the replay specification, session sources and the think-time users of a workload
(Madon, Da Costa, Pierson 2024, Algorithm 1), through the replay layer's own functions."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.formats.out_jobs_writer import write_out_jobs
from batreplay.platforms.reader import read_platform
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.replay.broker import FeedbackBroker
from batreplay.replay.feedback import ThinkTimeUsers
from batreplay.replay.feedback_setup import feedback_users, job_requests
from batreplay.replay.protocol import ReplayError, UserModel
from batreplay.replay.registry import (
    MODEL_OPTIONS,
    REGISTRY,
    USER_MODELS,
    ReplaySpec,
    UnknownUserModelError,
    UserModelEntry,
    replay_decision_process,
)
from batreplay.replay.session_source import session_graphs_for
from batreplay.schedulers.registry import load_scheduler
from batreplay.workloads.loading import WorkloadOptions, load_workload
from conftest import WORKLOADS
from replay_helpers import cluster_hosts, load, simulate_dynamic, write_swf

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
#: sha256 of out_jobs.csv of EASY on the whole KTH-SP2 log, feedback a60, embedded engine (the reference the
#: runner produced before the replay layer owned these functions).
KTH_EASY_A60_SHA256 = "94f6da365374bbc29c2317f772b7c32838ad4495a773702670310bec0876e04e"


# ------------------------------------------------------------------------------------------------ registry, spec

def test_models_are_named_once_and_rigid_builds_nothing():
    assert USER_MODELS == ("rigid", "feedback", "adjusted", "distribution", "fluid", "schlagkamp", "closed",
                           "open") == tuple(REGISTRY)
    # open: a static workload
    assert [entry.dynamic for entry in REGISTRY.values()] == [False, True, True, True, True, True, True, False]
    assert [entry.source for entry in REGISTRY.values()] == ["log"] * 6 + ["site-model", "site-model"]
    assert [name for name, entry in REGISTRY.items() if entry.uses_sessions] == ["feedback", "adjusted",
                                                                                 "distribution", "fluid", "schlagkamp"]
    assert MODEL_OPTIONS == ("model_seed", "population", "closed_jobs", "closed_duration", "open_jobs",
                             "open_duration")  # (declared by the entries: distribution's, closed's, then open's own)
    inner = load_scheduler("easy")
    assert replay_decision_process(ReplaySpec(), {"jobs": []}, None, inner) == (inner, [])


def test_replay_spec_defaults_validation_and_round_trip():
    spec = ReplaySpec()
    assert (spec.model, spec.sessions, spec.label, spec.dynamic) == ("rigid", None, "rigid", False)
    assert ReplaySpec("feedback").sessions == "arrival:60"  # the default of a model that uses sessions
    feedback = ReplaySpec("feedback", "a60")
    assert feedback.label == "a60" and ReplaySpec("feedback", "arrival:0").label == "a0"
    assert ReplaySpec(**json.loads(json.dumps(dataclasses.asdict(feedback)))) == feedback
    with pytest.raises(UnknownUserModelError, match=r"unknown user model 'thinktime'; expected one of rigid, feedback"):
        ReplaySpec("thinktime")
    assert issubclass(UnknownUserModelError, ValueError)
    for bad in ("", "arival:60", "a-5", "max:x", "last:-1"):
        with pytest.raises(ReplayError, match="--sessions"):
            ReplaySpec("feedback", bad)
    assert ReplaySpec("feedback", "graphs/kth-a60").label == "kth-a60"  # a directory: read when the replay is built


def test_think_time_users_satisfy_the_protocol(tmp_path):
    swf = write_swf(tmp_path / "log.swf", [(1, 0, 0, 100), (2, 7200, 0, 100)])
    loaded = load(swf, 1)
    users, requests, note = feedback_users(loaded.document, loaded.job_table, "a60")
    assert isinstance(users, UserModel) and isinstance(users, ThinkTimeUsers)
    assert requests == job_requests(loaded.document) and set(requests) == {1, 2}
    assert note == "feedback replay: 2 sessions (a60) for 2 jobs of 1 users; 0 jobs of the graphs not in the workload"


def eager_example():
    """The registry docstring's example of a new user model (every job at time 0), as documented."""
    from docstring_examples import docstring_example

    from batreplay.replay import registry

    return docstring_example(registry, "# replay/eager.py", "and the registry line", "eager_example")


def test_a_new_model_is_one_registry_line(tmp_path, monkeypatch):
    monkeypatch.setitem(REGISTRY, "eager", UserModelEntry("every job at time 0", eager_example().build))
    swf = write_swf(tmp_path / "log.swf", [(1, 0, 0, 100), (2, 7200, 0, 100), (3, 9000, 0, 50)])
    loaded = load(swf, 2)
    broker, notes = replay_decision_process(ReplaySpec("eager"), loaded.document, loaded.job_table,
                                            load_scheduler("easy"))
    assert isinstance(broker, FeedbackBroker) and notes == ["eager replay: 3 jobs at t = 0"]
    jobs = simulate_dynamic(cluster_hosts(tmp_path, 2), broker)
    assert jobs["submission_time"].tolist() == [0.0, 0.0, 0.0]
    assert jobs.loc[3, "starting_time"] == 100.0  # two nodes: job 3 waits for job 1


def test_a_builder_must_return_a_user_model(tmp_path, monkeypatch):
    monkeypatch.setitem(REGISTRY, "broken", UserModelEntry("no users", lambda d, t, s: (object(), {}, "")))
    loaded = load(write_swf(tmp_path / "log.swf", [(1, 0, 0, 100)]), 1)
    with pytest.raises(TypeError, match="lacks the methods"):
        replay_decision_process(ReplaySpec("broken"), loaded.document, loaded.job_table, load_scheduler("easy"))


def test_feedback_needs_an_swf_job_table():
    with pytest.raises(ReplayError, match="feedback replay needs an SWF log"):
        replay_decision_process(ReplaySpec("feedback"), {"jobs": []}, None, load_scheduler("easy"))


# ------------------------------------------------------------------------------------------------ session sources

@pytest.fixture
def small(tmp_path):
    return load(write_swf(tmp_path / "log.swf", [(1, 0, 0, 100), (2, 50, 0, 100), (3, 7200, 0, 100)]), 2)


@pytest.mark.parametrize(("sessions", "message"), [
    ("  ", r"^--sessions is empty: expected method:minutes"),
    ("arrival:x", r"^--sessions 'arrival:x': expected method:minutes .* \(the threshold 'x' is not a number of minutes\)"),
    ("arival:60", r"^--sessions 'arival:60': expected .* \(unknown method 'arival'\)"),
    ("q60", r"^--sessions 'q60': expected method:minutes"),
])
def test_bad_session_rules_are_one_line_replay_errors(small, sessions, message):
    with pytest.raises(ReplayError, match=message) as error:
        session_graphs_for(small.job_table, sessions)
    assert "\n" not in str(error.value)


def test_session_directories_missing_index_or_file(small, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ReplayError, match=r"the directory has no index.json"):
        session_graphs_for(small.job_table, str(empty))
    from batreplay.replay.session_graph import save_session_graphs

    save_session_graphs(session_graphs_for(small.job_table, "a60"), tmp_path / "g")
    (tmp_path / "g" / "user_1.json").unlink()
    with pytest.raises(ReplayError, match=r"user_1.json, listed in index.json, does not exist") as error:
        session_graphs_for(small.job_table, str(tmp_path / "g"))
    assert "Errno" not in str(error.value)


def test_rule_label_and_directory_give_the_same_users(small, tmp_path):
    from batreplay.replay.session_graph import save_session_graphs

    graphs = session_graphs_for(small.job_table, "arrival:60")
    save_session_graphs(graphs, tmp_path / "g")
    assert session_graphs_for(small.job_table, "a60") == graphs == session_graphs_for(small.job_table, str(tmp_path / "g"))
    assert session_graphs_for(small.job_table, str(tmp_path / "g" / "index.json")) == graphs


def test_graphs_of_another_log_do_not_cover_the_workload(small, tmp_path):
    from batreplay.replay.session_graph import save_session_graphs

    other = load(write_swf(tmp_path / "other.swf", [(7, 0, 0, 10), (8, 9000, 0, 10)]), 2)
    save_session_graphs(session_graphs_for(other.job_table, "a60"), tmp_path / "other")
    with pytest.raises(ReplayError, match=r"session graphs do not cover 3 jobs of the workload \(e.g. \[1, 2, 3\]\)"):
        feedback_users(small.document, small.job_table, str(tmp_path / "other"))


# ------------------------------------------------------------------------------------------------ real data

@pytest.fixture(scope="module")
def kth_loaded():
    return load_workload(KTH, WorkloadOptions(), nb_res=read_platform(SHIPPED_PLATFORMS["kth-sp2"]).nb_compute)


@pytest.mark.slow
def test_kth_easy_a60_is_byte_identical_to_the_reference(kth_loaded, tmp_path):
    platform = read_platform(SHIPPED_PLATFORMS["kth-sp2"])
    broker, _notes = replay_decision_process(ReplaySpec("feedback", "arrival:60"), kth_loaded.document, kth_loaded.job_table,
                                               load_scheduler("easy"))
    static = {"nb_res": kth_loaded.document["nb_res"], "jobs": [], "profiles": {}}
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": static}, {"w0": "workload.json"},
                          EngineOptions(dynamic_jobs=True, acknowledge_dynamic_jobs=True))
    run_scheduler(engine, broker)
    write_out_jobs(engine.records, tmp_path / "out_jobs.csv")
    assert hashlib.sha256((tmp_path / "out_jobs.csv").read_bytes()).hexdigest() == KTH_EASY_A60_SHA256
