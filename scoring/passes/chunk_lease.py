"""The lease a worker holds on a pass chunk while it scores it.

``EVALSITE_CHUNK_LEASE_SECONDS`` (default 20): a claimed chunk's ``lease_until`` is
renewed every third of it by a thread while the chunk is worked on
(``evalsite.leases``), so a live worker keeps its chunk however long one step takes,
and a worker killed with SIGKILL stops renewing. Every worker sweeps every quarter of
the lease (``scoring.passes.services.passes_resume``): a dead worker's chunk is sent again
about a lease after its last renewal, within about 30 s on the defaults.
"""

import contextlib
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evalsite.leases import renewed_while
from scoring.models import ChunkStatus, PassStatus, ScoringChunk, ScoringPass


def lease():
    return timedelta(seconds=settings.EVALSITE_CHUNK_LEASE_SECONDS)


def sweep_interval():
    """Seconds between two sweeps by a worker: a dead worker's chunk is sent again within a
    lease and a quarter of its last renewal."""
    return max(1.0, min(60.0, settings.EVALSITE_CHUNK_LEASE_SECONDS / 4))


def chunk_lease_kept(chunk, token):
    """Keep the chunk's lease (and its pass's progress stamp) fresh while it is worked on.

    From a thread, every third of the lease, whatever one step takes (a slow judge
    call): a live worker keeps its chunk, a dead one stops renewing and loses it. The
    pass's ``progressed_at`` moves too, so the chunks queued behind a long one are not
    taken for lost messages. Not inside a caller's transaction (the renewal could not
    see the claim).
    """
    if transaction.get_connection().in_atomic_block:
        return contextlib.nullcontext()

    def renew():
        now = timezone.now()
        renewed = ScoringChunk.objects.filter(
            pk=chunk.pk, status=ChunkStatus.RUNNING, token=token, scoring_pass__status=PassStatus.RUNNING
        ).update(lease_until=now + lease())
        if renewed:
            ScoringPass.objects.filter(pk=chunk.scoring_pass_id, progressed_at__lt=now).update(progressed_at=now)
        return renewed

    return renewed_while(renew, every=lease().total_seconds() / 3, name=f"chunk-lease-{chunk.pk}")
