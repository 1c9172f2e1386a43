"""The Runs page's rows and table (issue 30, part 2): what did I run?

On a runs folder of real runs of the first 200 KTH-SP2 jobs: two runs of the command line's path (one labelled, with
a scheduler option away from its default), a failed run's record, and a small campaign run as the Campaigns page
runs it (``<runs>/campaigns/tiny/``: EASY on the recorded platform and on its speed-x2 variant, and a failed FCFS
instance). Checked: the ids of campaign instances and every refusal of :func:`run_directory` (names, ``..``, hidden
names, links on the way or out of the runs folder, unfinished instances); the rows' cells in words (label, jobs of
max jobs, platform with its variant, scheduler with its options), failed rows with their workload and platform;
the metrics in the report's units; the campaign filter; and the parameters that differ between runs.
"""

from __future__ import annotations

import json
import shutil

import pytest
from rich.console import Console

from batreplay.analysis.metric_registry import get_metric
from batreplay.run.isolated import write_failure_record
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from batreplay.ui.launcher import DONE, FAILED
from batreplay.ui.run_index import UNREADABLE, id_parts, list_runs, run_directory, run_parameters
from batreplay.ui.runs_table import (
    HIDDEN,
    NO_CAMPAIGN,
    campaign_choices,
    differing_parameters,
    hidden_columns,
    jobs_text,
    markdown_text,
    of_campaign,
    platform_text,
    runs_table,
)
from conftest import WORKLOADS
from ui_server import campaign_text

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")
LABEL = "EASY *baseline* [200 jobs](javascript:alert(1))"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The runs folder (see the module docstring); returns it with the instances' ids by name (``easy``,
    ``easy-x2``, ``failed``)."""
    from batreplay.campaign.executors import LocalExecutor
    from batreplay.campaign.runner import run_campaign
    from batreplay.campaign.spec import load_campaign
    from batreplay.campaign.worker import task_for
    from batreplay.campaign.worker import write_failure_record as write_instance_failure

    root = tmp_path_factory.mktemp("index")
    folder = root / "runs"
    base = dict(workload=KTH, platform="kth-sp2", max_jobs=200)
    run(RunSpec.build(out_dir=folder / "kth-easy", scheduler="easy", label=LABEL,
                      scheduler_options={"node_selection": "best-fit", "seed": 0}, **base))
    run(RunSpec.build(out_dir=folder / "kth-fcfs", scheduler="fcfs", walltime_factor=3.0, **base))
    gone = RunSpec.build(out_dir=folder / "kth-gone", scheduler="easy", **{**base, "platform": root / "gone.xml"})
    write_failure_record(folder / "kth-gone", "FileNotFoundError", "gone.xml: no such platform file",
                         spec=gone.to_dict())
    (root / "tiny.toml").write_text(campaign_text("tiny", KTH, 200, platforms=("recorded", "speed-x2")))
    spec = load_campaign(root / "tiny.toml", output_root=folder / "campaigns" / "tiny")
    summary = run_campaign(spec, executor=LocalExecutor(1), only="*easy*", console=Console(quiet=True),
                           show_progress=False)
    assert summary.complete, summary.outcomes
    ids = {("easy-x2" if "speed-x2" in instance.id else "easy") if "easy" in instance.id else
           ("failed" if "speed-x2" in instance.id else "fcfs"): instance.id for instance in spec.instances()}
    failed = next(instance for instance in spec.instances() if instance.id == ids["failed"])
    write_instance_failure(task_for(failed, spec), "ValueError", "boom: a failure of the test")
    return folder, ids


def test_an_instance_has_an_id_of_three_plain_parts_and_opens_its_folder(runs):
    folder, ids = runs
    run_id = f"campaigns/tiny/{ids['easy']}"
    assert id_parts(run_id) == ("campaigns", "tiny", ids["easy"])
    assert run_directory(folder, run_id) == folder / "campaigns" / "tiny" / ids["easy"]
    assert run_directory(folder, "kth-easy") == folder / "kth-easy"


@pytest.mark.parametrize("name", [
    "campaigns", "campaigns/tiny", "campaigns/tiny/{easy}/out_jobs.csv", "campaigns/tiny/../tiny/{easy}",
    "campaigns/tiny/..", "campaigns/../kth-easy", "campaigns/../../x", "campaigns/.tiny/{easy}",
    "campaigns/tiny/.{easy}", "campaigns/tiny/{easy}\\", "campaigns\\tiny\\{easy}", "campaigns/tiny/{easy}\0",
    "/campaigns/tiny/{easy}", "campaigns//tiny/{easy}", "campaigns/tiny/{easy}/", "campaigns/tiny/platforms",
    "campaigns/tiny/{failed}", "campaigns/tiny/{fcfs}", "campaigns/ti..ny/{easy}", "other/tiny/{easy}",
    "kth-gone", "..", ".", "", "kth-easy/..", "../runs/kth-easy",
])
def test_run_ids_that_name_no_finished_run_of_the_app_open_nothing(runs, name):
    folder, ids = runs
    assert run_directory(folder, name.format(**ids)) is None


@pytest.mark.parametrize("value", [None, 3, ["campaigns", "tiny"], {"a": 1}])
def test_a_run_id_that_is_no_text_opens_nothing(runs, value):
    assert run_directory(runs[0], value) is None and id_parts(value) is None


def _copy(runs, tmp_path):
    """A copy of the runs folder (to change), and the easy instance's folder in it."""
    folder, ids = runs
    copy = tmp_path / "runs"
    shutil.copytree(folder, copy, symlinks=True)
    return copy, copy / "campaigns" / "tiny" / ids["easy"]


def test_links_on_the_way_to_an_instance_or_out_of_the_runs_folder_are_refused(runs, tmp_path):
    ids = runs[1]
    copy, instance = _copy(runs, tmp_path)
    (copy / "campaigns" / "alias").symlink_to(copy / "campaigns" / "tiny")  # a campaign folder that is a link
    (copy / "campaigns" / "tiny" / "linked").symlink_to(instance)  # an instance folder that is a link
    leaky = instance.with_name(ids["easy"] + "x")
    shutil.copytree(instance, leaky)
    (tmp_path / "secret.csv").write_bytes((leaky / "out_jobs.csv").read_bytes())
    (leaky / "out_jobs.csv").unlink()
    (leaky / "out_jobs.csv").symlink_to(tmp_path / "secret.csv")  # a file the app reads, leading out
    assert run_directory(copy, f"campaigns/tiny/{ids['easy']}") == instance
    for name in (f"campaigns/alias/{ids['easy']}", "campaigns/tiny/linked", f"campaigns/tiny/{ids['easy']}x"):
        assert run_directory(copy, name) is None, name
    rows = {row["run_id"]: row for row in list_runs(copy)}
    assert not any(name.startswith(("campaigns/alias/", "campaigns/tiny/linked")) for name in rows)
    assert rows[f"campaigns/tiny/{ids['easy']}x"]["status"] == UNREADABLE
    assert "out_jobs.csv is a link leading out of the runs folder" in rows[f"campaigns/tiny/{ids['easy']}x"]["error"]
    outside = tmp_path / "elsewhere"
    shutil.move(copy / "campaigns", outside)
    (copy / "campaigns").symlink_to(outside)  # the campaigns' folder itself, a link leading out
    assert run_directory(copy, f"campaigns/tiny/{ids['easy']}") is None
    assert not any(row["run_id"].startswith("campaigns/") for row in list_runs(copy))


def test_an_unfinished_instance_is_not_a_run(runs, tmp_path):
    """A run directory without ``instance.json`` is an instance under way or interrupted (the campaign redoes it)."""
    ids = runs[1]
    copy, instance = _copy(runs, tmp_path)
    (instance / "instance.json").unlink()
    assert run_directory(copy, f"campaigns/tiny/{ids['easy']}") is None
    assert f"campaigns/tiny/{ids['easy']}" not in {row["run_id"] for row in list_runs(copy)}


def test_every_run_is_listed_with_its_choices_in_words(runs):
    folder, ids = runs
    rows = {row["run_id"]: row for row in list_runs(folder)}
    easy, x2, failed = (f"campaigns/tiny/{ids[name]}" for name in ("easy", "easy-x2", "failed"))
    assert set(rows) == {"kth-easy", "kth-fcfs", "kth-gone", easy, x2, failed}
    cells = ("status", "label", "campaign", "workload", "platform", "scheduler", "user_model", "engine", "seeds")
    shown = {name: tuple(rows[name].get(key) for key in cells) for name in rows}
    assert shown["kth-easy"] == (DONE, LABEL, None, KTH.name, "kth-sp2", "easy (node_selection=best-fit)", "rigid",
                                 "embedded", "")
    assert shown["kth-fcfs"] == (DONE, None, None, KTH.name, "kth-sp2", "fcfs", "rigid", "embedded", "")
    assert shown["kth-gone"] == (FAILED, None, None, KTH.name, "gone.xml", "easy", "rigid", "embedded", "")
    assert shown[easy] == (DONE, None, "tiny", KTH.name, "kth-sp2", "easy", "rigid", "embedded", "seed 0")
    assert shown[x2] == (DONE, None, "tiny", KTH.name, "kth-sp2 (speed-x2)", "easy", "rigid", "embedded", "seed 0")
    assert shown[failed] == (FAILED, None, "tiny", KTH.name, "kth-sp2 (speed-x2)", "fcfs", "rigid", "embedded",
                             "seed 0")
    assert rows[failed]["error"] == "boom: a failure of the test"
    assert rows["kth-gone"]["error"] == "gone.xml: no such platform file"
    assert rows["kth-fcfs"]["options"] == "walltime_factor=3" and rows["kth-easy"]["options"] == ""
    metrics = json.loads((folder / easy / "metrics.json").read_text())
    assert rows[easy]["makespan"] == metrics["makespan"] and rows[easy]["nb_jobs"] == metrics["nb_jobs"] == 200


def test_the_table_shows_labels_jobs_of_max_jobs_and_the_metrics_in_the_reports_units(runs):
    folder, ids = runs
    rows = list_runs(folder)
    table = runs_table(rows)
    data = {row["id"]: row for row in table.data}
    makespans = [row["makespan"] for row in rows if row.get("makespan") is not None]
    unit = get_metric("makespan").display_unit(makespans)
    titles = {column["id"]: column["name"] for column in table.columns}
    assert titles["makespan"] == f"makespan ({unit})" and unit != "s"  # (200 KTH-SP2 jobs: days)
    assert titles["label"] == "run" and titles["jobs"] == "jobs" and titles["utilisation"] == "utilisation"
    metrics = json.loads((folder / "kth-easy" / "metrics.json").read_text())
    assert data["kth-easy"]["makespan"] == pytest.approx(metrics["makespan"] / get_metric("makespan").divisor(unit))
    assert data["kth-easy"]["label"] == ("[EASY \\*baseline\\* \\[200 jobs\\]\\(javascript\\:alert\\(1\\)\\)]"
                                         "(/runs/kth-easy)")
    easy = f"campaigns/tiny/{ids['easy']}"
    assert data[easy]["label"] == f"[{markdown_text(ids['easy'])}](/runs/{easy})"  # (no label: the instance's id)
    assert data["kth-gone"]["label"] == "kth\\-gone" and data["kth-gone"]["makespan"] is None  # (no link)
    assert {data[name]["jobs"] for name in data} == {"200 of 200 max", "200 max"}
    tips = dict(zip([row["id"] for row in table.data], table.tooltips))
    assert tips["kth-gone"]["status"]["value"] == "gone.xml: no such platform file" and tips["kth-easy"] == {}
    assert hidden_columns("nonsense") == list(HIDDEN) and "run_id" not in hidden_columns(["run_id"])


def test_runs_are_filtered_by_campaign(runs):
    rows = list_runs(runs[0])
    assert campaign_choices(rows) == [{"label": "runs of no campaign", "value": NO_CAMPAIGN},
                                      {"label": "campaign tiny", "value": "tiny"}]
    assert {row["run_id"] for row in of_campaign(rows, NO_CAMPAIGN)} == {"kth-easy", "kth-fcfs", "kth-gone"}
    assert all(row["run_id"].startswith("campaigns/tiny/") for row in of_campaign(rows, "tiny"))
    assert len(of_campaign(rows, "tiny")) == 3 and of_campaign(rows, None) == rows == of_campaign(rows, ["x"])


def test_the_parameters_that_differ_between_runs_and_only_those(runs):
    folder, ids = runs
    easy, x2, failed = (f"campaigns/tiny/{ids[name]}" for name in ("easy", "easy-x2", "failed"))
    described = {name: run_parameters(folder, name) for name in ("kth-easy", "kth-fcfs", easy, x2, failed)}
    platform_file = json.loads((folder / x2 / "run.json").read_text())["spec"]["platform"]
    assert differing_parameters([described[easy], described[x2]]) == [("platform", ["kth-sp2", platform_file])]
    assert differing_parameters([described["kth-easy"], described["kth-fcfs"]]) == [
        ("scheduler", ["easy", "fcfs"]), ("scheduler_options.node_selection", ["best-fit", "(not set)"]),
        ("scheduler_options.seed", ["0", "(not set)"]), ("walltime_factor", ["-", "3"])]
    relabelled = {**described["kth-easy"], "label": "another", "out_dir": "elsewhere"}
    assert differing_parameters([described["kth-easy"], relabelled]) == []  # (the label, the folder: aside)
    assert described[failed]["scheduler"] == "fcfs" and described[easy]["campaign"] == "tiny"
    assert run_parameters(folder, "kth-gone")["platform"].endswith("gone.xml")
    for name in ("nope", "campaigns/tiny/nope", "campaigns/../kth-easy", None):
        assert run_parameters(folder, name) is None


@pytest.mark.parametrize("args, expected", [
    ((28467, None), "28,467 (whole log)"), ((2000, 2000), "2,000 of 2,000 max"), ((None, 500), "500 max"),
    ((None, None), "whole log"), ((300, None), "300 (whole log)"),
])
def test_jobs_are_said_against_the_max_jobs_asked_for(args, expected):
    assert jobs_text(*args) == expected
    assert jobs_text(3000, None, drawn=True) == "3,000 drawn" and jobs_text(5, None, whole="whole workload") == \
        "5 (whole workload)"


@pytest.mark.parametrize("platform, variant, expected", [
    ("kth-sp2", None, "kth-sp2"), ("/x/my-cluster.xml", None, "my-cluster.xml"),
    ("/runs/platforms/kth-sp2-nodes-x2-0123456789ab.xml", None, "kth-sp2 (nodes-x2)"),
    ("/runs/platforms/types-0123456789ab-speed-div2-abcdefabcdef.xml", None, "types (speed-div2)"),
    ("/runs/platforms/types-0123456789ab.xml", None, "types"),
    ("/out/platforms/kth-sp2__speed-d2.xml", None, "kth-sp2 (speed-d2)"),
    ("kth-sp2", "recorded", "kth-sp2"), ({"nodes": 64, "speed": 1e9}, "nodes-x2", "64 nodes (nodes-x2)"),
    ({"node_types": "expe/types.toml"}, None, "types.toml (node types)"),
])
def test_a_platform_is_named_with_its_variant(platform, variant, expected):
    assert platform_text(platform, variant) == expected


def test_the_runs_page_says_what_the_ticked_runs_differ_in(runs, tmp_path):
    from dash import html
    from dash_tree import components

    from batreplay.ui.pages import runs_differences

    folder, ids = runs
    shown = runs_differences(folder, ["kth-easy", "kth-fcfs", {"not": "a run id"}, "kth-easy", "nope"])
    (table,) = [item for item in components(shown) if getattr(item, "id", None) == "differences-table"]
    assert [column["name"] for column in table.columns] == ["parameter", LABEL, "kth-fcfs"]
    assert table.data[0] == {"parameter": "scheduler", "run-0": "easy", "run-1": "fcfs"}
    notes = [item.children for item in components(shown) if isinstance(item, html.P)]
    assert notes == ["No description to compare (waiting, running or unreadable): nope"]
    assert runs_differences(folder, ["kth-easy"]) == [] == runs_differences(folder, "kth-easy")
    copy = tmp_path / "runs"
    shutil.copytree(folder / "kth-easy", copy / "again")  # the same run in another folder
    shutil.copytree(folder / "kth-easy", copy / "kth-easy")
    (same,) = [item for item in components(runs_differences(copy, ["kth-easy", "again"]))
               if getattr(item, "id", None) == "runs-same"]
    assert same.children == "The 2 runs have the same parameters (force, label, out_dir, timeout aside)."
