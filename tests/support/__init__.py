"""Shared test helpers (imported by test modules; test modules never import each other).

* :mod:`.cli`            ``cli()`` runners for the ``acx-oci`` click group, plus ``ok()``
* :mod:`.registry`       starts a real CNCF Distribution registry on 127.0.0.1
* :mod:`.env`            CI / slow switches, ``repeats()`` for stress tests, the conformance vectors lookup
* :mod:`.memprobe`       a blob push + download in a fresh process, reporting its own peak RSS (VmHWM)
* :mod:`.forgery_world`  the in-memory signed level credential world (verify/credential/vc tests)
* :mod:`.policy_world`   the registry world for ``policy check`` and the gateway
* :mod:`.attest_world`   the registry world for ``acx-oci attest``
* :mod:`.resolve_world`  the registry world for resolve end to end, and the OCI layout world
"""
