"""The CSV table writer (``jobs.csv``, ``out_schedule.csv``) writes the bytes pandas' ``to_csv(index=False)`` wrote,
without pandas: floats as ``repr`` (or ``float_format``), integers without ``.0``, NaN and None empty, text quoted
where the CSV syntax needs it; types pandas would write otherwise are refused, never written differently.

pandas is the reference here (the writers it replaced); ``tests/run/test_run_outputs_in_memory.py`` compares a run's
``jobs.csv`` with it, and ``benchmarks/bench_run_outputs.py --check`` the job tables of whole logs.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.formats.out_schedule import OUT_SCHEDULE_COLUMNS, write_out_schedule
from batreplay.formats.table_csv import csv_fields, write_csv_table

#: Floats whose text is easy to get wrong: shortest repr, exponents, negative zero, extremes, infinities.
EDGE_FLOATS = [0.0, -0.0, 0.1, 0.2 + 0.1, 1e-05, 1.5e-05, 0.0001, 123456.789, 1e15, 1e16, 1.2345678901234567e16,
               9007199254740993.0, 1e22, 1e300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.0,
               -1e-05, 3600.0, 28763776.000001, math.inf, -math.inf, math.nan]
#: Integers from 0 to the ends of int64.
EDGE_INTS = [0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63)]


def ours(columns: dict, **options) -> str:
    stream = io.StringIO()
    write_csv_table(stream, columns, **options)
    return stream.getvalue()


def pandas_text(columns: dict, **options) -> str:
    return pd.DataFrame(columns).to_csv(index=False, **options)


def test_edge_values_give_pandas_bytes():
    n = len(EDGE_FLOATS)
    columns = {
        "float": np.array(EDGE_FLOATS),
        "int": np.array((EDGE_INTS * n)[:n], dtype=np.int64),
        "text": pd.Series(["a", "", None, math.nan, 'say "hi"', "x,y", "two\nlines", " padded ", "é", "1e5",
                           *["t"] * (n - 10)], dtype=object),
        "bool": np.array([True, False] * (n // 2)),
    }
    assert ours(columns) == pandas_text(columns)
    assert ours(columns, float_format="%.6f") == pandas_text(columns, float_format="%.6f")


def test_the_texts_of_edge_floats_are_named():
    """What pandas writes, spelled out: the reference agrees with these, and so does the writer."""
    fields = csv_fields(np.array([0.1, 1e-05, 1e16, -0.0, 1e15, 2.0**63, math.nan, math.inf]))
    assert fields == ["0.1", "1e-05", "1e+16", "-0.0", "1000000000000000.0", "9.223372036854776e+18", "", "inf"]
    assert csv_fields(np.array([2**63 - 1, -5], dtype=np.int64)) == ["9223372036854775807", "-5"]
    assert csv_fields(np.array([0.1, math.nan, -0.0]), float_format="%.6f") == ["0.100000", "", "-0.000000"]
    assert csv_fields([None, math.nan, 3, 2.5, True, "x"]) == ["", "", "3", "2.5", "True", "x"]


def test_an_empty_table_is_its_header():
    columns = {"a": np.array([], dtype=np.float64), "b": pd.Series([], dtype=object)}
    assert ours(columns) == pandas_text(columns) == "a,b\n"


def test_a_single_column_of_empty_text_is_quoted_as_pandas_quotes_it():
    columns = {"only": pd.Series(["", "x", None], dtype=object)}
    assert ours(columns) == pandas_text(columns)


@pytest.mark.parametrize("dtype", ["str", "string"])
def test_pandas_text_columns_are_written_with_missing_values_empty(dtype):
    columns = {"text": pd.Series(["a", None, "b,c"], dtype=dtype), "n": np.arange(3)}
    assert ours(columns) == pandas_text(columns)


@pytest.mark.parametrize("values", [
    np.array([0.1], dtype=np.float32),  # pandas writes a float32's own shortest text
    np.array(["2024-01-01"], dtype="datetime64[ns]"),
    np.array([1 + 2j]),
    [np.float32(0.1)],
    [pd.NA],
    pd.Series([1, None], dtype="Int64"),
], ids=["float32", "datetime", "complex", "float32-object", "pd.NA", "Int64"])
def test_types_pandas_would_write_otherwise_are_refused(values):
    with pytest.raises(TypeError, match="pandas"):
        csv_fields(values, name="c")


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="different lengths"):
        ours({"a": [1, 2], "b": [1]})
    with pytest.raises(ValueError, match="at least one column"):
        ours({})


@settings(max_examples=200, deadline=None)
@given(floats=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=40),
       data=st.data())
def test_random_tables_give_pandas_bytes(floats, data):
    n = len(floats)
    ints = data.draw(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=n, max_size=n))
    text = data.draw(st.lists(st.one_of(st.none(), st.text(max_size=8)), min_size=n, max_size=n))
    columns = {"f": np.array(floats, dtype=np.float64), "i": np.array(ints, dtype=np.int64),
               "s": pd.Series(text, dtype=object)}
    assert ours(columns) == pandas_text(columns)
    assert ours(columns, float_format="%.6f") == pandas_text(columns, float_format="%.6f")


def pandas_out_schedule(summary: dict) -> str:
    """``out_schedule.csv`` as the pandas-based writer wrote it (the reference)."""
    return pd.DataFrame([summary], columns=OUT_SCHEDULE_COLUMNS).to_csv(index=False, float_format="%.6f")


@pytest.mark.parametrize("changes", [
    {},
    {"makespan": 1e16, "mean_slowdown": 0.1, "max_slowdown": math.nan, "time_idle": -0.0, "success_rate": 1e-05},
    {"nb_jobs": 2**62, "max_waiting_time": math.inf, "scheduling_time": np.float64(1.25),
     "nb_jobs_killed": np.int64(3)},
    {"consumed_joules": None},
], ids=["plain", "edge-floats", "numpy-and-large", "missing"])
def test_out_schedule_is_the_pandas_writers_bytes(tmp_path, changes):
    summary = {name: float(k) * 1.5 for k, name in enumerate(OUT_SCHEDULE_COLUMNS)}
    summary.update(batsim_version="4.2.1 (batreplay embedded engine)", nb_jobs=28467, nb_jobs_finished=28467,
                   nb_computing_machines=100, nb_jobs_success=27987)
    summary.update(changes)
    write_out_schedule(summary, tmp_path / "out_schedule.csv")
    assert (tmp_path / "out_schedule.csv").read_text() == pandas_out_schedule(summary)
