"""An environment image per spec, with and without the Debian root kept (issue 43: a harvest meets a new spec
at nearly every change of a repository's dependencies).

The docs' command, ``acx-oci env build oci:DIR:TAG --requirements FILE --python 3.11 --json``, runs for
``--specs`` distinct specs (pytest plus one more small package each) against a fresh image cache
(``ACX_OCI_CACHE_DIR``): the first build makes the Debian root (mmdebstrap), the later ones reuse it. The floor
is that first build, measured in the same run; the ratio is each later build's seconds over it. Each build's
own ``seconds`` (mmdebstrap, repack, ...) are printed too. Needs mmdebstrap, bubblewrap and PyPI.

Run: python benchmarks/env_root_cache.py [--specs 3] [--out rows.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXTRAS = ["iniconfig", "packaging", "pluggy", "six", "attrs"]


def build(work: Path, n: int, cache: Path) -> dict[str, object]:
    reqs = work / f"req-{n}.txt"
    reqs.write_text(f"pytest\n{EXTRAS[n % len(EXTRAS)]}\n")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "acx_oci", "env", "build", f"oci:{work / 'layout'}:s{n}",
                           "--requirements", str(reqs), "--python", "3.11", "--json"], capture_output=True, text=True,
                          env={**os.environ, "ACX_OCI_CACHE_DIR": str(cache)})
    took = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"env build {n}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    doc = json.loads(proc.stdout)
    return {"spec": n, "seconds": round(took, 1), "steps": doc.get("seconds"), "digest": doc.get("manifestDigest")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--specs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="acx-rootcache-") as tmp:
        work = Path(tmp)
        rows = [build(work, n, work / "cache") for n in range(args.specs)]
    floor = float(rows[0]["seconds"])  # type: ignore[arg-type]
    for r in rows:
        r["ratio"] = round(float(r["seconds"]) / floor, 3)  # type: ignore[arg-type]
        print(f"spec {r['spec']}: {r['seconds']} s (x{r['ratio']} of the first, which made the root) "
              f"steps {r['steps']}")
    later = [float(r["ratio"]) for r in rows[1:]]  # type: ignore[arg-type]
    if later:
        print(f"a later spec costs x{sum(later) / len(later):.2f} of the first (the floor, measured in this run)")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
