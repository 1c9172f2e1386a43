"""Tests of the workload loader as ``batreplay run`` uses it (issue 25, items 6, 7 and 12): a workload with no job to
simulate, a folder or a FIFO given as the workload, and the range of ``--recorded-speed``, each refused in one line
before any simulation starts, from real KTH-SP2 lines where a log is needed."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from batreplay.cli import main
from batreplay.workloads.loading import WorkloadError, WorkloadOptions, load_workload

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def _kth_lines(workloads_dir: Path) -> tuple[list[str], list[str]]:
    """Header lines and job lines of KTH-SP2."""
    lines = gzip.decompress((workloads_dir / KTH).read_bytes()).decode().splitlines()
    return [t for t in lines if t.startswith(";")], [t for t in lines if t.strip() and not t.startswith(";")]


def _run_error(capsys, workload: Path, out: Path, *options: str) -> str:
    """The one-line error of ``batreplay run`` on ``workload`` (exit status 2, no run directory written)."""
    with pytest.raises(SystemExit) as stop:
        main(["run", "--workload", str(workload), "--platform", "kth-sp2", "--scheduler", "easy", "--out", str(out),
              "--quiet", *options])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("batreplay: error: "), err
    assert not out.exists()
    return err.removeprefix("batreplay: error: ").strip()


def _no_job_cases(workloads_dir: Path, folder: Path) -> dict[str, tuple[Path, str]]:
    """Workloads with no job to simulate, and the reason the error gives."""
    header, jobs = _kth_lines(workloads_dir)
    zero = [line for line in jobs if line.split()[3] == "0"]  # KTH-SP2's 8 jobs with a run time of 0 s
    files = {
        "empty.swf": (b"", "the file is empty (0 bytes)"),
        "empty.swf.gz": (gzip.compress(b""), "the log holds blank lines only (or none, decompressed)"),
        "header.swf": ("\n".join(header).encode() + b"\n", "the log holds no job line, only its header (18 entries)"),
        "zero.swf": ("\n".join(header + zero).encode() + b"\n",
                     "all 8 SWF jobs were dropped (run_time_zero: 8); keep zero run times with --zero-runtime min"),
        "nojobs.json": (json.dumps({"nb_res": 100, "jobs": [], "profiles": {}}).encode(), "its 'jobs' list is empty"),
    }
    cases = {}
    for name, (data, reason) in files.items():
        (folder / name).write_bytes(data)
        cases[name] = (folder / name, reason)
    return cases


@pytest.mark.parametrize("name", ["empty.swf", "empty.swf.gz", "header.swf", "zero.swf", "nojobs.json"])
def test_a_workload_with_no_job_to_simulate_is_refused_when_read(workloads_dir, tmp_path, capsys, name):
    # These used to run: exit 0, a run of 0 jobs, which `batreplay analyze` then refused.
    path, reason = _no_job_cases(workloads_dir, tmp_path)[name]
    assert _run_error(capsys, path, tmp_path / "run") == f"{path}: no job in the workload: {reason}"


def test_every_job_dropped_with_max_jobs_counts_them(workloads_dir, tmp_path, capsys):
    # With --max-jobs, the jobs dropped before the cut are still all counted (the 8 zero run times of KTH-SP2 and
    # its one job without processor count), and --zero-runtime min makes them run.
    header, jobs = _kth_lines(workloads_dir)
    kept = [line for line in jobs if line.split()[3] == "0" or line.split()[4] == line.split()[7] == "-1"]
    path = tmp_path / "dropped.swf"
    path.write_text("\n".join(header + kept) + "\n")
    assert _run_error(capsys, path, tmp_path / "run", "--max-jobs", "3") == (
        f"{path}: no job in the workload: all 9 SWF jobs were dropped (run_time_zero: 8, res_missing: 1); keep zero "
        "run times with --zero-runtime min")
    loaded = load_workload(path, WorkloadOptions(zero_runtime="min", max_jobs=3), nb_res=100)
    assert len(loaded.document["jobs"]) == 3


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_folder_or_a_fifo_given_as_workload_is_named_as_such(tmp_path, capsys, kind):
    # Both were reported as "no such file".
    path = tmp_path / "log.swf"
    path.mkdir() if kind == "folder" else os.mkfifo(path)
    what = "is a folder" if kind == "folder" else "is not a regular file (a FIFO, a socket or a device)"
    assert _run_error(capsys, path, tmp_path / "run") == (
        f"workload {path}: {what}, not a workload file: give a .swf, .swf.gz or .json file")
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    assert str(info.value).startswith(f"workload {path}: {what}, not a workload file")


@pytest.mark.parametrize("speed", [1e-300, 0.5, 2.0**64, 1e300])
def test_recorded_speed_outside_the_range_both_engines_agree_on_is_refused(workloads_dir, tmp_path, capsys, speed):
    # --recorded-speed 1e-300 used to end every job at once on the embedded engine, while a real Batsim 4.2.1
    # stopped answering after 22 messages (SimGrid's rate speed / flop overflowed); 1e300 overflowed the flop
    # amounts to infinity, which Batsim cannot parse.
    err = _run_error(capsys, workloads_dir / KTH, tmp_path / "run", "--recorded-speed", repr(speed))
    assert err.startswith(f"recorded_speed (--recorded-speed) must be a number from 1 to below 1.84467e+19 flop/s, "
                          f"got {speed!r}: ")
    assert "SimGrid's rate" in err and "Batsim's JSON parser" in err
    for fine in (1.0, 2.0**64 - 2**11):
        assert WorkloadOptions(recorded_speed=fine).recorded_speed == fine


def test_a_job_whose_flop_would_leave_the_range_is_named(workloads_dir, tmp_path, capsys):
    # 1e15 flop/s is a valid speed, but KTH-SP2's third job line (line 27, job 17) runs 215,337 s: 2.15e20 flop.
    err = _run_error(capsys, workloads_dir / KTH, tmp_path / "run", "--recorded-speed", "1e15", "--max-jobs", "3")
    assert err == (
        f"{workloads_dir / KTH}, line 27, field 'run_time': 215337 s x recorded speed 1e+15 flop/s (--recorded-speed) "
        "= 2.15337e+20 flop per node, 2**64 flop or more: a real Batsim 4.2.1 no longer reads it exactly (and aborts "
        "from 1e23 on); a host's flop must be 0 or from 1 to below 2**64 (1.8e19): choose another --recorded-speed")
