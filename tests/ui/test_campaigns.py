"""The Campaigns page's model: campaign files, what they may read, where they write, and forged names."""

from __future__ import annotations

import time

import pytest

from batreplay.ui.campaigns import Campaigns
from batreplay.ui.sandbox import Sandbox, SandboxError
from conftest import REPO_ROOT, WORKLOADS
from ui_server import write_campaigns

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")


@pytest.fixture
def campaigns(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "campaigns"
    write_campaigns(folder, tmp_path / "outside.swf")
    text = (folder / "tiny.toml").read_text()
    (folder / "foreign-scheduler.toml").write_text(  # reads a scheduler file of a folder not allowed
        text.replace('name = "tiny"', 'name = "foreign"')
        .replace('schedulers = ["easy", "fcfs"]', f'schedulers = ["{REPO_ROOT / "schedulers" / "fcfs.py"}"]'))
    return Campaigns(folder, Sandbox(tmp_path / "runs", [WORKLOADS, folder]))


def test_a_campaign_that_reads_outside_the_allowed_folders_is_listed_with_the_reason(campaigns):
    entries = {entry.key: entry for entry in campaigns.entries()}
    assert set(entries) == {"tiny", "outside", "foreign-scheduler"}
    assert entries["tiny"].error == "" and (entries["tiny"].total, entries["tiny"].finished) == (2, 0)
    assert "[[logs]] kth-sp2, workload" in entries["outside"].error
    assert "scheduler" in entries["foreign-scheduler"].error
    for key in ("outside", "foreign-scheduler"):
        assert "outside the folders this app may read" in entries[key].error
        with pytest.raises(SandboxError):
            campaigns.launch(key)


@pytest.mark.parametrize("key", ["/tmp/evil", "../tiny", "a/b", "..", ".hidden", "", None, 3, "nope"])
def test_a_forged_campaign_name_is_refused_and_nothing_is_written(campaigns, key):
    with pytest.raises(SandboxError):
        campaigns.launch(key)
    assert not (campaigns.sandbox.runs_dir / "campaigns").exists()


def test_dask_needs_the_address_given_at_start(campaigns):
    with pytest.raises(ValueError, match="--dask-address"):
        campaigns.launch("tiny", dask=True)


def test_a_campaign_runs_under_the_runs_folder_and_is_resumed(campaigns):
    job = campaigns.launch("tiny", workers=1)
    deadline = time.monotonic() + 300
    while job.status == "running":
        assert time.monotonic() < deadline, "campaign still running"
        time.sleep(0.2)
    assert job.status == "done", job.message
    output = campaigns.sandbox.runs_dir / "campaigns" / "tiny"
    assert len(list(output.glob("*/instance.json"))) == 2 and (output / "report" / "report.html").is_file()
    entry = {entry.key: entry for entry in campaigns.entries()}["tiny"]
    assert (entry.finished, entry.report) == (2, output / "report" / "report.html")
    again = campaigns.launch("tiny", workers=1)  # resumed: nothing left to run, the report is rebuilt
    while again.status == "running":
        assert time.monotonic() < deadline, "campaign still running"
        time.sleep(0.2)
    assert again.status == "done" and again.message.startswith("2/2 instances finished")


def test_files_a_campaign_names_outside_are_refused_alike_whether_they_exist_or_not(campaigns, tmp_path):
    """Issue 25, item 14: the files a campaign names are checked from its text before its reader opens any, so a
    missing file outside gets the line an existing one gets (``outside.toml``'s log exists, outside)."""
    folder, roots = campaigns.folder, campaigns.sandbox.describe_roots()
    text = (folder / "tiny.toml").read_text()
    (folder / "gone.toml").write_text(text.replace(str(KTH), str(tmp_path / "gone.swf")))
    (folder / "published.toml").write_text(text + f'\n[report]\npublished = "{tmp_path / "gone.csv"}"\n')
    head, _matrix, _rest = text.partition("[matrix]")
    (folder / "table.toml").write_text(
        head + '[[experiments]]\nname = "co"\nscheduler = "easy-coscheduling"\nspeedup_model = "table"\n'
        f'speedup_options = {{ table = "{tmp_path / "gone-table.csv"}" }}\n')
    (folder / "model.toml").write_text(text.replace(f'workload = "{KTH}"', f'site_model = "{tmp_path / "m.json"}"'))
    entries = {entry.key: entry.error for entry in campaigns.entries()}
    outside = "is outside the folders this app may read"
    assert entries["model"] == f"model.toml: [[logs]] kth-sp2, site_model {tmp_path / 'm.json'} {outside} ({roots})"
    assert entries["outside"] == (f"outside.toml: [[logs]] kth-sp2, workload {tmp_path / 'outside.swf'} {outside} "
                                  f"({roots})")
    assert entries["gone"] == f"gone.toml: [[logs]] kth-sp2, workload {tmp_path / 'gone.swf'} {outside} ({roots})"
    assert entries["published"] == f"published.toml: [report] published {tmp_path / 'gone.csv'} {outside} ({roots})"
    assert entries["table"] == (f"table.toml: [[experiments]] co, speedup_options table {tmp_path / 'gone-table.csv'} "
                                f"{outside} ({roots})")
