"""The direct driver of batreplay's own decision processes (batreplay.engine.direct) against pybatsim.

The embedded engine runs the built-in schedulers and the feedback broker through :class:`DirectBatsim` instead of
pybatsim's ``Batsim`` object. Both ways must be the same simulation: the same Batsim messages, in the same
grouping, and the same ``out_jobs.csv``, byte for byte. Checked here

- on every static golden case (``../shared/batsim-golden``) with every registered scheduler: the whole message
  transcript and the output file (fast loop);
- on the feedback broker (dynamic registration, CALL_ME_LATER, registration_finished) around EASY on the first
  1,500 jobs of KTH-SP2 (fast loop);
- on whole logs (KTH-SP2 with every registered scheduler, SDSC-SP2 with FCFS, EASY and conservative backfilling,
  HPC2N with EASY) and on the feedback replay of the 2024 paper (arrival sessions, 60 min) of KTH-SP2: marked
  slow;
- and that a user's scheduler, or a subclass of ours defined elsewhere, still goes through pybatsim.
"""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from batreplay.engine.direct import runs_direct
from batreplay.engine.simulate import simulate
from batreplay.platforms.generate import write_platform
from batreplay.platforms.reader import read_platform
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.replay.registry import ReplaySpec, replay_decision_process
from batreplay.run.runner import load_workload
from batreplay.run.spec import RunSpec
from batreplay.schedulers.easy import Easy
from batreplay.schedulers.registry import SCHEDULERS, load_scheduler
from batsim_doubles import PROBES_DIR
from conftest import GOLDEN, REPO_ROOT, WORKLOADS

STATIC_CASES = ("delays", "simultaneous", "ptask", "order", "kth2000")


def _both_ways(platform, workload: dict, make_decision_process, tmp_path, *, dynamic: bool = False):
    """Simulate with the direct driver, then through pybatsim; the two transcripts and out_jobs.csv bytes."""
    results = []
    for label, through_pybatsim in (("direct", False), ("pybatsim", True)):
        messages: list[dict] = []  # copied as they come: pybatsim adds its registered profiles to the first one

        def keep(message: dict) -> None:
            messages.append(copy.deepcopy(message))

        simulation = simulate(platform, workload, make_decision_process(), tmp_path / label, dynamic_jobs=dynamic,
                              on_request=keep, through_pybatsim=through_pybatsim)
        results.append((messages, simulation.out_jobs.read_bytes()))
    return results


#: Options a scheduler needs on hosts that run one job at a time (easy-coscheduling predicts with a model; with one
#: job per node it decides as easy, and its co-scheduling meets pybatsim in tests/engine/test_real_batsim_compat.py).
NEEDED_OPTIONS = {"easy-coscheduling": {"speedup_model": "none", "jobs_per_node": 1}}


@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
@pytest.mark.parametrize("case", STATIC_CASES)
def test_direct_driver_is_pybatsim_on_golden_cases(case, scheduler, tmp_path):
    workload = json.loads((GOLDEN / case / "workload.json").read_text())
    (direct_messages, direct_jobs), (pybatsim_messages, pybatsim_jobs) = _both_ways(
        GOLDEN / case / "platform.xml", workload, lambda: load_scheduler(scheduler, NEEDED_OPTIONS.get(scheduler)),
        tmp_path)
    assert direct_messages == pybatsim_messages
    assert direct_jobs == pybatsim_jobs
    assert len(direct_jobs.splitlines()) == len(workload["jobs"]) + 1


def _feedback_both_ways(log, platform: str, max_jobs: int | None, tmp_path):
    spec = RunSpec.build(workload=log, platform=platform, scheduler="easy", out_dir=tmp_path / "unused",
                         replay="feedback", sessions="arrival:60", max_jobs=max_jobs)
    platform_path = SHIPPED_PLATFORMS[platform]
    document, job_table, _ = load_workload(spec, nb_res=read_platform(platform_path).nb_compute)
    empty = {"nb_res": document["nb_res"], "jobs": [], "profiles": {}}

    def make_broker():
        broker, _ = replay_decision_process(ReplaySpec("feedback", "arrival:60"), document, job_table,
                                            load_scheduler("easy"))
        return broker

    return _both_ways(platform_path, empty, make_broker, tmp_path, dynamic=True)


def test_direct_driver_is_pybatsim_for_the_feedback_broker(tmp_path):
    (direct_messages, direct_jobs), (pybatsim_messages, pybatsim_jobs) = _feedback_both_ways(
        WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz", "kth-sp2", 1500, tmp_path)
    kinds = {event["type"] for message in direct_messages for event in message["events"]}
    assert {"JOB_SUBMITTED", "JOB_COMPLETED", "REQUESTED_CALL"} <= kinds  # registrations and wake-ups happened
    assert direct_messages == pybatsim_messages
    assert direct_jobs == pybatsim_jobs and len(direct_jobs.splitlines()) > 1400


def test_direct_driver_gives_schedulers_the_jobs_json(tmp_path):
    """easy-schedulus reads an estimate from each job's JSON object (its option ``estimate_field``): the direct
    driver hands over the same object as pybatsim, so both ways run the same schedule, and it differs from the one
    that uses walltimes as estimates."""
    workload = json.loads((GOLDEN / "kth2000" / "workload.json").read_text())
    for job in workload["jobs"]:  # an estimate of half the walltime
        job["estimate"] = job["walltime"] / 2
    outputs = []
    for options in ({"estimate_field": "estimate"}, {}):
        (direct_messages, direct_jobs), (pybatsim_messages, pybatsim_jobs) = _both_ways(
            GOLDEN / "kth2000" / "platform.xml", workload, lambda: load_scheduler("easy-schedulus", options),
            tmp_path / str(len(outputs)))
        assert direct_messages == pybatsim_messages and direct_jobs == pybatsim_jobs
        outputs.append(direct_jobs)
    assert outputs[0] != outputs[1]


def test_only_batreplays_own_decision_processes_run_directly(tmp_path):
    class Outside(Easy):  # a subclass defined outside batreplay may use any of pybatsim's API
        pass

    assert all(runs_direct(load_scheduler(name)) for name in SCHEDULERS)
    assert not runs_direct(Outside())
    assert not runs_direct(load_scheduler(PROBES_DIR / "probeDynamic.py"))
    assert not runs_direct(load_scheduler(REPO_ROOT / "schedulers" / "easy.py"))  # loaded as a user's file


def _platform(name: str, tmp_path):
    """A shipped platform, or HPC2N's machine (120 dual-processor nodes, 240 resources of 1 Gflop/s, as
    benchmarks/acceptance_checksums.sh makes it)."""
    if name in SHIPPED_PLATFORMS:
        return SHIPPED_PLATFORMS[name]
    return write_platform(tmp_path / f"{name}.xml", nodes=240, speed=1e9)


def _out_jobs_sha256(log: str, platform: str, scheduler: str, tmp_path, through_pybatsim: bool) -> str:
    platform_path = _platform(platform, tmp_path)
    spec = RunSpec.build(workload=WORKLOADS / f"{log}.swf.gz", platform=platform_path, scheduler=scheduler,
                         out_dir=tmp_path / "unused", scheduler_options=NEEDED_OPTIONS.get(scheduler, {}))
    document, _, _ = load_workload(spec, nb_res=read_platform(platform_path).nb_compute)
    out = tmp_path / ("pybatsim" if through_pybatsim else "direct")
    simulation = simulate(platform_path, document, load_scheduler(scheduler, NEEDED_OPTIONS.get(scheduler)), out,
                          through_pybatsim=through_pybatsim)
    return hashlib.sha256(simulation.out_jobs.read_bytes()).hexdigest()


#: Whole logs: KTH-SP2 with every scheduler; SDSC-SP2 and HPC2N (seven times the jobs) with the three classics, to
#: keep the suite's time in bounds (their other schedulers were checked by hand, see benchmarks/README.md).
WHOLE_LOGS = [("KTH-SP2-1996-2.1-cln", "kth-sp2", name) for name in sorted(SCHEDULERS)] + \
    [("SDSC-SP2-1998-4.2-cln", "sdsc-sp2", name) for name in ("fcfs", "easy", "conservative")] + \
    [("HPC2N-2002-2.2-cln", "hpc2n", "easy")]


@pytest.mark.slow
@pytest.mark.parametrize(("log", "platform", "scheduler"), WHOLE_LOGS)
def test_direct_driver_is_pybatsim_on_whole_logs(log, platform, scheduler, tmp_path):
    assert _out_jobs_sha256(log, platform, scheduler, tmp_path, False) == \
        _out_jobs_sha256(log, platform, scheduler, tmp_path, True)


@pytest.mark.slow
def test_direct_driver_is_pybatsim_for_the_2024_feedback_replay_of_kth(tmp_path):
    (direct_messages, direct_jobs), (pybatsim_messages, pybatsim_jobs) = _feedback_both_ways(
        WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz", "kth-sp2", None, tmp_path)
    assert len(direct_messages) == len(pybatsim_messages) > 50_000
    assert direct_jobs == pybatsim_jobs and len(direct_jobs.splitlines()) > 28_000
