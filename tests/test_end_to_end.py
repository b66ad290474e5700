"""Offline end-to-end: recipe -> run -> release folder that `datasets.load_dataset` reads."""

import hashlib
import json

import pytest

from benchgen.pipeline import run_recipe
from benchgen.recipe import Recipe, load_recipe

COLUMNS = {
    "id",
    "query",
    "domain",
    "task_type",
    "subject",
    "style",
    "tone",
    "policy",
    "confusion",
    "essential",
    "non_essential",
    "judge",
    "provenance",
}


def _recipe(tmp_dir, **kw) -> Recipe:
    changelog = tmp_dir / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## 0.0.1\n\n- test release\n")
    base = load_recipe("default").model_dump()
    base.update(
        {
            "name": "e2e-test",
            "version": "0.0.1",
            "n": 160,
            "seed": 3,
            "release": {"changelog": str(changelog)},
        },
        **kw,
    )
    return Recipe(**base)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    res = run_recipe(_recipe(root), run_dir=root / "run", out_root=root / "build", quiet=True)
    return root, res


def test_release_loads_with_datasets(built):
    from datasets import load_dataset

    _, res = built
    assert res.release_dir is not None and res.release_dir.is_dir()
    ds = load_dataset(str(res.release_dir), "general")
    assert set(ds) == {"train", "validation", "test"}
    assert set(ds["train"].column_names) >= COLUMNS
    row = ds["train"][0]
    assert row["essential"] == [] or {"attribute", "family", "subject", "value", "span"} <= set(
        row["essential"][0]
    )
    for item in row["non_essential"]:
        assert item["span"] in row["query"] or item["attribute"] == "model_leaked"
    assert row["judge"]["verdict"] == "pass"
    assert {"generator", "judge", "template_hash", "seed", "benchgen_version"} <= set(row["provenance"])
    total = sum(len(ds[s]) for s in ds)
    passed = res.report["counts"]["pass"]
    assert 0.9 * passed <= total <= passed  # only near-duplicates may be removed


def _digest(folder):
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*.parquet")):
        h.update(p.read_bytes())
    return h.hexdigest()


def test_rerun_is_identical_and_resumes(built, tmp_path):
    root, res = built
    first = _digest(res.release_dir)
    # same recipe into a fresh run dir + fresh build root: identical parquet content
    res2 = run_recipe(_recipe(tmp_path), run_dir=tmp_path / "run", out_root=tmp_path / "build", quiet=True)
    assert _digest(res2.release_dir) == first
    # rerun on the existing run dir: nothing regenerated, release unchanged (no-op)
    drafts = (root / "run" / "drafts.jsonl").read_bytes()
    res3 = run_recipe(_recipe(root), run_dir=root / "run", out_root=root / "build", quiet=True)
    assert (root / "run" / "drafts.jsonl").read_bytes() == drafts
    assert _digest(res3.release_dir) == first


def test_resume_after_partial_stage(tmp_path):
    r = _recipe(tmp_path, n=40)
    full = run_recipe(r, run_dir=tmp_path / "a", quiet=True, do_release=False)
    # simulate a crash: keep half the drafts plus a torn line, drop verdicts
    lines = (tmp_path / "a" / "drafts.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "b").mkdir()
    for f in ("run.json", "skeletons.jsonl"):
        (tmp_path / "b" / f).write_bytes((tmp_path / "a" / f).read_bytes())
    (tmp_path / "b" / "drafts.jsonl").write_text("".join(lines[:20]) + lines[20][:30])
    resumed = run_recipe(r, run_dir=tmp_path / "b", quiet=True, do_release=False)
    assert resumed.report == full.report
    ids = [json.loads(x)["id"] for x in (tmp_path / "b" / "drafts.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == len(lines)
