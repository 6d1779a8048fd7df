"""The verifier's transparency log: entries on disk in the tlog-tiles layout, published to a registry.

``entries`` (the leaf schema, canonical bytes), ``local`` (the append-only tree under
``STATE_DIR/log/``, signing and witnessing checkpoints), ``oci`` (publication as OCI artifacts,
the consumer's :class:`~acx_oci.services.translog.oci.LogReader`, the plain-file export).
"""
