"""``make fuzz``, Python half: a coverage-guided (atheris/libFuzzer) fuzzer of the
protocol codec, seeded with real frames of every API key and version.

Each input is a request frame (without its size prefix) given to ``decode_request``; a
second pass decodes it as a response of the API and version its first four bytes name.
Property, as in ``test_protocol_fuzz.py``: success or :class:`ProtocolError`, nothing
else. libFuzzer's ``-rss_limit_mb`` and ``-timeout`` make an allocation that follows a
declared length, or a hang, a finding. atheris instruments the ``kafkacore.protocol``
modules (and the readers the codec compiles at run time: they are compiled before the
fuzzing starts, from the seed frames, and instrumented then).

Usage: ``python -m fuzz.atheris_protocol [libFuzzer flags] [corpus dirs]`` (from
``tests/``, ``PYTHONPATH=../python:.``); ``make fuzz`` runs it with ``-runs``.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path
from types import FunctionType

import atheris

with atheris.instrument_imports(include=["kafkacore.protocol"]):
    from kafkacore.protocol import APIS, ProtocolError, decode_request, decode_response

from fuzz.frames import request_frames, response_frames


def one_input(data: bytes) -> None:
    try:
        decode_request(data)
    except ProtocolError as exc:
        str(exc)
    if len(data) >= 4:
        key, version = struct.unpack_from(">hh", data, 0)
        api = APIS.get(key)
        if api is not None and api.implements(version):
            try:
                decode_response(data[4:], key, version)
            except ProtocolError as exc:
                str(exc)


def write_seeds(directory: Path) -> int:
    """Real frames as seed files (responses prefixed with their API key and version)."""
    directory.mkdir(parents=True, exist_ok=True)
    blobs = [f for _k, _v, f in request_frames()]
    blobs += [struct.pack(">hh", k, v) + f for k, v, f in response_frames()]
    for blob in blobs:
        (directory / hashlib.sha1(blob).hexdigest()[:16]).write_bytes(blob)
    return len(blobs)


def main() -> None:
    # Compile (and so instrument) every reader before libFuzzer starts.
    for _key, _version, frame in request_frames(per_version=1):
        decode_request(frame)
    for key, version, frame in response_frames():
        decode_response(frame, key, version)
    generated: dict[int, FunctionType] = {}
    for api in APIS.values():
        for msg in (api.request, api.response):
            for version in range(api.implemented_min, api.implemented_max + 1):
                for value in msg.reader(version).__globals__.values():
                    if isinstance(value, FunctionType) and value.__code__.co_filename.startswith(
                        "<kafkacore.protocol"
                    ):
                        generated[id(value)] = value
    for fn in generated.values():
        atheris.instrument_func(fn)
    argv = list(sys.argv)
    if "--seeds" in argv:
        at = argv.index("--seeds")
        write_seeds(Path(argv[at + 1]))
        del argv[at : at + 2]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
