"""build_release end to end: files, load_dataset, immutability, changelog, empty configs, verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_release_fixtures import make_meta, make_recipe, make_row, make_rows

from benchgen.errors import ReleaseError
from benchgen.release import build_release, check_release, verify_release
from benchgen.release.schema import hf_features

SPLITS = ("train", "validation", "test")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("rel")
    recipe = make_recipe(tmp)
    result = build_release(make_rows(), recipe, make_meta(), out_root=tmp / "out", quiet=True)
    return tmp, recipe, result


def test_layout_and_counts(built) -> None:
    _, _, res = built
    root = res.path
    assert root == res.path and root.parts[-2:] == ("bg-test", "0.1.0")
    for cfg in ("general", "hard_mining"):
        for s in SPLITS:
            assert (root / "data" / cfg / f"{s}-00000-of-00001.parquet").is_file()
    assert {
        "README.md",
        "MANIFEST.json",
        "DATASHEET.md",
        "croissant.json",
        "figures/coverage.png",
        "figures/attributes.png",
        "figures/acceptance.png",
    } <= set(res.files)
    assert res.total == 60 - res.near_duplicates_removed
    assert sum(res.counts["general"].values()) + res.near_duplicates_removed >= 50
    # all three splits populated for the 50-row config, roughly at 0.8 / 0.1 / 0.1
    g = res.counts["general"]
    assert g["train"] >= 35 and g["validation"] >= 3 and g["test"] >= 3


def test_load_dataset_every_config_and_split(built) -> None:
    import datasets

    _, _, res = built
    want = hf_features()
    for cfg in ("general", "hard_mining"):
        for s in SPLITS:
            ds = datasets.load_dataset(str(res.path), cfg, split=s)
            assert ds.features == want, (cfg, s)
            assert len(ds) == res.counts[cfg][s]
    ds = datasets.load_dataset(str(res.path), "general", split="train")
    row = ds[0]
    assert row["essential"] and set(row["essential"][0]) == {
        "attribute",
        "family",
        "subject",
        "relation",
        "value",
        "span",
    }
    assert row["provenance"]["generator"] == "offline"
    assert all(d["span"] in r["query"] for r in ds for d in r["essential"])


def test_groups_never_straddle_splits(built) -> None:
    import pyarrow.parquet as pq

    _, _, res = built
    where: dict[str, set[str]] = {}
    for f in res.path.glob("data/*/*.parquet"):
        split = f.name.split("-")[0]
        for g in pq.read_table(f, columns=["group"]).column("group").to_pylist():
            where.setdefault(g, set()).add(split)
    assert where and all(len(v) == 1 for v in where.values())
    assert any(len(where) for _ in [0])


def test_verify_passes_then_names_tampered_missing_and_extra_files(built, tmp_path: Path) -> None:
    import shutil

    _, _, res = built
    copy = tmp_path / "copy"
    shutil.copytree(res.path, copy)
    assert verify_release(copy) == len(json.loads((copy / "MANIFEST.json").read_text())["files"])
    (copy / "README.md").write_text("tampered", encoding="utf-8")
    (copy / "data/general/test-00000-of-00001.parquet").unlink()
    (copy / "notes.txt").write_text("x", encoding="utf-8")
    problems = check_release(copy)
    assert any(p.startswith("README.md: size") for p in problems)
    assert any("test-00000-of-00001.parquet: missing" in p for p in problems)
    assert any(p.startswith("notes.txt: extra") for p in problems)
    with pytest.raises(ReleaseError, match="README.md"):
        verify_release(copy)


def test_rebuild_is_byte_identical_noop(built) -> None:
    tmp, recipe, res = built
    before = {p: p.stat().st_mtime_ns for p in res.path.rglob("*")}
    again = build_release(
        make_rows(),
        recipe,
        make_meta() | {"started_at": "2030-01-01T00:00:00Z"},
        out_root=tmp / "out",
        quiet=True,
    )
    assert again.unchanged and again.counts == res.counts
    assert {p: p.stat().st_mtime_ns for p in res.path.rglob("*")} == before
    assert not [p for p in res.path.parent.iterdir() if p.name.startswith(".")]  # temp dirs cleaned


def test_input_order_does_not_matter(tmp_path: Path) -> None:
    rows = make_rows()
    a = build_release(rows, make_recipe(tmp_path), make_meta(), out_root=tmp_path / "a", quiet=True)
    shuffled = {k: list(reversed(v)) for k, v in reversed(list(rows.items()))}
    b = build_release(shuffled, make_recipe(tmp_path), make_meta(), out_root=tmp_path / "b", quiet=True)
    assert (a.path / "MANIFEST.json").read_bytes() == (b.path / "MANIFEST.json").read_bytes()


def test_changed_content_refused_unless_force(tmp_path: Path) -> None:
    recipe = make_recipe(tmp_path)
    out = tmp_path / "out"
    first = build_release(make_rows(), recipe, make_meta(), out_root=out, quiet=True)
    manifest = (first.path / "MANIFEST.json").read_bytes()
    rows = make_rows()
    rows["general"][0] = make_row(0, query="A completely different query about my 34 years and Lyon.")
    with pytest.raises(ReleaseError, match=r"already exists .*different content.*immutable") as e:
        build_release(rows, recipe, make_meta(), out_root=out, quiet=True)
    assert "bump `version:`" in str(e.value)
    assert (first.path / "MANIFEST.json").read_bytes() == manifest  # untouched
    forced = build_release(rows, recipe, make_meta(), out_root=out, force=True, quiet=True)
    assert forced.replaced and (first.path / "MANIFEST.json").read_bytes() != manifest
    assert verify_release(forced.path) > 0
    assert not [p for p in forced.path.parent.iterdir() if p.name.startswith(".")]


def test_missing_changelog_entry_says_what_to_add(tmp_path: Path) -> None:
    recipe = make_recipe(tmp_path, version="0.3.0")
    with pytest.raises(ReleaseError, match="no entry for version 0.3.0") as e:
        build_release(make_rows(), recipe, make_meta(), out_root=tmp_path / "out", quiet=True)
    assert "## 0.3.0" in (e.value.hint or "")
    assert not (tmp_path / "out" / "bg-test" / "0.3.0").exists()
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(ReleaseError, match="no changelog at"):
        build_release(make_rows(), make_recipe(bare, changelog=False), make_meta(), out_root=bare, quiet=True)


def test_empty_config_and_missing_meta_keys(tmp_path: Path) -> None:
    import datasets

    rows = {"general": make_rows()["general"][:12], "hard_mining": []}
    res = build_release(rows, make_recipe(tmp_path), {}, out_root=tmp_path / "out", quiet=True)
    assert res.counts["hard_mining"] == {"train": 0, "validation": 0, "test": 0}
    assert not (res.path / "data" / "hard_mining").exists()
    card = (res.path / "README.md").read_text(encoding="utf-8")
    assert "config_name: hard_mining" not in card and "Empty in this release" in card
    for s in SPLITS:
        if res.counts["general"][s]:
            ds = datasets.load_dataset(str(res.path), "general", split=s)
            assert len(ds) == res.counts["general"][s] and ds.features == hf_features()
    verify_release(res.path)
    # a config missing from rows altogether is treated the same way
    res2 = build_release(
        {"general": rows["general"]}, make_recipe(tmp_path), {}, out_root=tmp_path / "o2", quiet=True
    )
    assert res2.counts["hard_mining"]["train"] == 0
    with pytest.raises(ReleaseError, match="nothing to release"):
        build_release({}, make_recipe(tmp_path), {}, out_root=tmp_path / "o3", quiet=True)


def test_rows_for_unlisted_config_refused(tmp_path: Path) -> None:
    rows = make_rows() | {"wild": [make_row(5000)]}
    with pytest.raises(ReleaseError, match="wild"):
        build_release(rows, make_recipe(tmp_path), make_meta(), out_root=tmp_path / "out", quiet=True)


def test_sharding_past_max_size(tmp_path: Path) -> None:
    import datasets

    recipe = make_recipe(tmp_path, release={"max_shard_bytes": 8000})
    res = build_release(make_rows(), recipe, make_meta(), out_root=tmp_path / "out", quiet=True)
    shards = sorted(p.name for p in (res.path / "data/general").glob("train-*.parquet"))
    assert len(shards) > 1 and shards[0].endswith(f"-of-{len(shards):05d}.parquet")
    ds = datasets.load_dataset(str(res.path), "general", split="train")
    assert len(ds) == res.counts["general"]["train"]


def test_quiet_silences_status_lines(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    rows = {"general": make_rows(12, 0)["general"]}
    build_release(
        rows, make_recipe(tmp_path, release={"figures": False}), {}, out_root=tmp_path / "q", quiet=True
    )
    assert capfd.readouterr().err == ""
    build_release(
        rows, make_recipe(tmp_path, release={"figures": False}), {}, out_root=tmp_path / "v", quiet=False
    )
    err = capfd.readouterr().err
    assert "near-duplicate check: 12 rows checked" in err and "release written to" in err
