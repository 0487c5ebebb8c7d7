"""The lease a worker holds on a pass chunk while it scores it.

``EVALSITE_CHUNK_LEASE_SECONDS`` (default 20): a claimed chunk's ``lease_until`` is
renewed every third of it by a thread while the chunk is worked on
(``evalsite.background``), so a live worker keeps its chunk however long one step takes,
and a worker killed with SIGKILL stops renewing. Every worker sweeps every quarter of
the lease (``scoring.passes.services.passes_resume``): a dead worker's chunk is sent again
about a lease after its last renewal, within about 30 s on the defaults.
"""

import contextlib

from django.db import transaction
from django.utils import timezone

from evalsite.background import lease, renewed_while
from scoring.models import ChunkStatus, PassStatus, ScoringChunk, ScoringPass


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

    return renewed_while(renew, name=f"chunk-lease-{chunk.pk}")
