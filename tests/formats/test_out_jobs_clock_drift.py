"""Real Batsim 4.2.1 starts some jobs microseconds before their submission time late in long simulations (SimGrid's
clock drifts). Its out_jobs.csv is valid: it is read, and the early starts are counted, not refused."""

from __future__ import annotations

import pytest

from batreplay.formats.out_jobs import OutJobsError, out_jobs_anomalies, read_out_jobs

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata\n")
#: Rows of real Batsim 4.2.1's out_jobs.csv: the whole KTH-SP2 log on kth-sp2 with largest area first
#: (``--scheduler laf``); a negative waiting time of 1 to 5 us on each.
REAL_BATSIM_ROWS = """\
20067,w0,ph_33375,19856852.000000,8,36000.000000,1,COMPLETED_SUCCESSFULLY,19856851.999999,33375.000000,19890226.999999,-0.000001,33374.999999,1.000000,0 4-10,-1.000000,""
22945,w0,ph_25,22362143.000000,8,29100.000000,1,COMPLETED_SUCCESSFULLY,22362142.999999,25.000000,22362167.999999,-0.000001,24.999999,1.000000,5 7 40 55 62 64 66 71,-1.000000,""
25417,w0,ph_235,24712032.000000,2,48000.000000,1,COMPLETED_SUCCESSFULLY,24712031.999998,235.000000,24712266.999998,-0.000002,234.999998,1.000000,94 96,-1.000000,""
25419,w0,ph_740,24723089.000000,2,48000.000000,1,COMPLETED_SUCCESSFULLY,24723088.999995,740.000000,24723828.999995,-0.000005,739.999995,1.000000,0-1,-1.000000,""
25410,w0,ph_29469,24703504.000000,4,52800.000000,1,COMPLETED_SUCCESSFULLY,24703503.999997,29468.999992,24732972.999989,-0.000003,29468.999989,1.000000,60-61 65-66,-1.000000,""
"""


def test_real_batsims_early_starts_are_read_and_counted(tmp_path):
    path = tmp_path / "out_jobs.csv"
    path.write_text(HEADER + REAL_BATSIM_ROWS)
    jobs = read_out_jobs(path)
    assert len(jobs) == 5
    assert out_jobs_anomalies(jobs)["start_before_submission"] == 2  # 3 us and 5 us; 1-2 us are Batsim's rounding


def test_a_start_a_millisecond_early_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "out_jobs.csv"
    path.write_text(HEADER + REAL_BATSIM_ROWS.replace("24723088.999995", "24723088.998000"))
    with pytest.raises(OutJobsError, match=r"out_jobs.csv, line 5: starting_time is before submission_time"):
        read_out_jobs(path)
