"""The New-run form: choices from the registries, values checked by the command line's code, stable run ids,
generated platforms, and uploads read by the command line's reader."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from batreplay.platforms.reader import read_platform
from batreplay.run.spec import FLAT_FIELDS
from batreplay.schedulers.names import SCHEDULER_NAMES
from batreplay.ui.run_form import FormError, RunForm, build_run, form_choices, save_upload, scheduler_options_text
from batreplay.ui.sandbox import Sandbox
from conftest import WORKLOADS

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
    assert {option["value"] for option in choices["replay"]} == {"rigid", "feedback"}
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


def test_variants_and_node_types_generate_platforms_under_the_runs_folder(sandbox):
    halved = build_run(RunForm(workload=str(KTH), variant="nodes-div2"), sandbox).spec.platform
    assert halved.startswith(str(sandbox.runs_dir / "platforms")) and read_platform(halved).nb_compute == 50
    typed = build_run(RunForm(workload=str(KTH), node_types="types.toml", variant="speed-x2"), sandbox).spec.platform
    platform = read_platform(typed)
    assert platform.nb_compute == 8 and sorted(set(platform.speeds.tolist())) == [2e9, 4e9]


@pytest.mark.parametrize("form, field", [
    (RunForm(workload=None), "workload: choose"),
    (RunForm(workload=str(KTH), scheduler_options="{not json"), "scheduler options: not JSON"),
    (RunForm(workload=str(KTH), scheduler_options='{"depth": 2}'), "scheduler options: scheduler easy: unknown option"),
    (RunForm(workload=str(KTH), max_jobs="0"), "max jobs: "),
    (RunForm(workload=str(KTH), max_jobs="2.5"), "max jobs: "),
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
