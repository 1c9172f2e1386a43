"""The Compare page's table and figures, on two real runs of the same 300 KTH-SP2 jobs (EASY and FCFS)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from batreplay.analysis.metric_registry import get_metric
from batreplay.analysis.run_dir import load_run
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from batreplay.ui.comparison import comparison_rows
from batreplay.ui.run_index import read_metrics
from batreplay.ui.figures import comparison_series_figure, cumulative_submissions_figure
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    for scheduler in ("easy", "fcfs"):
        run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler=scheduler, max_jobs=300,
                          out_dir=root / scheduler))
    return [root / "easy", root / "fcfs"]


def test_each_row_gives_both_values_and_their_difference_in_one_unit(folders):
    metrics = [read_metrics(folder) for folder in folders]
    columns, rows = comparison_rows(["easy", "fcfs"], metrics)
    assert columns == ["metric", "1: easy", "2: fcfs", "2 - 1", "2 vs 1"]
    by_label = {row["metric"]: row for row in rows}
    wait = next(row for label, row in by_label.items() if label.startswith("mean waiting time"))
    unit = get_metric("mean_waiting_time").display_unit([m["mean_waiting_time"] for m in metrics])
    assert wait["metric"] == f"mean waiting time ({unit})"
    first, second = (float(wait[column].replace(",", "")) for column in ("1: easy", "2: fcfs"))
    assert float(wait["2 - 1"].replace(",", "")) == pytest.approx(second - first, abs=0.011)
    expected = 100 * (metrics[1]["mean_waiting_time"] / metrics[0]["mean_waiting_time"] - 1)
    assert wait["2 vs 1"] == f"{expected:+.1f} %"
    assert by_label["jobs"] == {"metric": "jobs", "1: easy": "300", "2: fcfs": "300", "2 - 1": "+0", "2 vs 1": "+0.0 %"}
    assert by_label["rejected"]["2 vs 1"] == "0 %"  # 0 against 0


def test_fewer_than_two_runs_are_refused(folders):
    with pytest.raises(ValueError, match="two runs or more"):
        comparison_rows(["easy"], [read_metrics(folders[0])])


def test_the_overlaid_series_and_cumulative_submissions_draw_every_run(folders):
    runs = [load_run(folder) for folder in folders]
    series = comparison_series_figure(runs)
    assert series.layout.meta["runs"] == ["easy", "fcfs"]
    assert len(series.data) == 4  # utilisation and queue length of each run
    for trace in series.data[::2]:  # (each run: its utilisation, then its queue length)
        assert 0.0 < np.nanmax(np.asarray(trace.y, dtype=float)) <= 1.0
    cumulative = cumulative_submissions_figure(runs)
    names = [trace.name for trace in cumulative.data]
    assert names == ["recorded (rigid)", "easy", "fcfs"]
    for trace, folder in zip(cumulative.data[1:], folders):
        jobs = json.loads((folder / "metrics.json").read_text())["nb_jobs"]
        assert np.asarray(trace.y, dtype=float)[-1] == jobs == 300
        assert np.all(np.diff(np.asarray(trace.x, dtype=float)) >= 0)  # time never goes back
