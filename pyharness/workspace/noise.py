"""noise: quiet tools at the source and normalise what they still print, so small models see stable text.

Small models flip on irrelevant digits: two runs of the same failing test must read byte-identical.
`normalise` replaces what changes from run to run (timings, speeds, sizes, progress bars, addresses,
temp paths, pids, clock times, ANSI codes) with fixed placeholders and leaves everything else alone:
line numbers (`file.py:42`), assertion values (`assert 105.0 == 100.0`) and test counts are kept.

Placeholders: `in <T>s`, `(<T>)`, `eta <T>`, `<speed>`, `<size>`, `<progress>`, `0x<addr>`, `<tmp>`,
`pid <pid>` (also `Process <pid>`, `sshd[<pid>]:`), `<time>`. With `root`, `root/` is dropped (paths
become relative) and a bare `root` becomes `.`. Carriage-return redraws keep what the terminal would
show last, and pytest's `=== 1 failed in <T>s ===` lines are padded again to their width.
Placeholders contain no digits and the patterns' look-arounds refuse `<` and `>` beside them, so no
step can re-match another's output: `normalise(normalise(x)) == normalise(x)`.
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

# Each pattern starts with a literal or a character class and checks what comes before it with a
# look-behind placed after that first character: Python's re can then skip straight to candidates,
# which makes the passes several times faster than a leading look-behind. _NUM is a digit that does not
# continue a word or a decimal ('x2', '1.5' or 'v3' are not the start of a number).
_NUM = r"\d(?<![\w.]\d)"

# '>' in the look-behind keeps '<tmp>/tmp/tmpXXXXXXXX' from matching on a second pass. The sandbox's private temp dir
# (`ph-sandbox-XXXXXXXX`, the HOME and TMPDIR of a test run) is noise alone or with a temp path under it.
TMP_PATH = re.compile(
    r"/(?<![\w.\-/>]/)(?:private/)?(?:var/folders/[\w.+-]+/[\w.+-]+/T|tmp|var/tmp)(?:/ph-sandbox-[a-z0-9_]{8}(?![\w.\-<]))?"
    r"(?:/pytest-of-[^/\s'\"]+/pytest-(?:\d+|current)(?:/[^/\s'\"]+)?|/tmp[a-z0-9_]{8}(?![\w.\-<])|(?<=/T)(?![\w.\-<])"
    r"|(?<=-[a-z0-9_]{8})(?![\w.\-<]))"
)

_BAR_CHARS = "━╸╺╾╼█▉▊▋▌▍▎▏░▒▓"
# A bracket's inside stops at the next '[' too: otherwise each of many '[' that a ']' never closes would scan on to
# the end of the line (quadratic in a line of '1%||[' or '[1:00,' repeated).
TQDM_BAR = re.compile(_NUM + r"\d{0,2}(?:\.\d+)?%\|[^|\n]*\|(?:[ \t]*\d[\w.]*/\d[\w.]*)?(?:[ \t]*\[[^\[\]\n]*\])?")
# tqdm's '[elapsed<remaining, rate]' without a bar; a bracketed clock time alone ('[11:08:26]') is not one.
TQDM_STATS = re.compile(
    r"\[\d{1,2}:\d{2}(?::\d{2})?(?:<(?:\d{1,2}:\d{2}(?::\d{2})?|\?)(?:,[^\[\]\n]*)?|,[^\[\]\n]*)\]"
)
# The look-aheads keep one quantifier per bar, so a long '[=====' without ']' costs linear time.
_ASCII = r"\[(?=[#=>\-. ]*[#=>])[#=>\-. ]+\]"
ASCII_BAR_FIRST = re.compile(_ASCII + r"[ \t]*\d{1,3}(?:\.\d+)?%")
ASCII_BAR_LAST = re.compile(_NUM + r"\d{0,2}(?:\.\d+)?%[ \t]*" + _ASCII)
BLOCK_BAR = re.compile(f"[{_BAR_CHARS}]{{3,}}")

ISO_TIME = re.compile(
    r"\d(?<!\d\d)\d{3}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\d:])"
)
# h:mm:ss in parentheses (pytest's long runs) or after 'eta' (pip) is an elapsed time, not a clock time.
HMS_PAREN = re.compile(r"\(\d+:\d{2}:\d{2}\)")
HMS_ETA = re.compile(r"eta \d+:\d{2}:\d{2}(?![\w:])")
CLOCK_TIME = re.compile(r"\d(?<![\w:.]\d)\d?:\d{2}:\d{2}(?:[.,]\d+)?(?![\w:])")

# One pass for every number with a unit: a speed ('150.3 MB/s', '35.1it/s'), a size ('12.5 MB', '62.6/62.6 kB')
# or a duration ('0.53s', '1.2ms', '0.12 seconds'). Plain 'B' and 'bytes' stay: "expected 4 bytes" is usually
# a value that matters. The possessive '\d*+' keeps a long run of digits from backtracking.
NUMBER_UNIT = re.compile(
    _NUM + r"\d*+(?:\.\d+)?(?:"
    r"(?P<speed>[ \t]?(?:(?:(?:[kKMGTP]i?)?(?:B|b|bit)|it|items?|files?)/s|s/it)(?!\w))"
    r"|(?P<size>(?:/\d+(?:\.\d+)?)?[ \t]?[kKMGTP]i?B(?![\w/]))"
    r"|(?P<unit>(?:s|[ \t]?(?:ms|µs|us|ns)|[ \t](?:seconds?|secs?|minutes?|mins?|hours?|milliseconds?))(?!\w))"
    r")"
)

HEX_ADDR = re.compile(r"0x(?:(?<![\w.]0x)[0-9a-f]{6,}|(?<=at 0x)[0-9A-Fa-f]+)(?![\w.])")
PID = re.compile(r"(?:p(?<!\wp)id|P(?<!\wP)ID)(?:[ \t]*[=:][ \t]*|[ \t]+)\d+\b")
PROCESS = re.compile(r"(p(?<!\wp)|P(?<!\wP))rocess \d{2,}\b")
# 'sshd[12345]:' (syslog style); two digits at least, so '{xs[0]: 1}' in code is left alone.
PROG_PID = re.compile(r"\[(?<=[\w.\-]\[)\d{2,}\]:")
# pytest centres its summary in '=' padding, so 'in 9.87s' and 'in 10.02s' pad differently.
SUMMARY_LINE = re.compile(r"^=+ (.+) =+$", re.MULTILINE)


def normalise(text: str, *, root: str | None = None) -> str:
    """Replace run-to-run noise with fixed placeholders (deterministic; see the module docstring)."""
    text = CONTROL.sub("", ANSI.sub("", text.replace("\r\n", "\n")))
    if "\r" in text:
        text = "\n".join(_last_redraw(line) for line in text.split("\n"))
    bare_root = root.rstrip("/") if root else None
    text = SUMMARY_LINE.sub(lambda m: _recentre(m, bare_root), text)
    return _placeholders(text, bare_root)


def _placeholders(text: str, root: str | None) -> str:
    """Every placeholder step, in an order where no step's output can match an earlier step."""
    if root:
        text = _drop_root(text, root)
    # The `in` checks skip passes that cannot match; they cost microseconds, a pass costs milliseconds.
    if "/" in text:
        text = TMP_PATH.sub("<tmp>", text)
    if "%" in text:
        text = TQDM_BAR.sub("<progress>", text)
        text = ASCII_BAR_FIRST.sub("<progress>", text)
        text = ASCII_BAR_LAST.sub("<progress>", text)
    text = BLOCK_BAR.sub("<progress>", text)
    if ":" in text:
        text = TQDM_STATS.sub("[<T>]", text)
        text = ISO_TIME.sub("<time>", text)
        text = HMS_PAREN.sub("(<T>)", text)
        text = HMS_ETA.sub("eta <T>", text)
        text = CLOCK_TIME.sub("<time>", text)
    text = NUMBER_UNIT.sub(_number_unit, text)
    if "0x" in text:
        text = HEX_ADDR.sub("0x<addr>", text)
    text = PID.sub("pid <pid>", text)
    text = PROCESS.sub(r"\1rocess <pid>", text)
    return PROG_PID.sub("[<pid>]:", text)


def _recentre(m: re.Match[str], root: str | None) -> str:
    """Normalise a '=== title ===' line and pad it again the way pytest does, to the width it had."""
    width, title = len(m.group(0)), _placeholders(m.group(1), root)
    if title == m.group(1):
        return m.group(0)
    pad = max((width - len(title) - 2) // 2, 2)
    line = f"{'=' * pad} {title} {'=' * pad}"
    return line + "=" if len(line) < width else line


def _number_unit(m: re.Match[str]) -> str:
    """The placeholder for one number with a unit."""
    if m.group("speed") is not None:
        return "<speed>"
    if m.group("size") is not None:
        return "<size>"
    return "<T>" + m.group("unit")


def _last_redraw(line: str) -> str:
    """What a terminal shows after carriage-return redraws: the last non-empty segment."""
    if "\r" not in line:
        return line
    parts = [part for part in line.split("\r") if part]
    return parts[-1] if parts else ""


def _drop_root(text: str, root: str) -> str:
    """`root/` dropped and a bare `root` made '.' (see `_root_pattern`), until no root is left."""
    root_re = _root_pattern(root)
    for _ in range(ROOT_ROUNDS):  # dropping 'root/' after a '/' can expose another root; each round shortens it
        shorter = root_re.sub(lambda m: "" if m.group(0).endswith("/") else ".", text)
        if shorter == text:
            return text
        text = shorter
    return _drop_nested_root(text, root)


ROOT_ROUNDS = 4
"""Passes of the root pattern before `_drop_nested_root` takes over: real output needs two (the second finds
nothing), while text built to nest roots ('/tmp/' + root + '/' + 'pytest-of-u/repo/', again and again) needs one
pass per level, each over the whole text: quadratic."""
_BEFORE_ROOT = re.compile(r"[\w.\->]")
"""A character that keeps the root after it (it continues another path or a placeholder)."""
_AFTER_BARE_ROOT = re.compile(r"[\w.\-/<]")
"""A character that keeps a bare root before it."""


def _drop_nested_root(text: str, root: str) -> str:
    """What repeated passes of `_root_pattern` make of `text`, in one linear pass: the kept text is a stack, and a
    root is dropped as soon as it is complete at the stack's top (which is where dropping one can make another)."""
    out: list[str] = []
    n = len(root)

    def root_on_top() -> bool:
        return (len(out) >= n and out[-1] == root[-1] and "".join(out[-n:]) == root
                and (len(out) == n or not _BEFORE_ROOT.match(out[-n - 1])))

    for c in text:
        if root_on_top():
            if c == "/":
                del out[-n:]
                continue
            if not _AFTER_BARE_ROOT.match(c):
                out[-n:] = ["."]
        out.append(c)
    if root_on_top():
        out[-n:] = ["."]
    return "".join(out)


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
