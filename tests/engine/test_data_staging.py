"""Storage mappings and data staging on the embedded engine: the storage host a label names, checked mappings, the
jobs Batsim 4.2.1 aborts on, SimGrid's own loopback for a host without a route to itself, and (slow) the same on a
real Batsim. Exactness against a real Batsim, message by message: recorded case ``staging-mapping``
(``test_recorded_cases.py``, ``test_real_batsim_recorded.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.options import EngineError
from batreplay.engine.profiles import UnsupportedProfileError
from batreplay.engine.simulator import BatsimEngine
from batreplay.platforms.network import SIMGRID_LOOPBACK
from batreplay.platforms.reader import read_platform
from test_engine_properties import FirstFit

#: Four compute hosts (I/O links of 1e8 and 2e8 B/s), storage hosts ``scratch`` (id 4, link of 1.5e8 B/s) and
#: ``storage`` (id 5, link of 2.5e8 B/s; Batsim numbers storage hosts by name too), routes from every node to each
#: and between the two, none from a storage host to itself.
PLATFORM = Path(__file__).resolve().parents[1] / "golden" / "staging-mapping" / "platform.xml"


class Mapped(FirstFit):
    """FirstFit giving every job the storage mapping :attr:`mapping` (pybatsim sends ``job.storage_mapping``)."""

    mapping: object = {"pfs": 4, "scratch": 5}

    def onJobSubmission(self, job):
        job.storage_mapping = self.mapping
        super().onJobSubmission(job)


def _run(profile, mapping, res=1):
    platform = read_platform(PLATFORM)
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts],
                          {"w0": {"jobs": [{"id": "1", "subtime": 0, "res": res, "walltime": 100, "profile": "p"}],
                                  "profiles": {"p": profile}}},
                          storage=platform.storage_resources, network=platform.network, master_host=platform.master_host)
    scheduler = Mapped()
    scheduler.mapping = mapping
    run_scheduler(engine, scheduler)
    return engine.records[0]


def test_a_staging_moves_its_bytes_between_the_storage_hosts_its_labels_map_to():
    # 3e8 bytes from storage (id 5, 2.5e8 B/s link) to scratch (id 4, 1.5e8 B/s): the scratch link is the bottleneck
    record = _run({"type": "data_staging", "nb_bytes": 3e8, "from": "in", "to": "out"}, {"in": 5, "out": 4})
    assert record.finish_time == pytest.approx(3e8 / 1.5e8)
    # a reader of 2e8 bytes on node 0 (1e8 B/s link) from whichever storage host its label maps to
    for storage in (4, 5):
        record = _run({"type": "parallel_homogeneous_pfs", "bytes_to_read": 2e8}, {"pfs": storage})
        assert record.finish_time == pytest.approx(2.0)
    writes = {"type": "parallel_homogeneous_pfs", "bytes_to_write": 3e8, "storage": "local"}
    assert _run(writes, {"local": 4}, res=3).finish_time == pytest.approx(3 * 3e8 / 1.5e8)  # through scratch's link
    assert _run(writes, {"local": 5}, res=3).finish_time == pytest.approx(3 * 3e8 / 2.5e8)  # through storage's


@pytest.mark.parametrize("mapping", [{"pfs": "4"}, {}, ["pfs"], {"pfs": 4.0}, None, {"pfs": 2**31}])
def test_a_storage_mapping_batsim_would_abort_on_stops_the_run_naming_the_job(mapping):
    with pytest.raises(EngineError, match=r"EXECUTE_JOB 'w0!1': storage_mapping .* must be a non-empty object of "
                                          r"storage labels and resource ids \(integers\)"):
        _run({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}, mapping)


def test_a_mapping_to_a_host_that_is_not_a_storage_host_stops_the_run_only_when_a_job_uses_it():
    with pytest.raises(EngineError, match=r"gives resource 0, not a storage host \(4-5 here; Batsim 4.2.1 aborts\)"):
        _run({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}, {"pfs": 0})
    # a computation ignores the mapping, as Batsim does
    assert _run({"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, {"pfs": 0}).finish_time == 1.0


def test_a_label_the_mapping_lacks_and_a_pfs_job_without_mapping_among_two_storage_hosts_stop_the_run():
    with pytest.raises(EngineError, match="storage label 'scratch' is not in the job's storage mapping"):
        _run({"type": "data_staging", "nb_bytes": 1e8, "from": "pfs", "to": "scratch"}, {"pfs": 4})
    platform = read_platform(PLATFORM)
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts],
                          {"w0": {"jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": 100, "profile": "p"}],
                                  "profiles": {"p": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}}}},
                          storage=platform.storage_resources, network=platform.network, master_host=platform.master_host)
    with pytest.raises(EngineError, match="without a storage mapping needs exactly one storage host"):
        run_scheduler(engine, FirstFit())


def test_a_staging_from_a_storage_host_to_itself_crosses_simgrids_loopback_and_is_refused():
    platform = read_platform(PLATFORM)
    assert platform.network.route("scratch", "scratch") == (SIMGRID_LOOPBACK,)
    with pytest.raises(UnsupportedProfileError, match="'__loopback__' is not shared as the engine plays links"):
        _run({"type": "data_staging", "nb_bytes": 1e8, "from": "pfs", "to": "pfs"}, {"pfs": 5})
    # no bytes: nothing crosses it, and Batsim gives the job its run time of 1e-5 s (recorded case staging-mapping)
    record = _run({"type": "data_staging", "nb_bytes": 0, "from": "pfs", "to": "pfs"}, {"pfs": 5})
    assert record.finish_time == 1e-5


@pytest.mark.slow
def test_real_batsim_moves_bytes_from_a_storage_host_to_itself_over_simgrids_10GBps_loopback(real_batsim, tmp_path):
    """1e8 bytes from ``scratch`` to itself take 0.01 s (10 GB/s): SimGrid's own loopback link, which the engine
    refuses (FATPIPE); the mapping comes from ``tests/probes/probeStaging.py`` (job 1: ``scratch`` -> 5, the host
    ``storage``)."""
    import json

    from batreplay.formats.out_jobs import read_out_jobs
    from batreplay.run.runner import RunSpec, run

    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": "1", "subtime": 0, "res": 1, "walltime": 100, "profile": "self"}],
        "profiles": {"self": {"type": "data_staging", "nb_bytes": 1e8, "from": "scratch", "to": "scratch"}}}))
    probe = Path(__file__).resolve().parents[1] / "probes" / "probeStaging.py"
    run(RunSpec.build(workload=workload, platform=PLATFORM, scheduler=str(probe), out_dir=tmp_path / "real",
                      engine="batsim", batsim=real_batsim))
    jobs = read_out_jobs(tmp_path / "real" / "out_jobs.csv")
    assert list(jobs["final_state"]) == ["COMPLETED_SUCCESSFULLY"] and list(jobs["execution_time"]) == [0.01]
