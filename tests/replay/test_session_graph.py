"""Session graphs (Madon et al. 2024, Definitions 5-6, section 3.2): reduction, think times, JSON, statistics."""

from __future__ import annotations

import json
import tempfile

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.replay.session_graph import (
    ROOT,
    SessionGraphFormatError,
    all_dependencies,
    build_session_graphs,
    count_all_dependencies,
    describe_session_graphs,
    direct_dependencies,
    load_session_graphs,
    save_session_graphs,
    user_file_name,
)
from batreplay.replay.sessions import METHODS, partition_sessions
from batreplay.workloads.swf import read_swf
from conftest import FIG1_ROWS, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
MIN = 60.0


def trace(rows):
    """Jobs from (job_id, user_id, submission_time, wait_time, run_time) tuples, seconds."""
    return pd.DataFrame(rows, columns=["job_id", "user_id", "submission_time", "wait_time", "run_time"])


def edge_set(graph):
    return {(int(s), int(t), float(w)) for s, t, w in zip(graph.dependency_source, graph.dependency_target, graph.dependency_think_time)}


# Madon et al. 2024, Fig. 1 (six jobs, four sessions at a60; times chosen by hand, minutes):
#   session 0 = j1 (0..100), j2 (30, waits 10, runs 150 -> 190); session 1 = j3 (100..300);
#   session 2 = j4 (250..270); session 3 = j5 (400..410), j6 (420..430).
FIG1 = trace(FIG1_ROWS)


def test_fig1_session_graph_a60():
    graph = build_session_graphs(partition_sessions(FIG1, "arrival", 60))[7]
    # Definition 5 pairs: 0->2 (190 <= 250), 0->3, 1->3 (300 <= 400), 2->3 (270 <= 400); not 1->2 (300 > 250).
    # 0->3 is implied by 0->2->3 and is dropped.  Think times (Definition 6) in minutes: 250-190, 400-300, 400-270.
    assert edge_set(graph) == {(0, 2, 60 * MIN), (1, 3, 100 * MIN), (2, 3, 130 * MIN)}
    assert graph.count_all_dependencies() == 4
    roots, waits = graph.root_sessions()
    # sessions 0 and 1 have no predecessor (session 1 starts while session 0 runs): root edges = recorded start
    assert roots.tolist() == [0, 1] and waits.tolist() == [0.0, 100 * MIN]
    assert graph.jobs_of(0) == [(1, 0.0), (2, 30 * MIN)]
    assert graph.jobs_of(3) == [(5, 0.0), (6, 20 * MIN)]
    assert graph.longest_path() == 3  # 0 -> 2 -> 3
    assert graph.in_degrees().tolist() == [0, 0, 1, 2] and graph.out_degrees().tolist() == [1, 1, 1, 0]
    assert graph.successors(0) == [(2, 60 * MIN)] and sorted(graph.predecessors(3)) == [(1, 100 * MIN), (2, 130 * MIN)]
    as_nx = graph.to_networkx()
    assert as_nx.edges[ROOT, 1]["think_time"] == 100 * MIN and nx.is_directed_acyclic_graph(as_nx)


def test_fig1_session_graph_a0_includes_zero_think_time():
    graph = build_session_graphs(partition_sessions(FIG1, "arrival", 0))[7]
    # one session per job, session id = job id - 1; j3 is submitted at the very second j1 ends (100 min):
    # Definition 5 uses <=, so j3 depends on j1 with think time 0.
    expected = {
        (0, 2, 0.0), (0, 3, 150 * MIN), (1, 3, 60 * MIN),  # j1->j3, j1->j4, j2->j4
        (2, 4, 100 * MIN), (3, 4, 130 * MIN),  # j3->j5, j4->j5
        (4, 5, 10 * MIN),  # j5 (ends 410) -> j6 (420); j3->j6, j4->j6 go through j5
    }
    assert edge_set(graph) == expected
    # all pairs: j1->{3,4,5,6}, j2->{4,5,6}, j3->{5,6}, j4->{5,6}, j5->{6}
    assert graph.count_all_dependencies() == 12
    roots, waits = graph.root_sessions()
    assert roots.tolist() == [0, 1] and waits.tolist() == [0.0, 30 * MIN]
    assert graph.longest_path() == 4  # j1 -> j3 -> j5 -> j6


def test_overlap_means_no_dependency_and_one_job_is_a_root():
    jobs = trace([(1, 3, 1000, 0, 500), (2, 3, 1400, 0, 10), (3, 4, 777, 5, 5)])
    graphs = build_session_graphs(partition_sessions(jobs, "arrival", 0))
    assert edge_set(graphs[3]) == set()  # job 2 submitted while job 1 runs
    assert graphs[3].root_sessions()[1].tolist() == [1000.0, 1400.0]
    single = graphs[4]
    assert single.nb_sessions == 1 and single.longest_path() == 1
    assert single.root_sessions()[1].tolist() == [777.0]


def test_time_origin_shifts_root_think_times_only():
    partition = partition_sessions(FIG1, "arrival", 60)
    graph = build_session_graphs(partition, time_origin=-60.0)[7]
    assert graph.root_sessions()[1].tolist() == [60.0, 100 * MIN + 60.0]
    assert edge_set(graph) == edge_set(build_session_graphs(partition)[7])
    with pytest.raises(ValueError, match="time_origin"):
        build_session_graphs(partition, time_origin=1.0)


def test_unknown_user_sessions_get_no_dependency():
    jobs = trace([(1, -1, 0, 0, 10), (2, -1, 100, 0, 10), (3, -1, 100, 0, 10)])
    independent = build_session_graphs(partition_sessions(jobs, "arrival", 0))[-1]
    assert independent.independent_sessions and independent.nb_dependencies == 0
    assert independent.root_sessions()[1].tolist() == [0.0, 100.0, 100.0]
    grouped = build_session_graphs(partition_sessions(jobs, "arrival", 0, unknown_user="as_one_user"))[-1]
    # jobs 2 and 3 share a session (same submission time), which depends on job 1 (ends at 10 s)
    assert edge_set(grouped) == {(0, 1, 90.0)}


def test_direct_dependencies_rejects_inconsistent_sessions():
    with pytest.raises(ValueError, match="same time"):
        direct_dependencies(np.array([0.0, 0.0]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="before it starts"):
        direct_dependencies(np.array([5.0]), np.array([4.0]))


def test_user_file_names():
    assert user_file_name(12) == "user_12.json"
    assert user_file_name(-1) == "user_unknown.json"
    for bad in (-2, 1.5, "3", True):
        with pytest.raises(ValueError):
            user_file_name(bad)


# -------------------------------------------------------------------------------------------- invariants


@st.composite
def session_intervals(draw):
    """Sessions of one user: distinct starts, finish >= start; small integers to get ties and zero lengths."""
    starts = draw(st.lists(st.integers(0, 60), min_size=0, max_size=25, unique=True))
    lengths = draw(st.lists(st.sampled_from([0, 0, 1, 2, 5, 10, 30]), min_size=len(starts), max_size=len(starts)))
    return np.array(starts, dtype=float), np.array(starts, dtype=float) + np.array(lengths, dtype=float)


def brute_force_pairs(start, finish):
    n = len(start)
    return {(i, j) for i in range(n) for j in range(n) if i != j and finish[i] <= start[j]}


@settings(max_examples=300, deadline=None)
@given(session_intervals())
def test_reduction_matches_networkx_and_keeps_reachability(intervals):
    start, finish = intervals
    pairs = brute_force_pairs(start, finish)
    source, target = all_dependencies(start, finish)
    assert set(zip(source.tolist(), target.tolist())) == pairs and len(source) == len(pairs)
    assert count_all_dependencies(start, finish) == len(pairs)
    full = nx.DiGraph(list(pairs))
    full.add_nodes_from(range(len(start)))
    assert nx.is_directed_acyclic_graph(full)
    reduced_expected = nx.transitive_reduction(full)
    source, target = direct_dependencies(start, finish)
    reduced = set(zip(source.tolist(), target.tolist()))
    assert len(reduced) == len(source)  # no duplicate edge
    assert reduced == set(reduced_expected.edges)
    ours = nx.DiGraph(list(reduced))
    ours.add_nodes_from(range(len(start)))
    assert {(u, v) for u in ours for v in nx.descendants(ours, u)} == pairs


@st.composite
def random_traces(draw):
    n = draw(st.integers(min_value=0, max_value=30))
    rows = [
        (
            job_id,
            draw(st.sampled_from([-1, 0, 1, 2])),
            draw(st.integers(0, 600)),
            draw(st.sampled_from([-1, 0, 5, 60])),
            draw(st.sampled_from([-1, 0, 1, 30, 120, 400])),
        )
        for job_id in range(1, n + 1)
    ]
    return trace(rows)


@settings(max_examples=120, deadline=None)
@given(random_traces(), st.sampled_from(METHODS), st.sampled_from([0, 1, 2]), st.sampled_from(["independent", "as_one_user"]))
def test_graph_invariants_and_json_round_trip(jobs, method, threshold, unknown_user):
    partition = partition_sessions(jobs, method, threshold, unknown_user=unknown_user)
    graphs = build_session_graphs(partition)
    sessions = partition.sessions.set_index("session_id")
    assert sorted(graphs) == sorted(jobs["user_id"].unique().tolist())
    for user_id, graph in graphs.items():
        own = sessions[sessions["user_id"] == user_id]
        assert graph.session_ids.tolist() == own.index.tolist()
        as_nx = graph.to_networkx()
        assert nx.is_directed_acyclic_graph(as_nx)
        # think time (Definition 6) >= 0 on every dependency (Observation 1)
        for s, t, w in edge_set(graph):
            assert w == own.at[t, "first_submit"] - own.at[s, "last_finish"] >= 0
        if graph.independent_sessions:
            assert graph.nb_dependencies == 0
        else:
            pairs = {(a, b) for a in own.index for b in own.index if a != b and own.at[a, "last_finish"] <= own.at[b, "first_submit"]}
            closure = {(u, v) for u in own.index for v in nx.descendants(as_nx, u)}
            assert closure == pairs  # same reachability as Definition 5
            assert graph.count_all_dependencies() == len(pairs)
            roots = set(graph.root_sessions()[0].tolist())
            assert roots == {b for b in own.index if not any(p[1] == b for p in pairs)}
            if method == "max":  # every session starts after all earlier jobs ended: a chain
                assert graph.nb_dependencies == graph.nb_sessions - 1 and graph.longest_path() == graph.nb_sessions
        assert graph.longest_path() == len(nx.dag_longest_path(as_nx.subgraph(graph.session_ids.tolist())))
        for sid in graph.session_ids.tolist():
            for job_id, offset in graph.jobs_of(sid):
                assert offset == jobs.loc[jobs["job_id"] == job_id, "submission_time"].item() - own.at[sid, "first_submit"]
    with tempfile.TemporaryDirectory() as folder:
        save_session_graphs(graphs, folder)
        assert load_session_graphs(folder) == graphs


# ------------------------------------------------------------------------------------------------ JSON format


@pytest.fixture
def saved_fig1(tmp_path):
    graphs = build_session_graphs(partition_sessions(FIG1, "arrival", 60))
    save_session_graphs(graphs, tmp_path)
    return graphs, tmp_path


def test_saved_files_follow_the_documented_format(saved_fig1):
    graphs, folder = saved_fig1
    assert sorted(p.name for p in folder.iterdir()) == ["index.json", "user_7.json"]  # no temporary file left
    index = json.loads((folder / "index.json").read_text())
    assert index["version"] == 1 and index["label"] == "a60" and index["time_unit"] == "s"
    assert index["users"] == [{"user_id": 7, "file": "user_7.json", "nb_sessions": 4, "nb_jobs": 6, "nb_dependencies": 3}]
    user = json.loads((folder / "user_7.json").read_text())
    assert user["sessions"][0] == {"session_id": 0, "first_submit": 0.0, "last_finish": 190 * MIN, "jobs": [[1, 0.0], [2, 30 * MIN]]}
    assert user["dependencies"]["think_time"] == [60 * MIN, 100 * MIN, 130 * MIN]
    assert load_session_graphs(folder / "index.json") == graphs


def _tamper(folder, name, change):
    path = folder / name
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("index.json", lambda d: d.update(version=2), r"index.json: field version"),
        ("index.json", lambda d: d["users"][0].update(file="../user_7.json"), r"index.json: field users\[0\].file"),
        ("index.json", lambda d: d["users"][0].update(nb_jobs=5), r"index.json: field users\[0\].nb_jobs"),
        ("user_7.json", lambda d: d["dependencies"]["think_time"].__setitem__(0, 1.0), r"user_7.json: field dependencies.think_time\[0\]"),
        ("user_7.json", lambda d: d["dependencies"]["target"].__setitem__(1, 99), r"user_7.json: field dependencies.target\[1\]: unknown session 99"),
        ("user_7.json", lambda d: d["sessions"][0]["jobs"][0].__setitem__(1, 5.0), r"user_7.json: field sessions\[0\].jobs\[0\]\[1\]"),
        ("user_7.json", lambda d: d["sessions"][2].update(first_submit=0.0, last_finish=10.0), r"user_7.json: field sessions\[2\].first_submit"),
        ("user_7.json", lambda d: d["sessions"][1].pop("last_finish"), r"user_7.json: field sessions\[1\].last_finish: missing"),
        ("user_7.json", lambda d: d.update(user_id=8), r"user_7.json: field user_id"),
        ("user_7.json", lambda d: d["dependencies"]["source"].__setitem__(0, 2), r"user_7.json: field dependencies.target\[0\]: session 2 depends on itself"),
        ("user_7.json", lambda d: [d["dependencies"][k].append(d["dependencies"][k][0]) for k in ("source", "target", "think_time")], r"user_7.json: field dependencies\[3\]: edge 0 -> 2 listed twice"),
        # 0 -> 3 is a Definition 5 pair (190 <= 400 min) but 0 -> 2 -> 3 implies it: not in the reduction
        ("user_7.json", lambda d: [d["dependencies"][k].append(v) for k, v in (("source", 0), ("target", 3), ("think_time", 210 * MIN))], r"user_7.json: field dependencies\[3\]: edge 0 -> 3 is redundant \(session 2 starts after 0 ends and ends before 3 starts\)"),
    ],
)
def test_load_rejects_broken_files(saved_fig1, name, change, message):
    _, folder = saved_fig1
    _tamper(folder, name, change)
    with pytest.raises(SessionGraphFormatError, match=message):
        load_session_graphs(folder)


def test_load_reports_bad_json_and_missing_files(saved_fig1):
    _, folder = saved_fig1
    (folder / "user_7.json").write_text('{"format": \n oops')
    with pytest.raises(SessionGraphFormatError, match=r"user_7.json: line 2"):
        load_session_graphs(folder)
    (folder / "user_7.json").unlink()
    with pytest.raises(FileNotFoundError):
        load_session_graphs(folder)


# ------------------------------------------------------------------------------------------------- statistics


def test_statistics_of_fig1():
    stats = describe_session_graphs(build_session_graphs(partition_sessions(FIG1, "arrival", 60)))
    row = stats.per_user.loc[7]
    assert row.to_dict() == {
        "nb_jobs": 6, "nb_sessions": 4, "nb_dependencies": 3, "nb_dependencies_unreduced": 4, "nb_root_sessions": 2,
        "longest_path": 3, "max_in_degree": 2, "max_out_degree": 1, "arity": 2,
    }
    assert stats.degree_distribution["in_degree"].tolist() == [2, 1, 1]  # two roots, one with 1, one with 2
    assert stats.degree_distribution["out_degree"].tolist() == [1, 3, 0]  # one sink, three with 1 successor
    assert sorted(stats.think_times.tolist()) == [60 * MIN, 100 * MIN, 130 * MIN]
    assert stats.think_time_summary["median"] == 100 * MIN
    assert stats.think_time_summary["share_below_1h"] == 0.0  # 60 min is not below 1 h
    assert stats.think_time_summary["share_below_10h"] == 1.0
    text = stats.summary()
    assert "1 users, 6 jobs, 4 sessions" in text and "3 direct (4 before transitive reduction)" in text
    json.dumps(stats.to_dict())  # plain data


def test_statistics_of_empty_trace():
    stats = describe_session_graphs(build_session_graphs(partition_sessions(trace([]), "arrival", 60)))
    assert len(stats.per_user) == 0 and "no dependency" in stats.summary()


# --------------------------------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def kth_graphs(workloads_dir):
    jobs = read_swf(KTH).jobs
    return {spec: build_session_graphs(partition_sessions(jobs, "arrival", threshold)) for spec, threshold in (("a0", 0), ("a60", 60))}


def test_kth_think_time_shares_match_the_paper(kth_graphs):
    # Madon et al. 2024, section 7.2: "75% of edges have a think time < 10 h and 35% are < 1 h for a0, while
    # 50% of think times are < 10 h and around 13% are < 1 h with a60".
    paper = {"a0": (0.35, 0.75), "a60": (0.13, 0.50)}
    for spec, (below_1h, below_10h) in paper.items():
        summary = describe_session_graphs(kth_graphs[spec]).think_time_summary
        assert summary["share_below_1h"] == pytest.approx(below_1h, abs=0.03)
        assert summary["share_below_10h"] == pytest.approx(below_10h, abs=0.03)


def test_kth_structure(kth_graphs):
    a0, a60 = (describe_session_graphs(kth_graphs[s]).per_user for s in ("a0", "a60"))
    assert len(a0) == len(a60) == 214
    # section 7.2: "there is no graph with an arity greater than 11" with a60; a60 reduces sessions and paths
    assert a60["arity"].max() <= 11 < a0["arity"].max()
    assert (a60["nb_sessions"] <= a0["nb_sessions"]).all() and (a60["longest_path"] <= a0["longest_path"]).all()
    assert (a0["longest_path"] <= a0["nb_sessions"]).all()
    for per_user in (a0, a60):
        assert (per_user["nb_dependencies"] <= per_user["nb_dependencies_unreduced"]).all()
        assert per_user["nb_dependencies"].sum() < per_user["nb_dependencies_unreduced"].sum() / 10


def test_sdsc_a60_arity_within_the_paper_bound(workloads_dir):
    # Madon et al. 2024, section 7.2: with a60 "there is no graph with an arity greater than 11" (KTH and SDSC-SP2;
    # the paper used SDSC-SP2 version 4, this is the cleaned 4.2, so only the bound is checked).
    jobs = read_swf(WORKLOADS / "SDSC-SP2-1998-4.2-cln.swf.gz").jobs
    partition = partition_sessions(jobs, "arrival", 60)
    # cancelled jobs of this log have run time -1 (status 5): counted, not dropped
    assert partition.anomalies["unknown_run_time"] == int((jobs["run_time"] < 0).sum()) > 0
    assert partition.sessions["nb_jobs"].sum() == len(jobs)
    per_user = describe_session_graphs(build_session_graphs(partition)).per_user
    assert per_user["arity"].max() <= 11


def test_kth_reduction_matches_networkx_on_real_users(kth_graphs):
    graphs = kth_graphs["a60"]
    checked = 0
    for graph in graphs.values():
        if not 20 <= graph.nb_sessions <= 150:
            continue
        source, target = all_dependencies(graph.first_submit, graph.last_finish)
        full = nx.DiGraph(list(zip(graph.session_ids[source].tolist(), graph.session_ids[target].tolist())))
        full.add_nodes_from(graph.session_ids.tolist())
        expected = set(nx.transitive_reduction(full).edges)
        assert set(zip(graph.dependency_source.tolist(), graph.dependency_target.tolist())) == expected
        checked += 1
    assert checked >= 20


def test_kth_json_round_trip(kth_graphs, tmp_path):
    graphs = kth_graphs["a60"]
    save_session_graphs(graphs, tmp_path)
    assert len(list(tmp_path.glob("user_*.json"))) == 214
    assert load_session_graphs(tmp_path) == graphs
