"""Which file, and which line, gives a key of a task file with ``include:``: a problem is shown
where it is written (``moves.yaml:36``), naming the file that includes it.

Keys are looked for in merge order, most binding first: the task file's own keys, then its
includes from the last to the first, each with its own includes after it (``include:``
deep-merges them so that the includer wins, and a later include wins over an earlier one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Loc = tuple[int | str, ...]
Reader = Callable[[Path], tuple[dict[str, Any], "yaml.Node | None"]]
_KEY_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\.[\w-]+)*")


def line_of(node: yaml.Node | None, loc: Loc) -> int | None:
    """1-based line of the key (or list entry) at ``loc`` in one file's node tree; the deepest
    ancestor found when the path leaves the file (e.g. a key from an include)."""
    line = None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == key), None)
            if pair is None:
                return line
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _depth(data: Any, loc: Loc) -> int:
    """How many leading parts of ``loc`` one file's own data holds."""
    for n, key in enumerate(loc):
        in_list = isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data)
        if not in_list and not (isinstance(data, Mapping) and key in data):
            return n
        data = data[key]
    return len(loc)


@dataclass(frozen=True)
class _File:
    path: Path  # resolved
    data: dict[str, Any]  # its own keys (include: not merged)
    node: yaml.Node | None  # its node tree (line numbers)
    chain: tuple[Path, ...]  # the files that include it, nearest first (empty: the task file)


class KeySources:
    """The files of one task file's include tree, in merge order (see the module docstring)."""

    def __init__(self, path: Path, read: Reader) -> None:
        self.root = path  # as the user named it
        self.files: list[_File] = []
        self._visit(path.resolve(), (), read)

    def _visit(self, path: Path, chain: tuple[Path, ...], read: Reader) -> None:
        if path in chain or len(self.files) > 1000:  # a cycle is refused when includes resolve
            return
        data, node = read(path)
        self.files.append(_File(path, data, node, chain))
        inc = data.get("include")
        names = [inc] if isinstance(inc, str) else inc if isinstance(inc, list) else []
        for name in reversed([n for n in names if isinstance(n, str)]):
            target = (path.parent / name).resolve()
            if target.is_file():
                self._visit(target, (path, *chain), read)

    def _shown(self, f: _File) -> str:
        if not f.chain:
            return str(self.root)
        return str(f.path) if self.root.is_absolute() else os.path.relpath(f.path)

    def locate(self, loc: Loc) -> tuple[str, int | None, str, int]:
        """Where the key at ``loc`` is written: (file as shown, line, `` (included by ...)``
        or "", the file's place in merge order, for sorting). The file giving the whole path
        wins; else the one giving its longest leading part (the block a missing key belongs
        in); else the task file."""
        best, depth = (self.files[0] if self.files else None), 0
        for f in self.files:
            d = _depth(f.data, loc)
            if d > depth:
                best, depth = f, d
            if d == len(loc):
                break
        if best is None:
            return str(self.root), None, "", 0
        line = line_of(best.node, loc) if depth else None
        by = ""
        if best.chain:
            names = [str(self.root) if c == self.files[0].path else self._shown(
                next(f for f in self.files if f.path == c)) for c in best.chain]
            by = f" (included by {', included by '.join(names)})"
        return self._shown(best), line, by, self.files.index(best)

    def relocate(self, text: str) -> str:
        """A problem line ``<task file>: key.path: problem`` (from the checks after the schema)
        put at the included file and line that give ``key.path``; other lines (and those of
        the task file's own keys) as they are."""
        head = f"{self.root}: "
        if not text.startswith(head):
            return text
        rest = text[len(head):]
        key, sep, _ = rest.partition(": ")
        if not sep or not _KEY_PATH.fullmatch(key):
            return text
        loc = tuple(int(p) if p.isdigit() else p for p in key.split("."))
        shown, line, by, _ = self.locate(loc)
        if not by and not line:
            return text
        return f"{shown}:{line}: {rest}{by}" if line else f"{shown}: {rest}{by}"


_INCLUDED_BY = re.compile(r"(?P<head>.*) \(included by (?P<chain>[^()]*)\)")


def merge_includers(lines: Iterable[str]) -> list[str]:
    """Problem lines with each problem once: the lines of one problem in an included file,
    which every task file that includes it reports (``... (included by a.yaml)``, ``...
    (included by b.yaml)``, and the file's own validation without the suffix), become one
    line naming every includer (``... (included by a.yaml, b.yaml)``); first-seen order."""
    chains: dict[str, list[tuple[str, ...]]] = {}
    for line in lines:
        m = _INCLUDED_BY.fullmatch(line)
        seen = chains.setdefault(problem_of(line), [])
        chain = tuple(m["chain"].split(", included by ")) if m else None
        if chain is not None and chain not in seen:
            seen.append(chain)
    return [head + _by(found) for head, found in chains.items()]


def problem_of(line: str) -> str:
    """A problem line without its `` (included by ...)``: what ``merge_includers`` merges by."""
    m = _INCLUDED_BY.fullmatch(line)
    return m["head"] if m else line


def _by(chains: list[tuple[str, ...]]) -> str:
    """`` (included by ...)`` for the include chains (nearest includer first) of one file:
    chains that differ only in the task file share their start (``mid.yaml, included by
    a.yaml, b.yaml``); others are separated by ``;``."""
    if not chains:
        return ""
    tops: dict[tuple[str, ...], list[str]] = {}
    for chain in chains:
        tops.setdefault(chain[:-1], []).append(chain[-1])
    parts = [", included by ".join([*start, ", ".join(ends)]) for start, ends in tops.items()]
    return f" (included by {'; '.join(parts)})"
