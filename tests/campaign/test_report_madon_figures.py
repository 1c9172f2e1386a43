"""Madon, Da Costa, Pierson 2024, Figs. 7, 10 and 11 in the campaign report, on the first 500 to 2000 jobs of KTH-SP2:
the numbers behind each figure (the CSV written beside it, the values the drawing receives) against what the run
directories and the log give by hand, and the notes when a figure cannot be drawn."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import WORKLOADS
from rich.console import Console

from batreplay.campaign.executors import LocalExecutor
from batreplay.campaign.runner import run_campaign
from batreplay.campaign.spec import load_campaign
from batreplay.reports import lateness_figures as figures_module
from batreplay.reports.lateness_figures import lateness_figures
from batreplay.reports.report import build_report, load_instance
from batreplay.reports.user_models import labels_shown, none_shown
from batreplay.workloads.swf import read_swf

QUIET = Console(quiet=True)
KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"

# kth-1000 and kth-2000 sweep n on one workload (Fig. 11); kth-500 changes walltime_factor too: no sweep of its own
SPEC = f"""
[campaign]
name = "madon-figures"
output_root = "runs"
report_dir = "report"

[defaults]
walltime_factor = 2.0

[[logs]]
name = "kth-1000"
label = "KTH (1000)"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"
max_jobs = 1000

[[logs]]
name = "kth-2000"
label = "KTH (2000)"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"
max_jobs = 2000

[[logs]]
name = "kth-500"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"
max_jobs = 500
walltime_factor = 1.5

[[experiments]]
name = "EASY"
scheduler = "easy"
platform = "recorded"

[matrix]
replay_models = ["rigid", "feedback"]
session_methods = ["a60"]

[report]
tables = ["lateness", "user-model-comparison"]
figures = ["submission-differences", "user-arrivals", "additional-lateness-scaling"]
"""


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """The campaign run (6 simulations of 500 to 2000 jobs), and its report with the values each drawing got."""
    if not KTH.is_file():
        pytest.skip("KTH-SP2 log not available")
    folder = tmp_path_factory.mktemp("madon")
    (folder / "campaign.toml").write_text(SPEC)
    spec = load_campaign(folder / "campaign.toml")
    summary = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    assert summary.complete, summary.outcomes
    drawn: dict[str, list] = {"differences": [], "arrivals": [], "scaling": []}
    with pytest.MonkeyPatch.context() as patch:
        for key, name in (("differences", "differences_grid"), ("arrivals", "arrivals_figure"),
                          ("scaling", "scaling_grid")):
            original = getattr(figures_module, name)

            def spy(*args, _original=original, _key=key):
                drawn[_key].append(args)
                return _original(*args)

            patch.setattr(figures_module, name, spy)
        result = build_report(spec)
    return spec, result, drawn


def instance_of(spec, log: str, replay: str):
    return next(i for i in spec.instances() if i.log.name == log and i.replay.label == replay)


def by_hand_lateness(spec, log: str, replay: str) -> pd.DataFrame:
    """job_id -> submission, recorded submission and lateness, from the instance's out_jobs.csv and jobs.csv."""
    folder = spec.output_root / instance_of(spec, log, replay).id
    jobs = pd.read_csv(folder / "out_jobs.csv", dtype={"job_id": str})
    table = pd.read_csv(folder / "jobs.csv", dtype={"job_id": str})
    merged = jobs.merge(table, on="job_id", validate="one_to_one")
    merged["lateness"] = merged["submission_time"] - merged["recorded_submission_time"]
    return merged.set_index("job_id")


def test_fig7_differences_against_rigid_are_the_jobs_lateness(campaign):
    spec, result, drawn = campaign
    table = pd.read_csv(result.csv["fig7-submission-differences"])
    assert set(zip(table["log"], table["replay"])) == {(log, "a60") for log in ("kth-1000", "kth-2000", "kth-500")}
    panels = {title: p for title, p in drawn["differences"]}
    assert set(panels) == {"KTH (1000)", "KTH (2000)", "kth-500"}
    for log, title in (("kth-1000", "KTH (1000)"), ("kth-2000", "KTH (2000)"), ("kth-500", "kth-500")):
        feedback = by_hand_lateness(spec, log, "a60")
        rigid = by_hand_lateness(spec, log, "rigid")
        # a rigid replay submits at the recorded times: feedback - rigid, job by job, is the lateness
        assert np.allclose(rigid["lateness"], 0.0)
        against_rigid = feedback["submission_time"] - rigid["submission_time"].reindex(feedback.index)
        assert np.allclose(against_rigid, feedback["lateness"])
        drawn_values = panels[title]["EASY"]["a60"]
        assert list(panels[title]["EASY"]) == ["a60"]  # reactive replays only: no rigid line
        assert np.allclose(np.sort(drawn_values), np.sort(against_rigid.to_numpy()))
        row = table[table["log"] == log].iloc[0]
        expected = feedback["lateness"].to_numpy()
        assert row["nb_jobs"] == len(expected) == len(drawn_values)
        assert row["mean_s"] == pytest.approx(expected.mean())
        assert [row["p10_s"], row["p50_s"], row["p90_s"]] == pytest.approx(np.percentile(expected, [10, 50, 90]))
        assert (row["nb_earlier"], row["nb_same"], row["nb_later"]) == (
            int((expected < -1e-6).sum()), int((np.abs(expected) <= 1e-6).sum()), int((expected > 1e-6).sum()))
        # its mean is the lateness table's mean lateness (eq. 3)
        lateness = pd.read_csv(result.csv["lateness"]).set_index("log").loc[log]
        assert row["mean_s"] / 86400 == pytest.approx(lateness["mean_lateness_days"])
    assert result.figures[("submission-differences", "kth-2000")].read_bytes().startswith(b"\x89PNG")


def test_fig10_arrivals_are_each_users_first_recorded_submission(campaign):
    spec, result, drawn = campaign
    table = pd.read_csv(result.csv["fig10-user-arrivals"])
    swf = read_swf(KTH).jobs
    for log in ("kth-1000", "kth-2000"):
        jobs = by_hand_lateness(spec, log, "rigid")
        rows = table[table["log"] == log].set_index("user_id")
        first = jobs.groupby("user_id")["recorded_submission_time"].min()
        assert rows["first_submission_s"].sort_index().to_dict() == pytest.approx(first.sort_index().to_dict())
        assert list(rows["first_submission_s"]) == sorted(rows["first_submission_s"])  # arrival order
        # from the log itself: each user's first SWF submission among the replayed lines, from the first one's
        lines = swf[swf["line"].isin(jobs["swf_line"])]
        from_log = lines.groupby("user_id")["submission_time"].min() - lines["submission_time"].min()
        assert rows["first_submission_s"].sort_index().to_dict() == pytest.approx(from_log.sort_index().to_dict())
        # the log's end: its last recorded finish (submission + recorded wait + run time)
        end = (jobs["recorded_submission_time"] + jobs["swf_wait_time"] + jobs["run_time"]).max()
        assert rows["log_end_s"].tolist() == pytest.approx([end] * len(rows))
        assert set(rows["log_end_from"]) == {"last recorded finish"}
        late = int((first >= 0.9 * end).sum())
        assert int(rows["in_last_tenth"].sum()) == late
        caption = next(f.caption for f in lateness_figures(spec, [load_instance(spec, i, keep_job_table=True)
                                                                 for i in spec.instances() if i.log.name == log]
                                                           ).figures["user-arrivals"])
        assert f"{len(first)} users; {late} of them" in caption
        assert f"{len(first)} users; {late} of them" in result.markdown.read_text()
    titles = [title for title, _ in drawn["arrivals"]]
    assert titles == ["KTH (1000)", "KTH (2000)", "kth-500"]
    first_2000 = drawn["arrivals"][1][1]
    assert first_2000.nb_late == late and len(first_2000.first_submission) == len(first)


def test_fig11_points_are_the_instances_additional_lateness(campaign):
    spec, result, drawn = campaign
    points = pd.read_csv(result.csv["fig11-additional-lateness-scaling"])
    assert list(points["log"]) == ["kth-1000", "kth-2000"] and set(points["replay"]) == {"a60"}
    assert list(points["nb_jobs"]) == [1000, 2000] and list(points["max_jobs"]) == [1000, 2000]
    instances = pd.read_csv(result.csv["instances"]).set_index(["log", "replay"])
    for row in points.itertuples():
        assert row.additional_lateness_s == pytest.approx(instances.loc[(row.log, "a60"), "additional_lateness"])
        late = by_hand_lateness(spec, row.log, "a60")["lateness"]
        assert row.additional_lateness_s == pytest.approx(2 * late.mean() / (len(late) - 1))  # eq. 6
    (title, drawn_points, experiments, labels), = drawn["scaling"]
    assert title == "KTH-SP2-1996-2.1-cln" and experiments == ["EASY"] and labels == ["a60"]
    assert drawn_points["additional_lateness_s"].tolist() == pytest.approx(points["additional_lateness_s"].tolist())
    assert set(result.figures) >= {("additional-lateness-scaling", "KTH-SP2-1996-2.1-cln")}
    # kth-500 converts the log with another walltime factor: no sweep of its own, said
    assert any(note.startswith("kth-500: left out of the additional lateness scaling figure (Fig. 11)")
               for note in result.notes)


def test_figs_7_and_11_show_reactive_replays_and_say_when_there_is_none(campaign, tmp_path):
    spec, _, _ = campaign
    for kind in ("submission-differences", "additional-lateness-scaling"):
        assert labels_shown(kind, spec.replays) == ["a60"]
    rigid_only = replace(spec, replays=[r for r in spec.replays if r.model == "rigid"])
    result = build_report(rigid_only, tmp_path / "report")
    for kind in ("submission-differences", "additional-lateness-scaling"):
        assert f"figure {kind}: {none_shown(kind)}" in result.notes  # "the campaign has no feedback, adjusted, ..."
        assert none_shown(kind).startswith("the campaign has no feedback, adjusted")
    assert {kind for kind, _ in result.figures} == {"user-arrivals"}
    assert "fig7-submission-differences" not in result.csv and "fig11-additional-lateness-scaling" not in result.csv


def test_fig10_says_when_no_jobs_csv_is_at_hand(campaign):
    spec, _, _ = campaign
    results = [load_instance(spec, instance) for instance in spec.instances()]  # job tables not kept
    found = lateness_figures(spec, results)
    assert found.figures["user-arrivals"] == []
    assert found.notes["user-arrivals"] == [
        f"{log}: no user arrivals figure (Fig. 10): no finished instance with a jobs.csv of user ids and recorded "
        f"submission times" for log in ("kth-1000", "kth-2000", "kth-500")]


def test_the_user_model_comparison_table_gives_each_replay_its_metrics(campaign):
    """Every replay of every log is a row (the kind is about all user models); the submission period is the span
    of the replay's submissions, the bounded slowdown and the lateness those of the instance."""
    spec, result, _drawn = campaign
    table = pd.read_csv(result.csv["user-model-comparison"])
    assert set(zip(table["log"], table["replay"])) == {(log, replay) for log in ("kth-1000", "kth-2000", "kth-500")
                                                        for replay in ("rigid", "a60")}
    for log in ("kth-1000", "kth-500"):
        for replay in ("rigid", "a60"):
            row = table[(table["log"] == log) & (table["replay"] == replay)].iloc[0]
            jobs = by_hand_lateness(spec, log, replay)
            span = (jobs["submission_time"].max() - jobs["submission_time"].min()) / 86400
            assert row["submission_span_days"] == pytest.approx(span)
            assert row["mean_lateness_days"] == pytest.approx(jobs["lateness"].mean() / 86400)
            wait = jobs["starting_time"] - jobs["submission_time"]
            assert row["mean_waiting_time_h"] == pytest.approx(wait.mean() / 3600)
