"""Metric registry (decorator, lookup, entry points) and the built-in metrics."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

import pytest

from harness.answers import metrics
from harness.answers.metrics import (
    get_metric,
    metric,
    metric_names,
    normalize_answer,
    parse_number,
)
from harness.errors import HarnessError, UnknownNameError


def test_builtins_listed() -> None:
    names = metric_names()
    assert {"exact_match", "normalized_match", "numeric_match"} <= set(names)
    assert names == sorted(names)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [("42", "42", 1.0), (" 42\n", "42", 1.0), ("42", "42.0", 0.0), ("Paris", "paris", 0.0)],
)
def test_exact_match(a: str, b: str, want: float) -> None:
    assert get_metric("exact_match")(a, b) == want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ("The  Eiffel\tTower.", "eiffel tower", 1.0),
        ('"Paris"', "paris", 1.0),
        ("(an apple)!", "Apple", 1.0),
        ("a", "a", 1.0),  # a lone article is kept: a choice letter stays a letter
        ("", "a", 0.0),
        ("(b)", "a", 0.0),
        ("-5", "5", 0.0),  # signs are not surrounding punctuation
        ("new york city", "new york", 0.0),
    ],
)
def test_normalized_match(a: str, b: str, want: float) -> None:
    assert get_metric("normalized_match")(a, b) == want


def test_normalize_answer() -> None:
    assert normalize_answer("  The Answer:  Blue. ") == "answer: blue"
    assert normalize_answer("[['x']]") == "x"
    assert normalize_answer("") == ""


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ("1,234", "1234", 1.0),
        ("0.75", "3/4", 1.0),
        ("-3/4", "-0.75", 1.0),
        ("3 / 4", "0.75", 1.0),
        ("12.", "12", 1.0),
        ("1000000", "1000000.5", 1.0),  # relative difference 5e-7 <= 1e-6
        ("1000", "1000.5", 0.0),  # relative difference 5e-4
        ("0", "0.0", 1.0),
        ("0", "1e-9", 0.0),  # relative to the larger: 1.0 > 1e-6
        ("\u22122", "-2", 1.0),
        ("abc", "1", 0.0),
        ("", "0", 0.0),
        ("1/0", "1", 0.0),
        ("nan", "nan", 0.0),
        ("inf", "inf", 0.0),
    ],
)
def test_numeric_match(a: str, b: str, want: float) -> None:
    assert get_metric("numeric_match")(a, b) == want


def test_parse_number_exact() -> None:
    big = "123456789012345678901234567890"
    assert parse_number(big) == int(big)  # exact, no float rounding
    assert parse_number("x") is None


def test_register_with_decorator() -> None:
    @metric("test_contains")
    def contains(extracted: str, target: str) -> float:
        return 1.0 if target in extracted else 0.0

    try:
        assert get_metric("test_contains") is contains
        assert "test_contains" in metric_names()
        assert get_metric("test_contains")("xx42yy", "42") == 1.0
        with pytest.raises(ValueError, match="already registered"):
            metric("test_contains")(lambda e, t: 0.0)
    finally:
        metrics._REGISTRY.pop("test_contains", None)


def test_unknown_metric_suggests() -> None:
    with pytest.raises(UnknownNameError, match="did you mean: exact_match"):
        get_metric("exact_mach")


def _fake_eps(monkeypatch: pytest.MonkeyPatch, *eps: EntryPoint) -> None:
    def fake(**kw: Any) -> list[EntryPoint]:
        assert kw == {"group": "harness.metrics"}
        return list(eps)

    from harness import plugins

    monkeypatch.setattr(plugins, "entry_points", fake)
    plugins.refresh()  # forget what was discovered before the patch


def test_entry_point_loaded_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint(
        name="plug_len", value="harness.answers.metrics:exact_match", group="harness.metrics"
    )
    bad = EntryPoint(name="plug_bad", value="no_such_module_xyz:f", group="harness.metrics")
    _fake_eps(monkeypatch, ep, bad)
    try:
        assert {"plug_len", "plug_bad"} <= set(metric_names())  # listed without loading
        assert "plug_len" not in metrics._REGISTRY
        assert get_metric("plug_len") is metrics.exact_match
        assert metrics._REGISTRY["plug_len"] is metrics.exact_match  # cached after first load
        with pytest.raises(HarnessError, match="failed to load"):
            get_metric("plug_bad")
        with pytest.raises(UnknownNameError, match="did you mean: plug_len"):
            get_metric("plug_lem")
    finally:
        metrics._REGISTRY.pop("plug_len", None)
        monkeypatch.undo()
        from harness import plugins

        plugins.refresh()


def test_numeric_match_long_integers_are_exact() -> None:
    from harness.answers.metrics import numeric_match

    # a 15-digit sum off by one is within a relative 1e-6 but is a wrong answer
    assert numeric_match("123456789012346", "123456789012345") == 0.0
    assert numeric_match("123,456,789,012,345", "123456789012345") == 1.0
