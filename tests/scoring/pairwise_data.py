"""Larder, an invented grocery-ordering agent: a dataset of three cases answered by two versions."""

import json

from datasets.models import Dataset, GoldenCase
from tests.factories import run_payload

CASES = ("eggs", "milk", "bread")


def larder_create(actors, *, answers=None, tools=None):
    """The dataset "larder" with three cases and two experiments, v1 and v2, each answering all three.

    v1 orders 3 of each item, v2 orders 4 (a JSON answer); both call ``order`` with the quantity
    (``tools`` names another tool for an ``(experiment, case)``), which every case expects.
    """
    dataset = Dataset.objects.create(project=actors.acme, name="larder")
    for name in CASES:
        GoldenCase.objects.create(
            dataset=dataset, name=name, input={"ask": f"order {name}"}, expectations={"expected_tools": ["order"]}
        )
    batch = []
    for experiment, qty in (("v1", 3), ("v2", 4)):
        for name in CASES:
            answer = (answers or {}).get((experiment, name)) or json.dumps({"items": [{"sku": name, "qty": qty}]})
            tool = (tools or {}).get((experiment, name), "order")
            spans = [{"span_id": "t", "kind": "tool", "name": tool, "input": {"sku": name, "qty": qty}}]
            batch.append(
                run_payload(
                    f"{experiment}-{name}",
                    dataset="larder",
                    case=name,
                    experiment=experiment,
                    output=answer,
                    input={"ask": f"order {name}"},
                    spans=spans,
                )  # fmt: skip
            )
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    return dataset
