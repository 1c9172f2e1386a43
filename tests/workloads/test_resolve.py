"""Tests of resolve_workload: a path as is, a catalogue name to its cached file, or a message saying what to do."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from batreplay.workloads.loading import WorkloadOptions, load_workload
from batreplay.workloads.pwa import PWA_CATALOGUE, ChecksumMismatchError
from batreplay.workloads.resolve import resolve_workload
from pwa_server import offline, tiny_swf_gz  # noqa: F401 (fixture)

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
KTH_NAME = "KTH-SP2-1996-2.1-cln"


def test_an_existing_path_is_returned_as_given(workloads_dir, tmp_path, monkeypatch):
    assert resolve_workload(workloads_dir / KTH) == workloads_dir / KTH
    assert resolve_workload(str(workloads_dir / KTH)) == workloads_dir / KTH
    (tmp_path / "tiny.swf.gz").write_bytes(tiny_swf_gz())
    assert resolve_workload("tiny.swf.gz", relative_to=tmp_path) == tmp_path / "tiny.swf.gz"
    # A file of the current directory named like a catalogue log wins over the cache.
    monkeypatch.chdir(tmp_path)
    (tmp_path / KTH).write_bytes(b"a local copy")
    assert resolve_workload(KTH) == Path(KTH)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_workload("~/tiny.swf.gz") == tmp_path / "tiny.swf.gz"


@pytest.mark.parametrize("text", [KTH_NAME, KTH, "KTH-SP2-1996-2.1-cln.swf", "kth-sp2-1996-2.1-cln"])
def test_a_catalogue_name_resolves_to_the_cached_file(text, workloads_dir, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copyfile(workloads_dir / KTH, cache / KTH)
    assert resolve_workload(text, cache_dir=cache) == cache / KTH


def test_the_default_cache_is_the_fetch_cache(workloads_dir, offline):
    (offline / "pwa").mkdir(parents=True)
    shutil.copyfile(workloads_dir / KTH, offline / "pwa" / KTH)
    path = resolve_workload(KTH_NAME)
    assert path == offline / "pwa" / KTH
    # What it resolves to is the real log, ready for the loader.
    loaded = load_workload(path, WorkloadOptions(max_jobs=20), nb_res=100)
    assert len(loaded.document["jobs"]) == 20


def test_a_name_not_yet_fetched_says_how_to_fetch_it(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        resolve_workload(KTH_NAME, cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert "\n" not in message
    assert f"`batreplay fetch {KTH_NAME}`" in message
    assert str(tmp_path / "cache" / KTH) in message and message.endswith("or pass a local path to --workload")


def test_the_message_names_the_option_the_name_came_from(tmp_path):
    """``batreplay analyze --swf NAME`` resolves the log like a workload: its message names --swf."""
    with pytest.raises(FileNotFoundError) as info:
        resolve_workload(KTH_NAME, cache_dir=tmp_path / "cache", option="--swf")
    message = str(info.value)
    assert message.endswith("or pass a local path to --swf") and "--workload" not in message
    assert str(tmp_path / "cache" / KTH) in message


def test_a_corrupted_cached_file_is_refused(tmp_path):
    (tmp_path / KTH).write_bytes(b"truncated")
    with pytest.raises(ChecksumMismatchError, match=f"delete it and run `batreplay fetch {KTH_NAME}` again") as info:
        resolve_workload(KTH_NAME, cache_dir=tmp_path)
    assert info.value.expected == PWA_CATALOGUE[KTH_NAME].sha256


def test_a_log_without_known_checksum_is_taken_as_cached(tmp_path):
    entry = PWA_CATALOGUE["LCG-2005-1"]
    assert entry.sha256 is None
    (tmp_path / entry.filename).write_bytes(tiny_swf_gz())
    assert resolve_workload("LCG-2005-1", cache_dir=tmp_path) == tmp_path / entry.filename


def test_unknown_names_and_missing_paths(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"workload 'Mars-1999': no such file, nor a Parallel Workloads "
                                                r"Archive log name \(one of ANL-Intrepid-2009-1, .*KTH-SP2"):
        resolve_workload("Mars-1999", cache_dir=tmp_path)
    missing = tmp_path / "logs" / "mine.swf.gz"
    with pytest.raises(FileNotFoundError, match=f"^workload {missing}: no such file$"):
        resolve_workload(missing, cache_dir=tmp_path)
    # A missing path whose file name is a catalogue log points to the fetch command.
    with pytest.raises(FileNotFoundError, match=f"no such file .*`batreplay fetch {KTH_NAME}` puts it at "
                                                f"{tmp_path / KTH}"):
        resolve_workload(os.path.join("logs", KTH), cache_dir=tmp_path)
