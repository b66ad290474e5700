"""BibTeX for a release and for the works it builds on.

Fields we could not verify offline are marked ``[TO VERIFY]`` (and explained in ``note``) rather
than invented; a maintainer should fill them in before a public release.
"""

from __future__ import annotations

from typing import Any

RELATED: list[tuple[str, str]] = [
    (
        "Contextual Integrity",
        """@article{nissenbaum2004privacy,
  title   = {Privacy as Contextual Integrity},
  author  = {Nissenbaum, Helen},
  journal = {Washington Law Review},
  volume  = {79},
  number  = {1},
  pages   = {119--157},
  year    = {2004}
}""",
    ),
    (
        "CAPID",
        """@misc{ponomarenko2025capid,
  title  = {{CAPID}: Context-Aware {PII} Detection for Question-Answering Systems},
  author = {Ponomarenko, [TO VERIFY: first name] and others},
  year   = {2025},
  note   = {Year, venue / arXiv identifier and full author list not verified offline [TO VERIFY]}
}""",
    ),
    (
        "PAPILLON",
        """@inproceedings{siyan2025papillon,
  title     = {{PAPILLON}: Privacy Preservation from Internet-based and Local Language Model Ensembles},
  author    = {Siyan, Li and others},
  booktitle = {Proceedings of the 2025 Conference of the Nations of the Americas Chapter of the
               Association for Computational Linguistics (NAACL)},
  year      = {2025},
  note      = {Full author list and pages not verified offline [TO VERIFY]}
}""",
    ),
    (
        "PEEP",
        """@misc{peep,
  title  = {{PEEP} [TO VERIFY: full title]},
  author = {[TO VERIFY]},
  note   = {Bibliographic details not verified offline [TO VERIFY]}
}""",
    ),
    (
        "DelegateCI-Bench",
        """@misc{delegatecibench,
  title  = {{DelegateCI-Bench} [TO VERIFY: full title]},
  author = {[TO VERIFY]},
  note   = {Bibliographic details not verified offline [TO VERIFY]}
}""",
    ),
]


def release_bibtex(ctx: Any) -> str:
    key = ctx.card.citation_key or ctx.name.replace("-", "_").replace(".", "_")
    authors = " and ".join(ctx.card.authors) if ctx.card.authors else "[HUMAN INPUT NEEDED: authors]"
    url = ctx.card.homepage or (f"https://huggingface.co/datasets/{ctx.card.repo_id}" if ctx.card.repo_id
                                else "[HUMAN INPUT NEEDED: URL]")
    return (
        f"@misc{{{key},\n"
        f"  title   = {{{{{ctx.pretty_name}}}}},\n"
        f"  author  = {{{authors}}},\n"
        f"  version = {{{ctx.version}}},\n"
        f"  url     = {{{url}}},\n"
        f"  note    = {{Built with benchgen {ctx.benchgen_version}, seed {ctx.seed}}}\n"
        "}"
    )
