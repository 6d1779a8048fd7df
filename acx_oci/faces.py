"""A wing's declared face, loaded lazily (PEP 562): ``from acx_oci.model import Credential`` imports
``acx_oci.model.credential`` and nothing else of the wing, so a face costs a command no more than the deep
import it replaces (an eager ``__init__`` would load the whole wing: ``dask`` for any verifier name).

Each face ``__init__`` declares its names three times, kept in step by ``tests/core/test_faces.py``: the
``TYPE_CHECKING`` imports (what mypy checks callers against), the table given to :func:`lazy_face` (what runs)
and ``__all__``. Example::

    from typing import TYPE_CHECKING

    from acx_oci.faces import lazy_face

    if TYPE_CHECKING:
        from acx_oci.tlog.merkle import leaf_hash
    else:
        __getattr__, __dir__ = lazy_face(__name__, {"merkle": ("leaf_hash",)})

    __all__ = ["leaf_hash"]
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_face(package: str, table: Mapping[str, Iterable[str]]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``table`` maps a module (relative to the package, or absolute
    when it starts with ``acx_oci.``) to the names it gives the face. Each lookup imports the module (once:
    Python caches it) and reads the name there, so a monkeypatched name is seen as the module has it."""
    where = {name: module if module.startswith("acx_oci.") else f"{package}.{module}"
             for module, names in table.items() for name in names}

    def getattr_(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return getattr_, dir_
