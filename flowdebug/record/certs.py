"""The forward proxy's certificate authority: ``flowdebug record --forward`` reads an
intercepted host's TLS with a certificate for that host signed by a CA of its own, which the
agent's runtime must trust (``flowdebug record --ca`` says how).

The CA is made once and kept in a folder (``$XDG_DATA_HOME/flowdebug/ca`` by default, beside the
sessions): ``flowdebug-ca.pem`` (the certificate, for Node's ``NODE_EXTRA_CA_CERTS``, which adds
to its own list), ``flowdebug-ca-key.pem`` (its key, readable by its owner only) and
``flowdebug-ca-bundle.pem``: the system's trusted CAs followed by this one, for the variables
that *replace* the list (Python's ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE`` and botocore's
``AWS_CA_BUNDLE``, curl's
``--cacert``), so the hosts passed through untouched still verify.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import threading
from pathlib import Path

import certifi
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from flowdebug.store.db import default_path

CA_NAME = "flowdebug recording proxy CA"
CA_YEARS = 10
LEAF_DAYS = 365  # clients refuse leaf certificates valid for much longer (Apple: 398 days)


def default_dir() -> Path:
    """``$XDG_DATA_HOME/flowdebug/ca``, else ``~/.local/share/flowdebug/ca``."""
    return default_path().parent / "ca"


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _system_roots() -> str:
    paths = ssl.get_default_verify_paths()
    return paths.cafile if paths.cafile and os.path.isfile(paths.cafile) else certifi.where()


class Authority:
    """The CA in ``directory`` (made there on first use) and the TLS server context of each
    host it is asked for, made once per host."""

    def __init__(self, directory: Path | None = None):
        self.directory = directory or default_dir()
        self.cert_path = self.directory / "flowdebug-ca.pem"
        self.key_path = self.directory / "flowdebug-ca-key.pem"
        self.bundle_path = self.directory / "flowdebug-ca-bundle.pem"
        self._lock = threading.Lock()
        self._contexts: dict[str, ssl.SSLContext] = {}
        if not (self.cert_path.exists() and self.key_path.exists()):
            self._make()
        key = serialization.load_pem_private_key(self.key_path.read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        self._key = key
        self._cert = x509.load_pem_x509_certificate(self.cert_path.read_bytes())
        if not self.bundle_path.exists():
            roots = Path(_system_roots()).read_bytes().rstrip(b"\n")
            self.bundle_path.write_bytes(roots + b"\n" + self.cert_path.read_bytes())

    def _make(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=365 * CA_YEARS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .sign(key, hashes.SHA256())
        )
        _write_private(self.key_path, _pem(key))
        self.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        self.bundle_path.unlink(missing_ok=True)

    def context(self, host: str) -> ssl.SSLContext:
        """A TLS server context presenting a certificate for ``host`` (HTTP/1.1 only)."""
        with self._lock:
            if host not in self._contexts:
                self._contexts[host] = self._leaf(host)
            return self._contexts[host]

    def _leaf(self, host: str) -> ssl.SSLContext:
        key = ec.generate_private_key(ec.SECP256R1())
        try:
            alt: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            alt = x509.DNSName(host)
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=LEAF_DAYS))
            .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), False
            )
            .sign(self._key, hashes.SHA256())
        )
        hosts = self.directory / "hosts"
        hosts.mkdir(exist_ok=True)
        chain = hosts / f"{host}.pem"
        pem = cert.public_bytes(serialization.Encoding.PEM) + self.cert_path.read_bytes()
        _write_private(chain, _pem(key) + pem)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain)
        context.set_alpn_protocols(["http/1.1"])  # the recording proxy speaks HTTP/1.1
        return context

    def instructions(self) -> str:
        """Where the CA is and how to make each runtime trust it."""
        return (
            f"flowdebug's CA certificate: {self.cert_path}\n"
            f"with the system's CAs (for variables that replace the list): {self.bundle_path}\n"
            "\n"
            "Trust it in the agent's environment, then set HTTPS_PROXY to the forward proxy:\n"
            f"  Python (httpx, requests, the vendor SDKs):\n"
            f"    export SSL_CERT_FILE={self.bundle_path}\n"
            f"    export REQUESTS_CA_BUNDLE={self.bundle_path}\n"
            f"    export AWS_CA_BUNDLE={self.bundle_path}  (boto3, the AWS CLI)\n"
            f"  Node:\n"
            f"    export NODE_EXTRA_CA_CERTS={self.cert_path}\n"
            f"  curl:\n"
            f"    curl --cacert {self.bundle_path} --proxy http://127.0.0.1:PORT https://...\n"
            "\n"
            "The key beside it signs a certificate for any host: keep it to yourself, and "
            "delete the folder to make a new CA."
        )
