"""Attacks on the bounded parsers (review of the parsers merge): shapes that slipped past the caps.

* a UTF-16 JSON document hid its brackets from the byte-level depth scan (U+2200 is ``00 22`` in UTF-16-LE: the
  scan saw a quote) while ``json.loads`` read it nested 500 deep;
"""

from __future__ import annotations

import pytest

from acx_oci.errors import ShapeError
from acx_oci.jsonio import MAX_DEPTH, loads, parse_json

# --------------------------------------------------------------------------- JSON


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32"])
def test_a_utf16_document_cannot_hide_its_nesting_from_the_depth_scan(encoding: str) -> None:
    deep = 500
    doc = '["\u2200", ' + "[" * deep + "]" * deep + "]"
    with pytest.raises(ShapeError, match=f"nested deeper than {MAX_DEPTH}"):
        parse_json(doc.encode(encoding), "credential")
    shallow = '{"a": ["\u2200", [[1]]]}'
    assert loads(shallow.encode(encoding)) == {"a": ["\u2200", [[1]]]}  # what json.loads reads, still read
    assert loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a UTF-8 BOM as json.loads(bytes) allows it
