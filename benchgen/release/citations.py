"""BibTeX for a release and for the works it builds on.

Fields that could not be verified are marked ``[TO VERIFY]`` (and explained in ``note``) rather
than invented; a maintainer should check them before a public release.
"""

from __future__ import annotations

from typing import Any

# Sources (checked when this module was written): ACL Anthology entries for CAPID (2026.eacl-srw.23) and
# PAPILLON (2025.naacl-long.173); arXiv abstracts for PEEP (2507.05391) and DelegateCI-Bench (2606.04067).
# The two arXiv works had no confirmed peer-reviewed venue then: they are cited as preprints.
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
        """@inproceedings{ponomarenko2026capid,
  title     = {{CAPID}: Context-Aware {PII} Detection for Question-Answering Systems},
  author    = {Ponomarenko, Mariia and Abedini, Sepideh and Shafieinejad, Masoumeh and Emerson, D. B. and
               Mohapatra, Shubhankar and He, Xi},
  booktitle = {Proceedings of the 19th Conference of the European Chapter of the Association for
               Computational Linguistics (Volume 4: Student Research Workshop)},
  pages     = {320--331},
  year      = {2026},
  publisher = {Association for Computational Linguistics},
  note      = {ACL Anthology 2026.eacl-srw.23; DOI not verified [TO VERIFY]}
}""",
    ),
    (
        "PAPILLON",
        """@inproceedings{li2025papillon,
  title     = {{PAPILLON}: Privacy Preservation from Internet-based and Local Language Model Ensembles},
  author    = {Li, Siyan and Raghuram, Vethavikashini Chithrra and Khattab, Omar and Hirschberg, Julia and
               Yu, Zhou},
  booktitle = {Proceedings of the 2025 Conference of the Nations of the Americas Chapter of the Association
               for Computational Linguistics: Human Language Technologies (Volume 1: Long Papers)},
  pages     = {3371--3390},
  year      = {2025},
  publisher = {Association for Computational Linguistics},
  doi       = {10.18653/v1/2025.naacl-long.173}
}""",
    ),
    (
        "PEEP",
        """@misc{ramirez2025peep,
  title         = {Controlling What You Share: Assessing Language Model Adherence to Privacy Preferences},
  author        = {Ram{\\'i}rez, Guillem and Birch, Alexandra and Titov, Ivan},
  year          = {2025},
  eprint        = {2507.05391},
  archivePrefix = {arXiv},
  note          = {Introduces the PEEP dataset; peer-reviewed venue not verified [TO VERIFY]}
}""",
    ),
    (
        "DelegateCI-Bench",
        """@misc{huang2026needtoknow,
  title         = {Need to Know: Contextual-Integrity-Grounded Query Rewriting for Privacy-Conscious
                   {LLM} Delegation},
  author        = {Huang, Xinyue and Cao, Xiaochun and Yang, Wenyuan},
  year          = {2026},
  eprint        = {2606.04067},
  archivePrefix = {arXiv},
  note          = {Introduces DelegateCI-Bench; preprint, peer-reviewed venue not verified [TO VERIFY]}
}""",
    ),
]


def release_bibtex(ctx: Any) -> str:
    key = ctx.card.citation_key or ctx.name.replace("-", "_").replace(".", "_")
    authors = " and ".join(ctx.card.authors) if ctx.card.authors else "[HUMAN INPUT NEEDED: authors]"
    url = ctx.card.homepage or (
        f"https://huggingface.co/datasets/{ctx.card.repo_id}"
        if ctx.card.repo_id
        else "[HUMAN INPUT NEEDED: URL]"
    )
    return (
        f"@misc{{{key},\n"
        f"  title   = {{{{{ctx.pretty_name}}}}},\n"
        f"  author  = {{{authors}}},\n"
        f"  version = {{{ctx.version}}},\n"
        f"  url     = {{{url}}},\n"
        f"  note    = {{Built with benchgen {ctx.benchgen_version}, seed {ctx.seed}}}\n"
        "}"
    )
