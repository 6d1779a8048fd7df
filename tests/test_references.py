"""References as users write them for skopeo: ``docker://`` names a registry as ``oci:`` names a layout."""

from __future__ import annotations

import pytest

from acx_oci.errors import UsageError
from acx_oci.oci.ref import parse_reference


def test_docker_transport_names_the_same_registry_reference() -> None:
    plain = parse_reference("127.0.0.1:5000/demo/cart:1.0.0")
    assert parse_reference("docker://127.0.0.1:5000/demo/cart:1.0.0") == plain
    digest = "sha256:" + "a" * 64
    assert parse_reference(f"docker://registry.example/a/b@{digest}").digest == digest


@pytest.mark.parametrize("text", ["docker://", "docker://cart:1.0", "docker://host.example/UPPER"])
def test_a_bad_docker_reference_is_one_line(text: str) -> None:
    with pytest.raises(UsageError) as exc:
        parse_reference(text)
    assert "\n" not in str(exc.value) and str(exc.value).startswith("reference")
