"""Who may use the web GUI and what its download routes serve: a token beyond loopback, nothing outside a run."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from conftest import WORKLOADS
from ui_server import start_ui, stop_ui

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def status_of(url: str, cookie: str | None = None, host: str | None = None) -> tuple[int, bytes]:
    headers = {"Cookie": cookie} if cookie else {}
    if host:
        headers["Host"] = host
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, b""


def test_beyond_loopback_every_request_needs_the_printed_token(tmp_path):
    server = start_ui(tmp_path / "runs", tmp_path, tmp_path / "cache", "--host", "0.0.0.0")
    try:
        assert "?token=" in server.url
        base, _, query = server.url.partition("?")
        token = query.removeprefix("token=")
        local = base.replace("0.0.0.0", "127.0.0.1")
        assert status_of(local)[0] == 403
        assert status_of(local + "?token=wrong")[0] == 403
        refused = urllib.request.Request(local + "?token=wrong")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(refused, timeout=60)
        assert caught.value.headers.get("Set-Cookie") is None  # a wrong token earns no cookie
        assert status_of(local + "_dash-layout")[0] == 403
        assert status_of(f"{local}?token={token}")[0] == 200
        assert status_of(local + "_dash-layout", cookie=f"batreplay_token={token}")[0] == 200
    finally:
        stop_ui(server)


def test_on_loopback_no_token_is_asked_and_binding_elsewhere_without_one_is_refused(tmp_path):
    from batreplay.ui.app import UiConfig, serve

    with pytest.raises(ValueError, match="needs an access token"):
        serve(UiConfig(runs_dir=tmp_path / "runs"), host="0.0.0.0", port=0)
    server = start_ui(tmp_path / "runs", tmp_path, tmp_path / "cache")
    try:
        assert "token" not in server.url and status_of(server.url)[0] == 200
        port = server.url.rsplit(":", 1)[1].strip("/")
        assert status_of(server.url, host=f"localhost:{port}")[0] == 200
        # a page of another site whose name resolves to 127.0.0.1 (DNS rebinding) is refused
        assert status_of(server.url, host=f"attacker.example:{port}")[0] == 403
    finally:
        stop_ui(server)


@pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")
def test_downloads_serve_the_files_of_a_run_and_nothing_else(tmp_path):
    runs = tmp_path / "runs"
    run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="fcfs", max_jobs=50, out_dir=runs / "r1"))
    (tmp_path / "secret.txt").write_text("secret")
    (runs / "r1" / "link.txt").symlink_to(tmp_path / "secret.txt")
    server = start_ui(runs, tmp_path, tmp_path / "cache")
    try:
        base = server.url.rstrip("/")
        code, body = status_of(f"{base}/files/r1/out_jobs.csv")
        assert code == 200 and body == (runs / "r1" / "out_jobs.csv").read_bytes()
        # URLs that reach the download and report routes are refused
        for path in ("/files/r1/link.txt", "/files/nope/out_jobs.csv", "/files/.hidden/out_jobs.csv",
                     "/files/r1/.%2e", "/files/..%2e/r1", "/reports/nope/report.html", "/reports/.x/report.html",
                     "/campaign-reports/..x/report.html", "/campaign-reports/nope/report.html"):
            code, body = status_of(base + path)
            assert code == 404 and b"secret" not in body, path
        # those whose encoded separators leave no route to match get the app's own page, never a file
        for path in ("/files/r1/..%2F..%2Fsecret.txt", "/files/..%2Fsecret.txt/x", "/files/r1/%2Fetc%2Fpasswd",
                     "/reports/..%2F..%2F/report.html"):
            code, body = status_of(base + path)
            assert b"secret" not in body and b"root:" not in body and (code == 404 or b"<!DOCTYPE html>" in body)
    finally:
        stop_ui(server)
