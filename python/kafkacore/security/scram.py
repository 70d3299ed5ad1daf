"""SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's broker runs them.

Credentials (Kafka's ``ScramFormatter.generateCredential``)::

    SaltedPassword = Hi(UTF-8(password), salt, i)      # PBKDF2-HMAC, no SASLprep
    ClientKey      = HMAC(SaltedPassword, "Client Key")
    StoredKey      = H(ClientKey)
    ServerKey      = HMAC(SaltedPassword, "Server Key")

The broker keeps only ``(salt, StoredKey, ServerKey, i)``; in ZooKeeper mode it is the
value of the mechanism's key in ``/config/users/<user>``, written by Kafka's
``ScramCredentialUtils.credentialToString`` as
``salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<i>``.

Exchange (Kafka's ``ScramSaslServer``), one SaslAuthenticate round trip per step::

    client-first   n,[a=<authzid>],[m=<v>,]n=<saslname>,r=<cnonce>[,<ext>=<v>]*
    server-first   r=<cnonce><snonce>,s=<b64 salt>,i=<iterations>
    client-final   c=<b64 gs2 header>,r=<cnonce><snonce>[,<ext>=<v>]*,p=<b64 proof>
    server-final   v=<b64 ServerSignature>

    AuthMessage     = client-first-bare "," server-first "," client-final-without-proof
    ClientSignature = HMAC(StoredKey, AuthMessage)
    the client is genuine when H(ClientProof XOR ClientSignature) == StoredKey
    ServerSignature = HMAC(ServerKey, AuthMessage)

Kafka never answers ``e=...``: every failure becomes SaslAuthenticate error 58
(SASL_AUTHENTICATION_FAILED) with a generic message, except the few failures that Kafka
raises as ``SaslAuthenticationException``, whose own message reaches the client (see
:meth:`ScramAuthenticationError.client_message`).

Thread-safety: :class:`ScramServer` holds one connection's exchange and is not
thread-safe; everything else is immutable or a pure function.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kafkacore.errors import KafkaCoreError

__all__ = [
    "TOKEN_AUTH_EXTENSION",
    "DelegationTokenCredential",
    "ScramAuthenticationError",
    "ScramCredential",
    "ScramMechanism",
    "ScramServer",
    "create_credential",
    "credential_from_salted_password",
    "escape_username",
    "random_base36",
    "salted_password",
    "unescape_saslname",
]

# The one client-first extension Kafka acts on (ScramLoginModule.TOKEN_AUTH_CONFIG):
# ``tokenauth=true`` authenticates with a delegation token's id and HMAC.
TOKEN_AUTH_EXTENSION = "tokenauth"


class ScramMechanism(enum.Enum):
    """Kafka's ``ScramMechanism``: wire type (AlterUserScramCredentials, KRaft records),
    hash, and the iteration bounds Kafka accepts."""

    SCRAM_SHA_256 = (1, "sha256", 4096, 16384)
    SCRAM_SHA_512 = (2, "sha512", 4096, 16384)

    def __init__(self, type_id: int, hash_name: str, min_iterations: int, max_iterations: int):
        self.type_id = type_id
        self.hash_name = hash_name
        self.min_iterations = min_iterations
        self.max_iterations = max_iterations

    @property
    def mechanism_name(self) -> str:
        """``SCRAM-SHA-256`` / ``SCRAM-SHA-512``: the SaslHandshake and config name."""
        return self.name.replace("_", "-")

    @property
    def digest_size(self) -> int:
        return hashlib.new(self.hash_name).digest_size

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism | None:
        """The mechanism called ``name`` (exact, as Kafka matches it), or None."""
        for mechanism in cls:
            if mechanism.mechanism_name == name:
                return mechanism
        return None

    def __str__(self) -> str:
        return self.mechanism_name

    # -- primitives -------------------------------------------------------------------

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()


@dataclass(frozen=True)
class ScramCredential:
    """What the broker stores for one user and mechanism: never the password."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_kafka_string(self) -> str:
        """Kafka's ``ScramCredentialUtils.credentialToString`` (standard base64, padded)."""
        return (
            f"salt={_b64(self.salt)},stored_key={_b64(self.stored_key)},"
            f"server_key={_b64(self.server_key)},iterations={self.iterations}"
        )

    @classmethod
    def from_kafka_string(cls, text: str) -> ScramCredential:
        """Kafka's ``credentialFromString``: exactly the four keys, in any order.
        Raises ValueError (Kafka: IllegalArgumentException "Credentials not valid: ...")."""
        props: dict[str, str] = {}
        for token in text.split(","):
            index = token.find("=")
            if index <= 0:
                raise ValueError(f"Credentials not valid: {text}")
            props[token[:index]] = token[index + 1 :]
        if set(props) != {"salt", "stored_key", "server_key", "iterations"}:
            raise ValueError(f"Credentials not valid: {text}")
        try:
            return cls(
                salt=_b64decode(props["salt"]),
                stored_key=_b64decode(props["stored_key"]),
                server_key=_b64decode(props["server_key"]),
                iterations=int(props["iterations"]),
            )
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"Credentials not valid: {text}") from exc


@dataclass(frozen=True)
class DelegationTokenCredential:
    """What a ``tokenauth=true`` login resolves to (Kafka's
    ``DelegationTokenCredentialCallback``): the token's SCRAM credential (its password is
    the token's HMAC), the principal that owns it, and when it expires."""

    owner: str
    credential: ScramCredential
    expiry_timestamp_ms: int | None = None


def salted_password(
    mechanism: ScramMechanism, password: str, salt: bytes, iterations: int
) -> bytes:
    """RFC 5802's ``Hi(Normalize(password), salt, i)``. Kafka's ``normalize`` is plain
    UTF-8 (no SASLprep), and so is this. This is also the ``SaltedPassword`` that
    AlterUserScramCredentials carries."""
    if iterations < 1:
        raise ValueError(f"iterations must be positive, not {iterations}")
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode("utf-8"), salt, iterations)


def credential_from_salted_password(
    mechanism: ScramMechanism, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    """Kafka's ``generateCredential(salt, saltedPassword, iterations)``: what the broker
    stores for an AlterUserScramCredentials upsertion."""
    client_key = mechanism.hmac(salted, b"Client Key")
    return ScramCredential(
        salt=salt,
        stored_key=mechanism.hash(client_key),
        server_key=mechanism.hmac(salted, b"Server Key"),
        iterations=iterations,
    )


def create_credential(
    mechanism: ScramMechanism,
    password: str,
    iterations: int | None = None,
    salt: bytes | None = None,
) -> ScramCredential:
    """A credential for ``password``. ``iterations`` defaults to the mechanism's minimum
    (4096, kafka-configs.sh's default) and must lie within Kafka's bounds; the default
    salt is, like Kafka's, the ASCII of a random 130-bit number in base 36."""
    if iterations is None:
        iterations = mechanism.min_iterations
    if iterations < mechanism.min_iterations:
        raise ValueError("Too few iterations")
    if iterations > mechanism.max_iterations:
        raise ValueError("Too many iterations")
    if salt is None:
        salt = random_base36().encode("ascii")
    salted = salted_password(mechanism, password, salt, iterations)
    return credential_from_salted_password(mechanism, salt, salted, iterations)


def random_base36() -> str:
    """Kafka's ``secureRandomString``: ``new BigInteger(130, random).toString(36)``,
    used for server nonces and default salts."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    while True:
        value, rem = divmod(value, 36)
        out.append(digits[rem])
        if value == 0:
            return "".join(reversed(out))


# -- saslname escaping (RFC 5802 5.1, Kafka's ScramFormatter.saslName/username) ---------


def escape_username(username: str) -> str:
    """``=`` becomes ``=3D`` and ``,`` becomes ``=2C`` (in that order)."""
    return username.replace("=", "=3D").replace(",", "=2C")


def unescape_saslname(saslname: str) -> str:
    """The inverse of :func:`escape_username`. Any ``=`` not starting ``=2C``/``=3D``
    raises ValueError ("Invalid username: ...")."""
    username = saslname.replace("=2C", ",")
    if "=" in username.replace("=3D", ""):
        raise ValueError(f"Invalid username: {saslname}")
    return username.replace("=3D", "=")


# -- message grammar: Kafka's ScramMessages patterns, matched against the whole message --

_VALUE = r"[\x01-\x2b\x2d-\x7f]+"  # \x01-\x7F except ","
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # \x21-\x7E except ","
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_B64 = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64}{{4}})*(?:{_B64}{{3}}=|{_B64}{{2}}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"

_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}"
    rf"n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})"
)
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})"
)


def _parse(pattern: re.Pattern[str], data: bytes, message: str) -> re.Match[str]:
    """``data`` as ``pattern`` reads it, else the ScramAuthenticationError Kafka's
    formatter throws (naming ``message``, e.g. "client first")."""
    text = data.decode("utf-8", errors="replace")
    match = pattern.fullmatch(text)
    if match is None:
        raise ScramAuthenticationError(f"Invalid SCRAM {message} message format: {text}")
    return match


@dataclass(frozen=True)
class ClientFirstMessage:
    """A parsed client-first message."""

    authorization_id: str
    saslname: str
    nonce: str
    extensions: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: bytes) -> ClientFirstMessage:
        match = _parse(_CLIENT_FIRST, data, "client first")
        extensions: dict[str, str] = {}
        ext_text = match["extensions"]
        if ext_text:
            for item in ext_text[1:].split(","):
                key, value = item.split("=", 1)
                extensions[key] = value  # later duplicates win, as in Kafka's parseMap
        return cls(match["authzid"] or "", match["saslname"], match["nonce"], extensions)

    @property
    def gs2_header(self) -> str:
        """RFC 5802's gs2-header, which client-final's ``c=`` must echo."""
        return f"n,a={self.authorization_id}," if self.authorization_id else "n,,"

    @property
    def bare(self) -> str:
        """client-first-message-bare as Kafka rebuilds it for the AuthMessage: the
        saslname, the nonce and the extensions (without a reserved ``m=``)."""
        ext = "".join(f",{key}={value}" for key, value in self.extensions.items())
        return f"n={self.saslname},r={self.nonce}{ext}"

    @property
    def token_authenticated(self) -> bool:
        # Java's Boolean.parseBoolean: "true" in any case.
        return self.extensions.get(TOKEN_AUTH_EXTENSION, "").lower() == "true"


@dataclass(frozen=True)
class ClientFinalMessage:
    """A parsed client-final message."""

    channel_binding: bytes
    nonce: str
    proof: bytes

    @classmethod
    def parse(cls, data: bytes) -> ClientFinalMessage:
        match = _parse(_CLIENT_FINAL, data, "client final")
        return cls(_b64decode(match["channel"]), match["nonce"], _b64decode(match["proof"]))

    @property
    def without_proof(self) -> str:
        """client-final-message-without-proof, as Kafka rebuilds it (extensions dropped)."""
        return f"c={_b64(self.channel_binding)},r={self.nonce}"


# -- errors -------------------------------------------------------------------------------


class ScramAuthenticationError(KafkaCoreError):
    """A failed SCRAM exchange. ``message`` is Kafka's own (for logs); ``client_visible``
    is True only where Kafka throws ``SaslAuthenticationException``, whose message the
    client sees; every other failure is reported with the generic text of
    :meth:`client_message` so as not to reveal, say, whether the user exists."""

    def __init__(self, message: str, *, client_visible: bool = False):
        super().__init__(message)
        self.message = message
        self.client_visible = client_visible

    def client_message(self, mechanism: str, *, reauthentication: bool = False) -> str:
        """The SaslAuthenticate ``ErrorMessage`` (with error code 58) Kafka sends."""
        if self.client_visible:
            return self.message
        during = "re-authentication" if reauthentication else "authentication"
        return (
            f"Authentication failed during {during} due to invalid credentials "
            f"with SASL mechanism {mechanism}"
        )


class ScramIllegalStateError(KafkaCoreError):
    """A token arrived after the exchange completed or failed (Kafka's
    ``IllegalSaslStateException``: the connection is closed)."""


# -- the server ---------------------------------------------------------------------------


CredentialLookup = Callable[[str], "ScramCredential | None"]
TokenLookup = Callable[[str], "DelegationTokenCredential | None"]


class ScramServer:
    """One connection's server side of a SCRAM exchange (Kafka's ``ScramSaslServer``).

    Feed each SaslAuthenticate ``AuthBytes`` to :meth:`evaluate_response`; it returns the
    response ``AuthBytes`` or raises :class:`ScramAuthenticationError` (answer 58, then
    close after ``connection.failed.authentication.delay.ms``). After the server-final
    message :attr:`complete` is True and :attr:`authorization_id` names the principal.

    ``credentials`` maps a username to its stored credential for this mechanism;
    ``tokens`` maps a delegation token id to its credential (None: token logins fail).
    Not thread-safe: one instance per connection, driven by one task."""

    _RECEIVE_CLIENT_FIRST = "RECEIVE_CLIENT_FIRST_MESSAGE"
    _RECEIVE_CLIENT_FINAL = "RECEIVE_CLIENT_FINAL_MESSAGE"
    _COMPLETE = "COMPLETE"
    _FAILED = "FAILED"

    def __init__(
        self,
        mechanism: ScramMechanism,
        credentials: CredentialLookup,
        tokens: TokenLookup | None = None,
        *,
        nonce_factory: Callable[[], str] = random_base36,
    ):
        self.mechanism = mechanism
        self._credentials = credentials
        self._tokens = tokens
        self._nonce_factory = nonce_factory
        self._state = self._RECEIVE_CLIENT_FIRST
        self._client_first: ClientFirstMessage | None = None
        self._server_first: str | None = None
        self._server_nonce = ""  # client nonce + server nonce
        self._credential: ScramCredential | None = None
        self.authorization_id: str | None = None
        self.token_expiry_timestamp_ms: int | None = None
        self.extensions: Mapping[str, str] = {}

    @property
    def complete(self) -> bool:
        return self._state == self._COMPLETE

    @property
    def failed(self) -> bool:
        return self._state == self._FAILED

    def evaluate_response(self, response: bytes) -> bytes:
        """The next server message for the client's ``response``."""
        try:
            if self._state == self._RECEIVE_CLIENT_FIRST:
                return self._on_client_first(response)
            if self._state == self._RECEIVE_CLIENT_FINAL:
                return self._on_client_final(response)
        except ScramAuthenticationError:
            self._clear()
            self._state = self._FAILED
            raise
        raise ScramIllegalStateError(f"Unexpected challenge in Sasl server state {self._state}")

    def _on_client_first(self, response: bytes) -> bytes:
        first = ClientFirstMessage.parse(response)
        self._client_first = first
        self.extensions = dict(first.extensions)
        try:
            username = unescape_saslname(first.saslname)
        except ValueError as exc:
            # Kafka wraps any non-SASL failure in this generic message.
            raise ScramAuthenticationError(
                "Authentication failed: Credentials could not be obtained"
            ) from exc
        credential: ScramCredential | None
        if first.token_authenticated:
            token = self._tokens(username) if self._tokens is not None else None
            if token is None:
                raise ScramAuthenticationError(
                    f"Token Authentication failed: Invalid tokenId : {username}"
                )
            credential = token.credential
            self.authorization_id = token.owner
            self.token_expiry_timestamp_ms = token.expiry_timestamp_ms
        else:
            credential = self._credentials(username)
            self.authorization_id = username
            self.token_expiry_timestamp_ms = None
        if credential is None:
            raise ScramAuthenticationError("Authentication failed: Invalid user credentials")
        if first.authorization_id and first.authorization_id != username:
            raise ScramAuthenticationError(
                "Authentication failed: Client requested an authorization id"
                " that is different from username",
                client_visible=True,
            )
        if credential.iterations < self.mechanism.min_iterations:
            raise ScramAuthenticationError(
                f"Iterations {credential.iterations} is less than the minimum "
                f"{self.mechanism.min_iterations} for {self.mechanism}"
            )
        self._credential = credential
        self._server_nonce = first.nonce + self._nonce_factory()
        self._server_first = (
            f"r={self._server_nonce},s={_b64(credential.salt)},i={credential.iterations}"
        )
        self._state = self._RECEIVE_CLIENT_FINAL
        return self._server_first.encode("ascii")

    def _on_client_final(self, response: bytes) -> bytes:
        first, server_first, credential = self._client_first, self._server_first, self._credential
        assert first is not None and server_first is not None and credential is not None
        final = ClientFinalMessage.parse(response)
        if not final.nonce.endswith(self._server_nonce):
            raise ScramAuthenticationError("Invalid client nonce in the final client message.")
        # Stricter than Kafka, which ignores c=: RFC 5802 requires the gs2 header echoed
        # ("biws" is base64 of "n,,"), and every Kafka client sends exactly that.
        if final.channel_binding != first.gs2_header.encode("utf-8"):
            raise ScramAuthenticationError("Invalid channel binding in the final client message.")
        auth_message = f"{first.bare},{server_first},{final.without_proof}".encode()
        client_signature = self.mechanism.hmac(credential.stored_key, auth_message)
        if len(final.proof) != len(client_signature):
            raise ScramAuthenticationError("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(final.proof, client_signature, strict=True))
        if not hmac.compare_digest(self.mechanism.hash(client_key), credential.stored_key):
            raise ScramAuthenticationError("Invalid client credentials")
        server_signature = self.mechanism.hmac(credential.server_key, auth_message)
        self._clear()
        self._state = self._COMPLETE
        return f"v={_b64(server_signature)}".encode("ascii")

    def _clear(self) -> None:
        self._credential = None
        self._client_first = None
        self._server_first = None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)
