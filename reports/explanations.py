"""Written explanations of a campaign's results: ``[report] explanations = "expe/explanations/<name>.md"``.

A campaign spec may name a Markdown file that explains its numbers, especially those that do not reproduce the
paper (which variants were tried, with their values). ``campaign report`` includes it:

- in ``README.md``, verbatim, under a heading ``## Explanations`` (:func:`markdown_section`);
- in ``report.html``, as the page's last section (:func:`report_text`: a
  :class:`batreplay.analysis.report.ReportText`, rendered from Markdown with raw HTML escaped).

Without the key nothing is added; a key naming a missing file is an error naming the spec file and the key.
"""

from __future__ import annotations

from batreplay.analysis.report import ReportText
from batreplay.campaign.spec import CampaignSpec, CampaignSpecError

HEADING = "Explanations"


def read_explanations(spec: CampaignSpec) -> str | None:
    """The text of the spec's ``[report] explanations`` file (UTF-8), or None when the key is absent.

    Raises:
        CampaignSpecError: the file is missing or unreadable; one line naming the spec file and the key.
    """
    path = spec.report.explanations
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = "no such file" if isinstance(err, FileNotFoundError) else f"cannot read it ({err})"
        raise CampaignSpecError(f"{spec.path}: [report], key 'explanations': {reason}: {path}") from None


def source_name(spec: CampaignSpec) -> str:
    """The explanations file as the report names it: relative to the campaign root when inside it."""
    path = spec.report.explanations
    if path is None:
        return ""
    return path.relative_to(spec.root).as_posix() if path.is_relative_to(spec.root) else path.name


def markdown_section(text: str, source: str) -> str:
    """``## Explanations``, a line naming ``source``, then ``text`` verbatim (a README section)."""
    return f"## {HEADING}\n\n*From `{source}`.*\n\n{text.rstrip()}\n"


def report_text(text: str, source: str) -> ReportText:
    """The explanations as the last section of ``report.html``, headed :data:`HEADING`, naming ``source``."""
    return ReportText(HEADING, text, source)
