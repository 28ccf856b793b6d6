"""How one configured model becomes a LangChain object, and which layer retries.

``ChatOpenAI`` / ``OpenAIEmbeddings`` against any OpenAI-compatible endpoint, a provider's
shared rate limiter, and the retry layer: either the metrics' :class:`RetryPolicy` (the
client's own retries then off) or the openai client's, never both. Every model gets a
request deadline (``timeout``, else 120 s) and a cap on a reply's size, enforced by its
HTTP client (:mod:`.http_limits`). ``langchain_openai`` and ``openai`` are imported only
when a model is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.rate_limiters import InMemoryRateLimiter
from pydantic import SecretStr

from langchain_answer_metrics.config.schema import ChatOptions, RetryConfig, check_http_code
from langchain_answer_metrics.judging.request import DEFAULT_REQUEST_TIMEOUT, RequestDeadlineError
from langchain_answer_metrics.judging.retry import RetryPolicy

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings

__all__ = [
    "chat_openai",
    "exceptions_for_http_codes",
    "openai_embeddings",
    "provider_rate_limiter",
    "retry_layer",
]


def retry_layer(retry: RetryConfig | None) -> tuple[RetryPolicy | None, int | None]:
    """(policy for the metrics, max_retries for the openai client): never both layers.

    No ``retry:`` section keeps the client's own retries (None = its default, 2).
    """
    if retry is None:
        return None, None
    if not retry.on_http_codes:
        return None, 0  # ``on_http_codes: []`` switches retries off entirely
    policy = RetryPolicy(
        retry_on=exceptions_for_http_codes(retry.on_http_codes),
        max_attempts=retry.max_attempts,
        initial_delay=retry.initial_interval,
        max_delay=retry.max_interval,
        multiplier=retry.multiplier,
        jitter=retry.jitter,
    )
    return policy, 0


def exceptions_for_http_codes(codes: Sequence[int]) -> tuple[type[BaseException], ...]:
    """The openai exception classes raised for these HTTP codes (for ``RetryPolicy.retry_on``).

    The plain openai classes are used, not langchain-core's ``ModelError`` ones:
    ChatOpenAI raises subclasses of both, but OpenAIEmbeddings raises the openai classes
    unwrapped. The openai client raises ``InternalServerError`` for every status >= 500,
    so listing any 5xx code retries them all. An HTTP 408 *response* surfaces as a bare
    ``APIStatusError`` that no class singles out, so 408 maps to client-side timeouts.
    """
    import openai

    # RequestDeadlineError: the package's own deadline on a request, a timeout too.
    by_code: dict[int, tuple[type[BaseException], ...]] = {
        408: (openai.APITimeoutError, openai.APIConnectionError, RequestDeadlineError),
        409: (openai.ConflictError,),
        429: (openai.RateLimitError,),
    }
    server_errors = (openai.InternalServerError, openai.APIConnectionError, RequestDeadlineError)
    found: dict[type[BaseException], None] = {}
    for code in codes:
        check_http_code(code)
        for cls in by_code.get(code, server_errors):
            found[cls] = None
    return tuple(found)


def provider_rate_limiter(requests_per_second: float) -> InMemoryRateLimiter:
    """One limiter for all the models of a provider: its limit is global."""
    # Poll at least twice per token interval, or a fast limit (e.g. 50/s) would be capped
    # by the default 0.1 s polling.
    return InMemoryRateLimiter(
        requests_per_second=requests_per_second,
        check_every_n_seconds=min(0.1, 0.5 / requests_per_second),
        max_bucket_size=1,
    )


def chat_openai(
    model_id: str,
    *,
    base_url: str,
    api_key: SecretStr,
    options: ChatOptions,
    timeout: float | None,
    rate_limiter: InMemoryRateLimiter | None,
    max_retries: int | None,
) -> ChatOpenAI:
    """A judge's chat model on any OpenAI-compatible endpoint (Chat Completions API);
    ``timeout`` (None: 120 s) bounds each HTTP request as a whole, and a reply holds at
    most 8 MiB."""
    from langchain_openai import ChatOpenAI

    from langchain_answer_metrics.config.http_limits import (
        MAX_CHAT_REPLY_BYTES,
        limited_http_clients,
    )

    deadline = timeout or DEFAULT_REQUEST_TIMEOUT
    kwargs = {
        **options.model_dump(exclude_none=True),
        **_given(timeout=deadline, max_retries=max_retries),
        **limited_http_clients(deadline=deadline, max_bytes=MAX_CHAT_REPLY_BYTES),
    }
    # Gateways and local servers implement Chat Completions, not the Responses API.
    return ChatOpenAI(
        model=model_id,
        base_url=base_url,
        api_key=api_key,
        rate_limiter=rate_limiter,
        use_responses_api=False,
        **kwargs,
    )


def openai_embeddings(
    model_id: str,
    *,
    base_url: str,
    api_key: SecretStr,
    dimensions: int | None,
    timeout: float | None,
    max_retries: int | None,
    batch_size: int = 128,
) -> OpenAIEmbeddings:
    """An embedding model on any OpenAI-compatible endpoint, usable offline; ``timeout``
    (None: 120 s) bounds each HTTP request as a whole, and a reply holds at most
    :func:`~.http_limits.embedding_reply_cap` bytes for ``batch_size`` texts."""
    from langchain_openai import OpenAIEmbeddings

    from langchain_answer_metrics.config.http_limits import (
        embedding_reply_cap,
        limited_http_clients,
    )

    deadline = timeout or DEFAULT_REQUEST_TIMEOUT
    kwargs = {
        **_given(dimensions=dimensions, timeout=deadline, max_retries=max_retries),
        **limited_http_clients(
            deadline=deadline, max_bytes=embedding_reply_cap(batch_size, dimensions)
        ),
    }
    # The context-length check downloads tiktoken files and only knows OpenAI's models.
    return OpenAIEmbeddings(
        model=model_id,
        openai_api_base=base_url,
        openai_api_key=api_key,
        check_embedding_ctx_length=False,
        **kwargs,
    )


def _given(**options: Any) -> dict[str, Any]:
    """The options that were set: None leaves the client's own default in place."""
    return {name: value for name, value in options.items() if value is not None}
