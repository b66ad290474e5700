"""The `release` and `verify` commands (click), and agreement with the pipeline's own release."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchgen.release import build_release
from benchgen.release.cli import release, verify

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pipeline_run(tmp_path_factory: pytest.TempPathFactory):
    """A small offline run of the real pipeline (which calls build_release itself)."""
    from benchgen.pipeline import run_recipe
    from benchgen.recipe import load_recipe

    tmp = tmp_path_factory.mktemp("cli")
    data = yaml.safe_load((REPO / "releases/default.yaml").read_text(encoding="utf-8"))
    data["n"] = 40
    (tmp / "small.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    shutil.copy(REPO / "releases/CHANGELOG.md", tmp / "CHANGELOG.md")
    recipe = load_recipe(tmp / "small.yaml")
    res = run_recipe(recipe, run_dir=tmp / "run", out_root=tmp / "out", quiet=True)
    return tmp, res


def test_release_command_reproduces_the_pipeline_release(pipeline_run) -> None:
    tmp, res = pipeline_run
    before = (res.release_dir / "MANIFEST.json").read_bytes()
    out = CliRunner().invoke(
        release,
        [str(tmp / "small.yaml"), "--run-dir", str(tmp / "run"), "--out", str(tmp / "out"), "--quiet"],
    )
    assert out.exit_code == 0, out.output
    assert "unchanged (identical release already present)" in out.output
    assert (res.release_dir / "MANIFEST.json").read_bytes() == before
    # human-only datasheet questions are listed at the end of the output
    tail = out.output.split("only a human can answer", 1)[1]
    assert "Who funded the creation of the dataset? (card.datasheet.funding)" in tail


def test_release_command_fresh_output_and_verify(pipeline_run, tmp_path: Path) -> None:
    tmp, res = pipeline_run
    out = CliRunner().invoke(
        release, [str(tmp / "small.yaml"), "--run-dir", str(tmp / "run"), "--out", str(tmp_path), "--quiet"]
    )
    assert out.exit_code == 0, out.output
    built = tmp_path / "benchgen-general" / "0.1.0"
    for f in built.rglob("*"):
        if f.is_file():
            assert f.read_bytes() == (res.release_dir / f.relative_to(built)).read_bytes(), f
    ok = CliRunner().invoke(verify, [str(built)])
    assert ok.exit_code == 0 and "OK:" in ok.output
    victim = next(built.glob("data/general/train-*.parquet"))
    victim.write_bytes(victim.read_bytes()[:-1] + b"X")
    bad = CliRunner().invoke(verify, [str(built)])
    assert bad.exit_code == 4
    assert f"{victim.relative_to(built).as_posix()}: sha256" in bad.output


def test_release_command_errors_are_clear(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        release, [str(REPO / "releases/default.yaml"), "--run-dir", str(tmp_path / "nope"), "--quiet"]
    )
    assert out.exit_code == 4 and "incomplete" in out.output and "benchgen run" in out.output
    missing = CliRunner().invoke(verify, [str(tmp_path)])
    assert missing.exit_code == 4 and "MANIFEST.json: missing" in missing.output


def test_default_recipe_sections_are_valid() -> None:
    from benchgen.recipe import load_recipe
    from benchgen.release.build import changelog_entry
    from benchgen.release.options import card_options, changelog_path, release_options

    rec = load_recipe(REPO / "releases/default.yaml")
    opts = release_options(rec)
    card_options(rec)
    assert "## 0.1.0" in changelog_entry(changelog_path(rec, opts), rec.version)


def test_bad_card_and_release_sections_are_config_errors(tmp_path: Path) -> None:
    from test_release_fixtures import make_meta, make_recipe, make_rows

    from benchgen.errors import ConfigError

    with pytest.raises(ConfigError, match=r"release\.near_dup\.threshold"):
        build_release(
            make_rows(),
            make_recipe(tmp_path, release={"near_dup": {"threshold": 2}}),
            make_meta(),
            out_root=tmp_path,
            quiet=True,
        )
    with pytest.raises(ConfigError, match=r"card\.datasheet"):
        build_release(
            make_rows(),
            make_recipe(tmp_path, card={"datasheet": {"nonsense": "x"}}),
            make_meta(),
            out_root=tmp_path,
            quiet=True,
        )
    with pytest.raises(ConfigError, match=r"card\.shoe_size"):
        build_release(
            make_rows(),
            make_recipe(tmp_path, card={"shoe_size": 3}),
            make_meta(),
            out_root=tmp_path,
            quiet=True,
        )
