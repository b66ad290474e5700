"""PEEP Leak_PRO / Leak_AUT with the lexical matcher and with an LLM evaluator through a Provider."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchgen.errors import DataError
from benchgen.metrics.cli import score
from benchgen.metrics.peep import LLMEvaluator, _parse_present, from_record, score_peep
from benchgen.providers.base import Completion, Provider, ProviderSpec, Request

RECS = [
    {
        "id": "a",
        "rewrite": "What diet helps with diabetes?",
        "attributes": [
            {"value": "diabetes", "decision": "share"},
            {"value": "Anna Kowalski", "decision": "do_not_share"},
        ],
    },
    {
        "id": "b",
        "rewrite": "Anna wants a loan for her bakery",
        "attributes": [
            {"value": "bakery", "share": True},
            {"value": "Anna", "share": False},
            {"value": "Warsaw", "decision": "protected"},
        ],
    },
]


class DictProvider(Provider):
    """Test double for the provider: answers from a dict keyed by (item, rewrite) found in the prompt."""

    def __init__(self, answers: dict[tuple[str, str], str]) -> None:
        super().__init__(ProviderSpec("offline", "dict"))
        self.answers = answers
        self.requests: list[Request] = []

    async def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        prompt = request.messages[0].content
        for (item, rewrite), text in self.answers.items():
            if f"Information: {item}\n" in prompt and f"Text: {rewrite}\n" in prompt:
                return Completion(text=text)
        return Completion(text='{"present": false}')


def test_lexical() -> None:
    samples = [from_record(r, i) for i, r in enumerate(RECS)]
    assert samples[1].protected == ("Anna", "Warsaw") and samples[1].authorised == ("bakery",)
    rep = score_peep(samples)
    assert rep.leak_pro == pytest.approx(1 / 3)  # only "Anna" in sample b is present
    assert rep.n_protected == 3 and rep.n_protected_present == 1
    assert rep.leak_aut == 1.0 and rep.n_authorised == 2
    assert rep.evaluator.startswith("lexical")


def test_benchgen_format_and_errors() -> None:
    s = from_record({"rewrite": "x", "essential": [{"value": "flu"}], "non_essential": [{"span": "Bob"}]}, 0)
    assert s.protected == ("Bob",) and s.authorised == ("flu",)
    with pytest.raises(DataError, match="'rewrite'"):
        from_record({"attributes": []}, 4)
    with pytest.raises(DataError, match="share / do-not-share"):
        from_record({"rewrite": "x"}, 4)
    assert math.isnan(score_peep([]).leak_pro)


def test_llm_evaluator_with_provider_double() -> None:
    samples = [from_record(r, i) for i, r in enumerate(RECS)]
    prov = DictProvider(
        {
            ("Anna Kowalski", RECS[0]["rewrite"]): '{"present": false}',
            ("Warsaw", RECS[1]["rewrite"]): 'Yes - "her bakery" with Anna implies Warsaw',
            ("Anna", RECS[1]["rewrite"]): '```json\n{"present": true}\n```',
            ("diabetes", RECS[0]["rewrite"]): '{"present": true}',
            ("bakery", RECS[1]["rewrite"]): '{"present": "yes"}',
        }
    )
    rep = score_peep(samples, evaluator=LLMEvaluator(prov, concurrency=2))
    assert (rep.n_protected_present, rep.n_authorised_present) == (2, 2)
    assert rep.leak_pro == pytest.approx(2 / 3) and rep.leak_aut == 1.0
    assert len(prov.requests) == 5 and rep.evaluator == "llm:offline:dict"
    assert all(r.temperature == 0.0 for r in prov.requests)


def test_parse_present() -> None:
    assert _parse_present('{"present": true}') and not _parse_present('{"present": false}')
    assert _parse_present("yes.") and not _parse_present("No, it is not.")
    assert not _parse_present("garbage")


def test_cli_peep(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in RECS) + "\n")
    res = CliRunner().invoke(score, ["peep", str(f), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["n_protected_present"] == 1
