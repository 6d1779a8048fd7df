"""Concrete solvers: the reference stand-in and the ones that run an agent (the edge: processes, files).
This face is what other wings use:

* :class:`RomSolver` (the cartridge's ROM, played in the sandbox), :class:`ReferenceSolver` (the deterministic
  stand-in), :class:`RoutingSolver` (each task to its solver)
* the ROM on disk: ``new_rom_dir``, ``materialize_rom``, ``game_spec``, ``rom_descriptor``, ``sandbox_version``;
  the containment proofs ``prove`` and ``prove_game``
* remote play (a worker of a cluster): :class:`RomBundle` (what travels to a worker once per run), ``play_game``,
  ``EVENT_TOPIC``

Example::

    from acx_oci.solvers import materialize_rom, new_rom_dir

    rom_dir = materialize_rom(files, into=new_rom_dir())  # files: the ROM's {path: bytes}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.solvers.reference import ReferenceSolver
    from acx_oci.solvers.remote import EVENT_TOPIC, UNPROVEN, RomBundle, play_game, sandbox_version
    from acx_oci.solvers.rom import (
        RomSolver,
        game_spec,
        materialize_rom,
        new_rom_dir,
        prove,
        prove_game,
        rom_descriptor,
    )
    from acx_oci.solvers.routing import RoutingSolver
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "reference": ("ReferenceSolver",),
        "remote": ("EVENT_TOPIC", "RomBundle", "UNPROVEN", "play_game", "sandbox_version"),
        "rom": ("RomSolver", "game_spec", "materialize_rom", "new_rom_dir", "prove", "prove_game", "rom_descriptor"),
        "routing": ("RoutingSolver",),
    })

__all__ = ["EVENT_TOPIC", "UNPROVEN", "ReferenceSolver", "RomBundle", "RomSolver", "RoutingSolver", "game_spec",
           "materialize_rom", "new_rom_dir", "play_game", "prove", "prove_game", "rom_descriptor", "sandbox_version"]
