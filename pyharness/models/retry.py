"""Bounded retries of one model turn: only a failure that may pass is retried, and only the model call itself."""

import time
from collections.abc import Callable

from pyharness.errors import ModelError
from pyharness.models.base import ChatOptions, Model, Reply


def chat_with_retries(
    model: Model,
    messages: list[dict],
    options: ChatOptions,
    *,
    attempts: int = 3,
    backoff: float = 1.0,
    on_retry: Callable[[int, ModelError, float], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Reply:
    """`model.chat`, asked again after a transient `ModelError` (at most `attempts` calls in all, waiting
    `backoff`, then twice as long each time). Nothing but the request is repeated: the reply's action runs once,
    after a whole reply came back."""
    for attempt in range(1, max(1, attempts) + 1):
        try:
            return model.chat(messages, options)
        except ModelError as err:
            if not err.transient or attempt >= attempts:
                raise
            wait = backoff * 2 ** (attempt - 1)
            if on_retry is not None:
                on_retry(attempt, err, wait)
            sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises
