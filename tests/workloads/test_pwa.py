"""Tests of the PWA fetch helper, offline: file:// URLs and an injected opener stand in for the network."""

from __future__ import annotations

import hashlib
import re
import urllib.request
from pathlib import Path

import pytest
from batreplay.workloads.pwa import (
    PWA_BASE_URL,
    PWA_CATALOGUE,
    ChecksumMismatchError,
    UnknownLogError,
    default_cache_dir,
    fetch_log,
    resolve_log,
)
from conftest import WORKLOADS

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def _readme_sha256() -> dict[str, str]:
    """file -> sha256 from the table of shared/workloads/README.md."""
    table = {}
    for line in (WORKLOADS / "README.md").read_text().splitlines():
        match = re.match(r"^\|\s*([\w.-]+\.swf\.gz)\s*\|.*\|\s*([0-9a-f]{64})\s*\|", line)
        if match:
            table[match.group(1)] = match.group(2)
    return table


class CountingOpener:
    """Opens every URL as the given local file (or the URL itself when None) and counts the calls."""

    def __init__(self, local: Path | None = None) -> None:
        self.local = local
        self.urls: list[str] = []

    def __call__(self, url: str, timeout: float | None = None):
        self.urls.append(url)
        return urllib.request.urlopen(self.local.as_uri() if self.local else url, timeout=timeout)


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
    for entry in PWA_CATALOGUE.values():
        assert entry.url.startswith(PWA_BASE_URL + "l_")
        assert entry.url.endswith("/" + entry.filename)
    assert PWA_CATALOGUE["KTH-SP2-1996-2.1-cln"].url == (
        "https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz"
    )


def test_resolve_names_and_urls():
    url, digest = resolve_log("kth-sp2-1996-2.1-cln.swf.gz")
    assert url == PWA_CATALOGUE["KTH-SP2-1996-2.1-cln"].url and digest == PWA_CATALOGUE["KTH-SP2-1996-2.1-cln"].sha256
    # A URL whose file name is catalogued gets the catalogue's checksum; any other URL gets none.
    assert resolve_log("file:///somewhere/" + KTH)[1] == digest
    assert resolve_log("https://example.org/other.swf.gz") == ("https://example.org/other.swf.gz", None)
    with pytest.raises(UnknownLogError, match="KTH-SP2-1996-2.1-cln"):
        resolve_log("no-such-log")


def test_fetch_file_url_verifies_and_caches(workloads_dir, tmp_path):
    source = workloads_dir / KTH
    opener = CountingOpener()
    path = fetch_log(source.as_uri(), cache_dir=tmp_path / "cache", opener=opener)
    assert path == tmp_path / "cache" / KTH
    assert path.read_bytes() == source.read_bytes()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == _readme_sha256()[KTH]
    assert opener.urls == [source.as_uri()]
    # Second call: served from the cache, no download.
    assert fetch_log(source.as_uri(), cache_dir=tmp_path / "cache", opener=opener) == path
    assert len(opener.urls) == 1
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [KTH]  # no temporary file left


def test_fetch_by_name_uses_the_archive_url(workloads_dir, tmp_path):
    opener = CountingOpener(local=workloads_dir / KTH)
    path = fetch_log("KTH-SP2-1996-2.1-cln", cache_dir=tmp_path, opener=opener)
    assert opener.urls == [PWA_CATALOGUE["KTH-SP2-1996-2.1-cln"].url]
    assert path.read_bytes() == (workloads_dir / KTH).read_bytes()


def test_checksum_mismatch_removes_the_file(workloads_dir, tmp_path):
    with pytest.raises(ChecksumMismatchError) as info:
        fetch_log((workloads_dir / KTH).as_uri(), cache_dir=tmp_path, sha256="0" * 64)
    assert info.value.expected == "0" * 64
    assert info.value.actual == _readme_sha256()[KTH]
    assert KTH in str(info.value) and "removed" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_wrong_bytes_under_a_catalogued_name_are_rejected(tmp_path):
    # A "mirror" serving other bytes under the KTH file name fails against the catalogue checksum.
    impostor = tmp_path / "mirror" / KTH
    impostor.parent.mkdir()
    impostor.write_bytes(b"not the KTH log")
    with pytest.raises(ChecksumMismatchError):
        fetch_log(impostor.as_uri(), cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_corrupted_cache_entry_is_downloaded_again(workloads_dir, tmp_path):
    (tmp_path / KTH).write_bytes(b"truncated")
    opener = CountingOpener(local=workloads_dir / KTH)
    path = fetch_log("KTH-SP2-1996-2.1-cln", cache_dir=tmp_path, opener=opener)
    assert len(opener.urls) == 1
    assert path.read_bytes() == (workloads_dir / KTH).read_bytes()


def test_failed_download_leaves_nothing(tmp_path):
    class Broken:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, size=-1):
            raise OSError("connection reset")

    with pytest.raises(OSError, match="connection reset"):
        fetch_log("KTH-SP2-1996-2.1-cln", cache_dir=tmp_path, opener=lambda url, timeout=None: Broken())
    assert list(tmp_path.iterdir()) == []


def test_unknown_name(tmp_path):
    with pytest.raises(UnknownLogError, match="unknown workload log 'Mars-1999'"):
        fetch_log("Mars-1999", cache_dir=tmp_path)


def test_cache_dir_from_environment(workloads_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "root"))
    assert default_cache_dir() == tmp_path / "root" / "pwa"
    path = fetch_log((workloads_dir / KTH).as_uri())
    assert path == tmp_path / "root" / "pwa" / KTH
    monkeypatch.delenv("BATREPLAY_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "batreplay" / "pwa"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "batreplay" / "pwa"
