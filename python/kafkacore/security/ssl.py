"""TLS for Kafka listeners and clients: :class:`ssl.SSLContext` objects from Kafka's
``ssl.*`` configs, and the ``User:`` principal Kafka derives from a peer certificate.

Supported configs (Kafka's ``SslConfigs`` / ``BrokerSecurityConfigs`` names):

* ``ssl.keystore.type=PEM`` with either inline PEM (KIP-651) ``ssl.keystore.certificate.chain``
  + ``ssl.keystore.key``, or ``ssl.keystore.location`` naming one PEM file holding key and chain.
  The key must be PKCS#8 (``BEGIN PRIVATE KEY`` or ``BEGIN ENCRYPTED PRIVATE KEY``); an
  encrypted key needs ``ssl.key.password``. ``JKS`` (Kafka's default type) and ``PKCS12`` are
  refused.
* ``ssl.truststore.type=PEM`` with ``ssl.truststore.certificates`` (inline) or
  ``ssl.truststore.location``.
* ``ssl.client.auth`` = ``none`` | ``requested`` | ``required`` (server side).
* ``ssl.enabled.protocols`` (default ``TLSv1.2,TLSv1.3``) and ``ssl.protocol`` (default
  ``TLSv1.3``; on the client it caps the version, as Kafka documents: ``TLSv1.2`` keeps a
  client off TLSv1.3).
* ``ssl.cipher.suites``: IANA names as Java spells them
  (``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256``) or OpenSSL names. Python cannot restrict TLSv1.3
  suites, so TLSv1.3 names are accepted and leave TLSv1.3 as OpenSSL configures it.
* ``ssl.endpoint.identification.algorithm`` = ``https`` (default: check the host name) or
  empty (client side).
* ``ssl.principal.mapping.rules`` (Kafka's ``SslPrincipalMapper``): ``DEFAULT`` and
  ``RULE:pattern/replacement/[LU]``, comma-separated, first match wins.

Every bad value raises :class:`~kafkacore.config.defs.ConfigError` naming key, value (secrets
print as ``[hidden]``) and the broken constraint. Contexts and mappers are immutable once built
and safe to share between threads.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kafkacore.config.defs import ConfigError, Password

__all__ = [
    "ANONYMOUS",
    "NoMatchingRuleError",
    "SslPrincipalMapper",
    "client_context",
    "listener_ssl_configs",
    "peer_principal",
    "server_context",
    "subject_dn",
]

KEYSTORE_TYPE: Final = "ssl.keystore.type"
KEYSTORE_LOCATION: Final = "ssl.keystore.location"
KEYSTORE_KEY: Final = "ssl.keystore.key"
KEYSTORE_CHAIN: Final = "ssl.keystore.certificate.chain"
KEY_PASSWORD: Final = "ssl.key.password"
TRUSTSTORE_TYPE: Final = "ssl.truststore.type"
TRUSTSTORE_LOCATION: Final = "ssl.truststore.location"
TRUSTSTORE_CERTIFICATES: Final = "ssl.truststore.certificates"
CLIENT_AUTH: Final = "ssl.client.auth"
ENABLED_PROTOCOLS: Final = "ssl.enabled.protocols"
PROTOCOL: Final = "ssl.protocol"
CIPHER_SUITES: Final = "ssl.cipher.suites"
ENDPOINT_IDENTIFICATION: Final = "ssl.endpoint.identification.algorithm"
PRINCIPAL_MAPPING_RULES: Final = "ssl.principal.mapping.rules"

#: Kafka's principal name when the peer sent no certificate.
ANONYMOUS: Final = "ANONYMOUS"

_SECRET_KEYS: Final = frozenset({KEYSTORE_KEY, KEY_PASSWORD})

_VERSIONS: Final[dict[str, ssl.TLSVersion]] = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_VERSION_ORDER: Final = ("TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3")

# IANA (Java) names of the suites OpenSSL offers by default, with OpenSSL's names.
_TLS12_SUITES: Final[dict[str, str]] = {
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384": "DHE-RSA-AES256-GCM-SHA384",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "DHE-RSA-AES128-GCM-SHA256",
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "DHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
}
_TLS13_SUITES: Final = frozenset(
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
)

_PKCS8_KEY: Final = re.compile(r"-----BEGIN (ENCRYPTED )?PRIVATE KEY-----")
_CERTIFICATE: Final = "-----BEGIN CERTIFICATE-----"
_PEM_BLOCK: Final = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)


def _normalize_pem(text: str) -> str:
    """PEM blocks with whitespace anywhere in the base64 body (indented ``.properties``
    continuation lines, one-line values from environment variables) rewrapped as OpenSSL wants
    them; text outside blocks is dropped. Kafka's PEM parser also ignores body whitespace."""
    blocks = []
    for m in _PEM_BLOCK.finditer(text):
        body = re.sub(r"\s+", "", m.group(2))
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        blocks.append(
            "\n".join([f"-----BEGIN {m.group(1)}-----", *lines, f"-----END {m.group(1)}-----", ""])
        )
    return "".join(blocks)


# ---------------------------------------------------------------------------------------------
# Reading config values


def _invalid(name: str, value: object, constraint: str) -> ConfigError:
    shown = Password(str(value)) if name in _SECRET_KEYS and value is not None else value
    return ConfigError(name, shown, constraint)


def _string(configs: Mapping[str, object], name: str, default: str | None = None) -> str | None:
    value = configs.get(name)
    if value is None:
        return default
    if isinstance(value, Password):
        return value.value
    if isinstance(value, str):
        # A PEM value continued over .properties lines may keep the layout's indentation.
        return value.strip()
    raise _invalid(name, value, "expected a string")


def _list(configs: Mapping[str, object], name: str, default: Sequence[str]) -> list[str]:
    value = configs.get(name)
    if value is None:
        return list(default)
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if isinstance(value, Sequence) and all(isinstance(item, str) for item in value):
        return [str(item).strip() for item in value if str(item).strip()]
    raise _invalid(name, value, "expected a comma-separated list")


def _read_file(name: str, path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read()
    except OSError as e:
        raise _invalid(name, path, f"cannot read the file ({e.strerror})") from None
    except UnicodeDecodeError:
        raise _invalid(name, path, "the file is not PEM text") from None


# ---------------------------------------------------------------------------------------------
# Key stores and trust stores


@dataclass(frozen=True)
class _KeyStore:
    chain_pem: str
    key_pem: str
    password: str | None


def _store_type(configs: Mapping[str, object], name: str) -> str:
    store_type = _string(configs, name, "JKS") or "JKS"
    if store_type.upper() != "PEM":
        raise _invalid(
            name,
            store_type,
            "kafkacore supports only PEM stores (JKS and PKCS12 need a JVM keystore)",
        )
    return "PEM"


def _key_store(configs: Mapping[str, object]) -> _KeyStore | None:
    location = _string(configs, KEYSTORE_LOCATION) or None
    key = _string(configs, KEYSTORE_KEY) or None
    chain = _string(configs, KEYSTORE_CHAIN) or None
    if location is None and key is None and chain is None:
        return None
    _store_type(configs, KEYSTORE_TYPE)
    password = _string(configs, KEY_PASSWORD) or None
    if location is not None:
        if key is not None or chain is not None:
            raise _invalid(
                KEYSTORE_LOCATION,
                location,
                f"cannot be combined with {KEYSTORE_KEY} or {KEYSTORE_CHAIN}",
            )
        text = _read_file(KEYSTORE_LOCATION, location)
        key_match = _PKCS8_KEY.search(text)
        if key_match is None:
            raise _invalid(KEYSTORE_LOCATION, location, "the file holds no PKCS#8 private key")
        if _CERTIFICATE not in text:
            raise _invalid(KEYSTORE_LOCATION, location, "the file holds no certificate")
        store = _KeyStore(_normalize_pem(text), _normalize_pem(text), password)
        where = KEYSTORE_LOCATION
    else:
        if key is None:
            raise _invalid(KEYSTORE_KEY, None, f"required when {KEYSTORE_CHAIN} is set")
        if chain is None:
            raise _invalid(KEYSTORE_CHAIN, None, f"required when {KEYSTORE_KEY} is set")
        key_match = _PKCS8_KEY.search(key)
        if key_match is None:
            raise _invalid(
                KEYSTORE_KEY, key, "expected a PKCS#8 PEM private key (BEGIN PRIVATE KEY)"
            )
        if _CERTIFICATE not in chain:
            raise _invalid(KEYSTORE_CHAIN, chain, "expected PEM certificates (BEGIN CERTIFICATE)")
        store = _KeyStore(_normalize_pem(chain), _normalize_pem(key), password)
        where = KEYSTORE_KEY
    if key_match.group(1) and password is None:
        raise _invalid(
            KEY_PASSWORD, None, f"required because the private key in {where} is encrypted"
        )
    return store


def _load_key_store(ctx: ssl.SSLContext, store: _KeyStore, where: str) -> None:
    # OpenSSL loads keys only from files: write inline PEM to a private directory, load, delete.
    with tempfile.TemporaryDirectory(prefix="kafkacore-ssl-") as tmp:
        chain_path = os.path.join(tmp, "chain.pem")
        key_path = os.path.join(tmp, "key.pem")
        for path, text in ((chain_path, store.chain_pem), (key_path, store.key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(text)
        try:
            ctx.load_cert_chain(chain_path, key_path, password=store.password or "")
        except ssl.SSLError as e:
            if store.password is not None:
                raise _invalid(
                    KEY_PASSWORD,
                    store.password,
                    f"cannot decrypt the key or it does not match the certificate ({e.reason})",
                ) from None
            raise _invalid(
                where, None, f"the key and certificate cannot be loaded ({e.reason})"
            ) from None


def _trust_store(configs: Mapping[str, object]) -> tuple[str, str] | None:
    """(config name, PEM text) of the trusted certificates, or None for the system's defaults."""
    location = _string(configs, TRUSTSTORE_LOCATION) or None
    certificates = _string(configs, TRUSTSTORE_CERTIFICATES) or None
    if location is None and certificates is None:
        return None
    _store_type(configs, TRUSTSTORE_TYPE)
    if location is not None and certificates is not None:
        raise _invalid(
            TRUSTSTORE_LOCATION, location, f"cannot be combined with {TRUSTSTORE_CERTIFICATES}"
        )
    if location is not None:
        text, name, value = _read_file(TRUSTSTORE_LOCATION, location), TRUSTSTORE_LOCATION, location
    else:
        assert certificates is not None
        text, name, value = certificates, TRUSTSTORE_CERTIFICATES, certificates
    if _CERTIFICATE not in text:
        raise _invalid(name, value, "expected PEM certificates (BEGIN CERTIFICATE)")
    return name, _normalize_pem(text)


def _load_trust_store(
    ctx: ssl.SSLContext, trust: tuple[str, str] | None, purpose: ssl.Purpose
) -> None:
    if trust is None:
        ctx.load_default_certs(purpose)
        return
    name, text = trust
    try:
        ctx.load_verify_locations(cadata=text)
    except ssl.SSLError as e:
        raise _invalid(name, None, f"the certificates cannot be loaded ({e.reason or e})") from None


# ---------------------------------------------------------------------------------------------
# Protocols and cipher suites


def _protocol_range(
    configs: Mapping[str, object], client: bool
) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    enabled = _list(configs, ENABLED_PROTOCOLS, ("TLSv1.2", "TLSv1.3")) or ["TLSv1.2", "TLSv1.3"]
    for version in enabled:
        if version not in _VERSIONS:
            raise _invalid(
                ENABLED_PROTOCOLS,
                enabled,
                f"unknown protocol {version}; expected {list(_VERSION_ORDER)}",
            )
    indexes = sorted({_VERSION_ORDER.index(v) for v in enabled})
    if indexes != list(range(indexes[0], indexes[-1] + 1)):
        raise _invalid(
            ENABLED_PROTOCOLS, enabled, "the enabled protocols must be consecutive versions"
        )
    low, high = indexes[0], indexes[-1]
    protocol = _string(configs, PROTOCOL, "TLSv1.3") or "TLSv1.3"
    if protocol not in _VERSIONS and protocol not in ("TLS", "TLSv1.2", "TLSv1.3"):
        raise _invalid(PROTOCOL, protocol, f"expected one of {['TLS', *_VERSION_ORDER]}")
    if client and protocol != "TLS":
        # Kafka: a client on ssl.protocol=TLSv1.2 does not use TLSv1.3 even if it is enabled.
        high = min(high, _VERSION_ORDER.index(protocol))
        if high < low:
            raise _invalid(
                PROTOCOL, protocol, f"below every protocol in {ENABLED_PROTOCOLS} {enabled}"
            )
    return _VERSIONS[_VERSION_ORDER[low]], _VERSIONS[_VERSION_ORDER[high]]


def _set_cipher_suites(ctx: ssl.SSLContext, configs: Mapping[str, object]) -> None:
    suites = _list(configs, CIPHER_SUITES, ())
    openssl_names = []
    for suite in suites:
        if suite in _TLS13_SUITES:
            continue
        name = _TLS12_SUITES.get(suite, suite)
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).set_ciphers(name)
        except ssl.SSLError:
            constraint = f"unknown or unsupported cipher suite {suite}"
            raise _invalid(CIPHER_SUITES, suites, constraint) from None
        openssl_names.append(name)
    if openssl_names:
        ctx.set_ciphers(":".join(openssl_names))


# ---------------------------------------------------------------------------------------------
# Contexts


def listener_ssl_configs(configs: Mapping[str, object], listener_name: str) -> dict[str, object]:
    """The ``ssl.*`` configs one listener uses: ``listener.name.<lower-cased name>.ssl.X``
    overrides ``ssl.X``, which is the fallback (Kafka's per-listener prefix)."""
    prefix = f"listener.name.{listener_name.lower()}."
    resolved = {k: v for k, v in configs.items() if k.startswith("ssl.")}
    for key, value in configs.items():
        if key.startswith(prefix) and key[len(prefix) :].startswith("ssl."):
            resolved[key[len(prefix) :]] = value
    return resolved


def server_context(configs: Mapping[str, object]) -> ssl.SSLContext:
    """A listener's TLS context. ``ssl.keystore.*`` is required; ``ssl.truststore.*`` verifies
    client certificates when ``ssl.client.auth`` is ``requested`` or ``required``."""
    client_auth = _string(configs, CLIENT_AUTH, "none") or "none"
    modes = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}
    if client_auth not in modes:
        raise _invalid(
            CLIENT_AUTH, configs.get(CLIENT_AUTH), f"String must be one of: {', '.join(modes)}"
        )
    store = _key_store(configs)
    if store is None:
        raise _invalid(
            KEYSTORE_LOCATION,
            None,
            f"a TLS listener needs {KEYSTORE_LOCATION} or {KEYSTORE_KEY} and {KEYSTORE_CHAIN}",
        )
    trust = _trust_store(configs)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version, ctx.maximum_version = _protocol_range(configs, client=False)
    _set_cipher_suites(ctx, configs)
    _load_key_store(ctx, store, KEYSTORE_KEY if configs.get(KEYSTORE_KEY) else KEYSTORE_LOCATION)
    ctx.verify_mode = modes[client_auth]
    if client_auth != "none":
        _load_trust_store(ctx, trust, ssl.Purpose.CLIENT_AUTH)
    return ctx


def client_context(configs: Mapping[str, object]) -> ssl.SSLContext:
    """A client's TLS context (also what a broker uses toward another broker). It always verifies
    the server's certificate; ``ssl.endpoint.identification.algorithm=https`` (the default) also
    checks the host name, an empty value does not. A key store, if set, is offered for mTLS."""
    algorithm = _string(configs, ENDPOINT_IDENTIFICATION, "https")
    if algorithm is None or algorithm.lower() not in ("https", ""):
        raise _invalid(ENDPOINT_IDENTIFICATION, algorithm, "expected https or an empty value")
    store = _key_store(configs)
    trust = _trust_store(configs)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = algorithm.lower() == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.minimum_version, ctx.maximum_version = _protocol_range(configs, client=True)
    _set_cipher_suites(ctx, configs)
    if store is not None:
        _load_key_store(
            ctx, store, KEYSTORE_KEY if configs.get(KEYSTORE_KEY) else KEYSTORE_LOCATION
        )
    _load_trust_store(ctx, trust, ssl.Purpose.SERVER_AUTH)
    return ctx


# ---------------------------------------------------------------------------------------------
# Principals


# Attribute keywords Java's X500Principal.getName() prints; any other attribute is printed as
# <dotted oid>=#<hex of its DER value>.
_RFC2253_KEYWORDS: Final = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.9": "STREET",
    "0.9.2342.19200300.100.1.25": "DC",
    "0.9.2342.19200300.100.1.1": "UID",
}
# DER string types and how their bytes decode.
_STRING_TAGS: Final = {
    0x0C: "utf-8",  # UTF8String
    0x13: "ascii",  # PrintableString
    0x16: "ascii",  # IA5String
    0x14: "latin-1",  # TeletexString (T.61; Latin-1 as the usual approximation)
    0x1E: "utf-16-be",  # BMPString
    0x1C: "utf-32-be",  # UniversalString
}
_RFC2253_SPECIALS: Final = frozenset(',=+<>#;"\\')


def _der_items(data: bytes, start: int = 0, end: int | None = None) -> list[tuple[int, int, int]]:
    """The (tag, content start, content end) of each DER element in ``data[start:end]``."""
    end = len(data) if end is None else end
    items = []
    i = start
    while i < end:
        tag, length = data[i], data[i + 1]
        i += 2
        if length & 0x80:
            n = length & 0x7F
            length = int.from_bytes(data[i : i + n], "big")
            i += n
        if i + length > end:
            raise ValueError("truncated DER element")
        items.append((tag, i, i + length))
        i += length
    return items


def _der_oid(content: bytes) -> str:
    arcs: list[int] = []
    value = 0
    for byte in content:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(map(str, [first, arcs[0] - 40 * first, *arcs[1:]]))


def _rfc2253_escape(value: str) -> str:
    """Java's escaping: the specials anywhere, every space of a leading or trailing run."""
    body = value.strip(" ")
    if not body:
        return "\\ " * len(value)
    lead = len(value) - len(value.lstrip(" "))
    trail = len(value) - len(value.rstrip(" "))
    escaped = "".join("\\" + c if c in _RFC2253_SPECIALS else c for c in body)
    return "\\ " * lead + escaped + "\\ " * trail


def subject_dn(der_certificate: bytes) -> str:
    """The certificate's subject as Java's ``X500Principal.getName()`` prints it, which is what
    Kafka maps to a principal: RFC 2253, most specific RDN first, keywords CN, C, L, ST, O, OU,
    STREET, DC and UID with ``,=+<>#;"\\`` and outer spaces escaped, any other attribute as
    ``<oid>=#<hex DER value>`` (``emailAddress`` is ``1.2.840.113549.1.9.1=#16...``). Pure
    Python: the broker does not need ``cryptography``."""
    try:
        _, cert_start, cert_end = _der_items(der_certificate)[0]
        _, tbs_start, tbs_end = _der_items(der_certificate, cert_start, cert_end)[0]
        fields = _der_items(der_certificate, tbs_start, tbs_end)
        if fields[0][0] == 0xA0:  # explicit [0] version
            fields = fields[1:]
        _, name_start, name_end = fields[4]  # serial, signature, issuer, validity, subject
        rdns = []
        for _, set_start, set_end in _der_items(der_certificate, name_start, name_end):
            avas = []
            for _, ava_start, ava_end in _der_items(der_certificate, set_start, set_end):
                (_, oid_start, oid_end), (tag, v_start, v_end) = _der_items(
                    der_certificate, ava_start, ava_end
                )
                oid = _der_oid(der_certificate[oid_start:oid_end])
                keyword = _RFC2253_KEYWORDS.get(oid)
                encoding = _STRING_TAGS.get(tag)
                if keyword is not None and encoding is not None:
                    text = der_certificate[v_start:v_end].decode(encoding)
                    avas.append(f"{keyword}={_rfc2253_escape(text)}")
                else:
                    # the value's whole TLV starts where the OID element ends
                    avas.append(f"{oid}=#{der_certificate[oid_end:v_end].hex()}")
            rdns.append("+".join(avas))
    except (IndexError, ValueError) as e:
        raise ValueError(f"not a DER X.509 certificate: {e}") from None
    return ",".join(reversed(rdns))


def peer_principal(
    sock: ssl.SSLSocket | ssl.SSLObject, mapper: SslPrincipalMapper | None = None
) -> str:
    """Kafka's principal name for a finished handshake (``DefaultKafkaPrincipalBuilder``): the peer
    certificate's subject DN after the mapping rules, or ``ANONYMOUS`` without a certificate."""
    der = sock.getpeercert(binary_form=True)
    if not der:
        return ANONYMOUS
    return (mapper or SslPrincipalMapper.from_rules(None)).name(subject_dn(der))


class NoMatchingRuleError(ValueError):
    """No ``ssl.principal.mapping.rules`` rule matched the DN (Kafka's ``NoMatchingRule``)."""


# Kafka's rule grammar: DEFAULT, RULE:pattern/replacement/[LU] (a backslash escapes ``/`` and
# itself), or an empty rule.
_RULE: Final = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER: Final = re.compile(r"\s*(" + _RULE + r")\s*(?:,\s*|$)")
_RULE_PARSER: Final = re.compile(_RULE)


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    lower: bool = False
    upper: bool = False
    source: str = ""  # the pattern as written (Java syntax), for messages

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        groups = self.pattern.groups
        result = self.pattern.sub(lambda m: _java_replacement(self.replacement, m, groups), dn)
        if self.lower:
            return result.lower()
        if self.upper:
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        flag = "/L" if self.lower else "/U" if self.upper else ""
        return f"RULE:{self.source}/{self.replacement}{flag}"


def _java_replacement(replacement: str, m: re.Match[str], groups: int) -> str:
    """Java's ``Matcher.appendReplacement`` syntax with Kafka's leniency: ``$n`` takes as many
    digits as name an existing group, ``${name}`` a named group, ``\\x`` is ``x``. A ``$n``
    naming no group stays literal when the pattern has groups (Kafka escapes it); Java's
    errors (a bare ``$``, ``$1`` without groups) raise :class:`ValueError` with Java's text."""
    out: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        c = replacement[i]
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("character to be escaped is missing")
            out.append(replacement[i + 1])
            i += 2
            continue
        if c != "$":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            raise ValueError("Illegal group reference: group index is missing")
        if replacement[i] == "{":
            close = replacement.find("}", i)
            if close < 0:
                raise ValueError("named capturing group is missing trailing '}'")
            name = replacement[i + 1 : close]
            if name not in m.re.groupindex:
                raise ValueError(f"No group with name {{{name}}}")
            out.append(m.group(name) or "")
            i = close + 1
            continue
        if not replacement[i].isdigit():
            raise ValueError("Illegal group reference")
        index = int(replacement[i])
        if index > groups:
            if groups == 0:
                raise ValueError(f"No group {index}")
            out.append("$")  # the digits follow as literal text
            continue
        i += 1
        while i < n and replacement[i].isdigit() and index * 10 + int(replacement[i]) <= groups:
            index = index * 10 + int(replacement[i])
            i += 1
        out.append(m.group(index) or "")
    return "".join(out)


def _python_regex(java_regex: str) -> str:
    """Java's named groups ``(?<name>...)`` in Python's spelling; the rest of the syntax a rule
    pattern needs is shared."""
    return re.sub(r"(?<!\\)\(\?<([A-Za-z][A-Za-z0-9]*)>", r"(?P<\1>", java_regex)


class SslPrincipalMapper:
    """``ssl.principal.mapping.rules`` (Kafka's ``SslPrincipalMapper``): rules are tried in order
    and the first that applies names the principal. ``DEFAULT`` keeps the DN; ``RULE:p/r/`` applies
    when the regex ``p`` matches the whole DN and replaces it with ``r`` (``$1`` for groups); a
    trailing ``L`` or ``U`` lower- or upper-cases the result. Immutable; thread-safe."""

    def __init__(self, rules: Sequence[_Rule]) -> None:
        self._rules = tuple(rules)

    @classmethod
    def from_rules(cls, rules: str | None) -> SslPrincipalMapper:
        """Parse the config value (None means ``DEFAULT``); a bad rule raises
        :class:`ConfigError`."""
        text = "DEFAULT" if rules is None else rules
        parsed: list[_Rule] = []
        for split in _RULE_SPLITTER.finditer(text.strip()):
            rule = split.group(1)
            m = _RULE_PARSER.match(rule)
            if m is None:
                raise _invalid(PRINCIPAL_MAPPING_RULES, text, f"Invalid rule: {rule}")
            if m.end() != len(rule):
                raise _invalid(
                    PRINCIPAL_MAPPING_RULES,
                    text,
                    f"Invalid rule: `{rule}`, unmatched substring: `{rule[m.end() :]}`",
                )
            if m.group(1) is not None:
                parsed.append(_Rule(None))
            elif m.group(2) is not None:
                try:
                    pattern = re.compile(_python_regex(m.group(2)))
                except re.error as e:
                    raise _invalid(
                        PRINCIPAL_MAPPING_RULES, text, f"Invalid rule: `{rule}`: {e}"
                    ) from None
                flag = m.group(4)
                parsed.append(_Rule(pattern, m.group(3), flag == "L", flag == "U", m.group(2)))
            # an empty rule is ignored, as in Kafka
        return cls(parsed)

    @classmethod
    def from_configs(cls, configs: Mapping[str, object]) -> SslPrincipalMapper:
        return cls.from_rules(_string(configs, PRINCIPAL_MAPPING_RULES))

    def name(self, distinguished_name: str) -> str:
        """The principal name for ``distinguished_name``; :class:`NoMatchingRuleError` if no
        rule applies, :class:`ValueError` if the matching rule's replacement is one Java refuses
        (Kafka accepts such rules at startup and fails the authentication)."""
        for rule in self._rules:
            result = rule.apply(distinguished_name)
            if result is not None:
                return result
        raise NoMatchingRuleError(
            f"No rules apply to {distinguished_name}, rules [{', '.join(map(str, self._rules))}]"
        )

    def __repr__(self) -> str:
        return f"SslPrincipalMapper(rules = [{', '.join(map(str, self._rules))}])"
