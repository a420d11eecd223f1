"""Self-ask (Press et al. 2023): the model asks itself follow-up questions; each follow-up is
answered by a separate model call; finally the model states the answer.

Scaffold (the paper's format): ``Question: …\\nAre follow up questions needed here: Yes.\\n
Follow up: …\\nIntermediate answer: …\\n…So the final answer is: …``. The follow-up is answered
in a fresh prompt: the item's context (record field ``context_field``, e.g. the facts) then
``Question: <follow-up>\\nAnswer:``. Params: ``exemplars`` (scaffold demonstrations),
``question_field`` (record field with the bare question; default: the rendered template),
``context_field``, ``max_followups``, ``followup_tokens``.
"""

from __future__ import annotations

from harness.requests import GenerateRequest
from harness.strategies.base import Chain, StrategyInput, take_params
from harness.strategies.registry import strategy

EXAMPLE = (
    "Question: In which country was the founder of Velmora Works born?\n"
    "Are follow up questions needed here: Yes.\n"
    "Follow up: Who founded Velmora Works?\n"
    "Intermediate answer: Tessa Brandlow.\n"
    "Follow up: In which country was Tessa Brandlow born?\n"
    "Intermediate answer: Quorvia.\n"
    "So the final answer is: Quorvia"
)
DEFAULTS = {
    "exemplars": EXAMPLE,
    "question_field": None,
    "context_field": None,
    "max_followups": 3,
    "followup_tokens": 40,
}
FOLLOW = "Follow up:"
FINAL = "So the final answer is:"


@strategy("self_ask")
def self_ask(inp: StrategyInput) -> Chain:
    """Follow-ups answered one call each, then the final answer."""
    p = take_params(inp, "self_ask", DEFAULTS)
    rec = inp.prepared.item.record
    qf, cf = p["question_field"], p["context_field"]
    for f in (qf, cf):
        if f is not None and f not in rec:
            raise ValueError(f"strategies.self_ask: item has no field {f!r}")
    question = str(rec[qf]) if qf else inp.question
    context = f"{rec[cf]}\n" if cf else ""
    head = f"{p['exemplars']}\n\n" if p["exemplars"] else ""
    scaffold = f"{head}{context}Question: {question}\nAre follow up questions needed here: Yes.\n"
    tokens = max(int(p["followup_tokens"]), inp.answer_tokens)
    follow_up = yield GenerateRequest(scaffold + FOLLOW, tokens, ("\n",))
    for step in range(int(p["max_followups"])):
        follow_up = follow_up.strip()
        if not follow_up:
            break
        answer = yield GenerateRequest(f"{context}Question: {follow_up}\nAnswer:", tokens, ("\n",))
        scaffold += f"{FOLLOW} {follow_up}\nIntermediate answer: {answer.strip()}\n"
        if step + 1 == int(p["max_followups"]):
            break
        line = (yield GenerateRequest(scaffold, tokens, ("\n",))).strip()
        if line.startswith(FOLLOW):
            follow_up = line[len(FOLLOW):]
            continue
        if line.startswith(FINAL):
            return " " + line[len(FINAL):].strip()
        break
    final = yield inp.answer_request(scaffold + FINAL)
    return final
