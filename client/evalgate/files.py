"""Writing what commands produce: JSONL records and report files in directories that may not exist yet."""

from __future__ import annotations

import json
import os


def jsonl_write(records, stream) -> None:
    # JSONL is UTF-8; on a console that cannot show it, \u escapes keep it valid JSON.
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    ascii_only = encoding != "utf8"
    for record in records:
        stream.write(json.dumps(record, ensure_ascii=ascii_only) + "\n")


def parent_ensure(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)


def write_json(value, path: str) -> None:
    """``value`` as indented JSON in ``path`` (the verdict as an artifact: the seed's regression_report.json)."""
    parent_ensure(path)
    with open(path, "w", encoding="utf-8") as out:
        json.dump(value, out, indent=2, ensure_ascii=False)
        out.write("\n")
