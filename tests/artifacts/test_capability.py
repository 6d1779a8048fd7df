"""Capability records: purl normalization, taskType vocabulary, grammar, evidence rule."""

from __future__ import annotations

import pytest

from acx_oci.errors import UsageError
from acx_oci.model import parse_capability, parse_requirement, record_from_json, to_purl
from acx_oci.model.capability import TASK_TYPES, make_record


@pytest.mark.parametrize(
    ("token", "purl"),
    [
        ("airflow", "pkg:pypi/apache-airflow"),
        ("Airflow", "pkg:pypi/apache-airflow"),
        ("apache-airflow", "pkg:pypi/apache-airflow"),
        (" AIRFLOW ", "pkg:pypi/apache-airflow"),
        ("dbt", "pkg:pypi/dbt-core"),
        ("snowflake", "pkg:generic/snowflake"),
        ("pkg:pypi/apache-airflow@2.9.0", "pkg:pypi/apache-airflow@2.9.0"),
        ("pkg:npm/react", "pkg:npm/react"),
        ("My Tool!", "pkg:generic/my-tool-"),  # the reference design's fallback as written (no dashes stripped)
        ("c", "pkg:generic/c"),
        ("c++", "pkg:generic/cpp"),
        ("c#", "pkg:generic/csharp"),
        ("clickhouse", "pkg:generic/clickhouse"),
    ],
)
def test_to_purl(token: str, purl: str) -> None:
    assert to_purl(token) == purl


def test_c_cpp_and_csharp_are_three_capabilities() -> None:
    # issue 44.5: the fallback stripped dashes, so "c++" and "c#" were pkg:generic/c, one id with C's
    ids = {make_record("implement-feature", [lang], None).id for lang in ("c", "c++", "c#", "C++ ")}
    assert len(ids) == 3


def test_a_stored_record_without_schema_version_is_refused() -> None:
    rec = make_record("build-dag", ["airflow"], None).to_json()
    assert record_from_json(rec, stored=True).id == rec["id"]
    del rec["schemaVersion"]
    assert record_from_json(rec).id  # a hand-written cartridge.yaml may omit it: the push writes it
    with pytest.raises(UsageError, match="expected schemaVersion"):
        record_from_json(rec, stored=True)


def test_invented_purl_type_refused() -> None:
    with pytest.raises(UsageError, match="not a registered purl type"):
        to_purl("pkg:madeup/thing")


def test_stack_sorted_and_deduplicated_and_id_order_independent() -> None:
    a = make_record("build-dag", ["snowflake", "airflow", "dbt"], "data-engineering")
    b = make_record("build-dag", ["dbt", "apache-airflow", "Snowflake", "Airflow"], "data-engineering")
    assert a.stack == ("pkg:generic/snowflake", "pkg:pypi/apache-airflow", "pkg:pypi/dbt-core")
    assert a.id == b.id
    assert a.id != make_record("build-dag", ["snowflake"], "data-engineering").id
    assert a.id != make_record("build-dag", ["snowflake", "airflow", "dbt"], "analytics").id


def test_display_form() -> None:
    rec = parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering")
    assert rec.display() == "build-dag[pkg:generic/snowflake+pkg:pypi/apache-airflow+pkg:pypi/dbt-core]"
    assert rec.domain == "data-engineering"
    assert rec.verified is False


def test_seed_vocabulary_has_17() -> None:
    assert len(TASK_TYPES) == 17


@pytest.mark.parametrize("tt", ["build-dag", "dependency-upgrade", "dev.acx.x:generate-terraform"])
def test_task_types_accepted(tt: str) -> None:
    assert make_record(tt, []).task_type == tt


@pytest.mark.parametrize("tt", ["build-dags", "Build-Dag", "make-coffee", "dev.acx.x:", ":x", "a b"])
def test_task_types_refused(tt: str) -> None:
    with pytest.raises(UsageError, match="taskType"):
        make_record(tt, [])


def test_grammar_namespaced_and_purl_with_version() -> None:
    rec = parse_capability("dev.acx.x:generate-terraform[pkg:pypi/apache-airflow@2.9.0+terraform]@platform")
    assert rec.task_type == "dev.acx.x:generate-terraform"
    assert rec.stack == ("pkg:generic/terraform", "pkg:pypi/apache-airflow@2.9.0")
    assert rec.domain == "platform"


def test_grammar_without_stack_or_domain() -> None:
    assert parse_capability("debug").stack == ()
    assert parse_capability("debug@web").domain == "web"


@pytest.mark.parametrize("text", ["build-dag[snowflake", "build-dag]x[", "[airflow]", "build-dag[a]@Bad Domain",
                                  "build-dag[]@x", "build-dag[+]"])
def test_grammar_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse_capability(text)


def test_verified_requires_evidence() -> None:
    with pytest.raises(UsageError, match="evidenceRefs"):
        make_record("build-dag", ["airflow"], verified=True)
    rec = make_record("build-dag", ["airflow"], verified=True, evidence_refs=["sha256:" + "0" * 64])
    assert rec.verified


def test_record_roundtrip_and_schema() -> None:
    rec = make_record("build-dag", ["airflow"], "data-engineering")
    assert record_from_json(rec.to_json()) == rec
    bad = rec.to_json() | {"id": "acx-cap:sha256:" + "1" * 64}
    with pytest.raises(UsageError, match="is not the id"):
        record_from_json(bad)
    with pytest.raises(UsageError, match="invalid"):
        record_from_json({"taskType": "build-dag", "stack": "airflow"})
    forged = rec.to_json()
    forged["proficiency"] = {"verified": True, "evidenceRefs": []}
    with pytest.raises(UsageError, match="evidenceRefs"):
        record_from_json(forged)


def test_requirements() -> None:
    r = parse_requirement("build-dag>=senior")
    assert (r.task_type, r.min_tier, r.min_level) == ("build-dag", "senior", None)
    assert parse_requirement("build-dag>=20").min_level == 20
    for bad in ["build-dag", "build-dag>=boss", "nope>=senior"]:
        with pytest.raises(UsageError):
            parse_requirement(bad)


def test_a_misspelt_task_type_gets_a_suggestion() -> None:
    """One line that names the likely intended type; an unrelated word gets the private-type hint instead."""
    with pytest.raises(UsageError) as exc:
        parse_capability("biuld-dag[snowflake]@data-engineering")
    assert "did you mean 'build-dag'?" in str(exc.value) and "seed" not in str(exc.value)
    with pytest.raises(UsageError) as exc:
        parse_capability("zzzz[snowflake]@data-engineering")
    assert "reverse-DNS-prefixed" in str(exc.value)
