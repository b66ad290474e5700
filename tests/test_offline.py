from collections import Counter

from benchgen.judge import OfflineExtractor, judge_offline
from benchgen.offline import generate_one
from benchgen.pipeline import sample
from benchgen.records import Draft


def test_spans_occur_and_labels_by_construction(tax):
    sks = sample(tax, 300, seed=21)
    drafts = [generate_one(tax, s) for s in sks]
    ok = [d for d in drafts if d.status == "ok"]
    assert len(ok) >= 0.99 * len(drafts), Counter(d.failure_reason for d in drafts if d.status != "ok")
    for d in ok:
        for x in (*d.essential, *d.non_essential):
            assert x.span and x.span in d.query
            assert x.span.lower() == x.value.lower()
        # the generator never writes the skeleton's E/N labels into the text
        assert "essential" not in d.query.lower()
    styles = {d.skeleton.style for d in ok}
    assert styles == {"direct", "narrative", "implicit", "multi_sentence"}
    # several surface layouts per style: queries for one style are not all alike in structure
    assert len({d.query.split(".")[1][:15] for d in ok if d.skeleton.style == "direct"}) > 5


def test_generation_is_deterministic(tax):
    sks = sample(tax, 40, seed=4)
    a = [generate_one(tax, s).to_dict() for s in sks]
    b = [generate_one(tax, s).to_dict() for s in reversed(sks)][::-1]
    assert a == b


def test_offline_judge_detection_recall(tax, judge_cfg):
    # the extractor's only input is the query string; on offline text it should find the spans
    ex = OfflineExtractor(tax, judge_cfg.offline)
    found = total = 0
    for s in sample(tax, 80, seed=9):
        d = generate_one(tax, s)
        e, n = ex.extract(d.query)
        got = {x.lower() for x in e + n}
        for x in (*d.essential, *d.non_essential):
            total += 1
            found += x.span.lower() in got
    assert found / total >= 0.95


def test_offline_judge_cues(tax, judge_cfg):
    ex = OfflineExtractor(tax, judge_cfg.offline)
    allergy = next(v for v in tax.attribute["allergies"].values)
    status = next(v for v in tax.attribute["relationship_status"].values)
    q = f"For context, I have {allergy}. By the way, I am {status}. Can you plan a dinner menu?"
    e, n = ex.extract(q)
    assert any(allergy.lower() in s.lower() for s in e)
    assert any(status.lower() in s.lower() for s in n)
    e2, n2 = ex.extract("Reach me at jo.doe@example.com or (312) 555-0147, SSN 912-45-0381.")
    assert {"jo.doe@example.com", "(312) 555-0147", "912-45-0381"} <= set(e2 + n2)


def test_judge_outcomes_mixed(tax, judge_cfg):
    sks = sample(tax, 400, seed=17)
    drafts = [generate_one(tax, s) for s in sks]
    verdicts = list(judge_offline(drafts, tax, judge_cfg))
    c = Counter(v.verdict for v in verdicts)
    assert c["pass"] > 0.6 * len(verdicts)
    assert c["soft_fail"] + c["hard_fail"] > 0  # the local judge is not a rubber stamp
    assert all(v.reason for v in verdicts if v.verdict != "pass")


def test_failed_generation_is_hard_fail_with_reason(tax, judge_cfg):
    sk = sample(tax, 1, seed=1)[0]
    bad = Draft(
        skeleton=sk,
        query="",
        essential=sk.essential,
        non_essential=sk.non_essential,
        generator="offline",
        template="x",
        template_hash="0",
        status="failed",
        failure_reason="span_not_found:age",
    )
    (v,) = judge_offline([bad], tax, judge_cfg)
    assert v.verdict == "hard_fail" and v.reason == "generation_failed:span_not_found"
