from benchgen.pipeline import sample
from benchgen.records import dumps
from benchgen.sampling import Sampler, balance_report, settings_with_overrides


def test_deterministic_and_chunking_invariant(tax):
    whole = [dumps(s) for s in sample(tax, 120, seed=7)]
    again = [dumps(s) for s in sample(tax, 120, seed=7)]
    chunks = [dumps(s) for a in range(0, 120, 37) for s in sample(tax, min(37, 120 - a), seed=7, start=a)]
    assert whole == again == chunks
    assert whole != [dumps(s) for s in sample(tax, 120, seed=8)]


def test_every_axis_value_reachable_and_balanced(tax):
    sks = [s for s in sample(tax, 880, seed=3) if s.confusion is None]
    rep = balance_report(sks, tax)
    for ax in ("domain", "task_type", "subject", "style", "tone"):
        assert rep[ax]["min"] > 0, ax
        assert rep[ax]["max_min_ratio"] <= 1.01, (ax, rep[ax])  # 880 = 4 full 220-cell blocks
    assert rep["attribute"]["min"] > 0
    assert rep["attribute_non_essential"]["max_min_ratio"] < 1.6
    cells = {(s.domain, s.task_type) for s in sks}
    assert len(cells) == 220


def test_policy_semantics(tax):
    sks = sample(tax, 600, seed=11, overrides={"confusion": {"probability": 0.0}})
    sizes_e, sizes_n = [], []
    for s in sks:
        pol = tax.task_policy(s.task_type)
        e_attrs = [d.attribute for d in s.essential]
        n_attrs = [d.attribute for d in s.non_essential]
        assert not set(e_attrs) & set(n_attrs)
        assert len(set(n_attrs)) == len(n_attrs)
        if pol.id == "none":
            assert e_attrs == []
        elif pol.id == "addressed-person":
            assert e_attrs[0] == "name" and len(e_attrs) <= 2
            assert all(a in tax.domain[s.domain].essential_pool for a in e_attrs[1:])
        else:
            assert set(e_attrs) <= set(tax.domain[s.domain].essential_pool)
            if pol.max_drawn is not None:
                assert len(e_attrs) <= pol.max_drawn
        if pol.id == "domain":
            sizes_e.append(len(e_attrs))
        sizes_n.append(len(n_attrs))
        for d in (*s.essential, *s.non_essential):
            assert d.value in tax.attribute[d.attribute].values
    assert 3.0 <= sum(sizes_e) / len(sizes_e) <= 4.5
    assert 4.5 <= sum(sizes_n) / len(sizes_n) <= 5.5


def test_confusion_types(tax):
    settings = settings_with_overrides(tax, {"confusion": {"probability": 1.0}})
    s = Sampler(tax, 5, settings)
    kinds = set()
    for i in range(60):
        base, twin = s.sample(i)
        assert base.confusion is None and twin.group == base.group == base.id
        assert twin.id == f"{base.id}-c"
        kinds.add(twin.confusion)
        if twin.confusion == "shared-attribute":
            e_attrs = {d.attribute: d for d in twin.essential}
            shared = [d for d in twin.non_essential if d.attribute in e_attrs]
            assert len(shared) == 1
            n = shared[0]
            assert n.subject == "third_party" and n.relation in tax.subject["third_party"].relations
            assert n.relation != e_attrs[n.attribute].relation
            assert n.value != e_attrs[n.attribute].value
        else:
            assert twin.confusion == "over-removal-trap"
            assert tax.task_policy(twin.task_type).id == "addressed-person"
            assert twin.essential[0].attribute == "name"
            trap = twin.essential[1]
            assert trap.family in settings.confusion.sensitive_families
    assert kinds == {"shared-attribute", "over-removal-trap"}


def test_confusion_probability_respected(tax):
    sks = sample(tax, 400, seed=2, overrides={"confusion": {"probability": 0.25}})
    twins = sum(1 for s in sks if s.confusion)
    assert 60 <= twins <= 140
