"""Run options checked before anything is read or simulated, and the decision path a run takes (issue 25).

- item 4: ``easy-schedulus``'s ``estimate_field`` that no job carries gave the default run silently;
- item 5: ``--sessions`` with a user model that uses none was accepted, ignored and not recorded;
- item 9: ``--timeout 1e10`` ended in ``OverflowError`` from ``signal.setitimer``;
- item 10: the placement option ``seed`` of -1 passed the option check and failed inside numpy during the run;
- item 11: a speedup table that is not CSV gave a two-line error, ``{"seed": "a"}`` an unnamed ``int()`` error,
  ``--speedup-model table`` without options a ``TypeError`` text;
- the fast path: every built-in scheduler runs on the direct driver, whatever its module is called, and
  ``run.json`` says which path ran.

Each error is one line, ``batreplay: error: ...``, with exit status 2, and leaves no run directory.
"""

from __future__ import annotations

import json

import pytest

from batreplay.cli import main
from batreplay.schedulers.names import SPEEDUP_PREDICTING
from batreplay.schedulers.registry import SCHEDULERS
from conftest import GOLDEN

DELAYS = GOLDEN / "delays"


def _run_args(out, *extra: str, scheduler: str = "easy") -> list[str]:
    return ["run", "--workload", str(DELAYS / "workload.json"), "--platform", str(DELAYS / "platform.xml"),
            "--scheduler", scheduler, "--out", str(out), "--quiet", *extra]


def _one_line_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("batreplay: error:") and "\n" not in err, err
    return err


def test_an_estimate_field_no_job_carries_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    err = _one_line_error(capsys, _run_args(out, "--scheduler-options", '{"estimate_field": "no_such_field"}',
                                            scheduler="easy-schedulus"))
    assert "option estimate_field 'no_such_field': no job of the workload carries it as a number" in err
    assert "numeric fields: id, res, subtime, walltime" in err and not out.exists()  # what could be named


def test_an_estimate_field_some_jobs_lack_is_counted_in_the_notes(tmp_path):
    workload = json.loads((DELAYS / "workload.json").read_text())
    workload["jobs"][0]["estimate"] = workload["jobs"][0]["walltime"] / 2
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    argv = _run_args(tmp_path / "run", "--scheduler-options", '{"estimate_field": "estimate"}',
                     scheduler="easy-schedulus")
    argv[2] = str(path)
    assert main(argv) == 0
    notes = json.loads((tmp_path / "run" / "run.json").read_text())["input_notes"]
    lacking = len(workload["jobs"]) - 1
    assert f"easy-schedulus: {lacking:,} of {len(workload['jobs']):,} jobs have no number in 'estimate'" in notes[-1]


def test_a_sessions_rule_with_no_number_says_so(tmp_path, capsys):
    argv = _run_args(tmp_path / "run", "--replay", "feedback", "--sessions", "garbage:::")
    argv[2] = str(GOLDEN.parent / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz")
    err = _one_line_error(capsys, argv)
    assert "--sessions 'garbage:::'" in err and "the threshold '::' is not a number of minutes" in err
    assert "could not convert" not in err


@pytest.mark.parametrize("sessions", ["garbage:::", "arrival:60", "a60"])
def test_sessions_with_a_model_that_uses_none_are_refused(tmp_path, capsys, sessions):
    out = tmp_path / "run"
    err = _one_line_error(capsys, _run_args(out, "--sessions", sessions))
    assert f"--sessions '{sessions}': the user model 'rigid' (--replay) uses no sessions" in err
    assert not out.exists()


def test_a_timeout_beyond_the_interval_timer_is_refused(tmp_path, capsys):
    for option in ("--timeout", "--batsim-timeout"):
        err = _one_line_error(capsys, _run_args(tmp_path / "run", option, "1e10"))
        assert f"({option}) must be a number > 0 and <= 1e+09 s" in err and "got 10000000000.0" in err
    assert main(_run_args(tmp_path / "run", "--timeout", "1e9")) == 0  # the bound itself arms the timer


@pytest.mark.parametrize("seed", ["-1", "1.5", "true", '"a"'])
def test_a_bad_placement_seed_is_refused_before_reading_inputs(tmp_path, capsys, seed):
    out = tmp_path / "run"
    options = f'{{"node_selection": "random", "seed": {seed}}}'
    err = _one_line_error(capsys, _run_args(out, "--scheduler-options", options, "--workload", "/nonexistent.json"))
    assert "scheduler easy: option seed: expected an integer >= 0" in err  # not the missing workload: checked first
    assert not out.exists()


def test_speedup_model_errors_are_one_line_naming_the_option(tmp_path, capsys):
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"\x00\x01 a,b\n1,2,3,4,5\n\xff\xfe,,\n" * 20)
    err = _one_line_error(capsys, _run_args(tmp_path / "a", "--speedup-model", "table", "--speedup-options",
                                            json.dumps({"table": str(garbage)})))
    assert f"speedup table {garbage}: not a readable CSV file" in err
    tokenizing = tmp_path / "ragged.csv"  # pandas' own message for this one spans two lines
    tokenizing.write_text("job_class,neighbour_class,speedup\na,a,1\na,b,1,2,3\n")
    err = _one_line_error(capsys, _run_args(tmp_path / "b", "--speedup-model", "table", "--speedup-options",
                                            json.dumps({"table": str(tokenizing)})))
    assert f"speedup table {tokenizing}: not a readable CSV file" in err
    err = _one_line_error(capsys, _run_args(tmp_path / "c", "--speedup-model", "random", "--speedup-options",
                                            '{"seed": "a"}'))
    assert "speedup model 'random': option seed: expected an integer >= 0, got 'a'" in err
    err = _one_line_error(capsys, _run_args(tmp_path / "d", "--speedup-model", "random", "--speedup-options",
                                            '{"low": "x"}'))
    assert "speedup model 'random': option low: expected a finite number, got 'x'" in err
    err = _one_line_error(capsys, _run_args(tmp_path / "e", "--speedup-model", "table"))
    assert "speedup model 'table' needs the option(s) table: give them with --speedup-options" in err
    err = _one_line_error(capsys, _run_args(tmp_path / "f", "--speedup-model", "table", "--speedup-options",
                                            '{"table": 3}'))
    assert "speedup model 'table': option table: expected a non-empty string, got 3" in err
    assert not any((tmp_path / name).exists() for name in "abcdef")


def _builtin_args(name: str, out) -> list[str]:
    extra = ["--speedup-model", "none"] if name in SPEEDUP_PREDICTING else []
    return _run_args(out, *extra, scheduler=name)


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_every_builtin_scheduler_takes_the_direct_path(tmp_path, name):
    assert main(_builtin_args(name, tmp_path / "run")) == 0
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["decision_driver"] == "direct", name


def test_the_direct_path_does_not_depend_on_module_names(tmp_path, monkeypatch):
    """A build that names modules differently (compiled, vendored) kept the classes but not ``batreplay.`` in their
    ``__module__``: every built-in scheduler then silently went through pybatsim, 1.75 times slower."""
    for cls in set(SCHEDULERS.values()):
        monkeypatch.setattr(cls, "__module__", "vendored." + cls.__name__.lower())
    assert main(_builtin_args("easy", tmp_path / "run")) == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["decision_driver"] == "direct"


def test_a_scheduler_file_and_a_subclass_run_through_pybatsim(tmp_path):
    source = tmp_path / "myEasy.py"
    source.write_text("from batreplay.schedulers.easy import Easy\n\n\nclass MyEasy(Easy):\n    pass\n")
    assert main(_run_args(tmp_path / "run", scheduler=str(source))) == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["decision_driver"] == "pybatsim"


def test_a_platform_too_slow_for_the_workload_is_refused_before_the_simulation(tmp_path, capsys):
    """Issue 25, item 7, the platform side: very slow hosts push simulated times where the embedded engine and a
    real Batsim part ways (Batsim aborts from 1e23 s); the last submission plus the longest job alone on the
    slowest host is held below MAX_SIMULATED_SECONDS."""
    from batreplay.engine.profiles import MAX_SIMULATED_SECONDS
    from batreplay.platforms.generate import write_platform

    workload = json.loads((DELAYS / "workload.json").read_text())
    last = max(job["subtime"] for job in workload["jobs"])
    workload["profiles"] = {name: {"type": "parallel_homogeneous", "cpu": 1e12, "com": 0}
                            for name in workload["profiles"]}
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    slow = write_platform(tmp_path / "slow.xml", 4, 1e12 / (MAX_SIMULATED_SECONDS - last) / 2)  # 2x over the bound
    argv = _run_args(tmp_path / "run", "--platform", str(slow))
    argv[2] = str(path)
    err = _one_line_error(capsys, argv)
    assert "the simulation could pass 1e+10 s, beyond which the embedded engine and a real Batsim 4.2.1" in err
    assert not (tmp_path / "run").exists()
    fast_enough = write_platform(tmp_path / "ok.xml", 4, 1e12 / (MAX_SIMULATED_SECONDS - last) * 1.01)
    argv = _run_args(tmp_path / "run", "--platform", str(fast_enough))
    argv[2] = str(path)
    assert main(argv) == 0


_PLAIN_HOSTS = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    {hosts}
    <host id="master_host" speed="1Gf"/>
    <link id="l0" bandwidth="125MBps" latency="0us"/><link id="l1" bandwidth="125MBps" latency="0us"/>
    <link id="l2" bandwidth="125MBps" latency="0us"/><link id="l3" bandwidth="125MBps" latency="0us"/>
    <link id="m" bandwidth="125MBps" latency="0us"/><link id="loop" bandwidth="125MBps" latency="0us"/>
    {routes}
    {self_route}
  </zone>
</platform>
"""


def _plain_platform(path, self_route: bool):
    hosts = "".join(f'<host id="node_{k}" speed="1Gf"/>' for k in range(4))
    routes = "".join(f'<route src="node_{k}" dst="master_host"><link_ctn id="l{k}"/><link_ctn id="m"/></route>'
                     for k in range(4))
    loop = '<route src="master_host" dst="master_host"><link_ctn id="loop"/></route>' if self_route else ""
    path.write_text(_PLAIN_HOSTS.format(hosts=hosts, routes=routes, self_route=loop))
    return path


def test_a_master_host_on_simgrids_loopback_is_refused_by_the_embedded_engine(tmp_path, capsys):
    """Batsim's messages between the master host's own actors cross SimGrid's loopback link when the master is a
    plain <host> without a route to itself; a real Batsim then grouped one instant's events otherwise (issue 27,
    2026-11-28): the embedded engine refuses such a platform instead of giving another schedule, and runs the same
    platform once the master host has its own 125MBps route."""
    from batreplay.platforms.reader import read_platform

    loopback = _plain_platform(tmp_path / "loopback.xml", self_route=False)
    assert read_platform(loopback).master_on_loopback
    argv = _run_args(tmp_path / "run", "--platform", str(loopback))
    err = _one_line_error(capsys, argv)
    assert "the master host 'master_host' is a plain <host> without a <route> to itself" in err
    assert "--engine batsim" in err and not (tmp_path / "run").exists()
    routed = _plain_platform(tmp_path / "routed.xml", self_route=True)
    assert not read_platform(routed).master_on_loopback
    assert main(_run_args(tmp_path / "run", "--platform", str(routed))) == 0
    assert not read_platform(DELAYS / "platform.xml").master_on_loopback  # a cluster's master: its private link
