"""The response cache's SQLite file: rows with checksums, and recovery from a corrupt file.

Every row carries ``checksum``, the sha256 of its key, model, method, request and response. A
read checks it (and that the key is the hash of the row's model and request); a row that fails,
or whose response cannot be decoded, is deleted and reported, and the caller asks the model
again: a changed byte is never scored. SQLite's own ``integrity_check`` does not see such
edits, since the file stays well-formed.

A file SQLite cannot read (``file is not a database``, ``database disk image is malformed``, a
dropped or reshaped table, a file from before row checksums) is moved aside as
``responses.sqlite.corrupt-<UTC time>`` (with its ``-wal``/``-shm`` files) with one line on
stderr, and the run goes on with a fresh, empty cache. This happens when the file is opened and
whenever a later read or write meets the damage.

The checksum guards against damage and careless edits, not against someone who recomputes it.

The ``ended`` table indexes the answers that stopped before their budget, for requests that
differ only in it (``models/cache_ended``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from harness.errors import HarnessError
from harness.models import cache_ended as ended

DB_NAME = "responses.sqlite"
COLUMNS = ("key", "model", "method", "request", "response", "created", "checksum")
_SCHEMA = ("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
           " method TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL,"
           " created REAL NOT NULL, checksum TEXT NOT NULL)")
# messages of SQLite errors that mean the file's content, not the system, is the problem
_DAMAGE = ("no such table", "no such column", "has no column", "malformed", "not a database")
T = TypeVar("T")


def warn(message: str) -> None:
    """One ``warning:`` line on stderr."""
    print("warning: " + " ".join(message.split()), file=sys.stderr, flush=True)


def row_checksum(key: str, model: str, method: str, request: str, response: str) -> str:
    """sha256 of a row's fields (JSON-framed, so no two rows share the input)."""
    framed = json.dumps([key, model, method, request, response], ensure_ascii=False)
    return hashlib.sha256(framed.encode()).hexdigest()


def row_key(model: str, request_json: str) -> str:
    """The row key: sha256 of the model key and the request JSON."""
    return hashlib.sha256(f"{model}\n{request_json}".encode()).hexdigest()


def is_damage(e: sqlite3.Error) -> bool:
    """Whether an SQLite error says the file is damaged (rather than locked, full, ...)."""
    name = getattr(e, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    text = str(e).lower()
    return isinstance(e, sqlite3.DatabaseError) and any(d in text for d in _DAMAGE)


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _valid(row: Sequence[Any]) -> bool:
    key, model, method, request, response, checksum = row
    if not all(isinstance(x, str) for x in row):
        return False
    return bool(checksum == row_checksum(key, model, method, request, response)
                and key == row_key(model, request))


class ResponseCache:
    """One SQLite file of responses; safe to share between processes and threads."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / DB_NAME  # the SQLite file
        self.rejected = 0  # rows dropped since opening: failed checksum or undecodable
        self.moved_aside: list[Path] = []  # damaged files this object moved away
        self._lock = threading.Lock()
        self._ident: tuple[int, int] | None = None  # (device, inode) of the file opened
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise HarnessError(f"--cache-dir: cannot use {self.path}: {e}") from None
        self._db = self._open()

    @staticmethod
    def key(model: str, request_json: str) -> str:
        """The row key: sha256 of the model key and the request JSON."""
        return row_key(model, request_json)

    # -- opening and recovery ---------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False,
                             isolation_level=None)
        # damaged text (bytes that are not UTF-8) reads as U+FFFD: it then fails its row
        # checksum and is dropped, instead of an OperationalError per query
        db.text_factory = _lenient_text
        try:
            st = os.stat(self.path)
            self._ident = (st.st_dev, st.st_ino)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            problem = self._schema_problem(db)
            if problem is not None:
                raise _Damaged(problem)
            db.execute(_SCHEMA)
            ended.index(db)
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _schema_problem(db: sqlite3.Connection) -> str | None:
        cols = ended.columns(db, "responses")
        if not cols or cols == list(COLUMNS):
            return None
        if cols == [c for c in COLUMNS if c != "checksum"]:
            return "has no row checksums (written by an older harness)"
        return f"has an unexpected responses table (columns {', '.join(map(str, cols))})"

    def _open(self) -> sqlite3.Connection:
        for _ in range(3):
            try:
                return self._connect()
            except _Damaged as e:
                self._move_aside(str(e))
            except UnicodeDecodeError:  # SQLite's own message quotes the damaged bytes
                self._move_aside("cannot be read (damaged schema text)")
            except sqlite3.Error as e:
                if not is_damage(e):
                    raise HarnessError(f"--cache-dir: cannot use {self.path}: {e}") from None
                self._move_aside(f"cannot be read ({e})")
            except OSError as e:
                raise HarnessError(f"--cache-dir: cannot use {self.path}: {e}") from None
        raise HarnessError(f"--cache-dir: {self.path} keeps failing to open; remove it")

    def _move_aside(self, reason: str) -> None:
        """Rename the damaged file (and its -wal/-shm) to a timestamped name; one line."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if self._ident is not None and (st.st_dev, st.st_ino) != self._ident:
            return  # another process already moved it and started a fresh one
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = self.path.with_name(f"{DB_NAME}.corrupt-{stamp}")
        n = 1
        while aside.exists():
            n += 1
            aside = self.path.with_name(f"{DB_NAME}.corrupt-{stamp}-{n}")
        try:
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = Path(f"{self.path}{suffix}")
                if side.exists():
                    os.replace(side, Path(f"{aside}{suffix}"))
        except OSError as e:
            raise HarnessError(f"--cache-dir: {self.path} {reason} and cannot be moved aside: "
                               f"{e.strerror or e}") from None
        self._ident = None
        self.moved_aside.append(aside)
        warn(f"response cache: {self.path} {reason}; moved it to {aside.name} and started a "
             "fresh cache (responses in it are asked again)")

    def _run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``op`` on the connection; a damaged file is moved aside and ``op`` is run again
        on a fresh one. Call with the lock held."""
        try:
            return op(self._db)
        except (sqlite3.Error, UnicodeDecodeError) as e:
            if isinstance(e, sqlite3.Error) and not is_damage(e):
                raise
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._move_aside(f"is damaged ({e})" if isinstance(e, sqlite3.Error)
                             else "is damaged (text that is not UTF-8)")
            self._db = self._open()
            return op(self._db)

    # -- rows -------------------------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """Stored responses (JSON text) for those keys that have a row passing its checksum;
        rows that fail are deleted (and counted in ``rejected``)."""

        def read(db: sqlite3.Connection) -> tuple[dict[str, str], list[str]]:
            found: dict[str, str] = {}
            bad: list[str] = []
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = db.execute("SELECT key, model, method, request, response, checksum "
                                  f"FROM responses WHERE key IN ({marks})", part).fetchall()
                for row in rows:
                    if _valid(row):
                        found[row[0]] = row[4]
                    else:
                        bad.append(row[0])
            return found, bad

        with self._lock:
            found, bad = self._run(read)
        self.discard(bad)
        return found

    def discard(self, keys: Sequence[str]) -> None:
        """Delete rows that failed a check (counted in ``rejected``)."""
        if not keys:
            return
        with self._lock:
            self.rejected += len(keys)
            self._run(lambda db: [db.executemany(f"DELETE FROM {table} WHERE key = ?",
                                                 [(k,) for k in keys])
                                  for table in ("responses", "ended")])

    def put(self, key: str, model: str, method: str, request: str, response: str) -> None:
        """Store one response and commit at once (it survives the process being killed)."""
        row = (key, model, method, request, response, time.time(),
               row_checksum(key, model, method, request, response))
        listed = ended.entry(key, model, request, response) if method == "generate" else None

        def write(db: sqlite3.Connection) -> None:
            db.execute(f"INSERT OR REPLACE INTO responses ({', '.join(COLUMNS)}) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            if listed is not None:
                db.execute(ended.INSERT, listed)

        with self._lock:
            self._run(write)

    def ended_answer(self, model: str, request_json: str) -> tuple[str, int] | None:
        """A stored answer, under another budget, that ended before this request's budget and
        so is its answer (``models/cache_ended``), with the budget it was asked with; None where
        the cache holds none. A row failing its checksum is passed over (it is dropped when it
        is read by its own key)."""
        fam = ended.family_key(model, request_json)
        if fam is None:
            return None
        with self._lock:
            rows = self._run(lambda db: ended.candidates(db, *fam))
        return ended.pick([r for r in rows if _valid(r)], *fam)

    def info(self) -> dict[str, Any]:
        """Path, size, response counts per model and method, and damaged files moved aside."""
        with self._lock:
            rows = self._run(lambda db: db.execute(
                "SELECT model, method, COUNT(*) FROM responses GROUP BY model, method"
            ).fetchall())
        files = [Path(f"{self.path}{s}") for s in ("", "-wal", "-shm")]
        size = sum(p.stat().st_size for p in files if p.is_file())
        entries = []
        for m, k, n in rows:
            try:
                model = json.loads(m)
                label = f"{model['backend']}:{model['name']}"
            except (TypeError, ValueError, KeyError):
                label = "(unreadable model key)"
            entries.append({"model": label, "method": str(k), "count": int(n)})
        aside = sorted(p for p in self.path.parent.glob(f"{DB_NAME}.corrupt-*")
                       if not p.name.endswith(("-wal", "-shm")))
        return {"path": str(self.path), "bytes": size, "entries": entries,
                "moved_aside": [str(p) for p in aside]}

    def clear(self, model_substring: str | None = None) -> int:
        """Delete all responses, or those whose model key contains *model_substring*."""

        def delete(db: sqlite3.Connection) -> int:
            if model_substring is None:
                cur = db.execute("DELETE FROM responses")
            else:
                cur = db.execute("DELETE FROM responses WHERE instr(model, ?) > 0",
                                 (model_substring,))
            n = cur.rowcount
            db.execute("DELETE FROM ended WHERE key NOT IN (SELECT key FROM responses)")
            db.execute("VACUUM")
            return n

        with self._lock:
            return self._run(delete)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


class _Damaged(Exception):
    """The file opened but is not a response cache this harness can trust (message: why)."""
