"""How many runs a synchronous request can judge: the deadline arithmetic, pure.

A synchronous request (``POST /v1/api/score``) must answer within the server's request
timeout R (``EVALSITE_REQUEST_TIMEOUT_SECONDS``). Each judge criterion is one call per
run, and a call may take the judge's whole ``timeout_seconds`` T. With J criteria named,
the runs that surely fit are ``R // (T × J)``: with the defaults (R = 30, T = 30) and
one criterion, one run. Raise R, or lower T, to judge more in one request; or use a
worker pass (``POST /v1/api/passes``), bounded by ``EVALSITE_JUDGE_PASS_MAX_RUNS``
instead.
"""


def judge_run_cap(request_timeout_seconds, timeout_seconds, criteria_count):
    """``R // (T × J)``: the most runs a request of R seconds can judge with J criteria of T seconds.

    ``criteria_count`` must be at least 1 (no criterion named: no judge call, no cap).
    """
    if criteria_count < 1:
        raise ValueError("criteria_count must be at least 1: without a judge criterion there is no cap")
    if timeout_seconds < 1:
        raise ValueError("timeout_seconds must be at least 1")
    if request_timeout_seconds < 0:
        raise ValueError("request_timeout_seconds must not be negative")
    return int(request_timeout_seconds // (timeout_seconds * criteria_count))
