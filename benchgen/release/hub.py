"""``benchgen push``: publish a verified release directory to the Hugging Face Hub in one commit + a tag.

Uses the real ``huggingface_hub`` client: ``create_repo(repo_type="dataset", exist_ok=True)``, one
``create_commit`` with a ``CommitOperationAdd`` per file (the client validates README.md through the
Hub's /api/validate-yaml, asks /preupload for each file's upload mode, uploads LFS/Xet blobs if the
Hub asks for them, then POSTs the NDJSON commit), and ``create_tag("v<version>")`` on that commit.
``endpoint`` (or ``HF_ENDPOINT``) points the client elsewhere, e.g. at a local test server.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchgen.errors import ReleaseError
from benchgen.release.manifest import MANIFEST, list_files
from benchgen.release.verify import verify_release

_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


@dataclass
class PushPlan:
    repo_id: str
    version: str
    tag: str
    private: bool
    files: list[tuple[str, int]]  # (path in repo, bytes)
    commit_message: str
    endpoint: str | None = None
    commit_oid: str | None = None
    commit_url: str | None = None
    dry_run: bool = False
    operations: list[str] = field(default_factory=list)

    @property
    def load_line(self) -> str:
        return f'load_dataset("{self.repo_id}", "general", revision="{self.tag}")'


def plan_push(
    release_dir: Path, repo_id: str, *, private: bool = False, endpoint: str | None = None
) -> PushPlan:
    """Check the release (manifest checksums) and describe the push, without any network."""
    if not _REPO.match(repo_id or ""):
        raise ReleaseError(
            f"--repo {repo_id!r} is not a Hub repo id", hint="use ORG/NAME, e.g. acme/benchgen-general"
        )
    release_dir = Path(release_dir)
    verify_release(release_dir)  # never publish a release that fails its own manifest
    manifest = json.loads((release_dir / MANIFEST).read_text(encoding="utf-8"))
    version = str(manifest.get("version") or release_dir.name)
    name = str(manifest.get("name") or release_dir.parent.name)
    files = [(rel, (release_dir / rel).stat().st_size) for rel in [*list_files(release_dir), MANIFEST]]
    tag = f"v{version}"
    plan = PushPlan(
        repo_id=repo_id,
        version=version,
        tag=tag,
        private=private,
        files=files,
        commit_message=f"Release {name} {version}",
        endpoint=endpoint,
    )
    kind = "private" if private else "public"
    plan.operations = [f"create_repo {repo_id} (dataset, {kind}, exist_ok=True)"]
    plan.operations += [f"  add {rel} ({size} bytes)" for rel, size in files]
    plan.operations.insert(1, f"create_commit {repo_id}: '{plan.commit_message}' with {len(files)} file(s):")
    plan.operations.append(f"create_tag {repo_id} {tag} on that commit")
    return plan


def push_release(
    release_dir: Path,
    repo_id: str,
    *,
    private: bool = False,
    dry_run: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
) -> PushPlan:
    """Push ``release_dir`` to ``repo_id`` (a dataset repo) as one commit tagged ``v<version>``."""
    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or None
    token = token or os.environ.get("HF_TOKEN") or None
    if not dry_run and not token:
        raise ReleaseError(
            "HF_TOKEN is not set: pushing to the Hub needs a write token",
            hint="export HF_TOKEN=hf_... (a token with write access to the target org), or use --dry-run",
        )
    plan = plan_push(release_dir, repo_id, private=private, endpoint=endpoint)
    plan.dry_run = dry_run
    if dry_run:
        return plan

    from huggingface_hub import CommitOperationAdd, HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError

    if constants.is_offline_mode():
        raise ReleaseError(
            "HF_HUB_OFFLINE is set, so huggingface_hub refuses every request",
            hint="unset HF_HUB_OFFLINE (it is set by `make dataset` / `make test`) to push",
        )
    root = Path(release_dir)
    api = HfApi(endpoint=endpoint, token=token)
    ops = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(root / rel)) for rel, _ in plan.files]
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        # Published versions are immutable: refuse before committing anything if the tag exists.
        refs = api.list_repo_refs(repo_id, repo_type="dataset")
        if any(t.name == plan.tag for t in refs.tags):
            raise ReleaseError(
                f"tag {plan.tag} already exists on {repo_id}: published versions are immutable",
                hint="bump the recipe version, add a CHANGELOG entry, rebuild and push that",
            )
        info: Any = api.create_commit(
            repo_id,
            operations=ops,
            commit_message=plan.commit_message,
            commit_description=f"benchgen release {plan.version}",
            repo_type="dataset",
        )
    except HfHubHTTPError as e:
        raise ReleaseError(f"push to {repo_id} failed: {e}") from None
    except ValueError as e:  # raised by the client when the Hub rejects the card's YAML
        raise ReleaseError(f"the Hub rejected the release of {repo_id}: {e}") from None
    plan.commit_oid = info.oid
    plan.commit_url = info.commit_url
    try:
        api.create_tag(
            repo_id,
            tag=plan.tag,
            revision=info.oid,
            repo_type="dataset",
            tag_message=f"{plan.commit_message} ({plan.version})",
        )
    except HfHubHTTPError as e:
        status = getattr(getattr(e, "response", None), "status_code", None)
        if status == 409:
            raise ReleaseError(
                f"tag {plan.tag} appeared on {repo_id} during the push: the files were committed as "
                f"{info.oid} but not tagged",
                hint="bump the recipe version, rebuild and push again",
            ) from None
        raise ReleaseError(f"tagging {repo_id} {plan.tag} failed: {e}") from None
    return plan
