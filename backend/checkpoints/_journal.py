"""New objects of a step's snapshot, in one write: a journal beside git's object store, packed later.

git stores each new object as a file of its own (a loose object: a temporary file made, written,
linked into place and unlinked). On a local disk that is ~50 us of kernel work an object, and a
step that wrote one file makes at least two (its blob and the root tree): most of what a
checkpoint cost a step. Here a snapshot of a few files appends all its new objects to
`pending-objects` with one `write`, and whoever next holds the repository whole packs the
journal into one pack (`pack_journal`: a `.pack` and its `.idx`, as git writes them), then
empties it: a few hundred snapshots make one pack.

Every object a snapshot names is therefore in git's store or in the journal. What reads objects
through git or libgit2 (a diff, a restore, a prune, a full look falling back to the index's own
tree) packs the journal first (`ShadowRepo._held`, `Stager`); only the builders of the next
snapshot read the journal's trees, from memory (`Journal.trees`).

A record is the object's id (SHA-1, 20 bytes), its type (1 byte), its size (4 bytes) and its
bytes: it proves itself, so a record cut short by a kill (the holder's busy byte says it died)
ends what the packing keeps; nothing follows it, as no one appends past a dead holder's mark.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from pathlib import Path

JOURNAL = "pending-objects"
TREE, BLOB = 2, 3
"""Object types as packs number them."""
_NAMES = {TREE: b"tree", BLOB: b"blob"}
PACK_AFTER_OBJECTS = 512
PACK_AFTER_BYTES = 8 * 1024 * 1024
"""Past either, the next snapshot goes to a worker, which packs the journal first."""
_RECORD = struct.Struct(">20sBI")


def object_id(kind: int, data: bytes) -> bytes:
    """The object's git id (raw SHA-1 of its header and bytes)."""
    header = b"%s %d\0" % (_NAMES[kind], len(data))
    digest = hashlib.sha1(header)
    digest.update(data)
    return digest.digest()


class Journal:
    """This process's appends to one shadow repository's journal (callers hold its lock)."""

    def __init__(self, git_dir: Path) -> None:
        self.path = git_dir / JOURNAL
        self._fd: int | None = None
        self.objects = 0
        self.bytes = 0
        self.trees: dict[bytes, bytes] = {}
        """The trees appended since the last packing, by id: the next snapshot's builders read
        them here (git cannot see them yet)."""

    @property
    def full(self) -> bool:
        return self.objects >= PACK_AFTER_OBJECTS or self.bytes >= PACK_AFTER_BYTES

    def append(self, records: list[tuple[bytes, int, bytes]]) -> None:
        """Append (id, type, bytes) records in one write."""
        if not records:
            return
        buffer = b"".join(_RECORD.pack(oid, kind, len(data)) + data for oid, kind, data in records)
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        view = memoryview(buffer)
        while view:  # a regular file takes it whole; a short write (a full disk) raises next time round
            view = view[os.write(self._fd, view) :]
        for oid, kind, data in records:
            if kind == TREE:
                self.trees[oid] = data
        self.objects += len(records)
        self.bytes += len(buffer)

    def packed(self) -> None:
        """The journal was packed (by this process or another): forget what was counted."""
        self.objects = self.bytes = 0
        self.trees.clear()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def pack_journal(git_dir: Path) -> int:
    """Move the journal's objects into a pack of git's store, then empty it (in place: an
    appender's descriptor stays good). A record cut short, and anything after it, is dropped.
    How many objects were packed. Call with the repository's lock held."""
    path = git_dir / JOURNAL
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    if not data:
        return 0
    objects: dict[bytes, tuple[int, bytes]] = {}
    offset = 0
    while offset + _RECORD.size <= len(data):
        oid, kind, size = _RECORD.unpack_from(data, offset)
        start = offset + _RECORD.size
        body = data[start : start + size]
        if kind not in _NAMES or len(body) != size or object_id(kind, body) != oid:
            break  # cut short by a kill: its holder died there
        objects[oid] = (kind, body)
        offset = start + size
    if objects:
        write_pack(git_dir / "objects" / "pack", objects)
    os.truncate(path, 0)
    return len(objects)


def write_pack(folder: Path, objects: dict[bytes, tuple[int, bytes]]) -> str:
    """Write `objects` (id -> type, bytes) as a version 2 pack with its index, as git does: the
    pack first, the index last (git looks for packs by their index), each renamed into place.
    Returns the pack's name."""
    folder.mkdir(parents=True, exist_ok=True)
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    entries: list[tuple[bytes, int, int]] = []
    for oid, (kind, data) in objects.items():
        offset = len(body)
        chunk = _entry_header(kind, len(data)) + zlib.compress(data, 1)
        body += chunk
        entries.append((oid, zlib.crc32(chunk), offset))
    checksum = hashlib.sha1(body).digest()
    body += checksum
    if len(body) >= 1 << 31:
        raise ValueError("a journal this large is packed in parts")  # PACK_AFTER_BYTES keeps it far below
    entries.sort()
    fanout = [0] * 256
    for oid, _crc, _offset in entries:
        fanout[oid[0]] += 1
    for i in range(1, 256):
        fanout[i] += fanout[i - 1]
    index = bytearray(b"\xfftOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
    index += b"".join(oid for oid, _crc, _offset in entries)
    index += b"".join(struct.pack(">I", crc) for _oid, crc, _offset in entries)
    index += b"".join(struct.pack(">I", offset) for _oid, _crc, offset in entries)
    index += checksum
    index += hashlib.sha1(index).digest()
    name = f"pack-{checksum.hex()}"
    for suffix, content in ((".pack", body), (".idx", index)):
        temporary = folder / f"tmp-{name}{suffix}"
        temporary.write_bytes(content)
        os.chmod(temporary, 0o444)
        os.replace(temporary, folder / f"{name}{suffix}")
    return name


def _entry_header(kind: int, size: int) -> bytes:
    """A pack entry's type and size: 4 bits of size in the first byte, 7 in each after."""
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    header = bytearray()
    while size:
        header.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    header.append(byte)
    return bytes(header)
