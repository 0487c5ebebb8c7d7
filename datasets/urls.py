from django.urls import path

from datasets import api, api_datasets

urlpatterns = [
    path("traces", api.TraceCollection.as_view(), name="api-traces"),
    path("traces/<path:trace_id>", api.TraceDetail.as_view(), name="api-trace"),
    path("datasets", api_datasets.DatasetCollection.as_view(), name="api-datasets"),
    path("datasets/<str:name>", api_datasets.DatasetDetail.as_view(), name="api-dataset"),
    path("datasets/<str:name>/cases", api_datasets.CaseCollection.as_view(), name="api-cases"),
    path("datasets/<str:name>/cases/from-traces", api_datasets.CaseCapture.as_view(), name="api-cases-capture"),
    path("datasets/<str:name>/export", api_datasets.DatasetExport.as_view(), name="api-dataset-export"),
    path("datasets/<str:name>/import", api_datasets.DatasetImport.as_view(), name="api-dataset-import"),
    path("cases/<int:case_id>", api_datasets.CaseDetail.as_view(), name="api-case"),
    path("schemas/expectations", api_datasets.ExpectationsSchema.as_view(), name="api-schema-expectations"),
]
