"""``batreplay analyze``'s versions of Madon, Da Costa, Pierson 2024, Figs. 7 and 10, on the first 1000 and 1500 jobs
of KTH-SP2: the per-job submission differences against the first run (the lateness, against a rigid replay), the
users' first recorded submissions once per distinct workload, the numbers written beside the figures and the values
the drawings receive, and the notes of the runs left out."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import WORKLOADS

from batreplay.analysis import analyze_report
from batreplay.analysis.analyze_command import analyze
from batreplay.analysis.lateness import job_lateness
from batreplay.analysis.run_dir import load_run
from batreplay.analysis.submission_differences import (DifferentJobsError, difference_edges, difference_summary,
                                                       differences_against_first, submission_differences)
from batreplay.analysis.user_arrivals import END_FINISH, END_SUBMISSION, user_arrivals
from batreplay.run.runner import RunSpec, run
from batreplay.workloads.swf import read_swf

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
NB_JOBS = 1500


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """EASY on the first 1500 KTH-SP2 jobs, rigid and with feedback (a60), and rigid on the first 1000 jobs."""
    if not KTH.is_file():
        pytest.skip("KTH-SP2 log not available")
    root = tmp_path_factory.mktemp("madon-runs")
    for name, options in (("rigid", {"max_jobs": NB_JOBS}),
                          ("a60", {"max_jobs": NB_JOBS, "replay": "feedback", "sessions": "arrival:60"}),
                          ("rigid-1000", {"max_jobs": 1000})):
        run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=root / name, **options))
    return root


@pytest.fixture(scope="module")
def analysed(runs, tmp_path_factory):
    """``analyze rigid a60 rigid-1000`` and the values its Figs. 7 and 10 were drawn from."""
    out = tmp_path_factory.mktemp("madon-analysis")
    drawn: dict[str, list] = {"differences": [], "arrivals": []}
    with pytest.MonkeyPatch.context() as patch:
        for key, name in (("differences", "plot_submission_differences"), ("arrivals", "plot_user_arrivals")):
            original = getattr(analyze_report, name)

            def spy(*args, _original=original, _key=key):
                drawn[_key].append(args)
                return _original(*args)

            patch.setattr(analyze_report, name, spy)
        report = analyze([runs / "rigid", runs / "a60", runs / "rigid-1000"], out)
    return out, report, drawn


def by_hand(folder) -> pd.DataFrame:
    jobs = pd.read_csv(folder / "out_jobs.csv", dtype={"job_id": str})
    table = pd.read_csv(folder / "jobs.csv", dtype={"job_id": str})
    return jobs.merge(table, on="job_id", validate="one_to_one").set_index("job_id")


def test_differences_against_a_rigid_run_are_the_lateness(runs, analysed):
    out, report, drawn = analysed
    a60 = by_hand(runs / "a60")
    lateness = a60["submission_time"] - a60["recorded_submission_time"]
    frame = submission_differences(load_run(runs / "rigid"), load_run(runs / "a60")).set_index("job_id")
    assert len(frame) == NB_JOBS
    assert np.allclose(frame["difference"], lateness.reindex(frame.index))
    # the same as the lateness module's (Def. 13), job by job
    run_a60 = load_run(runs / "a60")
    late = job_lateness(run_a60.jobs, run_a60.job_table).set_index("full_job_id")["lateness"]
    assert np.allclose(frame["difference"].to_numpy(), late.rename(lambda i: i.split("!")[1]).reindex(frame.index))
    (reference, series, colours), = drawn["differences"]
    assert reference == "rigid" and list(series) == ["a60"]  # rigid-1000 holds other jobs: not drawn
    assert colours["a60"] == "C1"  # the second run's colour in every figure of the analysis
    assert np.allclose(series["a60"], frame["difference"])
    table = pd.read_csv(out / "submission_differences.csv")
    assert table[["reference", "run"]].values.tolist() == [["rigid", "a60"]]
    expected = difference_summary(lateness.to_numpy())
    row = table.iloc[0]
    for key, value in expected.items():
        assert row[key] == pytest.approx(value), key
    assert row["mean_s"] == pytest.approx(float(pd.read_csv(out / "metrics.csv").set_index("run").loc[
        "a60", "mean_lateness"]))
    assert (out / "figures" / "submission_differences.png").read_bytes().startswith(b"\x89PNG")
    assert "submission_differences.png" in report.read_text()


def test_a_run_of_other_jobs_is_left_out_with_a_note(analysed):
    out, _, _ = analysed
    notes = pd.read_json(out / "metrics.json", typ="series")["notes"]
    assert ("run rigid-1000: left out of the submission differences against the first run, rigid (cf. Madon et al. "
            "2024, Fig. 7): not the same jobs: 0 of the 1000 jobs of rigid-1000 are not in rigid, 500 of the 1500 "
            "jobs of rigid are not in rigid-1000") in "\n".join(notes)


def test_same_ids_with_other_recorded_times_are_not_the_same_jobs(runs, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(runs / "rigid", moved)
    table = pd.read_csv(moved / "jobs.csv", dtype={"job_id": str})
    table.loc[5, "recorded_submission_time"] += 1.0
    table.to_csv(moved / "jobs.csv", index=False)
    with pytest.raises(DifferentJobsError, match=r"1 of the 1500 jobs have other recorded submission times"):
        submission_differences(load_run(runs / "rigid"), load_run(moved))


def test_user_arrivals_once_per_distinct_workload(runs, analysed):
    out, report, drawn = analysed
    (groups,), = drawn["arrivals"]
    assert [names for names, _ in groups] == [["rigid", "a60"], ["rigid-1000"]]
    table = pd.read_csv(out / "user_arrivals.csv")
    assert list(dict.fromkeys(table["runs"])) == ["rigid;a60", "rigid-1000"]
    for (names, arrivals), folder in zip(groups, (runs / "rigid", runs / "rigid-1000")):
        jobs = by_hand(folder)
        first = jobs.groupby("user_id")["recorded_submission_time"].min()
        rows = table[table["runs"] == ";".join(names)].set_index("user_id")
        assert rows["first_submission_s"].sort_index().to_dict() == pytest.approx(first.to_dict())
        assert arrivals.first_submission.sort_index().to_dict() == pytest.approx(first.to_dict())
        end = (jobs["recorded_submission_time"] + jobs["swf_wait_time"] + jobs["run_time"]).max()
        assert arrivals.end == pytest.approx(end) and arrivals.start == 0.0 and arrivals.end_from == END_FINISH
        assert arrivals.nb_late == int((first >= 0.9 * end).sum()) == int(rows["in_last_tenth"].sum())
        assert f"{len(first)} users; {arrivals.nb_late} of them" in report.read_text()


def test_the_late_users_of_the_whole_log_are_counted():
    # the whole KTH-SP2 log, read as a run's jobs.csv would hold it: 214 users; the end is the last recorded finish
    jobs = read_swf(KTH).jobs
    jobs = jobs[(jobs["run_time"] >= 0) & (jobs["submission_time"] >= 0)]
    table = pd.DataFrame({"job_id": jobs["job_id"].astype(str), "user_id": jobs["user_id"],
                          "recorded_submission_time": jobs["submission_time"] - jobs["submission_time"].min(),
                          "swf_wait_time": jobs["wait_time"], "run_time": jobs["run_time"]})
    arrivals = user_arrivals(table)
    first = table.groupby("user_id")["recorded_submission_time"].min()
    known = table[table["swf_wait_time"] >= 0]
    end = float((known["recorded_submission_time"] + known["swf_wait_time"] + known["run_time"]).max())
    late = int((first >= 0.9 * end).sum())
    assert len(first) == 214 and late > 10  # users keep arriving until the end of the log (Madon et al., Sect. 7.3.3)
    assert (arrivals.nb_late, len(arrivals.first_submission)) == (late, 214) and arrivals.end == pytest.approx(end)
    assert f"214 users; {late} of them ({100 * late / 214:.1f} %) first submit in the last 10 % of the log" \
        in arrivals.description()
    without_finish = user_arrivals(table.drop(columns=["swf_wait_time"]))
    assert without_finish.end_from == END_SUBMISSION and without_finish.end == table["recorded_submission_time"].max()


def test_a_run_without_users_gets_a_note_and_one_run_no_difference(runs, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(runs / "rigid", bare)
    (bare / "jobs.csv").unlink()
    analyze([runs / "rigid", bare], tmp_path / "out")
    notes = "\n".join(pd.read_json(tmp_path / "out" / "metrics.json", typ="series")["notes"])
    assert "run bare: no user arrivals (cf. Madon et al. 2024, Fig. 10): no jobs.csv with user ids" in notes
    table = pd.read_csv(tmp_path / "out" / "submission_differences.csv")  # same jobs, no recorded times needed
    assert table[["run", "nb_jobs", "nb_same"]].values.tolist() == [["bare", NB_JOBS, NB_JOBS]]
    assert differences_against_first([load_run(runs / "rigid")]) == ({}, [])  # one run: nothing to compare, no note


def test_difference_bins_are_symmetric_log_hours():
    edges = difference_edges([np.array([-3600.0 * 250, 0.0, 1800.0, 3600.0 * 5])])
    assert edges[0] <= -250 < -100 and edges[-1] >= 5 > 1
    inside = edges[(edges >= -1) & (edges <= 1)]
    assert np.allclose(np.diff(inside), 2 / 9)  # linear within 1 h, one bin centred on 0
    beyond = edges[edges > 1]
    assert np.allclose(np.diff(np.log10(beyond)), 0.2)  # five bins per decade
