"""A `batreplay ui` server in a process of its own, and headless Chromium, for the web GUI's tests (imported as
fixtures).

The server is the console command a user runs (``python -m batreplay.cli ui``), on a free port, with a runs
folder of the test's, the shared workloads and an inputs folder as its allowed folders (and, for the module's
server, the repository's folder of shipped speedup tables, :data:`SPEEDUPS`), and an empty log cache.
The browser is Debian's Chromium driven by Playwright (``executable_path``: no browser is downloaded); the tests
that need it are skipped when no Chromium is installed or Playwright cannot start it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import CHROMIUM_ARGS, REPO_ROOT, WORKLOADS, chromium_path

#: Upper bound of a server start, a page or a run to appear: only a failure waits this long.
PATIENCE_S = 180
#: The shipped speedup tables of co-scheduling (``expe/speedups/two-classes.csv``, read by
#: ``expe/co-scheduling.toml``): an allowed folder of the module's server, so that the form may name them.
SPEEDUPS = REPO_ROOT / "expe" / "speedups"


@dataclass
class UiServer:
    """A running ``batreplay ui``: its base URL (token included when it has one), folders and process."""

    url: str
    runs_dir: Path
    inputs: Path
    process: subprocess.Popen

    def page_url(self, path: str) -> str:
        base, _, query = self.url.partition("?")
        return base.rstrip("/") + path + (f"?{query}" if query else "")


def start_ui(runs_dir: Path, inputs: Path, cache: Path, *extra: str) -> UiServer:
    """Start ``batreplay ui`` and wait for the line giving its address (its first line of output)."""
    command = [sys.executable, "-m", "batreplay.cli", "ui", "--runs-dir", str(runs_dir), "--allow", str(WORKLOADS),
               "--allow", str(inputs), "--port", "0", *extra]
    env = dict(os.environ, BATREPLAY_CACHE=str(cache), COLUMNS="300")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + PATIENCE_S
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        match = re.search(r"open (http://\S+)", line)
        if match:
            return UiServer(match.group(1), runs_dir, inputs, process)
    process.kill()
    raise AssertionError("batreplay ui did not start:\n" + "".join(seen))


def stop_ui(server: UiServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()


#: A pybatsim scheduler file: FCFS that thinks 20 ms over each job that ends, so that a run lasts long enough to
#: be cancelled whatever the machine's speed (3,000 jobs: at least a minute). Its class is the file's stem,
#: capitalised, as pybatsim's launcher expects.
SLOW_SCHEDULER = ("slowFcfs.py", '''"""FCFS that thinks 20 ms over each job that ends (a test scheduler)."""
import time

from batreplay.schedulers.fcfs import Fcfs


class SlowFcfs(Fcfs):
    def onJobCompletion(self, job):
        time.sleep(0.02)
        super().onJobCompletion(job)
''')


CAMPAIGN = """
[campaign]
name = "{name}"
description = "{jobs} KTH-SP2 jobs, {described}"
root = "."

[[logs]]
name = "kth-sp2"
workload = "{workload}"
platform = "kth-sp2"
max_jobs = {jobs}

[matrix]
platforms = {platforms}
schedulers = {schedulers}
replay_models = ["rigid"]
seeds = [0]
"""


def campaign_text(name: str, workload: Path, jobs: int, *, platforms: Sequence[str] = ("recorded",),
                  schedulers: Sequence[str] = ("easy", "fcfs")) -> str:
    """A campaign file (TOML) of the tests: the first ``jobs`` jobs of ``workload`` on the KTH-SP2 platform and
    the ``platforms`` variants of it, each scheduler of ``schedulers``, rigid replay, seed 0."""
    return CAMPAIGN.format(name=name, jobs=jobs, workload=workload, platforms=json.dumps(list(platforms)),
                           schedulers=json.dumps(list(schedulers)),
                           described=" and ".join(name.upper() for name in schedulers))


def write_campaigns(folder: Path, outside: Path) -> None:
    """Two campaign files: ``tiny`` (300 KTH-SP2 jobs, EASY and FCFS) and ``outside``, whose log is a readable SWF
    file outside the allowed folders."""
    folder.mkdir(parents=True)
    kth = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
    (folder / "tiny.toml").write_text(campaign_text("tiny", kth, 300))
    outside.write_text("1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n")
    (folder / "outside.toml").write_text(campaign_text("outside", outside, 1))


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory) -> Iterator[UiServer]:
    root = tmp_path_factory.mktemp("ui")
    inputs = root / "inputs"
    inputs.mkdir()
    write_campaigns(inputs / "campaigns", root / "outside.swf")
    (inputs / SLOW_SCHEDULER[0]).write_text(SLOW_SCHEDULER[1])
    server = start_ui(root / "runs", inputs, root / "cache", "--campaigns", str(inputs / "campaigns"),
                      "--allow", str(SPEEDUPS))
    yield server
    stop_ui(server)


@pytest.fixture(scope="module")
def browser():
    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium on PATH (Debian package chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=binary, args=list(CHROMIUM_ARGS))
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    opened.set_default_timeout(PATIENCE_S * 1000)
    yield opened
    context.close()
