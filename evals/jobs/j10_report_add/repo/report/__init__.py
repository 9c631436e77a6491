"""Plain-text reports: cell formatting (report/cells.py) and aligned tables (report/table.py)."""
