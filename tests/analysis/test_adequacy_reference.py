"""The reference value P_ideal of the adequacy measure (Baranov et al. 2018, section VIII, Table I; issue 29, item 8).

Runs that differ only by the seed of their random job overheads (``--overheads``, ``--overhead-seed``) are two
repetitions of one experiment; ``batreplay analyze`` puts P between them, per first-k prefix, as P_ideal beside each
run's P against the log. Checked on the first 1,000 jobs of KTH-SP2: which pairs count as repetitions, the reference
table's values (those of the pair's own Table I), the side-by-side table, and the notes when there is no single
reference.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import WORKLOADS

from batreplay.analysis.analyze_command import analyze
from batreplay.analysis.run_adequacy import are_repetitions, setting_of
from batreplay.analysis.run_dir import load_run
from batreplay.run.runner import RunSpec, run

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Rigid EASY on the first 1,000 KTH-SP2 jobs: without overheads, with overheads of seeds 1 and 2, and with
    FCFS and seed 1 (another experiment)."""
    folder = tmp_path_factory.mktemp("reference")
    base = dict(workload=KTH, platform="kth-sp2", max_jobs=1000)
    made = {}
    for name, extra in (("plain", dict(scheduler="easy")),
                        ("s1", dict(scheduler="easy", overheads=20.0, overhead_seed=1)),
                        ("s2", dict(scheduler="easy", overheads=20.0, overhead_seed=2)),
                        ("fcfs-s1", dict(scheduler="fcfs", overheads=20.0, overhead_seed=1)),
                        ("fcfs-s2", dict(scheduler="fcfs", overheads=20.0, overhead_seed=2))):
        run(RunSpec.build(out_dir=folder / name, **base, **extra))
        made[name] = folder / name
    return made


def test_a_copy_of_the_platform_file_is_the_same_platform(runs, tmp_path):
    """Repetitions are matched on what they simulate: two copies of one platform file (a campaign writes one per
    log) are one platform; a platform file of other content is another experiment."""
    from batreplay.platforms.shipped import SHIPPED_PLATFORMS

    copy = tmp_path / "copy.xml"
    copy.write_bytes(SHIPPED_PLATFORMS["kth-sp2"].read_bytes())
    other = tmp_path / "other.xml"
    other.write_text(SHIPPED_PLATFORMS["kth-sp2"].read_text().replace("<!--", "<!-- another platform file -->\n<!--", 1)
                     if "<!--" in SHIPPED_PLATFORMS["kth-sp2"].read_text() else
                     SHIPPED_PLATFORMS["kth-sp2"].read_text() + "\n")
    for name, platform in (("copy", copy), ("other", other)):
        run(RunSpec.build(workload=KTH, platform=platform, scheduler="easy", max_jobs=1000, overheads=20.0,
                          overhead_seed=2, out_dir=tmp_path / name))
    first = load_run(runs["s1"])
    assert are_repetitions(first, load_run(tmp_path / "copy"))
    assert not are_repetitions(first, load_run(tmp_path / "other"))


def test_repetitions_differ_by_the_seed_of_their_overheads_only(runs):
    loaded = {name: load_run(path) for name, path in runs.items()}
    assert setting_of(loaded["plain"]) is None
    assert are_repetitions(loaded["s1"], loaded["s2"]) and are_repetitions(loaded["fcfs-s2"], loaded["fcfs-s1"])
    assert not are_repetitions(loaded["s1"], loaded["s1"])  # the same seed: the same run
    assert not are_repetitions(loaded["s1"], loaded["fcfs-s2"])  # another scheduler: another experiment
    assert not are_repetitions(loaded["plain"], loaded["s1"])


def test_p_ideal_is_the_repetitions_table_i_beside_each_runs_p_against_the_log(runs, tmp_path):
    out = tmp_path / "analysis"
    analyze([runs["plain"], runs["s1"], runs["s2"]], out, swf_log=KTH, names=["plain", "s1", "s2"])
    reference = pd.read_csv(out / "adequacy_reference.csv", dtype={"prefix": str})
    pairs = pd.read_csv(out / "adequacy_pairs.csv", dtype={"prefix": str})
    pair = pairs[(pairs["reference"] == "s1") & (pairs["model"] == "s2")]
    assert pairs.set_index(["reference", "model"])["repetition"].groupby(level=[0, 1]).first().to_dict() == {
        ("plain", "s1"): False, ("plain", "s2"): False, ("s1", "s2"): True}
    assert list(reference["prefix"]) == ["50", "100", "250", "500", "750", "1000", "all"]
    assert reference["p_ideal"].tolist() == pytest.approx(pair["measure"].tolist())
    assert reference["nb_different_jobs_ideal"].tolist() == pair["nb_different_jobs"].tolist()
    assert (reference["nb_repetition_pairs"] == 1).all() and reference["p_ideal"].iloc[-1] > 0
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert any("P_ideal from 1 pair(s) of repetitions of one experiment (runs s1, s2" in note for note in notes)
    page = (out / "report.html").read_text()
    assert "P_ideal, repetitions (s)" in page and "Reference value P_ideal" in page


def test_no_single_reference_is_said(runs, tmp_path):
    out = tmp_path / "two"
    analyze([runs["s1"], runs["s2"], runs["fcfs-s1"], runs["fcfs-s2"]], out, names=["a", "b", "c", "d"])
    assert not (out / "adequacy_reference.csv").exists()
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert any("repeat 2 experiments" in note for note in notes)
    out = tmp_path / "other"
    analyze([runs["s1"], runs["fcfs-s2"]], out, names=["s1", "fcfs-s2"])
    assert not (out / "adequacy_reference.csv").exists()
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert any("no two of the 2 runs with random overheads are repetitions" in note and "differ in scheduler" in note
               for note in notes)
    out = tmp_path / "one"
    analyze([runs["plain"], runs["s1"]], out, names=["plain", "s1"])
    assert not (out / "adequacy_reference.csv").exists()
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert any("one run has random overheads" in note for note in notes)
