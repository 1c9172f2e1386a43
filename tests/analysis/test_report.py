"""HTML report: self-contained (no outside reference), escaped, and every image decodes in a real browser."""

from __future__ import annotations

import base64
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import CHROMIUM_ARGS, GOLDEN, chromium_path
from matplotlib.figure import Figure

from batreplay.analysis.analyze_command import analyze
from batreplay.analysis.report import (
    IMAGES_LOADED_ATTRIBUTE,
    ReportContent,
    ReportFigure,
    ReportTable,
    ReportText,
    format_value,
    png_data_uri,
    render_html,
    write_report,
)

class _Collector(HTMLParser):
    """Every tag's attributes, and the text of table cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_cell = tag in ("td", "th")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data):
        if self._in_cell:
            self.cells.append(data)


def parse(page: str) -> _Collector:
    collector = _Collector()
    collector.feed(page)
    return collector


def tiny_png(path: Path, colour: str = "C0") -> Path:
    figure = Figure(figsize=(2, 1))
    figure.add_subplot().plot([0, 1], [0, 1], color=colour)
    figure.savefig(path, format="png", dpi=40)
    return path


def test_format_value():
    assert format_value(3) == "3"
    assert format_value(np.int64(28467)) == "28,467"
    assert format_value(2.0) == "2"
    assert format_value(0.69897) == "0.699"
    assert format_value(6892.83) == "6,893"
    assert format_value(float("nan")) == "\u2013"
    assert format_value(None) == "\u2013"
    assert format_value(pd.NA) == "\u2013"
    assert format_value("easy") == "easy"


def test_png_data_uri_round_trip_and_refusal(tmp_path):
    png = tiny_png(tmp_path / "a.png")
    uri = png_data_uri(png)
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == png.read_bytes()
    (tmp_path / "b.png").write_text("<svg/>")
    with pytest.raises(ValueError, match="not a PNG"):
        png_data_uri(tmp_path / "b.png")
    with pytest.raises(FileNotFoundError):
        png_data_uri(tmp_path / "missing.png")


def test_page_is_self_contained_and_escaped(tmp_path):
    content = ReportContent(
        title="runs <a> & <b>",
        parameters=[("window", "all jobs")],
        tables=[ReportTable("Metrics", pd.DataFrame({"metric": ["nb_jobs", "utilisation"],
                                                     "<script>x</script>": [10, 0.5]}), "what & why")],
        figures=[ReportFigure("first", tiny_png(tmp_path / "1.png")),
                 ReportFigure("second", tiny_png(tmp_path / "2.png", "C1"))],
        notes=["multi\nline note"])
    page = render_html(content)
    parsed = parse(page)
    images = [attrs for tag, attrs in parsed.tags if tag == "img"]
    assert len(images) == 2
    for attrs in images:
        assert attrs["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(attrs["src"].split(",", 1)[1]).startswith(b"\x89PNG")
    # nothing is fetched from elsewhere: no src/href but data URIs and links within the page, no url(...) in styles
    ids = {attrs["id"] for _, attrs in parsed.tags if "id" in attrs}
    for tag, attrs in parsed.tags:
        for name in ("src", "href"):
            if name in attrs:
                assert attrs[name].startswith("data:") or attrs[name][1:] in ids, (tag, attrs)
    assert "url(" not in page and "http://" not in page and "https://" not in page
    # user text is escaped: only the report's own script element exists
    assert [tag for tag, _ in parsed.tags].count("script") == 1
    assert "<script>x</script>" in parsed.cells
    wanted = ("nb_jobs", "10", "utilisation", "0.5")
    assert [cell for cell in parsed.cells if cell in wanted] == list(wanted)  # row by row, formatted
    assert "runs &lt;a&gt; &amp; &lt;b&gt;" in page
    written = write_report(content, tmp_path / "r.html")
    assert written.read_text(encoding="utf-8") == page


def images_loaded(page: Path, profile: Path) -> str:
    """Open ``page`` in headless Chromium and return the report's data-images-loaded attribute ("N/M")."""
    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium binary on PATH (Debian packages chromium, chromium-driver)")
    command = [binary, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(rf'<body[^>]*\b{IMAGES_LOADED_ATTRIBUTE}="(\d+/\d+)"', done.stdout)
    assert match, f"no {IMAGES_LOADED_ATTRIBUTE} attribute on <body>: {done.stdout[:500]}"
    return match.group(1)


@pytest.fixture(scope="module")
def golden_report(tmp_path_factory) -> Path:
    if not GOLDEN.is_dir():
        pytest.skip("golden runs not available")
    out = tmp_path_factory.mktemp("analysis")
    return analyze([GOLDEN / "delays", GOLDEN / "dynamic"], out)


def test_every_image_of_a_real_report_loads_in_chromium(golden_report, tmp_path):
    page = golden_report.read_text(encoding="utf-8")
    expected = page.count("<img ")
    assert expected == 5  # submissions, cumulative, utilisation and queue, waiting times, Gantt (no lateness: no jobs.csv)
    assert images_loaded(golden_report, tmp_path / "profile") == f"{expected}/{expected}"


def test_chromium_check_sees_a_broken_image(golden_report, tmp_path):
    """The check can fail: a page whose first image is corrupt reports one image fewer."""
    page = golden_report.read_text(encoding="utf-8")
    broken = re.sub(r'src="data:image/png;base64,[^"]+"', 'src="data:image/png;base64,AAAA"', page, count=1)
    path = tmp_path / "broken.html"
    path.write_text(broken, encoding="utf-8")
    assert images_loaded(path, tmp_path / "profile") == "4/5"


def test_a_wide_table_scrolls_in_its_box_at_1400_px(tmp_path):
    """A table of 40 wide columns (like a campaign's "All instances") scrolls inside its box; the page itself
    stays within a 1400-pixel window."""
    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium binary on PATH")
    wide = pd.DataFrame({f"a rather long column heading {k}": [f"value-{k}-{'x' * 20}", k * 1000.5]
                         for k in range(40)})
    page = render_html(ReportContent(title="wide", tables=[ReportTable("All instances", wide)]))
    probe = ("<script>window.addEventListener('load', function () { document.body.setAttribute('data-widths', "
             "document.documentElement.scrollWidth + '/' + document.querySelector('.table-scroll').scrollWidth); "
             "});</script></body>")
    path = tmp_path / "wide.html"
    path.write_text(page.replace("</body>", probe), encoding="utf-8")
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1400,900",
               f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--dump-dom",
               path.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(r'data-widths="(\d+)/(\d+)"', done.stdout)
    assert match, done.stdout[:500]
    page_width, table_width = int(match.group(1)), int(match.group(2))
    assert page_width <= 1400 < table_width


def test_written_sections_are_markdown_with_raw_html_escaped():
    text = ("# Why\n\nEASY gives **52.8** <img src=x onerror=alert(1)>.\n\n## Variants\n\n"
            "| nodes | mean wait (s) |\n|---|---:|\n| 338 | 14,676 |\n| 1,233.81 | +1.70 (+0.4%) |\n")
    content = ReportContent(title="t", texts=[ReportText("Explanations", text, "expe/explanations/x.md")])
    content.tables = [ReportTable("Differences", pd.DataFrame({"run": ["a"], "ours - paper": ["+1.70 (+0.4%)"]}))]
    page = render_html(content)
    assert "<h3>Why</h3>" in page and "<h4>Variants</h4>" in page and "<strong>52.8</strong>" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert '<div class="table-scroll"><table class="markdown">' in page
    assert "From expe/explanations/x.md." in page and '<a href="#explanations">Explanations</a>' in page
    assert page.index('id="explanations"') > page.index("Differences")  # at the end of the page
    # a difference written as text still reads as a number: aligned right, not as a text cell
    assert "<td>+1.70 (+0.4%)</td>" in page
