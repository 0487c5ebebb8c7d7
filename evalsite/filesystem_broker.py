"""kombu's filesystem transport, made safe against a message file read half-written.

kombu's writer creates ``<time>_<uuid>.<queue>.msg`` in the queue folder and then writes
the message into it; a worker listing the folder in between reads an empty (or partial)
file and dies on ``JSONDecodeError`` (kombu's filesystem transport has no guard). Here:

* the writer writes the message to a hidden temporary name in the same folder, which
  the reader's pattern (``*.<queue>.msg``) does not match, then renames it into place
  (``os.replace``, atomic on one filesystem): a reader sees the whole file or none;
* the reader reads a file before claiming it, and leaves one that is empty or does not
  parse for later (another writer, an older evalsite, may still be writing it). One that
  stays unreadable for ``UNREADABLE_GRACE_SECONDS`` is moved aside to ``unreadable/``
  next to the queue folder, logged, and never read again: a worker never dies on it.

Selected by ``CELERY_BROKER_TRANSPORT`` in the embedded default (evalsite/settings.py).
"""

import contextlib
import json
import logging
import os
import shutil
import time
import uuid
from queue import Empty

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)

UNREADABLE_GRACE_SECONDS = 60.0
TEMPORARY_PREFIX = ".writing-"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        temporary = os.path.join(self.data_folder_out, f"{TEMPORARY_PREFIX}{uuid.uuid4().hex}")
        try:
            with open(temporary, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(temporary, final)
        except OSError as exc:
            _remove_quietly(temporary)
            raise filesystem.ChannelError(f"Cannot add file {final!r} to directory") from exc

    def _get(self, queue):
        wanted = f"{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.partition(".")[2] != wanted:
                continue
            path = os.path.join(self.data_folder_in, name)
            payload = _read_whole(path)
            if payload is None:
                self._leave_or_set_aside(path, name)
                continue
            if self._claim(path, name):
                return payload
        raise Empty()

    def _claim(self, path, name):
        """Take the file out of the queue folder; False when another worker took it first."""
        try:
            if self.store_processed:
                shutil.move(path, os.path.join(self.processed_folder, name))
            else:
                os.remove(path)
        except OSError:
            return False
        return True

    def _leave_or_set_aside(self, path, name):
        try:
            age = time.time() - os.stat(path).st_mtime
        except OSError:
            return  # taken or removed meanwhile
        if age < UNREADABLE_GRACE_SECONDS:
            return  # still being written: read it on a later poll
        aside = os.path.join(os.path.dirname(os.path.abspath(self.data_folder_in)), "unreadable")
        try:
            os.makedirs(aside, exist_ok=True)
            shutil.move(path, os.path.join(aside, name))
        except OSError:
            return
        logger.error("broker message file %s unreadable for %.0f s, moved to %s", name, age, aside)


class Transport(filesystem.Transport):
    Channel = Channel


def _read_whole(path):
    """The message in ``path``, or None when the file is gone, empty or not whole JSON yet."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if not data:
        return None
    try:
        return loads(bytes_to_str(data))
    except (ValueError, json.JSONDecodeError):
        return None


def _remove_quietly(path):
    with contextlib.suppress(OSError):
        os.remove(path)
