"""The Models page's actions, without a browser: a fit from the page writes the very model ``batreplay model fit``
writes, a validation from the page the very table ``batreplay model validate`` writes; bad fields are one-line
errors naming the field; the New-run form runs a model closed or open and refuses a model with a log's replay (and
the other way round)."""

from __future__ import annotations

import time

import pytest

from batreplay.cli import main
from batreplay.ui.models import (
    DONE,
    FAILED,
    Validations,
    fit_from_form,
    log_choices,
    model_choices,
    plan_validation,
    validation_result,
)
from batreplay.ui.run_form import FormError, RunForm, build_run, form_choices
from batreplay.ui.sandbox import Sandbox, SandboxError
from conftest import WORKLOADS
from dash_tree import components

LCG = WORKLOADS / "LCG.swf.gz"
pytestmark = pytest.mark.skipif(not LCG.is_file(), reason="shared workloads not available")
GRIDKA = {"log": str(LCG), "job_types": "group", "select": "partition=156,157"}


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A sandbox (runs folder, the shared workloads and an inputs folder allowed) where the page fitted the GridKa
    model with seed 1, and the CLI fitted the same model in the inputs folder."""
    root = tmp_path_factory.mktemp("models")
    inputs = root / "inputs"
    inputs.mkdir()
    assert main(["platform", "--nodes", "48", "--out", str(inputs / "cluster-48.xml")]) == 0
    sandbox = Sandbox(root / "runs", [WORKLOADS, inputs])
    page = fit_from_form(sandbox, **GRIDKA, name="gridka", options={"seed": "1"})
    (inputs / "cli").mkdir()
    assert main(["model", "fit", str(LCG), "--job-types", "group", "--select", "partition=156,157", "--seed", "1",
                 "--out", str(inputs / "cli" / "gridka.json")]) == 0
    return sandbox, page, inputs


def test_a_fit_from_the_page_is_the_command_lines(fitted):
    sandbox, page, inputs = fitted
    assert page.path == sandbox.runs_dir / "models" / "gridka.json"
    assert page.path.read_bytes() == (inputs / "cli" / "gridka.json").read_bytes()  # byte for byte
    assert page.test_jobs.read_bytes() == (inputs / "cli" / "gridka.test-jobs.csv").read_bytes()
    assert [row["type"] for row in page.types] == ["group=1", "group=2", "group=4", "group=6"]
    assert sum(row["jobs"] for row in page.types) == 2204 and abs(sum(row["share"] for row in page.types) - 1) < 1e-3
    assert any("kept" in note or "dropped" in note for note in page.notes)
    # the model is offered to validate and, marked, to run; the runs' own files never are
    assert str(page.path) in {choice["value"] for choice in model_choices(sandbox)}
    workloads = {choice["value"]: choice["label"] for choice in form_choices(sandbox)["workload"]}
    assert workloads[str(page.path)].endswith("(site model)")
    assert workloads[str(inputs / "cli" / "gridka.json")].endswith("(site model)")
    assert str(LCG) in {choice["value"] for choice in log_choices(sandbox)}


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": "gridka"}, "name: a model gridka exists already"),
    ({"name": "a b"}, "name: 'a b': use letters, digits"),
    ({"name": ""}, "name: '': use letters"),
    ({"name": "x", "select": "partition=many"}, "select: 'partition=many': expected FIELD=V1,V2"),
    ({"name": "x", "job_types": "colour"}, "job types: 'colour'"),
    ({"name": "x", "options": {"split": "1.5"}}, "split: must be a number > 0 and <= 1"),
    ({"name": "x", "options": {"io_share": "2"}}, "io share: must be a number from 0 to below 1"),
    ({"name": "x", "log": str(WORKLOADS.parent / "batsim-golden" / "delays" / "workload.json")}, "log:"),
    ({"name": "x", "log": "/etc/passwd"}, "log:"),
])
def test_a_bad_fit_field_is_a_one_line_error_naming_it(fitted, fields, message):
    sandbox, _page, _inputs = fitted
    before = sorted((sandbox.runs_dir / "models").iterdir())
    with pytest.raises((FormError, SandboxError)) as raised:
        fit_from_form(sandbox, **{**GRIDKA, "options": {}, **fields})
    assert message in str(raised.value) and "\n" not in str(raised.value)
    assert sorted((sandbox.runs_dir / "models").iterdir()) == before  # nothing written


def test_a_validation_from_the_page_is_the_command_lines(fitted, tmp_path):
    sandbox, page, inputs = fitted
    platform = str(inputs / "cluster-48.xml")
    form = {"model": str(page.path), "log": str(LCG), "platform": platform, "scheduler": "easy",
            "scheduler_options": None, "engine": "embedded"}
    planned = plan_validation(sandbox, **form, options={"seed": "1", "mode": "closed"})
    assert plan_validation(sandbox, **form, options={"seed": "1"}).validation_id == planned.validation_id
    assert plan_validation(sandbox, **form, options={"seed": "2"}).validation_id != planned.validation_id
    assert planned.validation_id.startswith("gridka-closed-s1-")
    validations = Validations()
    state = validations.submit(planned)
    deadline = time.monotonic() + 300  # only a failure waits this long
    while state.status not in (DONE, FAILED) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert state.status == DONE, state.error
    assert main(["model", "validate", str(page.path), "--log", str(LCG), "--platform", platform, "--seed", "1",
                 "--out", str(tmp_path / "cli")]) == 0
    written = planned.out_dir / "validation.csv"
    assert written.read_bytes() == (tmp_path / "cli" / "validation.csv").read_bytes()
    rows, figures = validation_result(sandbox, planned.validation_id)
    assert rows[0]["measure"] == "throughput" and rows[0]["deviation"].endswith(" %")
    assert figures == ["run_times.png", "throughput_utilisation.png"]
    assert validations.submit(planned).status == DONE  # the same form again: its result, not a new run
    validations.shutdown()


@pytest.mark.parametrize(("fields", "options", "message"), [
    ({"model": None}, {}, "model: choose a site model"),
    ({"model": str(LCG)}, {}, "model: LCG.swf.gz is not a site model"),
    ({"platform": None}, {}, "platform: choose a platform"),
    ({}, {"mode": "open", "population": "30"}, "--population: closed runs only"),
    ({}, {"seed": "-1"}, "seed: must be an integer >= 0"),
    ({}, {"population": "many"}, "--population 'many': expected 'fill' or a whole number"),
    ({}, {"warm_up": "soon"}, "warm up"),
    ({"scheduler_options": '{"nosuch": 1}'}, {}, "scheduler options:"),
])
def test_a_bad_validation_field_is_a_one_line_error_naming_it(fitted, fields, options, message):
    sandbox, page, _inputs = fitted
    form = {"model": str(page.path), "log": str(LCG), "platform": "kth-sp2", "scheduler": "easy",
            "scheduler_options": None, "engine": "embedded", **fields}
    with pytest.raises((FormError, SandboxError)) as raised:
        plan_validation(sandbox, **form, options=options)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_the_new_run_form_runs_a_model_closed_or_open_and_refuses_mixed_kinds(fitted):
    sandbox, page, _inputs = fitted
    assert {"closed", "open"} <= {choice["value"] for choice in form_choices(sandbox)["replay"]}
    closed = build_run(RunForm(workload=str(page.path), replay="closed", population="48", closed_jobs="500",
                               model_seed="3"), sandbox).spec
    assert (closed.replay.model, closed.replay.population, closed.replay.closed_jobs, closed.replay.model_seed) == (
        "closed", "48", 500, 3)
    opened = build_run(RunForm(workload=str(page.path), replay="open", open_duration="86400", warm_up="3600",
                               profile="parallel_homogeneous"), sandbox).spec  # (a choice list sends its default)
    assert (opened.replay.open_duration, opened.metrics.warm_up, opened.replay.sessions) == (86400.0, 3600.0, None)
    for form, message in ((RunForm(workload=str(page.path), replay="rigid"), "workload: gridka.json is a site model"),
                          (RunForm(workload=str(LCG), replay="closed", closed_jobs="5"),
                           "replay: closed draws its jobs from a site model"),
                          (RunForm(workload=str(page.path), replay="open"), "--open-jobs N or --open-duration"),
                          (RunForm(workload=str(page.path), replay="open", open_jobs="5", max_jobs="3"),
                           "max jobs: gridka.json is a site model, whose jobs are drawn, not converted")):
        with pytest.raises(FormError, match=message):
            build_run(form, sandbox)


def test_the_pages_fields_are_the_declared_options_grouped_by_what_they_set(fitted):
    from dash import html

    from batreplay.ui.models_page import models_page

    sandbox, _page, _inputs = fitted
    groups = {item.id: [part.id["name"] for part in components(item.children)
                        if isinstance(getattr(part, "id", None), dict)]
              for item in components(models_page(sandbox))
              if isinstance(item, html.Details) and isinstance(item.id, str)}
    assert groups == {
        "fit-options-fit": ["split", "seed", "speed", "reference_io_rate", "io_share", "demand_rounds", "max_bins"],
        "validate-options-validation": ["mode", "population", "seed", "warm_up"],
        "validate-options-engine": ["compute_sharing", "speedup_model", "speedup_options"]}


def test_stopping_the_app_stops_a_validation_under_way_and_leaves_nothing(fitted):
    """A validation under a scheduler that thinks 20 ms over each job that ends (thousands of jobs: a minute at the
    least, whatever the machine), stopped once it runs: its process ends, and no folder of it is left."""
    from ui_server import SLOW_SCHEDULER

    sandbox, page, inputs = fitted
    (inputs / SLOW_SCHEDULER[0]).write_text(SLOW_SCHEDULER[1])
    planned = plan_validation(sandbox, model=str(page.path), log=str(LCG), platform=str(inputs / "cluster-48.xml"),
                              scheduler=str(inputs / SLOW_SCHEDULER[0]), scheduler_options=None, engine="embedded",
                              options={"seed": "4"})
    validations = Validations()
    state = validations.submit(planned)
    deadline = time.monotonic() + 120  # only a failure waits this long
    while state.status != "running" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert state.status == "running"
    validations.shutdown()
    assert state.status == FAILED and state.error.startswith("stopped (exit code")
    assert sorted(path.name for path in (sandbox.runs_dir / "validations").iterdir()
                  if planned.validation_id in path.name) == []  # neither the folder nor its staging sibling


def test_the_validation_files_route_serves_a_validations_regular_files_only(fitted, tmp_path):
    from batreplay.ui.app import UiConfig, create_app

    sandbox, _page, _inputs = fitted
    folder = sandbox.runs_dir / "validations" / "m-closed-s0-000000000000"
    (folder / "figures").mkdir(parents=True)
    (folder / "validation.csv").write_text("measure\n")
    (folder / "figures" / "a.png").write_bytes(b"\x89PNG")
    (tmp_path / "secret.txt").write_text("secret")
    (folder / "figures" / "link.png").symlink_to(tmp_path / "secret.txt")
    (sandbox.runs_dir / "validations" / "linked").symlink_to(folder)
    client = create_app(UiConfig(runs_dir=sandbox.runs_dir)).server.test_client()
    base = "/validations/m-closed-s0-000000000000"
    assert client.get(f"{base}/figures/a.png").data == b"\x89PNG"
    assert client.get(f"{base}/validation.csv").status_code == 200
    for url in (f"{base}/figures/link.png", f"{base}/../../models/gridka.json", f"{base}/nosuch.csv",
                "/validations/linked/validation.csv", "/validations/..%2fmodels/gridka.json"):
        assert client.get(url).status_code == 404, url
