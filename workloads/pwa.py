"""Fetching logs of the Parallel Workloads Archive (PWA) into a local cache, with checksum verification.

The archive (D. G. Feitelson et al., https://www.cs.huji.ac.il/labs/parallel/workload/; cite Feitelson,
Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014) keeps each log
in a folder ``l_<site>/``. :data:`PWA_CATALOGUE` names a few of them. Its sha256 values are those of the
copies in the project's ``shared/workloads/README.md``, which that README traces to unmodified archive files
(original gzip timestamps); they were not re-checked against the archive itself (no network when written).
Logs without a recorded checksum are fetched unverified unless the caller passes ``sha256``.

Cache: ``$BATREPLAY_CACHE/pwa`` when the environment variable ``BATREPLAY_CACHE`` is set (it names the root
of batreplay's caches), else ``$XDG_CACHE_HOME/batreplay/pwa``, else ``~/.cache/batreplay/pwa``. A download
goes to a temporary file in the cache folder, is checked, then renamed into place (atomic on one file
system), so the cache never holds a partial or unverified file under the final name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

PWA_BASE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/"


@dataclass(frozen=True)
class PwaLog:
    """One catalogue entry: the archive folder and file name, and the sha256 of the gzip file if known."""

    folder: str
    filename: str
    sha256: str | None = None

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

#: Type of the URL opener: called with a URL (and a timeout keyword), returns a binary file-like object that
#: is also a context manager (what :func:`urllib.request.urlopen` returns).
Opener = Callable[..., IO[bytes]]


class UnknownLogError(ValueError):
    """A name that is neither a URL nor a log of :data:`PWA_CATALOGUE`."""


class ChecksumMismatchError(ValueError):
    """A downloaded (or cached) file whose sha256 differs from the expected value.

    Attributes: ``url``, ``expected``, ``actual`` (hex digests).
    """

    def __init__(self, url: str, expected: str, actual: str) -> None:
        self.url, self.expected, self.actual = url, expected, actual
        super().__init__(
            f"sha256 mismatch for {url}: expected {expected}, got {actual}; the downloaded file was removed"
        )


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


def resolve_log(name_or_url: str) -> tuple[str, str | None]:
    """Turn a catalogue name or a URL into ``(url, sha256 or None)``.

    Names are matched case-insensitively, with or without the ``.swf.gz`` / ``.swf`` suffix. Anything
    containing ``://`` is taken as a URL (``https://``, ``http://``, ``file://`` ...); if its file name is a
    catalogue file, the catalogue's checksum applies.

    Raises:
        UnknownLogError: not a URL and not in the catalogue (the message lists the known names).
    """
    if "://" in name_or_url:
        filename = Path(urllib.parse.urlparse(name_or_url).path).name
        entry = PWA_CATALOGUE.get(filename.removesuffix(".swf.gz"))
        return name_or_url, entry.sha256 if entry and entry.filename == filename else None
    key = name_or_url.strip().lower().removesuffix(".gz").removesuffix(".swf")
    for name, entry in PWA_CATALOGUE.items():
        if name.lower() == key:
            return entry.url, entry.sha256
    raise UnknownLogError(
        f"unknown workload log {name_or_url!r}: give a URL or one of {', '.join(sorted(PWA_CATALOGUE))}"
    )


def file_sha256(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_log(
    name_or_url: str,
    cache_dir: str | Path | None = None,
    sha256: str | None = None,
    *,
    opener: Opener | None = None,
    timeout: float = 60.0,
) -> Path:
    """Return a local path to a PWA log, downloading it into the cache when it is not there yet.

    Args:
        name_or_url: a :data:`PWA_CATALOGUE` name (e.g. ``"KTH-SP2-1996-2.1-cln"``) or a URL.
        cache_dir: folder for the file (created if needed); default :func:`default_cache_dir`.
        sha256: expected hex digest; default the catalogue's value for that file, if any. Without any
            expected digest the file is not verified.
        opener: function used to open the URL, default :func:`urllib.request.urlopen` (tests inject one).
        timeout: network timeout, seconds.

    Returns:
        Path of the cached file, named like the URL's last path component.

    A file already in the cache is returned without any download when it matches the expected digest (or when
    no digest is known); a cached file that does not match is downloaded again.

    Raises:
        UnknownLogError: unknown name.
        ChecksumMismatchError: the downloaded bytes do not match; the temporary file is removed and nothing is
            left under the final name.
        urllib.error.URLError / OSError: the download failed (the temporary file is removed).
    """
    url, known_sha = resolve_log(name_or_url)
    expected = (sha256 or known_sha or "").lower() or None
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    filename = Path(urllib.parse.urlparse(url).path).name
    if not filename:
        raise UnknownLogError(f"URL {url!r} has no file name to cache it under")
    target = folder / filename
    if target.is_file() and (expected is None or file_sha256(target) == expected):
        return target

    folder.mkdir(parents=True, exist_ok=True)
    open_url = opener if opener is not None else urllib.request.urlopen
    handle, temp_name = tempfile.mkstemp(dir=folder, prefix=f".{filename}.", suffix=".part")
    temp = Path(temp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as out, open_url(url, timeout=timeout) as response:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        actual = digest.hexdigest()
        if expected is not None and actual != expected:
            raise ChecksumMismatchError(url, expected, actual)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return target
