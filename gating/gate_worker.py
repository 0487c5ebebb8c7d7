"""Who evaluates a running gate run, and how a gate whose evaluator died is taken over.

An evaluation holds its gate run by a lease: ``gate_claim`` takes it by compare-and-set
(a gate run no one holds, or whose lease ran out, or that the same holder already held),
and a worker's ``lease_kept`` renews it from a thread every third of the lease while
the evaluation works (``evalsite.background``, as a scoring chunk's) (scoring what is missing may call a judge for minutes). An
evaluation inside a request holds it for the request's timeout instead. A worker
killed with SIGKILL stops renewing; once the lease runs out, ``gate_runs_resume`` (sent
by every worker every ``sweep_interval()`` seconds) sends the gate run to a worker
again, and the next evaluation starts over: the scores the dead one wrote are stored,
so it only computes what is missing and reaches the same verdict.

The lease is ``EVALSITE_CHUNK_LEASE_SECONDS``, the same as a scoring chunk's.
"""

import os
import socket
import threading

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from evalsite.background import lease, renewed_while
from gating.models import GateRun


def holder_name(kind="worker"):
    return f"{kind}:{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def gate_claim(gate_run_id, holder, *, hold=None, now=None):
    """Take the gate run for ``holder`` for ``hold`` (default: a lease); False when another
    live holder has it or it is finished."""
    now = now or timezone.now()
    free = Q(claimed_by="") | Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(claimed_by=holder)
    return bool(
        GateRun.objects.filter(pk=gate_run_id, status=GateRun.Status.RUNNING)
        .filter(free)
        .update(claimed_by=holder, lease_until=now + (hold or lease()), attempts=F("attempts") + 1)
    )


def _renew(gate_run_id, holder):
    return GateRun.objects.filter(pk=gate_run_id, status=GateRun.Status.RUNNING, claimed_by=holder).update(
        lease_until=timezone.now() + lease()
    )


def lease_kept(gate_run_id, holder):
    """Renew the lease from a thread until the block ends (its own database connection)."""
    return renewed_while(lambda: _renew(gate_run_id, holder), name=f"gate-lease-{gate_run_id}")


def gate_runs_resume(*, send, now=None):
    """Send again the gate runs whose evaluator died (lease ran out) or whose message was lost.

    ``send(gate_run)`` enqueues its evaluation. Safe from any number of workers: each
    gate run is sent at most once per lease period (the lease is pushed forward first).
    Returns how many were sent.
    """
    now = now or timezone.now()
    lost_evaluator = Q(lease_until__lt=now)
    lost_message = Q(lease_until__isnull=True, created_at__lt=now - lease())  # never claimed
    sent = 0
    for gate_run in GateRun.objects.filter(status=GateRun.Status.RUNNING).filter(lost_evaluator | lost_message):
        with transaction.atomic():
            moved = (
                GateRun.objects.filter(pk=gate_run.pk, status=GateRun.Status.RUNNING)
                .filter(lost_evaluator | lost_message)
                .update(lease_until=now + lease(), claimed_by="")
            )
        if moved:
            send(gate_run)
            sent += 1
    return sent
