"""The fault proxy's other faults (drop, truncate, delay) as the registry client meets them.

Trickle, extra, reset and status are exercised by the deadline, bounds and push-fault tests.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from acx_oci.errors import ConnectionLost
from acx_oci.oci import StoreOptions, open_store

from ..support.faultproxy import FaultProxy

REPO = "acx/faultproxy"


@pytest.fixture
def proxy(registry: str) -> Iterator[FaultProxy]:
    with FaultProxy(registry) as p:
        yield p


@pytest.fixture
def blob(registry: str) -> tuple[str, bytes]:
    data = secrets.token_bytes(300_000)
    desc = open_store(f"{registry}/{REPO}:x", StoreOptions()).push_blob(data, "application/octet-stream")
    return desc.digest, data


def test_drop_is_a_lost_connection_and_retried(proxy: FaultProxy, blob: tuple[str, bytes]) -> None:
    digest, data = blob
    proxy.add("drop", method="GET", path=f"/blobs/{digest}")
    store = open_store(f"{proxy.host}/{REPO}:x", StoreOptions(retries=1))
    with pytest.raises(ConnectionLost, match="connection lost during GET"):
        store.fetch_blob(digest, size=len(data))
    assert [a for _, _, a in proxy.log] == ["drop", "drop"]  # one retry, then the error
    proxy.clear()
    proxy.add("drop", method="GET", path=f"/blobs/{digest}", nth=1)
    assert store.fetch_blob(digest, size=len(data)) == data


def test_truncated_body_is_a_lost_connection(proxy: FaultProxy, blob: tuple[str, bytes]) -> None:
    digest, data = blob
    proxy.add("truncate", method="GET", path=f"/blobs/{digest}", after=2000)
    store = open_store(f"{proxy.host}/{REPO}:x", StoreOptions(retries=0))
    with pytest.raises(ConnectionLost, match="connection failed while reading"):
        store.fetch_blob(digest, size=len(data))


def test_delay_within_the_timeout_passes(proxy: FaultProxy, blob: tuple[str, bytes]) -> None:
    digest, data = blob
    proxy.add("delay", method="GET", path=f"/blobs/{digest}", seconds=0.5)
    store = open_store(f"{proxy.host}/{REPO}:x", StoreOptions(timeout=10))
    assert store.fetch_blob(digest, size=len(data)) == data
    assert ("GET", f"/v2/{REPO}/blobs/{digest}", "delay") in proxy.log
