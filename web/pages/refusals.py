"""A service's refusal (a domain error, ``evalsite.errors``) turned into the page's answer, in one place.

The API turns a domain error into problem+json in one exception handler; a page
instead answers again with the error where the reader looks: next to the form fields
it names (``errors_show``), or as a message at the top of the page it redirects to.
``refusal`` is that one way::

    with refusal(form) as refused:
        dataset = dataset_create(project=project, data=form.dataset_data())
    if not refused:
        return redirect(...)            # done
    return page_render(..., status=400)  # the form again, with the error on it

The block's domain error is caught (nothing after the failing call in the block runs),
shown, and kept as ``refused.error``; any other exception propagates.
"""

from django.contrib import messages

from evalsite.errors import DomainError
from web.pages.forms import errors_show


def refusal(form=None, *, request=None, prefix="", fields=None):
    """Catch a ``DomainError`` of the block: onto ``form``, or as an error message of ``request``.

    ``prefix`` starts the message (``"Case x was not quarantined: "``); ``fields`` maps
    the service's field names to the form's (``errors_show``). The context manager is
    truthy once refused.
    """
    return Refusal(form, request=request, prefix=prefix, fields=fields)


class Refusal:
    """The context manager of ``refusal``; ``error`` is the domain error it caught, else ``None``."""

    def __init__(self, form=None, *, request=None, prefix="", fields=None):
        if (form is None) == (request is None):
            raise TypeError("refusal shows the error on a form or as a message of a request, one of the two")
        self.form, self.request, self.prefix, self.fields = form, request, prefix, fields
        self.error = None

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if not isinstance(error, DomainError):
            return False
        self.error = error
        if self.form is not None:
            errors_show(self.form, error, self.fields)
        else:
            messages.error(self.request, f"{self.prefix}{error.detail}")
        return True

    def __bool__(self):
        return self.error is not None
