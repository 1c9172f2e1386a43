"""The label a user gives a run (issue 30, part 2, item 1): a run option declared once (``label``), so that
``batreplay run --label`` and the web GUI's form set it and ``run.json`` keeps it; a one-line error naming the option
for a label that is no short line of text; and nothing of what is simulated depends on it (the same
``out_jobs.csv``; two runs with random overheads that differ by their labels and seeds are still repetitions of one
experiment, :func:`batreplay.analysis.run_adequacy.are_repetitions`).

Real runs of the first 200 KTH-SP2 jobs.
"""

from __future__ import annotations

import json

import pytest
from conftest import WORKLOADS

from batreplay.analysis.run_adequacy import are_repetitions, setting_of
from batreplay.analysis.run_dir import load_run
from batreplay.cli import main
from batreplay.options import OptionError, text_problem
from batreplay.run.runner import run
from batreplay.run.spec import MAX_LABEL_CHARS, RunSpec, RunSpecError, run_option

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")
EXPECTED = f"label (--label) must be one line of text of 1 to {MAX_LABEL_CHARS} characters (or left out)"


def _run_args(out, *extra: str) -> list[str]:
    return ["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "easy", "--max-jobs", "200",
            "--out", str(out), "--quiet", *extra]


def spec_of(folder) -> dict:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))["spec"]


def test_the_label_is_a_flag_kept_in_run_json_and_changes_nothing_of_the_simulation(tmp_path, capsys):
    assert main(_run_args(tmp_path / "labelled", "--label", "  EASY, the baseline [200 jobs]  ")) == 0
    assert main(_run_args(tmp_path / "plain")) == 0
    assert spec_of(tmp_path / "labelled")["label"] == "EASY, the baseline [200 jobs]"  # (blanks around removed)
    assert "label" not in spec_of(tmp_path / "plain")  # no label: run.json as before the option existed
    for name in ("out_jobs.csv", "metrics.json"):  # (out_schedule.csv holds the wall time)
        assert (tmp_path / "labelled" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name
    loaded = RunSpec.from_dict(spec_of(tmp_path / "labelled"))
    assert loaded.label == "EASY, the baseline [200 jobs]" and loaded.to_dict() == spec_of(tmp_path / "labelled")
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (f"--label TEXT a name for the run, kept in run.json and shown by the web GUI's Runs page instead of its "
            f"id; it changes nothing of what is simulated (one line, at most {MAX_LABEL_CHARS} characters; default: "
            "no label)") in help_text


@pytest.mark.parametrize("label, problem", [
    ("first\nsecond", "character 6 is U+000A, a line break"),
    ("tab\there", "character 4 is U+0009, a control character"),
    ("\x1b[31mred", "character 1 is U+001B, a control character"),
    ("abc\u202edcba", "character 4 is U+202E, an invisible format character"),  # (right-to-left override)
    ("a\u2028b", "character 2 is U+2028, a line break"),
    ("   ", "it is blank (leave the option out for none)"),
    ("x" * (MAX_LABEL_CHARS + 1), f"it has {MAX_LABEL_CHARS + 1} characters"),
])
def test_a_label_that_is_no_short_line_of_text_is_refused_in_one_line(label, problem, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(_run_args(tmp_path / "out", "--label", label))
    assert capsys.readouterr().err.strip() == f"batreplay: error: {EXPECTED}: {problem}"
    assert not (tmp_path / "out").exists()
    with pytest.raises(RunSpecError) as caught:
        RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=tmp_path / "out", label=label)
    assert str(caught.value) == f"{EXPECTED}: {problem}"


def test_a_label_of_the_longest_length_and_of_any_script_is_kept():
    for label in ("x" * MAX_LABEL_CHARS, "EASY \u2192 SJF, \u00e9t\u00e9 2024, \u8a66\u9a13"):
        assert text_problem(label, MAX_LABEL_CHARS) is None
        assert run_option("label").check(label) == label
    with pytest.raises(OptionError, match="got 3"):
        run_option("label").check(3)


def test_runs_that_differ_by_their_labels_and_overhead_seeds_are_repetitions_of_one_experiment(tmp_path):
    base = dict(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=200, overheads=20.0)
    run(RunSpec.build(out_dir=tmp_path / "s1", overhead_seed=1, label="first repetition", **base))
    run(RunSpec.build(out_dir=tmp_path / "s2", overhead_seed=2, **base))
    first, second = load_run(tmp_path / "s1"), load_run(tmp_path / "s2")
    assert first.spec["label"] == "first repetition" and "label" not in setting_of(first)
    assert are_repetitions(first, second) and are_repetitions(second, first)
