"""Tests of the SWF reader: the shared PWA logs (counts from shared/workloads/README.md), hand-made malformed
files, hand-counted anomalies, and round-trip invariants."""

from __future__ import annotations

import gzip
import os
import re
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from batreplay.workloads.swf import (
    ANOMALY_KINDS,
    FLOAT_COLUMNS,
    SWF_COLUMNS,
    SwfFormatError,
    read_swf,
)
from conftest import WORKLOADS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

README_ROW = re.compile(
    r"^\|\s*(?P<file>[\w.-]+\.swf\.gz)\s*\|\s*(?P<jobs>\d+)\s*\|(?P<nodes>[^|]*)\|(?P<procs>[^|]*)\|"
)


def _readme_rows() -> list[dict]:
    """Rows of the table in shared/workloads/README.md: file, jobs, MaxNodes, MaxProcs (as written)."""
    readme = WORKLOADS / "README.md"
    if not readme.is_file():
        return []
    rows = []
    for text in readme.read_text().splitlines():
        match = README_ROW.match(text)
        if match:
            rows.append({k: v.strip() for k, v in match.groupdict().items()})
    return rows


def _leading_int(text: str) -> int | None:
    """'338 (batch partition; 512 total)' -> 338; 'no header' / 'not given' -> None."""
    match = re.match(r"(\d+)", text)
    return int(match.group(1)) if match else None


README_ROWS = _readme_rows()


def test_readme_table_is_parsed():
    if not WORKLOADS.is_dir():
        pytest.skip("shared workloads not available")
    # The README lists 16 logs; every .swf.gz file of the folder is in the table.
    assert len(README_ROWS) == 16
    assert {r["file"] for r in README_ROWS} == {p.name for p in WORKLOADS.glob("*.swf.gz")}


@pytest.mark.parametrize("row", README_ROWS, ids=[r["file"] for r in README_ROWS])
def test_shared_log_loads_with_readme_job_count(row, workloads_dir):
    log = read_swf(workloads_dir / row["file"])
    assert log.n_jobs == int(row["jobs"])
    assert log.max_nodes == _leading_int(row["nodes"])
    assert log.max_procs == _leading_int(row["procs"])
    # README: every job line has 18 fields and job numbers strictly increase.
    assert log.anomalies.n_skipped == 0
    assert log.anomalies.count("duplicate_job_id") == 0
    assert np.all(np.diff(log.jobs["job_id"].to_numpy()) > 0)
    assert list(log.jobs.columns) == [*SWF_COLUMNS, "line"]
    for name in SWF_COLUMNS:
        assert log.jobs[name].dtype == (np.float64 if name in FLOAT_COLUMNS else np.int64), name
    # The first job line, parsed independently of pandas, matches the first row.
    with gzip.open(workloads_dir / row["file"], "rt", encoding="latin-1") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip() and not text.lstrip().startswith(";"):
                break
    first = log.jobs.iloc[0]
    assert int(first["line"]) == number
    assert [float(v) for v in text.split()] == [float(first[c]) for c in SWF_COLUMNS]


def test_kth_header_and_times(workloads_dir):
    log = read_swf(workloads_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    # Values read off the file's header lines.
    assert log.unix_start_time == 843480031
    assert log.header["TimeZoneString"] == "Europe/Stockholm"
    assert log.header["MaxRecords"] == "28476"
    # Repeated key joined in file order; indented continuation lines belong to the key above them.
    assert log.header["Note"].split("\n") == [
        "uses the EASY scheduler",
        "THIS IS A CLEANED VERSION OF THE LOG!",
        "The filter used to produce it was",
        "job<=14 (14 jobs removed)",
    ]
    assert log.header["Information"] == "http://www.pdc.kth.se/\nhttp://www.cs.huji.ac.il/labs/parallel/workload/"
    assert ("MaxProcs", "100") in log.header_entries
    # Job 15 is the first line after a 24-line header: "15 599850 192180 3477 4 ... 53940 ...".
    first = log.jobs.iloc[0]
    assert (first["job_id"], first["line"], first["submission_time"], first["run_time"]) == (15, 25, 599850.0, 3477.0)
    assert first["requested_time"] == 53940.0


def test_log_without_header(workloads_dir):
    log = read_swf(workloads_dir / "METACENTRUM-2009-2.swf.gz")
    assert log.header == {}
    assert (log.max_nodes, log.max_procs, log.unix_start_time) == (None, None, None)
    assert log.anomalies.count("more_processors_than_machine") == 0  # not checkable without MaxProcs


def test_fractional_times_kept(workloads_dir):
    # HPC2N gives average CPU times with fractions: they must survive (float64, not truncated).
    log = read_swf(workloads_dir / "HPC2N-2002-2.2-cln.swf.gz")
    cpu = log.jobs["average_cpu_time"].to_numpy()
    assert np.any(cpu != np.round(cpu))


def test_gzip_and_plain_give_the_same_frame(workloads_dir, tmp_path):
    source = workloads_dir / "KTH-SP2-1996-2.1-cln.swf.gz"
    plain = tmp_path / "kth.swf"
    plain.write_bytes(gzip.decompress(source.read_bytes()))
    # Detection is by magic bytes: a plain file named .gz and a gzip file named .swf both work.
    misnamed_plain = tmp_path / "plain.swf.gz"
    misnamed_plain.write_bytes(plain.read_bytes())
    misnamed_gzip = tmp_path / "gzip.swf"
    misnamed_gzip.write_bytes(source.read_bytes())
    reference = read_swf(source)
    for path in (plain, misnamed_plain, misnamed_gzip):
        other = read_swf(path)
        pd.testing.assert_frame_equal(other.jobs, reference.jobs)
        assert other.header == reference.header
        assert other.anomalies.counts == reference.anomalies.counts


def test_crlf_and_blank_lines_keep_line_numbers(tmp_path):
    rows = [
        "; MaxProcs: 4",
        "",
        "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
        "   ",
        "2 5 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1",
    ]
    path = tmp_path / "crlf.swf"
    path.write_bytes("\r\n".join(rows).encode())
    log = read_swf(path)
    assert log.jobs["line"].tolist() == [3, 5]
    assert log.jobs["job_id"].tolist() == [1, 2]
    assert log.max_procs == 4


GOOD = "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1"


def _write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("bad_line", "field", "fragment"),
    [
        ("3 10 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1", "think_time", "expected 18 fields, found 17"),  # truncated
        ("3 10 0 10 1", "average_cpu_time", "found 5"),
        ("3 10 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1 7", "field 19", "found 19"),
        ("3 10 0 abc 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1", "run_time", "'abc'"),
        ("3 10 0 10 1 -1 -1 1 20 -1 1 x7 1 -1 -1 -1 -1 -1", "user_id", "'x7'"),
        ('3 10 0 "7 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1" -1', "run_time", "'\"7'"),
        ("3 nan 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1", "submission_time", "not a finite number"),
        ("3 10 0 10 4.5 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1", "allocated_processors", "fraction"),
    ],
)
def test_malformed_line_raises_with_file_line_field(tmp_path, bad_line, field, fragment):
    path = _write(tmp_path, "bad.swf", ["; MaxProcs: 4", GOOD, "", bad_line, GOOD.replace("1 0 0", "4 20 0", 1)])
    with pytest.raises(SwfFormatError) as info:
        read_swf(path)
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.path, error.line, error.field) == (str(path), 4, field)
    text = str(error)
    assert str(path) in text and "line 4" in text and f"'{field}'" in text and fragment in text


def test_skip_mode_counts_and_reports_malformed_lines(tmp_path):
    path = _write(
        tmp_path,
        "bad.swf",
        [
            GOOD,  # line 1
            "2 10 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1",  # line 2: 17 fields
            "3 10 0 zz 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",  # line 3: non-numeric run time
            "4 10 0 10 2.5 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",  # line 4: fraction of a processor
            "5 12 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",  # line 5: fine
        ],
    )
    log = read_swf(path, on_error="skip")
    assert log.jobs["job_id"].tolist() == [1, 5]
    assert log.jobs["line"].tolist() == [1, 5]
    report = log.anomalies
    assert report.count("wrong_field_count") == 1 and report.lines["wrong_field_count"].tolist() == [2]
    assert report.lines["non_numeric_field"].tolist() == [3]
    assert report.lines["non_integral_value"].tolist() == [4]
    assert report.n_skipped == 3
    assert [(e.line, e.field) for e in report.format_errors] == [
        (2, "think_time"),
        (3, "run_time"),
        (4, "allocated_processors"),
    ]
    summary = report.summary()
    assert str(path) in summary and "3 malformed lines skipped" in summary
    assert report.to_dict()["format_errors"][1] == {
        "line": 3,
        "field": "run_time",
        "message": "not a finite number: 'zz'",
    }


def test_bad_option_and_bad_gzip(tmp_path):
    path = _write(tmp_path, "ok.swf", [GOOD])
    with pytest.raises(ValueError, match="on_error"):
        read_swf(path, on_error="ignore")
    broken = tmp_path / "broken.swf.gz"
    broken.write_bytes(gzip.compress(b"\n".join([GOOD.encode()] * 50))[:30])
    with pytest.raises(SwfFormatError, match="gzip"):
        read_swf(broken)


# A small log whose anomalies were counted by hand (line numbers in the comments).
HAND_MADE = """\
; Version: 2.2
; MaxNodes: 8
; MaxProcs: 8
; UnixStartTime: 1000
; Note: first note
;       continued
; Note: second note
;
1  0    5   100   4  -1 -1  4  200 -1 1 1 1 -1 -1 -1 -1 -1
2  10   0   -1    2  -1 -1  2  100 -1 1 1 1 -1 -1 -1 -1 -1
3  5    0   0    -1  -1 -1  3   -1 -1 0 2 1 -1 -1 -1 -1 -1
3  20  -7   50    9  -1 -1  9   40 -1 1 2 1 -1 -1 -1 -1 -1
5  20   0   30    0  -1 -1 -1   60 -1 1 3 1 -1 -1 -1 -1 -1
6  21.5 0   12.25 1  -1 -1  1   12 -1 1 3 1 -1 -1 -1 -1 -1
"""
# line 9:  job 1, nothing odd.
# line 10: run time -1 -> run_time_missing.
# line 11: submit 5 < 10 -> submission_time_decreasing; run 0 -> run_time_zero; allocated -1 -> allocated_missing;
#          requested time -1 -> requested_time_missing.
# line 12: job 3 again -> duplicate_job_id; wait -7 -> negative_time; 9 > MaxProcs 8 -> more_processors;
#          run 50 > requested 40 -> run_time_exceeds_requested.
# line 13: allocated 0 -> nonpositive_processors; requested procs -1 -> requested_processors_missing.
# line 14: run 12.25 > requested 12 -> run_time_exceeds_requested.
HAND_COUNTED_LINES = {
    "wrong_field_count": [],
    "non_numeric_field": [],
    "non_integral_value": [],
    "integer_out_of_range": [],
    "control_character": [],
    "run_time_missing": [10],
    "run_time_zero": [11],
    "negative_time": [12],
    "time_beyond_precision": [],
    "allocated_missing": [11],
    "requested_processors_missing": [13],
    "nonpositive_processors": [13],
    "requested_time_missing": [11],
    "more_processors_than_machine": [12],
    "submission_time_decreasing": [11],
    "duplicate_job_id": [12],
    "run_time_exceeds_requested": [12, 14],
}


def test_hand_counted_anomalies(tmp_path):
    path = tmp_path / "hand.swf"
    path.write_text(HAND_MADE)
    log = read_swf(path)
    assert log.n_jobs == 6
    assert {k: v.tolist() for k, v in log.anomalies.lines.items()} == HAND_COUNTED_LINES
    assert set(log.anomalies.lines) == set(ANOMALY_KINDS)
    # -1 per field, counted by hand over the six job lines.
    missing = log.anomalies.missing
    assert missing["run_time"] == 1
    assert missing["allocated_processors"] == 1
    assert missing["requested_processors"] == 1
    assert missing["requested_time"] == 1
    assert missing["average_cpu_time"] == 6 and missing["think_time"] == 6
    assert missing["submission_time"] == 0 and missing["status"] == 0
    # Missing values stay -1 in the frame; fractions are exact.
    assert log.jobs["run_time"].tolist() == [100.0, -1.0, 0.0, 50.0, 30.0, 12.25]
    assert log.jobs["submission_time"].iloc[-1] == 21.5
    assert (log.max_nodes, log.max_procs, log.unix_start_time) == (8, 8, 1000)
    assert log.header["Note"] == "first note\ncontinued\nsecond note"
    summary = log.anomalies.summary()
    assert str(path) in summary and "run_time_exceeds_requested: 2" in summary and "lines 12, 14" in summary
    as_dict = log.anomalies.to_dict(max_lines=1)
    assert as_dict["counts"]["run_time_exceeds_requested"] == 2
    assert as_dict["lines"]["run_time_exceeds_requested"] == [12]


def test_negative_time_kinds(tmp_path):
    # submit, wait, run and requested time below 0 (but not -1) each count once; -1 does not.
    lines = [
        "1 -5 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
        "2 0 -2 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
        "3 0 0 -3 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
        "4 0 0 10 1 -1 -1 1 -9 -1 1 1 1 -1 -1 -1 -1 -1",
        "5 0 -1 -1 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1",
    ]
    log = read_swf(_write(tmp_path, "neg.swf", lines))
    assert log.anomalies.lines["negative_time"].tolist() == [1, 2, 3, 4]
    assert "negative_time: 4" in log.anomalies.summary()


def test_empty_log(tmp_path):
    log = read_swf(_write(tmp_path, "empty.swf", ["; MaxProcs: 3", ";"]))
    assert log.n_jobs == 0
    assert list(log.jobs.columns) == [*SWF_COLUMNS, "line"]
    assert all(v == 0 for v in log.anomalies.counts.values())


# Random logs: what is read back equals what was written, and the anomaly counts equal a plain-Python
# evaluation of the definitions.
_value = st.one_of(st.just(-1), st.integers(min_value=-3, max_value=400))
_row = st.tuples(*[_value] * 17, st.sampled_from([-1, 0, 3]))


def _oracle(rows: list[tuple], max_procs: int) -> dict[str, list[int]]:
    index = {name: k for k, name in enumerate(SWF_COLUMNS)}
    out: dict[str, list[int]] = {k: [] for k in ANOMALY_KINDS}
    seen: set[int] = set()
    for n, row in enumerate(rows):
        line = n + 1
        v = {name: row[k] for name, k in index.items()}
        if v["run_time"] == -1:
            out["run_time_missing"].append(line)
        if v["run_time"] == 0:
            out["run_time_zero"].append(line)
        if any(v[c] < 0 and v[c] != -1 for c in ("submission_time", "wait_time", "run_time", "requested_time")):
            out["negative_time"].append(line)
        if v["allocated_processors"] == -1:
            out["allocated_missing"].append(line)
        if v["requested_processors"] == -1:
            out["requested_processors_missing"].append(line)
        if any(v[c] <= 0 and v[c] != -1 for c in ("allocated_processors", "requested_processors")):
            out["nonpositive_processors"].append(line)
        if v["requested_time"] == -1:
            out["requested_time_missing"].append(line)
        if v["allocated_processors"] > max_procs or v["requested_processors"] > max_procs:
            out["more_processors_than_machine"].append(line)
        if n > 0 and v["submission_time"] < rows[n - 1][index["submission_time"]]:
            out["submission_time_decreasing"].append(line)
        if v["job_id"] in seen:
            out["duplicate_job_id"].append(line)
        seen.add(v["job_id"])
        if v["run_time"] >= 0 and v["requested_time"] >= 0 and v["run_time"] > v["requested_time"]:
            out["run_time_exceeds_requested"].append(line)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, min_size=1, max_size=30), compress=st.booleans())
def test_random_logs_round_trip(tmp_path, rows, compress):
    # One header line first: shifts every job line by one.
    full = "; MaxProcs: 200\n" + "\n".join(" ".join(str(v) for v in row) for row in rows) + "\n"
    path = tmp_path / "random.swf"
    path.write_bytes(gzip.compress(full.encode()) if compress else full.encode())
    log = read_swf(path)
    assert log.n_jobs == len(rows)
    assert log.jobs[list(SWF_COLUMNS)].to_numpy().tolist() == [list(map(float, r)) for r in rows]
    expected = {k: [line + 1 for line in v] for k, v in _oracle(rows, 200).items()}
    assert {k: v.tolist() for k, v in log.anomalies.lines.items()} == expected
    assert log.anomalies.missing == {c: sum(1 for r in rows if r[k] == -1) for k, c in enumerate(SWF_COLUMNS)}


# Issue 9, item 5: integer fields beyond int64 are an error naming line and field (they used to wrap around to
# -9223372036854775808); integers pandas reads as floats are read again exactly from their text.
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("job_id", "99999999999999999999"),  # beyond uint64 too: pandas keeps the column as text
        ("user_id", "99999999999999999999"),
        ("job_id", "9223372036854775808"),  # int64 max + 1: pandas reads the column as uint64
        ("group_id", "-9223372036854775809"),
        ("allocated_processors", "1e19"),
        ("status", "18446744073709551616"),
    ],
)
def test_integer_beyond_int64_names_line_and_field(tmp_path, field, value):
    fields = GOOD.split()
    fields[SWF_COLUMNS.index(field)] = value
    path = _write(tmp_path, "big.swf", ["; MaxProcs: 4", GOOD, " ".join(fields), GOOD.replace("1 0 0", "4 20 0", 1)])
    with pytest.raises(SwfFormatError) as info:
        read_swf(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 3, field)
    assert "64-bit" in str(info.value) and value in str(info.value)
    skipped = read_swf(path, on_error="skip")
    assert skipped.jobs["line"].tolist() == [2, 4]
    assert skipped.anomalies.lines["integer_out_of_range"].tolist() == [3]


def test_large_integers_are_read_exactly(tmp_path):
    # 2**53 + 1 has no float64 image: the reader must not round it, even when another line of the same column
    # makes pandas read that column as floats ("2e0") or as uint64 (a value above the int64 range elsewhere
    # would be an error, so the float case is the one that matters).
    lines = [
        "9007199254740993 0 0 10 1 -1 -1 1 20 -1 1 9223372036854775807 1 -1 -1 -1 -1 -1",
        "2e0 5 0 10 1 -1 -1 1 20 -1 1 -9223372036854775808 1 -1 -1 -1 -1 -1",
    ]
    log = read_swf(_write(tmp_path, "exact.swf", lines))
    assert log.jobs["job_id"].tolist() == [9007199254740993, 2]
    assert log.jobs["user_id"].tolist() == [2**63 - 1, -(2**63)]
    assert log.jobs["job_id"].dtype == np.int64


# Issue 9, item 4 (reading side): times beyond 2**53 s are not exact to the second; they are anomalies.
def test_times_beyond_float_precision_are_anomalies(tmp_path):
    lines = [
        GOOD,
        "2 1e30 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
        "3 -1e16 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
        "4 9 0 10 1 -1 -1 1 99999999999999999999 -1 1 1 1 -1 -1 -1 -1 -1",
        "5 9007199254740991 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",  # 2**53 - 1: still exact
    ]
    log = read_swf(_write(tmp_path, "huge.swf", lines))
    assert log.anomalies.lines["time_beyond_precision"].tolist() == [2, 3, 4]
    assert log.anomalies.lines["negative_time"].tolist() == [3]
    assert "time_beyond_precision: 3" in log.anomalies.summary()


# Issue 9, item 7: line ends. pandas and the line splitter used to disagree on a stray carriage return (an
# IndexError), a byte order mark failed line 1, and a file with carriage-return line ends read as one comment.
def _kth_head(workloads_dir: Path, n_jobs: int) -> tuple[list[str], list[str]]:
    """Header lines and the first ``n_jobs`` job lines of KTH-SP2, as text lines."""
    text = gzip.decompress((workloads_dir / "KTH-SP2-1996-2.1-cln.swf.gz").read_bytes()).decode()
    lines = text.split("\n")
    header = [t for t in lines if t.startswith(";")]
    jobs = [t for t in lines if t.strip() and not t.startswith(";")][:n_jobs]
    return header, jobs


def test_bom_and_carriage_return_line_ends_read_like_plain_lines(workloads_dir, tmp_path):
    header, jobs = _kth_head(workloads_dir, 60)
    plain = tmp_path / "plain.swf"
    plain.write_bytes(("\n".join(header + jobs) + "\n").encode())
    reference = read_swf(plain)
    variants = {
        "bom.swf": b"\xef\xbb\xbf" + plain.read_bytes(),
        "cr.swf": ("\r".join(header + jobs) + "\r").encode(),
        "crlf.swf": ("\r\n".join(header + jobs) + "\r\n").encode(),
        "bom-cr.swf.gz": gzip.compress(b"\xef\xbb\xbf" + ("\r".join(header + jobs)).encode()),
    }
    for name, data in variants.items():
        path = tmp_path / name
        path.write_bytes(data)
        log = read_swf(path)
        pd.testing.assert_frame_equal(log.jobs, reference.jobs)
        assert log.header == reference.header and log.max_procs == 100, name
        assert log.anomalies.counts == reference.anomalies.counts


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        (lambda t: t[:20] + "\r" + t[20:], "carriage return"),  # inside a field or between two
        (lambda t: t.strip().replace(" ", "\r", 1), "carriage return"),
        (lambda t: t[:10] + "\x00" + t[10:], "'\\x00'"),
        (lambda t: t + "\x0c", None),  # a form feed at the end is whitespace: the line reads fine
        (lambda t: t.strip().replace(" ", "\x0b", 3), "'\\x0b'"),
    ],
)
def test_control_character_inside_a_job_line_names_the_line(workloads_dir, tmp_path, damage, fragment):
    header, jobs = _kth_head(workloads_dir, 30)
    jobs[9] = damage(jobs[9])
    path = tmp_path / "damaged.swf"
    path.write_bytes(("\n".join(header + jobs) + "\n").encode())
    line = len(header) + 10
    if fragment is None:
        assert read_swf(path).n_jobs == 30
        return
    with pytest.raises(SwfFormatError) as info:
        read_swf(path)
    assert (info.value.path, info.value.line) == (str(path), line)
    assert fragment in str(info.value) and f"line {line}" in str(info.value)
    skipped = read_swf(path, on_error="skip")
    assert skipped.n_jobs == 29 and line not in skipped.jobs["line"].tolist()
    assert skipped.anomalies.lines["control_character"].tolist() == [line]


def test_mixed_line_ends_cannot_hide_jobs_in_a_comment(tmp_path):
    # A block with carriage-return line ends inside a file with line feeds: the comment on line 2 would swallow
    # the job after it; refused instead, naming the line.
    path = tmp_path / "mixed.swf"
    path.write_bytes(f"; MaxProcs: 4\n; Note: converted\r{GOOD}\r\n{GOOD.replace('1 0 0', '2 5 0', 1)}\n".encode())
    with pytest.raises(SwfFormatError, match=r"line 2: carriage return"):
        read_swf(path)


# Issue 25, item 13: the reader goes through the file a block at a time. A large file malformed from its first line
# is refused after its first block (it was read whole first: 4.3 GB of memory for a 2 GB file), and a large good
# log takes memory for its jobs, not for its bytes several times over. Memory is measured with tracemalloc (Python
# and numpy allocations), never with a clock.
LARGE = 50 * 2**20


def _peak_traced(read) -> tuple[object, int]:
    """``read()``'s result (or the ValueError it raised) and the peak of memory traced meanwhile, in bytes."""
    tracemalloc.start()
    try:
        result = read()
    except ValueError as error:
        result = error
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return result, peak


def _sparse(path: Path, head: bytes, size: int = LARGE, tail: bytes = b"") -> Path:
    """``head``, then NUL bytes up to ``size`` (a hole: no disk written), then ``tail``."""
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)
        handle.seek(size)
        handle.write(tail)
    return path


@pytest.mark.parametrize("name, compress", [("bad.swf", False), ("not-gzip.swf.gz", False), ("bad.swf.gz", True)])
def test_a_large_file_malformed_from_its_first_line_is_refused_after_reading_little(tmp_path, name, compress):
    head = b"this is not an SWF log\n"
    path = _sparse(tmp_path / name, head)
    if compress:  # the same 50 MB once decompressed
        path.write_bytes(gzip.compress(path.read_bytes()))
    error, peak = _peak_traced(lambda: read_swf(path))
    assert isinstance(error, SwfFormatError)
    assert (error.path, error.line, str(error)) == (
        str(path), 1, f"{path}, line 1, field 'used_memory': expected 18 fields, found 6")
    assert peak < 2**20, f"{peak} bytes traced to refuse line 1 of a {LARGE}-byte file"


@pytest.mark.parametrize("compress", [False, True])
def test_memory_of_reading_a_large_log_follows_its_jobs_not_its_bytes(workloads_dir, tmp_path, compress):
    # KTH-SP2 with each line padded with blanks to 1,000 bytes (SWF fields are separated by any whitespace): 28.5 MB
    # of text for a frame of 4.3 MB. The old reader held the bytes, the decoded text and the packed job lines at
    # once: 57 MB traced for the plain file, 61 MB for the gzip one (about 8 MB now).
    header, jobs = _kth_head(workloads_dir, 28_476)
    text = "".join(f"{line:<999}\n" for line in header + jobs)
    padded = tmp_path / ("padded.swf.gz" if compress else "padded.swf")
    padded.write_bytes(gzip.compress(text.encode(), compresslevel=1) if compress else text.encode())
    plain = tmp_path / "plain.swf"
    plain.write_text("\n".join(header + jobs) + "\n")
    log, peak = _peak_traced(lambda: read_swf(padded))
    pd.testing.assert_frame_equal(log.jobs, read_swf(plain).jobs)
    assert log.n_jobs == len(jobs) == 28_476
    frame = int(log.jobs.memory_usage().sum())
    assert peak < frame + len(text) // 4, f"{peak} bytes traced for a {len(text)}-byte log whose frame is {frame}"


def test_a_long_malformed_line_is_skipped_without_being_held(tmp_path):
    # 50 MB of NUL bytes on line 2 (a damaged copy): with on_error="skip" the line is counted and its rest passed
    # over as it is read, instead of being held whole; the jobs around it are read.
    other = GOOD.replace("1 0 0", "2 5 0", 1)
    path = _sparse(tmp_path / "damaged.swf", f"; MaxProcs: 4\n{GOOD}\nx".encode(), tail=f"\n{other}\n".encode())
    log, peak = _peak_traced(lambda: read_swf(path, on_error="skip"))
    assert log.jobs["line"].tolist() == [2, 4]
    assert log.anomalies.lines["control_character"].tolist() == [3]
    assert "'\\x00' inside the line" in str(log.anomalies.format_errors[0])
    assert peak < LARGE // 4, f"{peak} bytes traced to skip a {LARGE}-byte line"


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_folder_or_a_fifo_is_named_as_such_without_opening_it(tmp_path, kind):
    # A FIFO used to be opened and read, which waits for a writer forever; now it is refused at once.
    path = tmp_path / "log.swf"
    path.mkdir() if kind == "folder" else os.mkfifo(path)
    outcome: list[BaseException] = []
    reader = threading.Thread(target=lambda: outcome.append(_raised(lambda: read_swf(path))), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # the old reader waits in open(): give it a writer and an end of file
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("reading the FIFO waited for a writer")
    what = "is a folder" if kind == "folder" else "is not a regular file (a FIFO, a socket or a device)"
    assert str(outcome[0]) == f"{path}: {what}, not an SWF log"
    assert isinstance(outcome[0], SwfFormatError)


def _raised(call) -> BaseException | None:
    try:
        call()
    except BaseException as error:  # noqa: BLE001 - the test looks at whatever was raised
        return error
    return None


def test_a_json_document_given_as_an_swf_log_is_named(tmp_path, golden_dir):
    # The golden kth2000 Batsim workload, misnamed .swf: its first line is JSON.
    path = tmp_path / "workload.swf"
    path.write_bytes((golden_dir / "kth2000" / "workload.json").read_bytes())
    with pytest.raises(SwfFormatError, match=r"line 1, field '.*': expected 18 fields, found \d+ \(this is JSON, "
                                             r"not SWF: a Batsim workload goes in a \.json file\)$"):
        read_swf(path)


def test_a_log_built_in_memory_is_checked_as_read_swf_checks_a_file(tmp_path):
    """swf_log_from_frame (generated logs): the same frame and anomalies as the same lines read from a file."""
    import pandas as pd

    from batreplay.workloads.swf import SWF_COLUMNS, swf_log_from_frame

    lines = ["1 0 -1 100 2 -1 -1 2 50 -1 1 1 1 -1 -1 -1 -1 -1", "2 10 -1 0 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1"]
    path = tmp_path / "two.swf"
    path.write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    read = read_swf(path)
    frame = pd.DataFrame([[float(v) for v in line.split()] for line in lines], columns=list(SWF_COLUMNS))
    built = swf_log_from_frame(path, [("MaxProcs", "4")], frame.assign(line=[2, 3]))
    assert built.jobs.equals(read.jobs) and built.header == read.header and built.max_procs == 4
    assert built.anomalies.counts == read.anomalies.counts  # run time 0, run time above requested
    with pytest.raises(ValueError, match="needs the numeric columns"):
        swf_log_from_frame(path, [], frame.drop(columns=["status"]).assign(line=[2, 3]))
