"""The process-wide cache of config hashes stays within its bytes, however many cases a pass meets.

A pass over a million cases resolves a million distinct case configs (each carries the
case's expected answer). Plans come and go with their chunks; what the process keeps
must not grow with the pass.
"""

import gc
import tracemalloc

from scoring.pipeline import engine
from scoring.pipeline.engine import ScoringPlan

CHUNK = 500


def _configs(count):
    for n in range(count):
        yield {"expected": f"case {n}: " + "the booking is confirmed for two nights " * 4, "required": f"ref-{n}"}


def _resolve_all(count):
    plan = None
    for n, config in enumerate(_configs(count)):
        if n % CHUNK == 0:
            plan = ScoringPlan([])  # a chunk's plan, dropped with its chunk
        plan._hashed(config)


def test_the_cache_of_config_hashes_is_bounded_by_bytes():
    engine._HASHED.clear()
    engine._HASHED_BYTES[0] = 0
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _resolve_all(30_000)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert engine._HASHED_BYTES[0] <= engine._HASHED_MAX_BYTES
    # The bound plus the allocator's slack, far below 30,000 configs of 4 KiB buffers (117 MiB).
    assert kept < engine._HASHED_MAX_BYTES * 1.5, f"{kept / 2**20:.1f} MiB kept"


def test_a_config_seen_again_is_not_hashed_again():
    engine._HASHED.clear()
    engine._HASHED_BYTES[0] = 0
    first = ScoringPlan([])._hashed({"required": "x"})
    again = ScoringPlan([])._hashed({"required": "x"})
    assert (first.config_hash, first.config_json) == (again.config_hash, again.config_json)
    assert len(engine._HASHED) == 1
