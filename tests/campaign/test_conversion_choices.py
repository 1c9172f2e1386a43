"""Conversion choices of a campaign's logs (``zero_runtime``, ``res_source``; issue 12 items 14-15): a log's or
``[defaults]``' choice reaches the run of its instances, a bad value is refused in one line naming the file and
key, and a choice left at its default keeps the instance ids that committed reports name."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest
from conftest import REPO_ROOT, WORKLOADS

from batreplay.campaign.spec import CampaignSpecError, campaign_options, load_campaign, make_instance
from batreplay.campaign.worker import run_spec_of, task_for
from batreplay.workloads.loading import RES_SOURCE_CHOICES, ZERO_RUNTIME_CHOICES, WorkloadOptions

EXPE = REPO_ROOT / "expe"
KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
#: The log options chosen among named values that a campaign records only when set (added after the first reports).
CONVERSION_CHOICES = {declaration.name: declaration.choices for declaration in campaign_options("log")
                      if declaration.choices is not None and declaration.recorded == "when-set"}


def conversion_choice_default(key: str) -> str:
    return next(declaration.default for declaration in campaign_options("log") if declaration.name == key)


#: A choice of each key that is not its default.
OTHER = {"zero_runtime": "min", "res_source": "requested"}


def spec_text(log_lines: str = "", defaults: str = "") -> str:
    return f"""
[campaign]
name = "t"
output_root = "out"

{f"[defaults]{chr(10)}{defaults}" if defaults else ""}

[[logs]]
name = "kth"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"
{log_lines}

[matrix]
schedulers = ["fcfs"]
"""


def load(tmp_path, text: str):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return load_campaign(path)


def test_the_table_matches_the_workload_options():
    assert CONVERSION_CHOICES == {"zero_runtime": ZERO_RUNTIME_CHOICES, "res_source": RES_SOURCE_CHOICES}
    assert {key: conversion_choice_default(key) for key in CONVERSION_CHOICES} == \
        {"zero_runtime": WorkloadOptions().zero_runtime, "res_source": WorkloadOptions().res_source}
    assert set(OTHER) == set(CONVERSION_CHOICES)
    assert all(OTHER[key] != conversion_choice_default(key) for key in OTHER)


@pytest.mark.parametrize("key", list(CONVERSION_CHOICES))
@pytest.mark.parametrize("where", ["log", "defaults"])
def test_a_choice_reaches_the_run_spec(tmp_path, key, where):
    line = f'{key} = "{OTHER[key]}"'
    spec = load(tmp_path, spec_text(log_lines=line) if where == "log" else spec_text(defaults=line))
    (instance,) = spec.instances()
    assert instance.log.options[key] == OTHER[key]
    assert instance.params[key] == OTHER[key]
    flat = run_spec_of(task_for(instance, spec)).to_dict()
    assert flat[key] == OTHER[key]
    others = [k for k in CONVERSION_CHOICES if k != key]
    assert all(flat[k] == conversion_choice_default(k) for k in others)


def test_a_log_overrides_the_defaults(tmp_path):
    spec = load(tmp_path, spec_text(log_lines='res_source = "allocated"', defaults='res_source = "requested"'))
    (instance,) = spec.instances()
    assert instance.log.options["res_source"] == "allocated" and "res_source" not in instance.params


@pytest.mark.parametrize("key", list(CONVERSION_CHOICES))
@pytest.mark.parametrize("where, place", [("log", r"\[\[logs\]\] #1"), ("defaults", r"\[defaults\]")])
def test_a_bad_choice_is_one_line_naming_file_and_key(tmp_path, key, where, place):
    line = f'{key} = "keep"'
    path = tmp_path / "c.toml"
    path.write_text(spec_text(log_lines=line) if where == "log" else spec_text(defaults=line))
    expected = rf"{place}, key '{key}': 'keep': expected one of {', '.join(CONVERSION_CHOICES[key])}"
    with pytest.raises(CampaignSpecError, match=expected) as info:
        load_campaign(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
    path.write_text(spec_text(log_lines=f"{key} = 1"))
    with pytest.raises(CampaignSpecError, match=rf"key '{key}': expected a string"):
        load_campaign(path)


def test_default_choices_leave_ids_unchanged(tmp_path):
    plain = load(tmp_path, spec_text()).instances()[0]
    explicit = load(tmp_path, spec_text(log_lines="\n".join(
        f'{key} = "{conversion_choice_default(key)}"' for key in CONVERSION_CHOICES))).instances()[0]
    assert explicit.id == plain.id and not set(CONVERSION_CHOICES) & set(plain.params)
    chosen = make_instance(replace(plain.log, options={**plain.log.options, "res_source": "requested"}),
                           plain.experiment, plain.replay, 0, "embedded")
    assert chosen.id != plain.id


@pytest.mark.parametrize("committed", sorted((EXPE / "results").glob("*/instances.csv")),
                         ids=lambda p: p.parent.name)
def test_committed_reports_keep_their_ids(committed):
    """Instances whose logs leave ``res_source`` at its default (the key added after these reports) keep the ids
    the committed reports name, in their experiments."""
    table = pd.read_csv(committed)
    spec = load_campaign(EXPE / f"{committed.parent.name}.toml")
    kept = [i.id for i in spec.instances()
            if "res_source" not in i.params and i.experiment.name in set(table["experiment"])]
    assert kept and set(kept) <= set(table["id"])


def test_fcfs_vs_easy_converts_hpc2n_with_requested_processors():
    # Rauch 2022's Schedulus takes the SWF requested processors; only HPC2N has jobs where they differ
    spec = load_campaign(EXPE / "fcfs-vs-easy.toml")
    assert {log.name: log.options["res_source"] for log in spec.logs} == \
        {"hpc2n": "requested", "ctc-sp2": "allocated", "metacentrum": "allocated"}
    assert [(e.name, e.scheduler) for e in spec.experiments] == \
        [("FCFS", "fcfs"), ("EASY", "easy"), ("EASY (Schedulus)", "easy-schedulus")]
