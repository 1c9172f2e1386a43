"""Integration with a real Batsim 4.2 (``batsim`` on PATH); every test is skipped, with the reason, without one.

On the golden cases (zero-latency platforms, where Batsim's times are exact):
- our ``easy`` scheduler run by :func:`batreplay.realbatsim.launcher.run_with_batsim` against real Batsim and
  in-process against the embedded engine must write the same out_jobs.csv, byte for byte;
- every golden case replayed live (pybatsim's ``easyBackfill``, or the probe schedulers with Batsim's
  dynamic-job flags) must reproduce the recorded ``out_jobs.csv`` and ``out_machine_states.csv`` byte for byte;
- a ``delay`` profile of 0 s, which Batsim refuses (a CRITICAL log line, then SIGABRT), must be reported in
  one line that quotes Batsim's reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batreplay.engine.inprocess import run_scheduler
from batreplay.formats.out_jobs_writer import write_out_jobs
from batreplay.realbatsim.errors import BatsimCrashed
from batreplay.realbatsim.launcher import run_with_batsim
from batreplay.schedulers.registry import load_scheduler
from batsim_doubles import PROBES_DIR, batsim_options, engine_for
from conftest import GOLDEN, golden_cases, slow_when_large

# slow: each test starts a real Batsim (left out of the README's fast loop, run by .ci/run's slow step)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def batsim(real_batsim):
    """The real ``batsim`` 4.2.x (skips without one; fails in CI, see conftest.find_real_batsim)."""
    return real_batsim


def _static_cases(scheduler_name: str) -> list[str]:
    return [c for c in golden_cases() if (GOLDEN / c / "scheduler.txt").read_text().split()[:1] == [scheduler_name]]


def assert_same_file(ours: Path, theirs: Path, what: str) -> None:
    """The two files hold the same lines, byte for byte; the message shows the first differing pair."""
    a, b = Path(ours).read_text().splitlines(), Path(theirs).read_text().splitlines()
    differing = [(i + 1, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y]
    assert not differing, (f"{what}: {len(differing)} lines differ, first (line {differing[0][0]}):\n"
                           f"  {differing[0][1]}\n  {differing[0][2]}")
    assert len(a) == len(b), f"{what}: {len(a)} lines against {len(b)}"


@pytest.mark.parametrize("case", slow_when_large(_static_cases("easyBackfill")))
def test_easy_on_real_batsim_equals_embedded_engine(batsim, case, tmp_path):
    folder = GOLDEN / case
    result = run_with_batsim(folder / "platform.xml", folder / "workload.json", load_scheduler("easy"),
                             tmp_path / "real", batsim_path=batsim, timeout=120.0)
    engine = engine_for(folder / "platform.xml", folder / "workload.json", batsim_options(folder))
    run_scheduler(engine, load_scheduler("easy"))
    write_out_jobs(engine.records, tmp_path / "embedded_jobs.csv")
    assert_same_file(tmp_path / "embedded_jobs.csv", result.out_jobs, f"{case}: engine vs real Batsim")


@pytest.mark.parametrize("case", _static_cases("easyBackfill"))
def test_easy_backfill_through_the_launcher_reproduces_the_recording(batsim, case, tmp_path):
    from batsim.tools.launcher import instanciate_scheduler

    folder = GOLDEN / case
    result = run_with_batsim(folder / "platform.xml", folder / "workload.json",
                             instanciate_scheduler("easyBackfill", {}), tmp_path / "real", batsim_path=batsim,
                             timeout=120.0)
    assert result.messages == len((folder / "transcript.jsonl").read_text().splitlines()) // 2
    assert_same_file(result.out_jobs, folder / "out_jobs.csv", f"{case}: live run vs recording")
    assert_same_file(result.out_jobs.parent / "out_machine_states.csv", folder / "out_machine_states.csv",
                     f"{case}: live run vs recording")


@pytest.mark.parametrize("case", [c for c in golden_cases() if batsim_options(GOLDEN / c).dynamic_jobs])
def test_dynamic_probes_through_the_launcher_reproduce_the_recording(batsim, case, tmp_path):
    folder = GOLDEN / case
    probe = (folder / "scheduler.txt").read_text().split()[0]
    options = batsim_options(folder)
    result = run_with_batsim(folder / "platform.xml", folder / "workload.json",
                             load_scheduler(PROBES_DIR / f"{probe}.py"), tmp_path / "real", batsim_path=batsim,
                             dynamic_jobs=options.dynamic_jobs,
                             acknowledge_dynamic_jobs=options.acknowledge_dynamic_jobs,
                             profile_reuse=options.profile_reuse, timeout=120.0)
    assert result.messages == len((folder / "transcript.jsonl").read_text().splitlines()) // 2
    assert_same_file(result.out_jobs, folder / "out_jobs.csv", f"{case}: live run vs recording")
    assert_same_file(result.out_jobs.parent / "out_machine_states.csv", folder / "out_machine_states.csv",
                     f"{case}: live run vs recording")


def test_refused_workload_is_reported_with_batsims_reason(batsim, tmp_path):
    """Batsim 4.2.1 refuses a ``delay`` of 0 s: it logs a CRITICAL line and aborts (SIGABRT, status 134 in a
    shell). The launcher's one-line error quotes that line and names the log it comes from."""
    folder = GOLDEN / "delays"
    workload = {"nb_res": 4, "jobs": [{"id": "0", "subtime": 0, "walltime": 10, "res": 1, "profile": "d0"}],
                "profiles": {"d0": {"type": "delay", "delay": 0}}}
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(workload))
    with pytest.raises(BatsimCrashed) as caught:
        run_with_batsim(folder / "platform.xml", path, load_scheduler("easy"), tmp_path / "real",
                        batsim_path=batsim, timeout=60.0)
    message = str(caught.value)
    assert "\n" not in message
    assert "SIGABRT" in message
    assert "profile 'd0' has a non-strictly-positive 'delay' field (0)" in message
