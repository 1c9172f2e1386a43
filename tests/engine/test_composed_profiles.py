"""Composed profiles on the embedded engine: the checks Batsim 4.2.1 makes (or fails to make) on them, their steps,
and invariants on generated workloads (hypothesis). Their exactness against a real Batsim is in
``test_recorded_cases.py`` and ``test_real_batsim_composed.py``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.kernel import wire_numbers
from batreplay.engine.options import EngineOptions
from batreplay.engine.profiles import (InvalidProfileError, UnsupportedProfileError, leaves_of, may_take_other_sizes,
                                       profiles_in_use, validate_profiles)
from batreplay.engine.simulator import BatsimEngine
from batreplay.formats.out_jobs_writer import jobs_frame
from test_engine_properties import FirstFit, Recorder

D3 = {"type": "delay", "delay": 3}
C2G = {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}


@pytest.mark.parametrize("profiles, words", [
    ({"c": {"type": "composed", "seq": ["nowhere"]}}, "the profile 'nowhere' of its 'seq' does not exist"),
    ({"a": {"type": "composed", "seq": ["b"]}, "b": {"type": "composed", "seq": ["a"]}},
     "contains itself: a -> b -> a"),
    ({"d": D3, "c": {"type": "composed", "seq": ["d"], "repeat": 0}}, "'repeat' must be an integer >= 1 (got 0)"),
    ({"d": D3, "c": {"type": "composed", "seq": ["d"], "repeat": True}}, "'repeat' must be an integer >= 1"),
    ({"c": {"type": "composed", "seq": []}}, "'seq' must be a non-empty list of profile names"),
    ({"c": {"type": "composed"}}, "lacks the field 'seq'"),
    ({"d": {"type": "delay", "delay": 3, "ret": 1.5}}, "'ret' must be an integer from -1"),
    ({"d": {"type": "delay", "delay": 3, "ret": -2}}, "never ends the job for -2"),
])
def test_profiles_batsim_would_crash_on_are_refused_with_the_reason(profiles, words):
    with pytest.raises(InvalidProfileError, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        validate_profiles(profiles)


def test_steps_follow_repeat_and_nesting_with_batsims_indices_and_return_codes():
    profiles = {"d3": D3, "c2g": C2G, "inner": {"type": "composed", "seq": ["c2g"], "ret": 5},
                "outer": {"type": "composed", "seq": ["d3", "inner"], "repeat": 2, "ret": 1}}
    steps = leaves_of(profiles, "outer")
    assert [(s.name, s.path, s.closes) for s in steps] == [
        ("d3", (("outer", 0),), ()),
        ("c2g", (("outer", 1), ("inner", 0)), (5,)),
        ("d3", (("outer", 2),), ()),
        ("c2g", (("outer", 3), ("inner", 0)), (5, 1)),
    ]
    assert [s.name for s in leaves_of(profiles, "d3")] == ["d3"] and leaves_of(profiles, "d3")[0].path == ()


def test_other_allocation_sizes_only_for_sequences_of_total_amount_profiles():
    tot = {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0}
    profiles = {"tot": tot, "d3": D3, "seq_tot": {"type": "composed", "seq": ["tot", "tot"]},
                "seq_mixed": {"type": "composed", "seq": ["tot", "d3"]},
                "seq_nested": {"type": "composed", "seq": ["seq_tot"]}}
    assert may_take_other_sizes(profiles, "tot") and may_take_other_sizes(profiles, "seq_tot")
    assert not may_take_other_sizes(profiles, "seq_mixed") and not may_take_other_sizes(profiles, "seq_nested")
    assert not may_take_other_sizes(profiles, "d3")


def test_profiles_kept_are_those_of_jobs_and_their_steps():
    profiles = {"d3": D3, "c2g": C2G, "x": {"type": "delay", "delay": 1}, "round": {"type": "composed", "seq": ["d3"]},
                "top": {"type": "composed", "seq": ["round", "c2g"]}, "unused": {"type": "composed", "seq": ["x"]}}
    assert profiles_in_use(profiles, {"top"}) == {"top", "round", "d3", "c2g"}


def test_numbers_are_sent_as_batsim_prints_them():
    assert wire_numbers({"walltime": 4.000000001, "res": 2, "cpu": [1.0000004, 2], "tag": "a"}) == {
        "walltime": 4.0, "res": 2, "cpu": [1.0, 2], "tag": "a"}


def test_a_composed_profile_registered_by_the_decision_process_is_refused():
    engine = BatsimEngine([("node_0", 1e9)], {"w0": {"nb_res": 1, "jobs": [], "profiles": {}}},
                          options=EngineOptions(dynamic_jobs=True))
    engine.next_request()
    with pytest.raises(UnsupportedProfileError, match="never links a registered composed profile to its steps"):
        engine.apply_reply({"now": 0.0, "events": [{"timestamp": 0.0, "type": "REGISTER_PROFILE", "data": {
            "workload_name": "dyn", "profile_name": "c", "profile": {"type": "composed", "seq": ["d"]}}}]})
        engine.next_request()


@st.composite
def composed_workloads(draw):
    """Jobs of composed profiles made of whole-second delay steps, repeated, some nested, some with a return code."""
    delays = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    profiles = {f"d{d}": {"type": "delay", "delay": d} for d in delays}
    entries = []
    for i in range(draw(st.integers(1, 15))):
        seq = draw(st.lists(st.sampled_from(sorted(profiles)), min_size=1, max_size=3))
        name = f"c{i}"
        profiles[name] = {"type": "composed", "seq": seq, "repeat": draw(st.integers(1, 3)),
                          "ret": draw(st.sampled_from([0, 0, 0, 4]))}
        if draw(st.booleans()):  # nested once more
            profiles[f"n{i}"] = {"type": "composed", "seq": [name, seq[0]]}
            name = f"n{i}"
        entries.append({"id": str(i), "subtime": draw(st.integers(0, 30)), "res": draw(st.integers(1, 4)),
                        "walltime": draw(st.integers(1, 40)), "profile": name})
    return {"nb_res": 4, "jobs": entries, "profiles": profiles}


def _total_seconds(profiles, name):
    profile = profiles[name]
    if profile["type"] == "delay":
        return profile["delay"]
    return profile.get("repeat", 1) * sum(_total_seconds(profiles, item) for item in profile["seq"])


def _return_code(profiles, name):
    """The code a composed job that ran all its delay steps ends with (the first non-zero one met)."""
    profile = profiles[name]
    if profile["type"] == "delay":
        return profile.get("ret", 0)
    for _ in range(profile.get("repeat", 1)):
        for item in profile["seq"]:
            code = _return_code(profiles, item)
            if code:
                return code
    return profile.get("ret", 0)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(composed_workloads())
def test_composed_jobs_keep_the_invariants_and_their_walltime(workload):
    engine = BatsimEngine([(f"node_{i}", 1e9) for i in range(4)], {"w0": workload})
    recorder = Recorder()
    run_scheduler(engine, FirstFit(), on_request=recorder)
    out = jobs_frame(engine.records)
    assert recorder.nows == sorted(recorder.nows)  # time never goes back
    assert sorted(out["job_id"]) == sorted(j["id"] for j in workload["jobs"])  # every job ends once
    profiles = workload["profiles"]
    for row in out.itertuples():
        total = _total_seconds(profiles, row.profile)
        if total < row.requested_time:  # every step ran: the first non-zero return code decides
            code = _return_code(profiles, row.profile)
            assert row.final_state == ("COMPLETED_SUCCESSFULLY" if code == 0 else "COMPLETED_FAILED")
            assert row.execution_time == total or code != 0
        elif row.final_state != "COMPLETED_FAILED":  # (a step's code may end it before its walltime)
            assert row.final_state == "COMPLETED_WALLTIME_REACHED" and row.execution_time == row.requested_time
    spans = {}
    for row in out.itertuples():  # no host computes two jobs at once
        for host in ProcSet.from_str(row.allocated_resources):
            spans.setdefault(host, []).append((row.starting_time, row.finish_time))
    for intervals in spans.values():
        intervals.sort()
        assert all(end <= start for (_, end), (start, _) in zip(intervals, intervals[1:]))


def test_deep_nesting_is_refused_and_wide_nesting_is_checked_once():
    deep = {"c0": D3} | {f"c{i}": {"type": "composed", "seq": [f"c{i - 1}"]} for i in range(1, 120)}
    with pytest.raises(InvalidProfileError, match="nests composed profiles 101 deep, more than the 100"):
        validate_profiles(deep)
    wide = {"c0": D3} | {f"c{i}": {"type": "composed", "seq": [f"c{i - 1}", f"c{i - 1}"]} for i in range(1, 40)}
    validate_profiles(wide)  # 2**39 paths: visited once each profile, or this never returns


def test_a_parallel_step_without_one_cpu_value_per_host_is_refused_when_the_job_starts():
    from batreplay.engine.options import EngineError

    workload = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 2, "walltime": 50, "profile": "c"}],
                "profiles": {"p3": {"type": "parallel", "cpu": [1e9, 1e9, 1e9], "com": [0] * 9}, "d3": D3,
                             "c": {"type": "composed", "seq": ["d3", "p3"]}}}
    engine = BatsimEngine([("node_0", 1e9), ("node_1", 1e9)], {"w0": workload})
    with pytest.raises(EngineError, match="step 'p3' of its composed profile has 3 cpu values but 2 hosts"):
        run_scheduler(engine, FirstFit())
