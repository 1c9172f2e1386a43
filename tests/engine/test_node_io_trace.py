"""Node I/O over time on the embedded engine (engine/io_trace.py, formats/node_io.py): the read and write rates of each
node type's hosts as the links solver gives them. Every byte a job reads or writes is counted once: the rates,
integrated over time, give back the bytes of the jobs' profiles (hypothesis), and no type ever moves more than its
links carry."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.simulate import simulate
from batreplay.engine.simulator import BatsimEngine
from batreplay.formats.node_io import NODE_IO_FILE, NodeIoError, read_node_io, write_node_io
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.platforms.generate import cluster_platform, write_platform, write_platform_text
from batreplay.platforms.node_types import NodeType
from batreplay.platforms.reader import read_platform
from batreplay.schedulers.registry import load_scheduler
from test_engine_properties import FirstFit
from test_io_jobs import IO_RATES, STORAGE_RATE, io_workloads

TYPES = [f"t{k}" for k in range(len(IO_RATES))]


def _platform(tmp_path, storage_rate=STORAGE_RATE):
    types = [NodeType(name, 1, 1e9, io_rate=rate) for name, rate in zip(TYPES, IO_RATES)]
    return read_platform(write_platform_text(tmp_path / "io.xml",
                                             cluster_platform(node_types=types, storage_rate=storage_rate)))


def _run(platform, workload):
    engine = BatsimEngine([(h.name, h.speed) for h in platform.hosts], {"w0": workload},
                          storage=platform.storage_resources, network=platform.network,
                          master_host=platform.master_host, host_properties=platform.host_properties)
    run_scheduler(engine, FirstFit())
    trace = engine.io_columns()
    return jobs_frame(engine.records), None if trace is None else pd.DataFrame(trace)


def _moved(trace: pd.DataFrame, column: str) -> dict[str, float]:
    """Bytes per node type: the integral of the step function ``column`` (0 after the last row is required)."""
    moved = {}
    for name, rows in trace.groupby("node_type"):
        times, rates = rows["time"].to_numpy(), rows[column].to_numpy()
        assert rates[-1] == 0.0  # every type's I/O stops with its last job
        moved[name] = float(np.sum(rates[:-1] * np.diff(times)))
    return moved


def test_a_reader_alone_reads_and_writes_at_its_link_rate_then_stops(tmp_path):
    platform = _platform(tmp_path)
    workload = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": -1, "profile": "io"}],
                "profiles": {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 3e8, "bytes_to_write": 1e8}}}
    jobs, trace = _run(platform, workload)
    # host 0 (type t0) has a 1e8 bytes/s link: 4e8 bytes in 4 s, three quarters of them read
    assert list(trace["node_type"]) == ["t0", "t0"]
    assert list(trace["read_rate"]) == [7.5e7, 0.0] and list(trace["write_rate"]) == [2.5e7, 0.0]
    assert trace["time"].iloc[1] - trace["time"].iloc[0] == pytest.approx(4.0, abs=1e-9)
    assert jobs["execution_time"].iloc[0] == pytest.approx(4.0, abs=1e-6)


def test_readers_sharing_the_storage_link_slow_down_while_they_overlap(tmp_path):
    platform = _platform(tmp_path, storage_rate=1.5e8)
    workload = {"nb_res": 4, "jobs": [{"id": str(i), "subtime": 2 * i, "res": 1, "walltime": -1, "profile": "io"}
                                      for i in range(2)],
                "profiles": {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 4e8, "bytes_to_write": 0}}}
    _, trace = _run(platform, workload)
    t0 = trace[trace["node_type"] == "t0"]["read_rate"].tolist()
    t1 = trace[trace["node_type"] == "t1"]["read_rate"].tolist()
    # alone, job 0 reads at its link's 1e8; from t = 2 the storage's 1.5e8 is shared, 7.5e7 each
    assert t0[:2] == [1e8, 7.5e7] and t1[0] == 7.5e7
    assert t0[-1] == t1[-1] == 0.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(io_workloads())
def test_every_byte_read_or_written_is_counted_once_and_no_type_moves_more_than_its_links(tmp_path, workload):
    platform = _platform(tmp_path)
    jobs, trace = _run(platform, workload)
    assert (jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    expected = {column: dict.fromkeys(TYPES, 0.0) for column in ("read_rate", "write_rate")}
    for row in jobs.itertuples():
        profile = workload["profiles"][row.profile]
        for host in ProcSet.from_str(str(row.allocated_resources)):
            expected["read_rate"][TYPES[host]] += profile["bytes_to_read"]
            expected["write_rate"][TYPES[host]] += profile["bytes_to_write"]
    if trace is None:  # no job moved a byte
        assert all(v == 0 for column in expected.values() for v in column.values())
        return
    assert (np.diff(trace["time"].to_numpy()) >= 0).all()  # time never goes back
    for column in ("read_rate", "write_rate"):
        moved = _moved(trace, column)
        for name in TYPES:
            assert moved.get(name, 0.0) == pytest.approx(expected[column][name], rel=1e-9, abs=1e-3)
    # a type's nodes never move more than their links carry (one node each here), nor all types the storage's
    total = trace["read_rate"] + trace["write_rate"]
    capacity = trace["node_type"].map(dict(zip(TYPES, IO_RATES)))
    assert (total <= capacity * (1 + 1e-9)).all()
    latest = trace.pivot_table(index="time", columns="node_type", values=["read_rate", "write_rate"],
                               aggfunc="last").ffill().fillna(0.0)
    assert (latest.sum(axis=1) <= STORAGE_RATE * (1 + 1e-9)).all()


def test_simulate_writes_the_rates_for_jobs_that_read_and_nothing_for_jobs_that_only_compute(tmp_path):
    platform = _platform(tmp_path)
    reading = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 2, "walltime": -1, "profile": "io"}],
               "profiles": {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 2e8, "bytes_to_write": 0}}}
    simulate(tmp_path / "io.xml", reading, load_scheduler("easy"), tmp_path / "reading")
    rates = read_node_io(tmp_path / "reading" / NODE_IO_FILE)
    assert list(rates["node_type"]) == ["t0", "t1", "t0", "t1"]  # (hosts 0 and 1, one of each type)
    assert list(rates["read_rate"]) == [1e8, 1e8, 0.0, 0.0]
    computing = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 2, "walltime": -1, "profile": "c"}],
                 "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}
    simulate(tmp_path / "io.xml", computing, load_scheduler("easy"), tmp_path / "computing")
    assert (tmp_path / "computing" / "out_jobs.csv").is_file()
    assert not (tmp_path / "computing" / NODE_IO_FILE).exists()
    # the same folder again, jobs that only compute: the earlier rates are not left to be read as this run's
    simulate(tmp_path / "io.xml", computing, load_scheduler("easy"), tmp_path / "reading")
    assert not (tmp_path / "reading" / NODE_IO_FILE).exists()


@pytest.mark.parametrize(("text", "message"), [
    ("time,node_type,read_rate\n0,a,1\n", "missing column(s) write_rate"),
    ("time,node_type,read_rate,write_rate\n0,a,1,0\n1,a,x,0\n", "line 3, column read_rate: 'x'"),
    ("time,node_type,read_rate,write_rate\n0,a,1,-2\n", "line 2, column write_rate: '-2'"),
    ("time,node_type,read_rate,write_rate\n5,a,1,0\n4,a,0,0\n", "line 3, column time: time goes back"),
])
def test_a_bad_rates_file_is_refused_naming_its_line_and_column(tmp_path, text, message):
    path = tmp_path / NODE_IO_FILE
    path.write_text(text)
    with pytest.raises(NodeIoError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        read_node_io(path)
    assert str(caught.value).startswith(str(path))


def test_a_long_trace_is_written_in_parts_that_read_back_as_one_table(tmp_path):
    count = 70000  # (more than two parts)
    times = np.cumsum(np.full(count, 0.1))
    columns = {"time": times, "node_type": ["a", "b"] * (count // 2), "read_rate": times * 3.0,
               "write_rate": np.zeros(count)}
    write_node_io(columns, tmp_path / NODE_IO_FILE)
    text = (tmp_path / NODE_IO_FILE).read_text()
    assert text.count("time,node_type") == 1 and text.count("\n") == count + 1
    table = read_node_io(tmp_path / NODE_IO_FILE)
    np.testing.assert_array_equal(table["time"], times)  # (full precision)
    np.testing.assert_array_equal(table["read_rate"], times * 3.0)
    assert list(table["node_type"][:3]) == ["a", "b", "a"]


def test_hosts_without_a_node_type_are_one_untyped_group(tmp_path):
    platform = read_platform(write_platform(tmp_path / "plain.xml", 4, 1e9, io_rate=1e8, storage_rate=1e9))
    workload = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 3, "walltime": -1, "profile": "io"}],
                "profiles": {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 2e8, "bytes_to_write": 1e8}}}
    _, trace = _run(platform, workload)
    # three hosts, each at its link's 1e8 bytes/s for 3 s: two thirds of it read
    assert list(trace["node_type"]) == ["(untyped)", "(untyped)"]
    assert trace["read_rate"].tolist() == pytest.approx([2e8, 0.0], rel=1e-12)
    assert trace["write_rate"].tolist() == pytest.approx([1e8, 0.0], rel=1e-12)
    assert trace["time"].iloc[1] - trace["time"].iloc[0] == pytest.approx(3.0, abs=1e-9)


@pytest.mark.parametrize("case", ["pfs-easy", "pfs-kill", "latency-pfs-kill", "pfs-slots", "latency-pfs-slots",
                                  "staging-mapping"])
def test_the_trace_follows_exactly_the_readers_and_writers_in_the_solver(case, monkeypatch):
    """Recorded cases of real Batsim runs with kills and walltimes in the middle of reads, latencies, composed rounds
    compute sharing and two storage hosts: after every change of rates, the tasks the trace sums are exactly the solver's tasks that
    read or write, and every type's rates end at 0."""
    from batsim_doubles import batsim_options, engine_for
    from golden_recording import RECORDED, case_scheduler

    from batreplay.engine.io_trace import IoTrace

    engines = []
    checks = []
    update = IoTrace.update

    def checked(self, now, tasks, gone=None):
        update(self, now, tasks, gone)
        solver = engines[0].handlers.machine.transfers.solver
        in_solver = {id(task) for tasks_on in solver.tasks_on for task in tasks_on if task.io is not None}
        summed = {key for members in self._members.values() for key in members}
        assert summed == in_solver, f"t = {now}: the trace sums other tasks than the solver's readers and writers"
        checks.append(len(summed))

    monkeypatch.setattr(IoTrace, "update", checked)
    case_dir = RECORDED / case
    engines.append(engine_for(case_dir / "platform.xml", case_dir / "workload.json", batsim_options(case_dir)))
    run_scheduler(engines[0], case_scheduler(case_dir))
    trace = engines[0].io_columns()
    assert trace is not None and max(checks) > 0
    last = pd.DataFrame(trace).groupby("node_type").last()
    assert (last["read_rate"] == 0).all() and (last["write_rate"] == 0).all()
