"""A quick proof that a JSON value satisfies a simple JSON Schema, before jsonschema is asked.

jsonschema walks an instance through generic keyword functions and error generators:
about 12 µs for a small object against a five-keyword schema, most of a schema check's
cost. ``screen_compile`` turns a schema made only of the common keywords (``type``,
``properties``, ``required``, ``items`` as one schema, ``additionalProperties``, the
numeric and length bounds, and annotations) into a plain predicate. A predicate that
answers ``True`` has proved the value valid: ``schemas.schema_errors`` then returns no
errors without jsonschema. ``False`` proves nothing: jsonschema runs as ever and lists
the errors, so every message stays jsonschema's own.

A predicate may only say ``True`` when jsonschema would find no error, never the other
way round, so where a keyword's meaning is subtle it answers ``False``: an integer must
be a Python ``int`` (jsonschema also accepts ``1.0``), any type that JSON cannot hold is
refused, and a schema with any other keyword (``enum``, ``$ref``, ``pattern``,
``allOf``...) or an older draft gets no predicate at all.
"""

import jsonschema

# Drafts whose meaning of every keyword below is the same.
_DRAFTS = (
    jsonschema.Draft202012Validator,
    jsonschema.Draft201909Validator,
    jsonschema.Draft7Validator,
    jsonschema.Draft6Validator,
)
# Keywords that assert nothing: the screen reads past them.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "format", "deprecated"})
_JSON_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})
# The Python types of the JSON values of each type name (a bool is no number; an
# integer is an int, never a whole float: jsonschema's 1.0 is left to it).
_KINDS = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


class _Unsupported(Exception):
    pass


def screen_compile(schema, validator_class):
    """The predicate for ``schema`` (already checked against its meta-schema), or None.

    None when the draft or any keyword is outside what the screen understands.
    """
    if validator_class not in _DRAFTS:
        return None
    try:
        return _compiled(schema, root=True)
    except _Unsupported:
        return None


def _compiled(schema, root=False):
    if schema is True:
        return _any_json
    if schema is False:
        return _nothing
    if type(schema) is not dict:
        raise _Unsupported
    checks = []
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS or (root and keyword == "$schema"):
            continue
        build = _KEYWORDS.get(keyword)
        if build is None:
            raise _Unsupported
        checks.append(build(value, schema))
    if not checks:
        return _any_json
    if len(checks) == 1:
        return checks[0]
    return _every(tuple(checks))


# The predicates loop rather than call all() on a generator: they run once or more per
# check of a pass, and a generator costs more than the tests it runs here.
def _every(checks):
    def screen(value):
        for check in checks:  # noqa: SIM110
            if not check(value):
                return False
        return True

    return screen


def _any_json(value):
    return type(value) in _JSON_TYPES


def _nothing(value):
    return False


def _type(value, schema):
    names = [value] if type(value) is str else value
    if type(names) is not list or any(name not in _KINDS for name in names):
        raise _Unsupported
    kinds = frozenset(kind for name in names for kind in _KINDS[name])
    return lambda instance: type(instance) in kinds


def _on(kind, check):
    """``check`` on a value of ``kind``; any other JSON value passes; a non-JSON value proves nothing."""

    def screen(value):
        if type(value) is kind:
            return check(value)
        return type(value) in _JSON_TYPES

    return screen


def _on_number(check):
    def screen(value):
        if type(value) is int or type(value) is float:
            return check(value)
        return type(value) in _JSON_TYPES

    return screen


def _properties(value, schema):
    if type(value) is not dict:
        raise _Unsupported
    members = tuple((name, _compiled(sub)) for name, sub in value.items())

    def check(obj):
        for name, member in members:  # noqa: SIM110
            if name in obj and not member(obj[name]):
                return False
        return True

    return _on(dict, check)


def _required(value, schema):
    if type(value) is not list or not all(type(name) is str for name in value):
        raise _Unsupported
    names = frozenset(value)
    return _on(dict, lambda obj: names.issubset(obj))


def _additional(value, schema):
    if "patternProperties" in schema:
        raise _Unsupported
    known = frozenset(schema.get("properties", {}))
    check = _compiled(value)
    return _on(dict, lambda obj: all(check(obj[name]) for name in obj if name not in known))


def _items(value, schema):
    if type(value) is not dict and type(value) is not bool:  # a list is tuple validation in older drafts
        raise _Unsupported
    check = _compiled(value)
    return _on(list, lambda items: all(check(item) for item in items))


def _number(value):
    if type(value) not in (int, float):
        raise _Unsupported
    return value


def _length(value):
    if type(value) is not int or value < 0:
        raise _Unsupported
    return value


# Each mirrors jsonschema's comparison exactly (``not (x < minimum)``: NaN passes both ways).
_KEYWORDS = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "minimum": lambda value, schema: (lambda bound: _on_number(lambda x: not (x < bound)))(_number(value)),
    "maximum": lambda value, schema: (lambda bound: _on_number(lambda x: not (x > bound)))(_number(value)),
    "minLength": lambda value, schema: (lambda n: _on(str, lambda s: len(s) >= n))(_length(value)),
    "maxLength": lambda value, schema: (lambda n: _on(str, lambda s: len(s) <= n))(_length(value)),
    "minItems": lambda value, schema: (lambda n: _on(list, lambda items: len(items) >= n))(_length(value)),
    "maxItems": lambda value, schema: (lambda n: _on(list, lambda items: len(items) <= n))(_length(value)),
}
