"""Offline stand-ins for the Parallel Workloads Archive: a local HTTP server in a thread, a cache folder in
``tmp_path`` instead of the user's, and a guard that refuses any host but this machine (no test reaches the
real network)."""

from __future__ import annotations

import functools
import gzip
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})

#: A small SWF log (header and three jobs, the 18 standard fields).
TINY_SWF = """; Version: 2.2
; MaxNodes: 4
; MaxProcs: 4
1 0 5 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1
2 30 0 50 1 -1 -1 1 60 -1 1 2 1 -1 1 -1 -1 -1
3 60 10 400 4 -1 -1 4 500 -1 1 1 1 -1 1 -1 -1 -1
"""


def tiny_swf_gz() -> bytes:
    """:data:`TINY_SWF` gzipped with a fixed timestamp (the same bytes every time)."""
    return gzip.compress(TINY_SWF.encode(), mtime=0)


@dataclass
class LocalArchive:
    """A folder served over HTTP on 127.0.0.1: ``root`` (put files there), ``base_url`` (ends with ``/``) and the
    request paths the server answered, in order."""

    root: Path
    base_url: str
    requests: list[str] = field(default_factory=list)

    def url(self, relative: str) -> str:
        return self.base_url + relative


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No real network and no real cache: name resolution of any host but this machine fails, proxies are
    ignored, and ``$BATREPLAY_CACHE`` points into ``tmp_path``; returns that cache root."""
    real_getaddrinfo = socket.getaddrinfo

    def local_only(host, *args, **kwargs):
        if host not in LOCAL_HOSTS:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (tests are offline)")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
    for name in ("http_proxy", "https_proxy", "ftp_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    root = tmp_path / "user-cache"
    monkeypatch.setenv("BATREPLAY_CACHE", str(root))
    return root


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[LocalArchive]:
    """A :class:`LocalArchive` serving ``tmp_path / "served"`` until the test ends."""
    root = tmp_path / "served"
    root.mkdir()
    seen: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen.append(self.path)
            super().do_GET()

        def log_message(self, *args) -> None:  # keep the test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield LocalArchive(root, f"http://127.0.0.1:{server.server_address[1]}/", seen)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
