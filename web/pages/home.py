"""The signed-in user's projects, the project switcher, and a project's front page."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from evalsite.selectors import membership_find, memberships_of
from web.pages.access import CURRENT_PROJECT_SESSION_KEY, project_page


@login_required
def home(request):
    memberships = memberships_of(user=request.user)
    current = request.session.get(CURRENT_PROJECT_SESSION_KEY)
    return render(
        request, "home.html", {"memberships": memberships, "switcher_memberships": memberships, "current_slug": current}
    )


@login_required
def project_switch(request):
    """The project switcher (a plain GET form, no JavaScript needed): open the chosen project.

    A project the user is not a member of leads back to the home page.
    """
    slug = request.GET.get("project", "")
    if not slug or membership_find(user=request.user, slug=slug) is None:
        return redirect("home")
    return redirect("project-home", slug=slug)


@project_page
def project_home(request, project):
    return redirect("runs", slug=project.slug)
