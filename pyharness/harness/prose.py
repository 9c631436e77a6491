"""repair: an edit the model said in words instead of sending it.

Asked which line is wrong, a small model often answers right in prose ("change `if n > LIMIT:` to
`if n >= LIMIT:`") and then sends a body-less edit of the wrong lines, or no action at all. When a
reply quotes one line of a source file and, after it, a changed version of that line, that pair is
the edit it meant: the line is replaced (its indentation kept) and the repair is recorded.
"""

import difflib
import re

SPAN = re.compile(r"`([^`\n]{3,200})`")


def prose_edit(text: str, sources: dict[str, str]) -> tuple[str, int, str] | None:
    """(path, line number, new line) when `text` quotes a line found once in `sources` and then a close variant.

    `sources` maps a path to its text (the repo's non-test source files). The old line must occur once in
    all of them, the new one nowhere in that file, and the two must be similar (a changed line, not an
    unrelated quote).
    """
    spans = [s.strip() for s in SPAN.findall(text)]
    where = {}
    for span in dict.fromkeys(spans):
        hits = [
            (path, n, line)
            for path, source in sources.items()
            for n, line in enumerate(source.splitlines(), 1)
            if _same(line.strip(), span)
        ]
        if len(hits) == 1:
            where[span] = hits[0]
    for i, old in enumerate(spans):
        if old not in where:
            continue
        path, number, line = where[old]
        lines = {ln.strip() for ln in sources[path].splitlines()}
        for new in spans[i + 1 :]:
            if any(_same(ln, new) for ln in lines) or _same(new, old):
                continue
            if difflib.SequenceMatcher(None, old, new).ratio() >= 0.75:
                indent = line[: len(line) - len(line.lstrip())]
                colon = ":" if line.rstrip().endswith(":") and not new.endswith(":") else ""
                return path, number, indent + new + colon
    return None


def _same(line: str, quoted: str) -> bool:
    """A quoted line matches a source line with or without its closing colon."""
    return line == quoted or (line.endswith(":") and line[:-1].rstrip() == quoted)
