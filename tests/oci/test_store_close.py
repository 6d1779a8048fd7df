"""Stores are closed, and the registry client's HTTP transport can be injected.

The transport test wraps the real default adapter (guard, pools and all) and counts what goes through it
against the real test registry: nothing about the registry is simulated.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import pytest
import requests
from click.testing import CliRunner
from requests.adapters import BaseAdapter

from acx_oci.cli.common import store_for
from acx_oci.oci import MEDIA_MANIFEST, RegistryStore, Store, StoreOptions, build_manifest, open_store, parse_reference
from acx_oci.oci.layout import LayoutStore
from acx_oci.oci.registry.transport import default_adapter


class CountingAdapter(BaseAdapter):
    """The default adapter, with every request it sends and every close recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = default_adapter()
        self.sent: list[tuple[str, str]] = []
        self.closed = 0
        self.lock = threading.Lock()

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: float | tuple[float, float] | tuple[float, None] | None = None,
             verify: bool | str = True, cert: Any = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        with self.lock:
            self.sent.append((str(request.method), str(request.url)))
        return self.inner.send(request, stream=stream, timeout=timeout, verify=verify, cert=cert, proxies=proxies)

    def close(self) -> None:
        self.closed += 1
        self.inner.close()


def _pools(store: RegistryStore) -> int:
    adapter = store.transport.session.get_adapter(store.base)
    assert isinstance(adapter, requests.adapters.HTTPAdapter)
    return len(adapter.poolmanager.pools)


@pytest.mark.registry
def test_injected_transport_sees_every_request_and_is_closed_with_the_store(registry: str) -> None:
    adapter = CountingAdapter()
    ref = parse_reference(f"{registry}/seams/{uuid.uuid4().hex[:10]}:1")
    with RegistryStore(ref, StoreOptions(), adapter=adapter) as store:
        layer = store.push_blob(b"seams", "application/octet-stream")
        raw = build_manifest("application/vnd.acx.test", [layer])
        pushed = store.push_manifest(raw, MEDIA_MANIFEST, tag="1")
        assert store.fetch_manifest_raw("1")[2] == pushed.digest
        assert store.list_tags() == ["1"]
    methods = [m for m, _ in adapter.sent]
    assert all(url.startswith(f"http://{registry}/v2/") for _, url in adapter.sent), adapter.sent
    assert "PUT" in methods and methods.count("GET") >= 2, methods  # manifest fetch and tag list went through it
    assert any(url.endswith("/manifests/1") for m, url in adapter.sent if m == "PUT")
    assert adapter.closed >= 1  # leaving the ``with`` closed the session, which closed its adapter


@pytest.mark.registry
def test_default_transport_unchanged_and_close_releases_its_pools(registry: str) -> None:
    store = open_store(f"{registry}/seams/{uuid.uuid4().hex[:10]}")
    assert isinstance(store, RegistryStore)
    assert store.list_tags() == []
    assert _pools(store) == 1  # one keep-alive pool to the registry
    store.close()
    assert _pools(store) == 0
    store.close()  # twice is harmless
    assert store.list_tags() == []  # and a later request opens a fresh connection


def test_layout_store_is_a_context_manager(tmp_path: Path) -> None:
    with open_store(f"oci:{tmp_path / 'layout'}:1") as store:
        assert isinstance(store, LayoutStore)
        store.push_blob(b"x", "application/octet-stream")
    store.close()
    assert (tmp_path / "layout" / "oci-layout").is_file()


@pytest.mark.registry
def test_cli_store_is_closed_when_the_command_ends_even_on_error(registry: str) -> None:
    opened: list[Store] = []

    @click.command()
    def cmd() -> None:
        store = store_for(f"{registry}/seams/{uuid.uuid4().hex[:10]}")
        opened.append(store)
        store.list_tags()
        raise click.ClickException("boom")

    result = CliRunner().invoke(cmd, [])
    assert result.exit_code == 1 and "boom" in result.output
    store = opened[0]
    assert isinstance(store, RegistryStore)
    assert _pools(store) == 0
