"""Aligned plain-text tables: a header row, a rule of dashes, then the data rows."""

from report.cells import format_cell, is_numeric


def column_widths(headers: list[str], rows: list[list[object]]) -> list[int]:
    """Width of each column: the longest of its header and its formatted cells."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(format_cell(value)))
    return widths


def format_table(headers: list[str], rows: list[list[object]]) -> str:
    """The table as text, columns separated by two spaces, numbers right-aligned, no trailing spaces."""
    widths = column_widths(headers, rows)
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        cells = []
        for value, width in zip(row, widths):
            text = format_cell(value)
            cells.append(text.rjust(width) if is_numeric(value) else text.ljust(width))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
