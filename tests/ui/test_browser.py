"""The web GUI end to end, in headless Chromium, as a user drives it: fill the New-run form, watch the run, find
it in Runs, open its detail page, cancel a long run, and get the one-line errors of a path that leaves the
allowed folders and of a bad upload.

The expected values are computed independently: the same run through ``batreplay.run.runner.run`` (the command
line's path) must give the same ``out_jobs.csv``, byte for byte, and the makespan the Runs table shows.
"""

from __future__ import annotations

import json
import os
import re

import pandas as pd
import pytest

from batreplay.analysis.metric import SECONDS_IN
from batreplay.cli import main
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec, run_options
from conftest import REPO_ROOT, WORKLOADS
from plotly_gestures import meta, wait_meta
from ui_server import PATIENCE_S, SLOW_SCHEDULER, SPEEDUPS, browser, page, ui_server  # noqa: F401 - fixtures

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
# slow: each test drives a browser (left out of the README's fast loop, run by .ci/run's slow step)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (WORKLOADS / KTH).is_file(), reason="shared workloads not available")]


def snapshot(page, name: str) -> None:
    """Save a full-page screenshot as ``$BATREPLAY_SCREENSHOTS/<name>.png`` when that variable names a folder
    (to look at the pages by eye; ``docs/images/`` holds the README's)."""
    folder = os.environ.get("BATREPLAY_SCREENSHOTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=True)


def option_field(name: str) -> str:
    """The CSS selector of the generic field of run option ``name``: its pattern-matching id
    ``{"type": "run-option", "name": name}`` as Dash writes it in the page (keys sorted, JSON)."""
    return f"""[id='{{"name":"{name}","type":"run-option"}}']"""


def choose(page, dropdown: str, value: str) -> None:
    """Pick ``value`` in the Dash dropdown ``dropdown`` (an id, or a selector starting with ``[``) as a user does:
    open it, click the option."""
    page.click(dropdown if dropdown.startswith("[") else f"#{dropdown}")
    page.click(f"[role=option]:has(input[value='{value}'])")


def press_launch(page) -> str:
    """Press Launch and wait for the run's status; returns the run id the page shows."""
    page.click("#launch")
    page.wait_for_function("document.querySelector('#run-status') && "
                           "document.querySelector('#run-status').textContent.includes(':')")
    return page.text_content("#run-status").split(":")[0]


def choose_scheduler(page, scheduler: str) -> None:
    """Pick ``scheduler`` and wait for its options field to hold its declared defaults (a callback fills it)."""
    from batreplay.ui.run_form import scheduler_options_text

    choose(page, "scheduler", scheduler)
    expected = json.dumps(scheduler_options_text(scheduler))
    page.wait_for_function(f"document.querySelector('#scheduler-options').value === {expected}")


def launch(page, server, *, workload: str, scheduler: str = "easy", max_jobs: int | None = None) -> str:
    """Fill the New-run form and press Launch; returns the run id the page shows."""
    page.goto(server.page_url("/"))
    page.fill("#workload-path", workload)
    choose(page, "scheduler", scheduler)
    if max_jobs is not None:
        page.fill(option_field("max_jobs"), str(max_jobs))
    return press_launch(page)


@pytest.fixture(scope="module")
def cli_easy_2000(tmp_path_factory):
    """The reference: 2,000 KTH-SP2 jobs with EASY, run as ``batreplay run`` runs it."""
    out = tmp_path_factory.mktemp("cli") / "easy"
    run(RunSpec.build(workload=WORKLOADS / KTH, platform="kth-sp2", scheduler="easy", max_jobs=2000, out_dir=out))
    return out


def test_a_run_launched_from_the_form_is_the_command_lines_run_and_is_listed_with_its_makespan(
        page, ui_server, cli_easy_2000):
    run_id = launch(page, ui_server, workload=KTH, max_jobs=2000)
    page.wait_for_selector("#open-run", timeout=PATIENCE_S * 1000)
    snapshot(page, "ui-new-run")
    assert "finished" in page.text_content("#run-status")
    assert page.get_attribute("#progress", "value") == "1"
    produced = ui_server.runs_dir / run_id / "out_jobs.csv"
    assert produced.read_bytes() == (cli_easy_2000 / "out_jobs.csv").read_bytes()

    page.goto(ui_server.page_url("/runs"))
    row = page.locator("#runs-table tr", has_text=run_id)
    row.wait_for()
    headers = page.locator("#runs-table th.dash-header").all_text_contents()
    cells = row.locator("td.dash-cell").all_text_contents()
    shown = dict(zip([header.strip() for header in headers], [cell.strip() for cell in cells]))
    snapshot(page, "ui-runs")
    expected = pd.read_csv(cli_easy_2000 / "out_jobs.csv")
    makespan = expected.finish_time.max() - expected.submission_time.min()
    heading = next(name for name in shown if name.startswith("makespan ("))  # (in the unit its values call for)
    unit = heading.removeprefix("makespan (").removesuffix(")")
    assert float(shown[heading].replace(",", "")) == pytest.approx(makespan / SECONDS_IN[unit], abs=0.0051)
    assert shown["jobs"] == "2,000 of 2,000 max" and shown["scheduler"] == "easy" and shown["status"] == "done"

    # the same form again: the finished run is reused, not run a second time
    mtime = os.stat(produced).st_mtime_ns
    assert launch(page, ui_server, workload=KTH, max_jobs=2000) == run_id
    page.wait_for_selector("#open-run")
    assert "reused" in page.text_content("#run-status")
    assert os.stat(produced).st_mtime_ns == mtime


def test_the_detail_page_draws_every_started_job_in_the_gantt_chart_and_links_every_file(
        page, ui_server, cli_easy_2000):
    run_id = launch(page, ui_server, workload=KTH, max_jobs=2000)
    page.wait_for_selector("#open-run")
    page.click("#open-run")
    wait_meta(page, "gantt", "true", PATIENCE_S)  # (the chart is drawn by a callback once the page is there)
    drawn = meta(page, "gantt")["jobs"]
    page.wait_for_timeout(1000)  # (the figures below the Gantt chart finish drawing: for the screenshot only)
    snapshot(page, "ui-run-detail")
    jobs = pd.read_csv(cli_easy_2000 / "out_jobs.csv")
    assert drawn == int((jobs.starting_time >= 0).sum()) == 2000
    # the adequacy table against the log the run replayed (Baranov et al. 2018), as `batreplay analyze --swf` has it
    page.wait_for_selector("#adequacy-table td")
    first_k = page.locator("#adequacy-table tr", has_text="all").locator("td").all_text_contents()
    assert first_k[0].startswith("all") and "2,000" in first_k[0]
    links = page.locator("a.download").all_text_contents()
    assert sorted(links) == sorted(path.name for path in (ui_server.runs_dir / run_id).iterdir())  # all files
    response = page.request.get(ui_server.page_url(f"/files/{run_id}/out_jobs.csv"))
    assert response.ok and response.body() == (cli_easy_2000 / "out_jobs.csv").read_bytes()
    report = page.request.get(ui_server.page_url(f"/reports/{run_id}/report.html"), timeout=PATIENCE_S * 1000)
    assert report.ok and b"Table I" in report.body() and run_id.encode() in report.body()


def test_two_runs_selected_in_runs_are_compared_metric_by_metric(page, ui_server):
    easy = launch(page, ui_server, workload=KTH, max_jobs=2000)
    page.wait_for_selector("#open-run")
    fcfs = launch(page, ui_server, workload=KTH, scheduler="fcfs", max_jobs=2000)
    page.wait_for_selector("#open-run")
    page.goto(ui_server.page_url("/runs"))
    for run_id in (easy, fcfs):
        page.locator("#runs-table tr", has_text=run_id).locator("input[type=checkbox]").check()
    page.click("#compare-selected")
    page.wait_for_selector("#comparison-table td")
    table = {cells[0]: cells for cells in (row.locator("td").all_text_contents()
                                           for row in page.locator("#comparison-table tr").all()) if cells}
    header = [cell.strip() for cell in page.locator("#comparison-table th").all_text_contents() if cell.strip()]
    first, second = header[1].removeprefix("1: "), header[2].removeprefix("2: ")
    assert {first, second} == {easy, fcfs} and header[3:] == ["2 - 1", "2 vs 1"]
    expected = {name: json.loads((ui_server.runs_dir / name / "metrics.json").read_text()) for name in (easy, fcfs)}
    jobs_row = table["jobs"]
    assert jobs_row[1:3] == ["2000", "2000"] and jobs_row[3] == "+0"
    wait_row = next(cells for label, cells in table.items() if label.startswith("mean waiting time"))
    assert float(wait_row[4].rstrip(" %")) == pytest.approx(
        100 * (expected[second]["mean_waiting_time"] / expected[first]["mean_waiting_time"] - 1), abs=0.05)
    for graph in ("compare-series", "compare-cumulative"):
        page.wait_for_function(f"document.querySelector('#{graph} .js-plotly-plot') && "
                               f"document.querySelector('#{graph} .js-plotly-plot').layout")
    snapshot(page, "ui-compare")
    runs = page.evaluate("document.querySelector('#compare-series .js-plotly-plot').layout.meta.runs")
    assert runs == [first, second]
    jobs = page.evaluate("document.querySelector('#compare-cumulative .js-plotly-plot').layout.meta.jobs")
    assert jobs == [2000, 2000]


def test_a_campaign_is_launched_from_its_page_and_its_report_opens(page, ui_server):
    page.goto(ui_server.page_url("/campaigns"))
    page.wait_for_selector("li.campaign")
    assert "outside the folders this app may read" in page.locator("li.campaign", has_text="outside").text_content()
    tiny = page.locator("li.campaign", has_text="tiny")
    assert "0/2 instances finished" in tiny.text_content()
    page.fill("#campaign-workers", "1")
    tiny.locator("button").click()
    page.wait_for_selector("#campaign-status-tiny:has-text('done')", timeout=PATIENCE_S * 1000)
    page.wait_for_selector("#report-tiny")
    assert "2/2 instances finished" in page.locator("li.campaign", has_text="tiny").text_content()
    snapshot(page, "ui-campaigns")
    output = ui_server.runs_dir / "campaigns" / "tiny"
    assert len(list(output.glob("*/instance.json"))) == 2
    report = page.request.get(ui_server.page_url("/campaign-reports/tiny/report.html"))
    assert report.ok and b"tiny" in report.body()


def test_cancelling_a_long_run_leaves_nothing_of_it(page, ui_server):
    slow = str(ui_server.inputs / SLOW_SCHEDULER[0])  # a scheduler file of an allowed folder, listed in the form
    run_id = launch(page, ui_server, workload=KTH, scheduler=slow, max_jobs=3000)
    page.wait_for_function("/running, [1-9]|failed|finished/.test(document.querySelector('#run-status').textContent)")
    assert "running" in page.text_content("#run-status")
    page.click("#cancel")
    page.wait_for_function("/cancelled|failed|finished/.test(document.querySelector('#run-status').textContent)")
    assert "cancelled" in page.text_content("#run-status")
    leftovers = [name for name in os.listdir(ui_server.runs_dir) if run_id in name]
    assert leftovers == [], leftovers
    staging = [name for name in os.listdir(ui_server.runs_dir) if name.startswith(".") and "stag" in name]
    assert staging == []


@pytest.mark.parametrize("typed, message", [
    ("../../etc/passwd", "contains '..'"),
    ("/etc/passwd", "outside the folders this app may read"),
    ("escape.swf", "outside the folders this app may read"),  # a symbolic link in an allowed folder
])
def test_a_path_that_leaves_the_allowed_folders_is_refused_in_the_page(page, ui_server, typed, message):
    link = ui_server.inputs / "escape.swf"
    if not link.is_symlink():
        link.symlink_to(REPO_ROOT / "README.md")  # the repository is not an allowed folder
    page.goto(ui_server.page_url("/"))
    page.fill("#workload-path", typed)
    page.click("#launch")
    page.wait_for_function("document.querySelector('#form-error').textContent.length > 0")
    error = page.text_content("#form-error")
    snapshot(page, "ui-refused-path")
    assert error.startswith("workload: ") and message in error and "\n" not in error


def test_a_bad_upload_shows_the_readers_one_line_error(page, ui_server, tmp_path):
    bad = tmp_path / "broken.swf"
    bad.write_text("; MaxProcs: 4\n1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n"
                   "2 5 0 ten 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n")
    page.goto(ui_server.page_url("/"))
    page.set_input_files("#upload input[type=file]", str(bad))
    page.wait_for_selector("#upload-error")
    snapshot(page, "ui-bad-upload")
    error = page.text_content("#upload-error")
    assert re.search(r"broken\.swf.*line 3", error), error
    assert not any("broken" in path.name for path in (ui_server.runs_dir / "uploads").iterdir())


@pytest.mark.parametrize("option, typed", [("max_jobs", "-5"), ("max_jobs", "2.5"), ("walltime_factor", "-1"),
                                           ("walltime_factor", "0"), ("recorded_speed", "fast")])
def test_a_number_that_fails_its_check_turns_red_and_launches_nothing(page, ui_server, option, typed):
    """Issue 25, item 15, made generic by issue 26, item 1: a number field of a run option turns red, and Launch then
    refuses in one line naming the field instead of running with the option's default."""
    page.goto(ui_server.page_url("/"))
    page.fill("#workload-path", KTH)
    page.fill(option_field(option), typed)
    assert page.evaluate(f"""document.querySelector(`{option_field(option)}`).matches(':invalid')""")
    page.click("#launch")
    page.wait_for_function("document.querySelector('#form-error').textContent.length > 0 || "
                           "document.querySelector('#run-status').textContent.length > 0")
    assert page.text_content("#run-status") == ""
    error = page.text_content("#form-error")
    assert error.startswith(option.replace("_", " ") + ": ") and typed in error and "\n" not in error, error


def test_the_form_has_a_field_per_run_option_declared_for_it(page, ui_server):
    """Issue 26, item 1: the generic fields are the declared ones, in order, with their help as tooltip."""
    page.goto(ui_server.page_url("/"))
    declared = [option for option in run_options() if option.form]
    fields = """[id$='"type":"run-option"}']"""  # (the controls; not their inner parts, whose ids go on)
    # (dropdowns are drawn once their code has loaded: wait for every field, and the dropdown's chosen label)
    page.wait_for_function("([selector, count]) => document.querySelectorAll(selector).length >= count",
                           arg=[fields, len(declared)])
    page.wait_for_selector(f"{option_field('speedup_model')}:has-text('off')")
    ids = page.evaluate("selector => [...document.querySelectorAll(selector)].map(node => node.id)", fields)
    assert [json.loads(ident)["name"] for ident in ids] == [option.name for option in declared]
    tooltip = page.locator(".option-field", has=page.locator(option_field("speedup_options"))).get_attribute("title")
    assert tooltip.startswith("JSON object of options for the speedup model")
    assert page.text_content("#options-engine summary") == "Engine features"
    assert page.text_content(option_field("speedup_model")).strip() == "off"  # (the empty choice: the default)
    snapshot(page, "ui-new-run-form")


def test_a_coscheduling_run_with_the_table_speedup_model_is_the_command_lines(page, ui_server, tmp_path):
    """Issue 26, item 1: easy-coscheduling with the engine's table model (the shipped two-class table of
    expe/co-scheduling.toml, named relative to its allowed folder) on 200 KTH-SP2 jobs."""
    class_rule = {"field": "res", "threshold": 4, "below": "compute", "above": "memory"}
    page.goto(ui_server.page_url("/"))
    page.fill("#workload-path", KTH)
    choose_scheduler(page, "easy-coscheduling")
    page.fill(option_field("max_jobs"), "200")
    choose(page, option_field("speedup_model"), "table")
    page.fill(option_field("speedup_options"), json.dumps({"table": "two-classes.csv", "class_rule": class_rule}))
    run_id = press_launch(page)
    page.wait_for_selector("#open-run", timeout=PATIENCE_S * 1000)
    snapshot(page, "ui-coscheduling")
    assert "finished" in page.text_content("#run-status")
    spec = json.loads((ui_server.runs_dir / run_id / "run.json").read_text())["spec"]
    table = str((SPEEDUPS / "two-classes.csv").resolve())
    assert spec["scheduler"] == "easy-coscheduling" and spec["speedup_model"] == "table"
    assert spec["speedup_options"] == {"table": table, "class_rule": class_rule} and spec["max_jobs"] == 200
    expected = tmp_path / "cli"
    run(RunSpec.build(workload=WORKLOADS / KTH, platform="kth-sp2", scheduler="easy-coscheduling", max_jobs=200,
                      speedup_model="table", speedup_options={"table": table, "class_rule": class_rule},
                      out_dir=expected))
    assert (ui_server.runs_dir / run_id / "out_jobs.csv").read_bytes() == (expected / "out_jobs.csv").read_bytes()


def test_a_job_slot_run_on_node_types_with_compute_sharing_finishes(page, ui_server):
    """Issue 26, item 1: job slots (scheduler option slots, which needs compute sharing) on 100 nodes of one type
    with 4 cores and 4 slots, 200 KTH-SP2 jobs: jobs share nodes, one slot each."""
    from procset import ProcSet

    types = ui_server.inputs / "quad-slots.toml"
    types.write_text('[[node_types]]\nname = "quad"\ncount = 100\nspeed = 1e9\ncores = 4\nslots = 4\n')
    page.goto(ui_server.page_url("/"))
    page.fill("#workload-path", KTH)
    choose(page, "node-types", str(types.resolve()))
    page.fill("#scheduler-options", json.dumps({"slots": True}))
    page.fill(option_field("max_jobs"), "200")
    page.check(f"{option_field('compute_sharing')} input[type=checkbox]")
    run_id = press_launch(page)
    page.wait_for_selector("#open-run", timeout=PATIENCE_S * 1000)
    assert "finished" in page.text_content("#run-status")
    spec = json.loads((ui_server.runs_dir / run_id / "run.json").read_text())["spec"]
    assert spec["compute_sharing"] is True and spec["scheduler_options"]["slots"] is True
    assert spec["platform"].startswith(str(ui_server.runs_dir / "platforms" / "quad-slots-"))
    jobs = pd.read_csv(ui_server.runs_dir / run_id / "out_jobs.csv", dtype={"allocated_resources": str})
    assert len(jobs) == 200 and (jobs.final_state == "COMPLETED_SUCCESSFULLY").sum() > 0
    hosts = [set(ProcSet.from_str(text)) for text in jobs.allocated_resources.fillna("")]
    shared = any(hosts[a] & hosts[b] and jobs.starting_time[a] < jobs.finish_time[b]
                 and jobs.starting_time[b] < jobs.finish_time[a]
                 for a in range(len(jobs)) for b in range(a + 1, len(jobs)))
    assert shared  # (several jobs on one node at once: the slots)


def test_the_workload_list_offers_no_run_output(page, ui_server):
    """Issue 25, item 18: typing "KTH" in the Workload list offers the log, not the files of the runs of it."""
    fake = ui_server.runs_dir / "kth-sp2-1996-2.1-cln-easy-000000000000"
    fake.mkdir(parents=True, exist_ok=True)
    for name in ("instance.json", "metrics.json", "run.json"):
        (fake / name).write_text(json.dumps({"campaign": "ui", "id": fake.name, "nb_jobs": 1}))
    (ui_server.runs_dir / f"{fake.name}.failed.json").write_text(json.dumps({"error": "x", "params": {}}))
    page.goto(ui_server.page_url("/"))
    page.click("#workload")
    page.keyboard.type("KTH")
    options = page.locator(".dash-dropdown-options [role=option]")  # (the open list; not the radio items)
    options.first.wait_for()
    offered = [text.strip() for text in options.all_text_contents()]
    assert offered and offered[0].startswith("workloads/KTH-SP2"), offered
    assert not any(".json" in text or ui_server.runs_dir.name + "/" in text for text in offered), offered


def test_a_model_fitted_and_validated_on_the_models_page_is_run_from_new_run(page, ui_server, tmp_path):
    """Fit the GridKa model of the LCG log on the Models page, validate it there (closed, on the shipped kth-sp2
    platform's 100 nodes), then run it closed from New run: the page's files are the command line's."""
    page.goto(ui_server.page_url("/models"))
    choose(page, "fit-log", str(WORKLOADS / "LCG.swf.gz"))
    page.fill("#fit-select", "partition=156,157")
    page.fill("#fit-name", "gridka")
    page.fill(f"""[id='{{"name":"seed","type":"fit-option"}}']""", "1")
    page.click("#fit")
    page.wait_for_selector("#fit-types td", timeout=PATIENCE_S * 1000)
    types = page.locator("#fit-types tr").all_text_contents()
    assert len(types) == 5 and "group=4" in " ".join(types)  # a header and four job types
    model = ui_server.runs_dir / "models" / "gridka.json"
    assert model.is_file() and page.text_content("#fit-written").startswith("wrote runs/models/gridka.json")

    choose(page, "validate-model", str(model))
    choose(page, "validate-log", str(WORKLOADS / "LCG.swf.gz"))
    choose(page, "validate-platform", "kth-sp2")
    page.fill(f"""[id='{{"name":"seed","type":"validate-option"}}']""", "1")
    page.click("#validate")
    page.wait_for_selector("#validation-table td", timeout=PATIENCE_S * 1000)
    snapshot(page, "ui-models")
    assert main(["model", "validate", str(model), "--log", str(WORKLOADS / "LCG.swf.gz"), "--platform", "kth-sp2",
                 "--seed", "1", "--out", str(tmp_path / "cli")]) == 0
    (folder,) = (ui_server.runs_dir / "validations").iterdir()
    assert (folder / "validation.csv").read_bytes() == (tmp_path / "cli" / "validation.csv").read_bytes()
    figure = page.request.get(ui_server.page_url(f"/validations/{folder.name}/figures/throughput_utilisation.png"))
    assert figure.ok and figure.body()[:4] == b"\x89PNG"

    page.goto(ui_server.page_url("/"))
    page.fill("#workload-path", str(model))
    page.check("#replay input[value='closed']")
    page.fill(option_field("population"), "48")
    page.fill(option_field("closed_jobs"), "300")
    run_id = press_launch(page)
    page.wait_for_selector("#open-run", timeout=PATIENCE_S * 1000)
    run(RunSpec.build(workload=model, platform="kth-sp2", scheduler="easy", replay="closed", population="48",
                      closed_jobs=300, out_dir=tmp_path / "closed"))
    assert (ui_server.runs_dir / run_id / "out_jobs.csv").read_bytes() == (
        tmp_path / "closed" / "out_jobs.csv").read_bytes()
