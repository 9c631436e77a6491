"""The per-user folder of test-run logs: old logs are pruned, a log another ph may still be writing is not."""

import os
import time

from pyharness.workspace import testrun


def test_prune_keeps_the_newest_and_any_log_written_recently(tmp_path, monkeypatch):
    monkeypatch.setattr(testrun, "KEPT_LOGS", 2)
    now = time.time()
    ages = {"a": 5000, "b": 4000, "c": 60, "d": 30, "e": 10}  # seconds since each was written
    for name, age in ages.items():
        log = tmp_path / f"pytest-{name}.log"
        log.write_text(name)
        os.utime(log, (now - age, now - age))
    testrun._prune(tmp_path)
    # a and b are old and beyond the newest two: removed; c is beyond the newest two but written a minute ago: kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pytest-c.log", "pytest-d.log", "pytest-e.log"]
