"""TLS contexts from Kafka's ssl.* configs, real handshakes between them, and SSL principals."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from kafkacore.config.defs import ConfigError
from kafkacore.security.ssl import (
    ANONYMOUS,
    NoMatchingRuleError,
    SslPrincipalMapper,
    client_context,
    listener_ssl_configs,
    peer_principal,
    server_context,
    subject_dn,
)
from support.certs import Pki, make_pki, self_signed_der

CLIENT_DN = "CN=alice,OU=Engineering,O=Kafkacore Test,C=US"


@pytest.fixture(scope="module")
def pki() -> Pki:
    return make_pki()


class Handshake:
    """The outcome of one TLS handshake over a socketpair, seen from both ends."""

    def __init__(self) -> None:
        self.server_principal: str | None = None
        self.server_error: BaseException | None = None
        self.client_error: BaseException | None = None
        self.version: str | None = None
        self.echo: bytes | None = None


def handshake(
    server: ssl.SSLContext,
    client: ssl.SSLContext,
    server_hostname: str = "localhost",
    mapper: SslPrincipalMapper | None = None,
) -> Handshake:
    result = Handshake()
    a, b = socket.socketpair()
    a.settimeout(10)
    b.settimeout(10)

    def serve() -> None:
        try:
            with server.wrap_socket(a, server_side=True) as tls:
                result.server_principal = peer_principal(tls, mapper)
                tls.sendall(tls.recv(5))
        except (ssl.SSLError, OSError) as e:
            result.server_error = e

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with client.wrap_socket(b, server_hostname=server_hostname) as tls:
            result.version = tls.version()
            tls.sendall(b"hello")
            result.echo = tls.recv(5)
    except (ssl.SSLError, OSError) as e:
        result.client_error = e
        b.close()
    thread.join(10)
    a.close()
    return result


# ---------------------------------------------------------------------------------------------
# Handshakes


@pytest.mark.parametrize(
    ("client_auth", "with_cert", "principal"),
    [
        ("none", True, ANONYMOUS),
        ("none", False, ANONYMOUS),
        ("requested", True, CLIENT_DN),
        ("requested", False, ANONYMOUS),
        ("required", True, CLIENT_DN),
    ],
)
def test_handshake_principal(pki: Pki, client_auth: str, with_cert: bool, principal: str) -> None:
    result = handshake(
        server_context(pki.server_ssl_configs(client_auth)),
        client_context(pki.client_ssl_configs(with_cert)),
    )
    assert result.client_error is None and result.server_error is None
    assert result.echo == b"hello"
    assert result.server_principal == principal
    assert result.version == "TLSv1.3"


def test_required_client_auth_refuses_a_client_without_certificate(pki: Pki) -> None:
    result = handshake(
        server_context(pki.server_ssl_configs("required")),
        client_context(pki.client_ssl_configs(False)),
    )
    assert result.server_error is not None
    assert result.server_principal is None


def test_client_cert_from_an_untrusted_ca_is_refused(pki: Pki) -> None:
    configs = pki.server_ssl_configs(
        "required", **{"ssl.truststore.certificates": pki.other_ca.cert_pem}
    )
    result = handshake(server_context(configs), client_context(pki.client_ssl_configs()))
    assert result.server_error is not None
    assert result.server_principal is None


def test_client_refuses_a_server_its_truststore_does_not_trust(pki: Pki) -> None:
    client = client_context(
        pki.client_ssl_configs(**{"ssl.truststore.certificates": pki.other_ca.cert_pem})
    )
    result = handshake(server_context(pki.server_ssl_configs()), client)
    assert isinstance(result.client_error, ssl.SSLCertVerificationError)


def test_endpoint_identification(pki: Pki) -> None:
    server = server_context(pki.server_ssl_configs())
    wrong_host = handshake(
        server, client_context(pki.client_ssl_configs()), server_hostname="broker.example"
    )
    assert isinstance(wrong_host.client_error, ssl.SSLCertVerificationError)
    assert "broker.example" in str(wrong_host.client_error)
    unchecked = client_context(
        pki.client_ssl_configs(**{"ssl.endpoint.identification.algorithm": ""})
    )
    assert not unchecked.check_hostname
    ok = handshake(server, unchecked, server_hostname="broker.example")
    assert ok.client_error is None and ok.echo == b"hello"


def test_client_protocol_caps_the_version(pki: Pki) -> None:
    server = server_context(pki.server_ssl_configs())
    result = handshake(
        server, client_context(pki.client_ssl_configs(**{"ssl.protocol": "TLSv1.2"}))
    )
    assert result.client_error is None
    assert result.version == "TLSv1.2"
    result = handshake(server, client_context(pki.client_ssl_configs(**{"ssl.protocol": "TLS"})))
    assert result.version == "TLSv1.3"


def test_enabled_protocols_without_overlap_fail(pki: Pki) -> None:
    server = server_context(pki.server_ssl_configs(**{"ssl.enabled.protocols": "TLSv1.3"}))
    assert server.minimum_version == ssl.TLSVersion.TLSv1_3
    client = client_context(pki.client_ssl_configs(**{"ssl.enabled.protocols": "TLSv1.2"}))
    assert client.maximum_version == ssl.TLSVersion.TLSv1_2
    result = handshake(server, client)
    assert result.client_error is not None


def test_cipher_suites_by_java_name(pki: Pki) -> None:
    suites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
    server = server_context(
        pki.server_ssl_configs(**{"ssl.cipher.suites": suites, "ssl.enabled.protocols": "TLSv1.2"})
    )
    assert [c["name"] for c in server.get_ciphers() if c["protocol"] == "TLSv1.2"] == [
        "ECDHE-ECDSA-AES128-GCM-SHA256"
    ]
    result = handshake(server, client_context(pki.client_ssl_configs()))
    assert result.client_error is None and result.version == "TLSv1.2"


# ---------------------------------------------------------------------------------------------
# Stores from files and encrypted keys


@pytest.fixture
def pem_files(pki: Pki, tmp_path: Path) -> Iterator[dict[str, Path]]:
    keystore = tmp_path / "server.pem"
    keystore.write_text(pki.server.key_pem + pki.server.cert_pem)
    encrypted = tmp_path / "client-encrypted.pem"
    encrypted.write_text(pki.client.encrypted_key_pem("s3cret") + pki.client.cert_pem)
    truststore = tmp_path / "ca.pem"
    truststore.write_text(pki.ca.cert_pem)
    yield {"server": keystore, "client": encrypted, "ca": truststore}


def test_stores_from_files_and_encrypted_key(pki: Pki, pem_files: dict[str, Path]) -> None:
    server = server_context(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pem_files["server"]),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pem_files["ca"]),
            "ssl.client.auth": "required",
        }
    )
    client = client_context(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pem_files["client"]),
            "ssl.key.password": "s3cret",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pem_files["ca"]),
        }
    )
    result = handshake(server, client)
    assert result.client_error is None and result.server_error is None
    assert result.server_principal == CLIENT_DN


def test_inline_encrypted_key(pki: Pki) -> None:
    configs = pki.client_ssl_configs(
        **{"ssl.keystore.key": pki.client.encrypted_key_pem("pw"), "ssl.key.password": "pw"}
    )
    result = handshake(server_context(pki.server_ssl_configs("required")), client_context(configs))
    assert result.server_principal == CLIENT_DN


def test_wrong_key_password(pki: Pki, pem_files: dict[str, Path]) -> None:
    configs = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pem_files["client"]),
        "ssl.key.password": "wrong",
    }
    with pytest.raises(ConfigError) as e:
        client_context({**pki.client_ssl_configs(False), **configs})
    assert e.value.name == "ssl.key.password"
    assert "wrong" not in str(e.value) and "[hidden]" in str(e.value)


def test_encrypted_key_without_password(pki: Pki, pem_files: dict[str, Path]) -> None:
    with pytest.raises(ConfigError) as e:
        client_context(
            {
                **pki.client_ssl_configs(False),
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(pem_files["client"]),
            }
        )
    assert e.value.name == "ssl.key.password"
    assert "encrypted" in str(e.value)


def test_properties_continuation_indentation_is_tolerated(pki: Pki) -> None:
    indented = "\n".join("    " + line for line in pki.ca.cert_pem.splitlines())
    client_context(
        pki.client_ssl_configs(**{"ssl.truststore.certificates": "\n" + indented.strip()})
    )


# ---------------------------------------------------------------------------------------------
# Principals


def test_subject_dn_is_rfc2253_most_specific_first(pki: Pki) -> None:
    der = ssl.PEM_cert_to_DER_cert(pki.client.cert_pem)
    assert subject_dn(der) == CLIENT_DN


def _attr(oid: x509.ObjectIdentifier, value: str) -> x509.NameAttribute:
    return x509.NameAttribute(oid, value)


# Expected strings are what JDK 17's X500Principal.getName() printed for the same certificates.
@pytest.mark.parametrize(
    ("rdns", "expected"),
    [
        (
            [
                [_attr(NameOID.COMMON_NAME, "a")],
                [_attr(NameOID.EMAIL_ADDRESS, "alice@example.com")],
            ],
            "1.2.840.113549.1.9.1=#1611616c696365406578616d706c652e636f6d,CN=a",
        ),
        (
            [
                [_attr(NameOID.COMMON_NAME, ' #a=b,c+d"e\\f<g>h;i ')],
                [_attr(NameOID.ORGANIZATION_NAME, "#lead")],
            ],
            'O=\\#lead,CN=\\ \\#a\\=b\\,c\\+d\\"e\\\\f\\<g\\>h\\;i\\ ',
        ),
        ([[_attr(NameOID.COMMON_NAME, "  x  ")]], "CN=\\ \\ x\\ \\ "),
        ([[_attr(NameOID.COMMON_NAME, "a\nb\tc")]], "CN=a\nb\tc"),
        (
            [
                [_attr(NameOID.COMMON_NAME, "a"), _attr(NameOID.USER_ID, "b")],
                [_attr(NameOID.ORGANIZATION_NAME, "o")],
            ],
            "O=o,CN=a+UID=b",
        ),
        (
            [
                [_attr(NameOID.DOMAIN_COMPONENT, "com")],
                [_attr(NameOID.DOMAIN_COMPONENT, "example")],
                [_attr(NameOID.LOCALITY_NAME, "Paris")],
                [_attr(NameOID.STATE_OR_PROVINCE_NAME, "IDF")],
                [_attr(NameOID.STREET_ADDRESS, "1 rue")],
                [_attr(NameOID.USER_ID, "u1")],
                [_attr(NameOID.SERIAL_NUMBER, "42")],
                [_attr(NameOID.TITLE, "boss")],
                [_attr(NameOID.COMMON_NAME, "Zoë")],
            ],
            "CN=Zoë,2.5.4.12=#0c04626f7373,2.5.4.5=#13023432,UID=u1,STREET=1 rue,ST=IDF,L=Paris,"
            "DC=example,DC=com",
        ),
        (
            [
                [_attr(NameOID.ORGANIZATIONAL_UNIT_NAME, "y" * 200)],
                [_attr(NameOID.COMMON_NAME, "L" * 60)],
            ],
            "CN=" + "L" * 60 + ",OU=" + "y" * 200,
        ),
    ],
)
def test_subject_dn_as_java_prints_it(rdns: list[list[x509.NameAttribute]], expected: str) -> None:
    name = x509.Name([x509.RelativeDistinguishedName(rdn) for rdn in rdns])
    assert subject_dn(self_signed_der(name)) == expected


def test_subject_dn_of_garbage() -> None:
    with pytest.raises(ValueError, match=r"not a DER X\.509 certificate"):
        subject_dn(b"\x30\x05\x30\x03\x02")


def test_mapping_rules_in_a_handshake(pki: Pki) -> None:
    mapper = SslPrincipalMapper.from_configs(
        {"ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L"}
    )
    result = handshake(
        server_context(pki.server_ssl_configs("required")),
        client_context(pki.client_ssl_configs()),
        mapper=mapper,
    )
    assert result.server_principal == "alice@engineering"


DN = "CN=Kafka-Server1,OU=ServiceUsers,O=Org,C=US"


@pytest.mark.parametrize(
    ("rules", "dn", "expected"),
    [
        (None, DN, DN),
        ("DEFAULT", DN, DN),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", DN, "Kafka-Server1"),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L", DN, "kafka-server1"),
        ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/U", DN, "KAFKA-SERVER1"),
        ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),C=(.*?)$/$1@$2/L", DN, "kafka-server1@serviceusers"),
        # first matching rule wins; a rule that does not match the whole DN is skipped
        (
            "RULE:^CN=(.*?),OU=Admins.*$/admin/, RULE:^CN=(.*?),.*$/$1/, DEFAULT",
            DN,
            "Kafka-Server1",
        ),
        ("RULE:^OU=.*$/x/,DEFAULT", DN, DN),
        ("RULE:CN=Kafka/short/, DEFAULT", DN, DN),
        # escaped slash in pattern and replacement
        ("RULE:^CN=([^,]*),.*$/users\\/$1/", DN, "users/Kafka-Server1"),
        # a back reference to a missing group stays literal; $12 with one group is $1 then "2"
        ("RULE:^CN=([^,]*),.*$/$1:$3/", DN, "Kafka-Server1:$3"),
        ("RULE:^CN=([^,]*),.*$/$12/", DN, "Kafka-Server12"),
        # an escaped comma inside a CN
        (
            r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT",
            r"CN=Tkac\, Adam,OU=ITZ,DC=cz",
            r"Tkac\, Adam",
        ),
        # Java's replaceAll: a pattern that also matches the empty tail replaces twice
        ("RULE:.*/X/", "CN=a", "XX"),
        ("RULE:^(.*)$/$1$0x/", "CN=a", "CN=aCN=ax"),
        ("RULE:^CN=([a-z]+),(.*)$/$2$1$3/L", "CN=abc,O=X", "o=xabc$3"),
        ("RULE:CN=(.*)/$2$1/U,", "CN=ab", "$2AB"),
        ("RULE:^CN=([a-z]),.*$/\\$1/", "CN=a,O=b", "$1"),
        # Java's named groups
        ("RULE:^CN=(?<who>[a-z]+),.*$/${who}!/", "CN=abc,O=x", "abc!"),
        ("RULE:^CN=[a-z]+,.*$/$0/", "CN=abc,O=x", "CN=abc,O=x"),
        # whitespace and empty rules around commas are ignored
        ("  RULE:^CN=([^,]*),.*$/$1/L ,  , DEFAULT  ", DN, "kafka-server1"),
    ],
)
def test_mapping_rules(rules: str | None, dn: str, expected: str) -> None:
    assert SslPrincipalMapper.from_rules(rules).name(dn) == expected


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("RULE:^CN=([a-z]),.*$/$1$/", "Illegal group reference: group index is missing"),
        ("RULE:^CN=([a-z]+),.*$/$x/", "Illegal group reference"),
        ("RULE:^CN=[a-z]+,.*$/$1/", "No group 1"),
    ],
)
def test_replacement_errors_surface_when_mapping(rules: str, message: str) -> None:
    """Kafka accepts these rules at startup and fails the authentication that uses them."""
    mapper = SslPrincipalMapper.from_rules(rules)
    with pytest.raises(ValueError) as e:
        mapper.name("CN=a,O=b")
    assert str(e.value) == message


def test_no_matching_rule() -> None:
    mapper = SslPrincipalMapper.from_rules("RULE:^CN=(.*?),OU=Admins.*$/$1/")
    with pytest.raises(NoMatchingRuleError) as e:
        mapper.name("CN=x,OU=Users")
    # Kafka's message, word for word
    assert str(e.value) == "No rules apply to CN=x,OU=Users, rules [RULE:^CN=(.*?),OU=Admins.*$/$1]"
    named = SslPrincipalMapper.from_rules("RULE:^CN=(?<n>x)$/${n}/L, DEFAULT")
    assert repr(named) == "SslPrincipalMapper(rules = [RULE:^CN=(?<n>x)$/${n}/L, DEFAULT])"


@pytest.mark.parametrize(
    ("rules", "fragment"),
    [
        ("RULE:^CN=(.*?)$/$1/l", "unmatched substring: `l`"),
        ("RULE:^CN=(.*?)$/$1/LU", "unmatched substring: `U`"),
        ("RULE:^CN=(.*?)$/$1", "Invalid rule"),
        ("DEFAULTS", "unmatched substring: `S`"),
        ("RULE:^CN=((.*?)$/$1/", "Invalid rule"),
        ("garbage", "Invalid rule"),
        ("default", "unmatched substring: `default`"),
        ("DEFAULT/L", "unmatched substring: `/L`"),
        ("RULE:CN=(.*?),OU=ServiceUsers.*/L", "Invalid rule"),
        ("RULE:CN=(.*?),OU=ServiceUsers.*/$1/L/U", "unmatched substring: `/U`"),
    ],
)
def test_bad_mapping_rules(rules: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as e:
        SslPrincipalMapper.from_rules(rules)
    assert e.value.name == "ssl.principal.mapping.rules"
    assert fragment in str(e.value)


# ---------------------------------------------------------------------------------------------
# Bad configs


@pytest.mark.parametrize(
    ("side", "change", "name", "fragment"),
    [
        (
            "server",
            {"ssl.client.auth": "sometimes"},
            "ssl.client.auth",
            "String must be one of: required, requested, none",
        ),
        # Kafka's ValidString is case-sensitive
        ("server", {"ssl.client.auth": "REQUIRED"}, "ssl.client.auth", "Invalid value REQUIRED"),
        ("server", {"ssl.keystore.type": "JKS"}, "ssl.keystore.type", "only PEM"),
        ("server", {"ssl.keystore.type": None}, "ssl.keystore.type", "Invalid value JKS"),
        ("server", {"ssl.truststore.type": "PKCS12"}, "ssl.truststore.type", "only PEM"),
        (
            "server",
            {"ssl.keystore.key": None},
            "ssl.keystore.key",
            "required when ssl.keystore.certificate.chain",
        ),
        (
            "server",
            {"ssl.keystore.certificate.chain": None},
            "ssl.keystore.certificate.chain",
            "required when",
        ),
        (
            "server",
            {"ssl.keystore.key": None, "ssl.keystore.certificate.chain": None},
            "ssl.keystore.location",
            "needs",
        ),
        ("server", {"ssl.keystore.key": "not a key"}, "ssl.keystore.key", "PKCS#8"),
        (
            "server",
            {"ssl.keystore.location": "server.pem"},
            "ssl.keystore.location",
            "cannot be combined",
        ),
        (
            "server",
            {"ssl.truststore.certificates": "junk"},
            "ssl.truststore.certificates",
            "BEGIN CERTIFICATE",
        ),
        (
            "server",
            {"ssl.enabled.protocols": "TLSv1.2,SSLv3"},
            "ssl.enabled.protocols",
            "unknown protocol SSLv3",
        ),
        (
            "server",
            {"ssl.enabled.protocols": "TLSv1.1,TLSv1.3"},
            "ssl.enabled.protocols",
            "consecutive",
        ),
        (
            "server",
            {"ssl.cipher.suites": "TLS_FAKE_WITH_NOTHING"},
            "ssl.cipher.suites",
            "TLS_FAKE_WITH_NOTHING",
        ),
        (
            "client",
            {"ssl.endpoint.identification.algorithm": "ldap"},
            "ssl.endpoint.identification.algorithm",
            "https",
        ),
        (
            "client",
            {"ssl.protocol": "SSLv3"},
            "ssl.protocol",
            "Invalid value SSLv3 for configuration ssl.protocol",
        ),
        ("client", {"ssl.protocol": "TLSv1.1"}, "ssl.protocol", "below every protocol"),
        (
            "client",
            {"ssl.truststore.location": "/nonexistent/ca.pem", "ssl.truststore.certificates": None},
            "ssl.truststore.location",
            "cannot read the file",
        ),
    ],
)
def test_bad_configs(pki: Pki, side: str, change: dict[str, Any], name: str, fragment: str) -> None:
    configs = pki.server_ssl_configs() if side == "server" else pki.client_ssl_configs()
    for key, value in change.items():
        if value is None:
            configs.pop(key, None)
        else:
            configs[key] = value
    build = server_context if side == "server" else client_context
    with pytest.raises(ConfigError) as e:
        build(configs)
    assert e.value.name == name
    assert fragment in str(e.value)
    assert pki.server.key_pem not in str(e.value)


def test_secret_values_are_hidden_in_errors(pki: Pki) -> None:
    with pytest.raises(ConfigError) as e:
        server_context(pki.server_ssl_configs(**{"ssl.keystore.key": "secret-not-a-key"}))
    assert str(e.value).startswith("Invalid value [hidden] for configuration ssl.keystore.key")


def test_traditional_key_format_is_refused(pki: Pki) -> None:
    with pytest.raises(ConfigError, match="PKCS#8"):
        server_context(
            pki.server_ssl_configs(**{"ssl.keystore.key": pki.server.pkcs1_like_key_pem()})
        )


def test_key_not_matching_certificate(pki: Pki) -> None:
    with pytest.raises(ConfigError) as e:
        server_context(pki.server_ssl_configs(**{"ssl.keystore.key": pki.client.key_pem}))
    assert e.value.name == "ssl.keystore.key"


def test_listener_prefix_overrides_the_fallback(pki: Pki) -> None:
    configs = {
        "ssl.client.auth": "none",
        "ssl.keystore.type": "PEM",
        "listener.name.internal.ssl.client.auth": "required",
        "listener.name.other.ssl.client.auth": "requested",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
        "num.network.threads": "3",
    }
    assert listener_ssl_configs(configs, "INTERNAL") == {
        "ssl.client.auth": "required",
        "ssl.keystore.type": "PEM",
    }
    assert listener_ssl_configs(configs, "EXTERNAL")["ssl.client.auth"] == "none"
    server = server_context(
        listener_ssl_configs({**pki.server_ssl_configs(), **configs}, "INTERNAL")
    )
    assert server.verify_mode == ssl.CERT_REQUIRED
