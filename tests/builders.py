"""Hand-made records for unit tests (shared by the judge, embedding and reformulator tests)."""

from __future__ import annotations

from benchgen.records import Detail, Draft, Skeleton


def make_skeleton(
    i: int, e: list[str], n: list[str], *, prefix: str = "s", attribute: str = "x", family: str = "f"
) -> Skeleton:
    def det(v: str) -> Detail:
        return Detail(attribute=attribute, family=family, subject="self", relation="I", value=v, span=v)

    return Skeleton(
        id=f"{prefix}{i}",
        seed=1,
        index=i,
        group=f"g{i}",
        domain="health",
        task_type="chitchat",
        subject="self",
        relation="I",
        style="direct",
        tone="neutral",
        policy="domain_pool",
        confusion=None,
        essential=tuple(det(v) for v in e),
        non_essential=tuple(det(v) for v in n),
    )


def make_draft(
    i: int,
    query: str,
    e: list[str],
    n: list[str],
    *,
    generator: str = "offline",
    prefix: str = "s",
    attribute: str = "x",
    family: str = "f",
) -> Draft:
    sk = make_skeleton(i, e, n, prefix=prefix, attribute=attribute, family=family)
    return Draft(
        skeleton=sk,
        query=query,
        essential=sk.essential,
        non_essential=sk.non_essential,
        generator=generator,
        template="t",
        template_hash="0",
    )
