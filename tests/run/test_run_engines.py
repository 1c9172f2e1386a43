"""The same run on the embedded engine and next to Batsim (``batreplay run --engine batsim``).

With a stand-in ``batsim`` (tests/batsim_doubles.py: a separate process that speaks Batsim's side of the
protocol over ZeroMQ with the embedded engine and writes Batsim's output files) the whole launcher path runs
in CI, dynamic-job flags included. With a real Batsim 4.2 on PATH, the feedback run must give the same
out_jobs.csv as the embedded engine (zero-latency platform); without one that test is skipped.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from batreplay.run.runner import RunSpec, run
from batsim_doubles import write_fake_batsim
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def _run(tmp_path, name: str, replay: str, engine: str, batsim: str | None = None) -> pd.DataFrame:
    spec = RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=tmp_path / name, max_jobs=400,
                   replay=replay, engine=engine, batsim=batsim,
                   **({"sessions": "arrival:60"} if replay == "feedback" else {}))
    result = run(spec)
    return pd.read_csv(result.out_dir / "out_jobs.csv")


def _assert_same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a["job_id"].astype(str)) == list(b["job_id"].astype(str))
    assert list(a["final_state"]) == list(b["final_state"])
    assert list(a["allocated_resources"].astype(str)) == list(b["allocated_resources"].astype(str))
    for column in ["submission_time", "starting_time", "finish_time"]:
        assert (a[column] - b[column]).abs().max() <= 1e-6 + 1e-9, column


@pytest.mark.slow
@pytest.mark.parametrize("replay", ["rigid", "feedback"])
def test_launcher_path_equals_embedded_engine(tmp_path, replay):
    fake = write_fake_batsim(tmp_path, mode="protocol")
    embedded = _run(tmp_path, "embedded", replay, "embedded")
    launched = _run(tmp_path, "launched", replay, "batsim", batsim=str(fake))
    _assert_same(embedded, launched)
    if replay == "feedback":
        assert set(launched["workload_name"]) == {"dyn"}
    assert json.loads((tmp_path / "launched" / "run.json").read_text())["engine"] == "batsim"
    assert json.loads((tmp_path / "embedded" / "run.json").read_text())["engine"] == "embedded"


def test_feedback_on_real_batsim_equals_embedded_engine(tmp_path, real_batsim):
    batsim = real_batsim
    embedded = _run(tmp_path, "embedded", "feedback", "embedded")
    real = _run(tmp_path, "real", "feedback", "batsim", batsim=batsim)
    _assert_same(embedded, real)
