"""Job type rules: by field, by thresholds, by a TOML mapping; names, errors and the model file's form."""

from __future__ import annotations

import numpy as np
import pytest

from batreplay.sitemodels.job_types import JobTypeRule


def test_a_field_rule_gives_one_type_per_value_seen():
    rule = JobTypeRule.parse("group")
    codes, names = rule.assign([4, 1, 4, 6, 1])
    assert rule.column() == "group_id" and names == ["group=1", "group=4", "group=6"]
    assert [names[c] for c in codes] == ["group=4", "group=1", "group=4", "group=6", "group=1"]
    assert [rule.swf_value(n) for n in names] == [1, 4, 6]


def test_thresholds_split_a_numeric_field_into_intervals_and_leave_out_empty_ones():
    rule = JobTypeRule.parse("processors:1,8,64")
    codes, names = rule.assign([1, 2, 8, 9, 64, 65, 128])
    assert rule.column() == "processors"
    assert names == ["processors<=1", "1<processors<=8", "8<processors<=64", "processors>64"]
    assert codes.tolist() == [0, 1, 1, 2, 2, 3, 3]
    codes, names = rule.assign([16, 32])  # only one interval used: one type
    assert names == ["8<processors<=64"] and codes.tolist() == [0, 0]
    with pytest.raises(ValueError, match="no field value"):
        rule.swf_value("processors>64")


def test_a_toml_mapping_names_types_and_refuses_unlisted_values_without_rest(tmp_path):
    path = tmp_path / "vo.toml"
    path.write_text('field = "group"\n[[types]]\nname = "lhc"\nvalues = [1, 4]\n[[types]]\nname = "small"\n'
                    'values = [2]\n')
    rule = JobTypeRule.parse(str(path))
    codes, names = rule.assign([4, 2, 1])
    assert names == ["lhc", "small"] and codes.tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match=r"2 jobs have a group the file does not list \(values 6, 9\.\.\.\)"):
        rule.assign([1, 6, 9])
    path.write_text(path.read_text().replace('field = "group"', 'field = "group"\nrest = "other"'))
    rule = JobTypeRule.parse(str(path))
    codes, names = rule.assign([1, 6, 9])
    assert names == ["lhc", "other"] and codes.tolist() == [0, 1, 1]
    assert rule.swf_value("lhc") == 1 and rule.swf_value("other") == -1
    assert JobTypeRule.from_json(rule.to_json()) == rule


@pytest.mark.parametrize(("text", "message"), [
    ("site", "expected 'all', one of group"),
    ("processors:8,1", "thresholds must be finite and increasing"),
    ("processors:a", "thresholds must be numbers"),
    ("run_time", "expected 'all'"),
    ("used_memory:1000", "expected 'all'"),  # (drawn jobs record no memory: no type to draw back)
])
def test_bad_rules_are_refused_naming_the_option(text, message):
    with pytest.raises(ValueError, match=f"^--job-types {text!r}: {message}"):
        JobTypeRule.parse(text)


@pytest.mark.parametrize(("content", "message"), [
    ('field = "site"\n[[types]]\nname = "a"\nvalues = [1]\n', "field: expected one of group"),
    ('field = "group"\n', "expected at least one \\[\\[types\\]\\] table"),
    ('field = "group"\n[[types]]\nname = "a"\nvalues = ["x"]\n', r"types\[0\].values: expected a list of integers"),
    ('field = "group"\n[[types]]\nname = "a"\nvalues = [1]\n[[types]]\nname = "b"\nvalues = [1]\n',
     "listed values must each appear once"),
    ('field = "group"\ncolour = 1\n[[types]]\nname = "a"\nvalues = [1]\n', "unknown key 'colour'"),
    ('field = \n', "not valid TOML: Invalid value"),
])
def test_a_bad_mapping_file_is_refused_naming_the_file_and_key(tmp_path, content, message):
    path = tmp_path / "t.toml"
    path.write_text(content)
    with pytest.raises(ValueError, match=f"^{path}: .*{message}"):
        JobTypeRule.parse(str(path))


@pytest.mark.parametrize("text", ["all", "user", "queue", "partition", "executable", "run_time:60,3600"])
def test_rules_round_trip_through_the_model_file(text):
    rule = JobTypeRule.parse(text)
    assert JobTypeRule.from_json(rule.to_json()) == rule
    assert rule.assign(np.array([5, 5]))[0].tolist() == [0, 0]
    with pytest.raises(ValueError, match="do not match"):
        JobTypeRule.from_json(rule.to_json() | {"kind": "field" if rule.kind != "field" else "all"})


def test_a_missing_mapping_file_is_named(tmp_path):
    with pytest.raises(ValueError, match=f"^{tmp_path / 'no.toml'}: no such job types file$"):
        JobTypeRule.parse(str(tmp_path / "no.toml"))


def test_jobs_without_a_value_get_a_type_of_their_own_under_thresholds():
    rule = JobTypeRule.parse("requested_time:3600")
    codes, names = rule.assign([-1, 600, 7200, -1])
    assert names == ["requested_time<=3600", "requested_time>3600", "requested_time unknown"]
    assert codes.tolist() == [2, 0, 1, 2]


def test_a_model_files_rule_never_reads_a_file():
    with pytest.raises(ValueError, match="names a file"):
        JobTypeRule.from_json({"rule": "types.toml", "kind": "thresholds", "field": "processors", "thresholds": [1]})
