"""Thin CLI: parse, call the library, render. Each ``*_cmd`` module registers its commands when
the lazy ``acx-oci`` group first needs them (see :mod:`acx_oci.cli.main`).

Example::

    from acx_oci.cli import main

    main(["--version"], prog_name="acx-oci")  # exits 0 after printing the version
"""

from acx_oci.cli.main import load_all, main

__all__ = ["load_all", "main"]
