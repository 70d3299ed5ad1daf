#!/usr/bin/env bash
# Test certificates for the secured broker of the README: a CA, and a server key and
# certificate for localhost (SAN DNS:localhost, IP:127.0.0.1; librdkafka and Java check it).
# Writes ca.pem (the clients' and broker's trust store) and server.pem (the broker's PEM
# key store: the PKCS#8 key followed by the certificate). For anything but a laptop, use
# your own CA.
set -euo pipefail
cd "${1:-.}"
openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=kafkacore demo CA" \
    -keyout ca-key.pem -out ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout server-key.pem -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 365 \
    -extfile san.ext -out server-cert.pem 2>/dev/null
cat server-key.pem server-cert.pem > server.pem
chmod 600 ca-key.pem server-key.pem server.pem
rm -f server.csr san.ext ca.srl
echo "wrote ca.pem and server.pem"
