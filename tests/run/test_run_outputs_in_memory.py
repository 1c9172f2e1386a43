"""A run computes its metrics from the jobs table the embedded engine built while writing out_jobs.csv (the file
is not read back), and writes workload.json and jobs.csv before the simulation: every file must be what reading
the outputs back and writing the inputs afterwards gave (first 2,000 jobs of KTH-SP2, EASY)."""

from __future__ import annotations

import json

import pytest

from batreplay.analysis.metrics import summarize
from batreplay.analysis.run_dir import RECORDED_SUBMISSION
from batreplay.atomic import json_ready
from batreplay.formats.out_jobs import read_out_jobs
from batreplay.run.runner import RunSpec, load_workload, run
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def kth_run(tmp_path_factory):
    if not KTH.exists():
        pytest.skip(f"{KTH} not found")
    spec = RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=2000,
                         out_dir=tmp_path_factory.mktemp("run") / "kth-easy")
    return spec, run(spec)


def test_metrics_equal_those_of_the_file_read_back(kth_run):
    spec, result = kth_run
    from_file = summarize(read_out_jobs(result.out_dir / "out_jobs.csv"), nb_resources=100)
    written = json.loads((result.out_dir / "metrics.json").read_text())
    assert written == json.loads(json.dumps(json_ready(from_file), allow_nan=False, default=str))
    assert written["nb_jobs"] == 2000


def test_workload_files_are_the_loaded_workload(kth_run):
    spec, result = kth_run
    document, job_table, _ = load_workload(spec, nb_res=100)
    assert (result.out_dir / "workload.json").read_text() == json.dumps(document)
    expected = job_table.rename(columns={"submission_time": RECORDED_SUBMISSION}).to_csv(index=False)
    assert (result.out_dir / "jobs.csv").read_text() == expected
