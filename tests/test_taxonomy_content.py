"""Content checks for the taxonomy YAML files (attributes, domains, subjects).

Fast and offline: loads ``samplers/{attributes,domains,subjects}.yaml`` directly (so it does not
depend on the other sampler files), validates every entry with the pydantic models, checks the
required ids/counts, the privacy rules for identifiers and that every phrasing renders for every
value with both the first-person and a third-person subject.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import jinja2
import pytest
import yaml
from jinja2 import meta

from benchgen.taxonomy import PHRASING_STYLES, Attribute, Domain, Family, Subject
from benchgen.text import content_tokens

SAMPLERS = Path(__file__).resolve().parent.parent / "samplers"

FAMILY_MEMBERS = {
    "identifiers": ["name", "email", "phone_number", "address", "ssn", "driver_license", "dates"],
    "demographics": ["age", "gender", "ethnicity"],
    "health": [
        "physical_health",
        "mental_health",
        "medications",
        "allergies",
        "disabilities",
        "family_history",
        "exercise_hours",
        "smoker",
        "diet_type",
    ],
    "beliefs_identity": ["religious_beliefs", "sexual_orientation"],
    "lifestyle": ["favorite_food", "favorite_hobbies", "pet_ownership", "movie_prefs", "vacation_prefs"],
    "socio_economic": ["financial_situation", "employment", "legal", "relationship_status"],
}
DOMAIN_NAMES = {
    "health": "Health & Wellness",
    "finance": "Financial & Corporate",
    "employment": "Employment & Applications",
    "academic": "Academic & Education",
    "legal": "Legal",
    "relationships": "Personal Relationships",
    "travel": "Travel",
    "hobbies": "Hobbies & Habits",
    "sexual": "Sexual & Erotic",
    "politics": "Politics",
    "religion": "Religion",
}
SUBJECT_IDS = ["self", "family", "friend", "coworker", "third_party"]
MIN_CONTENT_VALUES = 24
PHRASING_VARS = {"value", "S", "P", "O", "be", "have", "s", "do", "was"}

SELF_FORMS = {"S": "I", "P": "my", "O": "me", "be": "am", "have": "have", "s": "", "do": "do", "was": "was"}
THIRD_FORMS = {
    "S": "my coworker",
    "P": "my coworker's",
    "O": "my coworker",
    "be": "is",
    "have": "has",
    "s": "s",
    "do": "does",
    "was": "was",
}


def _load(name: str) -> dict:
    data = yaml.safe_load((SAMPLERS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def attr_file() -> dict:
    data = _load("attributes.yaml")
    assert set(data) == {"families", "attributes"}
    return data


@pytest.fixture(scope="module")
def families(attr_file: dict) -> list[Family]:
    return [Family(**f) for f in attr_file["families"]]


@pytest.fixture(scope="module")
def attributes(attr_file: dict) -> list[Attribute]:
    return [Attribute(**a) for a in attr_file["attributes"]]


@pytest.fixture(scope="module")
def domains() -> list[Domain]:
    data = _load("domains.yaml")
    assert set(data) == {"domains"}
    return [Domain(**d) for d in data["domains"]]


@pytest.fixture(scope="module")
def subjects() -> list[Subject]:
    data = _load("subjects.yaml")
    assert set(data) == {"subjects"}
    return [Subject(**s) for s in data["subjects"]]


def _attr(attributes: list[Attribute], aid: str) -> Attribute:
    return next(a for a in attributes if a.id == aid)


# --------------------------------------------------------------------------- families/attributes
def test_families(families: list[Family]) -> None:
    assert [f.id for f in families] == list(FAMILY_MEMBERS)
    for f in families:
        assert f.name.strip() and f.generalisation.strip()


def test_attribute_ids_and_grouping(attributes: list[Attribute]) -> None:
    assert len(attributes) == 30
    ids = [a.id for a in attributes]
    assert len(set(ids)) == 30
    for fam, members in FAMILY_MEMBERS.items():
        assert sorted(a.id for a in attributes if a.family == fam) == sorted(members), fam


def test_attribute_fields(attributes: list[Attribute]) -> None:
    for a in attributes:
        assert a.description.strip() and "\n" not in a.description.strip(), a.id
        assert a.generalisation.strip(), a.id
        assert set(a.phrasings) == set(PHRASING_STYLES), a.id
        for style in PHRASING_STYLES:
            assert len(a.phrasings[style]) >= 3, (a.id, style)


def test_values(attributes: list[Attribute]) -> None:
    for a in attributes:
        low = [v.strip().lower() for v in a.values]
        assert len(set(low)) == len(low) >= MIN_CONTENT_VALUES, a.id
        for v in a.values:
            assert v == v.strip() and 1 <= len(v.split()) <= 8, (a.id, v)
            assert content_tokens(v), (a.id, v)  # something left to match after stop words
            assert not {"i", "me", "my"} & set(re.findall(r"[a-z]+", v.lower())), (a.id, v)
        for x, y in itertools.permutations(low, 2):
            assert x not in y, f"{a.id}: value {x!r} is a substring of {y!r}"


def test_phrasing_templates(attributes: list[Attribute]) -> None:
    env = jinja2.Environment()
    for a in attributes:
        for style, plist in a.phrasings.items():
            for p in plist:
                assert p.count("{{ value }}") == 1, (a.id, p)
                assert not p.rstrip().endswith((".", "!", "?")), (a.id, p)
                used = meta.find_undeclared_variables(env.parse(p))
                assert used <= PHRASING_VARS, (a.id, style, p, used - PHRASING_VARS)
                # {{ s }} is a plain verb suffix: it must directly follow a letter
                assert not re.search(r"(^|[^A-Za-z])\{\{ s \}\}", p), (a.id, p)


def test_phrasings_render_for_every_value(attributes: list[Attribute]) -> None:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    for a in attributes:
        for plist in a.phrasings.values():
            for p in plist:
                tmpl = env.from_string(p)
                for v in a.values:
                    for forms in (SELF_FORMS, THIRD_FORMS):
                        out = tmpl.render(value=v, **forms)
                        assert v in out and "{{" not in out and "  " not in out, (a.id, p, v)


# --------------------------------------------------------------------------- privacy
def test_identifiers_are_fake(attributes: list[Attribute]) -> None:
    for v in _attr(attributes, "email").values:
        assert re.fullmatch(r"[a-z0-9._+-]+@example\.(com|org|net)", v), v
    for v in _attr(attributes, "phone_number").values:
        assert re.search(r"555-01\d\d$", v), v
    for v in _attr(attributes, "ssn").values:
        assert re.fullmatch(r"9\d\d-\d\d-\d{4}", v), v
    for v in _attr(attributes, "driver_license").values:
        assert v.startswith("X") and "0000" in v, v
    for v in _attr(attributes, "address").values:
        assert re.match(r"\d+ ", v), v
    for v in _attr(attributes, "name").values:
        assert len(v.split()) >= 2, v


# --------------------------------------------------------------------------- domains
def test_domains(domains: list[Domain], attributes: list[Attribute]) -> None:
    assert {d.id: d.name for d in domains} == DOMAIN_NAMES
    assert len(domains) == 11
    attr_ids = {a.id for a in attributes}
    for d in domains:
        assert d.description.strip(), d.id
        assert 4 <= len(d.essential_pool) <= 10, d.id
        assert len(set(d.essential_pool)) == len(d.essential_pool), d.id
        assert set(d.essential_pool) <= attr_ids, (d.id, set(d.essential_pool) - attr_ids)
        assert len(d.topics) >= 8 and len(set(d.topics)) == len(d.topics), d.id
        for t in d.topics:
            assert t.strip() and "{{" not in t and not t.endswith("."), (d.id, t)
    covered = set().union(*(d.essential_pool for d in domains))
    assert attr_ids <= covered, f"attributes in no essential pool: {sorted(attr_ids - covered)}"


# --------------------------------------------------------------------------- subjects
def test_subjects(subjects: list[Subject]) -> None:
    assert [s.id for s in subjects] == SUBJECT_IDS
    by_id = {s.id: s for s in subjects}
    assert by_id["self"].relations == ["I"]
    for sid in SUBJECT_IDS[1:]:
        rel = by_id[sid].relations
        assert len(rel) >= 6 and len(set(rel)) == len(rel), sid
        for r in rel:
            assert r.startswith("my ") and not r.endswith("'s"), (sid, r)
    for s in subjects:
        assert s.name.strip() and s.description.strip()
