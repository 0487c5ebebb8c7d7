"""Reservo's three tools over an in-memory booking state.

Contract:

- ``quote_room {room, tier, hours}`` prices a booking without making it.
- ``book_room {room, tier, hours, member}`` makes a booking; ids are ``BK-0001``,
  ``BK-0002``, ... in order, restarting at ``BK-0001`` after :func:`reset_state`, so a
  script can cancel the booking it just made.
- ``cancel_booking {booking_id}`` cancels a confirmed booking with a full refund.

A tool that cannot do what it was asked (unknown room or tier, bad hours, unknown or
already cancelled booking, a missing or unexpected argument) raises :class:`ToolError`.
The agent loop turns that into a failed tool call whose result is ``{"error": "..."}``
(see ``agent.py``); that object never validates against the tool's entry in
:data:`OUTPUT_SCHEMAS`, so a failed target tool shows up as a schema failure.

Prices (cents of EUR per hour, see :data:`HOURLY_RATE_CENTS`) are the anchors the golden
set pins: Focus pro 3 h = 7500, Focus basic 3 h = 4500, Boardroom pro 1 h = 6000,
Studio basic 1 h = 3000.

Everything here is deterministic and stdlib-only: no Django, no clock, no randomness.
"""

CURRENCY = "EUR"

HOURLY_RATE_CENTS = {
    "Focus": {"basic": 1500, "pro": 2500},
    "Boardroom": {"basic": 4000, "pro": 6000},
    "Studio": {"basic": 3000, "pro": 4500},
}
ROOMS = list(HOURLY_RATE_CENTS)
TIERS = ["basic", "pro"]
MIN_HOURS = 1
MAX_HOURS = 12

TOOL_NAMES = ["quote_room", "book_room", "cancel_booking"]


class ToolError(Exception):
    """A tool refused its input; the message is what the model is shown."""


_room = {"type": "string", "enum": ROOMS}
_tier = {"type": "string", "enum": TIERS}
_hours = {"type": "integer", "minimum": MIN_HOURS, "maximum": MAX_HOURS}
_cents = {"type": "integer", "minimum": 0}
_booking_id = {"type": "string", "pattern": "^BK-[0-9]{4,}$"}

#: The tools as the model is told about them (Anthropic ``tools`` shape).
TOOL_DEFINITIONS = [
    {
        "name": "quote_room",
        "description": "Price a room booking without making it. "
        "With breakdown=true the result also carries the hourly rate.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["room", "tier", "hours"],
            "properties": {"room": _room, "tier": _tier, "hours": _hours, "breakdown": {"type": "boolean"}},
        },
    },
    {
        "name": "book_room",
        "description": "Book a room for a member and return the confirmed booking.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["room", "tier", "hours", "member"],
            "properties": {
                "room": _room,
                "tier": _tier,
                "hours": _hours,
                "member": {"type": "string", "minLength": 1},
            },
        },
    },
    {
        "name": "cancel_booking",
        "description": "Cancel a confirmed booking; the full price is refunded.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["booking_id"],
            "properties": {"booking_id": _booking_id},
        },
    },
]

#: JSON Schema (draft-07) of each tool's successful result: the contract the gate's
#: ``tool_output_schema`` check holds the target tool to. ``additionalProperties`` is
#: false, so a result that grows a field (quote_room with ``breakdown``) or an error
#: object breaks it.
OUTPUT_SCHEMAS = {
    "quote_room": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "quote_room result",
        "type": "object",
        "additionalProperties": False,
        "required": ["room", "tier", "hours", "total_cents", "currency"],
        "properties": {
            "room": _room,
            "tier": _tier,
            "hours": _hours,
            "total_cents": _cents,
            "currency": {"type": "string", "enum": [CURRENCY]},
        },
    },
    "book_room": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "book_room result",
        "type": "object",
        "additionalProperties": False,
        "required": ["booking_id", "room", "tier", "hours", "member", "total_cents", "status"],
        "properties": {
            "booking_id": _booking_id,
            "room": _room,
            "tier": _tier,
            "hours": _hours,
            "member": {"type": "string", "minLength": 1},
            "total_cents": _cents,
            "status": {"type": "string", "enum": ["confirmed"]},
        },
    },
    "cancel_booking": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "cancel_booking result",
        "type": "object",
        "additionalProperties": False,
        "required": ["booking_id", "status", "refund_cents"],
        "properties": {
            "booking_id": _booking_id,
            "status": {"type": "string", "enum": ["cancelled"]},
            "refund_cents": _cents,
        },
    },
}


def _arguments(tool, arguments, required, optional=()):
    if not isinstance(arguments, dict):
        raise ToolError(f"{tool}: arguments must be an object")
    missing = [key for key in required if key not in arguments]
    if missing:
        raise ToolError(f"{tool}: missing argument {', '.join(missing)}")
    unexpected = sorted(set(arguments) - set(required) - set(optional))
    if unexpected:
        raise ToolError(f"{tool}: unexpected argument {', '.join(unexpected)}")
    return arguments


def _hourly_rate(room, tier):
    if room not in HOURLY_RATE_CENTS:
        raise ToolError(f"unknown room {room!r}; rooms are {', '.join(ROOMS)}")
    if tier not in TIERS:
        raise ToolError(f"unknown tier {tier!r}; tiers are {', '.join(TIERS)}")
    return HOURLY_RATE_CENTS[room][tier]


def _checked_hours(hours):
    # bool is an int in Python; True hours is a script bug, not one hour.
    if isinstance(hours, bool) or not isinstance(hours, int) or not MIN_HOURS <= hours <= MAX_HOURS:
        raise ToolError(f"hours must be a whole number from {MIN_HOURS} to {MAX_HOURS}, got {hours!r}")
    return hours


class ReservoState:
    """The bookings of one Reservo instance. ``reset()`` empties it and restarts ids."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.bookings = {}
        self._next_number = 1

    def quote_room(self, arguments):
        args = _arguments("quote_room", arguments, ["room", "tier", "hours"], ["breakdown"])
        rate = _hourly_rate(args["room"], args["tier"])
        hours = _checked_hours(args["hours"])
        result = {
            "room": args["room"],
            "tier": args["tier"],
            "hours": hours,
            "total_cents": rate * hours,
            "currency": CURRENCY,
        }
        if args.get("breakdown") is True:
            # Not in OUTPUT_SCHEMAS["quote_room"]: the published contract has no such
            # field, so asking for a breakdown is how a quote breaks its schema while
            # every priced field stays right.
            result["hourly_cents"] = rate
        return result

    def book_room(self, arguments):
        args = _arguments("book_room", arguments, ["room", "tier", "hours", "member"])
        rate = _hourly_rate(args["room"], args["tier"])
        hours = _checked_hours(args["hours"])
        member = args["member"]
        if not isinstance(member, str) or not member.strip():
            raise ToolError("member must be a non-empty name")
        booking_id = f"BK-{self._next_number:04d}"
        self._next_number += 1
        booking = {
            "booking_id": booking_id,
            "room": args["room"],
            "tier": args["tier"],
            "hours": hours,
            "member": member,
            "total_cents": rate * hours,
            "status": "confirmed",
        }
        self.bookings[booking_id] = booking
        return dict(booking)

    def cancel_booking(self, arguments):
        args = _arguments("cancel_booking", arguments, ["booking_id"])
        booking_id = args["booking_id"]
        booking = self.bookings.get(booking_id) if isinstance(booking_id, str) else None
        if booking is None:
            raise ToolError(f"unknown booking {booking_id!r}")
        if booking["status"] == "cancelled":
            raise ToolError(f"booking {booking_id} is already cancelled")
        booking["status"] = "cancelled"
        return {"booking_id": booking_id, "status": "cancelled", "refund_cents": booking["total_cents"]}

    def call(self, name, arguments):
        """Run tool ``name``; raises KeyError for an unknown tool and ToolError when it refuses."""
        if name not in TOOL_NAMES:
            raise KeyError(name)
        return getattr(self, name)(arguments)


#: The state the module-level functions and ``run_reservo_agent`` use by default.
STATE = ReservoState()


def reset_state():
    """Empty the default state; the next booking is ``BK-0001``. Call it before each case."""
    STATE.reset()


# The seed's name for the same thing.
reset_reservo_state = reset_state


def quote_room(arguments):
    return STATE.quote_room(arguments)


def book_room(arguments):
    return STATE.book_room(arguments)


def cancel_booking(arguments):
    return STATE.cancel_booking(arguments)
