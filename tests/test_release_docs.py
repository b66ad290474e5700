"""Generated documentation: dataset card, Croissant, datasheet, figures, manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_release_fixtures import make_meta, make_recipe, make_rows

from benchgen.errors import ReleaseError
from benchgen.release import build_release
from benchgen.release.card import validate_card
from benchgen.release.manifest import sha256_file


@pytest.fixture(scope="module")
def rel(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("docs")
    meta = make_meta()
    meta["audit"] = {
        "acceptance_by": {
            "domain": {
                "health": {"n": 10, "accepted": 7, "rate": 0.7},
                "finance": {"n": 8, "accepted": 8, "rate": 1.0},
            },
            "task_type": {"advice": {"n": 18, "accepted": 15, "rate": 15 / 18}},
        },
        "balance": {"domain": {"max_min_ratio": 1.25, "min": 8, "max": 10}},
    }
    return build_release(make_rows(), make_recipe(tmp), meta, out_root=tmp / "out", quiet=True)


def test_card_validates_and_declares_configs(rel) -> None:
    from huggingface_hub import DatasetCard

    text = (rel.path / "README.md").read_text(encoding="utf-8")
    data = validate_card(text)
    card = DatasetCard(text)
    assert card.data.license == "cc-by-4.0" and card.data.size_categories == ["n<1K"]
    assert card.data.pretty_name == "benchgen test"
    cfgs = {c["config_name"]: c for c in data["configs"]}
    assert set(cfgs) == {"general", "hard_mining"} and cfgs["general"].get("default") is True
    assert cfgs["general"]["data_files"][0] == {"split": "train", "path": "data/general/train-*"}
    info = {i["config_name"]: i for i in data["dataset_info"]}
    assert {s["name"]: s["num_examples"] for s in info["general"]["splits"]} == rel.counts["general"]
    for needle in (
        'load_dataset("acme/bg-test", "general", revision="v0.1.0")',
        "## Schema",
        "e_recall_min",
        "a" * 64,
        "## Limitations",
        "@article{nissenbaum2004privacy",
        "CAPID",
        "PAPILLON",
        "PEEP",
        "DelegateCI-Bench",
        "[TO VERIFY]",
        "figures/coverage.png",
        "figures/attributes.png",
        "figures/acceptance.png",
        "## Changes in this version",
        "test release 0.1.0",
    ):
        assert needle in text, needle


def test_card_validator_rejects_broken_cards(rel) -> None:
    text = (rel.path / "README.md").read_text(encoding="utf-8")
    with pytest.raises(ReleaseError, match="license"):
        validate_card(text.replace("license: cc-by-4.0", "license: my-own-licence"))
    with pytest.raises(ReleaseError, match="size_categories"):
        validate_card(text.replace("- n<1K", "- tiny"))
    with pytest.raises(ReleaseError, match="pretty_name"):
        validate_card(text.replace("pretty_name: benchgen test\n", ""))
    with pytest.raises(ReleaseError, match="does not parse"):
        validate_card(text.replace("license: cc-by-4.0", "license: [unclosed"))


def test_croissant_validates_and_reads_records_for_every_config(rel) -> None:
    import mlcroissant as mlc

    path = rel.path / "croissant.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert doc["rai:hasSyntheticData"] is True
    assert any(t == "generator: offline" for t in doc["rai:machineAnnotationTools"])
    for key in (
        "rai:personalSensitiveInformation",
        "rai:dataCollection",
        "rai:dataBiases",
        "rai:dataLimitations",
        "rai:dataUseCases",
    ):
        assert doc[key], key
    ds = mlc.Dataset(jsonld=str(path))
    assert not ds.metadata.ctx.issues.errors
    assert ds.metadata.machine_annotation_tools and ds.metadata.data_use_cases
    for cfg in ("general", "hard_mining"):
        recs = list(ds.records(record_set=cfg))
        assert len(recs) == sum(rel.counts[cfg].values())
        splits = {r[f"{cfg}/split"].decode() for r in recs}
        assert splits == {s for s, n in rel.counts[cfg].items() if n}
        r = recs[0]
        assert r[f"{cfg}/essential"][0][f"{cfg}/essential/span"].decode() in r[f"{cfg}/query"].decode()
        assert r[f"{cfg}/provenance"][f"{cfg}/provenance/seed"] == 13


def test_datasheet_sections_metadata_and_human_questions(rel) -> None:
    text = (rel.path / "DATASHEET.md").read_text(encoding="utf-8")
    for i, sec in enumerate(
        [
            "Motivation",
            "Composition",
            "Collection process",
            "Preprocessing / cleaning / labelling",
            "Uses",
            "Distribution",
            "Maintenance",
        ],
        1,
    ):
        assert f"## {i}. {sec}" in text
    assert "`offline`" in text and "b" * 64 in text  # models and prompt hashes
    assert "n_recall_below_threshold" in text and "| health | 10 | 7 | 0.700 |" in text  # acceptance + audit
    assert '"usd": 0.0' in text  # cost
    assert "2025-01-01" not in text  # run timestamps never reach release files
    assert text.count("> **[HUMAN INPUT NEEDED]**") == len(rel.human_questions) > 3
    assert any("funded" in q for q in rel.human_questions)


def test_card_answers_replace_human_markers(tmp_path: Path) -> None:
    recipe = make_recipe(
        tmp_path,
        card={
            "pretty_name": "x",
            "authors": ["Ada Lovelace"],
            "funding": "Nobody",
            "contact": "ada@example.org",
            "homepage": "https://example.org",
        },
    )
    res = build_release(make_rows(12, 0), recipe, make_meta(), out_root=tmp_path / "out", quiet=True)
    assert not any("funded" in q or "created the dataset" in q for q in res.human_questions)
    text = (res.path / "DATASHEET.md").read_text(encoding="utf-8")
    assert "Ada Lovelace" in text and "ada@example.org" in text


def test_figures_are_png_and_deterministic(rel, tmp_path: Path) -> None:
    from PIL import Image

    for name in ("coverage", "attributes", "acceptance"):
        p = rel.path / "figures" / f"{name}.png"
        img = Image.open(p)
        assert img.format == "PNG" and img.size[0] > 200
        assert "Software" not in img.info
    meta = make_meta()
    meta["audit"] = json.loads(
        json.dumps({"acceptance_by": {"domain": {"health": {"n": 10, "accepted": 7, "rate": 0.7}}}})
    )
    a = build_release(make_rows(), make_recipe(tmp_path), meta, out_root=tmp_path / "a", quiet=True)
    b = build_release(make_rows(), make_recipe(tmp_path), meta, out_root=tmp_path / "b", quiet=True)
    for name in ("coverage", "attributes", "acceptance"):
        assert sha256_file(a.path / f"figures/{name}.png") == sha256_file(b.path / f"figures/{name}.png")


def test_manifest_lists_every_file_and_run_facts(rel) -> None:
    m = json.loads((rel.path / "MANIFEST.json").read_text(encoding="utf-8"))
    on_disk = sorted(p.relative_to(rel.path).as_posix() for p in rel.path.rglob("*") if p.is_file())
    assert sorted([*m["files"], "MANIFEST.json"]) == on_disk
    for rel_path, entry in m["files"].items():
        assert entry["sha256"] == sha256_file(rel.path / rel_path)
        assert entry["bytes"] == (rel.path / rel_path).stat().st_size
    assert m["seed"] == 13 and m["models"]["judge"] == "offline" and m["benchgen_version"] == "0.1.0"
    assert m["counts"] == rel.counts and m["cost"] == {"usd": 0.0} and len(m["config_hash"]) == 64
    assert "started_at" not in json.dumps(m)
    assert (rel.path / "MANIFEST.json").read_text(encoding="utf-8").endswith("}\n")
