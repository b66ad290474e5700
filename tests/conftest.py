import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"shared reference data not found at {SHARED_DATA} (expected ../shared/data beside the repo)"
        )
    return SHARED_DATA


@pytest.fixture(scope="session")
def tax():
    from benchgen.taxonomy import load_taxonomy

    return load_taxonomy()


@pytest.fixture(scope="session")
def judge_cfg():
    from benchgen.judge import load_judge_config

    return load_judge_config("default")


@pytest.fixture(scope="session")
def server():
    """One local scripted Anthropic/OpenAI server per test process (see tests/scripted_server.py)."""
    from scripted_server import ScriptedServer

    with ScriptedServer(hang_seconds=10) as srv:
        yield srv


@pytest.fixture
def srv(server, monkeypatch, tmp_path):
    """The server with its counters reset, fake keys set and a per-test response cache."""
    server.reset()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("BENCHGEN_CACHE", str(tmp_path / "cache"))
    return server
