from benchgen.matching import AcceptanceThresholds, decide
from benchgen.text import content_tokens, token_recall

TH = AcceptanceThresholds(tau=0.5, pass_threshold=0.8, soft_threshold=0.5)


def test_tokens_and_recall():
    assert content_tokens("My sister's e-mail is X@Example.com!") == content_tokens(
        "sister e mail x example com"
    )
    assert token_recall("type 2 diabetes", "she has Type-2 diabetes") == 1.0
    assert token_recall("the of and", "anything") == 0.0  # no content tokens: no evidence
    assert token_recall("metformin 500 mg", "metformin") == 1 / 3


def test_pass():
    d = decide(
        ["type 2 diabetes", "Dana Whitfield"],
        ["a pack a day", "divorced"],
        ["Type 2 diabetes", "Dana Whitfield"],
        ["smokes a pack a day", "recently divorced"],
        TH,
    )
    assert (d.verdict, d.e_recall, d.n_recall, d.reason) == ("pass", 1.0, 1.0, None)
    assert d.swapped == () and d.residual == ()


def test_soft_fail_with_swap():
    # one of two E values is put on the N side by the judge -> E-recall 0.5 -> soft fail
    d = decide(
        ["type 2 diabetes", "Dana Whitfield"],
        ["divorced"],
        ["Dana Whitfield"],
        ["type 2 diabetes", "divorced"],
        TH,
    )
    assert d.verdict == "soft_fail" and d.e_recall == 0.5 and d.n_recall == 1.0
    assert d.reason == "low_e_recall"
    assert d.swapped == ({"value": "type 2 diabetes", "sampled": "essential", "judged": "non_essential"},)


def test_hard_fail_and_residual():
    d = decide(["type 2 diabetes"], ["divorced", "a pack a day", "Catholic"], [], ["lives in Boston"], TH)
    assert d.verdict == "hard_fail" and d.e_recall == 0.0 and d.n_recall == 0.0
    assert d.reason == "low_e_and_n_recall"
    assert d.residual == ("lives in Boston",)


def test_none_policy_e_recall_is_one():
    d = decide([], ["divorced", "Catholic"], [], ["divorced", "Catholic"], TH)
    assert d.e_recall == 1.0 and d.verdict == "pass"
    d2 = decide([], ["divorced", "Catholic"], [], ["divorced"], TH)
    assert d2.verdict == "soft_fail" and d2.score == 0.5 and d2.reason == "low_n_recall"


def test_tau_threshold_boundary():
    # "metformin 500 mg" vs judge "metformin" : recall 1/3 -> no match at tau 0.5, match at tau 0.3
    strict = decide(["metformin 500 mg"], [], ["metformin"], [], TH)
    loose = decide(["metformin 500 mg"], [], ["metformin"], [], AcceptanceThresholds(tau=0.3))
    assert strict.e_recall == 0.0 and loose.e_recall == 1.0


def test_mean_combination():
    d = decide(
        ["a b c"], ["x", "y"], [], ["x", "y"], AcceptanceThresholds(combine="mean", pass_threshold=0.5)
    )
    assert d.score == 0.5 and d.verdict == "pass"


def test_swapped_both_directions_and_paraphrase_by_tokens():
    # tense/inflection-free paraphrase by content tokens: "divorced last year" keeps "divorced"
    d = decide(["Dana Whitfield"], ["divorced"], ["divorced last year"], ["Whitfield, Dana"], TH)
    assert d.e_recall == 0.0 and d.n_recall == 0.0 and d.verdict == "hard_fail"
    assert {(s["value"], s["sampled"], s["judged"]) for s in d.swapped} == {
        ("Dana Whitfield", "essential", "non_essential"),
        ("divorced", "non_essential", "essential"),
    }
    assert d.residual == ()  # both judge strings are explained by sampled values


def test_residual_explained_when_judge_copies_less():
    # a judge string lying inside a sampled value is not a residual, an unrelated one is
    d = decide(
        ["metformin 500 mg twice daily"],
        [],
        ["metformin 500 mg twice daily", "500 mg"],
        ["my landlord Mr. Abara"],
        TH,
    )
    assert d.residual == ("my landlord Mr. Abara",)


def test_custom_matcher_hook_is_used_for_residuals_too():
    calls = []

    def match(values, candidates):
        calls.append((tuple(values), tuple(candidates)))
        return [{j for j, c in enumerate(candidates) if c.lower() == v.lower()} for v in values]

    d = decide(["Asthma"], [], ["asthma", "Boston"], [], TH, matcher=match)
    assert d.e_recall == 1.0 and d.residual == ("Boston",)
    assert (("Boston",), ("Asthma",)) in calls  # judge string -> sampled values direction


def test_agreement_table():
    from benchgen.matching import agreement

    a = agreement(["pass", "soft_fail", "hard_fail", "pass"], ["pass", "pass", "hard_fail", "pass"])
    assert a["agreement"] == 0.75 and a["n"] == 4
    assert a["confusion"]["soft_fail"]["pass"] == 1 and a["confusion"]["pass"]["pass"] == 2
    assert a["changed"] == {"soft_fail->pass": 1}
