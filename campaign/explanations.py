"""Written explanations of a campaign's results: ``[report] explanations = "expe/explanations/<name>.md"``.

A campaign spec may name a Markdown file that explains its numbers, especially those that do not reproduce the
paper (which variants were tried, with their values). ``campaign report`` includes it:

- in ``README.md``, verbatim, under a heading ``## Explanations`` (:func:`markdown_section`);
- in ``report.html``, rendered by markdown-it (CommonMark and tables; raw HTML in the file is escaped, never
  passed through), its headings moved two levels down under an ``Explanations`` heading, at the end of the page
  (:func:`html_section`, :func:`append_to_page`).

Without the key nothing is added; a key naming a missing file is an error naming the spec file and the key.
"""

from __future__ import annotations

import html
from pathlib import Path

from markdown_it import MarkdownIt

from batreplay.campaign.spec import CampaignSpec, CampaignSpecError

HEADING = "Explanations"
_BODY_END = "</body>"


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


#: Style of the section: text columns of its tables aligned left (markdown-it aligns the others inline), long
#: cells wrapped.
_STYLE = ("<style>section.explanations th, section.explanations td { text-align: left; white-space: normal; }"
          "</style>")


def html_section(text: str, source: str) -> str:
    """An HTML fragment: ``<section>`` with an ``<h2>`` heading, the source named, and ``text`` rendered from
    Markdown: raw HTML escaped, the file's top heading level shown as ``<h3>`` (the others below it), tables
    in horizontally scrollable boxes (the report's ``table-scroll`` class)."""
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = renderer.parse(text)
    levels = [int(t.tag[1]) for t in tokens if t.type == "heading_open"]
    shift = 3 - min(levels) if levels else 0
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(max(int(token.tag[1]) + shift, 3), 6)}"
    body = renderer.renderer.render(tokens, renderer.options, {})
    body = body.replace("<table>", '<div class="table-scroll"><table>').replace("</table>", "</table></div>")
    return (f'<section class="explanations">\n{_STYLE}\n<h2>{HEADING}</h2>\n'
            f'<p class="description">From {html.escape(source)}.</p>\n{body}</section>\n')


def append_to_page(page: Path, fragment: str) -> None:
    """Insert ``fragment`` at the end of the HTML page's body (before its last ``</body>``).

    Raises:
        ValueError: the page has no ``</body>``.
    """
    text = page.read_text(encoding="utf-8")
    end = text.rfind(_BODY_END)
    if end < 0:
        raise ValueError(f"{page}: no {_BODY_END} to insert the explanations before")
    page.write_text(text[:end] + fragment + text[end:], encoding="utf-8")
