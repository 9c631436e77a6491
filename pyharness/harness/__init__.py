"""The deterministic layer every model reply passes through before anything runs (DESIGN.md §3)."""
