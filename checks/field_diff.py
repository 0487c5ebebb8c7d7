"""Field by field, what changed between two structured values: two runs' answers, or the
arguments of their tool calls.

Pure functions over JSON values (no Django). A change is
``{"path", "op", "old", "new"}``: ``path`` in JSONPath form (``$.items[2].qty``,
``$["a key"]``), ``op`` one of ``changed`` (a new value, or a new type), ``added`` (only
in the new value) or ``removed`` (only in the old). Objects are compared key by key,
lists index by index (the longer list's tail is added or removed); anything else is
compared as a whole, so ``1`` and ``1.0`` are equal and ``1`` and ``"1"`` are not.

``answer_diff`` reads a string that holds JSON as that JSON; two values of which either
is not a JSON object or list fall back to ``("text", lines)``, a line diff, or
``("changed", [])`` when neither is text. ``tool_calls_diff`` pairs two runs' tool calls
in order and diffs the arguments of each pair.
"""

import difflib
import json
import re

MAX_CHANGES = 200  # what a page shows of one diff; the rest is counted, not listed
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key_path(path, key):
    return f"{path}.{key}" if _NAME.match(key) else f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _same(old, new):
    """Equal as JSON: a bool is not a number, ``1 == 1.0``."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    return old == new


def _walk(old, new, path, changes):
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            if key not in new:
                changes.append({"path": _key_path(path, str(key)), "op": "removed", "old": old[key], "new": None})
            elif key not in old:
                changes.append({"path": _key_path(path, str(key)), "op": "added", "old": None, "new": new[key]})
            else:
                _walk(old[key], new[key], _key_path(path, str(key)), changes)
        return
    if isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            item = f"{path}[{index}]"
            if index >= len(new):
                changes.append({"path": item, "op": "removed", "old": old[index], "new": None})
            elif index >= len(old):
                changes.append({"path": item, "op": "added", "old": None, "new": new[index]})
            else:
                _walk(old[index], new[index], item, changes)
        return
    if not _same(old, new):
        changes.append({"path": path, "op": "changed", "old": old, "new": new})


def field_diff(old, new, path="$"):
    """Every change turning ``old`` into ``new`` (``[]`` when they are equal), in path order."""
    changes = []
    _walk(old, new, path, changes)
    return changes


def structured(value):
    """``value`` as JSON: a string holding a JSON object or list is parsed; anything else is itself."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def text_lines(old, new):
    """``[(op, line)]`` of a line diff; op is ``equal``, ``delete`` or ``insert``."""
    a, b = str(old).splitlines(), str(new).splitlines()
    lines = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            lines += [("equal", line) for line in a[i1:i2]]
            continue
        lines += [("delete", line) for line in a[i1:i2]]
        lines += [("insert", line) for line in b[j1:j2]]
    return lines


def answer_diff(old, new):
    """``(kind, items)`` of two answers: ``("equal", [])``, ``("fields", changes)`` when both are
    JSON objects or lists, ``("text", lines)`` when either is other text, else ``("changed", [])``."""
    a, b = structured(old), structured(new)
    if isinstance(a, (dict, list)) and isinstance(b, (dict, list)):
        changes = field_diff(a, b)
        return ("fields", changes) if changes else ("equal", [])
    if _same(a, b):
        return "equal", []
    if isinstance(old, str) or isinstance(new, str):
        return "text", text_lines(
            old if isinstance(old, str) else json.dumps(old), new if isinstance(new, str) else json.dumps(new)
        )
    return "changed", []


def tool_calls_diff(old_calls, new_calls):
    """``[{"index", "old_name", "new_name", "op", "changes"}]`` of two runs' tool calls, paired in
    order (``{"name", "input"}`` each); op is ``same``, ``arguments`` (same tool, other arguments),
    ``tool`` (another tool), ``added`` or ``removed``. Calls that did not change are left out."""
    rows = []
    for index in range(max(len(old_calls), len(new_calls))):
        old = old_calls[index] if index < len(old_calls) else None
        new = new_calls[index] if index < len(new_calls) else None
        row = {"index": index + 1, "old_name": old and old.get("name"), "new_name": new and new.get("name")}
        if old is None or new is None:
            rows.append({**row, "op": "added" if old is None else "removed", "changes": []})
            continue
        changes = field_diff(structured(old.get("input")), structured(new.get("input")))
        if old.get("name") != new.get("name"):
            rows.append({**row, "op": "tool", "changes": changes})
        elif changes:
            rows.append({**row, "op": "arguments", "changes": changes})
    return rows


def change_text(change):
    """A change as one line: ``$.items[2].qty: 3 → 4``, ``$.note: added "x"``, ``$.old: removed 5``."""
    if change["op"] == "added":
        return f"{change['path']}: added {_short(change['new'])}"
    if change["op"] == "removed":
        return f"{change['path']}: removed {_short(change['old'])}"
    return f"{change['path']}: {_short(change['old'])} → {_short(change['new'])}"


def _short(value, limit=120):
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
