"""The metric registry: every metric written by the analysis is declared once, with the unit, label and format
that reports and the console summary show; adding a metric is one function and one table line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import GOLDEN, WORKLOADS, golden_cases
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.analysis.adequacy import ADEQUACY_METRICS, adequacy_metrics, compare_run_with_log
from batreplay.analysis.analyze_command import run_metrics
from batreplay.analysis.lateness import LATENESS_METRICS, job_lateness, lateness_metrics
from batreplay.analysis.metric import Metric
from batreplay.analysis.metric import readable_time_unit
from batreplay.analysis.metric_registry import (
    METRIC_GROUPS,
    METRICS,
    _gather,
    get_metric,
    metric_group,
    metric_sections,
    summary_rows,
)
from batreplay.analysis.metrics import (
    SCHEDULE_METRICS,
    SECONDS_PER_DAY,
    job_metrics,
    schedule_facts,
    summarize,
)
from batreplay.analysis.run_dir import load_run
from batreplay.formats.out_jobs import read_out_jobs, validate_out_jobs
from batreplay.workloads.swf import read_swf

CASES = golden_cases() if GOLDEN.is_dir() else []


@pytest.fixture(scope="module")
def two_runs_metrics():
    """metrics.csv rows of the golden kth2000 run and of the same run under another name."""
    if not (GOLDEN / "kth2000").is_dir():
        pytest.skip("golden run kth2000 not available")
    row = run_metrics(load_run(GOLDEN / "kth2000"))
    return [row, dict(row, run="again")], ["kth2000", "again"]
#: Columns of metrics.csv that name the run rather than measure it (text).
IDENTITY = {"run", "path", "scheduler", "platform", "workload", "replay", "nb_resources_source"}
@pytest.mark.parametrize("case", CASES)
def test_summarize_gives_every_schedule_metric_in_table_order(case):
    jobs = read_out_jobs(GOLDEN / case / "out_jobs.csv")
    metrics = summarize(jobs, nb_resources=100)
    assert list(metrics) == [m.name for m in SCHEDULE_METRICS]
    for metric in SCHEDULE_METRICS:
        value = metrics[metric.name]
        assert isinstance(value, int) if metric.is_count else isinstance(value, float), metric.name


@pytest.mark.parametrize("case", CASES)
def test_every_metrics_csv_number_of_a_golden_run_is_registered(case):
    row = run_metrics(load_run(GOLDEN / case))
    numbers = [key for key in row if key not in IDENTITY]
    assert [key for key in numbers if key not in METRICS] == []


def test_units_of_the_report_column():
    """The unit column of the analysis report: seconds for times, node counts, rates, none for counts/ratios."""
    expected = {"makespan": "s", "mean_waiting_time": "s", "p99_waiting_time": "s", "first_submission": "s",
                "span_length": "s", "busy_node_seconds": "node-s", "available_node_seconds": "node-s",
                "mean_busy_nodes": "nodes", "nb_resources": "nodes", "throughput_per_week": "jobs/week",
                "throughput_per_day": "jobs/day", "utilisation": "", "mean_bounded_slowdown": "",
                "mean_slowdown": "", "nb_zero_execution_time": "", "mean_running_jobs_per_event": "",
                "mean_lateness": "s", "relative_lateness": "", "additional_lateness": "s",
                "original_submission_span": "s", "submission_span": "s",
                "user_additional_lateness_p90": "s", "nb_users_single_job": "",
                "adequacy_vs_log": "s", "nb_different_jobs_vs_log": ""}
    assert {key: get_metric(key).unit for key in expected} == expected
    assert all(m.unit in ("", "s", "nodes", "node-s", "jobs/day", "jobs/week") for m in METRICS.values())


def test_summary_rows_show_times_in_readable_units():
    """Golden kth2000 (2,000 KTH jobs): makespan 2,142,844 s = 24.80 days, mean wait 15,395 s = 4.28 h, max wait
    471,139 s = 5.45 days; counts and ratios as before, each label naming its unit."""
    jobs = read_out_jobs(GOLDEN / "kth2000" / "out_jobs.csv")
    metrics = summarize(jobs, nb_resources=100)
    assert summary_rows(metrics) == [
        ("jobs", "2000"), ("rejected", "0"), ("killed (walltime or kill)", "24"),
        ("makespan (days)", f"{metrics['makespan'] / SECONDS_PER_DAY:,.2f}"),
        ("mean waiting time (h)", f"{metrics['mean_waiting_time'] / 3600:,.2f}"),
        ("max waiting time (days)", f"{metrics['max_waiting_time'] / SECONDS_PER_DAY:,.2f}"),
        ("mean bounded slowdown (tau = 10 s)", f"{metrics['mean_bounded_slowdown']:.3f}"),
        ("utilisation", f"{metrics['utilisation']:.4f}")]
    assert [label for label, _ in summary_rows(metrics)][3:6] == ["makespan (days)", "mean waiting time (h)",
                                                                  "max waiting time (days)"]
    # under an hour in seconds, with the metric's own format; absent metrics skipped; tau stated
    assert summary_rows({"mean_waiting_time": 59.5, "nb_jobs": 3}) == [("jobs", "3"), ("mean waiting time (s)", "59.5")]
    assert summary_rows({"mean_bounded_slowdown": 1.5}, tau=60.0) == [("mean bounded slowdown (tau = 60 s)",
                                                                       "1.500")]


def test_readable_time_unit_rule():
    assert readable_time_unit([0.0, 3599.0]) == "s"
    assert readable_time_unit([3600.0]) == "h" and readable_time_unit([-100_000.0, 5.0]) == "h"
    assert readable_time_unit([2 * SECONDS_PER_DAY]) == "days"
    assert readable_time_unit([float("nan"), None, pd.NA]) == "s"
    assert get_metric("busy_node_seconds").display_unit([4e8]) == "node-days"
    assert get_metric("busy_node_seconds").heading("node-days") == "busy node time (node-days)"
    assert get_metric("utilisation").display_unit([0.5]) == ""


def test_metric_sections_group_and_state_units(two_runs_metrics):
    """The report's metric tables: one per section, every time row in one unit for all runs, named in the label."""
    rows, names = two_runs_metrics
    sections = metric_sections(rows, names)
    assert [key for key, *_ in sections] == ["jobs", "scheduling", "utilisation"]  # no log, no lateness
    frames = {key: frame for key, _, _, frame in sections}
    assert list(frames["scheduling"].columns) == names
    makespan = frames["scheduling"].loc["makespan (days)"]
    assert makespan.tolist() == pytest.approx([row["makespan"] / SECONDS_PER_DAY for row in rows])
    assert frames["jobs"].loc["jobs"].tolist() == [2000, 2000]
    shown = 0
    for name in (n for n in METRICS if n in rows[0] and pd.notna(rows[0][n])):
        metric = METRICS[name]
        units = {"s": ["s", "h", "days"], "node-s": ["node-s", "node-h", "node-days"]}.get(metric.unit, [metric.unit])
        labels = [metric.heading(unit, tau=10.0) for unit in units]
        assert sum(label in frames[metric_group(name)].index for label in labels) == 1, name  # in its section
        assert all(label.endswith(")") for label in labels if metric.unit), name  # the unit is stated
        shown += 1
    assert shown == sum(len(frame) for frame in frames.values())
    # the waiting-time percentiles share one unit
    units = {label.rsplit("(", 1)[1] for label in frames["scheduling"].index
             if "percentile" in label or "median" in label}
    assert len(units) == 1
    with pytest.raises(ValueError, match="2 metric rows for 1 runs"):
        metric_sections(rows, names[:1])


def test_every_metric_has_a_report_section():
    keys = {key for key, _, _ in METRIC_GROUPS}
    assert {metric_group(name) for name in METRICS} <= keys


def test_lookup_errors_name_the_metric():
    with pytest.raises(KeyError, match="unknown metric 'mean_wait'"):
        get_metric("mean_wait")
    with pytest.raises(ValueError):
        get_metric("nb_jobs").format(float("nan"))
    with pytest.raises(ValueError, match="declared twice"):
        _gather(SCHEDULE_METRICS, [Metric("makespan", "s", "makespan")])


def test_heading_and_unit_conversion():
    makespan = get_metric("makespan")
    assert makespan.heading() == "makespan (s)"
    assert makespan.heading("days") == "makespan (days)"
    assert makespan.divisor("days") == SECONDS_PER_DAY and makespan.divisor("s") == 1.0
    assert get_metric("nb_jobs").heading() == "jobs"
    with pytest.raises(ValueError, match="utilisation is in 'no unit'"):
        get_metric("utilisation").divisor("days")


def test_a_new_metric_is_one_function_and_one_line():
    """The module docstring's example: the largest bounded slowdown over the jobs that ran."""
    jobs = read_out_jobs(GOLDEN / "kth2000" / "out_jobs.csv")

    def max_bounded_slowdown(facts):
        return float(np.max(facts.bounded_slowdown))

    metric = Metric("max_bounded_slowdown", "", "max bounded slowdown", "{:.3f}", max_bounded_slowdown,
                    parameter=("tau", "s"))
    value = metric.compute(schedule_facts(jobs, nb_resources=100))
    assert value == job_metrics(jobs)["bounded_slowdown"].max()
    assert metric.heading(tau=10.0) == "max bounded slowdown (tau = 10 s)"


def test_lateness_and_adequacy_tables_on_a_real_log():
    """Rigid replay of the recorded submissions: zero lateness; the log against itself: P = 0."""
    log = read_swf(WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz").jobs.head(300)
    start = log["submission_time"] + log["wait_time"]
    jobs = validate_out_jobs(pd.DataFrame({
        "job_id": log["job_id"].astype(str), "workload_name": "w", "submission_time": log["submission_time"],
        "requested_number_of_resources": log["allocated_processors"], "requested_time": log["requested_time"],
        "final_state": "COMPLETED_SUCCESSFULLY", "starting_time": start, "execution_time": log["run_time"],
        "finish_time": start + log["run_time"]}))
    originals = pd.DataFrame({"job_id": jobs["job_id"], "user_id": log["user_id"],
                              "recorded_submission_time": log["submission_time"]})
    late = lateness_metrics(job_lateness(jobs, originals))
    assert list(late) == [m.name for m in LATENESS_METRICS]
    assert late["mean_lateness"] == 0.0 and late["relative_lateness"] == 1.0
    adequacy = adequacy_metrics(compare_run_with_log(jobs, log))
    assert list(adequacy) == [m.name for m in ADEQUACY_METRICS]
    assert adequacy == {"adequacy_vs_log": 0.0, "nb_different_jobs_vs_log": 0}


jobs_strategy = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 500), st.integers(0, 500), st.integers(1, 8), st.booleans()),
    min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(rows=jobs_strategy, nodes=st.integers(8, 64))
def test_every_summarized_value_formats(rows, nodes):
    """Whatever the schedule, every value of summarize prints with its metric's format (NaN allowed for
    non-counts), and the unit-carrying metrics stay consistent with each other."""
    frame = pd.DataFrame([{
        "job_id": str(i), "workload_name": "w", "submission_time": float(sub),
        "requested_number_of_resources": width, "requested_time": 1000.0,
        "final_state": "REJECTED" if rejected else "COMPLETED_SUCCESSFULLY",
        "starting_time": np.nan if rejected else float(sub + wait),
        "execution_time": np.nan if rejected else float(run),
        "finish_time": np.nan if rejected else float(sub + wait + run)}
        for i, (sub, wait, run, width, rejected) in enumerate(rows)])
    metrics = summarize(validate_out_jobs(frame), nb_resources=nodes)
    for name, value in metrics.items():
        assert isinstance(get_metric(name).format(value), str)
        if get_metric(name).is_count:
            assert value >= 0
    if metrics["nb_started"]:
        assert math.isclose(metrics["makespan"], metrics["last_finish"] - metrics["first_submission"])
