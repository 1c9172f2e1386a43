"""The executor registry: the command line offers exactly the registered executors, both built-ins follow the
Executor protocol, and an executor added by one registry line runs a real campaign instance."""

from __future__ import annotations

import argparse
import json
import sys

import pytest
from conftest import REPO_ROOT
from rich.console import Console

from batreplay.campaign import executors
from batreplay.campaign.cli import add_campaign_commands
from batreplay.campaign.executors import (
    EXECUTORS,
    DaskExecutor,
    Executor,
    LocalExecutor,
    executor_class,
    make_executor,
)
from batreplay.campaign.runner import run_campaign
from batreplay.campaign.spec import load_campaign

QUICK = REPO_ROOT / "expe" / "quick.toml"


def campaign_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_campaign_commands(parser.add_subparsers(dest="command"))
    return parser


def executor_choices(parser: argparse.ArgumentParser) -> list[str]:
    args = parser.parse_args(["campaign", "run", "spec.toml"])
    assert args.executor == "local"
    run_parser = parser._subparsers._group_actions[0].choices["campaign"]._subparsers._group_actions[0].choices["run"]
    return next(a.choices for a in run_parser._actions if a.dest == "executor")


def test_cli_choices_are_the_registry():
    assert executor_choices(campaign_parser()) == list(EXECUTORS) == ["local", "dask"]


def test_builtin_executors_follow_the_protocol():
    local = make_executor("local", workers=3)
    assert isinstance(local, LocalExecutor) and isinstance(local, Executor)
    assert local.workers == 3 and local.name == "local" and local.describe() == "3 local worker process(es)"
    dask = make_executor("dask", scheduler_address="tcp://127.0.0.1:1")  # no connection until run()
    assert isinstance(dask, DaskExecutor) and isinstance(dask, Executor)
    assert executor_class("dask") is DaskExecutor


@pytest.mark.parametrize(("kind", "options", "message"), [
    ("slurm", {}, "unknown executor 'slurm' \\(local or dask\\)"),
    ("local", {"scheduler_address": "tcp://x:1"}, "--scheduler-address is for --executor dask"),
    ("local", {"workers": 0}, "workers must be >= 1"),
    ("dask", {}, "needs --scheduler-address"),
    ("dask", {"workers": 2, "scheduler_address": "tcp://x:1"}, "--workers is for --executor local"),
])
def test_refused_options_are_named(kind, options, message):
    with pytest.raises(ValueError, match=message):
        make_executor(kind, **options)


@pytest.fixture
def serial_registered(monkeypatch):
    from docstring_examples import docstring_example

    module = docstring_example(executors, "from batreplay.campaign.executors import ExecutorOptions, run_instance",
                               "and in :data:`EXECUTORS`", "serial_executor_for_tests")  # as documented
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(executors.EXECUTORS, "serial", f"{module.__name__}:SerialExecutor")


@pytest.mark.slow
def test_an_executor_added_by_one_registry_line_runs_an_instance(serial_registered, tmp_path):
    assert "serial" in executor_choices(campaign_parser())
    executor = make_executor("serial")
    assert isinstance(executor, Executor)
    spec = load_campaign(QUICK, output_root=tmp_path / "root")
    only = spec.instances()[0].id
    summary = run_campaign(spec, executor=executor, only=only, console=Console(quiet=True), show_progress=False)
    assert summary.done == [only] and not summary.failed
    assert json.loads((tmp_path / "root" / only / "instance.json").read_text())["id"] == only
    local_spec = load_campaign(QUICK, output_root=tmp_path / "local")
    run_campaign(local_spec, executor=LocalExecutor(1), only=only, console=Console(quiet=True), show_progress=False)
    serial_bytes = (tmp_path / "root" / only / "out_jobs.csv").read_bytes()
    assert serial_bytes and serial_bytes == (tmp_path / "local" / only / "out_jobs.csv").read_bytes()
