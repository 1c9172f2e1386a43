"""Fetching logs of the Parallel Workloads Archive (PWA) into a local cache, with checksum verification.

The archive (D. G. Feitelson et al., https://www.cs.huji.ac.il/labs/parallel/workload/; cite Feitelson,
Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014) keeps each log
in a folder ``l_<site>/``. :data:`PWA_CATALOGUE` names a few of them. Its sha256 values are those of the
copies in the project's ``shared/workloads/README.md``, which that README traces to unmodified archive files
(original gzip timestamps); they were not re-checked against the archive itself (no network when written).
Logs without a recorded checksum are fetched unverified unless the caller passes ``sha256``.

Cache: ``$BATREPLAY_CACHE/pwa`` when the environment variable ``BATREPLAY_CACHE`` is set (it names the root
of batreplay's caches), else ``$XDG_CACHE_HOME/batreplay/pwa``, else ``~/.cache/batreplay/pwa``. Downloads go
through pooch (:func:`pooch.retrieve`): into a temporary file of the cache folder, checked, then moved into
place, so the cache never holds a partial or unverified file under the final name. Without network, copy the
file into the cache under the name given by :func:`cached_path`, or give its local path as the workload.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

PWA_BASE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/"
#: URL schemes :func:`fetch_log` downloads (through pooch's HTTP and FTP downloaders).
FETCH_SCHEMES: tuple[str, ...] = ("http", "https", "ftp")


@dataclass(frozen=True)
class PwaLog:
    """One catalogue entry: the archive folder and file name, and the sha256 of the gzip file if known."""

    folder: str
    filename: str
    sha256: str | None = None

    @property
    def name(self) -> str:
        """Catalogue name: the file name without ``.swf.gz`` (e.g. ``KTH-SP2-1996-2.1-cln``)."""
        return self.filename.removesuffix(".swf.gz")

    @property
    def url(self) -> str:
        """Download address under :data:`PWA_BASE_URL`."""
        return f"{PWA_BASE_URL}{self.folder}/{self.filename}"


#: (archive folder, file name, sha256 or None). The last entries have no verified checksum (the shared LCG copy
#: was renamed by a third party; the others are not in the shared folder).
_CATALOGUE_ROWS: tuple[tuple[str, str, str | None], ...] = (
    ("l_kth_sp2", "KTH-SP2-1996-2.1-cln.swf.gz", "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b"),
    ("l_sdsc_sp2", "SDSC-SP2-1998-4.2-cln.swf.gz", "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac"),
    ("l_ctc_sp2", "CTC-SP2-1996-3.1-cln.swf.gz", "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4"),
    ("l_hpc2n", "HPC2N-2002-2.2-cln.swf.gz", "3c534857d6065cfd9cc35aac8d064c9c17172be7acf336de835006f43a626e64"),
    ("l_metacentrum", "METACENTRUM-2009-2.swf.gz", "7c0b347e77fc7a9aafe91f96a20186a8dd16c11a51e5f19c692a93d11a64893c"),
    (
        "l_nasa_ipsc",
        "NASA-iPSC-1993-3.1-cln.swf.gz",
        "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29",
    ),
    ("l_lanl_cm5", "LANL-CM5-1994-4.1-cln.swf.gz", "71ff3dfa301b3ee1bd30ebc63c5363b5e8ec488e75f1f9398aa46d485ef23c3c"),
    ("l_sdsc_par", "SDSC-Par-1996-3.1-cln.swf.gz", "cb1aab02b5e3c34659d1c1d6f73c002d415229c59f40c03fab4e20331abdaff7"),
    (
        "l_sdsc_blue",
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "9aab21f3cfa108f3ecefa52391b384d996dcf4216f920186f47a734646b2c658",
    ),
    ("l_sdsc_ds", "SDSC-DS-2004-2.1-cln.swf.gz", "0ddb885a96a7f5ee9009d8a36ef350b1d1c451044c205811938995aac80fcc36"),
    ("l_osc", "OSC-Clust-2000-3.1-cln.swf.gz", "f2d762130a55ab26cfedc37a9f4ab55923dd07bf185912ded67628f14dbf09ab"),
    (
        "l_sandia_ross",
        "Sandia-Ross-2001-1.1-cln.swf.gz",
        "08b390c160c41c5d3a70d66c48884b5bb68aa277506988ccdc408913342b38df",
    ),
    (
        "l_llnl_atlas",
        "LLNL-Atlas-2006-2.1-cln.swf.gz",
        "48cc83b7a0490252aa1ae41a4b03dd598bc0683e146be94047febee36e7e0b36",
    ),
    (
        "l_llnl_thunder",
        "LLNL-Thunder-2007-1.1-cln.swf.gz",
        "00d9bce501efd3a23cd0713bbae591516b7a69217d5f4b851725f601f3b75247",
    ),
    ("l_lcg", "LCG-2005-1.swf.gz", None),
    ("l_sdsc_par", "SDSC-Par-1995-3.1-cln.swf.gz", None),
    ("l_lpc", "LPC-EGEE-2004-1.2-cln.swf.gz", None),
    ("l_anl_int", "ANL-Intrepid-2009-1.swf.gz", None),
    ("l_ricc", "RICC-2010-2.swf.gz", None),
    ("l_cea_curie", "CEA-Curie-2011-2.1-cln.swf.gz", None),
    ("l_metacentrum2", "METACENTRUM-2013-3.swf.gz", None),
)

#: Log name (file name without ``.swf.gz``) -> catalogue entry.
PWA_CATALOGUE: dict[str, PwaLog] = {
    filename.removesuffix(".swf.gz"): PwaLog(folder, filename, sha256) for folder, filename, sha256 in _CATALOGUE_ROWS
}


class UnknownLogError(ValueError):
    """A name that is neither a URL :func:`fetch_log` can download nor a log of :data:`PWA_CATALOGUE`."""


class ChecksumMismatchError(ValueError):
    """A downloaded (or cached) file whose sha256 differs from the expected value.

    Attributes: ``url`` (or the cached file's path), ``expected``, ``actual`` (hex digests).
    """

    def __init__(self, url: str, expected: str, actual: str, detail: str = "the downloaded file was removed") -> None:
        self.url, self.expected, self.actual = url, expected, actual
        super().__init__(f"sha256 mismatch for {url}: expected {expected}, got {actual}; {detail}")


class DownloadError(OSError):
    """A download that failed on the network side (no network, unknown host, HTTP error, time-out): one line
    naming the URL, the reason, the cache path the file would have gone to and what to do instead (copy the file
    there, or give the local file's path wherever the log is needed). Errors of the cache's file system (disk
    full, permission denied) are not download errors and keep their own type and message.

    Attributes: ``url``, ``target`` (the cache path), ``reason`` (short text, e.g. ``Connection refused``).
    """

    def __init__(self, url: str, target: Path, reason: str) -> None:
        self.url, self.target, self.reason = url, target, reason
        super().__init__(f"cannot download {url} ({reason}); without network, copy the file to {target}, "
                         "or pass the local file's path instead")


def cache_root() -> Path:
    """batreplay's cache folder: ``$BATREPLAY_CACHE``, else ``$XDG_CACHE_HOME/batreplay``, else
    ``~/.cache/batreplay``."""
    root = os.environ.get("BATREPLAY_CACHE")
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "batreplay"


def default_cache_dir() -> Path:
    """Folder where fetched logs are kept: ``pwa`` in :func:`cache_root`."""
    return cache_root() / "pwa"


def catalogue_entry(name: str) -> PwaLog | None:
    """The :data:`PWA_CATALOGUE` entry called ``name``, or None.

    Matched case-insensitively, with or without the ``.swf.gz`` / ``.swf`` suffix and surrounding blanks;
    a path (``a/b``) never matches.
    """
    key = name.strip().lower().removesuffix(".gz").removesuffix(".swf")
    if not key or "/" in key or "\\" in key:
        return None
    return next((entry for entry in PWA_CATALOGUE.values() if entry.name.lower() == key), None)


def cached_path(entry: PwaLog, cache_dir: str | Path | None = None) -> Path:
    """Where the log of ``entry`` is kept: ``cache_dir`` (default :func:`default_cache_dir`) / its file name."""
    return (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / entry.filename


def resolve_log(name_or_url: str) -> tuple[str, str | None]:
    """Turn a catalogue name or a URL into ``(url, sha256 or None)``.

    Names are matched as :func:`catalogue_entry` does. Anything containing ``://`` is taken as a URL; if its
    file name is a catalogue file, the catalogue's checksum applies.

    Raises:
        UnknownLogError: not a URL and not in the catalogue (the message lists the known names).
    """
    if "://" in name_or_url:
        filename = Path(urllib.parse.urlparse(name_or_url).path).name
        entry = PWA_CATALOGUE.get(filename.removesuffix(".swf.gz"))
        return name_or_url, entry.sha256 if entry and entry.filename == filename else None
    entry = catalogue_entry(name_or_url)
    if entry is None:
        raise UnknownLogError(
            f"unknown workload log {name_or_url!r}: give a URL or one of {', '.join(sorted(PWA_CATALOGUE))}"
        )
    return entry.url, entry.sha256


def file_sha256(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


def failure_reason(err: BaseException, timeout: float) -> str:
    """A short reason for a failed download: ``HTTP 404 Not Found``, ``no answer within 60 s`` or the system's
    words (``Connection refused``, ``Temporary failure in name resolution``) without Python's wrappers."""
    import requests

    if isinstance(err, requests.HTTPError) and err.response is not None:
        return f"HTTP {err.response.status_code} {err.response.reason}".strip()
    if isinstance(err, (requests.Timeout, TimeoutError)):
        return f"no answer within {timeout:g} s"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    match = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", str(err))
    return match.group(1).strip() if match else f"{type(err).__name__}: {str(err)[:120]}"


class _CacheFile:
    """The file a download is written to, remembering the error its writes raised (``error``), so that a failure
    of the cache's file system is told from a failure of the network (both are OSErrors)."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        try:
            return self.handle.write(data)
        except OSError as err:
            self.error = err
            raise

    def flush(self) -> None:
        try:
            self.handle.flush()
        except OSError as err:
            self.error = err
            raise


class _Downloader:
    """pooch downloader: pooch's own for the URL's scheme, its network failures turned into
    :class:`DownloadError`, and the sha256 of what it wrote kept (``sha256``) to report a mismatch. Errors of
    the file written to (opening, writing, flushing, closing it) go through as they are."""

    def __init__(self, target: Path, timeout: float, progressbar: Any) -> None:
        self.target, self.timeout, self.progressbar = target, timeout, progressbar
        self.sha256: str | None = None

    def __call__(self, url: str, output_file: str, pooch: Any) -> None:
        import ftplib

        import requests
        from pooch import FTPDownloader, HTTPDownloader

        bar = self.progressbar or False
        if url.startswith("ftp"):
            inner: Any = FTPDownloader(timeout=self.timeout, progressbar=bar, chunk_size=1 << 16)
        else:
            inner = HTTPDownloader(timeout=self.timeout, progressbar=bar, chunk_size=1 << 16)
        with open(output_file, "wb") as handle:
            sink = _CacheFile(handle)
            try:
                inner(url, sink, pooch)
            except (requests.RequestException, ftplib.Error, OSError, EOFError) as err:
                if sink.error is not None:  # the cache's file system failed (its error may be in err's context)
                    raise sink.error from None
                # requests' errors, ftplib's replies, and the socket errors of the transfer (refused, unreachable,
                # unknown host, time-out; OSErrors too, but not of the file, which is sink.error)
                raise DownloadError(url, self.target, failure_reason(err, self.timeout)) from err
        self.sha256 = file_sha256(output_file)


@contextlib.contextmanager
def _quiet_pooch() -> Iterator[None]:
    """Silence pooch's own log lines (download notices, hints about ``pooch.retrieve``) for the duration."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def fetch_log(
    name_or_url: str,
    cache_dir: str | Path | None = None,
    sha256: str | None = None,
    *,
    progress: bool | Console | Any = False,
    timeout: float = 60.0,
) -> Path:
    """Return a local path to a PWA log, downloading it into the cache (with pooch) when it is not there yet.

    Args:
        name_or_url: a :data:`PWA_CATALOGUE` name (e.g. ``"KTH-SP2-1996-2.1-cln"``) or an ``http(s)://`` or
            ``ftp://`` URL.
        cache_dir: folder for the file (created if needed); default :func:`default_cache_dir`.
        sha256: expected hex digest; default the catalogue's value for that file, if any. Without any
            expected digest the file is not verified.
        progress: False for no progress bar; True for a rich bar (bytes, speed, time left) on standard error; a
            :class:`rich.console.Console` to draw it there; or any object with pooch's progress-bar protocol
            (see :class:`batreplay.workloads.download_progress.RichDownloadBar`). The rich bar stays silent
            when its console is not a terminal.
        timeout: network time-out, seconds.

    Returns:
        Path of the cached file, named like the URL's last path component.

    A file already in the cache is returned without any download when it matches the expected digest (or when
    no digest is known); a cached file that does not match is downloaded again.

    Raises:
        UnknownLogError: unknown name, a URL of another scheme (``file://``: give the path itself as the
            workload) or without a file name.
        ChecksumMismatchError: the downloaded bytes do not match; nothing is left under the final name.
        DownloadError: the download failed on the network side (no network, HTTP error, time-out); the message
            names the URL, the cache path to copy the file to instead, and says that the local file's path may
            be passed instead.
        OSError: (not a DownloadError) the cache folder cannot be created, or the downloaded file cannot be
            written there (disk full, permission denied), with the system's message.
    """
    url, known_sha = resolve_log(name_or_url)
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme.lower() not in FETCH_SCHEMES:
        raise UnknownLogError(f"{url}: only {', '.join(s + '://' for s in FETCH_SCHEMES)} URLs are downloaded; "
                              "give a local file's path as the workload (--workload PATH) instead")
    filename = Path(parsed.path).name
    if not filename:
        raise UnknownLogError(f"URL {url!r} has no file name to cache it under")
    expected = (sha256 or known_sha or "").lower() or None
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = folder / filename
    if target.is_file() and (expected is None or file_sha256(target) == expected):
        return target

    import pooch

    from batreplay.workloads.download_progress import download_bar

    folder.mkdir(parents=True, exist_ok=True)
    bar = download_bar(progress, filename)
    downloader = _Downloader(target, timeout, bar)
    try:
        with _quiet_pooch():
            pooch.retrieve(url, known_hash=expected, fname=filename, path=folder, downloader=downloader)
    except ValueError:
        if expected is not None and downloader.sha256 is not None and downloader.sha256 != expected:
            raise ChecksumMismatchError(url, expected, downloader.sha256,
                                        f"the downloaded file was removed, nothing was written to {target}") from None
        raise
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return target
