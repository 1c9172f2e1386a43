"""``batreplay model fit`` and ``batreplay model generate`` as a site engineer runs them: the GridKa sites of the
LCG log fitted, a workload drawn, and that workload simulated by ``batreplay run`` on a platform with I/O."""

from __future__ import annotations

import pandas as pd
import pytest

from batreplay.cli import main
from batreplay.sitemodels.model_file import read_model
from conftest import WORKLOADS

LCG = WORKLOADS / "LCG.swf.gz"


def test_fit_generate_and_run_a_gridka_model(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["model", "fit", str(LCG), "--job-types", "group", "--select", "partition=156",
                 "--select", "partition=157", "--seed", "1", "--io-share", "0.2", "--demand-rounds", "4",
                 "--out", "gridka.json"]) == 0
    printed = capsys.readouterr().out
    assert "4408 jobs kept (183633 not selected; dropped: none); 2204 to calibrate, 2204 to test" in printed
    assert "group=4" in printed and "wrote gridka.json and its test jobs gridka.test-jobs.csv" in printed
    assert len(pd.read_csv("gridka.test-jobs.csv")) == 2204
    assert read_model("gridka.json").source["select"] == {"partition": [156, 157]}

    assert main(["model", "generate", "gridka.json", "--jobs", "150", "--seed", "2", "--out", "w.json"]) == 0
    assert "wrote w.json: 150 jobs submitted over" in capsys.readouterr().out
    written = (tmp_path / "w.json").read_bytes()
    for argv in (["model", "generate", "gridka.json", "--jobs", "9", "--out", "w.json"],
                 ["model", "fit", str(LCG), "--out", "gridka.json"]):
        with pytest.raises(SystemExit):  # an existing output is replaced only with --force
            main(argv)
        assert "exists; give --force to replace it" in capsys.readouterr().err
    assert (tmp_path / "w.json").read_bytes() == written
    assert main(["model", "generate", "gridka.json", "--jobs", "150", "--seed", "2", "--out", "w.json",
                 "--force"]) == 0
    assert (tmp_path / "w.json").read_bytes() == written  # the same seed: the same workload
    assert main(["platform", "--nodes", "40", "--io-rate", "1e8", "--out", "io.xml"]) == 0
    assert main(["run", "--workload", "w.json", "--platform", "io.xml", "--scheduler", "easy", "--out", "run",
                 "--quiet"]) == 0
    out_jobs = pd.read_csv(tmp_path / "run" / "out_jobs.csv")
    assert len(out_jobs) == 150 and set(out_jobs["final_state"]) <= {"COMPLETED_SUCCESSFULLY",
                                                                     "COMPLETED_WALLTIME_REACHED"}


@pytest.mark.parametrize(("argv", "message"), [
    (["model", "fit", str(LCG), "--split", "1.5", "--out", "m.json"], "split (--split) must be a number > 0 and <= 1"),
    (["model", "fit", str(LCG), "--job-types", "site", "--out", "m.json"], "--job-types 'site': expected 'all'"),
    (["model", "fit", str(LCG), "--out", "m.txt"], "--out m.txt: a model file is JSON"),
    (["model", "fit", str(LCG), "--out", "no/m.json"], "--out no/m.json: no folder no"),
    (["model", "fit", str(LCG), "--seed", "-1", "--out", "m.json"], "seed (--seed) must be an integer >= 0, got -1"),
    (["model", "generate", "nosuch.json", "--jobs", "20000000", "--out", "w.swf"], "--jobs 20000000: expected"),
    (["model", "generate", "nosuch.json", "--jobs", "3", "--out", "w.swf"], "nosuch.json: No such file"),
])
def test_bad_input_gets_a_one_line_error_and_writes_nothing(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(argv)
    error = capsys.readouterr().err
    assert stop.value.code == 2 and error.startswith("batreplay: error: ") and message in error
    assert error.count("\n") == 1 and list(tmp_path.iterdir()) == []
