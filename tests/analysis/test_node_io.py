"""Node I/O utilisation over time (analysis/node_io.py): bin means of the engine's recorded rates, on a table worked out
by hand and on the first SDSC-SP2 jobs in demand rounds on node types of two I/O rates, through ``batreplay run``,
``batreplay analyze``, the report and the web GUI's run page."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import WORKLOADS

from batreplay.analysis.node_io import node_io_over_time
from batreplay.cli import main
from batreplay.formats.node_io import NODE_IO_FILE
from batreplay.ui.pages import run_detail_page
from batreplay.ui.sandbox import Sandbox
from test_job_io import _component

SDSC_LOG = WORKLOADS / "SDSC-SP2-1998-4.2-cln.swf.gz"


def test_bin_means_are_the_integral_of_the_recorded_steps_over_each_bin():
    rates = pd.DataFrame({"time": [1.0, 5.0, 6.0], "node_type": ["a", "a", "b"], "read_rate": [10.0, 0.0, 4.0],
                          "write_rate": [2.0, 0.0, 0.0]})
    table = node_io_over_time(rates, {"a": 24.0, "b": float("nan")}, 0.0, 8.0, 4.0)
    a = table[table["node_type"] == "a"]
    b = table[table["node_type"] == "b"]
    assert list(a["bin_start"]) == [0.0, 4.0] and list(a["bin_end"]) == [4.0, 8.0]
    assert list(a["read_rate"]) == [7.5, 2.5]  # 10 B/s over [1, 4] then [4, 5]
    assert list(a["write_rate"]) == [1.5, 0.5]
    assert list(a["io_utilisation"]) == [9.0 / 24.0, 3.0 / 24.0]
    assert list(b["read_rate"]) == [0.0, 2.0]  # from 6 on, 4 B/s: half of the second bin
    assert b["io_utilisation"].isna().all()  # the type's I/O rate is not stated
    with pytest.raises(ValueError, match="rates.csv: line 4, column node_type: 'c' is not a node type of the run's"):
        node_io_over_time(rates.assign(node_type=["a", "a", "c"]), {"a": 1.0, "b": 1.0}, 0.0, 8.0, 4.0,
                          source="rates.csv")
    with pytest.raises(ValueError, match="bin_seconds must be > 0"):
        node_io_over_time(rates, {"a": 1.0, "b": 1.0}, 0.0, 8.0, 0.0)


def test_node_io_of_a_real_log_in_demand_rounds_gives_back_every_byte_the_jobs_read(tmp_path):
    """300 SDSC-SP2 jobs, 4 demand rounds, 30 % of their run time reading, on 64 nodes of 2e8 and 64 of 5e7
    bytes/s. Walltimes are 20 x the run time, so that every job completes and io_per_node_type.csv counts all the
    bytes read: the bins of node_io_over_time.csv, times their width, must give them back per node type."""
    types = tmp_path / "types.toml"
    types.write_text('[[node_types]]\nname = "fast-io"\ncount = 64\nspeed = 1e9\nio_rate = 2e8\n\n'
                     '[[node_types]]\nname = "slow-io"\ncount = 64\nspeed = 1e9\nio_rate = 5e7\n\n'
                     '[storage]\nrate = 3e9\n')
    assert main(["platform", "--node-types", str(types), "--out", str(tmp_path / "io.xml")]) == 0
    assert main(["run", "--workload", str(SDSC_LOG), "--platform", str(tmp_path / "io.xml"), "--scheduler", "easy",
                 "--max-jobs", "300", "--demand-rounds", "4", "--io-share", "0.3", "--reference-io-rate", "1e8",
                 "--walltime-factor", "20", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert (tmp_path / "run" / NODE_IO_FILE).is_file()
    assert main(["analyze", str(tmp_path / "run"), "--out", str(tmp_path / "analysis")]) == 0
    over_time = pd.read_csv(tmp_path / "analysis" / "node_io_over_time.csv")
    per_type = pd.read_csv(tmp_path / "analysis" / "io_per_node_type.csv").set_index("node_type")
    width = float(over_time["bin_end"].iloc[0] - over_time["bin_start"].iloc[0])
    np.testing.assert_allclose(over_time["bin_end"] - over_time["bin_start"], width)
    for name, rows in over_time.groupby("node_type"):
        assert (rows["read_rate"] * width).sum() == pytest.approx(per_type.loc[name, "bytes_read"], rel=1e-9)
        capacity = 64 * (2e8 if name == "fast-io" else 5e7)
        np.testing.assert_allclose(rows["io_utilisation"], rows["read_rate"] / capacity, rtol=1e-12)
        assert rows["io_utilisation"].between(0.0, 1.0 + 1e-9).all()
    assert over_time.groupby("node_type")["io_utilisation"].max().gt(0.01).all()
    assert (tmp_path / "analysis" / "figures" / "node_io.png").is_file()
    assert "Node I/O per node type over time" in (tmp_path / "analysis" / "report.html").read_text()
    # the web GUI's run page plots the same bins
    page = run_detail_page(tmp_path, "run", Sandbox(tmp_path, [WORKLOADS, tmp_path]))
    graph = _component(page, "node-io").figure
    assert [trace.name for trace in graph.data] == ["fast-io", "slow-io"]
    assert graph.layout.meta["quantity"] == "I/O utilisation"
    fast = over_time[over_time["node_type"] == "fast-io"]["io_utilisation"].to_numpy()
    np.testing.assert_allclose(np.asarray(graph.data[0].y, dtype=float), np.append(fast, fast[-1]))  # (+ the end)
    last_end = over_time[over_time["node_type"] == "fast-io"]["bin_end"].iloc[-1]
    assert graph.data[0].x[-1] == pytest.approx(last_end / graph.layout.meta["seconds_per_unit"])

    # a run of a real Batsim has no rates: the analysis and the run page say why
    real = tmp_path / "real"
    shutil.copytree(tmp_path / "run", real)
    (real / NODE_IO_FILE).unlink()
    manifest = json.loads((real / "run.json").read_text())
    (real / "run.json").write_text(json.dumps(manifest | {"engine": "batsim"}))
    assert main(["analyze", str(real), "--out", str(tmp_path / "analysis-real")]) == 0
    notes = json.loads((tmp_path / "analysis-real" / "metrics.json").read_text())["notes"]
    assert "node I/O over time: not recorded (a real Batsim's outputs" in json.dumps(notes)
    assert not (tmp_path / "analysis-real" / "node_io_over_time.csv").exists()
    page = run_detail_page(tmp_path, "real", Sandbox(tmp_path, [WORKLOADS, tmp_path]))
    assert "not recorded" in _component(page, "node-io-note").children

    # an embedded run without the file (made before the engine wrote it): said, not silently skipped
    older = tmp_path / "older"
    shutil.copytree(tmp_path / "run", older)
    (older / NODE_IO_FILE).unlink()
    assert main(["analyze", str(older), "--out", str(tmp_path / "analysis-older")]) == 0
    notes = json.dumps(json.loads((tmp_path / "analysis-older" / "metrics.json").read_text())["notes"])
    assert f"node I/O over time: no {NODE_IO_FILE} in the run directory" in notes
    # a rates file naming a type the platform lacks: one line naming the file, line and column
    (older / NODE_IO_FILE).write_text("time,node_type,read_rate,write_rate\n0,fast-io,1,0\n2,gpu,1,0\n")
    assert main(["analyze", str(older), "--out", str(tmp_path / "analysis-odd")]) == 0
    notes = json.dumps(json.loads((tmp_path / "analysis-odd" / "metrics.json").read_text())["notes"])
    assert f"no node I/O over time: {older / NODE_IO_FILE}: line 3, column node_type: 'gpu'" in notes

    # the rates are read whatever became of the CPU and I/O tables: workload.json gone, or unreadable
    for name, change in (("no-workload", lambda folder: (folder / "workload.json").unlink()),
                         ("bad-workload", lambda folder: (folder / "workload.json").write_text("[1, 2"))):
        folder = tmp_path / name
        shutil.copytree(tmp_path / "run", folder)
        change(folder)
        assert main(["analyze", str(folder), "--out", str(tmp_path / f"analysis-{name}")]) == 0
        again = pd.read_csv(tmp_path / f"analysis-{name}" / "node_io_over_time.csv")
        pd.testing.assert_frame_equal(again.drop(columns="run"), over_time.drop(columns="run"))
        page = run_detail_page(tmp_path, name, Sandbox(tmp_path, [WORKLOADS, tmp_path]))
        assert [trace.name for trace in _component(page, "node-io").figure.data] == ["fast-io", "slow-io"]


def test_a_folder_without_run_json_is_said_to_be_a_real_batsims_and_bad_inputs_are_named(tmp_path):
    from batreplay.analysis.node_io import run_node_io, type_io_capacity
    from batreplay.formats.node_io import NodeIoError, read_node_io
    from batreplay.platforms.generate import write_platform
    from batreplay.platforms.reader import read_platform

    class Folder:  # (what run_node_io reads of a RunData)
        path, manifest, platform = tmp_path, {}, None
        jobs = pd.DataFrame({"submission_time": [0.0], "finish_time": [1.0]})

    table, notes = run_node_io(Folder(), lambda span: 60.0, moved_bytes=True)
    assert table is None and notes == [f"node I/O over time: no {NODE_IO_FILE} and no run.json (a real Batsim's "
                                       "output folder, whose outputs do not hold the rates at which bytes moved, or "
                                       "a folder of simulate() made before the embedded engine wrote the file)"]
    assert run_node_io(Folder(), lambda span: 60.0) == (None, [])  # (jobs that moved no bytes: nothing to say)
    (tmp_path / NODE_IO_FILE).write_text("time,node_type,read_rate,write_rate\n0,a,1,0\n\n2,a,0,0\n")
    with pytest.raises(NodeIoError, match="line 3, column time: '' is not a finite number"):  # (a blank line)
        read_node_io(tmp_path / NODE_IO_FILE)
    path = write_platform(tmp_path / "io.xml", 2, 1e9, io_rate=1e8)
    path.write_text(path.read_text().replace("100000000.0", "-1e8", 1))
    with pytest.raises(ValueError, match=r"io.xml: host '\w+', property io_rate: '-1e8' is not a finite number of "
                                         r"bytes/s > 0"):
        type_io_capacity(read_platform(path))
