"""SASL/SCRAM server (kafkacore.security.scram): RFC 7677's test vector, RFC 5802's message
shapes, full exchanges against a small independent client, Kafka's failure messages, and
the credentials Kafka 3.9.1's own ScramFormatter derives."""

from __future__ import annotations

import base64
import hashlib
import hmac
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkacore.errors import KafkaCoreError
from kafkacore.security.scram import (
    DelegationTokenCredential,
    ScramAuthenticationError,
    ScramCredential,
    ScramMechanism,
    ScramServer,
    create_credential,
    escape_username,
    salted_password,
    unescape_saslname,
)
from support.budget import examples
from support.kafka_jars import JVM_FLAGS, KAFKA_ZK_VERSION, kafka_libs, require

SHA256 = ScramMechanism.SCRAM_SHA_256
SHA512 = ScramMechanism.SCRAM_SHA_512


class TinyClient:
    """The client side of RFC 5802, written from the RFC, sharing no code with the server."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        username: str,
        password: str,
        nonce: str = "clientnonce0123",
    ):
        self.hash_name = mechanism.hash_name
        self.username = username
        self.password = password
        self.nonce = nonce
        self.server_signature = b""

    def first(self, extensions: str = "", authzid: str = "") -> bytes:
        saslname = self.username.replace("=", "=3D").replace(",", "=2C")
        self.gs2 = f"n,{'a=' + authzid if authzid else ''},"
        self.bare = f"n={saslname},r={self.nonce}{extensions}"
        return (self.gs2 + self.bare).encode()

    def final(self, server_first: bytes, *, nonce: str | None = None) -> bytes:
        text = server_first.decode()
        attrs = dict(item.split("=", 1) for item in text.split(","))
        salt, iterations = base64.b64decode(attrs["s"]), int(attrs["i"])
        assert attrs["r"].startswith(self.nonce)
        without_proof = f"c={base64.b64encode(self.gs2.encode()).decode()},r={nonce or attrs['r']}"
        auth = f"{self.bare},{text},{without_proof}".encode()
        salted = hashlib.pbkdf2_hmac(self.hash_name, self.password.encode(), salt, iterations)
        client_key = hmac.new(salted, b"Client Key", self.hash_name).digest()
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        signature = hmac.new(stored_key, auth, self.hash_name).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.new(salted, b"Server Key", self.hash_name).digest()
        self.server_signature = hmac.new(server_key, auth, self.hash_name).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        return server_final == b"v=" + base64.b64encode(self.server_signature)


def server_for(mechanism: ScramMechanism, users: dict[str, str], **kwargs: object) -> ScramServer:
    store = {name: create_credential(mechanism, pw) for name, pw in users.items()}
    return ScramServer(mechanism, store.get, **kwargs)  # type: ignore[arg-type]


def exchange(server: ScramServer, client: TinyClient, **first_kwargs: str) -> bytes:
    server_first = server.evaluate_response(client.first(**first_kwargs))
    return server.evaluate_response(client.final(server_first))


# -- RFC test vectors -------------------------------------------------------------------------


def test_rfc7677_sha256_vector() -> None:
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = create_credential(SHA256, "pencil", 4096, salt=salt)
    server = ScramServer(
        SHA256, {"user": credential}.get, nonce_factory=lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    )
    server_first = server.evaluate_response(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert server_first == (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    server_final = server.evaluate_response(
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert server_final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.authorization_id == "user"


def test_rfc5802_exchange_shape() -> None:
    # RFC 5802 section 5's messages (SCRAM-SHA-1, which Kafka does not offer): same shape.
    salt = base64.b64decode("QSXCR+Q6sek8bf92")
    credential = create_credential(SHA256, "pencil", 4096, salt=salt)
    server = ScramServer(
        SHA256, {"user": credential}.get, nonce_factory=lambda: "3rfcNHYJY1ZVvWVs7j"
    )
    server_first = server.evaluate_response(b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")
    assert server_first == b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    # The RFC's SHA-1 proof is well formed but wrong for SHA-256: refused, not misparsed.
    with pytest.raises(ScramAuthenticationError, match="Invalid client credentials"):
        server.evaluate_response(
            b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
        )


# -- credentials ------------------------------------------------------------------------------


def test_credential_kafka_string_format_and_round_trip() -> None:
    credential = create_credential(SHA512, "alice-secret", 8192, salt=b"salty")
    text = credential.to_kafka_string()
    assert text == (
        f"salt={base64.b64encode(b'salty').decode()},"
        f"stored_key={base64.b64encode(credential.stored_key).decode()},"
        f"server_key={base64.b64encode(credential.server_key).decode()},iterations=8192"
    )
    assert len(credential.stored_key) == len(credential.server_key) == 64
    assert "alice-secret" not in text
    assert ScramCredential.from_kafka_string(text) == credential
    reordered = ",".join(reversed(text.split(",")))
    assert ScramCredential.from_kafka_string(reordered) == credential


@pytest.mark.parametrize(
    "text",
    [
        "",
        "salt=YQ==,stored_key=YQ==,server_key=YQ==",
        "salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=4096,extra=1",
        "salt=YQ==,stored_key=YQ==,server_key=YQ==,iterations=lots",
        "salt=Y!==,stored_key=YQ==,server_key=YQ==,iterations=4096",
        "=YQ==,stored_key=YQ==,server_key=YQ==,iterations=4096",
    ],
)
def test_credential_string_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError, match="Credentials not valid"):
        ScramCredential.from_kafka_string(text)


def test_create_credential_iteration_bounds_and_salt() -> None:
    with pytest.raises(ValueError, match="Too few iterations"):
        create_credential(SHA256, "pw", 4095)
    with pytest.raises(ValueError, match="Too many iterations"):
        create_credential(SHA256, "pw", 16385)
    a, b = create_credential(SHA256, "pw"), create_credential(SHA256, "pw")
    assert a.iterations == 4096 and a.salt != b.salt and a.stored_key != b.stored_key
    assert a.salt.decode("ascii").isalnum()
    assert len(a.stored_key) == 32


def test_mechanism_names_and_types() -> None:
    assert ScramMechanism.from_name("SCRAM-SHA-256") is SHA256
    assert ScramMechanism.from_name("SCRAM-SHA-512") is SHA512
    assert ScramMechanism.from_name("scram-sha-256") is None
    assert (SHA256.type_id, SHA512.type_id) == (1, 2)


# -- full exchanges ---------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
@pytest.mark.parametrize("username", ["alice", "a,b=c", "=2C=3D"])
def test_full_exchange(mechanism: ScramMechanism, username: str) -> None:
    server = server_for(mechanism, {username: "s3cret", "bob": "other"})
    client = TinyClient(mechanism, username, "s3cret")
    assert client.verify(exchange(server, client))
    assert server.complete and server.authorization_id == username
    assert server.token_expiry_timestamp_ms is None


def test_authzid_equal_to_username_is_accepted() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    client = TinyClient(SHA256, "alice", "pw")
    assert client.verify(exchange(server, client, authzid="alice"))


def test_authzid_different_from_username_is_told_to_the_client() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    with pytest.raises(ScramAuthenticationError) as info:
        server.evaluate_response(TinyClient(SHA256, "alice", "pw").first(authzid="bob"))
    assert info.value.client_visible
    assert info.value.client_message("SCRAM-SHA-256") == (
        "Authentication failed: Client requested an authorization id"
        " that is different from username"
    )


def test_wrong_password_fails_with_the_generic_message() -> None:
    server = server_for(SHA512, {"alice": "right"})
    with pytest.raises(ScramAuthenticationError, match="Invalid client credentials") as info:
        exchange(server, TinyClient(SHA512, "alice", "wrong"))
    assert server.failed and not server.complete
    assert not info.value.client_visible
    assert info.value.client_message("SCRAM-SHA-512") == (
        "Authentication failed during authentication due to invalid credentials"
        " with SASL mechanism SCRAM-SHA-512"
    )
    assert "re-authentication" in info.value.client_message("SCRAM-SHA-512", reauthentication=True)
    with pytest.raises(KafkaCoreError, match="Unexpected challenge in Sasl server state FAILED"):
        server.evaluate_response(b"n,,n=alice,r=abc")


def test_mechanisms_do_not_mix() -> None:
    # A SHA-512 credential answered with a SHA-256 proof.
    server = server_for(SHA512, {"alice": "pw"})
    with pytest.raises(ScramAuthenticationError, match="Invalid client credentials"):
        exchange(server, TinyClient(SHA256, "alice", "pw"))


def test_unknown_user() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    with pytest.raises(ScramAuthenticationError, match="Invalid user credentials") as info:
        server.evaluate_response(b"n,,n=mallory,r=abc")
    assert not info.value.client_visible and server.failed


def test_stored_credential_below_minimum_iterations_is_refused() -> None:
    salt = b"salt"
    weak = ScramCredential(salt, b"x" * 32, b"y" * 32, 4000)
    server = ScramServer(SHA256, {"alice": weak}.get)
    with pytest.raises(
        ScramAuthenticationError,
        match="Iterations 4000 is less than the minimum 4096 for SCRAM-SHA-256",
    ):
        server.evaluate_response(b"n,,n=alice,r=abc")


def test_client_final_nonce_must_end_with_the_server_nonce() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    client = TinyClient(SHA256, "alice", "pw")
    server_first = server.evaluate_response(client.first())
    # Only the client's half of the nonce (CVE-2024-56128).
    with pytest.raises(
        ScramAuthenticationError, match=r"Invalid client nonce in the final client message\."
    ):
        server.evaluate_response(client.final(server_first, nonce=client.nonce))
    assert server.failed


def test_client_final_with_changed_nonce_suffix_is_refused() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    client = TinyClient(SHA256, "alice", "pw")
    server_first = server.evaluate_response(client.first())
    nonce = server_first.decode().split(",")[0][2:]
    with pytest.raises(ScramAuthenticationError, match="Invalid client nonce"):
        server.evaluate_response(client.final(server_first, nonce=nonce + "x"))


def test_channel_binding_must_echo_the_gs2_header() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    client = TinyClient(SHA256, "alice", "pw")
    server_first = server.evaluate_response(client.first())
    final = client.final(server_first).replace(b"c=biws", b"c=eSws", 1)  # "y,,"
    with pytest.raises(ScramAuthenticationError, match="Invalid channel binding"):
        server.evaluate_response(final)


def test_proof_of_the_wrong_length_is_refused() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    client = TinyClient(SHA256, "alice", "pw")
    server_first = server.evaluate_response(client.first())
    final = client.final(server_first)
    short = final[: final.index(b",p=")] + b",p=" + base64.b64encode(b"short")
    with pytest.raises(ScramAuthenticationError, match="Invalid client credentials"):
        server.evaluate_response(short)


def test_server_nonces_differ_and_are_base36() -> None:
    firsts = {server_for(SHA256, {"a": "pw"}).evaluate_response(b"n,,n=a,r=c") for _ in range(3)}
    assert len(firsts) == 3
    for first in firsts:
        server_nonce = first.decode().split(",")[0][3:]
        assert server_nonce and all(
            ch in "0123456789abcdefghijklmnopqrstuvwxyz" for ch in server_nonce
        )


@pytest.mark.parametrize(
    "message",
    [
        b"",
        b"n,,n=alice",
        b"y,,n=alice,r=abc",  # gs2 "y"/"p": only "n" is supported
        b"p=tls-unique,,n=alice,r=abc",
        b"n,,n=al=ice,r=abc",  # a bare "=" in the saslname
        b"n,,n=alice,r=a,b",  # an extension without "="
        b"n,,n=alice,r=",
        b"n,,n=,r=abc",
        b"n,,n=al\xc3\xa9,r=abc",  # Kafka's grammar is ASCII only
        b"n,,n=alice,r=ab c",  # a space is not printable in the nonce
        b"n,,r=abc,n=alice",
    ],
)
def test_malformed_client_first(message: bytes) -> None:
    server = server_for(SHA256, {"alice": "pw", "al=ice": "pw"})
    with pytest.raises(ScramAuthenticationError, match="Invalid SCRAM client first message format"):
        server.evaluate_response(message)
    assert server.failed


@pytest.mark.parametrize(
    "template",
    [
        b"",
        b"c=biws,r={nonce}",  # no proof
        b"r={nonce},c=biws,p=AAAA",
        b"c=biw,r={nonce},p=AAAA",  # channel binding is not base64
        b"c=biws,r={nonce},p=AAA",
        b"c=biws,p=AAAA",
        b"c=biws,r={nonce},p=AAAA,x=1",
    ],
)
def test_malformed_client_final(template: bytes) -> None:
    server = server_for(SHA256, {"alice": "pw"})
    server_first = server.evaluate_response(b"n,,n=alice,r=abc")
    nonce = server_first.split(b",")[0][2:]
    with pytest.raises(ScramAuthenticationError, match="Invalid SCRAM client final message format"):
        server.evaluate_response(template.replace(b"{nonce}", nonce))
    assert server.failed


def test_reserved_mext_and_extensions_are_accepted() -> None:
    # Kafka rebuilds client-first-bare from the saslname, nonce and extensions (no m=).
    server = server_for(SHA256, {"alice": "pw"})
    client = TinyClient(SHA256, "alice", "pw")
    client.first(extensions=",foo=bar")
    server_first = server.evaluate_response(
        b"n,,m=future,n=alice,r=" + client.nonce.encode() + b",foo=bar"
    )
    assert client.verify(server.evaluate_response(client.final(server_first)))
    assert server.extensions == {"foo": "bar"}


# -- delegation tokens (tokenauth extension) ---------------------------------------------------


def test_tokenauth_uses_the_token_credential_and_owner() -> None:
    token = DelegationTokenCredential(
        "alice", create_credential(SHA256, "token-hmac"), 1_700_000_000_000
    )
    server = ScramServer(SHA256, {}.get, {"token-id-1": token}.get)
    client = TinyClient(SHA256, "token-id-1", "token-hmac")
    assert client.verify(exchange(server, client, extensions=",tokenauth=TRUE"))
    assert server.authorization_id == "alice"
    assert server.token_expiry_timestamp_ms == 1_700_000_000_000


def test_tokenauth_with_an_unknown_token() -> None:
    server = ScramServer(SHA256, {"t": create_credential(SHA256, "pw")}.get)
    with pytest.raises(
        ScramAuthenticationError, match="Token Authentication failed: Invalid tokenId : t"
    ):
        server.evaluate_response(b"n,,n=t,r=abc,tokenauth=true")


def test_tokenauth_false_is_a_password_login() -> None:
    server = server_for(SHA256, {"alice": "pw"})
    client = TinyClient(SHA256, "alice", "pw")
    assert client.verify(exchange(server, client, extensions=",tokenauth=false"))
    assert server.authorization_id == "alice"


# -- username escaping ------------------------------------------------------------------------


def test_unescape_rejects_a_bare_equals() -> None:
    with pytest.raises(ValueError, match="Invalid username"):
        unescape_saslname("a=b")
    assert unescape_saslname("a=3D=2Cb") == "a=,b"
    assert escape_username("a=,b") == "a=3D=2Cb"


@given(st.text())
def test_escaping_round_trips(username: str) -> None:
    escaped = escape_username(username)
    assert "," not in escaped
    assert unescape_saslname(escaped) == username


@settings(max_examples=examples(25), deadline=None)
@given(
    st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12)
)
def test_exchange_with_any_printable_username(username: str) -> None:
    server = server_for(SHA256, {username: "pw"})
    client = TinyClient(SHA256, username, "pw")
    assert client.verify(exchange(server, client))
    assert server.authorization_id == username


# -- Kafka's own ScramFormatter -----------------------------------------------------------------

JAVA = """
import java.util.Base64;
import org.apache.kafka.common.security.scram.internals.*;

public class Creds {
    public static void main(String[] args) throws Exception {
        ScramFormatter formatter = new ScramFormatter(ScramMechanism.forMechanismName(args[0]));
        byte[] salt = Base64.getDecoder().decode(args[2]);
        int iterations = Integer.parseInt(args[3]);
        byte[] salted = formatter.saltedPassword(args[1], salt, iterations);
        System.out.println(Base64.getEncoder().encodeToString(salted));
        System.out.println(ScramCredentialUtils.credentialToString(
            formatter.generateCredential(salt, salted, iterations)));
    }
}
"""


def test_kafka_scram_formatter_derives_the_same_credentials(
    tmp_path: pytest.TempPathFactory,
) -> None:
    javac, java = require("javac"), require("java")
    libs = kafka_libs(KAFKA_ZK_VERSION)
    cp = ":".join(
        str(p)
        for p in sorted(libs.glob("*.jar"))
        if p.name.startswith(("kafka-clients", "slf4j-api"))
    )
    src = tmp_path / "Creds.java"
    src.write_text(JAVA)
    subprocess.run([javac, "-cp", cp, "-d", str(tmp_path), str(src)], check=True)
    cases = [
        (SHA256, "alice-secret", b"salt-bytes", 4096),
        (SHA512, "pässwörd,=", bytes(range(16)), 8192),
    ]
    for mechanism, password, salt, iterations in cases:
        proc = subprocess.run(
            [
                java,
                *JVM_FLAGS,
                "-cp",
                f"{tmp_path}:{cp}",
                "Creds",
                mechanism.mechanism_name,
                password,
                base64.b64encode(salt).decode(),
                str(iterations),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        kafka_salted, kafka_string = proc.stdout.split()
        assert base64.b64decode(kafka_salted) == salted_password(
            mechanism, password, salt, iterations
        )
        ours = create_credential(mechanism, password, iterations, salt=salt)
        assert kafka_string == ours.to_kafka_string()
