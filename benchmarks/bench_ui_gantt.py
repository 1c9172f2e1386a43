"""How fast the web GUI's run page is on whole logs, in headless Chromium (run by hand; figures go in notes).

For each run directory given, under one runs folder served by ``batreplay ui``: the time from opening the run
page to the Gantt chart's first view, the largest Dash response of the page, the time of a box zoom (a mouse drag
across the plot) to 100 days, to 10 days, then to one day, whether it then shows individual jobs with their hover,
and the time of a recolouring.

Usage (the runs: ``batreplay run ... --out RUNS/<name>``):

    uv run python benchmarks/bench_ui_gantt.py --runs-dir RUNS kth-whole hpc2n-whole

Needs Playwright (the dev dependency group) and a Chromium on PATH (``chromium``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

DAY = 86_400.0
TIMEOUT_S = 120.0
# the gestures the browser tests make (tests/ui/plotly_gestures.py)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "ui"))
from plotly_gestures import box_zoom, dash_response_size, hover_label, meta, wait_meta  # noqa: E402


def start_server(runs_dir: Path) -> tuple[subprocess.Popen, str]:
    """``batreplay ui`` on a free port serving ``runs_dir``; its process and base URL."""
    command = [sys.executable, "-m", "batreplay.cli", "ui", "--runs-dir", str(runs_dir), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, COLUMNS="300"))
    for line in process.stdout:
        found = re.search(r"open (http://\S+)", line)
        if found:
            threading.Thread(target=process.stdout.read, daemon=True).start()  # (a full pipe would stop the server)
            return process, found.group(1).rstrip("/")
    raise SystemExit("batreplay ui did not start")


def measure(browser, base: str, run_id: str) -> dict:
    """The figures of one run page (see the module docstring)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    sizes: list[int] = []
    page.on("response", lambda response: sizes.append(dash_response_size(response)))
    started = time.perf_counter()
    page.goto(f"{base}/runs/{run_id}")
    wait_meta(page, "gantt", "true", TIMEOUT_S)
    figures = {"run": run_id, "first view (s)": time.perf_counter() - started, "view": meta(page, "gantt")["view"]}
    first = meta(page, "gantt")["window"][0]
    # one day of a whole log is a few pixels wide: zooms in steps, as a user does, each inside the one before
    for offset, days in ((30, 100), (40, 10), (45, 1)):
        zoom_started = time.perf_counter()
        box_zoom(page, "gantt", first + offset * DAY, first + (offset + days) * DAY)
        wait_meta(page, "gantt", f"meta.window[1] - meta.window[0] < {1.1 * days * DAY}", TIMEOUT_S)
        figures[f"box zoom to {days} days (s)"] = time.perf_counter() - zoom_started
    figures["zoomed view"] = meta(page, "gantt")["view"]
    figures["hover shows a job"] = "job" in (hover_label(page, "gantt") or "")
    colour_started = time.perf_counter()
    page.click("#gantt-colour input[value='state']")
    wait_meta(page, "gantt", "meta.color_by === 'state'", TIMEOUT_S)
    figures["recolour (s)"] = time.perf_counter() - colour_started
    measured = [size for size in sizes if size is not None]
    figures["largest Dash response (MB)"] = max(measured) / 1e6
    figures["responses not measured"] = len(sizes) - len(measured)
    context.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", type=Path, required=True)
    parser.add_argument("runs", nargs="+", help="run directory names under --runs-dir")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise SystemExit("no chromium on PATH")
    process, base = start_server(args.runs_dir)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=binary, args=["--no-sandbox", "--disable-gpu"])
            for run_id in args.runs:
                print(" | ".join(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}"
                                 for key, value in measure(browser, base, run_id).items()), flush=True)
            browser.close()
    finally:
        process.terminate()


if __name__ == "__main__":
    main()
