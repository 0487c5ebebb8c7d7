"""Domain errors that only the OTLP endpoint raises (the rest come from ``evalsite.errors``)."""

from rest_framework import status as http_status

from evalsite.errors import DomainError, RetryLater


class UnsupportedMediaType(DomainError):
    """A Content-Type or Content-Encoding the endpoint does not speak."""

    status = http_status.HTTP_415_UNSUPPORTED_MEDIA_TYPE
    code = "unsupported-media-type"
    title = "Unsupported media type"


class Overloaded(RetryLater):
    """The server cannot take the export now; the exporter retries after ``Retry-After``."""

    status = http_status.HTTP_503_SERVICE_UNAVAILABLE
    code = "overloaded"
    title = "Service unavailable"
