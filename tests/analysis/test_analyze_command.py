"""``batreplay analyze``: outputs on golden Batsim runs, a runner run and hand-made run directories; every
error path with its message."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import GOLDEN, WORKLOADS

from batreplay.analysis.adequacy import StreamMismatchError
from batreplay.analysis.analyze_command import WRITTEN_BY, AnalyzeOutputError, analyze, window_from_days
from batreplay.formats.out_jobs import BATSIM_COLUMNS, OutJobsError
from batreplay.analysis.run_dir import RunDirError, load_run, unique_run_names
from batreplay.run.runner import RunSpec, run

KTH_LOG = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
SWF_FIELDS = ["job_id", "submission_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
              "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user_id",
              "group_id", "executable", "queue", "partition", "preceding_job", "think_time"]


def write_out_jobs(path, rows: list[tuple]) -> None:
    """Rows (job_id, submission, resources, requested_time, start, finish, allocated) as Batsim writes them."""
    records = []
    for job_id, sub, res, walltime, start, finish, allocated in rows:
        records.append({
            "job_id": job_id, "workload_name": "w0", "profile": "p", "submission_time": sub,
            "requested_number_of_resources": res, "requested_time": walltime, "success": 1,
            "final_state": "COMPLETED_SUCCESSFULLY", "starting_time": start, "execution_time": finish - start,
            "finish_time": finish, "waiting_time": start - sub, "turnaround_time": finish - sub,
            "stretch": (finish - sub) / (finish - start), "allocated_resources": allocated,
            "consumed_energy": -1.0, "metadata": ""})
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(records, columns=list(BATSIM_COLUMNS)).to_csv(path, index=False)


DAY = 86_400.0
# jobs a (user 1), b (user 1), c (user 2); platform of 4 nodes
HAND_ROWS = [("a", 0.0, 2, 100.0, 0.0, 50.0, "0-1"), ("b", 0.5 * DAY, 4, 100.0, 0.5 * DAY + 10, 0.5 * DAY + 60, "0-3"),
             ("c", 2 * DAY, 1, 100.0, 2 * DAY, 2 * DAY + 30, "2")]


def hand_run(folder, *, originals=(0.0, 0.5 * DAY - 100, 2 * DAY - 40), nb_resources=4, rows=HAND_ROWS):
    """A run directory with a job side table (users 1, 1, 2; recorded submissions ``originals``) and a
    run.json naming a 4-node platform written next to it."""
    write_out_jobs(folder / "out_jobs.csv", rows)
    table = pd.DataFrame({"job_id": [r[0] for r in rows], "user_id": [1, 1, 2][: len(rows)]})
    if originals is not None:
        table["recorded_submission_time"] = list(originals)[: len(rows)]
    table.to_csv(folder / "jobs.csv", index=False)
    platform = folder / "platform.xml"
    platform.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1"><zone id="AS0" routing="Full">\n'
        f'<cluster id="c" prefix="node_" suffix="" radical="0-{nb_resources - 1}" speed="1Gf" bw="1Gbps" lat="0"/>\n'
        '<cluster id="m" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="1Gbps" lat="0">'
        '<prop id="role" value="master"/></cluster>\n'
        '</zone></platform>\n')
    (folder / "run.json").write_text(json.dumps({"spec": {"scheduler": "easy", "platform": str(platform),
                                                          "replay": "feedback"}}))
    return folder


@pytest.fixture(scope="module")
def golden_kth2000():
    if not (GOLDEN / "kth2000").is_dir():
        pytest.skip("golden run kth2000 not available")
    return GOLDEN / "kth2000"


@pytest.fixture(scope="module")
def easy_kth2000(golden_kth2000, tmp_path_factory):
    """Our EASY on the golden kth2000 workload and platform (a run directory of the runner)."""
    out = tmp_path_factory.mktemp("runs") / "easy"
    run(RunSpec.build(workload=golden_kth2000 / "workload.json", platform=golden_kth2000 / "platform.xml",
                scheduler="easy", out_dir=out))
    return out


@pytest.fixture(scope="module")
def kth_log_jobs():
    if not KTH_LOG.is_file():
        pytest.skip("KTH-SP2 log not available")
    return pd.read_csv(KTH_LOG, sep=r"\s+", comment=";", header=None, names=SWF_FIELDS)


@pytest.fixture(scope="module")
def two_runs_analysis(golden_kth2000, easy_kth2000, tmp_path_factory):
    if not KTH_LOG.is_file():
        pytest.skip("KTH-SP2 log not available")
    out = tmp_path_factory.mktemp("analysis")
    report = analyze([golden_kth2000, easy_kth2000], out, swf_log=KTH_LOG)
    return out, report


# ---------------------------------------------------------------- outputs on real runs


def test_outputs_of_two_real_runs(two_runs_analysis):
    out, report = two_runs_analysis
    assert report == out / "report.html"
    for name in ("metrics.csv", "metrics.json", "adequacy_vs_log.csv", "adequacy_pairs.csv", "windows.csv"):
        assert (out / name).is_file(), name
    for stem in ("submissions", "cumulative_jobs", "utilisation_queue", "gantt"):
        assert (out / "figures" / f"{stem}.png").is_file() and (out / "figures" / f"{stem}.svg").is_file()
    # neither run has recorded submission times (JSON workload, golden folder): no lateness outputs
    assert not (out / "lateness_per_user.csv").exists() and not (out / "figures" / "user_mean_lateness.png").exists()
    # + the waiting-time distribution, and the submission differences of the two runs of the same jobs (Fig. 7)
    assert report.read_text().count("<img ") == 6
    assert (out / "figures" / "submission_differences.png").is_file()


def test_metrics_agree_with_batsims_out_schedule(two_runs_analysis, golden_kth2000):
    out, _ = two_runs_analysis
    metrics = pd.read_csv(out / "metrics.csv")
    assert metrics["run"].tolist() == ["kth2000", "easy"]
    golden = metrics.iloc[0]
    schedule = pd.read_csv(golden_kth2000 / "out_schedule.csv").iloc[0]
    assert golden["nb_resources"] == schedule["nb_computing_machines"] == 100
    assert golden["nb_resources_source"] == "nb_computing_machines of out_schedule.csv"
    assert golden["nb_jobs"] == schedule["nb_jobs"] == 2000
    assert golden["nb_killed"] == schedule["nb_jobs_killed"]
    assert golden["busy_node_seconds"] == pytest.approx(schedule["time_computing"], rel=1e-9)
    assert golden["max_waiting_time"] == pytest.approx(schedule["max_waiting_time"])
    assert metrics.iloc[1]["nb_resources_source"].startswith("platform ")
    document = json.loads((out / "metrics.json").read_text())
    assert [row["run"] for row in document["runs"]] == ["kth2000", "easy"]
    for row, (_, csv_row) in zip(document["runs"], metrics.iterrows()):
        for key, value in row.items():
            expected = csv_row[key]
            if value is None:
                assert pd.isna(expected), key
            elif isinstance(value, (int, float)):
                assert value == pytest.approx(float(expected)), key


def _rms(values: np.ndarray) -> float:
    return math.sqrt(float(np.mean(values * values)))


def test_pair_adequacy_is_rms_of_turnaround_differences(two_runs_analysis, golden_kth2000, easy_kth2000):
    """Residence time = waiting + processing = turnaround (Baranov et al. 2018, Sect. VI): P from the two CSVs
    directly."""
    out, _ = two_runs_analysis
    pairs = pd.read_csv(out / "adequacy_pairs.csv", dtype={"prefix": str})
    assert set(zip(pairs["reference"], pairs["model"])) == {("kth2000", "easy")}
    a = pd.read_csv(golden_kth2000 / "out_jobs.csv", dtype={"job_id": str})
    b = pd.read_csv(easy_kth2000 / "out_jobs.csv", dtype={"job_id": str})
    both = a.merge(b, on="job_id", suffixes=("_a", "_b"))
    assert len(both) == 2000
    row = pairs.set_index("prefix").loc["all"]
    assert row["measure"] == pytest.approx(_rms((both["turnaround_time_b"] - both["turnaround_time_a"]).to_numpy()))
    assert row["nb_different_jobs"] == int((abs(both["waiting_time_b"] - both["waiting_time_a"]) > 1e-6).sum())


def test_log_adequacy_against_recorded_residence_times(two_runs_analysis, golden_kth2000, kth_log_jobs):
    """Run vs log: V_i = turnaround in the run, v_i = recorded wait + run time; the paper's Table I beside it."""
    out, _ = two_runs_analysis
    table = pd.read_csv(out / "adequacy_vs_log.csv", dtype={"prefix": str})
    golden = table[table["run"] == "kth2000"].set_index("prefix")
    assert golden.index.tolist() == ["50", "100", "250", "500", "750", "1000", "all"]
    jobs = pd.read_csv(golden_kth2000 / "out_jobs.csv")
    both = jobs.merge(kth_log_jobs, on="job_id")
    assert len(both) == 2000
    recorded = (both["wait_time"] + both["run_time"]).to_numpy(dtype=float)
    assert golden.loc["all", "measure"] == pytest.approx(_rms(both["turnaround_time"].to_numpy() - recorded))
    assert golden.loc["all", "nb_different_jobs"] == int((abs(both["waiting_time"] - both["wait_time"]) > 1e-6).sum())
    # Baranov et al. 2018's Table I for SUPPZ with virtual nodes
    assert golden.loc["100", "baranov2018_p"] == 12.0 and golden.loc["1000", "baranov2018_nb_different_jobs"] == 35
    assert pd.isna(golden.loc["all", "baranov2018_p"])
    metrics = pd.read_csv(out / "metrics.csv").set_index("run")
    assert metrics.loc["kth2000", "adequacy_vs_log"] == pytest.approx(golden.loc["all", "measure"])
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert any("26476 of the log's 28476 jobs are not in the run" in n for n in notes)


def test_windows_left_out_when_the_run_is_short(two_runs_analysis):
    out, _ = two_runs_analysis
    assert pd.read_csv(out / "windows.csv").empty  # kth2000 lasts 25 days, the Fig. 9 windows months
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    windows = [n for n in notes if "Fig. 9 windows left out" in n]
    assert len(windows) == 2 and all("4 months ends on day 135.8" in n for n in windows)  # one note per run


# ---------------------------------------------------------------- hand-made runs


def test_lateness_and_per_user_outputs_by_hand(tmp_path):
    folder = hand_run(tmp_path / "feedback")
    out = tmp_path / "out"
    report = analyze([folder], out)
    metrics = pd.read_csv(out / "metrics.csv").iloc[0]
    assert metrics["nb_resources"] == 4
    # lateness: a 0 s, b 100 s, c 40 s; mean 140 / 3; recorded span 2 days - 40 s
    assert metrics["mean_lateness"] == pytest.approx(140 / 3)
    assert metrics["relative_lateness"] == pytest.approx(1 + (140 / 3) / (2 * DAY - 40))
    assert metrics["additional_lateness"] == pytest.approx(2 * (140 / 3) / 2)
    late = pd.read_csv(out / "lateness_per_user.csv").set_index("user_id")
    assert late.loc[1, "nb_jobs"] == 2 and late.loc[1, "mean_lateness"] == pytest.approx(50.0)
    assert late.loc[2, "mean_lateness"] == pytest.approx(40.0) and pd.isna(late.loc[2, "additional_lateness"])
    users = pd.read_csv(out / "per_user.csv").set_index("user_id")
    assert users.loc[1, "mean_waiting_time"] == pytest.approx(5.0)  # waits 0 and 10 s
    assert users.loc[2, "node_seconds"] == pytest.approx(30.0)
    assert (out / "figures" / "user_mean_lateness.png").is_file()
    assert (out / "figures" / "user_arrivals.png").is_file()  # the run knows its users (Fig. 10)
    assert report.read_text().count("<img ") == 7  # + the waiting-time distribution and the user arrivals


def test_window_selects_jobs_and_gantt(tmp_path):
    out = tmp_path / "out"
    report = analyze([hand_run(tmp_path / "r")], out, window=(0.0, 1.0))
    metrics = pd.read_csv(out / "metrics.csv").iloc[0]
    assert metrics["nb_jobs"] == 2  # a (t = 0) and b (half a day); c comes on day 2
    # busy node-seconds in the first day: a 2 x 50, b 4 x 50
    assert metrics["busy_node_seconds"] == pytest.approx(300.0)
    assert metrics["utilisation"] == pytest.approx(300.0 / (4 * DAY))
    assert "Gantt chart of [0, 24] h of simulated time" in report.read_text()
    assert json.loads((out / "metrics.json").read_text())["parameters"]["window"] == {"start": 0.0, "end": DAY}


def test_runs_of_different_streams_are_noted_not_compared(tmp_path):
    rigid = hand_run(tmp_path / "rigid")
    shifted = [(j, s + 5.0, r, w, b + 5.0, f + 5.0, al) for j, s, r, w, b, f, al in HAND_ROWS]
    feedback = hand_run(tmp_path / "feedback", rows=shifted)
    out = tmp_path / "out"
    analyze([rigid, feedback], out)
    assert not (out / "adequacy_pairs.csv").exists()
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert any("runs rigid and feedback not compared" in n and "submission time differs" in n for n in notes)


def test_identical_runs_have_zero_adequacy(tmp_path):
    out = tmp_path / "out"
    analyze([hand_run(tmp_path / "x" / "run"), hand_run(tmp_path / "y" / "run")], out)
    pairs = pd.read_csv(out / "adequacy_pairs.csv")
    assert pairs["reference"].unique().tolist() == ["x/run"] and pairs["model"].unique().tolist() == ["y/run"]
    assert pairs["measure"].tolist() == [0.0] and pairs["nb_different_jobs"].tolist() == [0]


@pytest.mark.slow
def test_rerun_removes_stale_outputs(tmp_path):
    out = tmp_path / "out"
    analyze([hand_run(tmp_path / "x" / "run"), hand_run(tmp_path / "y" / "run")], out)
    assert (out / "adequacy_pairs.csv").exists()
    analyze([hand_run(tmp_path / "x" / "run")], out)
    assert not (out / "adequacy_pairs.csv").exists()


def test_unique_run_names(tmp_path):
    for sub in ("a/run", "b/run", "c/other"):
        (tmp_path / sub).mkdir(parents=True)
    names = unique_run_names([tmp_path / "a/run", tmp_path / "b/run", tmp_path / "c/other"])
    assert names == ["a/run", "b/run", "other"]


def test_window_from_days():
    window = window_from_days((14, 120))
    assert (window.start, window.end) == (14 * DAY, 134 * DAY)
    assert window_from_days(None) is None


# ---------------------------------------------------------------- error paths


def _break_out_jobs_columns(folder):
    hand_run(folder)
    jobs = pd.read_csv(folder / "out_jobs.csv").drop(columns=["finish_time"])
    jobs.to_csv(folder / "out_jobs.csv", index=False)


def _break_job_table_columns(folder):
    hand_run(folder)
    pd.read_csv(folder / "jobs.csv").drop(columns=["user_id"]).to_csv(folder / "jobs.csv", index=False)


def _extra_job_in_table(folder):
    hand_run(folder)
    table = pd.read_csv(folder / "jobs.csv")
    pd.concat([table, table.iloc[:1].assign(job_id="zz")]).to_csv(folder / "jobs.csv", index=False)


def _bad_recorded_time(folder):
    hand_run(folder)
    table = pd.read_csv(folder / "jobs.csv").astype({"recorded_submission_time": object})
    table.loc[1, "recorded_submission_time"] = "soon"
    table.to_csv(folder / "jobs.csv", index=False)


def _bad_manifest(folder):
    hand_run(folder)
    (folder / "run.json").write_text('{"spec":\n  {"scheduler": "easy",}\n}')


def _no_resources(folder):
    write_out_jobs(folder / "out_jobs.csv", HAND_ROWS)


def _bad_value(folder):
    hand_run(folder)
    jobs = pd.read_csv(folder / "out_jobs.csv").astype({"starting_time": object})
    jobs.loc[2, "starting_time"] = "later"
    jobs.to_csv(folder / "out_jobs.csv", index=False)


@pytest.mark.parametrize("prepare, error, message", [
    (None, RunDirError, r"no such run directory"),
    (lambda f: f.mkdir(), RunDirError, r"no out_jobs\.csv \(neither a batreplay run directory nor a Batsim"),
    (_break_out_jobs_columns, OutJobsError, r"out_jobs\.csv: missing required column\(s\) finish_time"),
    (_bad_value, OutJobsError, r"out_jobs\.csv, line 4, column 'starting_time': 'later' is not a finite number"),
    (_break_job_table_columns, RunDirError, r"jobs\.csv: missing column\(s\) user_id"),
    (_extra_job_in_table, RunDirError, r"jobs\.csv are not in the jobs table \(first: zz\)"),
    (_bad_recorded_time, RunDirError, r"jobs\.csv, line 3, column 'recorded_submission_time': 'soon'"),
    (_bad_manifest, RunDirError, r"run\.json, line 2: not valid JSON"),
    (_no_resources, RunDirError, r"number of resources unknown .* pass --nb-resources N"),
])
def test_run_directory_errors(tmp_path, prepare, error, message):
    folder = tmp_path / "run"
    if prepare is not None:
        prepare(folder)
    with pytest.raises(error, match=message):
        analyze([folder], tmp_path / "out")
    assert not (tmp_path / "out" / "report.html").exists()


def test_explicit_resources_too_few_for_a_job(tmp_path):
    with pytest.raises(RunDirError, match=r"job w0!b requests 4 resources but the platform has 3 \(given explicitly\)"):
        analyze([hand_run(tmp_path / "r")], tmp_path / "out", nb_resources=3)
    # and enough of them overrides the platform file
    analyze([hand_run(tmp_path / "r")], tmp_path / "out", nb_resources=8)
    assert pd.read_csv(tmp_path / "out" / "metrics.csv")["nb_resources"].tolist() == [8]


def test_parameter_errors(tmp_path):
    folder = hand_run(tmp_path / "r")
    with pytest.raises(ValueError, match="at least one run"):
        analyze([], tmp_path / "out")
    with pytest.raises(RunDirError, match="the same run is given twice"):
        analyze([folder, folder], tmp_path / "out")
    with pytest.raises(ValueError, match="length must be > 0 days"):
        analyze([folder], tmp_path / "out", window=(1.0, 0.0))
    with pytest.raises(ValueError, match="tau must be > 0"):
        analyze([folder], tmp_path / "out", tau=0.0)
    with pytest.raises(FileNotFoundError, match=r"SWF log .*nothing\.swf: no such file"):
        analyze([folder], tmp_path / "out", swf_log=tmp_path / "nothing.swf")


def test_log_of_another_workload_is_refused(tmp_path):
    if not KTH_LOG.is_file():
        pytest.skip("KTH-SP2 log not available")
    with pytest.raises(StreamMismatchError, match=r"no run can be compared with the log .*: run r: "
                                                  r"3 of the run's 3 job\(s\) are not in the log .*first: a, b, c"):
        analyze([hand_run(tmp_path / "r")], tmp_path / "out", swf_log=KTH_LOG)


def test_log_with_other_submission_times_is_noted_not_compared(tmp_path):
    """KTH jobs 15 and 16 (recorded 172 s apart) with job 16 submitted 200 s after job 15: not the log's job
    stream, so no adequacy table, a note saying why, and every other output."""
    if not KTH_LOG.is_file():
        pytest.skip("KTH-SP2 log not available")
    rows = [("15", 0.0, 4, 53940.0, 0.0, 3477.0, "0-3"), ("16", 200.0, 25, 3600.0, 200.0, 2688.0, "4-28")]
    folder = tmp_path / "r"
    write_out_jobs(folder / "out_jobs.csv", rows)
    out = tmp_path / "out"
    analyze([folder], out, swf_log=KTH_LOG, nb_resources=100)
    assert not (out / "adequacy_vs_log.csv").exists() and (out / "metrics.csv").is_file()
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert any("not compared with the log" in n and "submission time differs for job 16" in n
               and "172 in log" in n and "200 in run r" in n for n in notes)


def test_batsim_folder_resources_from_platform_file(tmp_path):
    folder = hand_run(tmp_path / "r", nb_resources=6)
    (folder / "run.json").unlink()
    loaded = load_run(folder)
    assert loaded.nb_resources == 6 and loaded.nb_resources_source.startswith("platform ")
    assert loaded.spec == {} and loaded.scheduler == "?"


# ---------------------------------------------------------------- through the command line


def _cli_main():
    from batreplay import cli

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    if "analyze" not in commands.choices:
        pytest.skip("batreplay analyze is not wired into batreplay/cli.py yet")
    return cli.main


def test_cli_analyze_and_its_error_message(tmp_path, capsys):
    main = _cli_main()
    folder = hand_run(tmp_path / "r")
    assert main(["analyze", str(folder), "--out", str(tmp_path / "out"), "--window-days", "0", "1"]) == 0
    assert (tmp_path / "out" / "report.html").is_file()
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(tmp_path / "missing"), "--out", str(tmp_path / "out2")])
    assert stop.value.code == 2
    assert "batreplay: error:" in capsys.readouterr().err


def test_runs_named_on_the_command_line(tmp_path):
    """``--names``: the tables and figures call the runs as given; a wrong count or a repeated name is refused."""
    first, second = hand_run(tmp_path / "a" / "run"), hand_run(tmp_path / "b" / "run")
    out = tmp_path / "named"
    analyze([first, second], out, names=["lowest id", "fastest first"])
    assert list(pd.read_csv(out / "metrics.csv")["run"]) == ["lowest id", "fastest first"]
    for names in (["only one"], ["same", "same"], ["", "x"]):
        with pytest.raises(ValueError, match="--names: give 2 distinct non-empty names"):
            analyze([first, second], tmp_path / "refused", names=names)


def test_the_node_count_source_names_a_file_under_the_current_folder_relatively(tmp_path, monkeypatch):
    """A run whose run.json names a platform by its absolute path (a shipped platform resolved in the checkout) is
    analysed from the folder above it: the source of the node count names the platform relatively, so that committed
    tables name no folder of the machine."""
    from batreplay.analysis.run_dir import _resolve_nb_resources
    from batreplay.platforms.generate import write_platform

    platform = write_platform(tmp_path / "platforms" / "c.xml", nodes=3, speed=1e9)
    monkeypatch.chdir(tmp_path)
    nodes, source, _notes, _read = _resolve_nb_resources(tmp_path, {"platform_file": str(platform.resolve())}, None)
    assert (nodes, source) == (3, "platform platforms/c.xml")


# ---------------------------------------------------------------- the output folder (audit issue 25, item 1)


@pytest.fixture(scope="module")
def delays_run(tmp_path_factory):
    """A real run directory of the runner: EASY on golden case delays (run.json, metrics.json, out_jobs.csv, ...)."""
    if not (GOLDEN / "delays").is_dir():
        pytest.skip("golden run delays not available")
    out = tmp_path_factory.mktemp("runs") / "delays"
    run(RunSpec.build(workload=GOLDEN / "delays" / "workload.json", platform=GOLDEN / "delays" / "platform.xml",
                      scheduler="easy", out_dir=out))
    return out


def _contents(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_out_equal_to_the_run_directory_is_refused_before_any_work(delays_run, capsys):
    before = _contents(delays_run)
    steps = []
    with pytest.raises(AnalyzeOutputError) as info:
        analyze([delays_run], delays_run, on_progress=lambda step, done, total: steps.append(step))
    assert str(info.value) == (f"--out {delays_run}: this is the run directory {delays_run} being analysed, whose "
                               f"metrics.json analyze would overwrite; give another folder, e.g. --out "
                               f"{delays_run / 'analysis'}")
    assert steps == [] and _contents(delays_run) == before  # nothing read, nothing written
    assert json.loads((delays_run / "metrics.json").read_text())["makespan"] > 0  # the run's own summary
    main = _cli_main()
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(delays_run), "--out", str(delays_run) + "/"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith(f"batreplay: error: --out {delays_run}: this is the run directory")
    assert _contents(delays_run) == before


def test_out_that_is_another_run_or_a_batsim_folder_is_refused(delays_run, tmp_path):
    batsim = shutil.copytree(GOLDEN / "delays", tmp_path / "batsim")  # a real Batsim output folder
    before = _contents(batsim)
    with pytest.raises(AnalyzeOutputError, match=r"^--out .*batsim: a run directory or a Batsim output folder \(it "
                                                 r"holds out_jobs\.csv, out_schedule\.csv\), whose files analyze "
                                                 r"would overwrite; give another folder, e.g\. --out .*batsim/analysis$"):
        analyze([delays_run], batsim)
    assert _contents(batsim) == before
    other = shutil.copytree(delays_run, tmp_path / "other")
    with pytest.raises(AnalyzeOutputError, match=r"it holds run\.json, out_jobs\.csv, out_schedule\.csv\)"):
        analyze([hand_run(tmp_path / "r")], other)
    # a folder inside the run directory is fine
    analyze([delays_run], delays_run / "analysis")
    assert (delays_run / "analysis" / "report.html").is_file()
    shutil.rmtree(delays_run / "analysis")


def test_out_holding_files_analyze_did_not_write_is_refused(delays_run, tmp_path):
    out = tmp_path / "out"
    (out / "figures").mkdir(parents=True)
    shutil.copy(delays_run / "metrics.json", out / "metrics.json")  # a run's metrics, not an analysis
    (out / "figures" / "gantt.png").write_bytes(b"mine")
    before = _contents(out)
    with pytest.raises(AnalyzeOutputError) as info:
        analyze([delays_run], out)
    assert str(info.value) == (f"--out {out}: holds metrics.json, figures/gantt.png, which analyze would replace but "
                               f'did not write (its metrics.json has no "written_by": "batreplay analyze"); give a '
                               "new or empty folder, or move those files away")
    assert _contents(out) == before
    (out / "metrics.json").unlink()
    with pytest.raises(AnalyzeOutputError, match=r"holds figures/gantt\.png, which analyze would replace"):
        analyze([delays_run], out)


def test_an_earlier_analysis_is_recognised_and_replaced(delays_run, tmp_path):
    out = tmp_path / "out"
    analyze([delays_run], out)
    document = json.loads((out / "metrics.json").read_text())
    assert next(iter(document.items())) == WRITTEN_BY
    (out / "adequacy_pairs.csv").write_text("stale\n")
    analyze([delays_run], out)
    assert not (out / "adequacy_pairs.csv").exists()
    # an analysis of an earlier version, without the mark
    del document[WRITTEN_BY[0]]
    (out / "metrics.json").write_text(json.dumps(document))
    analyze([delays_run], out)
    assert json.loads((out / "metrics.json").read_text())[WRITTEN_BY[0]] == WRITTEN_BY[1]


# ---------------------------------------------------------------- every row of out_jobs.csv (audit issue 25, item 2)


def _kth2000_copy(folder, line: int, old: str, new: str, *, cut: bool = False):
    """A copy of golden Batsim run kth2000 (out_jobs.csv, out_schedule.csv) with ``old`` replaced by ``new`` in line
    ``line`` of out_jobs.csv, or, with ``cut``, the file ending right after ``old`` there."""
    shutil.copytree(GOLDEN / "kth2000", folder, ignore=shutil.ignore_patterns("transcript.jsonl", "platform.xml"))
    lines = (folder / "out_jobs.csv").read_text().split("\n")
    assert old in lines[line - 1]
    if cut:
        lines = lines[:line - 1] + [lines[line - 1][:lines[line - 1].index(old) + len(old)]]
    else:
        lines[line - 1] = lines[line - 1].replace(old, new, 1)
    (folder / "out_jobs.csv").write_text("\n".join(lines))
    return folder


@pytest.mark.parametrize(("line", "old", "new", "cut", "message"), [
    # job 17 (line 318) cut in its turnaround time: 21 s instead of 215,337 s, no stretch, no allocation
    (318, ",215963.000000,0.000000,21", "", True, "line 318, column 'turnaround_time': the line stops there"),
    (318, ",0.000000,215337.000000,1.000000", ",0.000000,21.000000,1.000000", False,
     "line 318, column 'turnaround_time': 21.000000 but finish_time - submission_time = 215337.000000"),
    (2, ",4-28,", ",4000-4024,", False, "line 2, column 'allocated_resources': job w0!16 ran on '4000-4024', beyond "
                                        "the platform's 100 resources (ids 0-99, nb_computing_machines of "
                                        "out_schedule.csv"),
])
def test_analyze_refuses_a_bad_row_of_a_real_batsim_run(golden_kth2000, tmp_path, capsys, line, old, new, cut,
                                                        message):
    folder = _kth2000_copy(tmp_path / "kth2000", line, old, new, cut=cut)
    with pytest.raises(OutJobsError) as info:
        analyze([folder], tmp_path / "out")
    assert str(info.value).startswith(f"{folder / 'out_jobs.csv'}, {message}")
    assert not (tmp_path / "out").exists()
    main = _cli_main()
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(folder), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith(f"batreplay: error: {folder / 'out_jobs.csv'}, {message}")
