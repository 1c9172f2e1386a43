"""The smaller subcommands as a user runs them: sessions, platform, analyze, campaign help."""

from __future__ import annotations

import json

import pandas as pd

from batreplay.cli import main
from batreplay.platforms.reader import read_platform
from batreplay.replay.session_graph import load_session_graphs
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def test_sessions_command_writes_reusable_graphs(tmp_path, capsys):
    out = tmp_path / "sessions"
    assert main(["sessions", "--workload", str(KTH), "--method", "arrival", "--threshold", "60",
                 "--max-jobs", "2000", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "session rule a60" in printed and "think time" in printed
    graphs = load_session_graphs(out)
    assert sum(g.nb_jobs for g in graphs.values()) == 2000
    per_user = pd.read_csv(out / "statistics_per_user.csv")
    assert per_user["nb_jobs"].sum() == 2000
    assert json.loads((out / "statistics.json").read_text())

    # the directory is accepted by a feedback run of the same jobs, with the same result as the rule itself
    from_dir = tmp_path / "from-dir"
    from_rule = tmp_path / "from-rule"
    common = ["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "easy", "--max-jobs", "2000",
              "--replay", "feedback", "--quiet"]
    assert main([*common, "--sessions", str(out), "--out", str(from_dir)]) == 0
    assert main([*common, "--sessions", "a60", "--out", str(from_rule)]) == 0
    assert (from_dir / "out_jobs.csv").read_bytes() == (from_rule / "out_jobs.csv").read_bytes()


def test_platform_command_with_variants(tmp_path, capsys):
    target = tmp_path / "cluster.xml"
    assert main(["platform", "--nodes", "12", "--speed", "2e9", "--out", str(target), "--variants"]) == 0
    assert capsys.readouterr().out.count("wrote ") == 5
    written = sorted(tmp_path.glob("cluster*.xml"))
    assert [p.name for p in written] == ["cluster-nodes-div2.xml", "cluster-nodes-x2.xml", "cluster-speed-div2.xml",
                                         "cluster-speed-x2.xml", "cluster.xml"]
    base = read_platform(target)
    assert base.nb_compute == 12 and set(base.speeds) == {2e9}
    assert [h.name for h in base.hosts][:3] == ["node_00", "node_01", "node_02"]
    sizes = {path.name: (read_platform(path).nb_compute, read_platform(path).speeds[0]) for path in written}
    assert sizes == {"cluster.xml": (12, 2e9), "cluster-nodes-x2.xml": (24, 2e9), "cluster-nodes-div2.xml": (6, 2e9),
                     "cluster-speed-x2.xml": (12, 4e9), "cluster-speed-div2.xml": (12, 1e9)}


def test_analyze_command_on_a_run(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "fcfs", "--max-jobs", "500",
                 "--out", str(run_dir), "--quiet"]) == 0
    report = tmp_path / "report"
    assert main(["analyze", str(run_dir), "--out", str(report)]) == 0
    metrics = pd.read_csv(report / "metrics.csv")
    assert len(metrics) == 1 and metrics["nb_jobs"].iloc[0] == 500
    assert (report / "report.html").is_file()
