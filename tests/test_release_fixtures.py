"""Shared helpers for the release tests: realistic ``sample_row`` dicts, a recipe and run metadata.

Rows are produced by the real :func:`benchgen.records.sample_row` from Skeleton/Draft/Verdict
records, so the release code is exercised on exactly what the pipeline hands it.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

from benchgen.recipe import Recipe
from benchgen.records import Detail, Draft, Skeleton, Verdict, sample_row

DOMAINS = ["health", "finance", "legal", "travel", "employment"]
TASKS = ["advice", "drafting", "planning"]
E_ATTRS = [
    ("age", "demographic", "34"),
    ("city", "location", "Lyon"),
    ("deadline", "temporal", "next Friday"),
    ("budget", "financial", "1200 euros"),
    ("condition", "health", "type 2 diabetes"),
]
N_ATTRS = [
    ("religion", "belief", "Catholic"),
    ("salary", "financial", "58k a year"),
    ("diagnosis", "health", "anxiety disorder"),
    ("address", "location", "12 Rue Lafayette"),
    ("ethnicity", "demographic", "Vietnamese"),
    ("orientation", "sexuality", "bisexual"),
]
WORDS = [
    "apple",
    "river",
    "stone",
    "violet",
    "copper",
    "meadow",
    "lantern",
    "harbor",
    "quill",
    "saddle",
    "thunder",
    "orchard",
    "velvet",
    "ember",
    "falcon",
    "glacier",
    "pepper",
    "tundra",
    "willow",
    "zephyr",
    "basalt",
    "cobalt",
    "dune",
    "fjord",
    "grove",
    "heron",
    "iris",
    "jasper",
]


def _details(pool: list[tuple[str, str, str]], rng: random.Random, k: int) -> tuple[Detail, ...]:
    return tuple(
        Detail(attribute=a, family=f, subject="self", relation="I", value=v, span=v)
        for a, f, v in rng.sample(pool, k)
    )


def make_row(
    i: int,
    *,
    verdict: str = "pass",
    group: str | None = None,
    query: str | None = None,
    residual: tuple[str, ...] = (),
    domain: str | None = None,
) -> dict[str, Any]:
    rng = random.Random(f"row:{i}")
    dom = domain or DOMAINS[i % len(DOMAINS)]
    task = TASKS[(i // len(DOMAINS)) % len(TASKS)]
    ess = _details(E_ATTRS, rng, 2)
    non = _details(N_ATTRS, rng, 2)
    filler = " ".join(rng.sample(WORDS, 8))
    q = query or (
        f"[{i}] {filler}. I am {ess[0].value} and need help with {ess[1].value} for {dom} {task}; "
        f"by the way I am {non[0].value} and my {non[1].attribute} is {non[1].value}."
    )
    sk = Skeleton(
        id=f"sk-{i:04d}",
        seed=13,
        index=i,
        group=group or f"g-{i:04d}",
        domain=dom,
        task_type=task,
        subject="self",
        relation="I",
        style=rng.choice(["casual", "formal"]),
        tone=rng.choice(["neutral", "anxious"]),
        policy="default",
        confusion=None if i % 7 else "swap_attribute",
        essential=ess,
        non_essential=non,
    )
    draft = Draft(
        skeleton=sk,
        query=q,
        essential=ess,
        non_essential=non,
        generator="offline",
        template="offline/default.j2",
        template_hash=hashlib.sha256(b"t").hexdigest(),
    )
    v = Verdict(
        id=sk.id,
        judge="offline",
        judge_essential=tuple(d.value for d in ess),
        judge_non_essential=tuple(d.value for d in non),
        e_recall=1.0,
        n_recall=1.0 if verdict == "pass" else 0.5,
        score=0.97 if verdict == "pass" else 0.6,
        verdict=verdict,
        reason=None if verdict == "pass" else "n_recall_below_threshold",
        residual=residual,
    )
    return sample_row(
        draft,
        v,
        seed=13,
        benchgen_version="0.1.0",
        target_rewrite=f"Help with {ess[1].value} for {dom} {task}, I am {ess[0].value}.",
    )


def make_rows(n_general: int = 50, n_hard: int = 10) -> dict[str, list[dict[str, Any]]]:
    """~60 rows; every 5th general row has a confusion twin sharing its group; one row leaks a span."""
    general = []
    for i in range(n_general):
        group = f"g-{i - 1:04d}" if i % 5 == 1 else None  # twin of the previous row
        general.append(make_row(i, group=group, residual=("my ex-husband Marc",) if i == 3 else ()))
    hard = [make_row(1000 + j, verdict="soft_fail") for j in range(n_hard)]
    return {"general": general, "hard_mining": hard}


def make_recipe(tmp: Path, version: str = "0.1.0", *, changelog: bool = True, **kw: Any) -> Recipe:
    """A recipe whose source sits in ``tmp`` (so its CHANGELOG.md is ``tmp/CHANGELOG.md``)."""
    if changelog:
        (tmp / "CHANGELOG.md").write_text(
            "# Changelog\n\n" + "".join(f"## {v}\n\n- test release {v}\n\n" for v in ("0.2.0", "0.1.0")),
            encoding="utf-8",
        )
    data: dict[str, Any] = {
        "name": "bg-test",
        "version": version,
        "n": 60,
        "description": "Test release.",
        "card": {"pretty_name": "benchgen test", "repo_id": "acme/bg-test"},
        "release": {"near_dup": {"threshold": 0.7}},
    }
    data.update(kw)
    return Recipe(**data, source=str(tmp / "recipe.yaml"))


def make_meta() -> dict[str, Any]:
    return {
        "generator": "offline",
        "judge": "offline",
        "reformulator": "offline",
        "judge_config": {"e_recall_min": 0.9, "n_recall_min": 0.9, "soft_fail_min": 0.5},
        "prompt_hashes": {"generator": "a" * 64, "judge": "b" * 64},
        "taxonomy_hash": "c" * 64,
        "seed": 13,
        "n_sampled": 80,
        "counts": {"pass": 50, "soft_fail": 10, "hard_fail": 15, "unparsed": 5},
        "reject_reasons": {
            "e_recall_below_threshold": 12,
            "unparsed_json": 5,
            "n_recall_below_threshold": 13,
        },
        "audit": {},
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "cost": {"usd": 0.0},
        "started_at": "2025-01-01T00:00:00Z",
        "finished_at": "2025-01-01T00:05:00Z",
        "benchgen_version": "0.1.0",
    }


def test_fixture_rows_are_sample_rows() -> None:
    rows = make_rows()
    assert len(rows["general"]) == 50 and len(rows["hard_mining"]) == 10
    assert rows["general"][1]["group"] == rows["general"][0]["group"]
    assert any(d["attribute"] == "model_leaked" for d in rows["general"][3]["non_essential"])
