"""The campaign runner on the shipped `quick` campaign (first 3000 jobs of KTH-SP2): every instance written with
its manifest, nothing rerun, `kill -9` and Ctrl-C in the middle then a restart give the same out_jobs.csv
bytes as an uninterrupted run, failing and crashing instances are recorded without stopping the others."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO_ROOT, WORKLOADS
from rich.console import Console

from batreplay.campaign.executors import LocalExecutor, run_instance
from batreplay.campaign.platforms import prepare_platforms
from batreplay.campaign.runner import CampaignBusyError, output_root_lock, run_campaign, scan
from batreplay.campaign.spec import load_campaign
from batreplay.campaign.worker import FAILED_SUFFIX, INSTANCE_MANIFEST, task_for

QUICK = REPO_ROOT / "expe" / "quick.toml"
KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
#: sha256 of the KTH-SP2 log, from ../shared/workloads/README.md
KTH_SHA256 = "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b"
QUIET = Console(quiet=True)


def swf_frame(path: Path, rows: int) -> pd.DataFrame:
    """The first job lines of an SWF log, read independently of batreplay (pandas, whitespace-separated)."""
    text = gzip.decompress(path.read_bytes()).decode("latin-1")
    body = "\n".join(line for line in text.splitlines() if line.strip() and not line.startswith(";"))
    frame = pd.read_csv(io.StringIO(body), sep=r"\s+", header=None, nrows=rows)
    frame.columns = ["job", "submit", "wait", "run", "alloc", "cpu", "mem", "req_procs", "req_time", "req_mem",
                     "status", "user", "group", "exe", "queue", "partition", "preceding", "think"]
    return frame


def out_jobs_bytes(root: Path) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in sorted(root.glob("*/out_jobs.csv"))}


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.endswith(".tmp") or p.name.endswith(".log")
                  or (p.is_dir() and p.name != "platforms" and not (p / INSTANCE_MANIFEST).exists()))


def campaign_process(output_root: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "batreplay.campaign", "run", str(QUICK), "--output-root",
                             str(output_root), "--quiet", *extra], cwd=REPO_ROOT, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wait_for_finished(root: Path, process: subprocess.Popen, count: int = 1, timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        finished = len(list(root.glob(f"*/{INSTANCE_MANIFEST}")))
        if finished >= count:
            return finished
        if process.poll() is not None:
            pytest.fail(f"campaign process ended early: {process.stdout.read().decode()}")
        time.sleep(0.02)
    pytest.fail("no instance finished in time")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The quick campaign, run once without interruption."""
    spec = load_campaign(QUICK, output_root=tmp_path_factory.mktemp("quick-reference"))
    summary = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    return spec, summary


def test_every_instance_is_written_with_its_manifest(reference):
    spec, summary = reference
    assert summary.complete and not summary.failed and len(summary.done) == 8
    assert leftovers(spec.output_root) == []
    recorded = swf_frame(KTH, 3100)
    usable = recorded[(recorded["run"] > 0) & (recorded["alloc"] > 0)]  # Batsim refuses 0 s jobs
    expected_jobs = set(usable["job"].iloc[:3000])  # max_jobs counts the jobs converted
    for instance in spec.instances():
        folder = spec.output_root / instance.id
        manifest = json.loads((folder / INSTANCE_MANIFEST).read_text())
        assert manifest["params"] == instance.params and manifest["labels"] == instance.labels
        assert manifest["engine"] == "embedded" and manifest["wall_seconds"] > 0
        assert manifest["workload_sha256"] == KTH_SHA256
        run = json.loads((folder / "run.json").read_text())
        assert run["engine"] == "embedded" and run["wall_seconds"] > 0 and "pandas" in run["versions"]
        assert run["inputs_sha256"]["workload"] == KTH_SHA256
        assert run["inputs_sha256"]["platform"] == hashlib.sha256(Path(run["platform_file"]).read_bytes()).hexdigest()
        assert set(pd.read_csv(folder / "out_jobs.csv")["job_id"]) == expected_jobs


def test_platform_variant_and_walltime_factor_act_as_documented(reference):
    spec, _ = reference
    recorded = swf_frame(KTH, 3100).set_index("job")
    # walltime factor 2: every walltime is max(requested time, 2 x run time)
    for instance in spec.instances():
        jobs = pd.read_csv(spec.output_root / instance.id / "out_jobs.csv").set_index("job_id")
        expected = np.maximum(recorded.loc[jobs.index, "req_time"], 2 * recorded.loc[jobs.index, "run"])
        np.testing.assert_array_equal(jobs["requested_time"].to_numpy(), expected.to_numpy(dtype=float))
    # node speed / 2: every job runs exactly twice its recorded run time (parallel_homogeneous profiles)
    for instance in spec.instances():
        jobs = pd.read_csv(spec.output_root / instance.id / "out_jobs.csv").set_index("job_id")
        run_time = recorded.loc[jobs.index, "run"].to_numpy(dtype=float)
        factor = 1 / instance.experiment.variant.speed_factor
        np.testing.assert_allclose(jobs["execution_time"].to_numpy(), factor * run_time, atol=1e-5)
        assert (jobs["requested_number_of_resources"].to_numpy() == recorded.loc[jobs.index, "alloc"]).all()


def test_a_second_run_runs_nothing(reference):
    spec, _ = reference
    before = {p: p.stat().st_mtime_ns for p in spec.output_root.glob("*/out_jobs.csv")}
    summary = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    assert summary.already_finished == 8 and summary.done == [] and summary.complete
    assert {p: p.stat().st_mtime_ns for p in spec.output_root.glob("*/out_jobs.csv")} == before


@pytest.mark.slow
def test_kill_9_in_the_middle_then_restart_gives_the_same_results(reference, tmp_path):
    spec, _ = reference
    root = tmp_path / "killed"
    process = campaign_process(root, "--workers", "1")
    finished = wait_for_finished(root, process)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = len(list(root.glob(f"*/{INSTANCE_MANIFEST}")))
    assert 1 <= finished < 8
    restarted = campaign_process(root)
    output = restarted.communicate(timeout=300)[0].decode()
    assert restarted.returncode == 0, output
    assert f"{finished} already finished, {8 - finished} to run" in " ".join(output.split())
    assert out_jobs_bytes(root) == out_jobs_bytes(spec.output_root)
    assert leftovers(root) == []


@pytest.mark.slow
def test_ctrl_c_keeps_finished_instances(reference, tmp_path):
    spec, _ = reference
    root = tmp_path / "interrupted"
    process = campaign_process(root, "--workers", "1")
    wait_for_finished(root, process)
    os.killpg(process.pid, signal.SIGINT)
    output = process.communicate(timeout=60)[0].decode()
    assert process.returncode == 130, output
    assert "interrupted" in output
    finished = sorted(p.parent.name for p in root.glob(f"*/{INSTANCE_MANIFEST}"))
    assert 1 <= len(finished) < 8
    assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []
    assert not list(root.glob(f"*{FAILED_SUFFIX}"))  # an interrupted instance is not a failed one
    reference_bytes = out_jobs_bytes(spec.output_root)
    assert {k: v for k, v in out_jobs_bytes(root).items()} == {k: reference_bytes[k] for k in finished}


RAISING = """
from batsim.batsim import BatsimScheduler

class RaisingScheduler(BatsimScheduler):
    def onJobSubmission(self, job):
        raise RuntimeError("deliberate failure of the test scheduler")
"""
CRASHING = """
import os, signal
from batsim.batsim import BatsimScheduler

class CrashingScheduler(BatsimScheduler):
    def onSimulationBegins(self):
        os.kill(os.getpid(), signal.SIGKILL)
"""
FIXED = """
from batreplay.schedulers.easy import Easy

class RaisingScheduler(Easy):
    pass
"""


def small_campaign(folder: Path) -> Path:
    (folder / "raisingScheduler.py").write_text(RAISING)
    (folder / "crashingScheduler.py").write_text(CRASHING)
    spec = folder / "small.toml"
    spec.write_text(f"""
[campaign]
name = "small"
output_root = "out"

[[logs]]
name = "kth"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"
max_jobs = 50

[matrix]
schedulers = ["easy", "raisingScheduler.py", "crashingScheduler.py"]
""")
    return spec


def test_failing_and_crashing_instances_are_recorded_and_retried(tmp_path):
    spec = load_campaign(small_campaign(tmp_path))
    ids = {i.experiment.scheduler: i.id for i in spec.instances()}
    summary = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    assert summary.done == [ids["easy"]]
    assert sorted(summary.failed) == sorted([ids["raisingScheduler.py"], ids["crashingScheduler.py"]])
    raised = json.loads((spec.output_root / f"{ids['raisingScheduler.py']}{FAILED_SUFFIX}").read_text())
    assert "deliberate failure of the test scheduler" in raised["error"]
    assert "Traceback" in raised["traceback"] and raised["params"]["scheduler"] == "raisingScheduler.py"
    crashed = json.loads((spec.output_root / f"{ids['crashingScheduler.py']}{FAILED_SUFFIX}").read_text())
    assert crashed["error_type"] == "ProcessDied" and "SIGKILL" in crashed["error"]
    assert crashed["returncode"] == -signal.SIGKILL
    state = scan(spec.output_root, spec.instances())
    assert state.finished == [ids["easy"]] and len(state.failed) == 2
    # the failed ones are retried; once the scheduler is fixed, its instance succeeds and its record goes
    (tmp_path / "raisingScheduler.py").write_text(FIXED)
    again = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    assert again.already_finished == 1 and again.done == [ids["raisingScheduler.py"]]
    assert again.failed == [ids["crashingScheduler.py"]]
    assert not (spec.output_root / f"{ids['raisingScheduler.py']}{FAILED_SUFFIX}").exists()
    # the fixed scheduler is EASY under another name: same schedule
    easy = pd.read_csv(spec.output_root / ids["easy"] / "out_jobs.csv")
    fixed = pd.read_csv(spec.output_root / ids["raisingScheduler.py"] / "out_jobs.csv")
    pd.testing.assert_frame_equal(easy, fixed)


def test_ctrl_c_while_an_instance_starts_is_left_to_the_runner(tmp_path):
    """A Ctrl-C reaches the whole process group, possibly while an instance process is still starting: the
    instance must neither die of it (a KeyboardInterrupt there looked like a crash and left a failure record)
    nor stop; the campaign runner alone decides, and stops its instances with SIGTERM."""
    spec = load_campaign(small_campaign(tmp_path))
    instance = spec.select("__easy__")[0]
    prepare_platforms(spec, [instance])

    def interrupt_at_once(process):
        for _ in range(3):
            with contextlib.suppress(ProcessLookupError):  # (it would be gone if SIGINT had killed it)
                os.kill(process.pid, signal.SIGINT)
            time.sleep(0.01)

    outcome = run_instance(task_for(instance, spec), launcher="forkserver", on_start=interrupt_at_once)
    assert (outcome.status, outcome.error) == ("done", "")
    assert (spec.output_root / instance.id / INSTANCE_MANIFEST).is_file()
    assert not list(spec.output_root.glob(f"*{FAILED_SUFFIX}"))
    # SIGTERM (what the runner sends) stops a forked instance as interrupted, without a failure record
    other = spec.select("__raisingScheduler__")[0]
    prepare_platforms(spec, [other])
    stopped = run_instance(task_for(other, spec), launcher="forkserver", on_start=lambda process: process.terminate())
    assert stopped.status == "interrupted"
    assert not list(spec.output_root.glob(f"*{FAILED_SUFFIX}"))


def test_leftovers_of_an_interrupted_instance_are_removed(tmp_path):
    spec = load_campaign(small_campaign(tmp_path))
    instance = spec.select("__easy__")[0]
    root = spec.output_root
    (root / f".{instance.id}.abc123.tmp").mkdir(parents=True)
    (root / f".{instance.id}.abc123.tmp" / "out_jobs.csv").write_text("partial")
    (root / instance.id).mkdir()  # renamed into place, killed before instance.json
    (root / instance.id / "run.json").write_text("{}")
    (root / f".{instance.id}.log").write_text("old output")
    summary = run_campaign(spec, only="__easy__", executor=LocalExecutor(1), console=QUIET, show_progress=False)
    assert summary.done == [instance.id]
    assert leftovers(root) == []
    assert json.loads((root / instance.id / "run.json").read_text())["spec"]["scheduler"] == "easy"


def test_one_runner_per_output_root(tmp_path):
    spec = load_campaign(small_campaign(tmp_path))
    with output_root_lock(spec.output_root), pytest.raises(CampaignBusyError, match="in use by another campaign"):
        run_campaign(spec, executor=LocalExecutor(1), console=QUIET, show_progress=False)


def test_command_line_errors_are_one_line(tmp_path, capsys):
    from batreplay.campaign.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(["run", str(tmp_path / "none.toml")])
    assert info.value.code == 2
    assert capsys.readouterr().err.strip().endswith("none.toml: no such campaign file")
    assert main(["run", str(QUICK), "--dry-run", "--only", "fcfs"]) == 0
    listed = capsys.readouterr().out.split()
    assert len(listed) == 4 and all("__fcfs__" in i for i in listed)
    with pytest.raises(SystemExit) as info:
        main(["run", str(QUICK), "--executor", "dask"])
    assert info.value.code == 2 and "--scheduler-address" in capsys.readouterr().err


def test_an_instance_whose_parameters_the_run_refuses_is_failed_without_a_process(tmp_path):
    """No run can be built of the task (here a hand-made one with max_jobs 0): a failed instance with its record,
    and the campaign goes on; no process was started, so no log either."""
    task = {"campaign": "c", "id": "refused", "output_root": str(tmp_path / "out"), "root": str(tmp_path),
            "workload": str(KTH), "platform": "kth-sp2", "labels": {"scheduler": "easy"},
            "params": {"scheduler": "easy", "max_jobs": 0, "seed": 0, "engine": "embedded"}}
    outcome = run_instance(task, launcher="forkserver")
    assert (outcome.id, outcome.status) == ("refused", "failed") and "max_jobs" in outcome.error
    record = json.loads((tmp_path / "out" / f"refused{FAILED_SUFFIX}").read_text())
    assert (record["campaign"], record["id"], record["params"]) == ("c", "refused", task["params"])
    assert record["error"] == outcome.error and sorted(os.listdir(tmp_path / "out")) == [f"refused{FAILED_SUFFIX}"]
