"""``batreplay analyze`` as a reader sees it: runs of the KTH-SP2 log with the recorded and the doubled walltimes
(``--walltime-factor 2``, Madon et al. 2024's setting), the adequacy table skipped with its reason, units in every
heading, the metric sections, the Gantt window, the anomaly notes said once, and the progress callback."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from conftest import WORKLOADS
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.analysis.analyze_command import PROGRESS_STEPS, analyze
from batreplay.analysis.analyze_report import merge_run_notes
from batreplay.analysis.run_adequacy import RequestedTimesDifferError, adequacy_against_log
from batreplay.analysis.run_dir import load_run
from batreplay.run.runner import RunSpec, run
from batreplay.workloads.swf import read_swf

KTH_LOG = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
NB_JOBS = 400


class _Page(HTMLParser):
    """Headings (h2, h3), table header cells, and each table's parent element."""

    def __init__(self) -> None:
        super().__init__()
        self.h2: list[str] = []
        self.h3: list[str] = []
        self.header_cells: list[str] = []
        self.table_parents: list[dict] = []
        self._stack: list[tuple[str, dict]] = []
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.table_parents.append(self._stack[-1][1] if self._stack else {})
        if tag in ("h2", "h3", "th"):
            self._text = []
        if tag not in ("meta", "img", "br"):
            self._stack.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag in ("h2", "h3", "th") and self._text is not None:
            {"h2": self.h2, "h3": self.h3, "th": self.header_cells}[tag].append("".join(self._text))
            self._text = None
        if self._stack and self._stack[-1][0] == tag:
            self._stack.pop()

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)


def page_of(report) -> _Page:
    page = _Page()
    page.feed(report.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def kth_runs(tmp_path_factory):
    """EASY on the first 400 KTH-SP2 jobs (rigid replay) with the recorded requested times and with walltimes
    raised to 2 x run time, and a feedback replay of the same jobs."""
    if not KTH_LOG.is_file():
        pytest.skip("KTH-SP2 log not available")
    root = tmp_path_factory.mktemp("runs")
    made = {}
    for name, options in (("easy", {}), ("easy-wf2", {"walltime_factor": 2.0}),
                          ("easy-a60", {"replay": "feedback", "sessions": "arrival:60"})):
        run(RunSpec.build(workload=KTH_LOG, platform="kth-sp2", scheduler="easy", out_dir=root / name,
                          max_jobs=NB_JOBS, **options))
        made[name] = root / name
    return made


@pytest.fixture(scope="module")
def analysed(kth_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("analysis")
    calls = []
    report = analyze([kth_runs["easy"], kth_runs["easy-wf2"], kth_runs["easy-a60"]], out, swf_log=KTH_LOG,
                     on_progress=lambda step, done, total: calls.append((step, done, total)))
    return out, report, calls


# ---------------------------------------------------------------- item 5: changed walltimes and the log


def test_walltime_factor_run_alone_writes_everything_but_the_adequacy_table(kth_runs, tmp_path):
    out = tmp_path / "out"
    report = analyze([kth_runs["easy-wf2"]], out, swf_log=KTH_LOG)
    for name in ("metrics.csv", "metrics.json", "per_user.csv", "lateness_per_user.csv", "windows.csv",
                 "report.html"):
        assert (out / name).is_file(), name
    assert not (out / "adequacy_vs_log.csv").exists()
    for stem in ("submissions", "cumulative_jobs", "user_mean_lateness", "utilisation_queue", "gantt"):
        assert (out / "figures" / f"{stem}.png").is_file(), stem
    metrics = pd.read_csv(out / "metrics.csv")
    assert metrics["nb_jobs"].tolist() == [NB_JOBS] and "adequacy_vs_log" not in metrics.columns
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    (why,) = [n for n in notes if "not compared with the log" in n]
    assert "requested times (walltimes) of" in why and "walltime_factor = 2" in why
    assert "Baranov et al. 2018 (eq. 2) compares two runs of the same job stream" in why
    assert "--adequacy-requested-times log" in why
    page = page_of(report)
    assert "Runs not compared with the log" in page.h3
    assert "walltime_factor = 2" in report.read_text(encoding="utf-8")


def test_mixed_runs_compare_only_those_of_the_logs_job_stream(analysed):
    out, _, _ = analysed
    table = pd.read_csv(out / "adequacy_vs_log.csv", dtype={"prefix": str})
    assert table["run"].unique().tolist() == ["easy"]
    assert {"baranov2018_p", "baranov2018_nb_different_jobs"} <= set(table.columns)
    assert not [c for c in table.columns if "seed" in c]
    metrics = pd.read_csv(out / "metrics.csv").set_index("run")
    assert not math.isnan(metrics.loc["easy", "adequacy_vs_log"])
    assert metrics[["adequacy_vs_log"]].loc[["easy-wf2", "easy-a60"]].isna().all().all()


def test_log_requested_times_compare_a_run_with_changed_walltimes(kth_runs):
    """With the log's requested times for both streams, P of the walltime-factor-2 run is the RMS difference of
    its residence times (turnaround) from the recorded wait + run time, as computed from the files directly."""
    log = read_swf(KTH_LOG)
    wf2 = load_run(kth_runs["easy-wf2"])
    with pytest.raises(RequestedTimesDifferError, match=r"first: job 16, 3600 s in the log"):
        adequacy_against_log(wf2, log)
    table, notes = adequacy_against_log(wf2, log, requested_times="log")
    assert any("the log's requested times are used for both streams" in n for n in notes)
    jobs = pd.read_csv(kth_runs["easy-wf2"] / "out_jobs.csv")
    both = jobs.merge(log.jobs, on="job_id")
    assert len(both) == len(jobs) == NB_JOBS
    recorded = (both["wait_time"] + both["run_time"]).to_numpy(dtype=float)
    expected = math.sqrt(float(np.mean((both["turnaround_time"].to_numpy() - recorded) ** 2)))
    assert table.set_index("prefix").loc["all", "measure"] == pytest.approx(expected)
    with pytest.raises(ValueError, match="requested_times must be 'run' or 'log'"):
        adequacy_against_log(wf2, log, requested_times="both")


def test_analyze_with_log_requested_times(kth_runs, tmp_path):
    out = tmp_path / "out"
    analyze([kth_runs["easy"], kth_runs["easy-wf2"]], out, swf_log=KTH_LOG, adequacy_requested_times="log")
    table = pd.read_csv(out / "adequacy_vs_log.csv")
    assert table["run"].unique().tolist() == ["easy", "easy-wf2"]
    document = json.loads((out / "metrics.json").read_text())
    assert document["parameters"]["adequacy_requested_times"] == "log"
    with pytest.raises(ValueError, match="adequacy_requested_times must be 'run' or 'log'"):
        analyze([kth_runs["easy"]], out, adequacy_requested_times="mine")


# ---------------------------------------------------------------- what the page shows


def test_p_stays_in_seconds_in_every_adequacy_table(kth_runs, tmp_path):
    """EASY and FCFS replay the same job stream: P between them (Table I of the pair) and P of each against the
    log are shown in seconds, Baranov et al. 2018's unit, even where other times of that size are in hours."""
    fcfs = tmp_path / "fcfs"
    run(RunSpec.build(workload=KTH_LOG, platform="kth-sp2", scheduler="fcfs", out_dir=fcfs, max_jobs=NB_JOBS))
    out = tmp_path / "out"
    report = analyze([kth_runs["easy"], fcfs], out, swf_log=KTH_LOG)
    pairs = pd.read_csv(out / "adequacy_pairs.csv", dtype={"prefix": str})
    metrics = pd.read_csv(out / "metrics.csv")
    # large enough that a readable time unit would be hours
    assert pairs["measure"].max() > 3600 and metrics["adequacy_vs_log"].max() > 3600
    page = page_of(report)
    assert "Between runs of the same job stream (Baranov et al. 2018, Table I)" in page.h3
    p_cells = [cell for cell in page.header_cells if re.search(r"\bP\b", cell)]
    assert "P (s)" in p_cells and all(cell.endswith("(s)") for cell in p_cells), p_cells
    text = report.read_text(encoding="utf-8")
    assert "adequacy measure P against the log (s)" in text
    assert not re.search(r"\bP[^<]*\((h|days|min)\)", text)


def test_sections_units_and_scrolling_tables(analysed):
    _, report, _ = analysed
    page = page_of(report)
    assert page.h2 == ["Runs", "Jobs", "Scheduling", "Utilisation", "Adequacy (Baranov et al. 2018)", "Lateness",
                       "Figures", "Notes"]
    text = report.read_text(encoding="utf-8")
    # times in the unit that suits them, stated in the label; 400 KTH jobs last about 5 days
    for label in ("makespan (days)", "mean waiting time (", "max waiting time (", "span length (days)",
                  "mean lateness (", "busy node time (node-"):
        assert label in text, label
    assert "makespan (s)" not in text
    # every time column of every table names its unit
    for cell in page.header_cells:
        if re.search(r"\bP\b|first submission|span|lateness|waiting time \(|turnaround", cell) and "jobs" not in cell:
            assert re.search(r"\((s|h|days)\)$", cell), cell
    # every table scrolls sideways in its own box instead of widening the page
    assert page.table_parents and all(parent.get("class") == "table-scroll" for parent in page.table_parents)
    assert "overflow-x: auto" in text
    # papers are cited by author and year, never by an internal label
    assert "seed" not in text.lower()
    assert "Baranov et al. 2018, Table I: P (s)" in page.header_cells


def test_anomaly_notes_said_once_with_per_run_differences(analysed):
    out, _, _ = analysed
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    swf = [n for n in notes if "SWF anomalies in" in n]
    assert len(swf) == 1 and not swf[0].startswith("run")  # the same for the three runs: said once, unprefixed
    (workload,) = [n for n in notes if "Batsim workload from" in n]
    # only the walltime-factor run raised walltimes; only the others have walltimes below run times
    assert re.search(r"changed walltime_raised_to_factor_x_run_time: \d+ .*\[run easy-wf2\]", workload)
    assert re.search(r"note walltime_below_run_time: \d+ .*\[runs easy, easy-a60\]", workload)


def test_merge_run_notes_by_hand():
    merged = merge_run_notes({
        "a": ["SWF anomalies in x: 10 jobs\n  zero: 2", "no jobs.csv: no lateness"],
        "b": ["SWF anomalies in x: 10 jobs\n  zero: 3"],
    })
    assert merged == ["SWF anomalies in x: 10 jobs\n  zero: 2 [run a]\n  zero: 3 [run b]",
                      "run a: no jobs.csv: no lateness"]
    assert merge_run_notes({"a": ["one"]}) == ["run a: one"]
    assert merge_run_notes({"a": [], "b": []}) == []


def test_merge_run_notes_keeps_repeated_lines_and_separate_notes():
    # a line a note repeats is kept as many times
    assert merge_run_notes({"b": ["y: z\n  - same\n  - same"]}) == ["run b: y: z\n  - same\n  - same"]
    # two notes of one run with the same text before ":" stay two notes; the one both runs have is said once
    merged = merge_run_notes({"a": ["H: 1\n  x", "H: 2\n  y"], "b": ["H: 1\n  x"]})
    assert merged == ["H: 1\n  x", "run a: H: 2\n  y"]
    # a line repeated in one run only is tagged with that run the second time
    merged = merge_run_notes({"a": ["H: 1\n  x\n  x"], "b": ["H: 1\n  x"]})
    assert merged == ["H: 1\n  x\n  x [run a]"]
    # a note a run says twice is said twice
    assert merge_run_notes({"a": ["same", "same"], "b": []}) == ["run a: same", "run a: same"]


def test_merge_run_notes_keeps_each_runs_line_order():
    merged = merge_run_notes({"a": ["H: x\n p\n q"], "b": ["H: y\n p\n q"]})
    assert merged == ["H: x [run a]\nH: y [run b]\n p\n q"]


def _notes_back(merged: list[str], runs: list[str]) -> dict[str, list[str]]:
    """Each run's notes as :func:`merge_run_notes` says them: the notes concerning the run (all runs when
    unprefixed), each with its lines untagged or tagged with the run."""
    back: dict[str, list[str]] = {run: [] for run in runs}
    for note in merged:
        concerned = runs
        if note.startswith(("run ", "runs ")):
            head, note = note.split(": ", 1)
            concerned = head.split(" ", 1)[1].split(", ")
        for run in concerned:
            lines = []
            for line in note.split("\n"):
                text, tag = (line.rsplit(" [", 1) + [""])[:2] if line.endswith("]") else (line, "")
                if not tag or run in tag.removesuffix("]").split(" ", 1)[1].split(", "):
                    lines.append(text)
            back[run].append("\n".join(lines))
    return back


_LINE = st.text(alphabet="xy: -", max_size=4)
_NOTE = st.lists(_LINE, min_size=1, max_size=4).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.lists(_NOTE, max_size=4), min_size=1))
def test_merge_run_notes_loses_nothing(per_run):
    """Every run's notes can be read back from the merged ones: the same notes, each with the same lines as many
    times (order within a note may differ only where two runs' notes order shared lines differently)."""
    runs = list(per_run)
    back = _notes_back(merge_run_notes(per_run), runs)
    for run, notes in per_run.items():
        assert sorted(sorted(n.split("\n")) for n in back[run]) == sorted(sorted(n.split("\n")) for n in notes)
    if len(runs) == 1:
        assert back == per_run  # one run: its notes as they are


def test_gantt_window_in_days(kth_runs, tmp_path):
    out = tmp_path / "out"
    report = analyze([kth_runs["easy"]], out, gantt_window=(0.5, 0.25))
    assert "Gantt chart of [12, 18] h of simulated time (from day 0.5, 0.25 days long" in report.read_text()
    with pytest.raises(ValueError, match="gantt window: length must be > 0 days"):
        analyze([kth_runs["easy"]], out, gantt_window=(1.0, 0.0))


def test_progress_reports_every_step_in_order(analysed):
    out, _, calls = analysed
    steps = list(dict.fromkeys(step for step, _, _ in calls))
    assert steps == list(PROGRESS_STEPS)
    for step in steps:
        mine = [(done, total) for s, done, total in calls if s == step]
        assert mine[0][0] == 0 and mine[-1][0] == mine[-1][1]
        assert [done for done, _ in mine] == sorted(done for done, _ in mine)
    assert [(d, t) for s, d, t in calls if s == "reading runs"][-1] == (4, 4)  # three runs and the log
    assert [t for s, _, t in calls if s == "drawing figures"][0] == len(list((out / "figures").glob("*.png")))
