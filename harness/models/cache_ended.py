"""The response cache's index of answers that ended before their budget.

A greedy answer that stopped by itself (fewer new tokens than its request allowed: an end of
text or a stop string) is the answer the same request gets under any budget it fits in: greedy
decoding writes the same tokens whatever room is left. Such rows of the ``responses`` table are
also listed in the ``ended`` table under their *family* (the model and the request without its
budget, ``family_key``) with their token count, so a request that differs only in its budget (a
changed budget rule, another ``--max-answer-tokens``) is answered from them
(``ResponseCache.ended_answer``) instead of asking the model again. An answer its budget cut is
never served under another budget. The table holds nothing the responses do not give: a file
written before it (or with one of another shape) is indexed once when it is opened
(``index``). The row a family entry points to is read with its checksum and its family checked
again (``pick``), so a damaged entry can only miss, never serve another request's answer.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence

COLUMNS = ("family", "n_tokens", "key")
_TABLE = ("CREATE TABLE IF NOT EXISTS ended (family TEXT NOT NULL, n_tokens INTEGER NOT NULL,"
          " key TEXT NOT NULL, PRIMARY KEY (family, key))")
_BY_KEY = "CREATE INDEX IF NOT EXISTS ended_key ON ended (key)"  # for deletes by key
INSERT = "INSERT OR IGNORE INTO ended VALUES (?, ?, ?)"


def family_key(model: str, request_json: str) -> tuple[str, int] | None:
    """A greedy generate request's family (sha256 of the model key and the request JSON without
    its budget) and its budget; None for any other request."""
    try:
        body = json.loads(request_json)
    except ValueError:
        return None
    if (not isinstance(body, dict) or body.get("method") != "generate" or "occurrence" in body
            or body.get("temperature") != 0 or not isinstance(body.get("max_tokens"), int)):
        return None
    budget = body.pop("max_tokens")
    rest = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{model}\n{rest}".encode()).hexdigest(), budget


def ended_tokens(request_json: str, response_json: str) -> int | None:
    """The new tokens of a generated answer that stopped before its request's budget (None: it
    used the whole budget, or the row is not such an answer). Zero tokens beside text is a
    count a server did not report (stored so by harnesses before -1 meant unknown): not ended."""
    try:
        response = json.loads(response_json)
        budget, n = json.loads(request_json)["max_tokens"], response["n_tokens"]
    except (ValueError, TypeError, KeyError):
        return None
    ok = isinstance(budget, int) and isinstance(n, int) and not isinstance(n, bool)
    return n if ok and 0 <= n < budget and (n > 0 or not response.get("text")) else None


def entry(key: str, model: str, request: str, response: str) -> tuple[str, int, str] | None:
    """The ``ended`` row of a stored response: (family, new tokens, key); None unless it is a
    greedy answer that stopped before its budget."""
    fam = family_key(model, request)
    n = ended_tokens(request, response) if fam is not None else None
    return None if fam is None or n is None else (fam[0], n, key)


def columns(db: sqlite3.Connection, table: str) -> list[str]:
    """A table's column names ([] where it does not exist)."""
    return [str(r[1]) for r in db.execute(f"PRAGMA table_info({table})").fetchall()]


def index(db: sqlite3.Connection) -> None:
    """Create the ``ended`` table where it is missing or of another shape, and fill it from the
    stored responses. The rows are read before the write lock is taken, so other runs' writes
    wait only for the inserts; a row stored in between is not indexed (it is served under its
    own budget only)."""
    if columns(db, "ended") == list(COLUMNS):
        db.execute(_BY_KEY)
        return
    entries = [e for r in db.execute("SELECT key, model, request, response FROM responses "
                                     "WHERE method = 'generate'")
               if (e := entry(*r)) is not None]
    db.execute("BEGIN IMMEDIATE")  # one process indexes; the others find the table made
    try:
        cols = columns(db, "ended")
        if cols != list(COLUMNS):
            if cols:
                db.execute("DROP TABLE ended")
            db.execute(_TABLE)
            db.executemany(INSERT, entries)
        db.execute(_BY_KEY)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def candidates(db: sqlite3.Connection, family: str, budget: int) -> list[tuple[str, ...]]:
    """The stored rows (key, model, method, request, response, checksum) the index lists under
    ``family`` as ended in fewer than ``budget`` tokens."""
    keys = [r[0] for r in db.execute(
        "SELECT key FROM ended WHERE family = ? AND n_tokens < ? ORDER BY key",
        (family, budget)).fetchall()]
    if not keys:
        return []
    marks = ",".join("?" * len(keys))
    return list(db.execute("SELECT key, model, method, request, response, checksum "
                           f"FROM responses WHERE key IN ({marks})", keys).fetchall())


def pick(rows: Sequence[tuple[str, ...]], family: str, budget: int) -> tuple[str, int] | None:
    """Of rows that passed their checksum, the first whose own request is of ``family`` and whose
    answer ended in fewer than ``budget`` tokens: its response and the budget it was asked
    with (the index entry is not trusted alone)."""
    for _, model, _, request, response, _ in sorted(rows):
        mine = family_key(model, request)
        n = ended_tokens(request, response)
        if mine is not None and mine[0] == family and n is not None and n < budget:
            return str(response), mine[1]
    return None
