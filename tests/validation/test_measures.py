"""The validation table computed by hand on a small case: three measured jobs, two simulated, a window of two hours
on a platform of four job slots."""

from __future__ import annotations

import numpy as np
import pytest

from batreplay.validation.measures import JobTable, compare, relative_deviation

NAN = float("nan")
# measured: A (2 slots, ends in hour 1), B (waits 600 s, ends in hour 2), C (ends after the window, 9000 s)
LOG = JobTable(submit=np.array([0.0, 600, 3600]), start=np.array([0.0, 1200, 3600]), end=np.array([1800.0, 4800, 9000]),
               processors=np.array([2, 1, 1]), job_type=np.array(["a", "b", "a"], dtype=object),
               cpu_seconds=np.array([900.0, NAN, 5400]))
# simulated: X (1 slot, 0-3600 s), Y (2 slots, 1000-2800 s)
MODEL = JobTable(submit=np.array([0.0, 1000]), start=np.array([0.0, 1000]), end=np.array([3600.0, 2800]),
                 processors=np.array([1, 2]), job_type=np.array(["a", "b"], dtype=object),
                 cpu_seconds=np.array([3600.0, 900]))


def test_every_row_of_a_small_case_by_hand():
    rows = {row.measure: row for row in compare(LOG, MODEL, (0.0, 7200.0), slots=4)}
    expected = {
        # ends in [0, 7200): A, B / X, Y: 2 jobs in 2 h each; end times {1800, 4800} vs {2800, 3600}: KS 1/2
        "throughput": (1.0, 1.0, 0.0, 0.5),
        # ended jobs: one a, one b on each side: total variation 0
        "share of a": (0.5, 0.5, 0.0, 0.0),
        "share of b": (0.5, 0.5, 0.0, 0.0),
        # busy slot-seconds / (3600 s x 4 slots): hour 1 (2 x 1800 + 2400) / 14400 = 5/12, hour 2 (1200 + 3600) /
        # 14400 = 1/3, mean 3/8; model: (3600 + 2 x 1800) / 14400 = 1/2, then 0, mean 1/4; KS {5/12, 1/3} vs {1/2, 0}
        "utilisation": (0.375, 0.25, -1 / 3, 0.5),
        # run times of the jobs submitted in the window: {1800, 3600, 5400} vs {3600, 1800}
        "mean run time": (3600.0, 2700.0, -0.25, 1 / 3),
        # waits {0, 600, 0} vs {0, 0}
        "mean waiting time": (200.0, 0.0, -1.0, 1 / 3),
        # CPU s / run s where recorded: {900 / 1800, 5400 / 5400} vs {3600 / 3600, 900 / 1800}
        "CPU efficiency": (0.75, 0.75, 0.0, 0.0),
    }
    assert set(rows) == set(expected)
    for measure, (measured, simulated, deviation, distance) in expected.items():
        row = rows[measure]
        assert (row.measured, row.simulated, row.deviation, row.distance) == pytest.approx(
            (measured, simulated, deviation, distance), abs=1e-12), measure


def test_what_the_log_does_not_record_is_not_compared():
    unmeasured = JobTable(LOG.submit, LOG.submit, LOG.end, LOG.processors, LOG.job_type, np.full(3, NAN),
                          waits_known=False)
    rows = {row.measure: row for row in compare(unmeasured, MODEL, (0.0, 7200.0), slots=4)}
    for measure in ("mean waiting time", "CPU efficiency"):
        assert (rows[measure].measured, rows[measure].deviation, rows[measure].distance) == (None, None, None)
    assert rows["mean waiting time"].simulated == 0.0  # the model's side is still shown
    assert relative_deviation(0.0, 1.0) is None and relative_deviation(None, 1.0) is None


def test_a_window_under_an_hour_or_no_slot_is_refused():
    with pytest.raises(ValueError, match="at least one hour"):
        compare(LOG, MODEL, (0.0, 3599.0), slots=4)
    with pytest.raises(ValueError, match="0 job slots"):
        compare(LOG, MODEL, (0.0, 7200.0), slots=0)
