"""The run page's adequacy table (Baranov et al. 2018, Table I, against the log the run replayed): its numbers as
the HTML report writes them and short headers, on a real run of 300 KTH-SP2 jobs."""

from __future__ import annotations

import re

import pytest

from batreplay.analysis.run_adequacy import adequacy_against_log
from batreplay.analysis.run_dir import load_run
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from batreplay.ui.pages import _adequacy_section
from batreplay.ui.sandbox import Sandbox
from batreplay.workloads.swf import read_swf
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")
RUN_ID = "kth-sp2-1996-2.1-cln-easy-0123456789ab"  # (a run id as long as the GUI's)
#: A cell of the table: a whole number with thousands separated, at most 4 significant digits, text of k, or a dash.
CELL = re.compile(r"-?\d{1,3}(,\d{3})*|-?\d+\.\d+|-?\d\.\d+e[+-]\d+|all \(\d{1,3}(,\d{3})*\)|\u2013")


def test_the_adequacy_table_has_short_headers_and_readable_numbers(tmp_path):
    runs_dir = tmp_path / "runs"
    run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=300, out_dir=runs_dir / RUN_ID))
    replayed = load_run(runs_dir / RUN_ID)
    _title, table, _notes = _adequacy_section(replayed, Sandbox(runs_dir, [WORKLOADS]))
    assert table.id == "adequacy-table" and table.merge_duplicate_headers
    names = [column["name"] for column in table.columns]
    assert names == [["", "first k jobs"], ["this run", "P (s)"], ["this run", "jobs whose waiting time differs"],
                     ["Baranov et al. 2018, Table I", "P (s)"],
                     ["Baranov et al. 2018, Table I", "jobs whose waiting time differs"]]
    cells = [[row[column["id"]] for column in table.columns] for row in table.data]
    assert all(CELL.fullmatch(cell) for row in cells for cell in row), cells
    assert all(len(re.sub(r"\D", "", cell.split("e")[0]).lstrip("0")) <= 4 for row in cells for cell in row
               if "." in cell)  # (4 significant digits below 1,000)
    measured, _notes = adequacy_against_log(replayed, read_swf(KTH))
    every = measured[measured["prefix"] == "all"].iloc[0]
    last = cells[-1]
    assert last[0] == "all (300)" and last[2] == f"{int(every['nb_different_jobs']):,}"
    assert float(last[1].replace(",", "")) == pytest.approx(float(every["measure"]), rel=1e-4, abs=0.5)
    assert RUN_ID not in str(table.columns)
