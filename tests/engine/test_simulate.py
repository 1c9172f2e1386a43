"""batreplay.engine.simulate: one entry point for the embedded engine and a real Batsim.

Both engines, given a golden case's platform, workload and decision process, must leave Batsim's own
out_jobs.csv in the output directory (``../shared/batsim-golden``: ``delays`` with pybatsim's easyBackfill,
``dynamic`` with the probe that registers, kills and needs dynamic jobs with acknowledgement). Failures keep
their messages: an embedded failure says when and why, a scheduler's own failure passes through, and a real
Batsim's standard error is written where the caller asked, so that its message needs no rewriting.
"""

from __future__ import annotations

import json
import math

import pytest
from batsim.batsim import BatsimScheduler
from batsim.tools.launcher import instanciate_scheduler
from hypothesis import given
from hypothesis import strategies as st

from batreplay.engine.choices import ENGINES
from batreplay.engine.simulate import SimulationError, simulate
from batreplay.engine.spec import EngineSpec, EngineSpecError
from batreplay.realbatsim.errors import BatsimCrashed
from batreplay.realbatsim.process import STDERR_LOG
from batreplay.realbatsim.pybatsim_run import run_pybatsim_next_to_batsim
from batreplay.schedulers.failures import DecisionProcessError
from batreplay.schedulers.registry import load_scheduler
from batsim_doubles import PROBES_DIR, write_fake_batsim
from conftest import GOLDEN

CASES = {"delays": (lambda: instanciate_scheduler("easyBackfill", {}), False),
         "dynamic": (lambda: load_scheduler(PROBES_DIR / "probeDynamic.py"), True)}


def _simulate_case(case: str, out, engine: EngineSpec, **options):
    make_scheduler, dynamic = CASES[case]
    workload = json.loads((GOLDEN / case / "workload.json").read_text())
    return simulate(GOLDEN / case / "platform.xml", workload, make_scheduler(), out, engine=engine,
                    dynamic_jobs=dynamic, **options)


def _golden_lines(case: str) -> list[str]:
    return (GOLDEN / case / "out_jobs.csv").read_text().splitlines()


@pytest.mark.parametrize("case", sorted(CASES))
def test_embedded_engine_writes_batsims_out_jobs(case, tmp_path):
    requests = []
    result = _simulate_case(case, tmp_path / "out", EngineSpec(), on_request=requests.append)
    assert result.engine == "embedded" and result.messages == len(requests) > 0
    assert result.out_jobs.read_text().splitlines() == _golden_lines(case)
    assert result.out_schedule.is_file()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["out_jobs.csv", "out_schedule.csv"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_real_batsim_writes_the_same_out_jobs_and_keeps_its_log_in_the_output(real_batsim, case, tmp_path):
    kept = tmp_path / "failed.log"
    result = _simulate_case(case, tmp_path / "out", EngineSpec("batsim", batsim=real_batsim), batsim_log=kept)
    assert result.engine == "batsim" and result.messages > 0
    assert result.out_jobs.read_text().splitlines() == _golden_lines(case)
    assert (tmp_path / "out" / STDERR_LOG).is_file() and not kept.exists()  # a success leaves no failure log
    assert not (tmp_path / "out" / "batsim-workload.json").exists()


@pytest.mark.slow
def test_a_failed_real_batsim_leaves_its_log_where_asked_and_says_so(tmp_path):
    fake = write_fake_batsim(tmp_path, mode="crash")
    kept = tmp_path / "run.failed-batsim.log"
    with pytest.raises(BatsimCrashed, match="batsim exited with status 3") as caught:
        _simulate_case("delays", tmp_path / "out", EngineSpec("batsim", batsim=str(fake)), batsim_log=kept)
    assert f"see {kept}" in str(caught.value)
    assert "fatal: fake failure for the tests" in kept.read_text()
    assert not (tmp_path / "out" / STDERR_LOG).exists()


class _OutsideTheMachine(BatsimScheduler):
    """Starts every job on a host the platform does not have: the engine refuses it."""

    def onJobSubmission(self, job):
        job.allocation = "99"
        self.bs.execute_jobs([job])


class _Raising(BatsimScheduler):
    def onJobSubmission(self, job):
        raise KeyError("no such queue")


def test_an_embedded_failure_says_when_and_why_and_writes_nothing(tmp_path):
    workload = json.loads((GOLDEN / "delays" / "workload.json").read_text())
    with pytest.raises(SimulationError) as caught:
        simulate(GOLDEN / "delays" / "platform.xml", workload, _OutsideTheMachine(), tmp_path / "out")
    first = min(job["subtime"] for job in workload["jobs"])
    assert str(caught.value).startswith(f"simulation failed at t = {first:.6f} s: EngineError: EXECUTE_JOB ")
    assert "outside resources" in str(caught.value)
    assert list((tmp_path / "out").iterdir()) == []


def test_a_schedulers_own_failure_passes_through(tmp_path):
    workload = json.loads((GOLDEN / "delays" / "workload.json").read_text())
    with pytest.raises(DecisionProcessError, match="no such queue"):
        simulate(GOLDEN / "delays" / "platform.xml", workload, _Raising(), tmp_path / "out")


@pytest.mark.parametrize(("options", "named"), [
    ({"name": "simgrid"}, "simgrid"), ({"batsim_timeout": 0}, "> 0"), ({"batsim_timeout": -5.0}, "> 0"),
    ({"batsim_timeout": math.nan}, "> 0"), ({"batsim_timeout": math.inf}, "> 0"), ({"batsim_timeout": True}, "> 0"),
    ({"batsim_timeout": "600"}, "> 0"),
])
def test_engine_spec_refuses_what_no_engine_runs(options, named):
    with pytest.raises(EngineSpecError, match=named):
        EngineSpec(**options)
    assert issubclass(EngineSpecError, ValueError)


@given(st.sampled_from(ENGINES), st.floats(min_value=1e-3, max_value=1e9), st.none() | st.text(min_size=1))
def test_engine_spec_keeps_every_valid_choice(name, timeout, batsim):
    spec = EngineSpec(name, batsim, timeout)
    assert (spec.name, spec.batsim, spec.batsim_timeout) == (name, batsim, timeout)


def test_pybatsim_next_to_batsim_writes_batsims_out_jobs(real_batsim, tmp_path):
    """pybatsim's own launcher and ``batsim`` as two processes, as a user runs them, on golden case ``delays``."""
    case = GOLDEN / "delays"
    run = run_pybatsim_next_to_batsim(real_batsim, case / "platform.xml", case / "workload.json", "easyBackfill",
                                      tmp_path / "real")
    assert run.out_jobs.read_text().splitlines() == _golden_lines("delays")
    assert run.batsim_log.is_file() and run.scheduler_log.is_file() and run.peak_mb > 0


def test_pybatsim_next_to_a_crashing_batsim_names_both_logs(tmp_path):
    fake = write_fake_batsim(tmp_path, mode="crash")
    case = GOLDEN / "delays"
    with pytest.raises(BatsimCrashed, match="batsim exited with status 3") as caught:
        run_pybatsim_next_to_batsim(fake, case / "platform.xml", case / "workload.json", "easyBackfill",
                                    tmp_path / "real", timeout=120)
    assert str(tmp_path / "real" / "batsim.log") in str(caught.value)
    assert str(tmp_path / "real" / "scheduler.log") in str(caught.value)
