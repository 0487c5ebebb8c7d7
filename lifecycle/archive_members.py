"""The members of an uploaded zip, read within limits, so a small archive cannot fill the memory.

A zip says how large each member is, but the header is the sender's word: a "zip bomb"
of a few kilobytes inflates to gigabytes. ``ArchiveMembers.read(name)`` streams one
member in chunks and counts what really comes out, refusing (``Invalid`` naming the
member) as soon as:

- the member passes ``EVALSITE_ARCHIVE_MAX_MEMBER_BYTES`` (default 512 MiB);
- all members read so far pass ``EVALSITE_ARCHIVE_MAX_TOTAL_BYTES`` (default 1 GiB);
- the member inflates more than ``EVALSITE_ARCHIVE_MAX_RATIO`` times (default 200) its
  compressed size, once past 1 MiB (small files of repeated text compress well and are
  harmless). JSONL of real runs compresses 5 to 20 times.

A member whose header already declares more than a limit is refused before any byte is
inflated. A member read twice counts twice.
"""

from django.conf import settings

from evalsite.errors import Invalid

_CHUNK_BYTES = 1024 * 1024
RATIO_CHECKED_AFTER_BYTES = 1024 * 1024


class ArchiveMembers:
    def __init__(self, archive):
        self.archive = archive
        self.total = 0
        self.max_member = settings.EVALSITE_ARCHIVE_MAX_MEMBER_BYTES
        self.max_total = settings.EVALSITE_ARCHIVE_MAX_TOTAL_BYTES
        self.max_ratio = settings.EVALSITE_ARCHIVE_MAX_RATIO

    def read(self, name):
        """The bytes of member ``name``; ``KeyError`` when there is none, ``Invalid`` past a limit."""
        info = self.archive.getinfo(name)
        self._declared_check(info)
        chunks, size = [], 0
        with self.archive.open(info) as member:
            while chunk := member.read(_CHUNK_BYTES):
                size += len(chunk)
                self.total += len(chunk)
                self._size_check(name, size, info.compress_size)
                chunks.append(chunk)
        return b"".join(chunks)

    def _declared_check(self, info):
        if info.file_size > self.max_member:
            raise _too_large(info.filename, f"says it holds {info.file_size} bytes", self._member_limit())
        if self.total + info.file_size > self.max_total:
            raise _too_large(info.filename, "would take the archive's members", self._total_limit())

    def _size_check(self, name, size, compressed):
        if size > self.max_member:
            raise _too_large(name, "inflates", self._member_limit())
        if self.total > self.max_total:
            raise _too_large(name, "takes the archive's members", self._total_limit())
        if size > RATIO_CHECKED_AFTER_BYTES and size > self.max_ratio * max(compressed, 1):
            raise _too_large(
                name,
                f"inflates more than {self.max_ratio} times its compressed size ({compressed} bytes)",
                "EVALSITE_ARCHIVE_MAX_RATIO; an archive that does is refused as a zip bomb",
            )

    def _member_limit(self):
        return f"over {self.max_member} bytes (EVALSITE_ARCHIVE_MAX_MEMBER_BYTES)"

    def _total_limit(self):
        return f"over {self.max_total} bytes in all (EVALSITE_ARCHIVE_MAX_TOTAL_BYTES)"


def _too_large(name, what, limit):
    message = f"{what} {limit}; nothing was written."
    return Invalid(f"{name}: {message}", errors=[{"field": name, "message": message}])
