"""``batreplay model validate`` as a site engineer runs it: the GridKa model of the LCG log against its held-out
half, closed and open; the measured side recomputed from the log; refusals leave nothing behind."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from batreplay.cli import main
from batreplay.platforms.generate import platform_command
from batreplay.workloads.swf import read_swf
from conftest import WORKLOADS

LCG = WORKLOADS / "LCG.swf.gz"


@pytest.fixture(scope="module")
def gridka(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gridka")
    assert main(["model", "fit", str(LCG), "--job-types", "group", "--select", "partition=156,157", "--seed", "1",
                 "--out", str(folder / "gridka.json")]) == 0
    (platform,) = platform_command(300, 1e9, folder / "p300.xml")
    return folder, platform


def test_a_closed_validation_against_the_held_out_half(gridka, tmp_path, capsys):
    folder, platform = gridka
    out = tmp_path / "val"
    assert main(["model", "validate", str(folder / "gridka.json"), "--log", str(LCG), "--platform", str(platform),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "validation on the held-out jobs" in printed and "throughput (jobs/h)" in printed
    assert "2204 of 2204 test jobs record no waiting time" in printed
    document = json.loads((out / "validation.json").read_text())
    rows = {row["measure"]: row for row in document["comparisons"]}
    start, end = document["window"]
    # the measured side, from the log: held-out jobs ending in the window's whole hours (no waits recorded)
    log = read_swf(LCG).jobs.set_index("line")
    test = log.loc[pd.read_csv(folder / "gridka.test-jobs.csv")["swf_line"]]
    hours = int((end - start) // 3600)
    ends = test["submission_time"] + test["run_time"]
    assert rows["throughput"]["measured"] == pytest.approx(((ends >= start) & (ends < start + 3600 * hours)).sum()
                                                           / hours, rel=1e-12)
    # the simulated side: the whole site (population: the held-out jobs' mean number in the system over their share
    # of the jobs, 0.5), of which a random half is compared: about half its jobs ending in the window
    simulated = pd.read_csv(out / "simulation" / "out_jobs.csv")
    sim_ends = simulated["finish_time"]
    ended = ((sim_ends >= start) & (sim_ends < start + 3600 * hours)).sum()
    assert rows["throughput"]["simulated"] * hours == pytest.approx(ended / 2, abs=4 * np.sqrt(ended / 4))
    spec = json.loads((out / "simulation" / "run.json").read_text())["spec"]
    overlap = np.clip(np.minimum(ends, end) - np.maximum(test["submission_time"], start), 0, None).sum()
    assert spec["replay"] == "closed" and spec["population"] == str(round(overlap / (end - start) / 0.5))
    assert spec["out_dir"] == str(out / "simulation")  # (run in a staging folder, then moved)
    assert "the whole site simulated" in printed
    assert rows["mean waiting time"]["measured"] is None and rows["CPU efficiency"]["measured"] is None
    assert {f"share of group={g}" for g in (1, 2, 4, 6)} <= set(rows)
    assert "one schedule on one machine" in document["scope"]
    assert {p.name for p in (out / "figures").iterdir()} == {"throughput_utilisation.png", "throughput_utilisation.svg",
                                                             "run_times.png", "run_times.svg"}
    assert (out / "validation.csv").read_text().splitlines()[0].startswith("measure,unit,measured,simulated")


def test_an_open_validation_draws_at_the_held_out_jobs_rate(gridka, tmp_path):
    folder, platform = gridka
    out = tmp_path / "open"
    assert main(["model", "validate", str(folder / "gridka.json"), "--log", str(LCG), "--platform", str(platform),
                 "--mode", "open", "--seed", "3", "--out", str(out), "--warm-up", "20000"]) == 0
    document = json.loads((out / "validation.json").read_text())
    simulated = pd.read_csv(out / "simulation" / "out_jobs.csv")
    assert simulated["submission_time"].max() < document["window"][1]
    drawn = json.loads((out / "simulation" / "workload.json").read_text())
    assert len(drawn["jobs"]) == len(simulated)
    spec = json.loads((out / "simulation" / "run.json").read_text())["spec"]  # a run batreplay run can repeat
    assert (spec["replay"], spec["model_seed"], spec["workload"]) == ("open", 3, str(folder / "gridka.json"))
    assert spec["open_duration"] == pytest.approx(document["window"][1]) and not (out / "workload-drawn.json").exists()
    # about the whole site's count over the log's span (4,408 jobs), at the whole site's rate
    first_submission = document["window"][0] - 20_000
    assert len(simulated) == pytest.approx(4408 * document["window"][1] / (document["window"][1] - first_submission),
                                           rel=0.25)


@pytest.mark.parametrize(("argv", "message"), [
    (["--log", str(WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz")], "not the log LCG.swf.gz the model was fitted on"),
    (["--against", "bad.csv"], "bad.csv: expected the columns job_id,swf_line"),
    (["--scheduler", "nosuch"], "nosuch"),
    (["--mode", "open", "--population", "3"], "--population: closed runs only"),
])
def test_refusals_write_nothing(gridka, tmp_path, capsys, monkeypatch, argv, message):
    folder, platform = gridka
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.csv").write_text("id\n1\n")
    base = ["model", "validate", str(folder / "gridka.json"), "--platform", str(platform), "--out", "val"]
    if "--log" not in argv:
        base += ["--log", str(LCG)]
    with pytest.raises(SystemExit) as stop:
        main(base + argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]  # no folder, no hidden leftover


def test_held_out_cpu_times_above_the_run_time_are_cut_as_the_fit_cuts_them(tmp_path):
    """A log whose every fifth job records more CPU seconds per processor than its run time: the held-out side's
    efficiency is at most 1, as the model's (the fit cuts such CPU times to the run time), and the count is noted."""
    from batreplay.sitemodels.fit import FitOptions, fit_site_model, save_fit
    from batreplay.sitemodels.job_types import JobTypeRule
    from batreplay.sitemodels.model_file import read_model
    from batreplay.validation.sides import held_out_jobs

    rows = [f"{k} {600 * k} 10 1000 1 {1500 if k % 5 == 0 else 800} -1 1 2000 -1 1 1 1 -1 -1 -1 -1 -1"
            for k in range(1, 101)]
    log = tmp_path / "cpu.swf"
    log.write_text("; UnixStartTime: 0\n; TimeZoneString: UTC\n" + "\n".join(rows) + "\n")
    model_path, test_path = save_fit(fit_site_model(log, JobTypeRule.parse("all"), FitOptions(seed=2)),
                                     tmp_path / "m.json")
    held = held_out_jobs(read_model(model_path), model_path, log, None, 0.0)
    test_ids = pd.read_csv(test_path)["job_id"]
    cut = int((test_ids % 5 == 0).sum())
    assert cut > 0 and f"{cut} test jobs record a CPU time above their run time" in " ".join(held.notes)
    efficiency = held.jobs.cpu_seconds / (held.jobs.end - held.jobs.start)
    assert np.allclose(np.sort(efficiency), np.sort(np.where(test_ids % 5 == 0, 1.0, 0.8)))
    assert held.jobs.waits_known and np.allclose(held.jobs.start - held.jobs.submit, 10)


def test_a_model_by_processor_thresholds_validates(tmp_path):
    """A thresholds rule on processors (the column the fit computes: allocated, else requested) on KTH-SP2."""
    kth = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
    assert main(["model", "fit", str(kth), "--job-types", "processors:1,8", "--seed", "1",
                 "--out", str(tmp_path / "kth.json")]) == 0
    assert main(["model", "validate", str(tmp_path / "kth.json"), "--log", str(kth), "--platform", "kth-sp2",
                 "--seed", "2", "--out", str(tmp_path / "val")]) == 0
    rows = {r["measure"] for r in json.loads((tmp_path / "val" / "validation.json").read_text())["comparisons"]}
    assert {"share of processors<=1", "share of 1<processors<=8", "share of processors>8"} <= rows
