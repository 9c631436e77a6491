"""noise: quiet tools at the source and normalise what they still print, so small models see stable text.

Small models flip on irrelevant digits: two runs of the same failing test must read byte-identical.
`normalise` replaces what changes from run to run (timings, speeds, sizes, progress bars, addresses,
temp paths, pids, clock times, ANSI codes) with fixed placeholders and leaves everything else alone:
line numbers (`file.py:42`), assertion values (`assert 105.0 == 100.0`) and test counts are kept.
Every step emits placeholders in angle brackets with no digits, so no later step can re-match them
and `normalise(normalise(x)) == normalise(x)`.
"""

import re

QUIET_ENV: dict[str, str] = {
    "PIP_PROGRESS_BAR": "off",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "TQDM_DISABLE": "1",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "NO_COLOR": "1",
    "TERM": "dumb",
    "PY_COLORS": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "COLUMNS": "120",
}
"""Environment settings that stop progress bars, colours, pagers and bytecode files at the source."""

PYTEST_QUIET_ARGS: list[str] = ["-q", "-p", "no:cacheprovider", "--color=no", "-o", "console_output_style=classic"]
"""pytest arguments for short, colourless output with no per-file percentages and no cache dir."""

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# Left-over escapes and control bytes go too, so stripping can never assemble a new escape sequence.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

_TMP_BASE = r"(?:/private)?(?:/var/folders/[\w.+-]+/[\w.+-]+/T|/tmp|/var/tmp)"
# '>' in the look-behind keeps '<tmp>/tmp/tmpXXXXXXXX' from matching on a second pass.
TMP_PATH = re.compile(
    r"(?<![\w.\-/>])" + _TMP_BASE
    + r"(?:/pytest-of-[^/\s'\"]+/pytest-(?:\d+|current)(?:/[^/\s'\"]+)?|/tmp[a-z0-9_]{8}(?![\w.\-<])|(?<=/T)(?![\w.\-<]))"
)

_BAR_CHARS = "━╸╺╾╼█▉▊▋▌▍▎▏░▒▓"
TQDM_BAR = re.compile(
    r"(?<![\w.])\d{1,3}(?:\.\d+)?%\|[^|\n]*\|(?:[ \t]*\d[\w.]*/\d[\w.]*)?(?:[ \t]*\[[^\]\n]*\])?"
)
# tqdm's '[elapsed<remaining, rate]' without a bar; a bracketed clock time alone ('[11:08:26]') is not one.
TQDM_STATS = re.compile(
    r"\[\d{1,2}:\d{2}(?::\d{2})?(?:<(?:\d{1,2}:\d{2}(?::\d{2})?|\?)(?:,[^\]\n]*)?|,[^\]\n]*)\]"
)
# The look-aheads keep one quantifier per bar, so a long '[=====' without ']' costs linear time.
_ASCII = r"\[(?=[#=>\-. ]*[#=>])[#=>\-. ]+\]"
ASCII_BAR = re.compile(_ASCII + r"[ \t]*\d{1,3}(?:\.\d+)?%|(?<![\w.])\d{1,3}(?:\.\d+)?%[ \t]*" + _ASCII)
BLOCK_BAR = re.compile(f"[{_BAR_CHARS}]{{3,}}")

ISO_TIME = re.compile(
    r"(?<!\d)\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\d:])"
)
# h:mm:ss in parentheses (pytest's long runs) or after 'eta' (pip) is an elapsed time, not a clock time.
HMS_DURATION = re.compile(r"(?<=\()\d+:\d{2}:\d{2}(?=\))|(?<=eta )\d+:\d{2}:\d{2}(?![\w:])")
CLOCK_TIME = re.compile(r"(?<![\w:.])\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?![\w:])")

SPEED = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?[ \t]?(?:(?:[kKMGTP]i?)?(?:B|b|bit)|it|items?|files?)/s(?!\w)"
    r"|(?<![\w.])\d+(?:\.\d+)?[ \t]?s/it(?!\w)"
)
# Plain 'B' and 'bytes' stay: "expected 4 bytes" is usually a value that matters, not download noise.
SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)?[ \t]?[kKMGTP]i?B(?![\w/])")
DURATION = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?(s|[ \t]?(?:ms|µs|us|ns)|[ \t](?:seconds?|secs?|minutes?|mins?|hours?|milliseconds?))(?!\w)"
)

HEX_ADDR = re.compile(r"(?<![\w.])0x[0-9a-f]{6,}(?![\w.])|(?<=at )0x[0-9A-Fa-f]+(?![\w.])")
PID = re.compile(r"\b(?:pid|PID)(?:[ \t]*[=:][ \t]*|[ \t]+)\d+\b")
PROCESS = re.compile(r"\b([Pp]rocess) \d{2,}\b")
PROG_PID = re.compile(r"(?<![\w.\-])([A-Za-z][\w.\-]*)\[\d+\]:")
# pytest centres its summary in '=' padding, so 'in 9.87s' and 'in 10.02s' pad differently.
SUMMARY_LINE = re.compile(r"^=+ (.+) =+$", re.MULTILINE)


def normalise(text: str, *, root: str | None = None) -> str:
    """Replace run-to-run noise with fixed placeholders (deterministic; see the module docstring)."""
    text = CONTROL.sub("", ANSI.sub("", text.replace("\r\n", "\n")))
    if "\r" in text:
        text = "\n".join(_last_redraw(line) for line in text.split("\n"))
    root_re = _root_pattern(root) if root and root.rstrip("/") else None
    text = SUMMARY_LINE.sub(lambda m: _recentre(m, root_re), text)
    return _placeholders(text, root_re)


def _placeholders(text: str, root_re: re.Pattern[str] | None) -> str:
    """Every placeholder step, in an order where no step's output can match an earlier step."""
    while root_re:  # dropping 'root/' after a '/' can expose another root; each round shortens the text
        shorter = root_re.sub(lambda m: "" if m.group(0).endswith("/") else ".", text)
        if shorter == text:
            break
        text = shorter
    text = TMP_PATH.sub("<tmp>", text)
    text = TQDM_BAR.sub("<progress>", text)
    text = TQDM_STATS.sub("[<T>]", text)
    text = ASCII_BAR.sub("<progress>", text)
    text = BLOCK_BAR.sub("<progress>", text)
    text = ISO_TIME.sub("<time>", text)
    text = HMS_DURATION.sub("<T>", text)
    text = CLOCK_TIME.sub("<time>", text)
    text = SPEED.sub("<speed>", text)
    text = SIZE.sub("<size>", text)
    text = DURATION.sub(r"<T>\1", text)
    text = HEX_ADDR.sub("0x<addr>", text)
    text = PID.sub("pid <pid>", text)
    text = PROCESS.sub(r"\1 <pid>", text)
    return PROG_PID.sub(r"\1[<pid>]:", text)


def _recentre(m: re.Match[str], root_re: re.Pattern[str] | None) -> str:
    """Normalise a '=== title ===' line and pad it again the way pytest does, to the width it had."""
    width, title = len(m.group(0)), _placeholders(m.group(1), root_re)
    if title == m.group(1):
        return m.group(0)
    pad = max((width - len(title) - 2) // 2, 2)
    line = f"{'=' * pad} {title} {'=' * pad}"
    return line + "=" if len(line) < width else line


def _last_redraw(line: str) -> str:
    """What a terminal shows after carriage-return redraws: the last non-empty segment."""
    if "\r" not in line:
        return line
    parts = [part for part in line.split("\r") if part]
    return parts[-1] if parts else ""


def _root_pattern(root: str) -> re.Pattern[str]:
    """`root/` (dropped, making paths relative) or a bare `root` (shown as '.'), not inside another path."""
    # '/' is allowed before the root so that '//root/x' and 'root/root/x' collapse in one pass; '>' is not,
    # so a placeholder written in front of it ('<speed>/root') cannot expose it to a second pass.
    return re.compile(r"(?<![\w.\->])" + re.escape(root.rstrip("/")) + r"(?:/|(?![\w.\-/<]))")


def truncate(text: str, max_chars: int, *, head: int | None = None) -> str:
    """Keep the head and (more of) the tail of a long text, cut on line boundaries, with a marker line between."""
    if len(text) <= max_chars:
        return text
    if max_chars <= 0:
        return ""
    lines = text.splitlines(keepends=True)
    reserve = len(f"... [{len(lines)} lines omitted] ...\n")
    if max_chars <= reserve:
        return text[-max_chars:]
    head_budget = min(max_chars // 3 if head is None else max(head, 0), max_chars - reserve)
    tail_budget = max_chars - reserve - head_budget
    first, used = 0, 0
    while first < len(lines) and used + len(lines[first]) <= head_budget:
        used += len(lines[first])
        first += 1
    last, used = len(lines), 0
    while last > first and used + len(lines[last - 1]) <= tail_budget:
        used += len(lines[last - 1])
        last -= 1
    kept_head = "".join(lines[:first])
    kept_tail = "".join(lines[last:])
    if last == len(lines) and tail_budget > 0:
        # Not even the last line fits (one huge line): keep its end, since errors are printed last.
        kept_tail = lines[-1][-tail_budget:]
        last = len(lines) - 1
        omitted = last - first + 1
    else:
        omitted = last - first
    return f"{kept_head}... [{omitted} lines omitted] ...\n{kept_tail}"
