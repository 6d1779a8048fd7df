"""Environment images: pinned root file systems as plain OCI images (build, safe unpack, cache by digest).

``build`` makes a minimal Debian root with mmdebstrap and pushes it as a reproducible one-layer OCI image;
``unpack`` holds the safety rules for applying layers; ``cache`` pulls by digest, unpacks once per manifest
digest and hands the sandbox a read-only root (:func:`prepare_image`).
"""

from acx_oci.envimage.cache import Prepared, default_cache_dir, prepare, prepare_image, prune
from acx_oci.envimage.unpack import Limits

__all__ = ["Limits", "Prepared", "default_cache_dir", "prepare", "prepare_image", "prune"]
