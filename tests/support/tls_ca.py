"""A throwaway certificate authority for the gateway's TLS tests (real X.509 made with ``cryptography``).

Go clients (skopeo, the ORAS CLI) insist on a subjectAltName and on the CA's basic constraints, so the
certificates carry what a real deployment's would: a CA with ``cA=TRUE`` and keyCertSign, a server certificate
for ``127.0.0.1`` and ``localhost`` (serverAuth), and client certificates (clientAuth).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class Issued:
    """A certificate and its key, written as PEM files."""

    cert: Path
    key: Path


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


class ScratchCA:
    """A CA that issues server and client certificates into ``directory``."""

    def __init__(self, directory: Path, name: str = "acx test CA") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.dir = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        self.name = _name(name)
        self.cert = (x509.CertificateBuilder().subject_name(self.name).issuer_name(self.name)
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                     .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                  content_commitment=False, key_encipherment=False,
                                                  data_encipherment=False, key_agreement=False,
                                                  encipher_only=False, decipher_only=False), critical=True)
                     .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
                     .sign(self.key, hashes.SHA256()))
        self.pem = directory / f"{name.replace(' ', '-')}.pem"
        self.pem.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, stem: str, *, server: bool) -> Issued:
        """A leaf certificate: for 127.0.0.1/localhost (``server``), else a client certificate named ``stem``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        builder = (x509.CertificateBuilder().subject_name(_name(stem)).issuer_name(self.name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                                  critical=False)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server
                                                         else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        out = Issued(self.dir / f"{stem}.crt", self.dir / f"{stem}.key")
        out.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, out.key)
        return out
