"""rank: when more actions exist than a mode shows, BM25 over name + description + aliases picks the top few."""

import math
import re
from collections import Counter

from pyharness.harness.call import ActionSpec

WORD = re.compile(r"[a-z0-9]+")
K1, B = 1.5, 0.75


def words(text: str) -> list[str]:
    """Lower-case word tokens; snake_case and camelCase names split into their parts."""
    text = re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", text).replace("_", " ")
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in WORD.findall(text.lower())]


def document(action: ActionSpec) -> list[str]:
    """The words an action is found by."""
    return words(" ".join([action.name, action.name, action.description, *action.aliases]))


def rank(actions: list[ActionSpec], query: str) -> list[tuple[str, float]]:
    """Actions scored by BM25 against the query, best first; ties keep the given order (deterministic)."""
    docs = [document(a) for a in actions]
    if not docs:
        return []
    avg = sum(len(d) for d in docs) / len(docs) or 1.0
    df = Counter(w for d in docs for w in set(d))
    n = len(docs)
    terms = words(query)
    scored = []
    for index, (action, doc) in enumerate(zip(actions, docs, strict=True)):
        tf = Counter(doc)
        score = 0.0
        for term in terms:
            if term not in tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * tf[term] * (K1 + 1) / (tf[term] + K1 * (1 - B + B * len(doc) / avg))
        scored.append((-score, index, action.name))
    return [(name, -neg) for neg, _, name in sorted(scored)]


def choose(core: list[ActionSpec], extra: list[ActionSpec], query: str, shown: int = 3) -> list[ActionSpec]:
    """The mode's core actions plus the `shown` user actions that best match the task."""
    if not extra:
        return core
    best = {name for name, score in rank(extra, query)[:shown] if score > 0}
    return core + [a for a in extra if a.name in best]
