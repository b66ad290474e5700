"""Split assignment (group-consistent, stratified, deterministic) and cross-split near-dup removal."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from test_release_fixtures import make_meta, make_recipe, make_row, make_rows

from benchgen.release import build_release
from benchgen.release.options import NearDupOptions
from benchgen.release.splits import assign_splits, remove_near_duplicates, split_rows

RATIOS = {"train": 0.8, "validation": 0.1, "test": 0.1}


def _rows(n: int, domains: int = 4, tasks: int = 3) -> list[dict]:
    return [
        {
            "id": f"r{i}",
            "group": f"g{i // 2}",
            "domain": f"d{i % domains}",
            "task_type": f"t{(i // 7) % tasks}",
            "query": f"q {i}",
        }
        for i in range(n)
    ]


def test_ratios_respected_and_groups_kept_together() -> None:
    rows = _rows(1000)
    a = assign_splits({"general": rows}, RATIOS)
    per_row = Counter(a[r["group"]] for r in rows)
    assert abs(per_row["train"] - 800) <= 6 and abs(per_row["validation"] - 100) <= 6
    assert abs(per_row["test"] - 100) <= 6
    # every stratum (domain x task) is close to the ratios too, not just the whole
    by_stratum: dict[tuple[str, str], Counter[str]] = {}
    for r in rows:
        by_stratum.setdefault((r["domain"], r["task_type"]), Counter())[a[r["group"]]] += 1
    for c in by_stratum.values():
        n = sum(c.values())
        assert abs(c["train"] / n - 0.8) < 0.1 and c["test"] >= 1 and c["validation"] >= 1


def test_small_strata_still_feed_every_split() -> None:
    rows = _rows(60, domains=10, tasks=6)  # 60 strata, one group each
    a = assign_splits({"general": rows}, RATIOS)
    assert set(Counter(a.values())) == {"train", "validation", "test"}


def test_deterministic_and_order_independent() -> None:
    rows = _rows(300)
    a = assign_splits({"general": rows}, RATIOS)
    b = assign_splits({"general": list(reversed(rows))}, RATIOS)
    assert a == b
    assert assign_splits({"general": rows}, RATIOS, salt="other") != a  # the hash is what decides


def test_group_shared_across_configs_lands_in_one_split() -> None:
    general = _rows(40)
    hard = [dict(r, id=f"h{i}") for i, r in enumerate(general[:10])]  # twins soft-failed: same groups
    a = assign_splits(
        {"general": general, "hard_mining": hard}, RATIOS, config_order=["general", "hard_mining"]
    )
    parts = split_rows({"general": general, "hard_mining": hard}, a)
    for sp, rows in parts["hard_mining"].items():
        assert all(a[r["group"]] == sp for r in rows)


def test_hard_mining_only_groups_are_stratified_on_their_own() -> None:
    general = _rows(200)
    hard = [dict(r, id=f"h{i}", group=f"h{i}") for i, r in enumerate(_rows(100))]
    a = assign_splits({"general": general, "hard_mining": hard}, RATIOS)
    c = Counter(a[r["group"]] for r in hard)
    assert c["train"] == 80 and c["validation"] == 10 and c["test"] == 10


def test_near_duplicates_across_splits_removed_from_less_protected_side() -> None:
    base = "I am 34 and live in Lyon, could you help me plan a budget of 1200 euros for my move next month"
    parts = {
        "general": {
            "train": [
                {"id": "a", "query": base + " please"},
                {"id": "b", "query": "totally unrelated text here"},
            ],
            "validation": [{"id": "c", "query": base + " thanks"}],
            "test": [{"id": "d", "query": base}],
        },
        "hard_mining": {"train": [{"id": "e", "query": base + " ok"}], "validation": [], "test": []},
    }
    out, rep = remove_near_duplicates(parts, NearDupOptions(threshold=0.8))
    assert [r["id"] for r in out["general"]["test"]] == ["d"]  # test is protected
    assert [r["id"] for r in out["general"]["validation"]] == []
    assert [r["id"] for r in out["general"]["train"]] == ["b"]
    assert out["hard_mining"]["train"] == []  # across configs too
    assert rep.total == 3 and rep.removed["general"] == {"train": 1, "validation": 1, "test": 0}
    assert {p["kept"] for p in rep.pairs} == {"d"}
    # same-split near-duplicates are not touched
    same = {
        "general": {
            "train": [{"id": "x", "query": base}, {"id": "y", "query": base}],
            "validation": [],
            "test": [],
        }
    }
    out2, rep2 = remove_near_duplicates(same, NearDupOptions(threshold=0.8))
    assert rep2.total == 0 and len(out2["general"]["train"]) == 2
    # threshold is honoured and disabling works
    _, rep3 = remove_near_duplicates(parts, NearDupOptions(threshold=1.0))
    assert rep3.total == 0
    _, rep4 = remove_near_duplicates(parts, NearDupOptions(enabled=False))
    assert rep4.total == 0


def test_release_counts_near_duplicates_in_card(tmp_path: Path) -> None:
    rows = make_rows()
    q = rows["general"][10]["query"]
    # 8 new groups whose queries are near-copies of one query: some must land in another split
    rows["general"] += [make_row(200 + k, query=q + f" {k}") for k in range(8)]
    res = build_release(rows, make_recipe(tmp_path), make_meta(), out_root=tmp_path / "out", quiet=True)
    assert res.near_duplicates_removed > 0
    assert res.total == 68 - res.near_duplicates_removed
    card = (res.path / "README.md").read_text(encoding="utf-8")
    assert f"**{res.near_duplicates_removed}** removed" in card
