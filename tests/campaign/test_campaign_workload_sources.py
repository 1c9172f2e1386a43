"""Where a campaign's logs come from and what the report can say about them: a Parallel Workloads Archive name
in ``workload`` stands for the cached file (the instance id keeps the name as written), a Batsim JSON workload is
replayed rigidly and reported without the facts read from an SWF file, and a log with no recorded schedule gets a
note instead of a recorded-log row."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from conftest import GOLDEN, WORKLOADS
from rich.console import Console

from batreplay.campaign.executors import LocalExecutor
from batreplay.campaign.runner import run_campaign
from batreplay.campaign.spec import CampaignSpecError, load_campaign, make_instance
from batreplay.reports.log_facts import NoRecordedScheduleError, log_facts, recorded_log_metrics
from batreplay.reports.report import build_report
from batreplay.workloads.swf import SwfFormatError

QUIET = Console(quiet=True)
KTH_NAME = "KTH-SP2-1996-2.1-cln"
KTH = WORKLOADS / f"{KTH_NAME}.swf.gz"
JSON_WORKLOAD = GOLDEN / "delays" / "workload.json"  # 10 delay jobs on 2 nodes


def spec_text(workload: str, machine: str, tables: str, max_jobs: str = "") -> str:
    return f"""
[campaign]
name = "t"
output_root = "runs"
report_dir = "report"

[[logs]]
name = "log"
workload = "{workload}"
{machine}
{max_jobs}

[matrix]
schedulers = ["fcfs"]
platforms = ["recorded"]
replay_models = ["rigid"]

[report]
tables = {tables}
figures = ["submissions"]
"""


def cache_with_kth(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    (cache / "pwa").mkdir(parents=True)
    shutil.copyfile(KTH, cache / "pwa" / KTH.name)
    monkeypatch.setenv("BATREPLAY_CACHE", str(cache))
    return cache / "pwa" / KTH.name


def test_a_catalogue_name_stands_for_the_cached_file(tmp_path, monkeypatch):
    cached = cache_with_kth(tmp_path, monkeypatch)
    (tmp_path / "c.toml").write_text(spec_text(KTH_NAME, 'platform = "kth-sp2"', '["scheduling"]', "max_jobs = 20"))
    spec = load_campaign(tmp_path / "c.toml")
    log = spec.logs[0]
    assert log.workload == str(cached) and log.as_written == KTH_NAME
    # the id hashes the name as written, not the cache's location
    instance = spec.instances()[0]
    assert instance.params["workload"] == KTH_NAME
    assert make_instance(log, instance.experiment, instance.replay, 0, spec.engine).id == instance.id
    moved = tmp_path / "moved" / "pwa" / KTH.name
    moved.parent.mkdir(parents=True)
    shutil.copyfile(cached, moved)
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "moved"))
    assert [i.id for i in load_campaign(tmp_path / "c.toml").instances()] == [instance.id]
    # the run replays the file resolved when the spec was read, whatever the workers' environment
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "nothing-here"))
    summary = run_campaign(spec, executor=LocalExecutor(1), console=QUIET, show_progress=False)
    assert summary.complete, summary.outcomes
    result = build_report(spec)
    logs = pd.read_csv(result.csv["logs"])
    assert logs.to_dict("records")[0] | {"last_swf_line": 0} == {
        "log": "log", "workload": KTH_NAME, "last_swf_line": 0, "nb_jobs": 20, "nb_zero_runtime": 0,
        "zero_runtime": "drop", "treatment": "dropped"}
    assert f"| {KTH.name} | 20 |" in result.markdown.read_text()
    assert "recorded log" in set(pd.read_csv(result.csv["scheduling"])["experiment"])


def test_a_catalogue_name_not_in_the_cache_is_one_line_naming_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "empty-cache"))
    (tmp_path / "c.toml").write_text(spec_text(KTH_NAME, 'platform = "kth-sp2"', '["scheduling"]'))
    with pytest.raises(CampaignSpecError) as caught:
        load_campaign(tmp_path / "c.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'c.toml'}: [[logs]] #1, key 'workload': {KTH_NAME}: not in the cache")
    assert f"`batreplay fetch {KTH_NAME}`" in message and str(tmp_path / "empty-cache" / "pwa" / KTH.name) in message


def test_an_unknown_name_lists_the_catalogue(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    (tmp_path / "c.toml").write_text(spec_text("KTH-SP3", 'platform = "kth-sp2"', '["scheduling"]'))
    with pytest.raises(CampaignSpecError, match=r"key 'workload': 'KTH-SP3': no such file, nor a Parallel "
                                                r"Workloads Archive log name \(one of .*KTH-SP2-1996-2\.1-cln"):
        load_campaign(tmp_path / "c.toml")


def test_a_json_workload_is_reported_without_swf_facts(tmp_path):
    shutil.copyfile(JSON_WORKLOAD, tmp_path / "workload.json")
    (tmp_path / "c.toml").write_text(spec_text("workload.json", "nodes = 2", '["scheduler-comparison"]'))
    spec = load_campaign(tmp_path / "c.toml")
    assert spec.logs[0].is_json and spec.logs[0].workload == spec.logs[0].as_written == "workload.json"
    with pytest.raises(SwfFormatError):  # what the report used to call on every log
        log_facts(spec, spec.logs[0])
    summary = run_campaign(spec, executor=LocalExecutor(1), console=QUIET, show_progress=False)
    assert summary.complete, summary.outcomes
    result = build_report(spec)
    assert result.instances_found == result.instances_total == 1
    assert [n for n in result.notes if "Batsim JSON workload" in n] == [
        "log: workload.json is a Batsim JSON workload, not an SWF log: no count of the log's jobs, no recorded-log "
        "row and no wall clock (they come from the SWF file)"]
    # the Workload logs table: unknown counts as "–", the 10 jobs simulated
    assert "| log | workload.json | \u2013 | \u2013 | 10 |" in result.markdown.read_text()
    assert pd.read_csv(result.csv["logs"]).empty
    comparison = pd.read_csv(result.csv["scheduler-comparison"])
    assert len(comparison) == 1 and comparison["log"].tolist() == ["log"]


def test_a_log_without_recorded_schedule_gets_a_note(tmp_path):
    # Lublin's synthetic log has no recorded waits (all -1): no recorded-log row, and the report says why
    lublin = WORKLOADS / "lublin_256.swf.gz"
    (tmp_path / "c.toml").write_text(spec_text(lublin.as_posix(), "nodes = 256", '["scheduling"]'))
    spec = load_campaign(tmp_path / "c.toml")
    with pytest.raises(NoRecordedScheduleError, match=r"log: no recorded schedule in lublin_256\.swf\.gz: none of "
                                                      r"its \d+ jobs has submission, wait and run times >= 0"):
        recorded_log_metrics(spec, spec.logs[0])
    with pytest.raises(NoRecordedScheduleError, match=r"none of its 0 jobs up to SWF line 0"):
        recorded_log_metrics(spec, spec.logs[0], last_line=0)
    result = build_report(spec)  # nothing has run: the report is written anyway
    assert any("no recorded schedule in lublin_256.swf.gz" in n and n.endswith("no recorded-log row")
               for n in result.notes)
    assert "recorded log" not in set(pd.read_csv(result.csv["scheduling"]).get("experiment", pd.Series()))


def test_an_unknown_run_option_is_named_with_the_known_ones():
    from batreplay.run.spec import run_option

    assert run_option("zero_runtime").default == "drop" and run_option("res_source").default == "allocated"
    with pytest.raises(KeyError, match=r"no run option 'zero_runtimes'; known: workload, platform, scheduler"):
        run_option("zero_runtimes")
