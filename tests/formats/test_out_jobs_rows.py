"""Every row of an ``out_jobs.csv`` is checked against what Batsim 4.2.1 always writes: real recordings of Batsim
(``../shared/batsim-golden*``) are read, and the same files cut in the middle of a row, or with one field changed,
are refused with one line naming the file, the line and the column."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import GOLDEN, golden_cases, golden_folder

from batreplay.formats.out_jobs import OutJobsError, check_allocations_within, read_out_jobs, validate_out_jobs

KTH2000 = GOLDEN / "kth2000" / "out_jobs.csv"
DYNAMIC = GOLDEN / "dynamic" / "out_jobs.csv"
#: Line 318 of kth2000's out_jobs.csv: job 17, submitted at 626 s, ran 215,337 s on 29-33.
JOB_17 = 318

pytestmark = pytest.mark.skipif(not KTH2000.is_file(), reason="golden Batsim recordings not available")


def changed(tmp_path, source, line: int, old: str, new: str):
    """A copy of ``source`` whose line ``line`` (1-based) has ``old`` replaced by ``new`` (``old`` must be there)."""
    lines = source.read_text().split("\n")
    assert old in lines[line - 1], (old, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path = tmp_path / "out_jobs.csv"
    path.write_text("\n".join(lines))
    return path


def cut(tmp_path, source, line: int, after: str):
    """``source`` cut as a killed writer leaves it: everything up to the end of ``after`` in line ``line``."""
    lines = source.read_text().split("\n")
    kept = lines[line - 1]
    assert after in kept, (after, kept)
    path = tmp_path / "out_jobs.csv"
    path.write_text("\n".join(lines[:line - 1] + [kept[:kept.index(after) + len(after)]]))
    return path


@pytest.mark.parametrize("case", golden_cases(sharing=True))
def test_every_real_batsim_recording_is_read(case):
    path = golden_folder(case) / "out_jobs.csv"
    jobs = read_out_jobs(path)
    assert len(jobs) == len(path.read_text().splitlines()) - 1
    nodes = int(pd.read_csv(golden_folder(case) / "out_schedule.csv")["nb_computing_machines"].iloc[0])
    check_allocations_within(jobs, nodes, source=str(path))


@pytest.mark.parametrize(("after", "column"), [
    # the audit's file: turnaround 21 s (it was 215,337 s), no stretch, no allocation
    (",215963.000000,0.000000,21", "turnaround_time"),
    (",1.000000,29-3", "allocated_resources"),  # 29-3 parses as an interval set: only the cut tells
    (",1,COMPLETED_SUCC", "final_state"),
])
def test_a_row_cut_in_the_middle_is_refused_naming_line_and_column(tmp_path, after, column):
    path = cut(tmp_path, KTH2000, JOB_17, after)
    with pytest.raises(OutJobsError) as info:
        read_out_jobs(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line {JOB_17}, column '{column}': the line stops there")
    assert "the file was cut while being written; rerun the simulation" in message
    assert "\n" not in message


@pytest.mark.parametrize(("line", "old", "new", "message"), [
    (JOB_17, ",0.000000,215337.000000,1.000000", ",0.000000,21.000000,1.000000",
     "column 'turnaround_time': 21.000000 but finish_time - submission_time = 215337.000000"),
    (JOB_17, ",626.000000,215337.000000,215963.000000", ",626.000000,215336.000000,215963.000000",
     "column 'finish_time': 215963.000000 but starting_time + execution_time = 215962.000000"),
    (2001, ",231805.000000,245948.000000", ",231806.000000,245948.000000",
     "column 'waiting_time': 231806.000000 but starting_time - submission_time = 231805.000000"),
    (2001, ",17.390087,", ",17.390187,", "column 'stretch': 17.390187 but turnaround_time / execution_time = 17.390087"),
])
def test_times_that_disagree_are_refused_naming_line_and_column(tmp_path, line, old, new, message):
    path = changed(tmp_path, KTH2000, line, old, new)
    with pytest.raises(OutJobsError) as info:
        read_out_jobs(path)
    assert str(info.value).startswith(f"{path}, line {line}, {message} (Batsim writes them equal")
    assert "rerun the simulation" in str(info.value)


@pytest.mark.parametrize(("source", "line", "old", "new", "message"), [
    (KTH2000, JOB_17, ",1.000000,29-33,", ",1.000000,,", "column 'allocated_resources': empty for a job that ran"),
    (KTH2000, JOB_17, ",1.000000,29-33,", ",,29-33,", "column 'stretch': empty for a job that ran"),
    (KTH2000, JOB_17, ",29-33,-1.000000", ",29-33,", "column 'consumed_energy': empty for a job that ran"),
    (KTH2000, JOB_17, ",29-33,", ",33-29,", "column 'allocated_resources': '33-29' is not an interval set"),
    (KTH2000, 2, ",1,COMPLETED_SUCCESSFULLY,", ",0,COMPLETED_SUCCESSFULLY,",
     "column 'success': '0' for a job in state COMPLETED_SUCCESSFULLY"),
    # dynamic: line 2 is a rejected job, line 4 a job killed by the scheduler
    (DYNAMIC, 2, ",REJECTED,,,,,,,,,", ",REJECTED,,,,,,,0-7,,",
     "column 'allocated_resources': a value for a rejected job (Batsim leaves it empty)"),
    (DYNAMIC, 4, ",0,COMPLETED_KILLED,", ",1,COMPLETED_KILLED,", "column 'success': '1' for a job in state COMPLETED_KILLED"),
])
def test_fields_batsim_always_writes_are_checked_on_every_row(tmp_path, source, line, old, new, message):
    path = changed(tmp_path, source, line, old, new)
    with pytest.raises(OutJobsError) as info:
        read_out_jobs(path)
    assert str(info.value).startswith(f"{path}, line {line}, {message}")


def test_a_whole_kth_table_in_memory_is_checked_strictly_on_request():
    jobs = read_out_jobs(KTH2000).drop(columns="full_job_id")
    jobs.loc[1999, "turnaround_time"] = 1.0
    validate_out_jobs(jobs)  # a hand-built table may carry approximate redundant columns
    with pytest.raises(OutJobsError, match=r"^kth2000, row 1999, column 'turnaround_time': 1\.000000 but"):
        validate_out_jobs(jobs, source="kth2000", strict=True)


def test_an_allocation_beyond_the_platform_names_line_job_and_platform(tmp_path):
    path = changed(tmp_path, KTH2000, 2, ",4-28,", ",4000-4024,")
    jobs = read_out_jobs(path)  # a valid interval set of the job's 25 resources
    check_allocations_within(jobs, 4025, source=str(path))
    with pytest.raises(OutJobsError) as info:
        check_allocations_within(jobs, 100, source=str(path), platform="nb_computing_machines of out_schedule.csv")
    assert str(info.value).startswith(
        f"{path}, line 2, column 'allocated_resources': job w0!16 ran on '4000-4024', beyond the platform's 100 "
        "resources (ids 0-99, nb_computing_machines of out_schedule.csv; 1 such row(s))")
