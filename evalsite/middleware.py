"""Body-size limit, answered with 413 before anything reads the body."""

from django.conf import settings

from evalsite.errors import PayloadTooLarge, domain_error_response


class BodySizeLimitMiddleware:
    """Refuse bodies over ``EVALSITE_MAX_BODY_BYTES`` with a 413 problem.

    A declared ``Content-Length`` is checked here. A body sent without one (chunked)
    is bounded by Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` when read, and the
    ``RequestDataTooBig`` that raises becomes the same 413 in the exception handler.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.EVALSITE_MAX_BODY_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            return domain_error_response(
                PayloadTooLarge(f"The body is {length} bytes; the limit is {limit} bytes (EVALSITE_MAX_BODY_BYTES).")
            )
        return self.get_response(request)
