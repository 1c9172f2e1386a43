"""The streamed ``out_jobs.csv`` writer and the jobs table it builds in memory.

``write_out_jobs`` writes Batsim 4.2.1's file byte for byte (checked against real Batsim outputs of
``../shared/batsim-golden``: ``delays`` and ``kth2000`` with pybatsim's easyBackfill, ``dynamic`` with a rejected
job) and returns the table :func:`read_out_jobs` reads from that file, without reading it. Property tests: random
rows (rejected jobs, metadata, fractional times, jobs without walltime) give the bytes of the pandas writer it
replaced, and the table read back; rows given as columns give the same file and table.
"""

from __future__ import annotations

import csv
import json
import os
import string

import numpy as np
import pandas as pd
import pytest
from batsim.tools.launcher import instanciate_scheduler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batreplay.engine.simulate import simulate
from batreplay.formats.out_jobs import BATSIM_COLUMNS, OutJobsError, read_out_jobs
from batreplay.formats.out_jobs_writer import RECORD_FIELDS, JobRecord, jobs_frame, write_out_jobs, write_out_jobs_columns
from batreplay.formats.out_schedule import SUMMARY_COLUMNS, schedule_summary
from batreplay.schedulers.registry import load_scheduler
from batsim_doubles import PROBES_DIR
from conftest import GOLDEN

#: Golden cases and their decision process (``dynamic`` registers jobs and rejects one).
CASES = {"delays": (lambda: instanciate_scheduler("easyBackfill", {}), False),
         "kth2000": (lambda: instanciate_scheduler("easyBackfill", {}), False),
         "dynamic": (lambda: load_scheduler(PROBES_DIR / "probeDynamic.py"), True)}


def pandas_writer_text(records: list[JobRecord]) -> str:
    """``out_jobs.csv`` as the pandas-based writer wrote it before the streamed one (the reference)."""
    frame = jobs_frame(records)
    return frame.assign(metadata='"' + frame["metadata"].fillna("").astype(str) + '"').to_csv(
        index=False, float_format="%.6f", quoting=csv.QUOTE_NONE, quotechar=None)


@pytest.fixture(scope="module", params=sorted(CASES))
def golden_run(request, tmp_path_factory):
    case = request.param
    make_scheduler, dynamic = CASES[case]
    workload = json.loads((GOLDEN / case / "workload.json").read_text())
    out = tmp_path_factory.mktemp(case)
    return case, simulate(GOLDEN / case / "platform.xml", workload, make_scheduler(), out, dynamic_jobs=dynamic)


def test_written_file_is_batsims_out_jobs_byte_for_byte(golden_run):
    case, result = golden_run
    assert result.out_jobs.read_bytes() == (GOLDEN / case / "out_jobs.csv").read_bytes()


def test_table_in_memory_is_what_read_out_jobs_reads(golden_run):
    case, result = golden_run
    table = result.jobs.table()
    pd.testing.assert_frame_equal(table, read_out_jobs(result.out_jobs))
    pd.testing.assert_frame_equal(table, read_out_jobs(GOLDEN / case / "out_jobs.csv"))
    if case == "dynamic":  # a rejected job: empty times in the file, NaN in the table
        rejected = table[table["final_state"] == "REJECTED"]
        assert len(rejected) == 1 and rejected[["starting_time", "finish_time", "consumed_energy"]].isna().all(axis=None)
        assert rejected["allocated_resources"].tolist() == [""]


def test_records_are_slotted():
    record = JobRecord("1", "w0", "p", 0.0, 1, 10.0, 1, "COMPLETED_SUCCESSFULLY", 0.0, 1.0, 1.0, 0.0, 1.0, 1.0,
                       "0", "")
    assert not hasattr(record, "__dict__")


def test_an_invalid_row_is_refused_after_the_file_is_written(tmp_path):
    early = JobRecord("1", "w0", "p", 100.0, 1, 10.0, 1, "COMPLETED_SUCCESSFULLY", 50.0, 1.0, 51.0, -50.0, -49.0,
                      1.0, "0", "")
    with pytest.raises(OutJobsError, match="starting_time is before submission_time"):
        write_out_jobs([early], tmp_path / "out_jobs.csv")
    assert (tmp_path / "out_jobs.csv").read_text().count("\n") == 2


def test_a_comma_in_a_field_is_refused_and_nothing_is_left(tmp_path):
    bad = JobRecord("1,2", "w0", "p", 0.0, 1, 10.0, 1, "COMPLETED_SUCCESSFULLY", 0.0, 1.0, 1.0, 0.0, 1.0, 1.0,
                    "0", "")
    with pytest.raises(csv.Error):
        write_out_jobs([bad], tmp_path / "out_jobs.csv")
    assert os.listdir(tmp_path) == []


def test_columns_of_different_lengths_are_refused(tmp_path):
    columns = {name: [] for name in RECORD_FIELDS}
    columns["job_id"] = ["1"]
    with pytest.raises(ValueError, match="different lengths"):
        write_out_jobs_columns(columns, tmp_path / "out_jobs.csv")


_TIMES = st.floats(min_value=0, max_value=1e9, allow_nan=False).map(lambda t: round(t, 3) if t > 1e6 else t)
_TEXT = st.text(alphabet=string.ascii_letters + string.digits + " -_:;{}", max_size=12)


@st.composite
def job_records(draw) -> list[JobRecord]:
    ids = draw(st.lists(st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=6),
                        unique=True, max_size=30))
    records = []
    for job_id in ids:
        submission = draw(_TIMES)
        walltime = draw(st.one_of(st.just(-1.0), st.floats(min_value=1e-3, max_value=1e7)))
        metadata = draw(_TEXT)
        res = draw(st.integers(min_value=1, max_value=10_000))
        if draw(st.booleans()):
            records.append(JobRecord(job_id, "w0", "p", submission, res, walltime, 0, "REJECTED", None, None, None,
                                     None, None, None, "", metadata))
            continue
        start = submission + draw(_TIMES)
        runtime = draw(st.floats(min_value=1e-5, max_value=1e7))
        finish = start + runtime
        state = draw(st.sampled_from(["COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"]))
        records.append(JobRecord(job_id, draw(st.sampled_from(["w0", "dyn"])), draw(_TEXT.filter(bool)), submission,
                                 res, walltime, int(state == "COMPLETED_SUCCESSFULLY"), state, start, finish - start,
                                 finish, start - submission, finish - submission, (finish - submission) / runtime,
                                 f"0-{res - 1}", metadata))
    return records


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=job_records())
def test_random_rows_give_the_pandas_writers_bytes_and_read_back_as_the_table(tmp_path, records):
    path = tmp_path / "out_jobs.csv"
    table = write_out_jobs(iter(records), path)
    assert path.read_text() == pandas_writer_text(records)
    pd.testing.assert_frame_equal(table, read_out_jobs(path))

    columns = {name: [getattr(r, name) for r in records] for name in RECORD_FIELDS}
    for name in ("submission_time", "starting_time", "finish_time"):  # times as numpy arrays: NaN for rejected jobs
        columns[name] = np.array([np.nan if v is None else v for v in columns[name]], dtype=np.float64)
    again = tmp_path / "from_columns.csv"
    pd.testing.assert_frame_equal(write_out_jobs_columns(columns, again), table)
    assert again.read_bytes() == path.read_bytes()


@settings(max_examples=50, deadline=None)
@given(records=job_records())
def test_schedule_summary_of_checked_rows_needs_only_its_columns(records):
    assert (schedule_summary(jobs_frame(records, SUMMARY_COLUMNS), 7, 0.0, 0.0, check=False)
            == schedule_summary(jobs_frame(records), 7, 0.0, 0.0))


def test_jobs_frame_keeps_batsims_columns_and_the_records_times():
    record = JobRecord("3", "w0", "p", 0.5, 2, -1.0, 1, "COMPLETED_SUCCESSFULLY", 0.5, 0.1234567, 0.6234567, 0.0,
                       0.1234567, 1.0, "0-1", "")
    frame = jobs_frame([record])
    assert tuple(frame.columns) == BATSIM_COLUMNS
    assert frame["execution_time"].iloc[0] == 0.1234567 and frame["consumed_energy"].iloc[0] == -1.0
