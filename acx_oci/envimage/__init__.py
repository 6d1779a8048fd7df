"""Environment images: pinned root file systems as plain OCI images (build, safe unpack, cache by digest).

``build`` makes a minimal Debian root with mmdebstrap and pushes it as a reproducible one-layer OCI image;
``unpack`` holds the safety rules for applying layers; ``cache`` pulls by digest, unpacks once per manifest
digest and hands the sandbox a read-only root (:func:`prepare_image`).

Example::

    from acx_oci.envimage import prepare

    prepared = prepare("registry.example/envs/bookworm@sha256:...")  # pulled and unpacked once per digest
    print(prepared.root, prepared.cache_hit)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.envimage.bounded import read_toml
    from acx_oci.envimage.build import BuiltImage, build_image
    from acx_oci.envimage.cache import Prepared, default_cache_dir, prepare, prepare_image, prune
    from acx_oci.envimage.pyenv import DEFAULT_PYTHON, PYTHONS, RELEASED, spec_digest
    from acx_oci.envimage.requirement import admit, name_of, normalize, shown, sort_out
    from acx_oci.envimage.unpack import Limits
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "bounded": ("read_toml",),
        "build": ("BuiltImage", "build_image"),
        "cache": ("Prepared", "default_cache_dir", "prepare", "prepare_image", "prune"),
        "pyenv": ("DEFAULT_PYTHON", "PYTHONS", "RELEASED", "spec_digest"),
        "requirement": ("admit", "name_of", "normalize", "shown", "sort_out"),
        "unpack": ("Limits",),
    })

__all__ = ["DEFAULT_PYTHON", "PYTHONS", "RELEASED", "BuiltImage", "Limits", "Prepared", "admit", "build_image",
           "default_cache_dir", "name_of", "normalize", "prepare", "prepare_image", "prune", "read_toml", "shown",
           "sort_out", "spec_digest"]
