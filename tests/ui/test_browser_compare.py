"""The web GUI in headless Chromium, as a user sees it (issue 30, parts 3 and 4): the New-run page shows the run
panel and Cancel only once a run is launched, a cancelled run reads "<run id>: cancelled", and the Compare page
warns when the runs hold other jobs and smooths the overlaid series over a window typed in the time axis' unit.

The runs compared are made through ``batreplay.run.runner.run`` (the command line's path) into the server's runs
folder; the warning shown is :func:`batreplay.ui.comparison.job_set_warnings` of the same runs.
"""

from __future__ import annotations

import pytest

from batreplay.analysis.run_dir import load_run
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from batreplay.ui.comparison import job_set_warnings
from batreplay.ui.figures import runs_unit
from conftest import WORKLOADS
from test_browser import launch
from ui_server import SLOW_SCHEDULER, browser, page, ui_server  # noqa: F401 - fixtures

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (WORKLOADS / KTH).is_file(), reason="shared workloads not available")]


def test_the_run_panel_and_cancel_show_only_while_a_run_is_under_way(page, ui_server):
    page.goto(ui_server.page_url("/"))
    page.wait_for_selector("#launch")
    assert not page.is_visible("#run-panel") and not page.is_visible("#cancel") and not page.is_visible("#progress")
    run_id = launch(page, ui_server, workload=KTH, max_jobs=200)
    page.wait_for_selector("#open-run")
    assert page.text_content("#run-status") == f"{run_id}: finished"
    assert page.is_visible("#progress") and page.get_attribute("#progress", "value") == "1"
    assert not page.is_visible("#cancel")  # the run has ended


def test_a_cancelled_run_reads_its_id_and_cancelled(page, ui_server):
    slow = str(ui_server.inputs / SLOW_SCHEDULER[0])  # (a scheduler that thinks 20 ms per job: long enough to cancel)
    run_id = launch(page, ui_server, workload=KTH, scheduler=slow, max_jobs=3000)
    page.wait_for_function("/running, [1-9]|failed|finished/.test(document.querySelector('#run-status').textContent)")
    assert page.is_visible("#cancel") and page.is_visible("#progress")
    page.click("#cancel")
    page.wait_for_function("/cancelled|failed|finished/.test(document.querySelector('#run-status').textContent)")
    page.wait_for_selector("#cancel", state="hidden")
    assert page.text_content("#run-status") == f"{run_id}: cancelled"


@pytest.fixture(scope="module")
def compared(ui_server):
    """Three runs in the server's runs folder: 300 KTH-SP2 jobs with EASY and FCFS, and the first 200 with EASY."""
    made = {"easy-300": ("easy", 300), "fcfs-300": ("fcfs", 300), "easy-200": ("easy", 200)}
    for name, (scheduler, jobs) in made.items():
        run(RunSpec.build(workload=WORKLOADS / KTH, platform="kth-sp2", scheduler=scheduler, max_jobs=jobs,
                          out_dir=ui_server.runs_dir / name))
    return list(made)


def series_meta(page) -> dict:
    return page.evaluate("document.querySelector('#compare-series .js-plotly-plot').layout.meta")


def test_compare_warns_when_the_runs_hold_other_jobs_and_smooths_the_series(page, ui_server, compared):
    page.goto(ui_server.page_url("/compare?runs=easy-300,easy-200"))
    page.wait_for_selector("#comparison-warning li")
    runs = [load_run(ui_server.runs_dir / name) for name in ("easy-300", "easy-200")]
    expected = job_set_warnings(runs, unit=runs_unit(runs))
    assert page.locator("#comparison-warning li").all_text_contents() == expected
    assert expected[0].startswith("run 2 (easy-200) vs run 1 (easy-300): 200 jobs vs 300 (max_jobs 200 vs 300); ")
    # the warning stands above the table
    above = page.locator("#comparison-warning").bounding_box()["y"]
    assert above < page.locator("#comparison-table").bounding_box()["y"]

    page.goto(ui_server.page_url("/compare?runs=easy-300,fcfs-300"))
    page.wait_for_selector("#comparison-table td")
    page.wait_for_function("document.querySelector('#compare-series .js-plotly-plot') && "
                           "document.querySelector('#compare-series .js-plotly-plot').layout")
    assert page.locator("#comparison-warning").count() == 0  # the same jobs
    unit = series_meta(page)["time_unit"]
    assert page.text_content("#compare-window-unit") == unit and series_meta(page)["window"] is None
    page.fill("#compare-window", "0.5")
    page.press("#compare-window", "Enter")
    page.wait_for_function("document.querySelector('#compare-series .js-plotly-plot').layout.meta.window === 0.5")
    assert f"mean over the last 0.5 {unit}" in page.evaluate(
        "document.querySelector('#compare-series .js-plotly-plot').layout.yaxis.title.text")
    page.fill("#compare-window", "half")
    page.press("#compare-window", "Enter")
    page.wait_for_selector("#compare-window-error")
    assert page.text_content("#compare-window-error") == (
        f"smoothing window: 'half' is not a number > 0 of {unit} (leave it empty for none)")
    page.wait_for_function("document.querySelector('#compare-series .js-plotly-plot').layout.meta.window === null")
