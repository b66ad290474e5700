import json

from click.testing import CliRunner

from benchgen.cli import main


def test_help_on_every_command():
    r = CliRunner()
    res = r.invoke(main, ["--help"])
    assert res.exit_code == 0
    for name in main.commands:
        sub = r.invoke(main, [name, "--help"])
        assert sub.exit_code == 0, (name, sub.output)
        assert "Usage:" in sub.output


def test_sample_generate_judge_chain(tmp_path):
    r = CliRunner()
    sk = tmp_path / "sk.jsonl"
    res = r.invoke(main, ["sample", "--n", "30", "--seed", "5", "--out", str(sk)])
    assert res.exit_code == 0, res.output
    assert "max/min count ratio" in res.output
    lines = sk.read_text().splitlines()
    assert len(lines) >= 30
    pq = tmp_path / "sk.parquet"
    assert r.invoke(main, ["sample", "--n", "30", "--seed", "5", "--out", str(pq)]).exit_code == 0
    import pyarrow.parquet as papq

    assert papq.read_table(pq).num_rows == len(lines)
    dr = tmp_path / "drafts.jsonl"
    res = r.invoke(main, ["generate", "--in", str(sk), "--out", str(dr), "--quiet"])
    assert res.exit_code == 0, res.output
    ve = tmp_path / "verdicts.jsonl"
    res = r.invoke(main, ["judge", "--in", str(dr), "--out", str(ve), "--quiet"])
    assert res.exit_code == 0, res.output
    verdicts = [json.loads(x) for x in ve.read_text().splitlines()]
    assert len(verdicts) == len(lines)
    assert {v["verdict"] for v in verdicts} <= {"pass", "soft_fail", "hard_fail", "unparsed"}


def test_clear_errors_without_traceback(tmp_path):
    r = CliRunner()
    res = r.invoke(
        main, ["generate", "--in", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o.jsonl")]
    )
    assert res.exit_code != 0
    assert "does not exist" in res.output and "Traceback" not in res.output
    res = r.invoke(main, ["run", "no-such-recipe"])
    assert res.exit_code == 2 and "not found" in res.output
    res = r.invoke(
        main,
        [
            "run",
            "default",
            "--generator",
            "bogus:thing",
            "--n",
            "2",
            "--no-release",
            "--run-dir",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code == 2 and "unknown provider 'bogus'" in res.output


def test_taxonomy_command():
    res = CliRunner().invoke(main, ["taxonomy", "--json"])
    assert res.exit_code == 0
    assert json.loads(res.output)["attributes"] == 30
