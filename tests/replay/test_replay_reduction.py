"""The transitive reduction of session graphs is part of the feedback model (Madon, Da Costa, Pierson 2024,
Definitions 5-6 and Algorithm 1): a hand-made log where one redundant edge moves a submission, end to end."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from batreplay.replay.feedback import ThinkTimeUsers
from batreplay.replay.feedback_setup import feedback_users, job_requests
from batreplay.replay.protocol import ReplayError
from batreplay.replay.registry import ReplaySpec, replay_decision_process
from batreplay.replay.session_graph import SessionGraphFormatError, load_session_graphs, save_session_graphs
from batreplay.replay.session_source import session_graphs_for
from batreplay.schedulers.registry import load_scheduler
from replay_helpers import cluster_hosts, load, simulate_broker, simulate_dynamic, write_swf

# (job number, submission, wait, run), seconds; one user, one processor each. At a60 the sessions are
# S0 = {j1, j2} (last finish 2400), S1 = {j3, j4} (9000 .. 14000), S2 = {j5, j6} (15000 .. 18700).
# Definition 5 pairs: S0 -> S1, S1 -> S2 and S0 -> S2 (2400 <= 15000); the last one is redundant.
JOBS = [(1, 0, 0, 1000), (2, 1800, 0, 600), (3, 9000, 2000, 3000), (4, 10000, 0, 500), (5, 15000, 0, 100),
        (6, 18600, 0, 100)]


@pytest.fixture
def case(tmp_path):
    swf = write_swf(tmp_path / "reduction.swf", JOBS)
    return swf, load(swf, 4), cluster_hosts(tmp_path, 4)


def with_extra_edge(graphs, source: int, target: int):
    """The graphs with one more edge for user 1 (think time by Definition 6), built in memory."""
    graph = graphs[1]
    think = graph.first_submit[graph.position_of(target)] - graph.last_finish[graph.position_of(source)]
    extended = dataclasses.replace(
        graph,
        dependency_source=np.append(graph.dependency_source, source),
        dependency_target=np.append(graph.dependency_target, target),
        dependency_think_time=np.append(graph.dependency_think_time, think))
    return dataclasses.replace(graphs, graphs={1: extended})


def test_reduced_graph_submits_j5_at_13000(case):
    _swf, loaded, hosts = case
    graphs = session_graphs_for(loaded.job_table, "arrival:60")
    graph = graphs[1]
    assert [graph.jobs_of(s) for s in graph.session_ids.tolist()] == [
        [(1, 0.0), (2, 1800.0)], [(3, 0.0), (4, 1000.0)], [(5, 0.0), (6, 3600.0)]]
    edges = list(zip(graph.dependency_source.tolist(), graph.dependency_target.tolist(),
                     graph.dependency_think_time.tolist()))
    assert edges == [(0, 1, 6600.0), (1, 2, 1000.0)]
    broker, _notes = replay_decision_process(ReplaySpec("feedback", "arrival:60"), loaded.document,
                                             loaded.job_table, load_scheduler("easy"))
    jobs = simulate_dynamic(hosts, broker)
    # nothing waits on 4 nodes: S0 ends at 2400, S1 starts at 2400 + 6600 = 9000 and ends at 12000 (j3 runs
    # 9000 .. 12000, without its recorded wait), so S2 starts at 12000 + 1000
    assert jobs["waiting_time"].tolist() == [0.0] * 6
    assert jobs["submission_time"].to_dict() == {1: 0.0, 2: 1800.0, 3: 9000.0, 4: 10000.0, 5: 13000.0, 6: 16600.0}


def test_the_redundant_edge_would_submit_j5_at_15000(case):
    """Why the reduction is part of the model: with the Definition 5 edge S0 -> S2 (12600 s) kept, S2 starts
    at max(12000 + 1000, 2400 + 12600)."""
    _swf, loaded, hosts = case
    graphs = with_extra_edge(session_graphs_for(loaded.job_table, "arrival:60"), 0, 2)
    assert graphs[1].predecessors(2) == [(1, 1000.0), (0, 12600.0)]
    users = ThinkTimeUsers(graphs, origin=0.0, job_ids=[j for j, *_ in JOBS])
    jobs = simulate_broker(hosts, users, job_requests(loaded.document))
    assert jobs.loc[5, "submission_time"] == 15000.0 and jobs.loc[6, "submission_time"] == 18600.0


def test_a_graph_directory_with_the_redundant_edge_is_refused(case, tmp_path):
    _swf, loaded, _hosts = case
    folder = tmp_path / "graphs"
    save_session_graphs(session_graphs_for(loaded.job_table, "arrival:60"), folder)
    assert feedback_users(loaded.document, loaded.job_table, str(folder))[0].nb_jobs == 6  # as written: accepted
    user_file = folder / "user_1.json"
    user = json.loads(user_file.read_text())
    for key, value in (("source", 0), ("target", 2), ("think_time", 12600.0)):
        user["dependencies"][key].append(value)
    user_file.write_text(json.dumps(user))
    index = json.loads((folder / "index.json").read_text())
    index["users"][0]["nb_dependencies"] = 3
    (folder / "index.json").write_text(json.dumps(index))

    message = r"user_1.json: field dependencies\[2\]: edge 0 -> 2 is redundant \(session 1 starts after 0 ends"
    with pytest.raises(SessionGraphFormatError, match=message):
        load_session_graphs(folder)
    with pytest.raises(ReplayError, match=rf"^--sessions {folder}: {message}") as error:
        feedback_users(loaded.document, loaded.job_table, str(folder))
    assert "\n" not in str(error.value)


def test_a_graph_directory_may_leave_an_edge_out(case, tmp_path):
    """Only added edges change the model's timing silently; a left-out dependency is the file's choice."""
    _swf, loaded, hosts = case
    folder = tmp_path / "graphs"
    save_session_graphs(session_graphs_for(loaded.job_table, "arrival:60"), folder)
    user = json.loads((folder / "user_1.json").read_text())
    user["dependencies"] = {key: values[:1] for key, values in user["dependencies"].items()}  # S1 -> S2 gone
    (folder / "user_1.json").write_text(json.dumps(user))
    index = json.loads((folder / "index.json").read_text())
    index["users"][0]["nb_dependencies"] = 1
    (folder / "index.json").write_text(json.dumps(index))
    users, requests, _note = feedback_users(loaded.document, loaded.job_table, str(folder))
    jobs = simulate_broker(hosts, users, requests)
    assert jobs.loc[5, "submission_time"] == 15000.0  # S2 hangs from the root: its recorded start
