"""ibprov's HTTP client and TLS, against an HTTPS server on 127.0.0.1 with a self-signed certificate made in the
test: verified by default, a certificate it cannot trust is one located error that names ``ca_file``; the CA
given as ``ca_file`` is trusted; ``verify_tls: false`` skips the check (a lab's choice)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pytest_httpserver import HTTPServer

from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.http import HttpSession

URL = ("subnet_manager", "switch", "url")


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that signs itself (a CA of its own), and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "leaf01-mgmt.test")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "switch.pem", directory / "switch.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@pytest.fixture
def tls(tmp_path: Path) -> Iterator[tuple[HTTPServer, Path]]:
    """An HTTPS server on 127.0.0.1 answering ``GET /ping``, and the certificate it presents."""
    cert_file, key_file = self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.expect_request("/ping").respond_with_json({"status": "OK"})
    server.start()
    try:
        yield server, cert_file
    finally:
        server.clear()
        server.stop()


def session(server: HTTPServer, **tls: object) -> HttpSession:
    return HttpSession(server.url_for("/").rstrip("/"), url_path=URL, what="switch leaf01", **tls)  # type: ignore[arg-type]


def test_the_server_really_speaks_https(tls: tuple[HTTPServer, Path]) -> None:
    server, _cert = tls
    assert server.url_for("/").startswith("https://127.0.0.1:")


def test_a_certificate_nobody_vouches_for_is_refused_with_an_error_naming_ca_file(
    tls: tuple[HTTPServer, Path],
) -> None:
    server, _cert = tls
    with pytest.raises(BackendError) as err:
        session(server, verify_tls=True).request("GET", "/ping")
    assert err.value.path == URL
    assert "not trusted" in err.value.message
    assert "ca_file" in err.value.message
    assert "switch leaf01" in err.value.message


def test_the_ca_given_as_ca_file_is_trusted(tls: tuple[HTTPServer, Path]) -> None:
    server, cert = tls
    answer = session(server, verify_tls=True, ca_file=str(cert)).request("GET", "/ping")
    assert (answer.status, answer.json()) == (200, {"status": "OK"})


def test_another_ca_as_ca_file_is_still_refused(tls: tuple[HTTPServer, Path], tmp_path: Path) -> None:
    server, _cert = tls
    other = tmp_path / "other"
    other.mkdir()
    other_cert, _key = self_signed(other)
    with pytest.raises(BackendError, match="ca_file"):
        session(server, verify_tls=True, ca_file=str(other_cert)).request("GET", "/ping")


def test_verify_tls_false_accepts_the_certificate_unchecked(tls: tuple[HTTPServer, Path]) -> None:
    server, _cert = tls
    answer = session(server, verify_tls=False).request("GET", "/ping")
    assert answer.status == 200
