"""DelegateCI reward: definition by hand and property checks with seeded random loops."""

from __future__ import annotations

import random

import pytest

from benchgen.metrics.reward import RewardConfig, brevity, e_recall, reward, reward_breakdown

VOCAB = [f"w{i}" for i in range(40)]
FILLER = [f"pad{i}" for i in range(20)]


def test_by_hand() -> None:
    e, n = ["metformin dose", "kidney"], ["Anna"]
    # recall = mean(1, 0) = 0.5 ; anchor 4 words, rewrite 3 words -> brevity 1
    assert reward("metformin dose question", e, n, target_rewrite="a b c d") == pytest.approx(0.5**0.5)
    # 8 words against anchor 4 -> (4/8)**1
    assert reward("metformin dose question x x x x x", e, n, "a b c d") == pytest.approx(0.5**0.5 * 0.5)
    assert reward("Anna metformin dose kidney", e, n) == -1.0
    assert reward("   ", e, n) == -0.5
    assert reward("the of and", e, n) == -0.5  # no content tokens counts as empty
    assert reward("anything", [], [], None) == 1.0
    cfg = RewardConfig(alpha=1.0, beta=2.0, leak_penalty=-2.0, empty_penalty=-0.1)
    assert reward("metformin dose question x x x x x", e, n, "a b c d", cfg) == pytest.approx(0.5 * 0.25)
    assert reward("Anna", e, n, None, cfg) == -2.0 and reward("", e, n, None, cfg) == -0.1


def test_config_validation_and_parts() -> None:
    with pytest.raises(ValueError):
        RewardConfig(alpha=1.5)
    with pytest.raises(ValueError):
        RewardConfig(leak_penalty=0.0, empty_penalty=-1.0)
    with pytest.raises(AttributeError):
        RewardConfig().alpha = 0.3  # type: ignore[misc]
    b = reward_breakdown("kidney", ["kidney"], ["Anna"])
    assert (b.leaked, b.empty, b.e_recall, b.brevity) == (False, False, 1.0, 1.0)
    assert brevity(10, None, 1.0) == 1.0 and brevity(3, 5, 1.0) == 1.0 and brevity(10, 5, 1.0) == 0.5
    assert e_recall("", []) == 1.0


def _random_case(rng: random.Random) -> tuple[list[str], list[str], list[str]]:
    words = rng.sample(VOCAB, 12)
    e = [" ".join(words[i : i + rng.randint(1, 2)]) for i in range(0, 6, 2)]
    n = [" ".join(words[6 + i : 6 + i + rng.randint(1, 2)]) for i in range(0, 6, 2)]
    return e, n, words


def test_monotone_in_recall() -> None:
    rng = random.Random(0)
    for _ in range(300):
        e, n, _ = _random_case(rng)
        kept = [w for x in e for w in x.split()]
        rng.shuffle(kept)
        prev = -float("inf")
        for k in range(1, len(kept) + 1):  # adding one more essential token never lowers the reward
            r = reward(" ".join(kept[:k]), e, n)
            assert r >= prev - 1e-12
            prev = r


def test_leak_dominates() -> None:
    rng = random.Random(1)
    for _ in range(300):
        e, n, _ = _random_case(rng)
        clean = " ".join(w for x in e for w in x.split() if rng.random() < 0.7) or e[0]
        leaky = clean + " " + rng.choice(n)
        target = " ".join(rng.sample(VOCAB, rng.randint(1, 10)))
        cfg = RewardConfig(alpha=rng.uniform(0.1, 1), beta=rng.uniform(0, 3))
        assert reward(leaky, e, n, target, cfg) == cfg.leak_penalty
        assert reward(leaky, e, n, target, cfg) < reward(clean, e, n, target, cfg)
        assert reward("", e, n, target, cfg) < reward(clean, e, n, target, cfg)


def test_padding_never_helps() -> None:
    rng = random.Random(2)
    for _ in range(300):
        e, n, _ = _random_case(rng)
        base = " ".join(w for x in e for w in x.split() if rng.random() < 0.6) or e[0]
        target = " ".join(rng.sample(VOCAB, rng.randint(1, 8)))
        cfg = RewardConfig(alpha=rng.uniform(0.1, 1), beta=rng.uniform(0, 3))
        r0 = reward(base, e, n, target, cfg)
        padded = base + " " + " ".join(rng.choices(FILLER, k=rng.randint(1, 15)))
        assert reward(padded, e, n, target, cfg) <= r0 + 1e-12
        if len(padded.split()) > len(target.split()) and cfg.beta > 0:
            assert reward(padded, e, n, target, cfg) < r0 or r0 == 0.0
