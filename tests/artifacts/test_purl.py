"""purl through packageurl-python: the canonical form, the refusals, the grammar's ``+``, and ids unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acx_oci.errors import UsageError
from acx_oci.model import parse_capability, record_from_json, to_purl
from acx_oci.model.capability import make_record
from acx_oci.model.purl import PURL_TYPES, grammar_form, parse_purl

from ..support.cli import cli

OLD_IDS = json.loads((Path(__file__).parent.parent / "vectors" / "capability-ids" / "main-738963e-ids.json")
                     .read_text())

# token -> stored form. The reference's rules (trim, lower-case everything -- Maven too --, alias table,
# pkg:generic fallback); packageurl-python's reading (decoding, pypi '_' -> '-', sorted qualifiers).
CANONICAL = [
    # deb versions keep their '+', however it was written
    ("pkg:deb/debian/curl@7.50.3-1+deb9u1", "pkg:deb/debian/curl@7.50.3-1+deb9u1"),
    ("pkg:deb/debian/curl@7.50.3-1%2Bdeb9u1", "pkg:deb/debian/curl@7.50.3-1+deb9u1"),
    ("pkg:deb/debian/curl@7.50.3-1%2bdeb9u1", "pkg:deb/debian/curl@7.50.3-1+deb9u1"),
    ("pkg:deb/debian/libc6@2.36-9+deb12u4?arch=amd64", "pkg:deb/debian/libc6@2.36-9+deb12u4?arch=amd64"),
    ("pkg:deb/ubuntu/openssl@3.0.2-0ubuntu1.10+esm1?distro=jammy",
     "pkg:deb/ubuntu/openssl@3.0.2-0ubuntu1.10+esm1?distro=jammy"),
    # qualifiers: sorted, lower-cased, values decoded then written back
    ("pkg:rpm/fedora/curl@7.50.3-1.fc25?distro=fedora-25&arch=i386",
     "pkg:rpm/fedora/curl@7.50.3-1.fc25?arch=i386&distro=fedora-25"),
    ("pkg:docker/library/nginx@1.25?arch=AMD64", "pkg:docker/library/nginx@1.25?arch=amd64"),
    ("pkg:oci/debian@sha256:abc123?repository_url=docker.io/library",
     "pkg:oci/debian@sha256:abc123?repository_url=docker.io/library"),
    ("pkg:generic/openssl@1.1.10g?download_url=https://openssl.org/o.tar.gz&checksum=sha256:de4d",
     "pkg:generic/openssl@1.1.10g?checksum=sha256:de4d&download_url=https://openssl.org/o.tar.gz"),
    ("pkg:generic/x?note=a%26b", "pkg:generic/x?note=a%26b"),
    # subpaths
    ("pkg:golang/github.com/gorilla/context@234fd47e07d1004f0aed9c#api",
     "pkg:golang/github.com/gorilla/context@234fd47e07d1004f0aed9c#api"),
    ("pkg:pypi/numpy@1.26#Src/Core", "pkg:pypi/numpy@1.26#src/core"),
    ("pkg:github/package-url/purl-spec@v1.0#docs/", "pkg:github/package-url/purl-spec@v1.0#docs"),
    # the reference's lower-casing (Maven names are case-sensitive in the purl spec; not here)
    ("pkg:maven/org.Apache.Commons/Commons-Lang3@3.12.0", "pkg:maven/org.apache.commons/commons-lang3@3.12.0"),
    ("PKG:PyPI/Django", "pkg:pypi/django"),
    ("pkg:swift/github.com/Alamofire/Alamofire@5.4.3", "pkg:swift/github.com/alamofire/alamofire@5.4.3"),
    ("pkg:cpan/DROLSKY/DateTime@1.55", "pkg:cpan/drolsky/datetime@1.55"),
    ("  pkg:npm/React@18.2.0  ", "pkg:npm/react@18.2.0"),
    # pypi names: '_' is '-' (purl spec's pypi rule), so both spellings are one stack entry
    ("pkg:pypi/apache_airflow", "pkg:pypi/apache-airflow"),
    ("pkg:pypi/Apache_Airflow@2.9.0", "pkg:pypi/apache-airflow@2.9.0"),
    # percent-encoding: decoded, then only what would change the reading is encoded
    ("pkg:npm/%40angular/core@16.0.0", "pkg:npm/@angular/core@16.0.0"),
    ("pkg:npm/@angular/core@16.0.0", "pkg:npm/@angular/core@16.0.0"),
    ("pkg:generic/a%20b", "pkg:generic/a%20b"),
    ("pkg:generic/caf%C3%A9", "pkg:generic/caf%C3%A9"),
    ("pkg:generic/x%41", "pkg:generic/xa"),
    # aliases and the pkg:generic fallback
    ("airflow", "pkg:pypi/apache-airflow"),
    ("apache_airflow", "pkg:pypi/apache-airflow"),
    ("K8s", "pkg:generic/kubernetes"),
    ("postgres", "pkg:generic/postgresql"),
    ("Spark", "pkg:pypi/pyspark"),
    ("My Tool!", "pkg:generic/my-tool-"),  # the reference design's fallback: no dashes stripped
    ("clickhouse", "pkg:generic/clickhouse"),
]

# token -> what the one-line refusal says (the purl spec's reason)
INVALID = [
    ("pkg:pypi/a b", "' ' must be percent-encoded as %20"),
    ("pkg:pypi/café", "'é' must be percent-encoded as %C3%A9"),
    ("pkg:generic/a[b]", "'[' must be percent-encoded as %5B"),
    ("pkg:pypi/100%", "'%' must start a percent-encoded byte"),
    ("pkg:pypi/", "missing the required name component"),
    ("pkg:/x", "missing the required type component"),
    ("pkg:madeup/thing", "not a registered purl type"),
    ("pkg:maven/commons-lang3", "Namespace is required for purl type: 'maven'"),
    ("pkg:golang/mux", "Namespace is required for purl type: 'golang'"),
    ("pkg:pypi/acme/x", "Namespace is prohibited for purl type: 'pypi'"),
    ("pkg:pypi/x?a=1&a=2", "qualifier key 'a' appears twice"),
    ("pkg:pypi/x?a", "key=value"),
    ("pkg:npm/x@", "'@' must be followed by a version"),
    ("pkg:pypi/x#../etc", "subpath segment may not be '.' or '..'"),
    ("!!!", "found no letter or digit"),
]


@pytest.mark.parametrize(("token", "stored"), CANONICAL)
def test_canonical_form(token: str, stored: str) -> None:
    assert to_purl(token) == stored
    assert to_purl(stored) == stored  # idempotent: the stored form reads back as itself


def test_table_size() -> None:
    assert len(CANONICAL) + len(INVALID) >= 30
    assert {"deb", "pypi", "maven", "npm", "generic", "rpm", "oci", "golang"} <= PURL_TYPES


@pytest.mark.parametrize(("token", "reason"), INVALID)
def test_invalid_purl_refused_with_the_reason(token: str, reason: str) -> None:
    with pytest.raises(UsageError) as exc:
        to_purl(token)
    assert reason in str(exc.value) and "\n" not in str(exc.value)


def test_deb_version_is_one_stack_entry_and_round_trips() -> None:
    rec = parse_capability("deploy[pkg:deb/debian/curl@7.50.3-1%2Bdeb9u1+terraform]")
    assert rec.stack == ("pkg:deb/debian/curl@7.50.3-1+deb9u1", "pkg:generic/terraform")
    assert rec.display() == "deploy[pkg:deb/debian/curl@7.50.3-1%2Bdeb9u1+pkg:generic/terraform]"
    assert parse_capability(rec.display()).id == rec.id
    assert parse_purl(rec.stack[0]).version == "7.50.3-1+deb9u1"
    assert grammar_form(rec.stack[0]).count("+") == 0


def test_a_stored_record_with_a_deb_plus_keeps_its_id() -> None:
    stack, old = OLD_IDS["records"][0]
    assert stack == ["pkg:deb/debian/curl@7.50.3-1+deb9u1"]
    obj = {"schemaVersion": "acx.capability/1", "id": old, "taskType": "build-dag", "stack": stack}
    assert record_from_json(obj).id == old


@pytest.mark.parametrize(("text", "old_id"), sorted(OLD_IDS["display"].items()))
def test_old_capability_strings_keep_their_ids(text: str, old_id: str) -> None:
    rec = parse_capability(text)
    assert rec.id == old_id
    if rec.stack:  # the display form reads back to the same id
        assert parse_capability(rec.display(with_domain=True)).id == old_id


@pytest.mark.parametrize(("stack", "old_id"), OLD_IDS["records"])
def test_old_records_keep_their_ids(stack: list[str], old_id: str) -> None:
    assert make_record("build-dag", stack).id == old_id


# Where the old id was wrong on purpose: the new one is the id of what the text means.
CHANGED = [
    # old: a raw '+' split the version into 'pkg:deb/debian/curl@7.50.3-1' and 'pkg:generic/deb9u1'
    ("deploy[pkg:deb/debian/curl@7.50.3-1%2Bdeb9u1]", ["pkg:deb/debian/curl@7.50.3-1+deb9u1"]),
    # old: kept as written, so it never met the alias table's pkg:pypi/apache-airflow
    ("deploy[pkg:pypi/apache_airflow]", ["airflow"]),
    ("deploy[apache_airflow]", ["airflow"]),
]


@pytest.mark.parametrize(("text", "meant"), CHANGED)
def test_changed_ids_are_the_ids_of_what_the_text_means(text: str, meant: list[str]) -> None:
    assert parse_capability(text).id == make_record("deploy", meant).id


def test_old_plus_in_the_grammar_still_splits() -> None:
    """A raw '+' is a separator (as before): only '%2B' keeps it inside the purl."""
    rec = parse_capability("deploy[pkg:deb/debian/curl@7.50.3-1+deb9u1]")
    assert rec.stack == ("pkg:deb/debian/curl@7.50.3-1", "pkg:generic/deb9u1")


def test_cli_refuses_an_invalid_purl_in_one_line(tmp_path: Path) -> None:
    res = cli("cartridge", "init", tmp_path / "c", "--id", "io.example/a", "--version", "1.0.0",
              "--capability", "build-dag[pkg:pypi/a b]")
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "' ' must be percent-encoded as %20" in lines[0], res.output
    assert "Traceback" not in res.output and not (tmp_path / "c").exists()
