"""Compatibility with a real Batsim 4.2.1: the same inputs give the same out_jobs.csv, byte for byte.

The embedded engine (``batreplay run``, the default) and a real ``batsim`` next to a decision process must
behave identically; real Batsim is the reference. Each test runs the embedded engine and the real binary on
the same inputs and compares the two ``out_jobs.csv`` files line by line:

- each built-in scheduler file, started by pybatsim's own ``pybatsim`` launcher in a separate process next to
  ``batsim``, on the first 3,000 jobs of KTH-SP2 (rigid replay);
- the feedback broker (``--engine batsim --replay feedback --sessions arrival:60``: jobs reach Batsim by
  dynamic registration) on the first 3,000 jobs of KTH-SP2;
- the replays by batches behind the same broker (``--replay adjusted``, ``distribution`` with ``--model-seed 1``,
  ``fluid`` and ``schlagkamp``) on the first 3,000 jobs of KTH-SP2;
- Batsim workload JSON the golden cases do not cover: jobs with ``walltime: -1`` and jobs without a walltime
  (never killed, ``requested_time`` written as -1), ``parallel_homogeneous_total`` and ``parallel`` profiles,
  walltime kills, on hosts of two speeds;
- jobs whose duration equals their walltime: Batsim stops a ``delay`` job at its walltime, while a parallel
  task races a walltime sleep and wins only when both end in the same SimGrid step (checked without Batsim
  too, as the facts observed).

Skipped without a ``batsim`` 4.2.x on PATH; CI builds one and sets ``BATREPLAY_REQUIRE_BATSIM=1``, which turns
the skip into a failure (``conftest.find_real_batsim``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.realbatsim.pybatsim_run import run_pybatsim_next_to_batsim
from batreplay.run.runner import RunSpec, run
from conftest import GOLDEN, REPO_ROOT, WORKLOADS
from test_batsim_integration import assert_same_file

# slow: each test starts a real Batsim (left out of the README's fast loop, run by .ci/run's slow step)
pytestmark = pytest.mark.slow

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
NB_JOBS = 3000
#: Generous bound for one real-Batsim run of 3,000 jobs (a few seconds on an idle 2-core machine): a hang
#: fails the test instead of blocking the suite; it never decides a pass.
RUN_BOUND = 600.0


def _inputs(tmp_path: Path, document: dict, nodes: int) -> tuple[Path, Path]:
    """``document`` written as a Batsim workload file, and a cluster of ``nodes`` hosts at 1 Gflop/s."""
    from batreplay.platforms.generate import platform_command

    workload = tmp_path / "workload-input.json"
    workload.write_text(json.dumps(document))
    (platform,) = platform_command(nodes, 1e9, tmp_path / f"cluster-{nodes}.xml")
    return workload, Path(platform)


def _embedded_then_real(real_batsim: str, tmp_path: Path, what: str, **spec) -> Path:
    """Run ``spec`` on the embedded engine, then next to the real Batsim; assert the two out_jobs.csv files
    are the same, byte for byte; return the embedded one."""
    run(RunSpec.build(out_dir=tmp_path / "embedded", **spec))
    run(RunSpec.build(out_dir=tmp_path / "real", engine="batsim", batsim=real_batsim, **spec))
    assert_same_file(tmp_path / "embedded" / "out_jobs.csv", tmp_path / "real" / "out_jobs.csv", what)
    return tmp_path / "embedded" / "out_jobs.csv"


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "conservative"])
def test_scheduler_file_under_pybatsim_launcher_equals_embedded_engine(real_batsim, scheduler, tmp_path):
    embedded = run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler=scheduler, out_dir=tmp_path / "embedded",
                           max_jobs=NB_JOBS))
    assert embedded.metrics["nb_jobs"] == NB_JOBS
    real_jobs = run_pybatsim_next_to_batsim(real_batsim, SHIPPED_PLATFORMS["kth-sp2"], tmp_path / "embedded" /
                                            "workload.json", str(REPO_ROOT / "schedulers" / f"{scheduler}.py"),
                                            tmp_path / "real", timeout=RUN_BOUND, cwd=REPO_ROOT).out_jobs
    assert_same_file(tmp_path / "embedded" / "out_jobs.csv", real_jobs, f"{scheduler}: embedded vs real Batsim")


@pytest.mark.slow
def test_feedback_broker_on_real_batsim_equals_embedded_engine(real_batsim, tmp_path):
    _embedded_then_real(real_batsim, tmp_path, "feedback a60: embedded vs real Batsim", workload=KTH,
                        platform="kth-sp2", scheduler="easy", max_jobs=NB_JOBS, replay="feedback",
                        sessions="arrival:60")
    assert json.loads((tmp_path / "real" / "run.json").read_text())["engine"] == "batsim"
    lines = (tmp_path / "real" / "out_jobs.csv").read_text().splitlines()
    assert len(lines) == NB_JOBS + 1  # header + 3,000 jobs, every one registered dynamically
    assert all(",dyn," in line for line in lines[1:])


@pytest.mark.slow
@pytest.mark.parametrize(("model", "options"), [("adjusted", {}), ("distribution", {"model_seed": 1}),
                                                ("fluid", {}), ("schlagkamp", {})],
                         ids=["adjusted", "distribution-seed1", "fluid", "schlagkamp"])
def test_batch_replay_on_real_batsim_equals_embedded_engine(real_batsim, model, options, tmp_path):
    """The replays by batches (:mod:`batreplay.replay.batch_replay`) submit through the feedback broker too: on the
    first 3,000 jobs of KTH-SP2 with EASY, real Batsim and the embedded engine write the same out_jobs.csv."""
    _embedded_then_real(real_batsim, tmp_path, f"{model}: embedded vs real Batsim", workload=KTH, platform="kth-sp2",
                        scheduler="easy", max_jobs=NB_JOBS, replay=model, timeout=RUN_BOUND, **options)
    manifest = json.loads((tmp_path / "real" / "run.json").read_text())
    assert manifest["engine"] == "batsim" and manifest["spec"]["replay"] == model
    assert all(manifest["spec"][name] == value for name, value in options.items())  # model_seed recorded
    lines = (tmp_path / "real" / "out_jobs.csv").read_text().splitlines()
    assert len(lines) == NB_JOBS + 1  # header + 3,000 jobs, every one registered dynamically
    assert all(",dyn," in line for line in lines[1:])


def _edge_workload(seed: int = 7, nb_jobs: int = 60) -> dict:
    """Jobs Batsim accepts that the golden cases do not cover: ``walltime: -1``, no walltime at all, walltimes
    that kill, and ``delay``, ``parallel_homogeneous``, ``parallel_homogeneous_total`` and ``parallel`` (no
    communication) profiles, for 4 compute hosts (2 at 1 Gflop/s, 2 at 2.5 Gflop/s)."""
    rng = np.random.default_rng(seed)
    profiles = {
        "delay": {"type": "delay", "delay": 13.25},
        "ph": {"type": "parallel_homogeneous", "cpu": 2.5e10, "com": 0},
        "pht": {"type": "parallel_homogeneous_total", "cpu": 6e10, "com": 0},
        "par": {"type": "parallel", "cpu": [1e10, 3e10], "com": [0, 0, 0, 0]},
    }
    jobs, subtime = [], 0
    for number in range(nb_jobs):
        subtime += int(rng.integers(0, 8))
        profile = str(rng.choice(list(profiles)))
        res = 2 if profile == "par" else int(rng.integers(1, 5))
        job = {"id": str(number), "subtime": subtime, "res": res, "profile": profile}
        kind = number % 4
        if kind == 0:
            job["walltime"] = -1
        elif kind == 1:
            pass  # no walltime field
        elif kind == 2:
            job["walltime"] = 1000
        else:
            job["walltime"] = float(rng.integers(5, 30))  # may stop the job at its walltime
        jobs.append(job)
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "conservative"])
def test_jobs_without_walltime_are_never_killed(scheduler, tmp_path):
    """``walltime: -1`` and an absent walltime both mean "no walltime" to Batsim: the job runs to its end and
    out_jobs.csv says ``requested_time`` -1 (analysis reads it as NaN, "no walltime")."""
    from batreplay.formats.out_jobs import read_out_jobs

    workload = tmp_path / "edge.json"
    document = _edge_workload()
    workload.write_text(json.dumps(document))
    run(RunSpec.build(workload=workload, platform=GOLDEN / "ptask" / "platform.xml", scheduler=scheduler,
                out_dir=tmp_path / "run"))
    jobs = read_out_jobs(tmp_path / "run" / "out_jobs.csv").set_index("job_id")
    unbounded = [job["id"] for job in document["jobs"] if job.get("walltime", -1) == -1]
    assert len(unbounded) == 30 and len(jobs) == len(document["jobs"])
    assert jobs.loc[unbounded, "requested_time"].isna().all()
    assert (jobs.loc[unbounded, "final_state"] == "COMPLETED_SUCCESSFULLY").all()
    raw = (tmp_path / "run" / "out_jobs.csv").read_text().splitlines()
    assert sum(",-1.000000,1,COMPLETED_SUCCESSFULLY," in line for line in raw) == 30


@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "conservative"])
def test_json_workload_edge_cases_on_real_batsim_equal_embedded_engine(real_batsim, scheduler, tmp_path):
    workload = tmp_path / "edge.json"
    workload.write_text(json.dumps(_edge_workload()))
    embedded = _embedded_then_real(real_batsim, tmp_path, f"{scheduler}: edge workload", workload=workload,
                                   platform=GOLDEN / "ptask" / "platform.xml", scheduler=scheduler)  # 2 speeds
    rows = [line.split(",") for line in embedded.read_text().splitlines()[1:]]
    header = embedded.read_text().splitlines()[0].split(",")
    requested, state = header.index("requested_time"), header.index("final_state")
    no_walltime = [row for row in rows if row[requested] == "-1.000000"]
    assert len(no_walltime) == 30  # jobs 0, 1, 4, 5, ...: walltime -1 or absent, written as Batsim writes them
    assert all(row[state] == "COMPLETED_SUCCESSFULLY" for row in no_walltime)
    assert any(row[state] == "COMPLETED_WALLTIME_REACHED" for row in rows)


def _walltime_equals_duration_workload() -> dict:
    """One job per (duration, profile type, width) whose duration equals its walltime exactly."""
    jobs, profiles = [], {}
    for duration in (60, 7.25, 3600, 1e5, 0.1, 1 / 3, 12345.678, 86400):
        for kind in ("parallel_homogeneous", "parallel_homogeneous_total", "delay"):
            for res in (1, 2, 4):
                name = f"p{len(jobs)}"
                if kind == "delay":
                    profiles[name] = {"type": "delay", "delay": duration}
                else:
                    flop = duration * 1e9 * (res if kind == "parallel_homogeneous_total" else 1)
                    profiles[name] = {"type": kind, "cpu": flop, "com": 0}
                jobs.append({"id": str(len(jobs)), "subtime": 200_000 * len(jobs), "walltime": duration,
                             "res": res, "profile": name})
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


@pytest.fixture
def walltime_equal_runs(tmp_path) -> tuple[Path, Path]:
    """The workload of :func:`_walltime_equals_duration_workload` and a 4-node 1 Gflop/s platform."""
    return _inputs(tmp_path, _walltime_equals_duration_workload(), 4)


def test_walltime_equal_to_duration_kills_delay_jobs_only(walltime_equal_runs, tmp_path):
    """Observed on real Batsim 4.2.1 (next test): a ``delay`` job whose delay equals its walltime is stopped
    at the walltime (COMPLETED_WALLTIME_REACHED); a lone parallel task whose duration equals it ends in the
    same step as its walltime sleep, and wins."""
    workload, platform = walltime_equal_runs
    run(RunSpec.build(workload=workload, platform=platform, scheduler="fcfs", out_dir=tmp_path / "embedded"))
    lines = (tmp_path / "embedded" / "out_jobs.csv").read_text().splitlines()
    header = lines[0].split(",")
    profile, state = header.index("profile"), header.index("final_state")
    kinds = {name: spec["type"] for name, spec in _walltime_equals_duration_workload()["profiles"].items()}
    states = [(kinds[row[profile]], row[state]) for row in (line.split(",") for line in lines[1:])]
    assert len(states) == 72
    assert all(s == ("COMPLETED_WALLTIME_REACHED" if k == "delay" else "COMPLETED_SUCCESSFULLY") for k, s in states)


def test_walltime_equal_to_duration_on_real_batsim_equals_embedded_engine(real_batsim, walltime_equal_runs,
                                                                           tmp_path):
    workload, platform = walltime_equal_runs
    _embedded_then_real(real_batsim, tmp_path, "walltime equal to duration", workload=workload,
                        platform=platform, scheduler="fcfs")


def _long_tasks_among_short_ones(seed: int = 1) -> dict:
    """Ten 210,000 s parallel tasks whose walltime is their duration, submitted while 600 shorter tasks
    come and go on 16 hosts: the many steps in between round the long tasks' remaining work so that their
    walltime sleeps end one step first (as in full KTH-SP2 EASY, jobs 5464, 7132 and 7706)."""
    rng = np.random.default_rng(seed)
    profiles = {"long": {"type": "parallel_homogeneous", "cpu": 210000e9, "com": 0}}
    jobs = [{"id": f"L{k}", "subtime": 7 * k, "walltime": 210000, "res": 1, "profile": "long"} for k in range(10)]
    subtime = 0
    for number in range(600):
        subtime += int(rng.integers(1, 601))
        profiles[f"d{number}"] = {"type": "parallel_homogeneous", "cpu": int(rng.integers(1, 3001)) * 1e9, "com": 0}
        jobs.append({"id": str(number), "subtime": subtime, "walltime": -1, "res": int(rng.integers(1, 5)),
                     "profile": f"d{number}"})
    return {"nb_res": 16, "jobs": jobs, "profiles": profiles}


@pytest.fixture
def long_tasks_run(tmp_path) -> tuple[Path, Path]:
    """The workload of :func:`_long_tasks_among_short_ones` and a 16-node 1 Gflop/s platform."""
    return _inputs(tmp_path, _long_tasks_among_short_ones(), 16)


def test_walltime_sleep_can_end_a_step_before_an_equal_parallel_task(long_tasks_run, tmp_path):
    """The race of a parallel task with its walltime is decided by SimGrid's arithmetic, not by the nominal
    durations: here every long task reaches its walltime (as real Batsim says, next test)."""
    workload, platform = long_tasks_run
    run(RunSpec.build(workload=workload, platform=platform, scheduler="fcfs", out_dir=tmp_path / "embedded"))
    lines = (tmp_path / "embedded" / "out_jobs.csv").read_text().splitlines()
    long_rows = [line for line in lines if line.startswith("L")]
    assert len(long_rows) == 10
    assert all(",COMPLETED_WALLTIME_REACHED," in line and ",210000.000000," in line for line in long_rows)


def test_long_tasks_among_short_ones_on_real_batsim_equal_embedded_engine(real_batsim, long_tasks_run, tmp_path):
    workload, platform = long_tasks_run
    _embedded_then_real(real_batsim, tmp_path, "long tasks among short ones", workload=workload,
                        platform=platform, scheduler="fcfs")


@pytest.mark.parametrize(("case", "probe"), [("sharing", "probeShare.py"), ("sharing-kth", "probeLeastLoaded.py")])
def test_compute_sharing_on_real_batsim_equals_embedded_engine(real_batsim, case, probe, tmp_path):
    """``batreplay run --compute-sharing`` with a scheduler file that puts several jobs on a host (the probes of
    the recordings in ../shared/batsim-golden-sharing, used in place): real Batsim (--enable-compute-sharing) and
    the embedded engine write the same out_jobs.csv, byte for byte, which is also the recorded one (slowed and
    killed jobs, non-integer times)."""
    from conftest import GOLDEN_SHARING

    folder = GOLDEN_SHARING / case
    embedded = _embedded_then_real(real_batsim, tmp_path, f"compute sharing, {case}",
                                   workload=folder / "workload.json", platform=folder / "platform.xml",
                                   scheduler=str(folder / probe), compute_sharing=True)
    assert embedded.read_text() == (folder / "out_jobs.csv").read_text()
    manifest = json.loads((tmp_path / "real" / "run.json").read_text())
    assert manifest["spec"]["compute_sharing"] is True


def test_node_types_reach_the_decision_process_as_real_batsim_sends_them(real_batsim, tmp_path):
    """A platform of node types written by ``batreplay platform --node-types`` (cores, properties node_type and
    slots): real Batsim accepts it, and the embedded engine sends the same compute resources in SIMULATION_BEGINS
    (the host's properties with role "" added, its cluster's as zone properties) and writes the same out_jobs.csv."""
    from batreplay.engine.simulate import EngineSpec, simulate
    from batreplay.platforms.node_types import NodeType
    from batreplay.platforms.reader import read_platform
    from batreplay.platforms.generate import write_platform
    from batreplay.schedulers.registry import load_scheduler

    platform = write_platform(tmp_path / "typed.xml", node_types=[
        NodeType("fat", 3, 2.5e9, cores=8, slots=16), NodeType("thin", 9, 1e9)])
    assert read_platform(platform).node_types == {"fat": [0, 1, 2], "thin": list(range(3, 12))}
    document = _edge_workload()
    document["nb_res"] = 12
    firsts = {}
    for engine in ("embedded", "batsim"):
        requests = []
        simulate(platform, document, load_scheduler("easy"), tmp_path / engine,
                 engine=EngineSpec(engine, batsim=real_batsim), on_request=requests.append, through_pybatsim=True)
        firsts[engine] = requests[0]["events"][0]["data"]["compute_resources"]
    assert firsts["embedded"] == firsts["batsim"]
    assert firsts["batsim"][0]["properties"] == {"node_type": "fat", "role": "", "slots": "16",
                                                 "speed": "2500000000.0"}
    assert firsts["batsim"][5]["zone_properties"] == {"node_type": "thin", "slots": "1", "speed": "1000000000.0"}
    assert_same_file(tmp_path / "embedded" / "out_jobs.csv", tmp_path / "batsim" / "out_jobs.csv", "node types")


def test_compute_sharing_on_kth_jobs_equals_real_batsim(real_batsim, tmp_path):
    """Heavier sharing than the recordings: the first 3,000 jobs of KTH-SP2 on its 100 nodes, each started on
    submission on the least loaded nodes (the probe of golden sharing-kth, used in place), so that dozens of wide
    jobs overlap: the embedded engine's bottleneck solver and real Batsim's SimGrid write the same out_jobs.csv."""
    from conftest import GOLDEN_SHARING

    embedded = _embedded_then_real(real_batsim, tmp_path, "compute sharing, KTH-SP2 3,000 jobs, least loaded",
                                   workload=KTH, max_jobs=NB_JOBS, platform="kth-sp2",
                                   scheduler=str(GOLDEN_SHARING / "sharing-kth" / "probeLeastLoaded.py"),
                                   compute_sharing=True)
    rows = embedded.read_text().splitlines()[1:]
    assert len(rows) == NB_JOBS
    assert sum(",COMPLETED_WALLTIME_REACHED," in row for row in rows) > 100  # slowed past their walltime


LCG = WORKLOADS / "LCG.swf.gz"


@pytest.mark.parametrize("strategy", ["least-loaded", "fastest-first", "random"])
def test_job_slots_and_node_selection_on_real_batsim_equal_embedded_engine(real_batsim, strategy, tmp_path):
    """EASY placing the one-slot jobs of the LCG grid log (first 3,000) on the job slots of three node types
    (4, 8 and 16 slots per node), chosen by a load-balancing strategy, under compute sharing: real Batsim and the
    embedded engine write the same out_jobs.csv; jobs wait (the platform has 72 slots)."""
    from batreplay.formats.out_jobs import read_out_jobs
    from batreplay.platforms.generate import write_platform
    from batreplay.platforms.node_types import NodeType

    platform = write_platform(tmp_path / "grid.xml", node_types=[
        NodeType("old", 4, 1e9, cores=4), NodeType("mid", 3, 2e9, cores=8), NodeType("new", 2, 3e9, cores=16)])
    embedded = _embedded_then_real(real_batsim, tmp_path, f"job slots, {strategy}", workload=LCG, max_jobs=NB_JOBS,
                                   platform=platform, scheduler="easy", compute_sharing=True,
                                   scheduler_options={"slots": True, "node_selection": strategy, "seed": 1})
    jobs = read_out_jobs(embedded)
    assert len(jobs) == NB_JOBS and (jobs["final_state"] != "REJECTED").all()
    assert jobs["waiting_time"].max() > 3600


@pytest.mark.parametrize("extra_flop", [3, 8, 20])
def test_leftover_task_under_compute_sharing_equals_real_batsim(real_batsim, extra_flop, tmp_path):
    """Job 0's walltime ends a few ns before its parallel task, which goes on until the executor's JOB_COMPLETED is
    received: with 8 extra flop the task ends in the very step of that reception (the case that once made the
    engine take the task off its host twice). Under compute sharing, both engines give the same out_jobs.csv."""
    document = {"nb_res": 2, "profiles": {
        "pa": {"type": "parallel_homogeneous", "cpu": 100 * 10**9 + extra_flop, "com": 0},
        "pb": {"type": "parallel_homogeneous", "cpu": 5 * 10**9, "com": 0}}, "jobs": [
        {"id": "0", "subtime": 0, "walltime": 100, "res": 1, "profile": "pa"},
        {"id": "1", "subtime": 0, "walltime": 100, "res": 1, "profile": "pb"},
        {"id": "2", "subtime": 0, "walltime": -1, "res": 2, "profile": "pb"}]}
    workload, platform = _inputs(tmp_path, document, 2)
    _embedded_then_real(real_batsim, tmp_path, f"leftover task, {extra_flop} extra flop", workload=workload,
                        platform=platform, scheduler="fcfs", compute_sharing=True)


@pytest.mark.parametrize("sharing", [False, True])
def test_jobs_with_nothing_to_compute_equal_real_batsim(real_batsim, sharing, tmp_path):
    """Parallel tasks of 0 flop (a JSON workload may have them): they end in the step they start, on both engines,
    with or without compute sharing (the engine once waited for them forever when they ended beside another
    activity)."""
    document = {"nb_res": 2, "profiles": {
        "zero": {"type": "parallel_homogeneous", "cpu": 0, "com": 0},
        "one": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}, "jobs": [
        {"id": "0", "subtime": 0, "walltime": 100, "res": 1, "profile": "zero"},
        {"id": "1", "subtime": 0, "walltime": 100, "res": 1, "profile": "zero"},
        {"id": "2", "subtime": 0, "walltime": -1, "res": 2, "profile": "one"},
        {"id": "3", "subtime": 5, "walltime": 100, "res": 2, "profile": "zero"}]}
    workload, platform = _inputs(tmp_path, document, 2)
    embedded = _embedded_then_real(real_batsim, tmp_path, f"0-flop tasks, sharing {sharing}", workload=workload,
                                   platform=platform, scheduler="fcfs", compute_sharing=sharing)
    assert embedded.read_text().count("COMPLETED_SUCCESSFULLY") == 4


def test_coscheduling_scheduler_under_compute_sharing_equals_real_batsim(real_batsim, tmp_path):
    """easy-coscheduling (its speedup predictions from the table of expe/speedups/two-classes.csv, classes by
    requested nodes) on the first 3,000 jobs of KTH-SP2 under compute sharing: it puts jobs on partly used nodes,
    SimGrid shares their flop rate, and real Batsim and the embedded engine write the same out_jobs.csv."""
    table = REPO_ROOT / "expe" / "speedups" / "two-classes.csv"
    options = {"speedup_model": "table", "threshold": 1.0, "speedup_options": {
        "table": str(table), "class_rule": {"field": "res", "threshold": 4, "below": "compute", "above": "memory"}}}
    embedded = _embedded_then_real(real_batsim, tmp_path, "easy-coscheduling under compute sharing, KTH-SP2",
                                   workload=KTH, max_jobs=NB_JOBS, platform="kth-sp2", scheduler="easy-coscheduling",
                                   scheduler_options=options, compute_sharing=True)
    from batreplay.formats.out_jobs import read_out_jobs

    from procset import ProcSet

    jobs = read_out_jobs(embedded)
    assert len(jobs) == NB_JOBS and (jobs["final_state"] != "REJECTED").all()
    events = []  # (time, 0 end / 1 start, job, nodes): ends first at one instant
    for row in jobs.itertuples():
        nodes = list(ProcSet.from_str(row.allocated_resources))
        events += [(row.starting_time, 1, row.job_id, nodes), (row.finish_time, 0, row.job_id, nodes)]
    memory = set(jobs.loc[jobs["requested_number_of_resources"] >= 4, "job_id"])
    on_node: dict[int, set] = {}
    shared = 0  # a start beside a job already on the node
    for _time, start, job_id, nodes in sorted(events, key=lambda e: (e[0], e[1])):
        for node in nodes:
            here = on_node.setdefault(node, set())
            if not start:
                here.discard(job_id)
                continue
            assert len(here) < 2, f"{job_id} is a third job on node {node}"  # jobs_per_node = 2
            for other in here:  # at threshold 1.0 only a compute and a memory job pair up
                assert (job_id in memory) != (other in memory), f"{job_id} and {other} share node {node}"
                shared += 1
            here.add(job_id)
    assert shared > 50


@pytest.mark.parametrize("scheduler", ["fcfs", "easy"])
def test_jobs_of_several_slots_on_real_batsim_equal_embedded_engine(real_batsim, scheduler, tmp_path):
    """The first 3,000 KTH-SP2 jobs (1 to 100 nodes) on the job slots of 100 nodes of two types (60 with 2 slots,
    40 with 4), each job one slot on each of as many distinct nodes as it requests, chosen least loaded, under
    compute sharing: real Batsim and the embedded engine write the same out_jobs.csv; no job is rejected."""
    from batreplay.formats.out_jobs import read_out_jobs
    from batreplay.platforms.generate import write_platform
    from batreplay.platforms.node_types import NodeType

    platform = write_platform(tmp_path / "typed.xml", node_types=[
        NodeType("small", 60, 1e9, cores=2, slots=2), NodeType("big", 40, 1e9, cores=4, slots=4)])
    embedded = _embedded_then_real(real_batsim, tmp_path, f"jobs of several slots, {scheduler}", workload=KTH,
                                   max_jobs=NB_JOBS, platform=platform, scheduler=scheduler, compute_sharing=True,
                                   scheduler_options={"slots": True, "node_selection": "least-loaded"})
    jobs = read_out_jobs(embedded)
    assert len(jobs) == NB_JOBS and (jobs["final_state"] != "REJECTED").all()
    assert (jobs["requested_number_of_resources"] > 1).sum() > 1000


@pytest.mark.slow
def test_whole_kth_in_demand_rounds_with_reads_is_batsims(real_batsim, tmp_path):
    """Issue 27's acceptance: the whole KTH-SP2 log, each job turned into 4 demand rounds with 20 % of its run time
    reading from the storage host (Caspart et al. 2019), on 100 nodes with I/O links, gives the same out_jobs.csv on
    both engines."""
    from batreplay.platforms.generate import write_platform

    platform = write_platform(tmp_path / "kth-io.xml", 100, 1e9, io_rate=1e8)
    embedded = _embedded_then_real(real_batsim, tmp_path, "KTH-SP2 in demand rounds: embedded vs real Batsim",
                                   workload=KTH, platform=platform, scheduler="easy", demand_rounds=4, io_share=0.2,
                                   timeout=RUN_BOUND)
    # every job of the log (28,476) but the 8 of run time 0 (dropped by default) and the one without processors
    assert len(embedded.read_text().splitlines()) == 1 + 28467


def _kth_with_com(tmp_path: Path, com_of: Callable[[int], float]) -> Path:
    """The first :data:`NB_JOBS` KTH-SP2 jobs run with EASY on kth-sp2 into ``tmp_path / "base"``; returns a copy of
    their workload whose ``k``-th profile (name order) sends ``com_of(k)`` bytes between every two of its hosts."""
    base = run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=NB_JOBS,
                             out_dir=tmp_path / "base"))
    assert base.metrics["nb_jobs"] == NB_JOBS
    document = json.loads((tmp_path / "base" / "workload.json").read_text())
    for k, name in enumerate(sorted(document["profiles"])):
        document["profiles"][name]["com"] = com_of(k)
    path = tmp_path / "talking.json"
    path.write_text(json.dumps(document))
    return path


def _slowed(tmp_path: Path, embedded: Path, by: float) -> int:
    """How many jobs of ``embedded`` ran longer than in ``tmp_path / "base"`` by more than ``by`` seconds."""
    from batreplay.formats.out_jobs import read_out_jobs

    before, after = (read_out_jobs(path).set_index("job_id")["execution_time"]
                     for path in (tmp_path / "base" / "out_jobs.csv", embedded))
    return int(((after - before) > by).sum())


@pytest.mark.slow
def test_kth_jobs_exchanging_bytes_across_the_kth_backbone_is_batsims(real_batsim, tmp_path):
    """Issue 27: the first 3,000 jobs of KTH-SP2 on its platform (two clusters and the master's joined by one 125 MB/s
    backbone link), each job sending 50 MB between every two of its hosts (a tenth of the profiles 500 MB), give the
    same out_jobs.csv on both engines: jobs share the backbone and the private links, and the JOB_COMPLETED
    messages cross the backbone in use."""
    talking = _kth_with_com(tmp_path, lambda k: 5e8 if k % 10 == 0 else 5e7)
    embedded = _embedded_then_real(real_batsim, tmp_path, "KTH jobs exchanging bytes: embedded vs real Batsim",
                                   workload=talking, platform="kth-sp2", scheduler="easy", timeout=RUN_BOUND)
    assert _slowed(tmp_path, embedded, 1.0) > 200  # measured 246 jobs slowed down by their bytes (2026-11-28)


@pytest.mark.slow
def test_kth_jobs_on_links_with_latency_are_batsims(real_batsim, tmp_path):
    """Link latencies (issue 27): the first 3,000 jobs of KTH-SP2 on its platform with 2 ms on the backbone and
    15 us on every private link, half of them sending 5 MB between every two of their hosts (each transfer waits
    its routes' latency, then SimGrid's TCP window bounds it), the others only computing (their JOB_COMPLETED waits
    its route's latency): the same out_jobs.csv on both engines."""
    platform = tmp_path / "kth-latency.xml"
    platform.write_text(SHIPPED_PLATFORMS["kth-sp2"].read_text().replace('lat="0us"', 'lat="15us"').replace(
        '<link id="backbone" bandwidth="125MBps" latency="0us"', '<link id="backbone" bandwidth="125MBps" latency="2ms"'))
    latent = _kth_with_com(tmp_path, lambda k: 5e6 if k % 2 == 0 else 0)
    embedded = _embedded_then_real(real_batsim, tmp_path, "KTH jobs on links with latency: embedded vs real Batsim",
                                   workload=latent, platform=platform, scheduler="easy", timeout=RUN_BOUND)
    assert len(embedded.read_text().splitlines()) == 1 + NB_JOBS
    assert _slowed(tmp_path, embedded, 1e-3) > 200  # measured 286 jobs slowed by over 1 ms (2026-11-28)
