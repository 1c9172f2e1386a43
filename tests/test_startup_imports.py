"""What each entry point imports: the command's help and its argument errors import no heavy library, and each
task imports only what it uses (issue 13: start-up time).

Every case runs in a fresh interpreter (``python -c``) and reads back ``sys.modules`` once the command has
finished: deterministic, no clock. The names, choices and defaults the parser shows come from light modules
(:mod:`batreplay.schedulers.names`, :mod:`batreplay.workloads.choices`, :mod:`batreplay.engine.choices`,
:mod:`batreplay.replay.registry`, :mod:`batreplay.platforms.shipped`); the tests at the end check that the heavy
modules agree with them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import GOLDEN, WORKLOADS

#: Libraries that take tens to hundreds of milliseconds to import, none of which the parser needs.
HEAVY = ("pandas", "numpy", "matplotlib", "batsim", "zmq", "procset", "dask", "distributed", "jinja2", "networkx",
         "markdown_it", "pooch", "rich.progress")
#: What only the reports and the Dask executor use: never a simulation.
REPORTING = ("matplotlib", "jinja2", "dask", "distributed", "markdown_it")

_PROBE = """
import json, sys
from batreplay.cli import main
try:
    status = main(json.loads(sys.argv[1]))
except SystemExit as stop:
    status = stop.code
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.__stderr__)
"""


def command_imports(argv: list[str], cwd) -> tuple[int, list[str], str]:
    """Run ``batreplay ARGV`` in a new interpreter; returns its exit status, the modules it had imported at the
    end, and what it printed on standard output and error (the probe's own line left out)."""
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=True)
    *errors, probe = done.stderr.rstrip("\n").split("\n")
    report = json.loads(probe)
    return report["status"], report["modules"], done.stdout + "\n".join(errors)


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """The packages of ``names`` present in ``modules`` (a package counts with any of its submodules)."""
    return [name for name in names if any(m == name or m.startswith(name + ".") for m in modules)]


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["run", "--help"],
    ["sessions", "--help"],
    ["analyze", "--help"],
    ["platform", "--help"],
    ["fetch", "--help"],
    ["campaign", "--help"],
    ["campaign", "run", "--help"],
    ["campaign", "report", "--help"],
    ["model", "fit", "--help"],
    ["model", "generate", "--help"],
    ["model", "validate", "--help"],
], ids=" ".join)
def test_help_imports_no_heavy_library(argv, tmp_path):
    status, modules, output = command_imports(argv, tmp_path)
    assert status == 0 and "usage: batreplay" in output
    assert loaded(modules, HEAVY + ("rich",)) == []


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--workload", "x"], "the following arguments are required: --platform, --scheduler, --out"),
    (["run", "--workload", "x", "--platform", "kth-sp2", "--scheduler", "easy", "--out", "o", "--profile", "nosuch"],
     "argument --profile: invalid choice: 'nosuch'"),
    (["run", "--workload", "x", "--platform", "kth-sp2", "--scheduler", "easy", "--out", "o", "--engine", "nosuch"],
     "argument --engine: invalid choice: 'nosuch'"),
    (["sessions", "--workload", "x", "--out", "o", "--zero-runtime", "all"], "argument --zero-runtime: invalid choice"),
    (["campaign", "run", "x.toml", "--executor", "slurm"], "argument --executor: invalid choice: 'slurm'"),
    (["model", "fit", "x.swf", "--out", "m.json", "--select", "site=1"], "argument --select: 'site=1': expected"),
    (["model", "generate", "m.json", "--out", "w.swf"], "one of the arguments --jobs --days is required"),
    (["nosuch"], "invalid choice: 'nosuch'"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else "")
def test_argument_errors_import_no_heavy_library(argv, message, tmp_path):
    status, modules, output = command_imports(argv, tmp_path)
    assert status == 2 and message in output
    assert loaded(modules, HEAVY + ("rich",)) == []


def test_an_unknown_scheduler_is_refused_before_any_scheduler_or_input_is_read(tmp_path):
    """The name is checked against the light list of names; the message is the registry's own."""
    from batreplay.schedulers.registry import load_scheduler

    argv = ["run", "--workload", str(WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"), "--max-jobs", "10",
            "--platform", "kth-sp2", "--scheduler", "nosuch", "--out", "r"]
    status, modules, output = command_imports(argv, tmp_path)
    with pytest.raises(ValueError) as refused:
        load_scheduler("nosuch")
    assert status == 2 and output.strip() == f"batreplay: error: {refused.value}"
    assert loaded(modules, HEAVY) == [] and not (tmp_path / "r").exists()


def test_an_embedded_run_imports_no_report_library(tmp_path):
    """A rigid run on the embedded engine: neither figures, HTML nor Dask, and no session graphs (networkx)."""
    case = GOLDEN / "delays"
    argv = ["run", "--workload", str(case / "workload.json"), "--platform", str(case / "platform.xml"),
            "--scheduler", "easy", "--out", "r", "--quiet"]
    status, modules, output = command_imports(argv, tmp_path)
    assert status == 0 and (tmp_path / "r" / "out_jobs.csv").is_file(), output
    assert loaded(modules, REPORTING + ("networkx",)) == []


def _tiny_campaign(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(f"""
[campaign]
name = "tiny"
root = "."
output_root = "out"

[[logs]]
name = "kth"
workload = "{WORKLOADS / 'KTH-SP2-1996-2.1-cln.swf.gz'}"
platform = "kth-sp2"
max_jobs = 30

[matrix]
platforms = ["recorded"]
schedulers = ["easy"]
replay_models = ["rigid"]
seeds = [0]

[report]
tables = ["scheduling"]
figures = ["submissions"]
""", encoding="utf-8")
    return spec


_WORKER_PROBE = """
import json, sys
from batreplay.campaign.worker import execute
status = execute(json.loads(sys.stdin.read()))
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.__stderr__)
"""


def test_a_campaign_instance_imports_no_report_library_and_its_report_no_pybatsim(tmp_path):
    """An instance process (as a Dask worker starts it: a new interpreter) runs its simulation without the
    report's libraries; the campaign's report reads the run directories without pybatsim or ZeroMQ."""
    from batreplay.campaign.platforms import prepare_platforms
    from batreplay.campaign.spec import load_campaign
    from batreplay.campaign.worker import task_for

    spec = load_campaign(_tiny_campaign(tmp_path))
    (instance,) = spec.instances()
    prepare_platforms(spec, [instance])
    done = subprocess.run([sys.executable, "-c", _WORKER_PROBE], input=json.dumps(task_for(instance, spec)),
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=True)
    report = json.loads(done.stderr.rstrip("\n").split("\n")[-1])
    assert report["status"] == 0 and (tmp_path / "out" / instance.id / "instance.json").is_file()
    assert loaded(report["modules"], REPORTING + ("networkx", "rich")) == []

    status, modules, output = command_imports(["campaign", "report", str(tmp_path / "tiny.toml")], tmp_path)
    assert status == 0 and "1/1 instances" in output
    assert loaded(modules, ("batsim", "zmq")) == []


# --- the light modules are the one definition the heavy ones use -----------------------------------------------

def test_scheduler_names_are_the_registry():
    from batreplay.schedulers.names import FAMILY_MEMBERS, SCHEDULER_NAMES
    from batreplay.schedulers.registry import FAMILY, SCHEDULERS, check_scheduler_options

    assert tuple(SCHEDULERS) == SCHEDULER_NAMES and tuple(FAMILY) == tuple(FAMILY_MEMBERS)
    for name in SCHEDULER_NAMES:  # campaign specs skip the options check when there are none: defaults are valid
        check_scheduler_options(name, {})


def test_conversion_and_engine_choices_are_those_the_heavy_modules_check_against():
    from batreplay.engine import choices as engine
    from batreplay.realbatsim.launcher import DEFAULT_TIMEOUT
    from batreplay.run.spec import part_defaults, run_option
    from batreplay.workloads import batsim_workload, loading
    from batreplay.workloads import choices as conversion

    for name in ("PROFILE_TYPES", "ZERO_RUNTIME_CHOICES", "RES_SOURCE_CHOICES"):
        assert getattr(batsim_workload, name) == getattr(loading, name) == getattr(conversion, name), name
    assert loading.DEFAULT_RECORDED_SPEED == conversion.DEFAULT_RECORDED_SPEED
    assert run_option("engine").choices == engine.ENGINES and DEFAULT_TIMEOUT == engine.DEFAULT_TIMEOUT
    assert run_option("speedup_model").choices == engine.SPEEDUP_MODEL_NAMES
    assert part_defaults() | {"engine": engine.DEFAULT_ENGINE, "batsim_timeout": engine.DEFAULT_TIMEOUT,
                              "profile": conversion.DEFAULT_PROFILE, "zero_runtime": conversion.DEFAULT_ZERO_RUNTIME,
                              "res_source": conversion.DEFAULT_RES_SOURCE,
                              "recorded_speed": conversion.DEFAULT_RECORDED_SPEED} == part_defaults()


def test_every_run_option_shows_the_default_of_its_part():
    from batreplay.cli import build_parser
    from batreplay.run.spec import part_defaults

    run = build_parser()._subparsers._group_actions[0].choices["run"]  # argparse keeps subparsers there
    actions = {action.dest: action for action in run._actions}
    assert {key: actions[key].default for key in part_defaults()} == part_defaults()
