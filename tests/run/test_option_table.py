"""One table of run options (issue 26, item 1): an option declared once, in its part, reaches ``batreplay run``'s
flags and help, a campaign file's keys and checks, the campaign instance's parameters and id, and ``run.json``.

The test adds a dummy option to the workload conversion part (a subclass with one more field, put in the run
description's part table for the test) and looks for it everywhere, without touching any other code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from conftest import GOLDEN

from batreplay.cli import main
from batreplay.options import Option, OptionError, declared_options, option
from batreplay.run import spec as run_spec
from batreplay.workloads.loading import WorkloadOptions

GOLDEN_DELAYS = GOLDEN / "delays"


@dataclass(frozen=True)
class WorkloadOptionsWithDummy(WorkloadOptions):
    """The conversion part with one more option, as a contributor would add it."""

    dummy_rate: float = option(2.5, kind=float, above=0, unit="jobs/s", campaign="log",
                               help="a dummy rate that nothing reads")


@pytest.fixture
def dummy_option(monkeypatch):
    monkeypatch.setitem(run_spec._PARTS, "conversion", WorkloadOptionsWithDummy)
    return run_spec.run_option("dummy_rate")


def _run_args(out, *extra: str) -> list[str]:
    return ["run", "--workload", str(GOLDEN_DELAYS / "workload.json"), "--platform",
            str(GOLDEN_DELAYS / "platform.xml"), "--scheduler", "easy", "--out", str(out), "--quiet", *extra]


def test_a_new_option_is_a_flag_with_its_help_and_reaches_run_json(dummy_option, tmp_path, capsys):
    assert dummy_option.cli_flag == "--dummy-rate" and dummy_option.default == 2.5
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--dummy-rate DUMMY_RATE a dummy rate that nothing reads (> 0 jobs/s; default: 2.5)" in help_text
    assert main(_run_args(tmp_path / "a", "--dummy-rate", "4")) == 0
    spec = json.loads((tmp_path / "a" / "run.json").read_text())["spec"]
    assert spec["dummy_rate"] == 4.0  # recorded: not its default
    assert main(_run_args(tmp_path / "b")) == 0
    assert json.loads((tmp_path / "b" / "run.json").read_text())["spec"]["dummy_rate"] == 2.5  # it applied
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(_run_args(tmp_path / "c", "--dummy-rate", "-1"))
    err = capsys.readouterr().err.strip()
    assert err == "batreplay: error: dummy_rate (--dummy-rate) must be a number > 0 jobs/s, got -1.0"
    assert not (tmp_path / "c").exists()


def _campaign(tmp_path, line: str):
    from batreplay.campaign.spec import load_campaign

    path = tmp_path / "c.toml"
    path.write_text(f"""
[campaign]
name = "t"
output_root = "out"

[[logs]]
name = "golden"
workload = "{(GOLDEN_DELAYS / 'workload.json').as_posix()}"
platform = "{(GOLDEN_DELAYS / 'platform.xml').as_posix()}"
{line}

[matrix]
schedulers = ["easy"]
""")
    return path, lambda: load_campaign(path)


def test_a_new_option_is_a_checked_campaign_key_and_enters_the_instance(dummy_option, tmp_path):
    from batreplay.campaign.spec import CampaignSpecError
    from batreplay.campaign.worker import run_spec_of, task_for

    path, load = _campaign(tmp_path, "dummy_rate = 0")
    with pytest.raises(CampaignSpecError) as info:
        load()
    assert str(info.value) == f"{path}: [[logs]] #1, key 'dummy_rate': must be a number > 0 jobs/s, got 0.0"
    _path, load = _campaign(tmp_path, "")
    (plain,) = load().instances()
    assert "dummy_rate" not in plain.params  # at its default: older instance ids stay the same
    _path, load = _campaign(tmp_path, "dummy_rate = 7")
    spec = load()
    (chosen,) = spec.instances()
    assert chosen.params["dummy_rate"] == 7.0 and chosen.id != plain.id
    assert run_spec_of(task_for(chosen, spec)).conversion.dummy_rate == 7.0


def test_declarations_give_each_option_once_and_every_part_field_is_one():
    names = [declaration.name for declaration in run_spec.run_options()]
    assert len(names) == len(set(names))
    for part, kind in run_spec._PARTS.items():  # every field of a part is a declared option
        import dataclasses

        assert {f.name for f in dataclasses.fields(kind)} == {d.field for d in declared_options(kind)}, part
    for declaration in run_spec.run_options():
        assert declaration.help and declaration.kind in (str, int, float, bool, dict, type(declaration.default)) or \
            declaration.required
        if declaration.allowed is not None and declaration.default is not None:
            assert declaration.default in declaration.allowed, declaration.name
        if not declaration.required:
            assert declaration.check(declaration.default) == declaration.default, declaration.name


@pytest.mark.parametrize("text, kind, expected", [
    ("3", int, 3), (" 2.5 ", float, 2.5), ("true", bool, True), ("False", bool, False), ('{"a": 1}', dict, {"a": 1}),
])
def test_typed_text_becomes_the_value(text, kind, expected):
    assert Option("x", kind=kind, name="x").parse_text(text) == expected


@pytest.mark.parametrize("value, message", [
    (True, r"x \(--x\) must be a number > 0, got True"),
    (float("nan"), r"x \(--x\) must be a number > 0, got nan"),
    (float("inf"), r"x \(--x\) must be a number > 0, got inf"),
    (0, r"x \(--x\) must be a number > 0, got 0.0"),
    ("1", r"x \(--x\) must be a number > 0, got '1'"),
])
def test_bad_numbers_are_refused_in_one_line(value, message):
    with pytest.raises(OptionError, match=message):
        Option("x", kind=float, above=0, name="x").check(value)


def test_a_json_option_says_where_its_text_is_not_json():
    with pytest.raises(OptionError, match=r"--x: not valid JSON: Expecting value at line 1 column 6"):
        Option("x", kind=dict, name="x").parse_text('{"a":}')
    with pytest.raises(OptionError, match=r"--x: JSON nested too deeply"):
        Option("x", kind=dict, name="x").parse_text("[" * 100_000 + "]" * 100_000)


def test_an_integer_of_any_size_is_checked_against_the_bounds_not_overflowing():
    huge = 10 ** 400
    assert Option("x", kind=int, at_least=1, name="x").check(huge) == huge
    with pytest.raises(OptionError, match=r"x \(--x\) must be an integer >= 1, got -10{10}"):
        Option("x", kind=int, at_least=1, name="x").check(-(10 ** 400))
