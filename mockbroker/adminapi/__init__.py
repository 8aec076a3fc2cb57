"""The admin HTTP API's description, apart from any server: standard library only.

:mod:`.views` declares every resource and request body once (a frozen dataclass each),
:mod:`.routes` every route, :mod:`.jsonview` maps views to and from JSON, checks request bodies
against their declaration and writes their JSON Schema, and :mod:`.openapi` assembles the
OpenAPI document from all of it.  The control actions are declared in :mod:`.actions`.

Both sides use it: the admin server (:mod:`mockbroker.io.admin`) answers and validates with it,
and the stdlib-only :class:`~mockbroker.admin.AdminClient` reads answers with it.  So it imports
nothing of the broker (core, handlers, io) nor the codec, and no third-party package.
"""
