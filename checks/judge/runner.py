"""Many judge calls at once: a thread pool bounded by the project's ``max_concurrency``.

``judge_many(config=, criterion_ids=, runs=, on_result=, deadline=None)`` (or ``pairs=``) calls
``judge_score`` for every (run, criterion) pair, at most ``max_concurrency`` calls in
flight, and hands each outcome to ``on_result(run, criterion_id, outcome)`` as soon as
its call finishes, so the caller can save each score at once: a pass cut short keeps
every score it finished. A pass over 1,000 runs against a model that answers in 1 s
takes about 1,000 / ``max_concurrency`` seconds, not 1,000.

``on_result`` runs in the calling thread, one outcome at a time (database writes stay
on the caller's connection and transaction). Calls are submitted as slots free up, so
``runs`` may be a generator and nothing queues behind the pool. If ``on_result``
raises, no further call is started, the exception propagates, and the calls still in
flight finish in the background (each bounded by ``timeout_seconds``) with their
outcomes dropped.
"""

import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from checks.scorers.base import Abstain

from .scorer import judge_score
from .spec import MAX_CONCURRENCY_RANGE, judge_from


def judge_many(*, config, on_result, criterion_ids=(), runs=(), pairs=None, deadline=None, on_call=None):
    """Judge every run on every criterion, ``max_concurrency`` calls at a time; returns the number of outcomes.

    ``pairs`` (an iterable of ``(run, criterion_id)``) replaces ``runs`` x ``criterion_ids``
    when only some pairs are wanted. ``on_call(result, seconds)``, when given, hears of each
    call as it returns, with its duration (for metrics).
    """
    judge = judge_from(config)
    low, high = MAX_CONCURRENCY_RANGE
    limit = max(low, min(int(judge.max_concurrency), high))
    if pairs is None:
        criterion_ids = list(criterion_ids)
        pairs = ((run, criterion_id) for run in runs for criterion_id in criterion_ids)
    pairs = iter(pairs)
    delivered = 0
    pool = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="judge")
    in_flight = {}
    finished = False
    try:

        def submit_next():
            pair = next(pairs, None)
            if pair is None:
                return False
            run, criterion_id = pair
            future = pool.submit(judge_score, config=judge, criterion_id=criterion_id, run=run, deadline=deadline)
            in_flight[future] = (pair, time.monotonic())
            return True

        while len(in_flight) < limit and submit_next():
            pass
        while in_flight:
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                (run, criterion_id), sent_at = in_flight.pop(future)
                result = _outcome(future)
                if on_call is not None:
                    on_call(result, time.monotonic() - sent_at)
                on_result(run, criterion_id, result)
                delivered += 1
                submit_next()
        finished = True
        return delivered
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)


def _outcome(future):
    try:
        return future.result()
    except Exception as exc:  # judge_score does not raise; this guards the pool itself
        return Abstain(
            "scorer_error", {"message": f"the judge raised {type(exc).__name__}", "exception": type(exc).__name__}
        )
