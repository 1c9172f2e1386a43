"""A self-contained HTML report: tables and figures in one file, with no reference to anything outside it.

Figures are embedded as ``data:image/png;base64,...`` URIs, the style sheet and the one script are inline,
so the file can be mailed or archived alone. The script only checks the page: on the window's ``load``
event it counts the images that decoded (``complete`` and ``naturalWidth > 0``) and writes
``data-images-loaded="N/M"`` on ``<body>``, which a headless browser test reads back.

The page is rendered with Jinja2 from the templates in ``templates/`` (``report.html.j2``, the table macro
``table.html.j2``, the inline ``style.css.j2`` and ``images_loaded.js.j2``), with autoescaping on: every
title, cell, caption and note is text, never markup. Every table sits in a box that scrolls horizontally
(``overflow-x: auto``), so a wide table never widens the page.

The content is described by a :class:`ReportContent` (built by :mod:`batreplay.analysis.analyze_report`
and :mod:`batreplay.reports.report`); :func:`render_html` turns it into the page and :func:`write_report`
writes it.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import pandas as pd
from markdown_it import MarkdownIt

#: Attribute the inline script writes on ``<body>``: ``"N/M"`` = images decoded / images in the page.
IMAGES_LOADED_ATTRIBUTE = "data-images-loaded"
PAGE_TEMPLATE = "report.html.j2"


@dataclass
class ReportTable:
    """A table of the report.

    Attributes:
        heading: section heading (a sub-heading when the table is in a ``group``).
        frame: the data; its index is shown as the first column when ``show_index``.
        description: a sentence or two on what the table shows and where its definitions come from.
        show_index: whether the index is a column of the table.
        group: title of the section the table belongs to; consecutive tables of one group share one section
            heading (e.g. the "Metrics" tables, one per kind of metric). Empty: a section of its own.
    """

    heading: str
    frame: pd.DataFrame
    description: str = ""
    show_index: bool = False
    group: str = ""


@dataclass
class ReportFigure:
    """A figure of the report: a PNG file embedded in the page, and its caption.

    Attributes:
        caption: what the figure shows (shown after "Figure N.").
        png: the PNG file.
        label: a short name of the figure (e.g. ``"Gantt chart"``), shown before the caption when given.
    """

    caption: str
    png: Path
    label: str = ""


@dataclass
class ReportText:
    """A section of written text at the end of the page (after the notes), such as a campaign's explanations.

    Attributes:
        heading: the section's heading.
        markdown: its text, in Markdown (CommonMark and tables); raw HTML in it is escaped, never passed through.
        source: where the text comes from (a file name), said under the heading; empty for nothing.
    """

    heading: str
    markdown: str
    source: str = ""


@dataclass
class ReportContent:
    """Everything the report shows, in order: introduction, parameters, tables, figures, notes.

    Attributes:
        title: page title.
        parameters: ``(name, value)`` lines of the parameter box.
        tables: the tables, in order (see :attr:`ReportTable.group`).
        figures: the figures, numbered from 1 in order.
        notes: free-text notes (line breaks kept).
        intro: paragraphs shown under the title.
        group_descriptions: group title -> a paragraph shown under the group's heading.
        texts: written sections at the end of the page (see :class:`ReportText`).
    """

    title: str
    parameters: list[tuple[str, str]] = field(default_factory=list)
    tables: list[ReportTable] = field(default_factory=list)
    figures: list[ReportFigure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    intro: list[str] = field(default_factory=list)
    group_descriptions: dict[str, str] = field(default_factory=dict)
    texts: list[ReportText] = field(default_factory=list)


def format_value(value: object) -> str:
    """Text of one table cell: integers as is, large numbers (1000 and more) without decimals, thousands separated,
    others with 4 significant digits; NaN / None as an en dash."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "\u2013"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value, "dtype").kind in "iu"):
        return f"{int(value):,}"
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value, "dtype").kind == "f"):
        number = float(value)
        if math.isnan(number):
            return "\u2013"
        if number == int(number) and abs(number) < 1e15:
            return f"{int(number):,}"
        return f"{number:,.0f}" if abs(number) >= 1000 else f"{number:.4g}"
    return str(value)


def _is_number(value: object) -> bool:
    return (value is None or value is pd.NA or isinstance(value, (int, float))
            or (hasattr(value, "dtype") and getattr(value, "dtype").kind in "iufb"))


def png_data_uri(path: str | Path) -> str:
    """``data:image/png;base64,...`` of a PNG file.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not a PNG (signature checked).
    """
    data = Path(path).read_bytes()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ValueError(f"{path}: not a PNG file")
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("batreplay.analysis", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def _anchor(text: str, used: set[str]) -> str:
    """A fragment id made of ``text``'s words, unique in the page."""
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "section"
    anchor, k = base, 2
    while anchor in used:
        anchor, k = f"{base}-{k}", k + 1
    used.add(anchor)
    return anchor


#: Text cells longer than this may wrap; shorter ones stay on one line (the table scrolls instead).
WRAP_LENGTH = 40


def _cell_class(text: str, is_text: bool) -> str:
    if not is_text:
        return ""
    return "text long" if len(text) > WRAP_LENGTH else "text"


#: Text that reads as a number (``1,233.81``, ``+1.70 (+0.4%)``, ``-12 %``): aligned right like numbers.
_NUMBER_TEXT = re.compile(r"^[+\-\u2212]?[\d,]*\.?\d+\s*%?(\s*\([+\-\u2212]?[\d,]*\.?\d+\s*%?\))?$")


def _is_text(value: object, text: str) -> bool:
    return not _is_number(value) and not _NUMBER_TEXT.match(text.strip())


def _table_view(table: ReportTable, group: str = "") -> dict[str, Any]:
    frame = table.frame.reset_index() if table.show_index else table.frame
    rows = []
    for values in frame.itertuples(index=False):
        cells = [(text, _is_text(v, text)) for v, text in ((v, format_value(v)) for v in values)]
        rows.append([(text, _cell_class(text, is_text)) for text, is_text in cells])
    # a column is text when all its non-empty cells are (its heading is then aligned left, as its cells)
    text_columns = [all(row[k][1] for row in rows if row[k][0] != "\u2013") and any(row[k][1] for row in rows)
                    for k in range(len(frame.columns))]
    columns = [(str(c), "text" if is_text else "num") for c, is_text in zip(frame.columns, text_columns)]
    return {"heading": table.heading, "show_heading": table.heading != group, "description": table.description,
            "columns": columns, "rows": rows}


def _blocks(content: ReportContent, used: set[str]) -> list[dict[str, Any]]:
    """Tables in page order, consecutive tables of one group gathered into one block."""
    blocks: list[dict[str, Any]] = []
    for table in content.tables:
        if table.group and blocks and blocks[-1]["group"] == table.group:
            blocks[-1]["tables"].append(_table_view(table, table.group))
            continue
        title = table.group or table.heading
        blocks.append({"group": table.group, "anchor": _anchor(title, used), "title": title,
                       "description": content.group_descriptions.get(table.group, "") if table.group else "",
                       "tables": [_table_view(table, table.group)]})
    return blocks


def markdown_html(text: str) -> markupsafe.Markup:
    """``text`` rendered from Markdown (CommonMark and tables) as an HTML fragment for a page section: raw HTML in
    the text is escaped, the text's top heading level becomes ``<h3>`` (the others below it) and tables sit in the
    page's horizontally scrollable boxes."""
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = renderer.parse(text)
    levels = [int(token.tag[1]) for token in tokens if token.type == "heading_open"]
    shift = 3 - min(levels) if levels else 0
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(max(int(token.tag[1]) + shift, 3), 6)}"
        elif token.type == "table_open":
            token.attrSet("class", "markdown")
    body = renderer.renderer.render(tokens, renderer.options, {})
    body = body.replace("<table", '<div class="table-scroll"><table').replace("</table>", "</table></div>")
    return markupsafe.Markup(body)


def render_html(content: ReportContent) -> str:
    """The report page as one HTML5 string (UTF-8 text), self-contained (see the module docstring).

    Raises:
        FileNotFoundError, ValueError: a figure's PNG is missing or not a PNG.
    """
    used = {"figures", "notes"}
    blocks = _blocks(content, used)
    figures = []
    for number, figure in enumerate(content.figures, start=1):
        lead = f"Figure {number}" + (f" ({figure.label})" if figure.label else "")
        figures.append({"src": png_data_uri(figure.png), "caption": f"{lead}. {figure.caption}",
                        "anchor": f"figure-{number}"})
    contents = [(block["anchor"], block["title"]) for block in blocks]
    contents += [("figures", "Figures")] if figures else []
    contents += [("notes", "Notes")] if content.notes else []
    texts = [{"heading": text.heading, "anchor": _anchor(text.heading, used), "source": text.source,
              "body": markdown_html(text.markdown)} for text in content.texts]
    contents += [(text["anchor"], text["heading"]) for text in texts]
    return _environment().get_template(PAGE_TEMPLATE).render(
        title=content.title, intro=content.intro, parameters=content.parameters, blocks=blocks, figures=figures,
        notes=content.notes, texts=texts, contents=contents, images_loaded_attribute=IMAGES_LOADED_ATTRIBUTE)


def write_report(content: ReportContent, path: str | Path) -> Path:
    """Write :func:`render_html` of ``content`` to ``path`` (UTF-8); returns the path."""
    path = Path(path)
    path.write_text(render_html(content), encoding="utf-8")
    return path
