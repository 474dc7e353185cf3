"""Telling text files from binary ones."""

from __future__ import annotations

SNIFF_BYTES = 8_192


def looks_binary(sample: bytes) -> bool:
    """Whether a file's first bytes look binary: a NUL byte, or bytes that are not UTF-8.

    A multi-byte character cut by the end of the sample is not held against it.
    """
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 3
    return False
