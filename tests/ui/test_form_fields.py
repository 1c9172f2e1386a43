"""Issue 26, item 1: the New-run form's generic fields are generated from the run options' declarations
(``form=True``), one per option, so that an option declared for the form appears in it with no change in ui/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dash import dcc, html

from batreplay.options import Option
from batreplay.run.spec import run_options
from batreplay.ui.pages import new_run_page, option_groups
from batreplay.ui.run_form import CHECKED, OPTION_FIELD, WHOLE_NUMBER, FormError, parse_option
from batreplay.ui.sandbox import Sandbox, SandboxError
from dash_tree import components


def _fields(tree) -> dict[str, object]:
    """The generic fields' controls of ``tree`` by option name, in page order."""
    return {item.id["name"]: item for item in components(tree)
            if isinstance(getattr(item, "id", None), dict) and item.id.get("type") == OPTION_FIELD}


def test_the_form_shows_one_field_per_option_declared_for_it_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    page = new_run_page(Sandbox(tmp_path / "runs"))
    assert list(_fields(page)) == [option.name for option in run_options() if option.form]
    groups = {item.id: [name for name in _fields(item)] for item in components(page)
              if isinstance(item, html.Details)}
    assert groups == {"options-conversion": ["profile", "recorded_speed", "max_jobs", "walltime_factor",
                                             "zero_runtime", "res_source", "demand_rounds", "io_share",
                                             "reference_io_rate", "overheads", "overhead_seed"],
                      "options-engine": ["compute_sharing", "speedup_model", "speedup_options"],
                      "options-replay": ["population", "closed_jobs", "closed_duration", "open_jobs",
                                         "open_duration", "model_seed"],
                      "options-metrics": ["warm_up"], "options-run": ["label"]}
    special = {item.id for item in components(page) if isinstance(getattr(item, "id", None), str)}
    assert {"workload", "platform", "node-types", "scheduler", "scheduler-options", "replay", "sessions",
            "engine"} <= special and "max-jobs" not in special


def _synthetic() -> list[tuple[Option, str]]:
    """Options no part declares, with names and defaults filled in as :func:`declared_options` fills them."""
    return [
        (Option(help="how many widgets", kind=int, at_least=1, optional=True, default_text="all widgets",
                name="widgets"), "conversion"),
        (Option(help="a delay", kind=float, above=0, unit="s", name="delay", default=2.5), "conversion"),
        (Option(help="an offset of 100% or less", kind=int, name="offset", default=0), "conversion"),
        (Option(help="whether to frobnicate", kind=bool, name="frobnicate", default=True), "engine"),
        (Option(help="a flavour", choices=("sweet", "sour"), optional=True, default_text="plain", name="flavour"),
         "engine"),
        (Option(help="a colour", choices=("red", "blue"), name="colour", default="blue"), "engine"),
        (Option(help="options of the flavour", kind=dict, name="flavour_options", default={}), "replay"),
        (Option(help="a file", kind=Path, optional=True, name="notes"), "future-part"),
    ]


def test_the_fields_of_a_synthetic_option_list_follow_their_declarations():
    groups = option_groups(_synthetic())
    assert [group.id for group in groups] == ["options-conversion", "options-engine", "options-replay",
                                              "options-future-part"]
    assert [group.children[0].children for group in groups] == ["Workload conversion", "Engine features",
                                                                "User model", "Future-part"]
    fields = _fields(groups)
    assert list(fields) == [option.name for option, _part in _synthetic()]
    widgets, delay, offset = fields["widgets"], fields["delay"], fields["offset"]
    assert isinstance(widgets, dcc.Input) and widgets.type == "text" and widgets.pattern == WHOLE_NUMBER
    assert widgets.inputMode == "numeric" and widgets.placeholder == "all widgets"
    assert re.fullmatch(delay.pattern, "0.5") and not re.fullmatch(delay.pattern, "0")
    assert not re.fullmatch(delay.pattern, "-1") and re.fullmatch(delay.pattern, "1e-3")
    assert delay.placeholder == "2.5" and re.fullmatch(offset.pattern, "-3")
    assert not re.fullmatch(offset.pattern, "1.5")
    frobnicate = fields["frobnicate"]
    assert isinstance(frobnicate, dcc.Checklist) and frobnicate.value == [CHECKED]
    flavour, colour = fields["flavour"], fields["colour"]
    assert isinstance(flavour, dcc.Dropdown) and flavour.value == ""
    assert flavour.options == [{"label": "plain", "value": ""}, {"label": "sweet", "value": "sweet"},
                               {"label": "sour", "value": "sour"}]
    assert colour.value == "blue" and [choice["value"] for choice in colour.options] == ["red", "blue"]
    assert isinstance(fields["flavour_options"], dcc.Textarea) and fields["flavour_options"].value == "{}"
    assert isinstance(fields["notes"], dcc.Input) and not hasattr(fields["notes"], "pattern")
    # label with the unit, help as tooltip (with bounds and default, as --help says them), note under the field
    wrappers = {item.children[1].id["name"]: item for item in components(groups)
                if isinstance(item, html.Div) and "option-field" in (getattr(item, "className", "") or "")}
    assert wrappers["delay"].children[0].children == "Delay (s)"
    assert wrappers["delay"].title == "a delay (> 0 s; default: 2.5)"
    assert wrappers["offset"].title == "an offset of 100% or less (default: 0)"  # (no %% of argparse)
    assert wrappers["delay"].children[2].children == "> 0 s; empty: 2.5"
    assert wrappers["flavour_options"].children[0].children == "Flavour options (JSON object)"


def test_a_synthetic_options_value_is_read_as_the_command_line_reads_it(tmp_path):
    widgets, delay, _offset, frobnicate, flavour, _colour, flavour_options, notes = (
        option for option, _part in _synthetic())
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "notes.txt").write_text("hello")
    sandbox = Sandbox(tmp_path / "runs", [tmp_path / "inputs"])
    assert parse_option(widgets, " 12 ", sandbox) == 12
    assert parse_option(delay, "1e-3", sandbox) == 0.001
    assert parse_option(frobnicate, False, sandbox) is False
    assert parse_option(flavour, "sour", sandbox) == "sour"
    assert parse_option(flavour_options, '{"sugar": 2}', sandbox) == {"sugar": 2}
    assert parse_option(notes, "notes.txt", sandbox) == (tmp_path / "inputs" / "notes.txt").resolve()
    for option, text, message in [
        (widgets, "0", "widgets: must be an integer >= 1 (or left out), got 0"),
        (widgets, "2.5", "widgets: '2.5' is not an integer"),
        (delay, "-1", "delay: must be a number > 0 s, got -1.0"),
        (flavour, "salty", "flavour: 'salty': expected one of sweet, sour"),
        (flavour_options, "[1]", "flavour options: expected a JSON object"),
        (flavour_options, "{" * 70_000, "flavour options: 70,000 characters, more than the 65,536 allowed"),
        (frobnicate, "perhaps", "frobnicate: expected true or false, got 'perhaps'"),
    ]:
        with pytest.raises(FormError) as caught:
            parse_option(option, text, sandbox)
        assert str(caught.value).startswith(message) and "\n" not in str(caught.value), str(caught.value)
    with pytest.raises(SandboxError, match="^notes: /etc/passwd is outside the folders this app may read"):
        parse_option(notes, "/etc/passwd", sandbox)
