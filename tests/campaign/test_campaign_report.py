"""Campaign reports: a hand-made log whose schedules and lateness are computed by hand, the recorded-log row of
the real KTH-SP2 log against the published one (Madon et al. 2024, Table 1), published values beside ours."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pandas as pd
import pytest
from conftest import REPO_ROOT
from rich.console import Console

from batreplay.campaign.executors import LocalExecutor
from batreplay.campaign.runner import run_campaign
from batreplay.campaign.spec import REPORT_FIGURES, REPORT_TABLES, load_campaign
from batreplay.replay.registry import REGISTRY
from batreplay.reports.log_facts import log_facts
from batreplay.reports.report import (FIGURE_KINDS, build_report, load_instance, markdown_table, read_published,
                                      recorded_log_metrics)
from batreplay.reports.tables import PAPER_TABLES, TABLE_METRICS, comparison_table
from batreplay.reports.user_models import none_shown

QUIET = Console(quiet=True)
DAY = 86400.0

# Two users on a 2-node machine (fields: job, submit, wait, run, allocated, cpu, memory, requested processors,
# requested time, requested memory, status, user, group, executable, queue, partition, preceding, think time).
#   job 1, user 1: submitted 0, runs 0-100 on 1 node
#   job 3, user 2: submitted 10, needs both nodes, runs 100-200
#   job 2, user 1: submitted 150 (50 s after job 1 ended: think time 50), runs 200-250
TOY_SWF = """; MaxProcs: 2
; MaxNodes: 2
1 0 0 100 1 -1 -1 1 200 -1 1 1 1 -1 -1 -1 -1 -1
2 150 50 50 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
3 10 90 100 2 -1 -1 2 100 -1 1 2 2 -1 -1 -1 -1 -1
"""

TOY_SPEC = """
[campaign]
name = "toy"
output_root = "runs"
report_dir = "report"

[[logs]]
name = "toy"
workload = "toy.swf"
nodes = 2
walltime_factor = 2.0

[matrix]
schedulers = ["fcfs"]
platforms = ["recorded", "speed-d2"]
replay_models = ["rigid", "feedback"]
session_methods = ["a0"]

[report]
tables = ["scheduling", "lateness", "scheduler-comparison"]
figures = ["submissions", "cumulative"]
published = "published.csv"
"""

PUBLISHED = """log,experiment,replay,metric,value,source
toy,recorded log,-,makespan_days,1.5,invented for the test
toy,fcfs speed-d2,a0,additional_lateness_s,33.3,invented for the test
"""


@pytest.fixture(scope="module")
def toy_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("toy")
    (folder / "toy.swf").write_text(TOY_SWF)
    (folder / "campaign.toml").write_text(TOY_SPEC)
    (folder / "published.csv").write_text(PUBLISHED)
    spec = load_campaign(folder / "campaign.toml")
    summary = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    assert summary.complete, summary.outcomes
    return spec, build_report(spec)


def rows(table: pd.DataFrame) -> dict[tuple[str, str], pd.Series]:
    return {(r["experiment"], r["replay"]): r for _, r in table.iterrows()}


def test_scheduling_table_by_hand(toy_report):
    _, result = toy_report
    table = rows(pd.read_csv(result.csv["scheduling"]))
    # recorded log: makespan 250 - 0, waits 0, 50, 90
    expected = {
        ("recorded log", "-"): (250, (0 + 50 + 90) / 3, 90),
        # same machine, rigid: FCFS gives the recorded schedule
        ("fcfs", "rigid"): (250, (0 + 90 + 50) / 3, 90),
        # feedback, same machine: job 2 still submitted 50 s after job 1's end (100), at 150: same schedule
        ("fcfs", "a0"): (250, (0 + 90 + 50) / 3, 90),
        # half speed, rigid: job 1 0-200, job 3 200-400, job 2 (submitted 150) 400-500
        ("fcfs speed-d2", "rigid"): (500, (0 + 190 + 250) / 3, 250),
        # half speed, feedback: job 2 submitted at 200 + 50 = 250, runs 400-500
        ("fcfs speed-d2", "a0"): (500, (0 + 190 + 150) / 3, 190),
    }
    assert set(table) == set(expected)
    for key, (makespan, mean_wait, max_wait) in expected.items():
        row = table[key]
        assert row["makespan_days"] * DAY == pytest.approx(makespan, abs=1e-3), key
        assert row["mean_waiting_time_days"] * DAY == pytest.approx(mean_wait, abs=1e-3), key
        assert row["max_waiting_time_days"] * DAY == pytest.approx(max_wait, abs=1e-3), key
    assert table[("recorded log", "-")]["makespan_days_published"] == 1.5
    assert math.isnan(table[("fcfs", "rigid")]["makespan_days_published"])


def test_lateness_table_by_hand(toy_report):
    _, result = toy_report
    table = rows(pd.read_csv(result.csv["lateness"]))
    assert set(table) == {("fcfs", "a0"), ("fcfs speed-d2", "a0")}  # feedback replays only
    same = table[("fcfs", "a0")]
    assert same["mean_lateness_days"] == pytest.approx(0.0, abs=1e-9)
    assert same["relative_lateness"] == pytest.approx(1.0)
    slow = table[("fcfs speed-d2", "a0")]
    # lateness: job 1 0, job 3 0, job 2 250 - 150 = 100; recorded span 150 - 0
    assert slow["mean_lateness_days"] * DAY == pytest.approx(100 / 3)
    assert slow["relative_lateness"] == pytest.approx(1 + (100 / 3) / 150)
    assert slow["additional_lateness_s"] == pytest.approx(2 * (100 / 3) / (3 - 1))
    assert slow["additional_lateness_s_published"] == 33.3


def test_report_files(toy_report):
    spec, result = toy_report
    assert result.out_dir == spec.report_dir and result.instances_found == result.instances_total == 4
    markdown = result.markdown.read_text()
    # ours (250 s) beside the published value and their difference
    assert "| recorded log | - | 0.00 | 1.50 | -1.50 (-100%) |" in markdown
    assert "![" in markdown and "figures/fig2-submissions-toy.png" in markdown
    for path in result.figures.values():
        assert path.read_bytes().startswith(b"\x89PNG")
    assert set(result.figures) == {("submissions", "toy"), ("cumulative", "toy")}
    html = result.html.read_text()
    assert html.count("data:image/png;base64,") == 2 and "Lateness metrics" in html
    instances = pd.read_csv(result.csv["instances"])
    assert len(instances) == 4 and set(instances["status"]) == {"done"}
    assert set(instances["replay"]) == {"rigid", "a0"}
    # nothing names the machine's folders: the report can be committed as it is
    for path in [result.markdown, result.html, *result.csv.values()]:
        assert str(spec.root) not in path.read_text(), path


def test_a_section_cites_a_paper_only_beside_its_published_values(toy_report):
    # the toy has published values for Table 1 (the recorded makespan) and Table 2 (an additional lateness), none
    # for Rauch's tables: that section has Rauch's form but is no comparison with Rauch
    _, result = toy_report
    markdown = result.markdown.read_text()
    assert "\n## Scheduling metrics (cf. Madon et al. 2024, Table 1)\n" in markdown
    assert "\n## Lateness metrics (cf. Madon et al. 2024, Table 2)\n" in markdown
    assert "\n## Scheduler comparison\n" in markdown and "cf. Rauch" not in markdown
    html = result.html.read_text()
    assert ">Scheduler comparison</h2>" in html and "cf. Rauch" not in html
    assert "Published values" not in markdown.split("## Scheduler comparison")[1].split("\n## ")[0]


def test_committed_reports_cite_a_paper_only_beside_published_values():
    # every committed report: a table section names the paper of its form exactly when it has a "paper" column
    checked = 0
    for readme in sorted((REPO_ROOT / "expe" / "results").glob("*/README.md")):
        for section in re.split(r"^## ", readme.read_text(), flags=re.MULTILINE)[1:]:
            heading, _, body = section.partition("\n")
            kind = next((k for k, (title, _) in TABLE_METRICS.items() if heading.startswith(title)), None)
            if kind is None:
                continue
            title = TABLE_METRICS[kind][0]
            beside = ": paper |" in body
            expected = f"{title} (cf. {PAPER_TABLES[kind]})" if beside and kind in PAPER_TABLES else title
            assert heading == expected, (readme.parent.name, heading)
            checked += 1
    assert checked >= 8


def test_missing_instances_are_listed(toy_report, tmp_path):
    spec, _ = toy_report
    other = load_campaign(spec.path, output_root=tmp_path / "empty")
    result = build_report(other, tmp_path / "report")
    assert result.instances_found == 0
    assert sum("has not run" in note for note in result.notes) == 4
    assert set(pd.read_csv(result.csv["instances"])["status"]) == {"missing"}


def test_recorded_kth_row_equals_the_published_one():
    # Madon et al. 2024, Table 1, "Recorded log", KTH: makespan 332.93 days, waiting time mean 0.18, max 11.34
    spec = load_campaign(REPO_ROOT / "expe" / "replay-feedback-2024.toml")
    metrics, notes = recorded_log_metrics(spec, spec.logs[0])
    assert round(metrics["makespan"] / DAY, 2) == 332.93
    assert round(metrics["mean_waiting_time"] / DAY, 2) == 0.18
    assert round(metrics["max_waiting_time"] / DAY, 2) == 11.34
    assert "28475 of 28476 jobs" in notes[0]  # one job has no processor count


def test_recorded_row_from_the_facts_jobs(toy_report):
    # the report passes the jobs log_facts already selected; reading the log again gives the same row
    spec, _ = toy_report
    log = spec.logs[0]
    facts = log_facts(spec, log, last_line=4)  # file lines 3 and 4: jobs 1 and 2
    assert facts.nb_jobs == 2
    metrics, notes = recorded_log_metrics(spec, log, 4, jobs=facts.jobs)
    assert (metrics, notes) == recorded_log_metrics(spec, log, 4)
    assert metrics["makespan"] == 250.0 and "2 of 2 jobs" in notes[0]


def test_the_recorded_row_leaves_out_the_logs_warm_up_as_the_runs_do():
    spec = load_campaign(REPO_ROOT / "expe" / "replay-feedback-2024.toml")
    log = spec.logs[0]
    whole, _ = recorded_log_metrics(spec, log)
    warmed = replace(log, options={**log.options, "warm_up": 14 * DAY})
    metrics, notes = recorded_log_metrics(spec, warmed)
    frame = log_facts(spec, log, None).jobs
    usable = frame[(frame["submission_time"] >= 0) & (frame["wait_time"] >= 0) & (frame["run_time"] >= 0)
                   & ((frame["allocated_processors"] > 0) | (frame["requested_processors"] > 0))]
    relative = usable["submission_time"] - usable["submission_time"].min()
    assert metrics["span_start"] == 14 * DAY and metrics["nb_jobs"] == int((relative >= 14 * DAY).sum())
    assert metrics["nb_jobs"] < whole["nb_jobs"] and "the first 1.2096e+06 s after its first submission" in notes[0]
    with pytest.raises(ValueError, match="no job is left to measure"):
        recorded_log_metrics(spec, replace(log, options={**log.options, "warm_up": 1e9}))


def test_figure_kinds_are_the_spec_figures():
    # spec.py keeps the allowed [report] figures; report.py their files and captions: the same kinds, same order
    assert tuple(FIGURE_KINDS) == REPORT_FIGURES
    for kind, figure in FIGURE_KINDS.items():
        number = figure.stem.split("-")[0].removeprefix("fig")
        assert figure.stem == f"fig{number}-{kind}"
        assert figure.paper_label == f"cf. Fig. {number}" and f"Fig. {number}" in figure.caption
    assert FIGURE_KINDS["weekly-submissions"].paper_label == "cf. Fig. 8"


def test_report_kinds_are_those_the_user_models_declare(toy_report, monkeypatch):
    """The lateness table (Madon et al. 2024, Table 2) lists the replays of the models that declare it (feedback),
    the scheduler comparison (Rauch 2022) those of rigid, a kind no model declares every replay; another
    declaration changes the rows without a change to the report code."""
    spec, _ = toy_report
    known = set(REPORT_TABLES) | set(REPORT_FIGURES)
    assert all(set(entry.report_kinds) <= known for entry in REGISTRY.values())
    results = [load_instance(spec, instance) for instance in spec.instances()]

    def replays(kind: str) -> set[str]:
        return set(comparison_table(kind, spec, results, {}, read_published(None))["replay"])

    assert replays("lateness") == {"a0"} and replays("scheduler-comparison") == {"rigid"}
    assert replays("scheduling") == {"rigid", "a0"}
    assert none_shown("user-mean-lateness") == ("the campaign has no feedback, adjusted, distribution, fluid or "
                                                "schlagkamp replay")
    assert none_shown("session-graphs") == "the campaign has no feedback replay"
    monkeypatch.setitem(REGISTRY, "rigid", replace(REGISTRY["rigid"], report_kinds=("lateness",)))
    assert replays("lateness") == {"rigid", "a0"} and replays("scheduler-comparison") == {"rigid", "a0"}
    assert none_shown("lateness") == ("the campaign has no rigid, feedback, adjusted, distribution, fluid or "
                                      "schlagkamp replay")


def test_published_values_are_checked(tmp_path):
    shipped = read_published(REPO_ROOT / "expe" / "published" / "madon2024-fgcs.csv")
    # Table 1: 19 rows x 2 logs x 3 metrics; Table 2: 12 rows x 2 logs x 3 metrics; Fig. 5(c): 6 x 2 x 3
    assert len(shipped) == 19 * 6 + 12 * 6 + 6 * 6
    bad = tmp_path / "bad.csv"
    bad.write_text("log,experiment,replay,metric,value,source\nkth,EASY,rigid,makespan_days,abc,x\n")
    with pytest.raises(ValueError, match=r"bad.csv, line 2, column 'value'"):
        read_published(bad)
    twice = tmp_path / "twice.csv"
    twice.write_text("log,experiment,replay,metric,value,source\nk,E,r,m,1,x\nk,E,r,m,2,x\n")
    with pytest.raises(ValueError, match="line 3"):
        read_published(twice)


def test_markdown_table():
    frame = pd.DataFrame({"experiment": ["perf/2", "a|b"], "value": ["1.00", "\u2013"]})
    assert markdown_table(frame) == ("| experiment | value |\n|---|---:|\n| perf/2 | 1.00 |\n| a\\|b | \u2013 |")
