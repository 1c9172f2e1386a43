"""Tests of the SWF -> Batsim workload conversion: the golden kth2000 workload made by real Batsim users of
KTH-SP2, the whole KTH-SP2 and HPC2N logs, hand-made logs with hand-computed results, and invariants."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from batreplay.cli import main
from batreplay.workloads.swf import SwfFormatError, read_swf
from batreplay.workloads.batsim_workload import (
    CHANGE_REASONS,
    DROP_REASONS,
    JOB_TABLE_COLUMNS,
    NOTE_REASONS,
    NoJobsError,
    WorkloadFormatError,
    read_workload_json,
    swf_to_workload,
    validate_workload,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def kth_log(workloads_dir):
    return read_swf(workloads_dir / KTH)


def _values(document: dict) -> list[tuple]:
    """(id, subtime, res, walltime, delay) per job, profile names resolved."""
    profiles = document["profiles"]
    return [(j["id"], j["subtime"], j["res"], j["walltime"], profiles[j["profile"]]["delay"]) for j in document["jobs"]]


def test_golden_kth2000_workload(kth_log, golden_dir):
    # shared/batsim-golden/README.md: first 2000 KTH-SP2 jobs with run time > 0 and allocated > 0;
    # res = allocated, walltime = requested time, delay = run time, subtime from the first job.
    golden = json.loads((golden_dir / "kth2000" / "workload.json").read_text())
    workload = swf_to_workload(
        kth_log, profile="delay", res_source="allocated", res_fallback=False, walltime_fallback="drop", max_jobs=2000
    )
    assert len(golden["jobs"]) == 2000
    assert _values(workload.to_json_dict()) == _values(golden)
    assert workload.nb_res == golden["nb_res"] == 100
    # Same sharing of profiles: one per distinct run time.
    assert len(workload.profiles) == len(golden["profiles"])
    assert workload.report.n_jobs == 2000
    assert (
        workload.report.n_swf_jobs
        == workload.report.n_jobs + workload.report.n_dropped + workload.report.n_not_considered
    )


def _plain_kth_rows(path: Path) -> list[list[str]]:
    """Job lines of the log split by hand (independent of the pandas reader)."""
    with gzip.open(path, "rt") as handle:
        return [line.split() for line in handle if line.strip() and not line.startswith(";")]


def test_whole_kth_conversion_accounts_for_every_job(kth_log, workloads_dir):
    workload = swf_to_workload(kth_log)
    report = workload.report
    rows = _plain_kth_rows(workloads_dir / KTH)
    # Counted by hand on the raw fields: run time 0 (field 4), and processors -1 in both fields 5 and 8.
    zero_run = [r[0] for r in rows if float(r[3]) == 0]
    no_procs = [r[0] for r in rows if int(r[4]) <= 0 and int(r[7]) <= 0]
    assert len(zero_run) == 8 and len(no_procs) == 1
    assert report.dropped_counts == {**dict.fromkeys(DROP_REASONS, 0), "run_time_zero": 8, "res_missing": 1}
    assert report.n_jobs == len(rows) - 9 == len(workload.jobs)
    assert report.n_not_considered == 0
    # The report's lines are the lines of exactly those jobs.
    line_to_id = dict(zip(kth_log.jobs["line"], kth_log.jobs["job_id"].astype(str)))
    assert sorted(line_to_id[n] for n in report.dropped["run_time_zero"]) == sorted(zero_run)
    assert [line_to_id[n] for n in report.dropped["res_missing"]] == no_procs
    assert {j["id"] for j in workload.jobs} == {r[0] for r in rows} - set(zero_run) - set(no_procs)
    # Run times, requested times and processors preserved exactly.
    raw = {r[0]: r for r in rows}
    for job in workload.jobs:
        fields = raw[job["id"]]
        assert workload.profiles[job["profile"]] == {"type": "delay", "delay": int(fields[3])}
        assert job["walltime"] == float(fields[8])
        assert job["res"] == int(fields[4])
    assert "run_time_zero: 8" in report.summary() and str(workloads_dir / KTH) in report.summary()


def test_job_table(kth_log):
    workload = swf_to_workload(kth_log, max_jobs=50)
    table = workload.job_table
    assert tuple(table.columns) == JOB_TABLE_COLUMNS
    assert table["job_id"].tolist() == [j["id"] for j in workload.jobs]
    assert table["submission_time"].tolist() == [j["subtime"] for j in workload.jobs]
    assert table["profile"].tolist() == [j["profile"] for j in workload.jobs]
    first = table.iloc[0]
    # KTH job 15 (line 25): submit 599850, wait 192180, run 3477, user 12.
    assert (first["job_id"], first["swf_line"], first["user_id"]) == ("15", 25, 12)
    assert (first["swf_submission_time"], first["swf_wait_time"], first["run_time"]) == (599850.0, 192180.0, 3477.0)
    assert workload.submission_origin == 599850.0
    assert workload.unix_start_time == 843480031
    assert np.array_equal(table["submission_time"], table["swf_submission_time"] - 599850.0)


def test_parallel_homogeneous_mode(kth_log):
    speed = 1.5e9
    workload = swf_to_workload(kth_log, profile="parallel_homogeneous", node_speed=speed, max_jobs=3000)
    delays = swf_to_workload(kth_log, max_jobs=3000)
    assert [j["id"] for j in workload.jobs] == [j["id"] for j in delays.jobs]
    for job, table_run in zip(workload.jobs, workload.job_table["run_time"]):
        prof = workload.profiles[job["profile"]]
        assert prof["type"] == "parallel_homogeneous" and prof["com"] == 0
        assert prof["cpu"] / speed == table_run
        assert job["profile"].startswith("ph_")
    with pytest.raises(ValueError, match="node_speed"):
        swf_to_workload(kth_log, profile="parallel_homogeneous")
    with pytest.raises(ValueError, match="node_speed"):
        swf_to_workload(kth_log, profile="parallel_homogeneous", node_speed=0)


def test_whole_hpc2n_conversion(workloads_dir):
    log = read_swf(workloads_dir / "HPC2N-2002-2.2-cln.swf.gz")
    workload = swf_to_workload(log)
    # HPC2N has no zero or missing run time and no missing processor count (see its anomaly counts).
    assert log.anomalies.count("run_time_zero") == log.anomalies.count("run_time_missing") == 0
    assert workload.report.n_jobs == 202871 == len(workload.jobs)
    assert workload.nb_res == 240
    assert np.array_equal(workload.job_table["run_time"].to_numpy(), log.jobs["run_time"].to_numpy())
    assert workload.report.note_counts["walltime_below_run_time"] == log.anomalies.count("run_time_exceeds_requested")
    validate_workload(workload.to_json_dict())


# Hand-made log; the expected conversions below are worked out by hand from these lines.
HAND_MADE = """\
; MaxProcs: 8
1  100  5  100   4  -1 -1  4  200 -1 1 7 1 -1 -1 -1 -1 -1
2  110  0  -1    2  -1 -1  2  100 -1 1 7 1 -1 -1 -1 -1 -1
3  120  0  0     2  -1 -1  2  100 -1 0 8 1 -1 -1 -1 -1 -1
4  130  9  100  -1  -1 -1  3   -1 -1 1 8 1 -1 -1 -1 -1 -1
5  140  0  30   -1  -1 -1 -1   60 -1 1 9 1 -1 -1 -1 -1 -1
6  150  0  12.5 16  -1 -1 16   60 -1 1 9 1 -1 -1 -1 -1 -1
1  160  0  40    1  -1 -1  1   30 -1 1 9 1 -1 -1 -1 -1 -1
8  170.5 0 12.5  1  -1 -1 -1   12.5 -1 1 9 1 -1 -1 -1 -1 -1
"""
# line 2: job 1, kept as is.                      line 3: run time -1 -> dropped (run_time_missing).
# line 4: run time 0 -> dropped, or 1 s with "min". line 5: allocated -1 -> res 3 from requested;
#         requested time -1 -> walltime fallback.  line 6: no processor count -> dropped (res_missing).
# line 7: 16 > MaxProcs 8 -> dropped (res_exceeds_nb_res).
# line 8: job number 1 again -> dropped (duplicate_job_id); its walltime 30 < run 40 would have been noted.
# line 9: walltime 12.5 == run time 12.5 -> noted; requested processors -1 (allocated 1 is used).


@pytest.fixture
def hand_log(tmp_path):
    path = tmp_path / "hand.swf"
    path.write_text(HAND_MADE)
    return read_swf(path)


def test_hand_made_defaults(hand_log):
    workload = swf_to_workload(hand_log)
    report = workload.report
    assert report.dropped_counts == {
        "run_time_missing": 1,
        "run_time_negative": 0,
        "run_time_zero": 1,
        "res_missing": 1,
        "walltime_missing": 0,
        "submission_time_missing": 0,
        "submission_time_negative": 0,
        "time_beyond_precision": 0,
        "res_exceeds_nb_res": 1,
        "duplicate_job_id": 1,
    }
    assert {k: v.tolist() for k, v in report.dropped.items() if len(v)} == {
        "run_time_missing": [3],
        "run_time_zero": [4],
        "res_missing": [6],
        "res_exceeds_nb_res": [7],
        "duplicate_job_id": [8],
    }
    assert {k: v.tolist() for k, v in report.changed.items() if len(v)} == {
        "res_from_requested": [5],
        "walltime_from_run_time": [5],
    }
    assert {k: v.tolist() for k, v in report.notes.items() if len(v)} == {"walltime_equals_run_time": [5, 9]}
    # Subtimes from the earliest converted submission (100); res, walltime, delay by hand.
    assert _values(workload.to_json_dict()) == [
        ("1", 0, 4, 200, 100),
        ("4", 30, 3, 100, 100),
        ("8", 70.5, 1, 12.5, 12.5),
    ]
    assert workload.nb_res == 8
    # Jobs 1 and 4 both last 100 s: one shared profile; names derive from the value.
    assert workload.profiles == {
        "delay_100": {"type": "delay", "delay": 100},
        "delay_12.5": {"type": "delay", "delay": 12.5},
    }
    assert [j["profile"] for j in workload.jobs] == ["delay_100", "delay_100", "delay_12.5"]
    assert workload.job_table["user_id"].tolist() == [7, 8, 9]
    assert report.n_swf_jobs == 8 == report.n_jobs + report.n_dropped


def test_hand_made_options(hand_log):
    minimum = swf_to_workload(hand_log, zero_runtime="min", min_runtime=2.0, walltime_fallback=600)
    assert [j["id"] for j in minimum.jobs] == ["1", "3", "4", "8"]
    job3 = minimum.jobs[1]
    assert minimum.profiles[job3["profile"]] == {"type": "delay", "delay": 2}
    assert minimum.jobs[2]["walltime"] == 600
    assert minimum.report.changed["run_time_zero_set_to_min"].tolist() == [4]
    assert minimum.report.changed["walltime_from_fallback_value"].tolist() == [5]
    assert minimum.job_table["run_time"].tolist() == [100.0, 2.0, 100.0, 12.5]

    strict = swf_to_workload(hand_log, res_fallback=False, walltime_fallback="drop")
    assert [j["id"] for j in strict.jobs] == ["1", "8"]
    assert strict.report.dropped["res_missing"].tolist() == [5, 6]  # line 5 counted once, under res_missing

    requested = swf_to_workload(hand_log, res_source="requested")
    assert requested.report.changed["res_from_allocated"].tolist() == [9]
    assert requested.report.changed_counts["res_from_requested"] == 0
    assert [j["res"] for j in requested.jobs] == [4, 3, 1]

    kept = swf_to_workload(hand_log, oversized="keep")
    assert "6" in [j["id"] for j in kept.jobs]
    assert kept.report.notes["res_exceeds_nb_res_kept"].tolist() == [7]

    wide = swf_to_workload(hand_log, nb_res=20)
    assert wide.nb_res == 20 and wide.report.dropped_counts["res_exceeds_nb_res"] == 0

    first_two = swf_to_workload(hand_log, max_jobs=2)
    assert [j["id"] for j in first_two.jobs] == ["1", "4"]
    # Lines 6..9 come after the second converted job (line 5): not considered, not counted as dropped.
    assert first_two.report.n_not_considered == 4
    assert first_two.report.dropped_counts["res_exceeds_nb_res"] == 0
    assert first_two.report.n_dropped == 2
    assert "4 not considered" in first_two.report.summary()

    for bad in (
        {"profile": "smpi"},
        {"res_source": "both"},
        {"zero_runtime": "keep"},
        {"min_runtime": 0},
        {"walltime_fallback": -5},
        {"walltime_fallback": "forever"},
        {"nb_res": 0},
        {"max_jobs": -1},
        {"oversized": "clip"},
    ):
        with pytest.raises(ValueError):
            swf_to_workload(hand_log, **bad)


def test_write_and_read_back(hand_log, tmp_path):
    workload = swf_to_workload(hand_log)
    path = workload.write(tmp_path / "w.json")
    assert read_workload_json(path) == workload.to_json_dict()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hand.swf", "w.json"]  # no temporary file left


@pytest.mark.parametrize(
    ("mutate", "field", "fragment"),
    [
        (lambda d: d.pop("nb_res"), "nb_res", "missing"),
        (lambda d: d["jobs"][1].pop("res"), "jobs[1].res", "missing"),
        (lambda d: d["jobs"][2].update(profile="nope"), "jobs[2].profile", "unknown profile 'nope'"),
        (lambda d: d["jobs"][1].update(id="1"), "jobs[1].id", "duplicate"),
        (lambda d: d["jobs"][0].update(walltime=0), "jobs[0].walltime", "-1 or > 0"),
        (lambda d: d["jobs"][0].update(subtime="soon"), "jobs[0].subtime", "not a number"),
        (lambda d: d["profiles"]["delay_100"].update(delay=0), "profiles.delay_100.delay", "> 0"),
        (lambda d: d["profiles"].update(x={"cpu": 1}), "profiles.x.type", "missing"),
    ],
)
def test_invalid_workload_names_file_and_field(hand_log, tmp_path, mutate, field, fragment):
    path, error = _refused_after(mutate, swf_to_workload(hand_log).to_json_dict(), tmp_path, field)
    assert str(path) in error and field in error and fragment in error


def _refused_after(mutate, document: dict, tmp_path, field: str) -> tuple:
    """Apply ``mutate`` to ``document``, write it, and check read_workload_json refuses it naming the file and
    ``field``; the file and the error text."""
    mutate(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(WorkloadFormatError) as info:
        read_workload_json(path)
    assert (info.value.path, info.value.field) == (str(path), field)
    return path, str(info.value)


def test_not_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"nb_res": 4,\n "jobs": [}')
    with pytest.raises(WorkloadFormatError, match="line 2"):
        read_workload_json(path)


# Random logs: every SWF job is accounted for and the result is a valid Batsim workload.
_row = st.tuples(
    st.integers(1, 40),  # job id (duplicates happen)
    st.integers(0, 1000),  # submit
    st.sampled_from([-1, 0, 3]),  # wait
    st.one_of(st.just(-1), st.just(0), st.integers(-3, 500), st.floats(0.5, 99.5).map(lambda x: round(x, 2))),
    st.integers(-1, 12),  # allocated
    st.integers(-1, 12),  # requested processors
    st.one_of(st.just(-1), st.integers(0, 600)),  # requested time
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(_row, min_size=1, max_size=25),
    zero_runtime=st.sampled_from(["drop", "min"]),
    walltime_fallback=st.sampled_from(["runtime", "drop", 30.0]),
    max_jobs=st.one_of(st.none(), st.integers(0, 10)),
)
def test_conversion_invariants(tmp_path, rows, zero_runtime, walltime_fallback, max_jobs):
    lines = ["; MaxProcs: 10"] + [
        f"{j} {s} {w} {r} {a} -1 -1 {p} {t} -1 1 1 1 -1 -1 -1 -1 -1" for j, s, w, r, a, p, t in rows
    ]
    path = tmp_path / "random.swf"
    path.write_text("\n".join(lines) + "\n")
    log = read_swf(path)
    try:
        workload = swf_to_workload(log, zero_runtime=zero_runtime, walltime_fallback=walltime_fallback,
                                   max_jobs=max_jobs)
    except NoJobsError as error:  # no job left: every SWF job is accounted for in the message instead
        counts = [int(n) for n in re.findall(r"\b[a-z_]+: (\d+)", error.reason)]
        cut = re.search(r"(\d+) not considered after max_jobs", error.reason)
        assert sum(counts) + (int(cut.group(1)) if cut else 0) == len(rows), error.reason
        assert str(error).startswith(f"{path}: no job in the workload: ")
        return
    report = workload.report
    assert workload.jobs  # a conversion that keeps no job raises NoJobsError
    assert report.n_swf_jobs == len(rows) == report.n_jobs + report.n_dropped + report.n_not_considered
    if max_jobs is not None:
        assert report.n_jobs <= max_jobs
    dropped_lines = np.concatenate(list(report.dropped.values()))
    assert len(set(dropped_lines.tolist())) == len(dropped_lines)  # each job dropped once
    assert not set(dropped_lines.tolist()) & set(workload.job_table["swf_line"].tolist())
    if workload.jobs:
        validate_workload(workload.to_json_dict())
        assert min(j["subtime"] for j in workload.jobs) == 0
        assert all(0 < j["res"] <= workload.nb_res == 10 for j in workload.jobs)
        assert all(workload.profiles[j["profile"]]["delay"] > 0 for j in workload.jobs)
        assert len({j["id"] for j in workload.jobs}) == len(workload.jobs)
        assert {j["profile"] for j in workload.jobs} == set(workload.profiles)
        by_line = dict(zip(log.jobs["line"], log.jobs["run_time"]))
        for line, run in zip(workload.job_table["swf_line"], workload.job_table["run_time"]):
            assert run == (by_line[line] if by_line[line] > 0 else 1.0)
    assert set(report.dropped) == set(DROP_REASONS)
    assert set(report.changed) == set(CHANGE_REASONS) and set(report.notes) == set(NOTE_REASONS)
    json.dumps(report.to_dict())


def test_walltime_factor_raises_short_walltimes_only(tmp_path):
    """walltime = max(requested, factor x run time), as Batsim's SWF converter does (factor 2 by default)."""
    lines = [
        "; MaxProcs: 8",
        # job, submit, wait, run, alloc, cpu, mem, req procs, req time, ...
        "1 0 0 100 1 -1 -1 1 150 -1 1 1 1 -1 -1 -1 -1 -1",   # 150 < 2 x 100: raised to 200
        "2 5 0 100 1 -1 -1 1 500 -1 1 1 1 -1 -1 -1 -1 -1",   # 500 >= 200: kept
        "3 9 0 100 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1",    # no requested time: fallback (run time), not raised
    ]
    path = tmp_path / "w.swf"
    path.write_text("\n".join(lines) + "\n")
    converted = swf_to_workload(path, walltime_factor=2.0)
    assert [job["walltime"] for job in converted.jobs] == [200, 500, 100]
    assert list(converted.report.changed["walltime_raised_to_factor_x_run_time"]) == [2]
    with pytest.raises(ValueError, match="walltime_factor"):
        swf_to_workload(path, walltime_factor=0)


# --- Issue 9: absurd times, MaxProcs headers, and JSON workloads refused before simulating -----------------


def _kth_slice(workloads_dir: Path, n_jobs: int = 200) -> tuple[list[str], list[str]]:
    """Header lines and the first ``n_jobs`` job lines of KTH-SP2."""
    text = gzip.decompress((workloads_dir / KTH).read_bytes()).decode()
    lines = text.split("\n")
    return [t for t in lines if t.startswith(";")], [t for t in lines if t.strip() and not t.startswith(";")][:n_jobs]


def _write_swf(path: Path, header: list[str], jobs: list[str]) -> Path:
    path.write_text("\n".join(header + jobs) + "\n")
    return path


def _set_field(line: str, field: int, value: str) -> str:
    fields = line.split()
    fields[field] = value
    return " ".join(fields)


def _used_profiles(workload) -> dict:
    return {j["profile"]: workload.profiles[j["profile"]] for j in workload.jobs}


@pytest.mark.parametrize("submission", ["-500", "1e30", "-1e16"])
@pytest.mark.parametrize("profile", ["delay", "parallel_homogeneous"])
def test_one_absurd_submission_time_changes_no_other_job(workloads_dir, tmp_path, submission, profile):
    # Item 4: the job is dropped and reported with its line; the other 199 jobs convert exactly as in the clean
    # slice (a negative origin used to shift them all, 1e30 turned every submission time into a float, -1e16 rounded
    # them to even seconds).
    header, jobs = _kth_slice(workloads_dir)
    clean = _write_swf(tmp_path / "clean.swf", header, jobs)
    bad_jobs = list(jobs)
    bad_jobs[50] = _set_field(jobs[50], 1, submission)
    bad = _write_swf(tmp_path / "bad.swf", header, bad_jobs)
    bad_line = len(header) + 51
    options = {"profile": profile, "node_speed": 1e9 if profile == "parallel_homogeneous" else None, "nb_res": 100}
    reference = swf_to_workload(clean, **options)
    converted = swf_to_workload(bad, **options)

    others = reference.job_table["swf_line"].to_numpy() != bad_line
    assert converted.jobs == [j for j, keep in zip(reference.jobs, others) if keep]
    assert _used_profiles(converted).items() <= _used_profiles(reference).items()
    pd.testing.assert_frame_equal(converted.job_table, reference.job_table[others].reset_index(drop=True))
    assert converted.submission_origin == reference.submission_origin == 599850.0
    reason = "submission_time_negative" if submission.startswith("-") else "time_beyond_precision"
    assert converted.report.dropped[reason].tolist() == [bad_line]
    assert converted.report.n_jobs == reference.report.n_jobs - 1 == 199
    assert f"dropped {reason}: 1" in converted.report.summary() and str(bad_line) in converted.report.summary()
    kind = "negative_time" if submission.startswith("-") else "time_beyond_precision"
    assert read_swf(bad).anomalies.lines[kind].tolist() == [bad_line]


def _small_log(path, submission_times: list[str], header: str | None = None):
    """An SWF file of one-processor jobs numbered from 1 (run time 10 s, requested 20 s), submitted at
    ``submission_times`` (written as given)."""
    lines = ([header] if header else []) + [
        f"{number} {submission} 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1"
        for number, submission in enumerate(submission_times, 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_unknown_submission_time_is_dropped_not_used_as_origin(tmp_path):
    path = _small_log(tmp_path / "unknown.swf", ["100", "-1", "150"], header="; MaxProcs: 4")
    converted = swf_to_workload(path)
    assert [(j["id"], j["subtime"]) for j in converted.jobs] == [("1", 0), ("3", 50)]
    assert converted.report.dropped["submission_time_missing"].tolist() == [3]


def test_fractional_submission_times_rebase_to_their_decimal_difference(tmp_path):
    # 1000.1 - 1000 in float64 is 0.10000000000002274: the log says 0.1 s after the first job.
    path = _small_log(tmp_path / "fraction.swf", ["1000", "1000.1", "123456789.37"])
    converted = swf_to_workload(path)
    assert [j["subtime"] for j in converted.jobs] == [0.0, 0.1, 123455789.37]
    assert json.dumps([j["subtime"] for j in converted.jobs]) == "[0.0, 0.1, 123455789.37]"


def test_times_beyond_exact_seconds_are_an_error(tmp_path):
    # Every submit time is below 2**53, but the simulation would run past it: seconds would not be exact.
    lines = [
        "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
        "2 9007199254740000 0 3600 1 -1 -1 1 7200 -1 1 1 1 -1 -1 -1 -1 -1",
    ]
    path = tmp_path / "late.swf"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SwfFormatError) as info:
        swf_to_workload(path)
    assert info.value.path == str(path) and info.value.field == "submission_time" and "2**53" in str(info.value)


def test_execution_times_stay_exact_with_an_absurd_submission_time(workloads_dir, tmp_path):
    # Item 4 end to end: with one job at -1e16, 118 of the 200 jobs used to get a wrong execution_time.
    header, jobs = _kth_slice(workloads_dir)
    jobs[50] = _set_field(jobs[50], 1, "-1e16")
    bad = _write_swf(tmp_path / "bad.swf", header, jobs)
    out = tmp_path / "run"
    assert main(["run", "--workload", str(bad), "--platform", "kth-sp2", "--scheduler", "easy", "--profile",
                 "delay", "--out", str(out), "--quiet"]) == 0
    result = pd.read_csv(out / "out_jobs.csv")
    recorded = {int(f[0]): (float(f[3]), float(f[8])) for f in (line.split() for line in jobs)}
    assert len(result) == 199 and int(jobs[50].split()[0]) not in set(result["job_id"])
    for job_id, execution, walltime in zip(result["job_id"], result["execution_time"], result["requested_time"]):
        run_time, _ = recorded[job_id]
        assert execution == min(run_time, walltime), job_id
    assert result["submission_time"].min() == 0


@pytest.mark.parametrize("max_procs", ["50", "0", "-1", "abc"])
def test_maxprocs_header_does_not_drop_jobs_that_fit_the_platform(workloads_dir, tmp_path, max_procs):
    # Item 6: the platform (100 nodes) decides which jobs fit; a header that disagrees is a note.
    header, jobs = _kth_slice(workloads_dir)
    header = [f"; MaxProcs: {max_procs}" if t.startswith("; MaxProcs:") else t for t in header]
    path = _write_swf(tmp_path / "header.swf", header, jobs)
    reference = swf_to_workload(_write_swf(tmp_path / "clean.swf", *_kth_slice(workloads_dir)), nb_res=100)
    converted = swf_to_workload(path, nb_res=100)
    assert converted.jobs == reference.jobs and converted.nb_res == 100
    assert converted.report.n_dropped == reference.report.n_dropped == 0
    wide = converted.job_table["swf_line"][converted.job_table["res"] > 50].tolist()
    if max_procs == "50":
        assert len(wide) > 0 and converted.report.notes["res_exceeds_max_procs"].tolist() == wide
        assert "MaxProcs 50 differs from nb_res 100" in converted.report.summary()
    elif max_procs in ("0", "-1"):
        assert f"MaxProcs {max_procs} ignored" in converted.report.summary()
    assert "nb_res = 100 (given)" in converted.report.summary()
    # Without a platform, MaxProcs 0 is no size: nothing dropped, nb_res from the widest job.
    alone = swf_to_workload(path)
    if max_procs == "50":
        assert alone.report.dropped["res_exceeds_nb_res"].tolist() == wide
        assert "nb_res = 50 (MaxProcs of the header)" in alone.report.summary()
    else:
        widest = int(alone.job_table["res"].max())
        assert alone.report.n_dropped == 0 and alone.nb_res == widest
        assert f"nb_res = {widest} (largest converted job)" in alone.report.summary()


def test_run_checks_swf_jobs_against_the_platform_not_the_header(workloads_dir, tmp_path):
    # Item 6 through `batreplay run`: a MaxProcs 50 (or 0) header gives the same simulation as the clean slice.
    header, jobs = _kth_slice(workloads_dir)
    outputs = {}
    for label, max_procs in (("clean", "100"), ("fifty", "50"), ("zero", "0")):
        changed = [f"; MaxProcs: {max_procs}" if t.startswith("; MaxProcs:") else t for t in header]
        path = _write_swf(tmp_path / f"{label}.swf", changed, jobs)
        out = tmp_path / f"run-{label}"
        assert main(["run", "--workload", str(path), "--platform", "kth-sp2", "--scheduler", "easy",
                     "--out", str(out), "--quiet"]) == 0
        outputs[label] = (out / "out_jobs.csv").read_bytes()
    assert len(pd.read_csv(tmp_path / "run-fifty" / "out_jobs.csv")) == 200
    assert outputs["fifty"] == outputs["clean"] and outputs["zero"] == outputs["clean"]
    notes = json.loads((tmp_path / "run-fifty" / "run.json").read_text())["input_notes"]
    assert any("MaxProcs 50 differs from nb_res 100" in note for note in notes)


def test_run_keeps_and_notes_jobs_wider_than_the_platform(workloads_dir, tmp_path):
    # Jobs wider than the platform are kept (the scheduler rejects them, as the campaigns' infra/2 expects) and
    # the conversion report says so with their lines.
    from batreplay.platforms.generate import write_platform

    header, jobs = _kth_slice(workloads_dir, 100)
    path = _write_swf(tmp_path / "slice.swf", header, jobs)
    platform = write_platform(tmp_path / "p50.xml", 50, 1e9)
    out = tmp_path / "run"
    assert main(["run", "--workload", str(path), "--platform", str(platform), "--scheduler", "easy",
                 "--out", str(out), "--quiet"]) == 0
    result = pd.read_csv(out / "out_jobs.csv")
    assert len(result) == 100
    wide = [int(t.split()[0]) for t in jobs if int(t.split()[4]) > 50]
    assert wide and set(result.loc[result["final_state"] == "REJECTED", "job_id"]) == set(wide)
    notes = json.loads((out / "run.json").read_text())["input_notes"]
    assert any(f"note res_exceeds_nb_res_kept: {len(wide)}" in note for note in notes)


# Item 11: a JSON workload error that can be seen in the file is reported when it is read, naming the file and
# the field, and `batreplay run` prints it as one line.
def _small_workload() -> dict:
    return {
        "nb_res": 4,
        "jobs": [
            {"id": "1", "subtime": 0, "walltime": 100, "res": 2, "profile": "d10"},
            {"id": "2", "subtime": 5, "walltime": 100, "res": 2, "profile": "par"},
        ],
        "profiles": {
            "d10": {"type": "delay", "delay": 10},
            "par": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 0, 0, 0]},
        },
    }


_JSON_MUTATIONS = {
    "negative subtime": (lambda d: d["jobs"][1].update(subtime=-5), "jobs[1].subtime", "negative"),
    "huge subtime": (lambda d: d["jobs"][1].update(subtime=10**30), "jobs[1].subtime", "2**53"),
    "res 0": (lambda d: d["jobs"][0].update(res=0), "jobs[0].res", "> 0"),
    "parallel size": (lambda d: d["jobs"][1].update(res=3), "jobs[1].res", "2 cpu values"),
    "com size": (lambda d: d["profiles"]["par"].update(com=[0, 0]), "profiles.par.com", "needs 4"),
    "same job name": (lambda d: d["jobs"][1].update(id="w0!1"), "jobs[1].id", "duplicate"),
    "two bangs": (lambda d: d["jobs"][1].update(id="a!b!c"), "jobs[1].id", "workload!name"),
    "deep extra field": (
        lambda d: d["jobs"][0].update(extra=json.loads("[" * 600 + "]" * 600)), "jobs[0]", "nested"
    ),
    "deep profile field": (
        lambda d: d["profiles"]["d10"].update(x=json.loads("[" * 600 + "]" * 600)), "profiles.d10", "nested"
    ),
    "huge delay": (lambda d: d["profiles"]["d10"].update(delay=1e300), "profiles.d10.delay", "2**53"),
}


@pytest.mark.parametrize("case", list(_JSON_MUTATIONS))
def test_json_workload_errors_are_found_when_read(tmp_path, case):
    mutate, field, fragment = _JSON_MUTATIONS[case]
    _path, error = _refused_after(mutate, _small_workload(), tmp_path, field)
    assert fragment in error


_BAD_JSON_FILES = {
    "invalid utf-8": (lambda: json.dumps(_small_workload()).encode().replace(b'"1"', b'"\xff"'), "not UTF-8"),
    "nested deeply": (lambda: b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "huge integer": (lambda: b'{"nb_res": ' + b"9" * 5000 + b"}", "invalid JSON"),
    "negative subtime": (
        lambda: json.dumps(_small_workload()).replace('"subtime": 5', '"subtime": -5').encode(), "negative"
    ),
    "unsupported profile": (
        lambda: json.dumps(_small_workload()).replace('"parallel"', '"smpi"').encode(), "embedded engine"
    ),
}


@pytest.mark.parametrize("case", list(_BAD_JSON_FILES))
def test_run_reports_a_bad_json_workload_in_one_line(tmp_path, capsys, case):
    from batreplay.platforms.generate import write_platform

    make, fragment = _BAD_JSON_FILES[case]
    path = tmp_path / "bad.json"
    path.write_bytes(make())
    platform = write_platform(tmp_path / "p4.xml", 4, 1e9)
    with pytest.raises(SystemExit) as info:
        main(["run", "--workload", str(path), "--platform", str(platform), "--scheduler", "easy",
              "--out", str(tmp_path / "run"), "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("batreplay: error: ")
    assert str(path) in err and fragment in err
    assert not (tmp_path / "run").exists()


def test_json_workload_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_small_workload()).encode())
    assert read_workload_json(path) == _small_workload()


def test_walltime_equal_to_run_time_note_says_what_decides_the_end(workloads_dir, tmp_path):
    """Issue 25, item 8: the note used to say that Batsim 4.2.1 ends every job whose walltime equals its run time
    as COMPLETED_WALLTIME_REACHED; on full KTH-SP2 (parallel_homogeneous, the default), 33 of its 38 such jobs end
    COMPLETED_SUCCESSFULLY, as on a real Batsim. Checked on the first 6,000 jobs, where 4 are noted: a delay job
    always ends at its walltime; a parallel task races it, and here job 5464 loses (its walltime sleep ends one
    SimGrid step first) while the 3 others win."""
    from batreplay.run.runner import RunSpec, run

    description = NOTE_REASONS["walltime_equals_run_time"]
    assert "a delay job ends at its walltime, COMPLETED_WALLTIME_REACHED" in description
    assert ("a parallel_homogeneous job races its walltime, and which ends first, COMPLETED_SUCCESSFULLY or "
            "COMPLETED_WALLTIME_REACHED, depends on SimGrid's arithmetic for that job") in description
    log = read_swf(workloads_dir / KTH)
    ends = {}
    for profile in ("parallel_homogeneous", "delay"):
        converted = swf_to_workload(log, profile=profile, node_speed=1e9 if profile != "delay" else None,
                                    max_jobs=6000, nb_res=100, oversized="keep")
        noted = converted.report.notes["walltime_equals_run_time"]
        assert noted.tolist() == [1262, 5188, 5231, 5474]
        table = converted.job_table.set_index("swf_line")
        run(RunSpec.build(workload=workloads_dir / KTH, platform="kth-sp2", scheduler="easy", profile=profile,
                          max_jobs=6000, out_dir=tmp_path / profile))
        states = pd.read_csv(tmp_path / profile / "out_jobs.csv", dtype={"job_id": str}).set_index("job_id")
        ends[profile] = {table.loc[line, "job_id"]: states.loc[table.loc[line, "job_id"], "final_state"]
                         for line in noted}
    assert ends["delay"] == dict.fromkeys(ends["delay"], "COMPLETED_WALLTIME_REACHED")
    assert ends["parallel_homogeneous"] == {"1252": "COMPLETED_SUCCESSFULLY", "5178": "COMPLETED_SUCCESSFULLY",
                                            "5221": "COMPLETED_SUCCESSFULLY", "5464": "COMPLETED_WALLTIME_REACHED"}


# Issue 25, item 13: a JSON workload is looked at before it is read whole.
def test_a_large_json_workload_is_refused_from_its_first_bytes_and_otherwise_read_whole(golden_dir, tmp_path):
    import tracemalloc

    path = tmp_path / "big.json"
    with open(path, "wb") as handle:  # 50 MB: a first line that is no JSON, then NUL bytes (a hole, no disk)
        handle.write(b"this is not a workload\n")
        handle.truncate(50 * 2**20)
    tracemalloc.start()
    try:
        with pytest.raises(WorkloadFormatError) as info:
            read_workload_json(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value) == f"{path}: invalid JSON at line 1, column 1: Expecting value"
    assert peak < 2**20, f"{peak} bytes traced to refuse line 1 of a 50 MB file"
    # Nothing else is refused early. The golden kth2000 workload (210 kB) is read as json.load reads it; so it is
    # with a string that crosses the end of the first 64 KiB looked at; an error past them is reported where it is.
    source = golden_dir / "kth2000" / "workload.json"
    document = json.loads(source.read_text())
    assert read_workload_json(source) == document
    document["jobs"][0]["comment"] = "x" * 200_000  # starts in the first 64 KiB, ends far after
    long_string = tmp_path / "long.json"
    long_string.write_text(json.dumps(document))
    assert read_workload_json(long_string) == document
    text = json.dumps(document, indent=1)
    text = text[: text.rindex("}")] + ",}"  # a comma before the last brace, 400 kB in
    broken = tmp_path / "broken.json"
    broken.write_text(text)
    line = text.count("\n") + 1
    with pytest.raises(WorkloadFormatError, match=rf"line {line}, column 2: Expecting property name"):
        read_workload_json(broken)
