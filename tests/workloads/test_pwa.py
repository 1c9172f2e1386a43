"""Tests of the PWA fetch helper, offline: a local HTTP server stands in for the archive (``pwa_server``)."""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import shutil

import pytest
from batreplay.workloads import pwa
from batreplay.workloads.download_progress import RichDownloadBar
from batreplay.workloads.pwa import (
    PWA_BASE_URL,
    PWA_CATALOGUE,
    ChecksumMismatchError,
    DownloadError,
    UnknownLogError,
    catalogue_entry,
    default_cache_dir,
    fetch_log,
    resolve_log,
)
from conftest import WORKLOADS
from hypothesis import given
from hypothesis import strategies as st
from pwa_server import archive, offline, tiny_swf_gz  # noqa: F401 (fixtures)
from rich.console import Console

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
KTH_NAME = "KTH-SP2-1996-2.1-cln"


def _readme_sha256() -> dict[str, str]:
    """file -> sha256 from the table of shared/workloads/README.md."""
    table = {}
    for line in (WORKLOADS / "README.md").read_text().splitlines():
        match = re.match(r"^\|\s*([\w.-]+\.swf\.gz)\s*\|.*\|\s*([0-9a-f]{64})\s*\|", line)
        if match:
            table[match.group(1)] = match.group(2)
    return table


def _serve_kth(archive, workloads_dir, monkeypatch):
    """The local archive serves the shared KTH log at the archive's layout, and the catalogue points there."""
    folder = archive.root / "l_kth_sp2"
    folder.mkdir()
    shutil.copyfile(workloads_dir / KTH, folder / KTH)
    monkeypatch.setattr(pwa, "PWA_BASE_URL", archive.base_url)


class RecordingBar:
    """pooch's progress-bar protocol, recording every call."""

    def __init__(self) -> None:
        self.total = None
        self.updates: list[int] = []
        self.resets = 0
        self.closed = 0

    def update(self, n: int) -> None:
        self.updates.append(n)

    def reset(self) -> None:
        self.resets += 1

    def close(self) -> None:
        self.closed += 1


def test_catalogue_checksums_match_readme(workloads_dir):
    readme = _readme_sha256()
    assert len(readme) == 16
    by_file = {entry.filename: entry for entry in PWA_CATALOGUE.values()}
    # Every shared log is catalogued with the README's checksum, except LCG (stored under another name
    # than the archive's LCG-2005-1) and lublin_256 (synthetic, not an archive log).
    for filename, digest in readme.items():
        if filename in ("LCG.swf.gz", "lublin_256.swf.gz"):
            assert filename not in by_file
            continue
        assert by_file[filename].sha256 == digest, filename
    for name, entry in PWA_CATALOGUE.items():
        assert entry.name == name
        assert entry.url.startswith(PWA_BASE_URL + "l_")
        assert entry.url.endswith("/" + entry.filename)
    assert PWA_CATALOGUE[KTH_NAME].url == (
        "https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz"
    )


def test_resolve_names_and_urls():
    url, digest = resolve_log("kth-sp2-1996-2.1-cln.swf.gz")
    assert url == PWA_CATALOGUE[KTH_NAME].url and digest == PWA_CATALOGUE[KTH_NAME].sha256
    # A URL whose file name is catalogued gets the catalogue's checksum; any other URL gets none.
    assert resolve_log("https://mirror.example/" + KTH)[1] == digest
    assert resolve_log("https://example.org/other.swf.gz") == ("https://example.org/other.swf.gz", None)
    with pytest.raises(UnknownLogError, match=KTH_NAME):
        resolve_log("no-such-log")
    assert catalogue_entry("logs/" + KTH) is None  # a path is not a name


@given(st.sampled_from(sorted(PWA_CATALOGUE)), st.sampled_from(["", ".swf", ".swf.gz"]),
       st.sampled_from([str.lower, str.upper, str]), st.sampled_from(["", " "]))
def test_every_spelling_of_a_name_finds_its_entry(name, suffix, case, blank):
    assert catalogue_entry(blank + case(name + suffix) + blank) is PWA_CATALOGUE[name]


def test_download_verifies_caches_and_leaves_no_temporary_file(archive, tmp_path):
    data = tiny_swf_gz()
    (archive.root / "tiny.swf.gz").write_bytes(data)
    cache = tmp_path / "cache"
    digest = hashlib.sha256(data).hexdigest()
    path = fetch_log(archive.url("tiny.swf.gz"), cache_dir=cache, sha256=digest)
    assert path == cache / "tiny.swf.gz"
    assert path.read_bytes() == data
    assert archive.requests == ["/tiny.swf.gz"]
    # Second call: served from the cache, no request.
    assert fetch_log(archive.url("tiny.swf.gz"), cache_dir=cache, sha256=digest) == path
    assert archive.requests == ["/tiny.swf.gz"]
    assert [p.name for p in cache.iterdir()] == ["tiny.swf.gz"]


def test_fetch_by_name_uses_the_archive_layout_and_catalogue_checksum(archive, workloads_dir, tmp_path, monkeypatch):
    _serve_kth(archive, workloads_dir, monkeypatch)
    path = fetch_log(KTH_NAME, cache_dir=tmp_path / "cache")
    assert archive.requests == ["/l_kth_sp2/" + KTH]
    assert path.read_bytes() == (workloads_dir / KTH).read_bytes()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == _readme_sha256()[KTH]


def test_checksum_mismatch_is_clear_and_leaves_nothing(archive, tmp_path):
    data = tiny_swf_gz()
    (archive.root / "tiny.swf.gz").write_bytes(data)
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumMismatchError) as info:
        fetch_log(archive.url("tiny.swf.gz"), cache_dir=cache, sha256="0" * 64)
    assert info.value.expected == "0" * 64
    assert info.value.actual == hashlib.sha256(data).hexdigest()
    message = str(info.value)
    assert archive.url("tiny.swf.gz") in message and "removed" in message and str(cache / "tiny.swf.gz") in message
    assert "\n" not in message
    assert list(cache.iterdir()) == []


def test_wrong_bytes_under_a_catalogued_name_are_rejected(archive, tmp_path):
    # A "mirror" serving other bytes under the KTH file name fails against the catalogue checksum.
    (archive.root / KTH).write_bytes(tiny_swf_gz())
    with pytest.raises(ChecksumMismatchError):
        fetch_log(archive.url(KTH), cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_corrupted_cache_entry_is_downloaded_again(archive, workloads_dir, tmp_path, monkeypatch):
    _serve_kth(archive, workloads_dir, monkeypatch)
    (tmp_path / KTH).write_bytes(b"truncated")
    path = fetch_log(KTH_NAME, cache_dir=tmp_path)
    assert len(archive.requests) == 1
    assert path.read_bytes() == (workloads_dir / KTH).read_bytes()


def test_unreachable_url_says_where_to_put_the_file(tmp_path):
    url = "http://127.0.0.1:9/" + KTH  # the discard port: nothing listens there
    bar = RecordingBar()
    with pytest.raises(DownloadError) as info:
        fetch_log(url, cache_dir=tmp_path / "cache", progress=bar, timeout=5)
    message = str(info.value)
    assert "\n" not in message and "urlopen" not in message and "HTTPConnectionPool" not in message
    assert message.startswith(f"cannot download {url} (")
    assert str(tmp_path / "cache" / KTH) in message
    # said by `batreplay fetch`, which has no --workload option
    assert message.endswith("or pass the local file's path instead") and "--workload" not in message
    assert info.value.target == tmp_path / "cache" / KTH and info.value.reason
    assert isinstance(info.value, OSError)  # the command line prints it as one line
    assert bar.closed == 1
    assert list((tmp_path / "cache").iterdir()) == []


def test_no_network_for_a_catalogue_name(tmp_path):
    # The offline fixture makes the archive's host unknown, as on a machine without network.
    with pytest.raises(DownloadError) as info:
        fetch_log(KTH_NAME, timeout=5)
    message = str(info.value)
    assert PWA_CATALOGUE[KTH_NAME].url in message and "Name or service not known" in message
    assert str(tmp_path / "user-cache" / "pwa" / KTH) in message


def test_a_full_disk_is_not_a_download_error(archive, workloads_dir, tmp_path, monkeypatch):
    """The transfer works but the cache's disk is full (writes go to /dev/full): the system's error comes
    through as it is, not as "cannot download ..., without network ...", and nothing is left in the cache."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    _serve_kth(archive, workloads_dir, monkeypatch)
    real_open = open

    def full_disk(file, mode="r", *args, **kwargs):
        return real_open("/dev/full", mode, *args, **kwargs) if "w" in mode else real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(pwa, "open", full_disk, raising=False)  # the name the download's file is opened by
    cache = tmp_path / "cache"
    with pytest.raises(OSError) as info:
        fetch_log(KTH_NAME, cache_dir=cache)
    assert not isinstance(info.value, DownloadError)
    assert info.value.errno == errno.ENOSPC and "cannot download" not in str(info.value)
    assert len(archive.requests) == 1  # it was the write, not the transfer, that failed
    assert list(cache.iterdir()) == []


def test_http_error_names_the_status(archive, tmp_path):
    with pytest.raises(DownloadError, match=r"\(HTTP 404 File not found\)"):
        fetch_log(archive.url("missing.swf.gz"), cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_file_urls_and_unknown_names_are_refused(tmp_path):
    with pytest.raises(UnknownLogError, match="--workload PATH"):
        fetch_log((WORKLOADS / KTH).as_uri(), cache_dir=tmp_path)
    with pytest.raises(UnknownLogError, match="unknown workload log 'Mars-1999'"):
        fetch_log("Mars-1999", cache_dir=tmp_path)


def test_cache_dir_from_environment(archive, tmp_path, monkeypatch):
    (archive.root / "tiny.swf.gz").write_bytes(tiny_swf_gz())
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "root"))
    assert default_cache_dir() == tmp_path / "root" / "pwa"
    assert fetch_log(archive.url("tiny.swf.gz")) == tmp_path / "root" / "pwa" / "tiny.swf.gz"
    monkeypatch.delenv("BATREPLAY_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "batreplay" / "pwa"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "batreplay" / "pwa"


def test_progress_bar_protocol_is_followed(archive, workloads_dir, tmp_path, monkeypatch):
    _serve_kth(archive, workloads_dir, monkeypatch)
    bar = RecordingBar()
    fetch_log(KTH_NAME, cache_dir=tmp_path, progress=bar)
    size = (workloads_dir / KTH).stat().st_size
    assert bar.total == size
    assert len(bar.updates) > 1 and sum(bar.updates[:-1]) >= size and bar.updates[-1] == size
    assert bar.resets == 1 and bar.closed >= 1


def test_rich_bar_shows_bytes_on_a_terminal(archive, workloads_dir, tmp_path, monkeypatch):
    _serve_kth(archive, workloads_dir, monkeypatch)
    screen = io.StringIO()
    fetch_log(KTH_NAME, cache_dir=tmp_path / "a", progress=Console(file=screen, force_terminal=True, width=120))
    shown = screen.getvalue()
    assert KTH in shown and "411.5/411.5 kB" in shown and "/s" in shown  # the 411,455-byte log, done; speed
    piped = io.StringIO()
    fetch_log(KTH_NAME, cache_dir=tmp_path / "b", progress=Console(file=piped, force_terminal=False))
    assert piped.getvalue() == ""  # quiet when not a terminal


def test_rich_bar_counts_within_the_total():
    bar = RichDownloadBar(Console(file=io.StringIO(), force_terminal=False), "x")
    bar.total = 1000
    for _ in range(3):
        bar.update(512)  # pooch counts whole chunks: the last overshoots
    assert bar.completed == 1000
    bar.reset()
    bar.update(1000)
    assert bar.completed == 1000
    bar.close()
    bar.close()
    assert bar.closed
    unknown = RichDownloadBar(Console(file=io.StringIO(), force_terminal=False), "y")
    unknown.total = 0  # no content-length
    unknown.update(300)
    unknown.reset()
    unknown.update(0)
    assert unknown.completed == 300
    unknown.close()
