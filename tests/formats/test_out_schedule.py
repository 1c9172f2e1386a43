"""``out_schedule.csv``'s aggregates are column operations on any table: the embedded engine gives its record columns
(a dict of lists and arrays, no pandas), the analysis a DataFrame; both give the same numbers. The busy periods of
shared hosts (a running maximum per host, in numpy) are those of pandas' ``groupby().cummax()`` they replaced."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.formats.out_jobs_writer import RECORD_FIELDS, jobs_frame
from batreplay.formats.out_schedule import SUMMARY_COLUMNS, busy_periods, schedule_summary

from test_out_jobs_writer import job_records


def pandas_busy_periods(jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`busy_periods` as it was written with pandas (the reference)."""
    from procset import ProcSet

    ran = jobs["starting_time"].notna().to_numpy()
    began = jobs["starting_time"].to_numpy(dtype="float64")[ran]
    ended = jobs["finish_time"].to_numpy(dtype="float64")[ran]
    allocations = jobs["allocated_resources"].astype(str).to_numpy()[ran]
    hosts = [np.fromiter(ProcSet.from_str(text), dtype=np.int64) for text in allocations]
    sizes = np.array([len(h) for h in hosts], dtype=np.int64)
    host = np.concatenate(hosts) if hosts else np.empty(0, dtype=np.int64)
    start, finish = np.repeat(began, sizes), np.repeat(ended, sizes)
    order = np.lexsort((start, host))
    host, start, finish = host[order], start[order], finish[order]
    new_host = np.ones(len(host), dtype=bool)
    new_host[1:] = host[1:] != host[:-1]
    latest = pd.Series(finish).groupby(host).cummax().to_numpy()
    opens = new_host.copy()
    opens[1:] |= start[1:] > latest[:-1]
    period = np.cumsum(opens) - 1
    period_end = np.zeros(int(opens.sum()))
    np.maximum.at(period_end, period, finish)
    return host[opens], start[opens], period_end


@st.composite
def shared_jobs(draw) -> pd.DataFrame:
    """Jobs that ran on overlapping hosts of a small platform, at overlapping times."""
    rows = []
    for k in range(draw(st.integers(min_value=0, max_value=25))):
        first = draw(st.integers(min_value=0, max_value=6))
        width = draw(st.integers(min_value=1, max_value=4))
        start = draw(st.floats(min_value=0, max_value=100, allow_nan=False))
        finish = start + draw(st.sampled_from([0.0, 1.0, 2.5, 10.0, 1e-6]))
        rejected = draw(st.integers(min_value=0, max_value=9)) == 0
        rows.append({"starting_time": np.nan if rejected else start, "finish_time": np.nan if rejected else finish,
                     "allocated_resources": "" if rejected else f"{first}-{first + width - 1}"})
    return pd.DataFrame(rows, columns=["starting_time", "finish_time", "allocated_resources"])


@settings(max_examples=200, deadline=None)
@given(jobs=shared_jobs())
def test_busy_periods_are_those_pandas_computed(jobs):
    ours, reference = busy_periods(jobs), pandas_busy_periods(jobs)
    for got, expected in zip(ours, reference):
        np.testing.assert_array_equal(got, expected)
    as_columns = {name: jobs[name].tolist() for name in jobs.columns}  # the engine's form: lists
    for got, expected in zip(busy_periods(as_columns), reference):
        np.testing.assert_array_equal(got, expected)


@settings(max_examples=100, deadline=None)
@given(records=job_records(), shared=st.booleans())
def test_the_summary_of_record_columns_is_that_of_the_table(records, shared):
    """The engine's columns (lists, NaN times for rejected jobs as numpy arrays) give the DataFrame's summary."""
    columns = {name: [getattr(r, name) for r in records] for name in RECORD_FIELDS}
    for name in ("submission_time", "starting_time", "finish_time"):
        columns[name] = np.array([np.nan if v is None else v for v in columns[name]], dtype=np.float64)
    needed = (*SUMMARY_COLUMNS, "allocated_resources") if shared else SUMMARY_COLUMNS
    from_columns = schedule_summary({name: columns[name] for name in needed}, 7, 0.5, 1.5, check=False,
                                    shared_hosts=shared)
    assert from_columns == schedule_summary(jobs_frame(records), 7, 0.5, 1.5, shared_hosts=shared)


def test_writing_the_outputs_imports_no_pandas():
    """The engine's writers (out_jobs.csv, out_schedule.csv) and the CSV table writer import no pandas."""
    probe = ("import sys\n"
             "import batreplay.formats.out_jobs_writer, batreplay.formats.out_schedule, batreplay.formats.table_csv\n"
             "import batreplay.engine.simulate\n"
             "print('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "False"
