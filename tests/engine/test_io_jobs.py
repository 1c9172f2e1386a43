"""Jobs that read and write (``parallel_homogeneous_pfs``) on the embedded engine: the links solver's invariants and
whole runs on generated workloads (hypothesis). Exactness against a real Batsim: ``test_recorded_cases.py`` (cases
``pfs-easy``, ``pfs-kill``) and ``test_real_batsim_recorded.py``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.options import EngineOptions
from batreplay.engine.profiles import UnsupportedProfileError
from batreplay.engine.sharing import SharedHosts, SharedTask
from batreplay.engine.simulator import BatsimEngine
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.platforms.generate import cluster_platform, write_platform_text
from batreplay.platforms.node_types import NodeType
from batreplay.platforms.reader import read_platform
from batreplay.platforms.speedup import NoSpeedup
from test_engine_properties import FirstFit, Recorder

IO_RATES = (1e8, 1e8, 2e8, 2e8)
STORAGE_RATE = 2.5e8


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e6, 1e10), min_size=1, max_size=5).flatmap(
    lambda caps: st.tuples(st.just(caps), st.lists(st.dictionaries(st.integers(0, len(caps) - 1),
                                                                   st.floats(1.0, 1e10), min_size=1),
                                                   min_size=1, max_size=8),
                           st.lists(st.integers(0, 7), max_size=8))))
def test_no_link_carries_more_than_its_bandwidth_and_every_task_moves(case):
    capacities, amounts, removals = case
    links = SharedHosts(capacities, [1] * len(capacities))
    tasks = []
    for task_amounts in amounts:
        tasks.append(SharedTask(dict(task_amounts), solver=links))
        links.add(tasks[-1])
        _check(links, tasks, capacities)
    for index in removals:
        if index < len(tasks):
            links.remove(tasks.pop(index))
            _check(links, tasks, capacities)


def _check(links, tasks, capacities):
    for link, capacity in enumerate(capacities):
        used = sum(task.amounts.get(link, 0.0) * task.rate for task in tasks)
        assert used <= capacity * (1 + 1e-9)
    assert all(0 < task.rate < float("inf") for task in tasks)


def _io_platform(tmp_path):
    types = [NodeType(f"t{k}", 1, 1e9, io_rate=rate) for k, rate in enumerate(IO_RATES)]
    path = write_platform_text(tmp_path / "io.xml", cluster_platform(node_types=types, storage_rate=STORAGE_RATE))
    return read_platform(path)


def _engine(platform, workload, options=None):
    return BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": workload}, options=options,
                        storage=platform.storage_resources, network=platform.network,
                        master_host=platform.master_host)


@st.composite
def io_workloads(draw):
    jobs = []
    profiles = {}
    for i in range(draw(st.integers(1, 12))):
        read, write = draw(st.integers(0, 4)) * 5e7, draw(st.integers(0, 4)) * 5e7
        name = f"io{i}"
        profiles[name] = {"type": "parallel_homogeneous_pfs", "bytes_to_read": read, "bytes_to_write": write}
        jobs.append({"id": str(i), "subtime": draw(st.integers(0, 10)), "res": draw(st.integers(1, 4)),
                     "walltime": draw(st.sampled_from([-1, 100])), "profile": name})
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(io_workloads())
def test_runs_of_readers_and_writers_keep_time_and_link_capacities(tmp_path, workload):
    platform = _io_platform(tmp_path)
    recorder = Recorder()
    engine = _engine(platform, workload)
    run_scheduler(engine, FirstFit(), on_request=recorder)
    out = jobs_frame(engine.records)
    assert recorder.nows == sorted(recorder.nows)  # time never goes back
    assert sorted(out["job_id"]) == sorted(j["id"] for j in workload["jobs"])  # every job ends once
    assert (out["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    moved_on_storage = 0.0
    for row in out.itertuples():
        profile = workload["profiles"][row.profile]
        per_host = profile["bytes_to_read"] + profile["bytes_to_write"]
        hosts = list(ProcSet.from_str(str(row.allocated_resources)))
        # no job moves its bytes faster than its own links allow (times are printed with six decimals)
        slowest_link = max(per_host / IO_RATES[h] for h in hosts)
        assert row.execution_time >= max(slowest_link, per_host * len(hosts) / STORAGE_RATE) - 1e-6
        moved_on_storage += per_host * len(hosts)
    span = out["finish_time"].max() - out["starting_time"].min()
    assert moved_on_storage <= STORAGE_RATE * span * (1 + 1e-9) + 1e-6 * STORAGE_RATE  # the storage link's capacity


def test_readers_are_refused_where_the_engine_cannot_play_them(tmp_path):
    workload = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": 10, "profile": "r"}],
                "profiles": {"r": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}}}
    with pytest.raises(UnsupportedProfileError, match="routes are unknown"):
        BatsimEngine([(f"node_{k}", 1e9) for k in range(4)], {"w0": workload})
    with pytest.raises(UnsupportedProfileError, match="jobs are co-scheduled"):
        _engine(_io_platform(tmp_path), workload, EngineOptions(speedup_model=NoSpeedup()))
    _engine(_io_platform(tmp_path), workload, EngineOptions(compute_sharing=True))  # played: case pfs-slots
    unused = dict(workload, jobs=[])  # a profile no job uses is dropped as Batsim drops it, never refused
    BatsimEngine([(f"node_{k}", 1e9) for k in range(4)], {"w0": unused})


def test_io_profile_refusals_name_the_reason(tmp_path):
    from batreplay.engine.profiles import InvalidProfileError, validate_profile

    for profile, words in (({"type": "parallel_homogeneous_pfs"}, "neither 'bytes_to_read' nor 'bytes_to_write'"),
                           ({"type": "parallel_homogeneous_pfs", "bytes_to_read": "1e8"}, "must be a number of bytes"),
                           ({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1, "storage": 3},
                            "'storage' must be a storage label")):
        with pytest.raises(InvalidProfileError, match=words):
            validate_profile("p", profile)
    # Batsim reads 'host' only when 'storage' is absent
    validate_profile("p", {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1, "storage": "pfs", "host": 3})
    types = [NodeType(f"t{k}", 1, 1e9, io_rate=rate) for k, rate in enumerate(IO_RATES)]
    text = cluster_platform(node_types=types, storage_rate=STORAGE_RATE)
    latent = read_platform(write_platform_text(tmp_path / "latent.xml", text.replace(
        '<link id="storage_io" bandwidth="250000000.0Bps" latency="0us"',
        '<link id="storage_io" bandwidth="250000000.0Bps" latency="1ms"')))
    workload = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": 10, "profile": "r"}],
                "profiles": {"r": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}}}
    engine = _engine(latent, workload)  # a latency is played: 1 ms, then 1e8 bytes at the node's 1e8 B/s
    run_scheduler(engine, FirstFit())
    assert engine.records[0].finish_time == pytest.approx(1.001, abs=1e-9)


def test_a_reader_registered_by_the_decision_process_is_refused_without_routes():
    engine = BatsimEngine([("node_0", 1e9)], {"w0": {"nb_res": 1, "jobs": [], "profiles": {}}},
                          options=EngineOptions(dynamic_jobs=True))
    engine.next_request()
    with pytest.raises(UnsupportedProfileError, match="routes are unknown"):
        engine.apply_reply({"now": 0.0, "events": [{"timestamp": 0.0, "type": "REGISTER_PROFILE", "data": {
            "workload_name": "dyn", "profile_name": "r",
            "profile": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}}}]})
        engine.next_request()
