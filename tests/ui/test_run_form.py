"""The New-run form: choices from the registries, values checked by the command line's code, stable run ids,
generated platforms, and uploads read by the command line's reader."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from batreplay.platforms.reader import read_platform
from batreplay.replay.registry import USER_MODELS
from batreplay.run.spec import FLAT_FIELDS
from batreplay.schedulers.names import SCHEDULER_NAMES
from batreplay.ui.run_form import (
    OPTION_FIELD,
    FormError,
    RunForm,
    build_run,
    form_choices,
    form_options,
    form_values,
    save_upload,
    scheduler_options_text,
)
from batreplay.ui.sandbox import Sandbox
from batreplay.workloads.loading import load_workload
from conftest import REPO_ROOT, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "types.toml").write_text('[[node_types]]\nname = "thin"\ncount = 6\nspeed = 1e9\n'
                                       '[[node_types]]\nname = "fat"\ncount = 2\nspeed = 2e9\ncores = 4\n')
    return Sandbox(tmp_path / "runs", [WORKLOADS, inputs])


def test_the_choices_come_from_the_registries(sandbox):
    choices = form_choices(sandbox)
    assert [option["value"] for option in choices["scheduler"]] == list(SCHEDULER_NAMES)
    assert [option["value"] for option in choices["replay"]] == list(USER_MODELS)  # (closed, open: a site model)
    assert str(KTH.resolve()) in [option["value"] for option in choices["workload"]]  # (links followed)
    assert [option["value"] for option in choices["platform"]][:2] == ["kth-sp2", "sdsc-sp2"]
    assert [option["value"] for option in choices["variant"]][0] == "recorded"
    assert [option["label"] for option in choices["node_types"]] == ["inputs/types.toml"]
    assert json.loads(scheduler_options_text("easy-coscheduling"))["jobs_per_node"] == 2  # declared defaults


def test_the_same_form_names_the_same_run_and_a_change_names_another(sandbox):
    form = RunForm(workload=str(KTH), max_jobs="500")
    first = build_run(form, sandbox)
    assert build_run(form, sandbox).run_id == first.run_id
    assert build_run(RunForm(workload="KTH-SP2-1996-2.1-cln.swf.gz", max_jobs=500), sandbox).run_id == first.run_id
    assert build_run(RunForm(workload=str(KTH), max_jobs="501"), sandbox).run_id != first.run_id
    assert build_run(RunForm(workload=str(KTH), max_jobs="500", scheduler="fcfs"), sandbox).run_id != first.run_id
    assert first.run_id.startswith("kth-sp2-1996-2.1-cln-easy-")
    assert first.spec.out_dir == sandbox.runs_dir / first.run_id and first.spec.force
    assert first.spec.conversion.max_jobs == 500


def test_a_label_keeps_the_simulations_hash_and_adds_its_own(sandbox):
    """Issue 30, part 2: the label is no part of what is simulated; a labelled run is the same simulation's hash and
    the label's, so that the same label reuses its run and another label gets a folder (and run.json) of its own."""
    import hashlib

    plain = build_run(RunForm(workload=str(KTH), max_jobs="500"), sandbox)
    labelled = build_run(RunForm(workload=str(KTH), max_jobs="500", label="  EASY baseline "), sandbox)
    digest = hashlib.sha256(b"EASY baseline").hexdigest()[:8]
    assert labelled.run_id == f"{plain.run_id}-l{digest}" and labelled.spec.label == "EASY baseline"
    assert labelled.spec.to_dict() == {**plain.spec.to_dict(), "out_dir": str(sandbox.runs_dir / labelled.run_id),
                                       "label": "EASY baseline"}
    assert build_run(RunForm(workload=str(KTH), max_jobs="500", label="EASY baseline"), sandbox).run_id == \
        labelled.run_id
    assert build_run(RunForm(workload=str(KTH), max_jobs="500", label="other"), sandbox).run_id.startswith(
        plain.run_id + "-l")
    assert build_run(RunForm(workload=str(KTH), max_jobs="500", label="  "), sandbox).run_id == plain.run_id  # blank
    with pytest.raises(ValueError) as caught:
        build_run(RunForm(workload=str(KTH), label="two\nlines"), sandbox)
    assert str(caught.value) == ("label: must be one line of text of 1 to 120 characters (or left out): character 4 "
                                 "is U+000A, a line break")


def test_variants_and_node_types_generate_platforms_under_the_runs_folder(sandbox):
    halved = build_run(RunForm(workload=str(KTH), variant="nodes-div2"), sandbox).spec.platform
    assert halved.startswith(str(sandbox.runs_dir / "platforms")) and read_platform(halved).nb_compute == 50
    typed = build_run(RunForm(workload=str(KTH), node_types="types.toml", variant="speed-x2"), sandbox).spec.platform
    platform = read_platform(typed)
    assert platform.nb_compute == 8 and sorted(set(platform.speeds.tolist())) == [2e9, 4e9]


@pytest.mark.parametrize("form, field", [
    (RunForm(workload=None), "workload: choose"),
    (RunForm(workload=str(KTH), scheduler_options="{not json"), "scheduler options: not valid JSON"),
    (RunForm(workload=str(KTH), scheduler_options="[1, 2]"), "scheduler options: expected a JSON object"),
    (RunForm(workload=str(KTH), scheduler_options='{"depth": 2}'), "scheduler options: scheduler easy: unknown option"),
    (RunForm(workload=str(KTH), max_jobs="0"), "max jobs: "),
    (RunForm(workload=str(KTH), max_jobs="2.5"), "max jobs: "),
    (RunForm(workload=str(KTH), walltime_factor="-1"), "walltime factor: must be a number > 0"),
    (RunForm(workload=str(KTH), recorded_speed="fast"), "recorded speed: 'fast' is not a number"),
    (RunForm(workload=str(KTH), speedup_model="magic"), "speedup model: 'magic': expected one of none, table"),
    (RunForm(workload=str(KTH), speedup_options="[1]"), "speedup options: expected a JSON object"),
    (RunForm(workload=str(KTH), speedup_options='{"seed": 1}'), "speedup options (--speedup-options) given "
                                                                "without a speedup model"),
    (RunForm(workload=str(KTH), compute_sharing="maybe"), "compute sharing: expected true or false"),
    (RunForm(workload=str(KTH), variant="nodes-x3"), "platform variant: "),
    (RunForm(workload=str(KTH), engine="simgrid"), "engine: "),
    (RunForm(workload=str(KTH), replay="feedback", sessions="arrival:-5"), "sessions"),
    (RunForm(workload=str(KTH), scheduler="easy", scheduler_options='{"slots": true}'), "compute sharing"),
])
def test_bad_values_are_refused_in_one_line_naming_the_field(sandbox, form, field):
    with pytest.raises(ValueError) as caught:
        build_run(form, sandbox)
    assert field in str(caught.value) and "\n" not in str(caught.value)


def _data_url(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode("ascii")


def test_an_upload_is_read_by_the_command_lines_reader_before_it_is_kept(sandbox):
    first_lines = b"".join(gzip.open(KTH).readlines()[:60])
    kept = save_upload(sandbox, "kth-head.swf", _data_url(first_lines))
    assert kept.parent == sandbox.runs_dir / "uploads" and kept.read_bytes() == first_lines
    assert build_run(RunForm(workload=str(kept.relative_to(sandbox.runs_dir))), sandbox).spec.workload == kept
    with pytest.raises(FormError, match=r"upload bad\.swf: .*bad\.swf.*line 2"):
        save_upload(sandbox, "bad.swf", _data_url(b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n2 x\n"))
    with pytest.raises(FormError, match="larger than the limit"):
        save_upload(sandbox, "big.swf", _data_url(first_lines), limit=100)
    with pytest.raises(FormError, match="expected a .swf"):
        save_upload(sandbox, "notes.txt", _data_url(b"hello"))
    assert sorted(path.name for path in (sandbox.runs_dir / "uploads").iterdir()) == [kept.name]


def test_the_run_description_is_the_command_lines(sandbox):
    spec = build_run(RunForm(workload=str(KTH), replay="feedback", sessions="a30", max_jobs=100), sandbox).spec
    flat = spec.to_dict()
    assert flat["replay"] == "feedback" and flat["sessions"] == "a30" and flat["max_jobs"] == 100
    assert set(flat) - {"workload", "platform", "out_dir", "force", "timeout"} <= set(FLAT_FIELDS)


# Issue 25, item 14: every path of the form goes through the folder check, and an outside path gets one message
# whether it exists or not (below: /etc exists, /nonexistent-batreplay does not).
OUTSIDE = ("/etc", "/nonexistent-batreplay")


def _refusal(form: RunForm, sandbox: Sandbox, text: str) -> str:
    """The one-line refusal of ``form``, with ``text`` (the path it names) taken out."""
    with pytest.raises(ValueError) as caught:
        build_run(form, sandbox)
    message = str(caught.value)
    assert "\n" not in message and text in message, message
    return message.replace(text, "<path>")


def test_a_sessions_folder_outside_is_refused_alike_whether_it_exists_or_not(sandbox):
    refusals = {_refusal(RunForm(workload=str(KTH), replay="feedback", sessions=text), sandbox, text)
                for text in (*OUTSIDE, "/etc/index.json", "/nonexistent-batreplay/index.json")}
    assert refusals == {"sessions: <path> is outside the folders this app may read "
                        f"({sandbox.describe_roots()})"}


def test_a_sessions_folder_inside_is_used_and_checked(sandbox, tmp_path):
    from batreplay.replay.session_source import write_sessions

    inputs = tmp_path / "inputs"
    write_sessions(KTH, "arrival", 60, inputs / "graphs", max_jobs=50)
    for text in ("graphs", "graphs/index.json", str(inputs / "graphs")):
        spec = build_run(RunForm(workload=str(KTH), replay="feedback", sessions=text, max_jobs=50), sandbox).spec
        assert spec.to_dict()["sessions"] == str(inputs / "graphs")
    assert build_run(RunForm(workload=str(KTH), replay="feedback", sessions="a30"), sandbox).spec.to_dict()[
        "sessions"] == "a30"
    (inputs / "empty").mkdir()
    with pytest.raises(FormError, match=r"^sessions: empty has no index.json"):
        build_run(RunForm(workload=str(KTH), replay="feedback", sessions="empty"), sandbox)
    (tmp_path / "secret.json").write_text("{}")
    (inputs / "graphs" / "user_leak.json").symlink_to(tmp_path / "secret.json")
    with pytest.raises(FormError, match=r"^sessions: graphs/user_leak.json is a link leading outside"):
        build_run(RunForm(workload=str(KTH), replay="feedback", sessions="graphs"), sandbox)
    with pytest.raises(FormError, match=r"^sessions: 'nothing' is not a rule .* nor a folder of the allowed"):
        build_run(RunForm(workload=str(KTH), replay="feedback", sessions="nothing"), sandbox)


def test_a_speedup_table_in_the_scheduler_options_is_held_to_the_allowed_folders(sandbox, tmp_path):
    def form(table: str) -> RunForm:
        options = {"jobs_per_node": 1, "speedup_model": "table", "speedup_options": {"table": table}}
        return RunForm(workload=str(KTH), scheduler="easy-coscheduling", scheduler_options=json.dumps(options))

    refusals = {_refusal(form(text), sandbox, text) for text in ("/etc/passwd", "/nonexistent-batreplay.csv")}
    assert refusals == {"scheduler options, speedup_options table: <path> is outside the folders this app may "
                        f"read ({sandbox.describe_roots()})"}
    (tmp_path / "inputs" / "speedups.csv").write_text("job_class,neighbour_class,speedup\na,a,0.9\n")
    spec = build_run(form("speedups.csv"), sandbox).spec
    assert spec.scheduler.options["speedup_options"]["table"] == str(tmp_path / "inputs" / "speedups.csv")


# Issue 25, item 16: scheduler options nested too deep for the JSON parser, or too long, get a one-line error.
# Issue 26, item 1: the depth is bounded once, by the parser (batreplay.options.json_object), not by walking the value.
LONG_OPTIONS = '{"threshold": 1.0, "x": "' + "y" * 70_000 + '"}'


@pytest.mark.parametrize("text, expected", [
    ("[" * 100_000, "100,000 characters, more than the 65,536 allowed"),
    # well-formed; 30,000 levels exceed the parser's reach whatever the recursion limit (pybatsim raises it to
    # 10,000 for the whole process)
    ("[" * 30_000 + "]" * 30_000, "JSON nested too deeply"),
    ('{"":' * 11_000 + "1" + "}" * 11_000, "JSON nested too deeply"),
    ("[" * 40 + "]" * 40, "expected a JSON object"),  # parsed: no object
    ('{"a": ' * 40 + "1" + "}" * 40, "scheduler easy: unknown option 'a'"),  # parsed: the scheduler's check
    (LONG_OPTIONS, f"{len(LONG_OPTIONS):,} characters, more than the 65,536 allowed"),
])
def test_scheduler_options_too_deep_or_too_long_are_refused_in_one_line(sandbox, text, expected):
    with pytest.raises(FormError) as caught:
        build_run(RunForm(workload=str(KTH), scheduler_options=text), sandbox)
    message = str(caught.value)
    assert message.startswith("scheduler options: ") and expected in message and "\n" not in message
    assert len(message) < 2000  # (a message quoting the text is cut)


def test_the_json_depth_check_is_the_parsers_alone():
    """No walk of the parsed value: the form's module has no nesting counter left, and the depth bound is gone."""
    import batreplay.ui.run_form as run_form

    assert not hasattr(run_form, "_nesting") and not hasattr(run_form, "MAX_OPTIONS_DEPTH")
    assert not hasattr(run_form, "json_top_level_keys")


# Issue 25, item 15 (max jobs), made generic by issue 26, item 1: an integer field is read as the command line reads
# its flag (int, then the option's bounds); the page's pattern is WHOLE_NUMBER for an integer of at least 1.
@pytest.mark.parametrize("value", ["-5", "2.5", "1e3", "0", "three", "9" * 5000, -5, 2.5, True])
def test_max_jobs_that_is_no_whole_number_is_refused(sandbox, value):
    with pytest.raises(FormError) as caught:
        build_run(RunForm(workload=str(KTH), max_jobs=value), sandbox)
    message = str(caught.value)
    assert message.startswith("max jobs: ") and "\n" not in message and len(message) < 500, message


def test_max_jobs_accepts_what_the_fields_pattern_accepts(sandbox):
    import re

    from batreplay.run.spec import run_option
    from batreplay.ui.run_form import WHOLE_NUMBER, number_pattern

    assert number_pattern(run_option("max_jobs")) == WHOLE_NUMBER
    for text in (" 7 ", "007", "2000"):
        assert re.fullmatch(WHOLE_NUMBER, text)
        assert build_run(RunForm(workload=str(KTH), max_jobs=text), sandbox).spec.conversion.max_jobs == int(text)
    for text in ("-5", "2.5", "1e3", "0"):
        assert not re.fullmatch(WHOLE_NUMBER, text)


# Issue 25, item 18: the lists offer workloads and node-type tables only, never the runs folder's own outputs.
def _write_listing_inputs(runs, inputs) -> None:
    """A runs folder holding a run's outputs, a failure record, a campaign's and an upload; an inputs folder
    holding a campaign file, a metrics file, and Batsim workloads (one too large to read for a listing)."""
    run_dir = runs / "kth-easy-0123"
    run_dir.mkdir(parents=True)
    workload = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 10}}}
    for name, document in (("instance.json", {"campaign": "ui", "id": "kth-easy-0123"}),
                           ("metrics.json", {"nb_jobs": 1, "makespan": 10}), ("workload.json", workload),
                           ("run.json", {"spec": {}})):
        (run_dir / name).write_text(json.dumps(document))
    (runs / "kth-fcfs-4567.failed.json").write_text(json.dumps({"error": "x", "params": {}}))
    (runs / "campaigns" / "tiny").mkdir(parents=True)
    (runs / "campaigns" / "tiny" / "workload.json").write_text(json.dumps(workload))
    (runs / "uploads").mkdir()
    (runs / "uploads" / "0a1b2c3d4e5f-mine.swf").write_text("1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n")
    (runs / "uploads" / "0a1b2c3d4e5f-mine.json").write_text(json.dumps(workload))
    (inputs / "batsim.json").write_text(json.dumps({"description": "a test", **workload}))
    # larger than JSON_PARSE_BYTES: offered by its name, unread (the reader checks it when the form is sent)
    (inputs / "huge.json").write_text('{"nb_res": 4, "jobs": [' + '{"id": 1}, ' * 200_000)
    (inputs / "metrics.json").write_text(json.dumps({"nb_jobs": 1, "makespan": 10, "note": "jobs"}))
    (inputs / "nested.json").write_text(json.dumps({"results": {"nb_res": 4, "jobs": []}}))
    (inputs / "list.json").write_text(json.dumps([{"nb_res": 4}]))
    (inputs / "deep.json").write_text("[" * 200_000 + "]" * 200_000)  # (too deep for the parser: not offered)
    (inputs / "old-run").mkdir()  # a run directory outside the runs folder: none of its files
    (inputs / "old-run" / "run.json").write_text(json.dumps({"spec": {}}))
    (inputs / "old-run" / "workload.json").write_text(json.dumps(workload))
    (inputs / "graphs").mkdir()  # a folder of session graphs (batreplay sessions): none of its files
    (inputs / "graphs" / "index.json").write_text(json.dumps({"users": []}))
    (inputs / "graphs" / "user_1.json").write_text(json.dumps({"jobs": [], "sessions": []}))
    (inputs / "big-metrics").mkdir()
    (inputs / "big-metrics" / "metrics.json").write_text(json.dumps({"jobs": list(range(300_000))}))  # (by name)
    (inputs / "sub").mkdir()
    (inputs / "sub" / "log.swf.gz").write_bytes(gzip.compress(b"; nothing\n"))
    (inputs / "campaign.toml").write_text('[campaign]\nname = "c"\n[[logs]]\nname = "l"\nworkload = "x.swf"\n'
                                          'node_types = "types.toml"\n')
    (inputs / "broken.toml").write_text("node_types = [\n")


def test_the_lists_offer_only_workloads_and_node_types_never_run_outputs(sandbox, tmp_path):
    runs, inputs = sandbox.runs_dir, tmp_path / "inputs"
    _write_listing_inputs(runs, inputs)
    sandbox = Sandbox(runs, [inputs])  # (the shared workloads left out: only these files)
    choices = form_choices(sandbox)
    offered = sorted(option["label"] for option in choices["workload"])
    assert offered == ["inputs/batsim.json", "inputs/huge.json", "inputs/sub/log.swf.gz",
                       "runs/uploads/0a1b2c3d4e5f-mine.json", "runs/uploads/0a1b2c3d4e5f-mine.swf"]
    assert [option["label"] for option in choices["node_types"]] == ["inputs/types.toml"]
    # the reader refuses what the list offers unread, in one line naming the file
    with pytest.raises(ValueError) as caught:
        load_workload(inputs / "huge.json")
    assert "huge.json" in str(caught.value) and "\n" not in str(caught.value)


def test_the_runs_folder_inside_an_allowed_folder_offers_its_uploads_only(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    top = tmp_path / "top"
    (top / "inputs").mkdir(parents=True)
    _write_listing_inputs(top / "runs", top / "inputs")
    sandbox = Sandbox(top / "runs", [top])
    offered = sorted(option["label"] for option in form_choices(sandbox)["workload"])
    assert all("kth-easy" not in label and "campaigns" not in label for label in offered), offered
    assert "runs/uploads/0a1b2c3d4e5f-mine.swf" in offered and "top/inputs/batsim.json" in offered


# Issue 26, item 1: the generic fields of the run options (declared form=True), read as the command line reads its
# flags, then checked by RunSpec.build.
SPEEDUPS = REPO_ROOT / "expe" / "speedups"  # the shipped two-class table (expe/co-scheduling.toml)
CLASS_RULE = {"field": "res", "threshold": 4, "below": "compute", "above": "memory"}


@pytest.fixture
def speedup_sandbox(sandbox):
    """The sandbox with the folder of the shipped speedup tables allowed too."""
    return Sandbox(sandbox.runs_dir, [*sandbox.roots[1:], SPEEDUPS])


def _coscheduling_form(table: str, **options) -> RunForm:
    return RunForm(workload=str(KTH), scheduler="easy-coscheduling",
                   scheduler_options=scheduler_options_text("easy-coscheduling"), max_jobs="200",
                   speedup_model="table", speedup_options=json.dumps({"table": table, "class_rule": CLASS_RULE}),
                   **options)


def test_a_coscheduling_run_takes_the_engines_table_model_from_the_generic_fields(speedup_sandbox, tmp_path):
    from batreplay.run.runner import run

    planned = build_run(_coscheduling_form("two-classes.csv"), speedup_sandbox)
    spec = planned.spec
    table = str((SPEEDUPS / "two-classes.csv").resolve())
    assert spec.engine.speedup_model == "table" and spec.engine.speedup_options["table"] == table
    assert spec.scheduler.options["speedup_model"] == "table"  # (given the engine's model: it names none)
    flat = spec.to_dict()
    assert flat["speedup_model"] == "table" and flat["speedup_options"]["class_rule"] == CLASS_RULE
    # the table's contents name the run too: the same table changed, another run
    copy = tmp_path / "inputs" / "mine.csv"
    copy.write_bytes((SPEEDUPS / "two-classes.csv").read_bytes())
    before = build_run(_coscheduling_form("mine.csv"), speedup_sandbox).run_id
    copy.write_bytes(copy.read_bytes().replace(b"0.85", b"0.8"))
    assert build_run(_coscheduling_form("mine.csv"), speedup_sandbox).run_id != before
    assert build_run(_coscheduling_form("two-classes.csv"), speedup_sandbox).run_id == planned.run_id
    run(spec.replace(out_dir=str(tmp_path / "run")))
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["spec"]
    assert recorded["speedup_model"] == "table" and recorded["max_jobs"] == 200


def test_a_speedup_table_in_the_engines_options_is_held_to_the_allowed_folders(speedup_sandbox):
    refusals = {_refusal(_coscheduling_form(text), speedup_sandbox, text)
                for text in ("/etc/passwd", "/nonexistent-batreplay.csv")}
    assert refusals == {"speedup options, table: <path> is outside the folders this app may read "
                        f"({speedup_sandbox.describe_roots()})"}
    with pytest.raises(FormError, match=r"^speedup options: .*\.\.\.$"):  # (cut: the whole text is not repeated)
        build_run(RunForm(workload=str(KTH), speedup_model="table", speedup_options="{" + " " * 2000), speedup_sandbox)


def test_a_job_slot_run_on_node_types_with_compute_sharing(sandbox, tmp_path):
    from batreplay.run.runner import run

    (tmp_path / "inputs" / "slots.toml").write_text(
        '[[node_types]]\nname = "quad"\ncount = 100\nspeed = 1e9\ncores = 4\nslots = 4\n')
    slots = json.dumps({"slots": True})
    with pytest.raises(FormError, match="^scheduler option slots puts several jobs on a node: it needs compute"):
        build_run(RunForm(workload=str(KTH), node_types="slots.toml", scheduler_options=slots, max_jobs="200"),
                  sandbox)
    spec = build_run(RunForm(workload=str(KTH), node_types="slots.toml", scheduler_options=slots, max_jobs="200",
                             compute_sharing=True), sandbox).spec
    assert spec.engine.compute_sharing and spec.scheduler.options == {"slots": True}
    assert read_platform(spec.platform).nb_compute == 100
    run(spec.replace(out_dir=str(tmp_path / "run")))
    assert json.loads((tmp_path / "run" / "run.json").read_text())["spec"]["compute_sharing"] is True
    jobs = (tmp_path / "run" / "out_jobs.csv").read_text().splitlines()
    assert len(jobs) == 201


def test_blank_generic_fields_take_the_options_defaults(sandbox):
    from batreplay.run.spec import run_option

    blank = {declaration.name: "" for declaration, _part in form_options()}
    spec = build_run(RunForm(workload=str(KTH), options=blank), sandbox).spec
    default = build_run(RunForm(workload=str(KTH)), sandbox).spec
    assert spec == default
    flat = spec.to_dict()
    assert all(flat.get(name, run_option(name).default) == run_option(name).default for name in blank)  # (label too)


def test_the_browsers_values_become_the_forms_options():
    ids = [{"type": OPTION_FIELD, "name": name} for name in ("compute_sharing", "max_jobs", "nothing")]
    assert form_values(ids, [["on"], 200, "x"]) == {"compute_sharing": True, "max_jobs": "200"}
    assert form_values(ids[:1], [[]]) == {"compute_sharing": False}
    assert form_values(None, None) == {} and form_values(3, "x") == {}
    with pytest.raises(TypeError, match="no field or form option nothing"):
        RunForm(workload=str(KTH), nothing=1)


def test_the_form_builds_the_user_models_on_batches_and_the_overheads(sandbox):
    """The batch models take sessions and (distribution) a seed from the form, as ``batreplay run`` does; random job
    overheads are generic fields too, refused with a replay that registers its jobs."""
    planned = build_run(RunForm(workload=str(KTH), max_jobs="500", replay="distribution", sessions="a60",
                                options={"model_seed": "3"}), sandbox)
    assert (planned.spec.replay.model, planned.spec.replay.sessions, planned.spec.replay.model_seed) == (
        "distribution", "a60", 3)
    fluid = build_run(RunForm(workload=str(KTH), max_jobs="500", replay="fluid", sessions="arrival:60"), sandbox)
    assert fluid.spec.replay.model == "fluid" and fluid.run_id != planned.run_id
    with pytest.raises(FormError, match="--model-seed: an option of --replay distribution"):
        build_run(RunForm(workload=str(KTH), replay="fluid", options={"model_seed": "3"}), sandbox)
    rigid = build_run(RunForm(workload=str(KTH), max_jobs="500", options={"overheads": "30", "overhead_seed": "2"}),
                      sandbox)
    assert (rigid.spec.conversion.overheads, rigid.spec.conversion.overhead_seed) == (30.0, 2)
    with pytest.raises(FormError, match=r"overheads \(--overheads\) with the adjusted replay"):
        build_run(RunForm(workload=str(KTH), replay="adjusted", options={"overheads": "30"}), sandbox)
