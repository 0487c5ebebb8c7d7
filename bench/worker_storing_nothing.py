"""A Celery worker whose scoring passes store no row: what a pass costs before writing.

``bench/reference.py`` runs the reference pass on it to measure the ceiling that any
storage of scores leaves: the pass is planned, claimed, loaded, scored, its runs locked,
what is stored read back and its counters kept, exactly as on a real worker, but the
score, config and abstention rows are not written: neither the writer's final step nor
the configs a pass stores ahead of it.

    .venv/bin/python -m bench.worker_storing_nothing -A evalsite worker ...   (celery's arguments)
"""

import sys

from celery.__main__ import main
from celery.signals import worker_init


@worker_init.connect
def _store_nothing(**kwargs):
    import django

    django.setup()
    from scoring.passes import services
    from scoring.pipeline import writer

    writer._rows_write = lambda *args, **kwargs: None
    services.outcome_configs_store = lambda *args, **kwargs: None


if __name__ == "__main__":
    sys.exit(main())
