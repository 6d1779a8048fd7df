"""Thin CLI: parse, call the library, render. Each ``*_cmd`` module registers its commands when
the lazy ``acx-oci`` group first needs them (see :mod:`acx_oci.cli.main`)."""

from acx_oci.cli.main import load_all, main

__all__ = ["load_all", "main"]
