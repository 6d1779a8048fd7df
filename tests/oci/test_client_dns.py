"""Name resolution is inside a request's time: ``getaddrinfo`` blocks with no socket for the guard to cut, so
a registry whose name server answers slowly held a request (and the command) past ``--timeout`` and
``--deadline``. The slow resolver is simulated by wrapping ``socket.getaddrinfo`` for one name (a resolver
stand-in: nothing on this machine serves DNS); every other name resolves as usual.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from acx_oci.errors import DeadlineExceeded, RegistryError
from acx_oci.oci import StoreOptions, open_store
from acx_oci.timeutil import Deadline, deadline_scope

SLOW = "slow-dns.invalid"


@pytest.fixture
def slow_resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    real = socket.getaddrinfo
    release = threading.Event()

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == SLOW:
            release.wait(30)
            raise socket.gaierror(socket.EAI_NONAME, "slow and unknown")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield release
    release.set()


def test_a_slow_name_server_is_cut_at_the_deadline(slow_resolver: threading.Event) -> None:
    store = open_store(f"{SLOW}:5000/acx/x:1", StoreOptions(timeout=30, plain_http=True, retries=0))
    start = time.monotonic()
    with deadline_scope(Deadline.after(1.5)), pytest.raises(DeadlineExceeded):
        store.fetch_manifest_raw("1")
    took = time.monotonic() - start
    assert took < 1.5 + 1, f"took {took:.1f} s"


def test_a_slow_name_server_is_cut_at_the_request_timeout(slow_resolver: threading.Event) -> None:
    store = open_store(f"{SLOW}:5000/acx/x:1", StoreOptions(timeout=1.0, plain_http=True, retries=0))
    start = time.monotonic()
    with pytest.raises(RegistryError, match="not completed within 1 s"):
        store.fetch_manifest_raw("1")
    assert time.monotonic() - start < 1 + 1


def test_an_unknown_name_is_still_cannot_resolve_and_localhost_still_connects(registry: str) -> None:
    with pytest.raises(RegistryError, match="cannot resolve host"):
        open_store("no-such-host.invalid:5000/acx/x:1", StoreOptions(timeout=5, plain_http=True)).list_tags()
    port = registry.rsplit(":", 1)[1]
    assert open_store(f"localhost:{port}/acx/never-pushed:1", StoreOptions(timeout=5)).list_tags() == []
