"""The Runs page in headless Chromium (issue 30, part 2: "what did I run?"), as a user drives it: a run launched from
the form with a label shows that label in Runs (its id stays in the link), ticking two runs lists the parameters in
which they differ, the column chooser shows the hidden columns, and a campaign run from the Campaigns page has its
instances listed, filtered by campaign, opened in the run page and compared, in a table that fits a window 1,400
pixels wide.

The expected values come from the files the runs wrote (``run.json``, ``metrics.json``, ``instance.json``).
"""

from __future__ import annotations

import json

import pytest

from conftest import WORKLOADS
from ui_server import PATIENCE_S, browser, page, ui_server  # noqa: F401 - fixtures

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
LABEL = "EASY *baseline* [300 jobs]"
# slow: each test drives a browser (left out of the README's fast loop, run by .ci/run's slow step)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (WORKLOADS / KTH).is_file(), reason="shared workloads not available")]


def run_option_field(name: str) -> str:
    """The CSS selector of the New-run form's generic field of run option ``name`` (its pattern-matching id as Dash
    writes it: keys sorted, JSON)."""
    return f"""[id='{{"name":"{name}","type":"run-option"}}']"""


def launch(page, server, *, scheduler: str, label: str | None = None) -> str:
    """Fill the New-run form (300 KTH-SP2 jobs), press Launch, wait for the run to finish; returns its id."""
    page.goto(server.page_url("/"))
    page.fill("#workload-path", KTH)
    page.click("#scheduler")
    page.click(f"[role=option]:has(input[value='{scheduler}'])")
    page.fill(run_option_field("max_jobs"), "300")
    if label is not None:
        page.fill(run_option_field("label"), label)
    page.click("#launch")
    page.wait_for_selector("#open-run", timeout=PATIENCE_S * 1000)
    return page.text_content("#run-status").split(":")[0]


def shown_rows(page) -> dict[str, dict[str, str]]:
    """The Runs table's rows as shown: the run cell's text -> {column heading: cell text}."""
    headings = [text.strip() for text in page.locator("#runs-table th.dash-header").all_text_contents()]
    rows = {}
    for row in page.locator("#runs-table tr:has(td.dash-cell)").all():
        cells = dict(zip(headings, (text.strip() for text in row.locator("td.dash-cell").all_text_contents())))
        rows[cells["run"]] = cells
    return rows


def assert_fits(page) -> None:
    """The Runs table needs no horizontal scrolling, nor does the page."""
    widths = page.evaluate("""() => {
        const box = document.querySelector('#runs-table .dash-spreadsheet-container');
        return [box.scrollWidth, box.clientWidth, document.documentElement.scrollWidth, window.innerWidth];
    }""")
    assert widths[0] <= widths[1] and widths[2] <= widths[3], widths


def test_a_labelled_run_shows_its_label_and_two_runs_ticked_show_what_differs(page, ui_server):
    labelled = launch(page, ui_server, scheduler="easy", label=LABEL)
    plain = launch(page, ui_server, scheduler="fcfs")
    spec = json.loads((ui_server.runs_dir / labelled / "run.json").read_text())["spec"]
    assert spec["label"] == LABEL and "label" not in json.loads(
        (ui_server.runs_dir / plain / "run.json").read_text())["spec"]
    page.goto(ui_server.page_url("/runs"))
    page.wait_for_selector(f"#runs-table td.dash-cell:has-text('{plain}')")
    rows = shown_rows(page)
    assert LABEL in rows and labelled not in rows and plain in rows  # (the label instead of the id)
    link = page.locator("#runs-table a", has_text=LABEL)
    assert link.get_attribute("href") == f"/runs/{labelled}"
    metrics = json.loads((ui_server.runs_dir / labelled / "metrics.json").read_text())
    assert rows[LABEL]["jobs"] == "300 of 300 max" and rows[plain]["scheduler"] == "fcfs"
    assert rows[LABEL]["status"] == "done" and metrics["nb_jobs"] == 300
    assert "run id" not in rows[LABEL]  # hidden until chosen
    page.locator("#runs-columns input[value=run_id]").check()
    page.wait_for_selector("#runs-table th.dash-header:has-text('run id')")
    assert shown_rows(page)[LABEL]["run id"] == labelled
    assert_fits(page)  # (even with one more column)

    for name in (LABEL, plain):
        page.locator("#runs-table tr", has=page.locator("td.dash-cell", has_text=name)).locator(
            "input[type=checkbox]").first.check()
    page.wait_for_selector("#differences-table td")
    headings = [text.strip() for text in page.locator("#differences-table th").all_text_contents()]
    differences = {cells[0]: cells[1:] for cells in (
        [text.strip() for text in row.locator("td").all_text_contents()]
        for row in page.locator("#differences-table tr").all()) if cells}
    order = headings[1:]
    assert sorted(order) == sorted([LABEL, plain])
    scheduler = dict(zip(order, differences["scheduler"]))
    assert scheduler == {LABEL: "easy", plain: "fcfs"}
    assert "label" not in differences and "out_dir" not in differences and "max_jobs" not in differences
    assert page.get_attribute("#compare-selected", "href") in (f"/compare?runs={labelled},{plain}",
                                                              f"/compare?runs={plain},{labelled}")


def test_a_campaigns_instances_are_listed_filtered_opened_and_compared(page, ui_server):
    page.goto(ui_server.page_url("/campaigns"))
    tiny = page.locator("li.campaign", has_text="tiny")
    tiny.wait_for()
    page.fill("#campaign-workers", "1")
    tiny.locator("button").click()
    page.wait_for_selector("#campaign-status-tiny:has-text('done')", timeout=PATIENCE_S * 1000)
    output = ui_server.runs_dir / "campaigns" / "tiny"
    instances = sorted(path.parent.name for path in output.glob("*/instance.json"))
    assert len(instances) == 2

    page.goto(ui_server.page_url("/runs"))
    page.wait_for_selector(f"#runs-table td.dash-cell:has-text('{instances[0]}')")
    assert_fits(page)  # every run, campaign instances included, in the default columns
    page.click("#runs-campaign")
    page.click("[role=option]:has-text('campaign tiny')")
    page.wait_for_function("document.querySelectorAll('#runs-table tr td.dash-cell').length > 0 && "
                           "!document.querySelector('#runs-table').textContent.includes('fcfs-') && "
                           f"!document.querySelector('#runs-table').textContent.includes('{LABEL}')")
    rows = shown_rows(page)
    assert sorted(rows) == instances
    for name in instances:
        metrics = json.loads((output / name / "metrics.json").read_text())
        assert rows[name]["jobs"] == f"{metrics['nb_jobs']:,} of 300 max" and rows[name]["platform"] == "kth-sp2"
    assert {rows[name]["scheduler"] for name in instances} == {"easy", "fcfs"}
    page.locator("#runs-columns input[value=campaign]").check()
    page.wait_for_selector("#runs-table th.dash-header:has-text('campaign')")
    assert {cells["campaign"] for cells in shown_rows(page).values()} == {"tiny"}

    for name in instances:
        page.locator("#runs-table tr", has=page.locator("td.dash-cell", has_text=name)).locator(
            "input[type=checkbox]").first.check()
    page.wait_for_selector("#differences-table td")
    assert "scheduler" in page.locator("#differences-table").text_content()
    page.click("#compare-selected")
    page.wait_for_selector("#comparison-table td")
    header = " ".join(page.locator("#comparison-table th").all_text_contents())
    assert all(name in header for name in instances), header

    page.goto(ui_server.page_url("/runs"))
    page.locator("#runs-table a", has_text=instances[0]).click()
    page.wait_for_selector("#metrics-table td")
    assert page.url.split("?")[0].endswith(f"/runs/campaigns/tiny/{instances[0]}")  # (the run page, its id)
    assert instances[0] in page.locator("h2").first.text_content()
    href = page.locator("a.download", has_text="out_jobs.csv").get_attribute("href")
    assert href == f"/files/campaigns/tiny/{instances[0]}/out_jobs.csv"
    response = page.request.get(ui_server.page_url(href))
    assert response.ok and response.body() == (output / instances[0] / "out_jobs.csv").read_bytes()
