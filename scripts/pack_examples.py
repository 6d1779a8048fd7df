"""Pack testdata/bench-py and the example agents into acx_oci/examples/*.tar.gz (``acx-oci benchmark example``).

Reproducible: members sorted, mtime 0, owner 0:0, modes 0644/0755, gzip mtime 0, so the same tree packs to the
same bytes. Run after changing testdata/bench-py or testdata/agents: ``python3 scripts/pack_examples.py``
(tests/test_real_agent_page.py fails while the packed copy differs from testdata/).
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {
    "bench-py.tar.gz": (ROOT / "testdata" / "bench-py", None),
    "agents.tar.gz": (ROOT / "testdata" / "agents", ("simple_agent.py", "llm_agent.py")),
}


def files_of(src: Path, only: tuple[str, ...] | None) -> list[Path]:
    """The files an example ships: every regular file (no caches), or just ``only``."""
    if only is not None:
        return [src / n for n in only]
    return sorted(p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def pack(src: Path, only: tuple[str, ...] | None) -> bytes:
    """The tarball's bytes (see the module docstring for what makes them reproducible)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for p in files_of(src, only):
            info = tarfile.TarInfo(p.relative_to(src).as_posix())
            data = p.read_bytes()
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tf.addfile(info, io.BytesIO(data))
    return gzip.compress(buf.getvalue(), mtime=0)


if __name__ == "__main__":
    for name, (src, only) in SOURCES.items():
        out = ROOT / "acx_oci" / "examples" / name
        out.write_bytes(pack(src, only))
        print(f"{out.relative_to(ROOT)}: {out.stat().st_size} bytes")
