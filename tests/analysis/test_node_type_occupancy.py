"""Occupancy per node type (analysis/node_types.py): node utilisation (Batsim's convention for a host) and slot
occupancy, by hand on the golden compute-sharing recordings and on a made-up two-type schedule; and the
``node_types.csv`` table of ``batreplay analyze``."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import GOLDEN_SHARING

from batreplay.analysis.node_types import UNTYPED, node_type_occupancy, slot_occupancy_over_time
from batreplay.formats.out_jobs import read_out_jobs, validate_out_jobs


def test_golden_sharing_hosts_and_slots():
    """Golden sharing: 4 one-slot hosts over [0, 85] s; Batsim's time_computing 158 host-seconds, while the jobs
    held 293 slot-seconds (several jobs per host)."""
    jobs = read_out_jobs(GOLDEN_SHARING / "sharing" / "out_jobs.csv")
    table = node_type_occupancy(jobs, [UNTYPED] * 4, [1] * 4, [1e9] * 4).iloc[0]
    assert (table["nodes"], table["slots"], table["nb_jobs"]) == (4, 4, 17)
    assert table["busy_node_seconds"] == pytest.approx(158.0)
    assert table["node_utilisation"] == pytest.approx(158.0 / (4 * 85.0))
    assert table["used_slot_seconds"] == pytest.approx(293.0)
    assert table["slot_occupancy"] == pytest.approx(293.0 / (4 * 85.0))


def _two_type_jobs():
    rows = []
    for job_id, sub, start, finish, alloc in ((1, 0, 0, 10, "0"), (2, 0, 5, 20, "0"), (3, 0, 10, 30, "1"),
                                              (4, 30, 30, 40, "0-1")):
        rows.append({"job_id": str(job_id), "workload_name": "w0", "profile": "p", "submission_time": float(sub),
                     "requested_number_of_resources": 2 if "-" in alloc else 1,
                     "requested_time": 100.0, "success": 1, "final_state": "COMPLETED_SUCCESSFULLY",
                     "starting_time": float(start), "execution_time": float(finish - start),
                     "finish_time": float(finish), "allocated_resources": alloc, "consumed_energy": -1.0,
                     "metadata": ""})
    return validate_out_jobs(pd.DataFrame(rows))


def test_occupancy_over_time_by_hand():
    """Same schedule as below, 10 s bins: type a (2 slots) holds 1.5 slots on average in [0, 10] (job 1 all along,
    job 2 from 5 s), 1 in [10, 20], 0 in [20, 30], 1 in [30, 40]; type b (1 slot) 0, 1, 1, 1."""
    table = slot_occupancy_over_time(_two_type_jobs(), ["a", "b"], [2, 1], 10.0)
    a = table[table["node_type"] == "a"]["slot_occupancy"].tolist()
    b = table[table["node_type"] == "b"]["slot_occupancy"].tolist()
    assert a == [0.75, 0.5, 0.0, 0.5] and b == [0.0, 1.0, 1.0, 1.0]
    assert table[table["node_type"] == "a"]["bin_start"].tolist() == [0.0, 10.0, 20.0, 30.0]


def test_two_types_by_hand():
    """Host 0 (type a, 2 slots) runs jobs 1 [0, 10] and 2 [5, 20]; host 1 (type b, 1 slot) job 3 [10, 30] after
    waiting 10 s; job 4 spans both hosts over [30, 40]. Span [0, 40]."""
    table = node_type_occupancy(_two_type_jobs(), ["a", "b"], [2, 1], [2e9, 1e9]).set_index("node_type")
    # host 0 busy [0, 20] and [30, 40]: 30 s; slots held 10 + 15 + 10 = 35 slot-seconds of 2 x 40
    assert table.loc["a", "busy_node_seconds"] == 30.0 and table.loc["a", "used_slot_seconds"] == 35.0
    assert table.loc["a", "slot_occupancy"] == 35.0 / 80.0 and table.loc["a", "node_utilisation"] == 30.0 / 40.0
    # host 1 busy [10, 40]: 30 s; jobs 3 and 4 waited 10 and 0 s
    assert table.loc["b", "busy_node_seconds"] == 30.0 and table.loc["b", "mean_waiting_time"] == 5.0
    assert list(table["nb_jobs"]) == [3, 2] and list(table["speed"]) == [2e9, 1e9]


def test_analyze_writes_node_types_only_for_typed_platforms(tmp_path):
    from batreplay.analysis.analyze_command import analyze
    from batreplay.platforms.generate import write_platform
    from batreplay.platforms.node_types import NodeType
    from batreplay.run.runner import RunSpec, run

    typed = write_platform(tmp_path / "typed.xml", node_types=[NodeType("big", 1, 2e9, cores=4),
                                                               NodeType("small", 2, 1e9)])
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 3, "profiles": {"p": {"type": "delay", "delay": 10}}, "jobs": [
        {"id": str(i), "subtime": i, "walltime": 100, "res": 1, "profile": "p"} for i in range(6)]}))
    run(RunSpec.build(workload=workload, platform=typed, scheduler="fcfs", out_dir=tmp_path / "slots",
                      compute_sharing=True, scheduler_options={"slots": True, "node_selection": "fastest-first"}))
    run(RunSpec.build(workload=workload, platform=write_platform(tmp_path / "plain.xml", 3, 1e9), scheduler="fcfs",
                      out_dir=tmp_path / "plain"))
    analyze([tmp_path / "slots"], tmp_path / "typed-analysis")
    table = pd.read_csv(tmp_path / "typed-analysis" / "node_types.csv")
    assert list(table["node_type"]) == ["big", "small"] and list(table["slots"]) == [4, 2]
    assert table["nb_jobs"].sum() == 6 and table.loc[0, "nb_jobs"] >= 4  # the fastest node first, 4 slots
    assert (tmp_path / "typed-analysis" / "figures" / "node_type_occupancy.png").is_file()
    assert (tmp_path / "typed-analysis" / "figures" / "waiting_times.png").is_file()
    analyze([tmp_path / "plain"], tmp_path / "plain-analysis")
    assert not (tmp_path / "plain-analysis" / "node_types.csv").exists()
    assert not (tmp_path / "plain-analysis" / "figures" / "node_type_occupancy.png").exists()


def test_a_platform_that_cannot_be_read_is_noted_not_fatal(tmp_path):
    """A Batsim output folder whose platform.xml the reader does not understand is still analysed (the number of
    resources comes from --nb-resources); only the tables per node type are missing, and the notes say why."""
    import shutil

    from batreplay.analysis.run_dir import load_run

    folder = tmp_path / "batsim-output"
    folder.mkdir()
    for name in ("out_jobs.csv", "out_schedule.csv"):
        shutil.copy(GOLDEN_SHARING / "sharing" / name, folder / name)
    text = (GOLDEN_SHARING / "sharing" / "platform.xml").read_text()
    (folder / "platform.xml").write_text(text.replace('prefix="node_"', 'topology="FAT_TREE" prefix="node_"', 1))
    run = load_run(folder, nb_resources=4)
    assert run.platform is None and run.nb_resources == 4 and run.shared_hosts
    assert any("platform not read" in note and "FAT_TREE" in note for note in run.notes)
