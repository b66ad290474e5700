import shutil

import pytest
import yaml

from benchgen.errors import ConfigError
from benchgen.taxonomy import load_taxonomy


def test_counts(tax):
    assert len(tax.domains) == 11
    assert len(tax.tasks) == 20
    assert len(tax.attributes) == 30
    assert len(tax.families) == 6
    assert len(tax.subjects) == 5
    assert len(tax.styles) == 4
    assert len(tax.tones) == 6
    assert all(len(a.values) >= 20 for a in tax.attributes)


def test_named_policies(tax):
    pol = {t.name: t.policy for t in tax.tasks}
    for name in (
        "Code Generation",
        "Translation",
        "Summarisation",
        "Multiple-Choice QA",
        "Information Retrieval",
    ):
        assert pol[name] == "none", name
    for name in ("Personal Advice", "Problem Solving"):
        assert pol[name] == "domain", name
    for name in (
        "Communication Generation",
        "Story & Script Generation",
        "Song & Poem Generation",
        "Character Description Generation",
    ):
        assert pol[name] == "addressed-person", name
        assert tax.policy["addressed-person"].forced == ["name"]
        assert tax.policy["addressed-person"].max_drawn == 1
    assert all(t.rationale.strip() for t in tax.tasks)


def _copy(tmp_path):
    dst = tmp_path / "samplers"
    shutil.copytree(load_taxonomy.__globals__["asset_dir"]("samplers"), dst)
    return dst


def test_error_names_file_and_field(tmp_path):
    d = _copy(tmp_path)
    data = yaml.safe_load((d / "attributes.yaml").read_text())
    data["attributes"][2]["values"] = data["attributes"][2]["values"][:3]
    (d / "attributes.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as ei:
        load_taxonomy(d)
    msg = str(ei.value)
    assert "attributes.yaml" in msg and "attributes.2.values" in msg


def test_unknown_policy_reference(tmp_path):
    d = _copy(tmp_path)
    data = yaml.safe_load((d / "tasks.yaml").read_text())
    data["tasks"][0]["policy"] = "nope"
    (d / "tasks.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="unknown policy 'nope'"):
        load_taxonomy(d)


def test_malformed_yaml_and_extra_field(tmp_path):
    d = _copy(tmp_path)
    (d / "styles.yaml").write_text("styles: [unclosed\n")
    with pytest.raises(ConfigError, match=r"styles.yaml: not valid YAML"):
        load_taxonomy(d)
    d2 = _copy(tmp_path / "b")
    data = yaml.safe_load((d2 / "domains.yaml").read_text())
    data["domains"][0]["colour"] = "red"
    (d2 / "domains.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"domains.0.colour"):
        load_taxonomy(d2)
