"""Shared by the tests of tests/replay: hand-made SWF logs and a replay driven through the replay layer's own
functions and the embedded engine (no run directory, no RunSpec)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.simulator import BatsimEngine, EngineOptions
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.platforms.generate import cluster_platform, write_platform_text
from batreplay.platforms.reader import read_platform
from batreplay.replay.broker import FeedbackBroker
from batreplay.schedulers.registry import load_scheduler
from batreplay.workloads.loading import LoadedWorkload, WorkloadOptions, load_workload


def gridka_site_model(folder: Path) -> tuple[Path, Path]:
    """The GridKa jobs of the LCG log (partitions 156-157), one type per group, fitted with seed 1 into
    ``folder/gridka.json`` (the log has no CPU times: every job only computes, what a closed replay runs), and a
    platform of 40 hosts of 1 Gflop/s, ``folder/cluster-40.xml``: ``(model, platform)``."""
    from batreplay.platforms.generate import platform_command
    from batreplay.sitemodels.fit import FitOptions, fit_site_model, save_fit
    from batreplay.sitemodels.job_types import JobTypeRule
    from conftest import WORKLOADS

    fitted = fit_site_model(WORKLOADS / "LCG.swf.gz", JobTypeRule.parse("group"),
                            FitOptions(select={"partition": [156, 157]}, seed=1))
    path, _ = save_fit(fitted, folder / "gridka.json")
    (platform,) = platform_command(40, 1e9, folder / "cluster-40.xml")
    return path, platform


def write_swf(path: Path, jobs: list[tuple[int, float, float, float]], user: int = 1) -> Path:
    """``jobs``: (job number, submission, wait, run) in seconds, one processor each, requested time 2 x run ->
    an SWF file of 18 fields per line (Feitelson's Standard Workload Format)."""
    lines = ["; MaxNodes: 4", "; MaxProcs: 4"]
    for number, submission, wait, run_time in jobs:
        fields = [number, submission, wait, run_time, 1, -1, -1, 1, 2 * run_time, -1, 1, user, 1, -1, -1, -1, -1, -1]
        lines.append(" ".join(f"{f:g}" if isinstance(f, float) else str(f) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def cluster_hosts(tmp_path: Path, nodes: int, speed: float = 1e9) -> list[tuple[str, float]]:
    """Compute hosts ``(name, flop/s)`` of a generated homogeneous cluster written under ``tmp_path``."""
    path = write_platform_text(tmp_path / f"cluster-{nodes}.xml", cluster_platform(nodes, speed))
    return [(h.name, h.speed) for h in read_platform(path).hosts]


def load(swf: Path, nodes: int) -> LoadedWorkload:
    """The SWF log converted as ``batreplay run`` does by default, checked against ``nodes`` nodes."""
    return load_workload(swf, WorkloadOptions(), nb_res=nodes)


def simulate_broker(hosts: list[tuple[str, float]], users, requests) -> pd.DataFrame:
    """Run EASY behind a feedback broker owning ``users`` on the embedded engine; out_jobs rows by job number."""
    broker = FeedbackBroker(load_scheduler("easy"), users, requests)
    return simulate_dynamic(hosts, broker)


def simulate_dynamic(hosts: list[tuple[str, float]], decision_process) -> pd.DataFrame:
    """Run a dynamic-registration decision process (a broker) on the embedded engine, as a feedback run does."""
    engine = BatsimEngine(hosts, {"w0": {"nb_res": len(hosts), "jobs": [], "profiles": {}}},
                          options=EngineOptions(dynamic_jobs=True, acknowledge_dynamic_jobs=True))
    run_scheduler(engine, decision_process)
    jobs = jobs_frame(engine.records)
    jobs.index = jobs["job_id"].astype(int)
    return jobs
