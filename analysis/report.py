"""A self-contained HTML report: tables and figures in one file, with no reference to anything outside it.

Figures are embedded as ``data:image/png;base64,...`` URIs, the style sheet and the one script are inline,
so the file can be mailed or archived alone. The script only checks the page: on the window's ``load``
event it counts the images that decoded (``complete`` and ``naturalWidth > 0``) and writes
``data-images-loaded="N/M"`` on ``<body>``, which a headless browser test reads back.

The content is described by a :class:`ReportContent` (built by :mod:`batreplay.analysis.analyze_command`);
:func:`render_html` turns it into the page and :func:`write_report` writes it.
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

#: Attribute the inline script writes on ``<body>``: ``"N/M"`` = images decoded / images in the page.
IMAGES_LOADED_ATTRIBUTE = "data-images-loaded"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; }
td { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f3f3f3; }
td.text, th.text { text-align: left; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; }
p.description { color: #444; } ul.notes li { font-size: 0.9em; white-space: pre-wrap; }
"""

_SCRIPT = """
window.addEventListener("load", function () {
  var images = document.images, decoded = 0;
  for (var i = 0; i < images.length; i++) {
    if (images[i].complete && images[i].naturalWidth > 0) { decoded++; }
  }
  document.body.setAttribute("%s", decoded + "/" + images.length);
});
""" % IMAGES_LOADED_ATTRIBUTE


@dataclass
class ReportTable:
    """A table of the report.

    Attributes:
        heading: section heading.
        frame: the data; its index is shown as the first column when ``show_index``.
        description: a sentence or two on what the table shows and where its definitions come from.
        show_index: whether the index is a column of the table.
    """

    heading: str
    frame: pd.DataFrame
    description: str = ""
    show_index: bool = False


@dataclass
class ReportFigure:
    """A figure of the report: a PNG file embedded in the page, and its caption."""

    caption: str
    png: Path


@dataclass
class ReportContent:
    """Everything the report shows, in order: parameters, tables, figures, notes."""

    title: str
    parameters: list[tuple[str, str]] = field(default_factory=list)
    tables: list[ReportTable] = field(default_factory=list)
    figures: list[ReportFigure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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
        if number == int(number) and abs(number) < 1e15:
            return f"{int(number):,}"
        return f"{number:,.0f}" if abs(number) >= 1000 else f"{number:.4g}"
    return str(value)


def _table_html(table: ReportTable) -> str:
    frame = table.frame.reset_index() if table.show_index else table.frame
    head = "".join(f'<th class="text">{html.escape(str(c))}</th>' for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = []
        for value in values:
            text = format_value(value)
            kind = "" if isinstance(value, (int, float)) or hasattr(value, "dtype") else ' class="text"'
            cells.append(f"<td{kind}>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    description = f'<p class="description">{html.escape(table.description)}</p>' if table.description else ""
    return (f"<h2>{html.escape(table.heading)}</h2>\n{description}\n<table>\n<thead><tr>{head}</tr></thead>\n"
            f"<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>")


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


def render_html(content: ReportContent) -> str:
    """The report page as one HTML5 string (UTF-8 text), self-contained (see the module docstring).

    Raises:
        FileNotFoundError, ValueError: a figure's PNG is missing or not a PNG.
    """
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f"<title>{html.escape(content.title)}</title>", f"<style>{_STYLE}</style>",
             f"<script>{_SCRIPT}</script>", "</head>", "<body>", f"<h1>{html.escape(content.title)}</h1>"]
    if content.parameters:
        parts.append("<table>")
        parts += [f'<tr><th class="text">{html.escape(k)}</th><td class="text">{html.escape(v)}</td></tr>'
                  for k, v in content.parameters]
        parts.append("</table>")
    parts += [_table_html(table) for table in content.tables]
    if content.figures:
        parts.append("<h2>Figures</h2>")
    for number, figure in enumerate(content.figures, start=1):
        caption = f"Figure {number}. {figure.caption}"
        parts.append(f'<figure><img src="{png_data_uri(figure.png)}" alt="{html.escape(caption, quote=True)}">'
                     f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    if content.notes:
        parts.append("<h2>Notes</h2>")
        parts.append('<ul class="notes">' + "".join(f"<li>{html.escape(n)}</li>" for n in content.notes) + "</ul>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def write_report(content: ReportContent, path: str | Path) -> Path:
    """Write :func:`render_html` of ``content`` to ``path`` (UTF-8); returns the path."""
    path = Path(path)
    path.write_text(render_html(content), encoding="utf-8")
    return path
