"""A run imports what it uses, when it uses it (issue 26): a Batsim JSON workload is read, simulated and its outputs
written without pandas; pandas is imported first by the metrics step (batreplay.analysis), after the simulation.
An SWF log is read with pandas' CSV reader, so pandas comes with it.

Each case runs ``batreplay run`` in a fresh interpreter, with a finder on ``sys.meta_path`` that records the call
stack of the first import of pandas, and the runner's ``simulate`` wrapped to read ``sys.modules`` before and after
the simulation: deterministic, no clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GOLDEN, REPO_ROOT, WORKLOADS

_PROBE = """
import json, sys, traceback

seen = {}


class FirstPandasImport:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" and "first_import" not in seen:
            seen["first_import"] = [[frame.filename, frame.name] for frame in traceback.extract_stack()]
        return None  # the import goes on as usual


sys.meta_path.insert(0, FirstPandasImport())
import batreplay.run.runner as runner

simulate = runner.simulate


def watched(*args, **kwargs):
    seen["before_simulation"] = "pandas" in sys.modules
    simulation = simulate(*args, **kwargs)
    seen["after_simulation"] = "pandas" in sys.modules
    return simulation


runner.simulate = watched
from batreplay.cli import main

try:
    status = main(json.loads(sys.argv[1]))
except SystemExit as stop:
    status = stop.code
seen["status"] = status
seen["at_exit"] = "pandas" in sys.modules
print(json.dumps(seen), file=sys.__stderr__)
"""


def run_probe(argv: list[str], cwd: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv)], cwd=cwd, capture_output=True, text=True,
                          timeout=600, check=True)
    return json.loads(done.stderr.rstrip("\n").split("\n")[-1])


def source_frames(stack: list[list[str]]) -> list[tuple[str, str]]:
    """The frames of ``stack`` in the checkout's source folders: (folder/file, function)."""
    frames = []
    for filename, function in stack:
        path = Path(filename)
        if path.is_absolute() and REPO_ROOT in path.resolve().parents and ".venv" not in path.parts:
            path = path.resolve()
            frames.append((path.relative_to(REPO_ROOT).as_posix(), function))
    return frames


@pytest.mark.parametrize("case", ["delays", "kth2000"])
def test_a_json_workload_is_simulated_without_pandas_which_the_metrics_import(case, tmp_path):
    argv = ["run", "--workload", str(GOLDEN / case / "workload.json"), "--platform",
            str(GOLDEN / case / "platform.xml"), "--scheduler", "easy", "--out", "r", "--quiet"]
    seen = run_probe(argv, tmp_path)
    assert seen["status"] == 0 and (tmp_path / "r" / "metrics.json").is_file()
    assert seen["before_simulation"] is False and seen["after_simulation"] is False
    assert seen["at_exit"] is True  # the probe sees the import: the metrics need pandas
    frames = source_frames(seen["first_import"])
    assert ("run/runner.py", "_metrics") in frames, frames
    assert frames[-1][0].startswith("analysis/"), frames  # imported by the analysis, nothing earlier


def test_an_swf_log_brings_pandas_with_its_reader(tmp_path):
    argv = ["run", "--workload", str(WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"), "--max-jobs", "50",
            "--platform", "kth-sp2", "--scheduler", "easy", "--out", "r", "--quiet"]
    seen = run_probe(argv, tmp_path)
    assert seen["status"] == 0 and seen["before_simulation"] is True
    frames = source_frames(seen["first_import"])
    assert frames[-1] == ("workloads/swf.py", "_parse_job_lines"), frames  # pandas.read_csv reads the log
