"""`benchgen push` through the real huggingface_hub client against a local scripted Hub server.

The server speaks the endpoints the installed client uses for create_repo, list_repo_refs,
create_commit (validate-yaml, preupload, NDJSON commit) and create_tag, and records every call.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_release_fixtures import make_meta, make_recipe, make_rows

from benchgen.errors import ReleaseError
from benchgen.release import build_release
from benchgen.release.cli import push
from benchgen.release.hub import push_release

COMMIT = "1234567890abcdef1234567890abcdef12345678"


class ScriptedHub:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.tags: list[str] = []
        self.committed: dict[str, bytes] = {}
        self.commit_header: dict[str, Any] = {}
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _reply(self, status: int, payload: Any) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _handle(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                path = self.path.split("?")[0]
                hub.calls.append(
                    {
                        "method": self.command,
                        "path": path,
                        "auth": self.headers.get("Authorization"),
                        "content_type": self.headers.get("Content-Type"),
                        "body": raw,
                    }
                )
                base = f"http://{self.headers['Host']}"
                if path == "/api/repos/create":
                    req = json.loads(raw)
                    return self._reply(200, {"url": f"{base}/datasets/{req['organization']}/{req['name']}"})
                if path == "/api/validate-yaml":
                    return self._reply(200, {})
                if path.endswith("/refs"):
                    return self._reply(
                        200,
                        {
                            "branches": [
                                {"name": "main", "ref": "refs/heads/main", "targetCommit": "0" * 40}
                            ],
                            "converts": [],
                            "tags": [
                                {"name": t, "ref": f"refs/tags/{t}", "targetCommit": COMMIT} for t in hub.tags
                            ],
                        },
                    )
                if "/preupload/" in path:
                    files = json.loads(raw)["files"]
                    return self._reply(
                        200,
                        {
                            "files": [
                                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                for f in files
                            ]
                        },
                    )
                if "/commit/" in path:
                    for line in raw.splitlines():
                        item = json.loads(line)
                        if item["key"] == "header":
                            hub.commit_header = item["value"]
                        elif item["key"] == "file":
                            v = item["value"]
                            assert v["encoding"] == "base64"
                            hub.committed[v["path"]] = base64.b64decode(v["content"])
                    repo = path.split("/api/datasets/")[1].split("/commit/")[0]
                    return self._reply(
                        200,
                        {
                            "commitUrl": f"{base}/datasets/{repo}/commit/{COMMIT}",
                            "commitOid": COMMIT,
                            "pullRequestUrl": None,
                        },
                    )
                if "/tag/" in path:
                    hub.tags.append(json.loads(raw)["tag"])
                    return self._reply(200, {})
                return self._reply(404, {"error": f"unscripted {self.command} {path}"})

            do_GET = do_POST = do_PUT = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def paths(self) -> list[str]:
        return [f"{c['method']} {c['path']}" for c in self.calls]


@pytest.fixture()
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedHub]:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the test suite runs with HF_HUB_OFFLINE=1
    h = ScriptedHub()
    h.thread.start()
    yield h
    h.server.shutdown()
    h.server.server_close()


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hub")
    res = build_release(
        make_rows(20, 4),
        make_recipe(tmp, release={"figures": False}),
        make_meta(),
        out_root=tmp / "out",
        quiet=True,
    )
    return res.path


def test_push_one_commit_then_tag_through_real_client(
    hub: ScriptedHub, release_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    out = CliRunner().invoke(
        push, [str(release_dir), "--repo", "acme/bg-test", "--private", "--endpoint", hub.url]
    )
    assert out.exit_code == 0, out.output
    p = hub.paths()
    assert p[0] == "POST /api/repos/create"
    assert "GET /api/datasets/acme/bg-test/refs" in p
    assert "POST /api/validate-yaml" in p  # the client has the Hub validate README.md
    assert any(x.startswith("POST /api/datasets/acme/bg-test/preupload/") for x in p)
    commits = [x for x in p if x.startswith("POST /api/datasets/acme/bg-test/commit/")]
    assert len(commits) == 1
    assert p[-1] == f"POST /api/datasets/acme/bg-test/tag/{COMMIT}"
    assert json.loads(hub.calls[0]["body"]) == {
        "name": "bg-test",
        "organization": "acme",
        "visibility": "private",
        "type": "dataset",
    }
    assert all(c["auth"] == "Bearer hf_test_token" for c in hub.calls)
    assert next(c for c in hub.calls if "/commit/" in c["path"])["content_type"] == "application/x-ndjson"
    # every release file, byte for byte, in that one commit
    local = {
        p.relative_to(release_dir).as_posix(): p.read_bytes() for p in release_dir.rglob("*") if p.is_file()
    }
    assert hub.committed == local
    assert hub.commit_header["summary"] == "Release bg-test 0.1.0"
    assert hub.tags == ["v0.1.0"]
    assert 'load_dataset("acme/bg-test", "general", revision="v0.1.0")' in out.output


def test_existing_tag_refused_before_commit(
    hub: ScriptedHub, release_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.tags.append("v0.1.0")
    with pytest.raises(ReleaseError, match="tag v0.1.0 already exists"):
        push_release(release_dir, "acme/bg-test", endpoint=hub.url, token="hf_x")
    assert not any("/commit/" in c["path"] for c in hub.calls)


def test_missing_token_fails_before_any_request(
    hub: ScriptedHub, release_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    out = CliRunner().invoke(push, [str(release_dir), "--repo", "acme/bg-test", "--endpoint", hub.url])
    assert out.exit_code != 0 and "HF_TOKEN is not set" in out.output
    assert hub.calls == []


def test_dry_run_prints_operations_without_network(
    hub: ScriptedHub, release_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    out = CliRunner().invoke(
        push, [str(release_dir), "--repo", "acme/bg-test", "--dry-run", "--endpoint", hub.url]
    )
    assert out.exit_code == 0, out.output
    assert "create_repo acme/bg-test (dataset, public" in out.output
    assert "add data/general/train-00000-of-00001.parquet" in out.output
    assert "add MANIFEST.json" in out.output and "create_tag acme/bg-test v0.1.0" in out.output
    assert 'revision="v0.1.0"' in out.output
    assert hub.calls == []


def test_push_refuses_tampered_release_and_bad_repo(tmp_path: Path, release_dir: Path) -> None:
    import shutil

    copy = tmp_path / "0.1.0"
    shutil.copytree(release_dir, copy)
    (copy / "DATASHEET.md").write_text("edited by hand", encoding="utf-8")
    with pytest.raises(ReleaseError, match="DATASHEET.md"):
        push_release(copy, "acme/bg-test", dry_run=True)
    with pytest.raises(ReleaseError, match="not a Hub repo id"):
        push_release(release_dir, "no-slash", dry_run=True)
