"""The dashboard: ``GET /`` serves its page and ``GET /dashboard/{file}`` the page's script and
style sheet, all from the ``dashboard/`` directory next to this module (shipped in the wheel as
package data).

The page is static: it holds no data, so it is served without a token even where the admin API
requires one; the page's own calls to the API carry the token (see ``dashboard/dashboard.js``).
It is served by a middleware ahead of the API's router rather than by routes of its own: the
router holds exactly the JSON API that ``GET /openapi.json`` describes, and these are no part of
it.  Nothing is fetched from elsewhere: the page works offline, and its Content-Security-Policy
says so.
"""

from __future__ import annotations

import importlib.resources
import re

from aiohttp import web

__all__ = ["serve_pages"]

#: the page's assets, by suffix: what may be served, and as what
_CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
_ASSET = re.compile(r"/dashboard/([A-Za-z0-9_-]+(\.[a-z]+))")

#: the page and its assets come from this server only, and its scripts talk to it alone;
#: ``data:`` for the page's empty icon (so a browser asks for no /favicon.ico)
_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
           "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": _POLICY, "Referrer-Policy": "no-referrer"}


def _read(name: str) -> bytes | None:
    """A file of the dashboard's directory, or None when there is none by that name."""
    resource = importlib.resources.files(__package__).joinpath("dashboard", name)
    # read anew each time: a few kilobytes, and an edited page shows on the next reload
    return resource.read_bytes() if resource.is_file() else None


def _page(name: str, content_type: str) -> web.Response:
    body = _read(name)
    if body is None:
        raise web.HTTPNotFound()
    return web.Response(body=body, content_type=content_type, charset="utf-8",
                        headers=_HEADERS)


@web.middleware
async def serve_pages(request: web.Request, handler) -> web.StreamResponse:
    """``GET /`` and ``GET /dashboard/{file}`` (HEAD too); every other call goes on to the
    API.  Placed before the token check, so the page needs none."""
    path = request.path
    if path != "/" and not path.startswith("/dashboard/"):
        return await handler(request)
    if request.method not in ("GET", "HEAD"):
        raise web.HTTPMethodNotAllowed(request.method, ["GET", "HEAD"])
    if path == "/":
        return _page("index.html", "text/html")
    asset = _ASSET.fullmatch(path)
    if asset is None or asset.group(2) not in _CONTENT_TYPES:
        raise web.HTTPNotFound()
    return _page(asset.group(1), _CONTENT_TYPES[asset.group(2)])
