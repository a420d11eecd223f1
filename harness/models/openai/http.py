"""The retrying asynchronous JSON client behind the ``openai:`` backend.

One request is retried with exponential backoff and jitter on 429, 408 and 5xx answers, on
timeouts, on connections refused, reset or closed mid-response, and on 200 answers whose JSON
is malformed or lacks a field the caller needs. A ``Retry-After`` header (seconds or an HTTP
date) sets the wait instead of the backoff. After ``max_retries`` retries the request fails with
:class:`RetriesExhausted`; any other 4xx answer fails at once with :class:`HTTPFailure`.
:func:`run_bounded` runs many requests with at most N in flight and stops at the first failure.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from harness.errors import HarnessError

T = TypeVar("T")
log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 425, 429})  # plus every 5xx
MAX_RETRY_AFTER = 600.0  # seconds: a longer Retry-After is cut to this
MAX_ANSWER_BYTES = 64 << 20  # an answer of a call that names no bound of its own


class BadResponse(Exception):
    """A 200 answer that is not what the caller needs (raised by parse functions)."""


class ApiError(HarnessError):
    """A request that failed for good; the message is one line."""


class Unreachable(ApiError):
    """The server refused the connection (raised without retrying when ``connect_retries`` is
    off, as at load time)."""


class HTTPFailure(ApiError):
    """A non-retryable HTTP status (400, 401, 403, 404, 422, ...)."""

    def __init__(self, status: int, detail: str, url: str) -> None:
        super().__init__(f"{url} answered {status} {_reason(status)}: {detail}")
        self.status = status
        self.detail = detail


class RetriesExhausted(ApiError):
    """A request that still failed after the last allowed retry."""


class TooLarge(ApiError):
    """An answer larger than its request allows, refused unread (never retried: a server that
    ignores ``max_tokens`` does so again)."""


def _reason(status: int) -> str:
    try:
        from http import HTTPStatus

        return HTTPStatus(status).phrase
    except ValueError:
        return ""


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait between attempts of one request."""

    max_retries: int = 5  # retries after the first attempt
    backoff: float = 1.0  # first wait in seconds; doubles with each retry
    max_backoff: float = 60.0  # cap on one backoff wait
    jitter: Callable[[], float] = field(default=random.random, compare=False)  # uniform [0, 1)

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number *retry* (0-based).

        With Retry-After: that many seconds (at most MAX_RETRY_AFTER) plus up to 10% jitter,
        so that clients told the same time do not all come back at once. Else "equal jitter":
        half the exponential step plus a random part of the other half."""
        if retry_after is not None:
            wait = min(max(retry_after, 0.0), MAX_RETRY_AFTER)
            return wait + 0.1 * wait * self.jitter()
        step = min(self.max_backoff, self.backoff * 2.0**retry)
        return step / 2 + step / 2 * self.jitter()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP date."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:  # pragma: no cover - older Pythons return None instead of raising
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def redact(url: str) -> str:
    """*url* without user, password, query or fragment (for messages and results.json)."""
    u = httpx.URL(url)
    return str(u.copy_with(username=None, password=None, query=None, fragment=None))


def server_message(resp: httpx.Response, limit: int = 300) -> str:
    """The error text a server put in its answer (OpenAI, vLLM and FastAPI shapes), one line."""
    text = resp.text
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            text = str(err["message"])
        elif isinstance(err, str) and err:
            text = err
        elif data.get("message"):
            text = str(data["message"])
        elif data.get("detail"):
            text = str(data["detail"])
    line = " ".join(text.split())
    return (line[:limit] + "…" if len(line) > limit else line) or "(empty body)"


class Client:
    """JSON requests to one server with retries; use as ``async with Client(...) as c``."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 300.0,
        policy: RetryPolicy | None = None,
        max_connections: int = 8,
        connect_retries: bool = True,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.policy = policy or RetryPolicy()
        self.connect_retries = connect_retries
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(
                max_connections=max_connections + 2, max_keepalive_connections=max_connections
            ),
        )
        self.attempts = 0  # every HTTP attempt made, for tests and logs

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    def url(self, path: str) -> str:
        """*path* relative to base_url (an absolute http(s) URL is used as it is)."""
        if path.startswith(("http://", "https://")):
            return path
        base = httpx.URL(self.base_url)  # keeps a query such as ?api-version=... in place
        return str(base.copy_with(path=base.path.rstrip("/") + "/" + path.lstrip("/")))

    async def call(
        self,
        method: str,
        path: str,
        parse: Callable[[Any], T],
        body: dict[str, Any] | None = None,
        max_bytes: int = MAX_ANSWER_BYTES,
    ) -> T:
        """Send one request and return ``parse(json)``, retrying per the policy.

        ``parse`` raises :class:`BadResponse` for a 200 answer it cannot use; that is retried
        like a server error (a load balancer's error page, a truncated body). An answer body
        over ``max_bytes`` is refused as soon as it passes that size (:class:`TooLarge`)."""
        url = self.url(path)
        shown = redact(url)
        retry = 0
        while True:
            retry_after: float | None = None
            self.attempts += 1
            try:
                resp = await asyncio.wait_for(
                    self._bounded(method, url, body, max_bytes), self.timeout
                )
            except TooLarge as e:
                raise TooLarge(f"{method} {shown} {e}") from None
            except (asyncio.TimeoutError, httpx.TimeoutException):
                last = f"no answer within timeout={self.timeout:g} s"
            except httpx.ConnectError as e:
                if not self.connect_retries:
                    raise Unreachable(f"cannot connect to {shown} ({_first(e)})") from e
                last = f"cannot connect ({_first(e)})"
            except (httpx.NetworkError, httpx.RemoteProtocolError) as e:
                last = f"connection broken ({_describe(e)})"
            except httpx.HTTPError as e:  # invalid URL, unsupported protocol, ...
                raise ApiError(f"{method} {shown} failed: {_describe(e)}") from e
            else:
                status = resp.status_code
                if 200 <= status < 300:
                    try:
                        return parse(resp.json())
                    except (ValueError, BadResponse) as e:
                        last = f"malformed answer ({_first(e)})"
                elif status in RETRY_STATUS or status >= 500:
                    last = f"{status} {_reason(status)}: {server_message(resp, 120)}"
                    retry_after = parse_retry_after(resp.headers.get("retry-after"))
                else:
                    raise HTTPFailure(status, server_message(resp), f"{method} {shown}")
            if retry >= self.policy.max_retries:
                raise RetriesExhausted(
                    f"{method} {shown} failed {retry + 1} times (max_retries="
                    f"{self.policy.max_retries}); last: {last}"
                )
            wait = self.policy.delay(retry, retry_after)
            log.info("%s %s: %s; retry %d in %.2f s", method, shown, last, retry + 1, wait)
            await self._sleep(wait)
            retry += 1

    async def _bounded(self, method: str, url: str, body: dict[str, Any] | None,
                       max_bytes: int) -> httpx.Response:
        """The answer, its body read up to ``max_bytes`` (``TooLarge`` past that)."""
        async with self._http.stream(method, url, json=body) as resp:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise TooLarge(_too_large(int(declared), max_bytes))
            chunks: list[bytes] = []
            size = 0
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise TooLarge(_too_large(None, max_bytes))
                chunks.append(chunk)
        headers = [(k, v) for k, v in resp.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx.Response(resp.status_code, headers=headers, content=b"".join(chunks),
                              request=resp.request)


def _too_large(size: int | None, limit: int) -> str:
    what = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return (f"answered {what}, far more than the request allows (at most {limit:,}): the "
            "server does not honour max_tokens, and the answer was refused unread")


def _first(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


def _describe(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


async def run_bounded(
    n: int,
    call: Callable[[int], Awaitable[T]],
    report: Callable[[int, T], None],
    concurrency: int,
) -> None:
    """Run ``call(0..n-1)`` with at most *concurrency* in flight, in index order, calling
    ``report(i, result)`` as each finishes. The first exception cancels the rest and is
    raised; everything reported before it stays reported."""
    if n == 0:
        return
    next_index = iter(range(n))

    async def worker() -> None:
        for i in next_index:  # shared iterator: each index is taken by exactly one worker
            report(i, await call(i))

    tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, n)))]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for t in tasks:
        if t in done and not t.cancelled() and t.exception() is not None:
            exc = t.exception()
            assert exc is not None
            raise exc


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from synchronous code (in a helper thread when this thread
    already runs an event loop, e.g. in a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def explain(e: ApiError, url: str, key_env: str | None) -> str:
    """One line for a failed request, with what to do about it."""
    if isinstance(e, Unreachable):
        return f"cannot reach base_url {url}; is the server running? ({e})"
    if isinstance(e, HTTPFailure) and e.status in (401, 403):
        if key_env is None:
            return (
                f"the server at {url} wants an API key ({e.status}: {e.detail}); put it in an "
                "environment variable and pass --model-args api_key_env=VAR"
            )
        return f"the server at {url} refused the API key from ${key_env} ({e.status}: {e.detail})"
    if isinstance(e, RetriesExhausted):
        return (
            f"{e}; check the server, or raise --model-args max_retries=/timeout= "
            "(or lower max_concurrency)"
        )
    return str(e)
