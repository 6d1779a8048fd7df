"""Names from outside that end in a newline are not the name: ``re`` anchors ``$`` before a final ``\\n``.

A hostile manifest's descriptor ``sha256:<hex>\\n``, a tag ``1.0.0\\n`` or a credential's status list URL
ending ``<uuid>\\n`` passed the syntax checks and became file names in a layout, registry URLs and tags
(``acx-status-<uuid>\\n``) that no reader looks up.
"""

from __future__ import annotations

import pytest

from acx_oci.crypto import check_digest
from acx_oci.crypto.digest import is_digest
from acx_oci.errors import AcxError, UsageError
from acx_oci.oci import parse_own_tag, parse_reference
from acx_oci.services.artifacts import status_tag
from acx_oci.trust.did import DID_SYNTAX

HEX = "ab" * 32
UUID = "0b7e5d3c-1f2a-4c5d-8e9f-0a1b2c3d4e5f"


def test_digest_with_a_trailing_newline_is_refused() -> None:
    assert check_digest(f"sha256:{HEX}") == f"sha256:{HEX}"
    assert not is_digest(f"sha256:{HEX}\n")
    with pytest.raises(UsageError):
        check_digest(f"sha256:{HEX}\n")


def test_reference_tag_and_repository_with_a_trailing_newline_are_refused() -> None:
    assert parse_reference("127.0.0.1:5000/acx/x:1.0.0").tag == "1.0.0"
    for bad in ("127.0.0.1:5000/acx/x:1.0.0\n", "127.0.0.1:5000/acx/x\n:1.0.0"):
        with pytest.raises(AcxError):
            parse_reference(bad)


def test_status_url_own_tag_and_did_with_a_trailing_newline_are_refused() -> None:
    assert status_tag(f"https://v.example/status/{UUID}") == f"acx-status-{UUID}"
    with pytest.raises(UsageError):
        status_tag(f"https://v.example/status/{UUID}\n")
    assert parse_own_tag("acx-att-" + HEX[:16]) is not None
    assert parse_own_tag("acx-att-" + HEX[:16] + "\n") is None
    assert DID_SYNTAX.match("did:web:verifier.acx.example")
    assert not DID_SYNTAX.match("did:web:verifier.acx.example\n")
