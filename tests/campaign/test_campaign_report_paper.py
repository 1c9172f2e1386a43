"""Campaign reports, beyond the tables of the toy campaign: differences with the published values, Fig. 9 as
fractions of each platform's nodes, the paper figures 4, 5, 6 and 8 from the shipped quick campaign, the
zero-runtime choice of a spec reaching the run and the report, written explanations, progress."""

from __future__ import annotations

import io
import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import REPO_ROOT, WORKLOADS
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from batreplay.campaign.executors import LocalExecutor
from batreplay.campaign.runner import run_campaign
from batreplay.campaign.spec import CampaignSpecError, load_campaign
from batreplay.reports.figures import window_bars
from batreplay.reports.log_facts import log_facts, recorded_log_metrics
from batreplay.reports.report import build_report, load_instance
from batreplay.reports.tables import comparison_table, difference, display_table, read_published
from batreplay.reports.weekly import hour_of_week_counts

QUIET = Console(quiet=True)
EXPE = REPO_ROOT / "expe"
KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
DAY = 86400.0


def run(spec):
    summary = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    assert summary.complete, summary.outcomes
    return spec


# ------------------------------------------------------------------------------------------------ differences


def test_recorded_kth_row_differs_by_zero_from_the_published_one():
    # Madon et al. 2024, Table 1, recorded log, KTH: 332.93 / 0.18 / 11.34 days, which the log itself gives
    spec = load_campaign(EXPE / "replay-feedback-2024.toml")
    metrics, _ = recorded_log_metrics(spec, spec.logs[0])
    table = comparison_table("scheduling", spec, [], {"kth-sp2": metrics}, read_published(spec.report.published))
    row = table.iloc[0]
    assert (row["log"], row["experiment"]) == ("kth-sp2", "recorded log")
    for key in ("makespan_days", "mean_waiting_time_days", "max_waiting_time_days"):
        assert row[f"{key}_diff"] == 0.0 and row[f"{key}_diff_pct"] == 0.0, key
    shown = display_table("scheduling", table, "kth-sp2")
    assert list(shown.columns[2:5]) == ["makespan (days): ours", "makespan (days): paper",
                                        "makespan (days): ours \u2212 paper"]
    assert shown.iloc[0, 4] == "0"  # equal printed values


def test_difference_of_a_value_against_a_published_one():
    # SDSC recorded log: ours 729.57 days against the published 736.12 (another version of the log)
    assert difference(729.5712, 736.12, 2) == pytest.approx((-6.55, -100 * 6.55 / 736.12))
    delta, percent = difference(0.004, 0.0, 2)  # a published 0: no percentage
    assert delta == 0.0 and math.isnan(percent)
    assert all(math.isnan(v) for v in difference(float("nan"), 1.0, 2))


@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6).filter(lambda v: abs(v) > 1e-3), st.integers(0, 3))
def test_difference_is_the_printed_value_minus_the_published_one(ours, published, decimals):
    delta, percent = difference(ours, published, decimals)
    assert delta == pytest.approx(round(ours, decimals) - published, abs=1e-6)
    assert percent == pytest.approx(100 * delta / abs(published), rel=1e-9, abs=1e-9)


def test_published_fig5c_percentiles_are_shipped():
    table = read_published(EXPE / "published" / "madon2024-fgcs.csv")
    fig5 = table[table["source"].str.contains("Fig. 5")]
    assert len(fig5) == 2 * 6 * 3 and set(fig5["replay"]) == {"a60"}
    value = fig5[(fig5["log"] == "sdsc-sp2") & (fig5["experiment"] == "perf/2")
                 & (fig5["metric"] == "user_additional_lateness_p90_s")]["value"]
    assert value.tolist() == [153976.0]


# ------------------------------------------------------------------------------------------------ Fig. 9


FIG9_SPEC = f"""
[campaign]
name = "infra-x2"
output_root = "runs"

[defaults]
walltime_factor = 2.0
max_jobs = 13000    # about 150 days: the 4-month window of Fig. 9 fits

[[logs]]
name = "kth-sp2"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"

[[experiments]]
name = "infra*2"
scheduler = "easy"
platform = "nodes-x2"

[report]
tables = ["scheduling"]
figures = ["throughput-utilisation"]
"""


def test_fig9_utilisation_of_a_200_node_instance_is_a_fraction(tmp_path):
    (tmp_path / "c.toml").write_text(FIG9_SPEC)
    spec = run(load_campaign(tmp_path / "c.toml"))
    result = load_instance(spec, spec.instances()[0])
    windows = result.windows
    assert result.metrics["nb_resources"] == 200 and list(windows["window_months"]) == [4]
    assert np.allclose(windows["utilisation"], windows["mean_busy_nodes"] / 200)
    assert ((windows["utilisation"] > 0) & (windows["utilisation"] <= 1)).all()
    figure = window_bars("KTH", windows.assign(experiment="infra*2", replay="rigid"), ["infra*2"], ["rigid"])
    utilisation_axes = figure.axes[1:]  # second row
    heights = [patch.get_height() for axis in utilisation_axes for patch in axis.patches]
    assert heights == pytest.approx(list(windows["utilisation"]))
    assert all(axis.get_ylim() == (0.0, 1.0) for axis in utilisation_axes)


# ------------------------------------------------------------------------------------------------ quick campaign


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The shipped quick campaign (first 3000 jobs of KTH-SP2), run and reported."""
    folder = tmp_path_factory.mktemp("quick")
    spec = run(load_campaign(EXPE / "quick.toml", output_root=folder / "runs"))
    return spec, build_report(spec, folder / "report")


def test_quick_report_has_the_paper_figures(quick):
    spec, result = quick
    assert set(result.figures) == {(kind, "kth-sp2") for kind in spec.report.figures}
    for kind in ("user-mean-lateness", "user-additional-lateness", "session-graphs", "weekly-submissions"):
        assert result.figures[(kind, "kth-sp2")].read_bytes().startswith(b"\x89PNG"), kind
    html = result.html.read_text()
    assert html.count("data:image/png;base64,") == len(spec.report.figures)
    markdown = result.markdown.read_text()
    assert "Europe/Stockholm (TimeZoneString of the SWF header)" in markdown  # Fig. 8's clock is said
    assert "figures/fig8-weekly-submissions-kth-sp2.png" in markdown


def test_quick_per_user_percentiles_are_those_of_the_runs(quick):
    spec, result = quick
    table = pd.read_csv(result.csv["user-lateness-percentiles"])
    assert set(table["replay"]) == {"a60"} and len(table) == 4
    for row in table.itertuples():
        instance = next(i for i in spec.instances() if i.experiment.name == row.experiment and i.replay.label == "a60")
        # by hand: per user, lateness = submission - recorded submission, additional = 2 mean / (n - 1) (eq. 6)
        folder = spec.output_root / instance.id
        jobs = pd.read_csv(folder / "out_jobs.csv").merge(pd.read_csv(folder / "jobs.csv"), on="job_id")
        jobs["lateness"] = jobs["submission_time"] - jobs["recorded_submission_time"]
        users = jobs.groupby("user_id")["lateness"].agg(["mean", "count"])
        users = users[users["count"] > 1]
        additional = 2 * users["mean"] / (users["count"] - 1)
        expected = np.percentile(additional, [10, 50, 90])
        assert [row.user_additional_lateness_p10_s, row.user_additional_lateness_p50_s,
                row.user_additional_lateness_p90_s] == pytest.approx(expected)


def test_quick_session_graph_table(quick):
    _, result = quick
    table = pd.read_csv(result.csv["session-graphs"])
    assert list(table["sessions"]) == ["a60"]
    row = table.iloc[0]
    # 3000 jobs of which 1 dropped (zero run time): every user with jobs has a graph
    assert 0 < row["think_time_below_1h_pct"] < row["think_time_below_10h_pct"] < 100
    assert row["arity_max"] >= 1 and row["longest_path_max"] >= row["longest_path_median"]


def test_quick_weekly_counts_sum_to_the_jobs(quick):
    spec, result = quick
    facts = log_facts(spec, spec.logs[0], last_line=None)
    instance = spec.instances()[0]
    loaded = load_instance(spec, instance)
    clock = facts.clock(loaded.swf_origin)
    local = clock.local_times(loaded.recorded_submissions)
    weeks = (local.max() - local.min()).total_seconds() / (7 * DAY)
    assert hour_of_week_counts(local).sum() * weeks == pytest.approx(len(local))
    # KTH's first replayed job (SWF line 25) was submitted 599,850 s = 6 d 22 h 37 min 30 s after the header's
    # StartTime, Mon Sep 23 14:00:31 CEST 1996 (UnixStartTime 843480031): still summer time in Stockholm
    assert loaded.swf_origin == 599850.0
    assert str(local.min()) == "1996-09-30 12:38:01+02:00"


def test_quick_report_progress_on_a_terminal(quick):
    spec, _ = quick
    out = io.StringIO()
    build_report(spec, spec.output_root.parent / "report-2", console=Console(file=out, force_terminal=True,
                                                                          width=120))
    text = out.getvalue()
    assert "loading instances" in text and "drawing figures" in text and "8/8" in text


# ------------------------------------------------------------------------------------------------ zero run time

TOY_SWF = """; MaxProcs: 2
1 0 0 100 1 -1 -1 1 200 -1 1 1 1 -1 -1 -1 -1 -1
2 50 0 0 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
3 60 0 30 1 -1 -1 1 100 -1 1 2 2 -1 -1 -1 -1 -1
"""


def toy_spec(folder, zero_runtime: str | None, report_extra: str = "") -> str:
    line = f'zero_runtime = "{zero_runtime}"' if zero_runtime else ""
    (folder / "toy.swf").write_text(TOY_SWF)
    text = f"""
[campaign]
name = "toy"
output_root = "runs"
report_dir = "report"

[[logs]]
name = "toy"
workload = "toy.swf"
nodes = 2
{line}

[matrix]
schedulers = ["fcfs"]

[report]
tables = ["scheduling"]
figures = ["cumulative"]
{report_extra}
"""
    (folder / "c.toml").write_text(text)
    return folder / "c.toml"


@pytest.mark.parametrize("choice, jobs, treatment", [(None, 2, "dropped"), ("min", 3, "kept, run for 1 s")])
def test_zero_runtime_of_a_spec_reaches_the_run_and_the_report(tmp_path, choice, jobs, treatment):
    spec = run(load_campaign(toy_spec(tmp_path, choice)))
    instance = spec.instances()[0]
    assert ("zero_runtime" in instance.params) == (choice is not None)  # the default keeps older ids
    folder = spec.output_root / instance.id
    assert json.loads((folder / "run.json").read_text())["spec"]["zero_runtime"] == (choice or "drop")
    out_jobs = pd.read_csv(folder / "out_jobs.csv")
    assert len(out_jobs) == jobs
    if choice == "min":
        assert out_jobs.loc[out_jobs["job_id"] == 2, "execution_time"].item() == pytest.approx(1.0)
    result = build_report(spec)
    logs = pd.read_csv(result.csv["logs"])
    assert logs[["nb_jobs", "nb_zero_runtime", "treatment"]].values.tolist() == [[3, 1, treatment]]
    assert f"1 (33.3 %), {treatment}" in result.markdown.read_text()


def test_metacentrum_zero_runtime_jobs_are_counted():
    # the shipped spec keeps them, as Rauch 2022 did (103,656 jobs)
    spec = load_campaign(EXPE / "fcfs-vs-easy.toml")
    metacentrum = next(log for log in spec.logs if log.name == "metacentrum")
    assert metacentrum.options["zero_runtime"] == "min"
    assert all(i.params["zero_runtime"] == "min" for i in spec.instances() if i.log.name == "metacentrum")
    facts = log_facts(spec, metacentrum)
    assert (facts.nb_jobs, facts.nb_zero_runtime) == (103656, 3712)
    assert facts.zero_runtime_text == "3,712 (3.6 %), kept, run for 1 s"
    dropping = replace(metacentrum, options={**metacentrum.options, "zero_runtime": "drop"})
    assert log_facts(spec, dropping).zero_runtime_text == "3,712 (3.6 %), dropped"


def test_a_bad_zero_runtime_is_refused(tmp_path):
    expected = r"\[\[logs\]\] #1, key 'zero_runtime': 'keep': expected one of drop, min"
    with pytest.raises(CampaignSpecError, match=expected):
        load_campaign(toy_spec(tmp_path, "keep"))


# ------------------------------------------------------------------------------------------------ explanations

EXPLANATION = """# Why EASY differs

Rauch's EASY gives 181; ours 52.8 <script>alert(1)</script>.

| variant | bounded slowdown |
|---|---:|
| 338 nodes | 52.8 |
"""


def test_explanations_are_included_verbatim_and_escaped(tmp_path):
    (tmp_path / "why.md").write_text(EXPLANATION)
    spec = run(load_campaign(toy_spec(tmp_path, None, 'explanations = "why.md"')))
    result = build_report(spec)
    markdown = result.markdown.read_text()
    assert EXPLANATION.rstrip() in markdown and "## Explanations" in markdown
    html = result.html.read_text()
    assert "<h3>Why EASY differs</h3>" in html and "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<td style=\"text-align:right\">52.8</td>" in html
    assert html.index('<h2 id="explanations">Explanations</h2>') < html.index("</body>")
    assert '<a href="#explanations">Explanations</a>' in html  # listed in the contents line


def test_no_explanations_key_adds_nothing(tmp_path):
    spec = run(load_campaign(toy_spec(tmp_path, None)))
    result = build_report(spec)
    assert "Explanations" not in result.markdown.read_text() and "Explanations" not in result.html.read_text()


def test_a_missing_explanations_file_is_one_line_naming_the_spec_and_key(tmp_path):
    path = toy_spec(tmp_path, None, 'explanations = "missing.md"')
    with pytest.raises(CampaignSpecError) as caught:
        load_campaign(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and "[report], key 'explanations'" in message
    assert "missing.md" in message
    (tmp_path / "why.md").write_text("text")  # present when loaded, gone when reported
    path.write_text(path.read_text().replace("missing.md", "why.md"))
    spec = load_campaign(path)
    (tmp_path / "why.md").unlink()
    with pytest.raises(CampaignSpecError, match=r"c.toml: \[report\], key 'explanations': no such file"):
        build_report(spec)


def test_difference_cells():
    from batreplay.reports.tables import difference_cell

    assert difference_cell(0.0, 0.0, 2) == "0"
    assert difference_cell(1.7, 0.36, 2) == "+1.70 (+0.4%)"
    assert difference_cell(-321.0, -0.0418, 0) == "-321 (-0.04%)"
    assert difference_cell(-291.0, -5820.0, 0) == "-291 (-5,820%)"
    assert difference_cell(0.01, float("nan"), 2) == "+0.01"
    assert difference_cell(float("nan"), float("nan"), 2) == "\u2013"


def test_default_zero_runtime_keeps_the_committed_instance_ids():
    # the key is a parameter only when it is "min": the committed report of a spec without it names the same ids
    spec = load_campaign(EXPE / "replay-feedback-2024.toml")
    committed = pd.read_csv(EXPE / "results" / "replay-feedback-2024" / "instances.csv")["id"].tolist()
    assert [i.id for i in spec.instances()] == committed
    assert all("zero_runtime" not in i.params for i in spec.instances())
