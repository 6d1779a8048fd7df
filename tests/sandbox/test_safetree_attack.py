"""An attacker's review of the suite and exam readers: a suite or exam directory comes from its author, and a
symlink planted at its top level (benchmark.json, seal.key, families.yaml) must be refused like one deeper
down -- never followed by host code to a file of the verifier's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acx_oci.errors import PathOutside
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.exams import source

ROOT = Path(__file__).resolve().parent.parent.parent


def planted(tmp_path: Path, suite: str, name: str) -> Path:
    """A copy of a test suite whose ``name`` is a symlink to a host file (with the same bytes, so the only
    thing wrong is the link)."""
    d = tmp_path / "suite"
    shutil.copytree(ROOT / "testdata" / suite, d, symlinks=True)
    outside = tmp_path / "verifier-owned" / name
    outside.parent.mkdir()
    shutil.move(str(d / name), outside)
    (d / name).symlink_to(outside)
    return d


@pytest.mark.parametrize("name", ["benchmark.json", "seal.key"])
def test_benchmark_push_does_not_follow_a_link_at_the_suite_top(tmp_path: Path, name: str) -> None:
    d = planted(tmp_path, "bench-py", name)
    with pytest.raises(PathOutside):
        bm.load_suite_dir(d)


@pytest.mark.parametrize("name", ["benchmark.json", "families.yaml"])
def test_exam_reader_does_not_follow_a_link_at_the_suite_top(tmp_path: Path, name: str) -> None:
    d = planted(tmp_path, "exams-good", name)
    exam = source.discover(d)[0] if name != "benchmark.json" else next(p.parent for p in d.glob("tasks/*/exam.yaml"))
    with pytest.raises(PathOutside):
        source.load_exam(exam)


def test_exam_discovery_does_not_follow_a_linked_task_directory(tmp_path: Path) -> None:
    """Without benchmark.json, exams are found by globbing ``*/exam.yaml``, which walks into a symlinked
    directory: an author's ``tasks -> /somewhere/on/the/host`` made host code read (and grade) that tree."""
    d = tmp_path / "suite"
    shutil.copytree(ROOT / "testdata" / "exams-good", d, symlinks=True)
    (d / "benchmark.json").unlink()
    outside = tmp_path / "verifier-owned"
    shutil.move(str(d / "tasks"), outside)
    (d / "tasks").symlink_to(outside)
    with pytest.raises(PathOutside):
        source.discover(d)


def test_the_provider_key_file_is_among_the_secrets_the_containment_probes_prove_absent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The models file's ``apiKeyFile`` is the verifier's secret like ``--key``: a key kept under /usr (say
    /usr/local/etc/acme.key, world-readable) is visible in every sandbox, which binds the host's /usr. The
    probes proved only ``--key`` and the state directory absent, so nothing noticed."""
    from types import SimpleNamespace

    from acx_oci.egress import ModelSetup
    from acx_oci.model import modelapi as ma
    from acx_oci.services.verifier import play as attest

    seen: list[tuple[Path, ...]] = []
    monkeypatch.setattr(attest, "runtime_of", lambda rom: {"command": ["true"]})
    monkeypatch.setattr(attest, "rom_files", lambda store, cart: {})
    monkeypatch.setattr(attest, "materialize_rom", lambda files, into: into)
    monkeypatch.setattr(attest, "prove", lambda secrets, *a: seen.append(tuple(secrets)) or {"proven": False})
    key_file = tmp_path / "acme.key"
    entry = ma.ModelEntry(id="m", api="openai-chat", base_url="http://127.0.0.1:1/v1", api_key_file=str(key_file))
    req = SimpleNamespace(sandbox=SimpleNamespace(secret_paths=(tmp_path / "verifier.key",), executor=None),
                          state_dir=tmp_path / "state", registry=SimpleNamespace(store_options=None))
    with attest.rom_solver(req, SimpleNamespace(rom={}), None, object(), ModelSetup(entry, "k")):  # type: ignore[arg-type]
        pass
    assert seen and key_file in seen[0], seen
