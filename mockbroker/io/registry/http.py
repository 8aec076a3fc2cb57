"""The Schema Registry over HTTP: Confluent's REST API v1, its paths, query parameters, bodies,
content type and error bodies (``{"error_code": 40401, "message": "..."}``), served by aiohttp
on the brokers' event loop, so every call sees the cluster between two Kafka requests.

The operations are :class:`~mockbroker.core.schemas.registry.SchemaRegistry`'s; this module
reads requests and writes answers as Confluent's server does: a query flag is true when it is
``true`` in any case (Java's ``Boolean.valueOf``, so confluent-kafka's ``normalize=False`` is
false), a version in a path is a number from 1 or ``latest``, a body that is not JSON is 400
and one of the wrong shape 422.

With SASL users configured for the cluster, every call needs HTTP basic credentials of one of
them (or the admin API's token as a bearer token), else 401; over TLS when the brokers' listeners
use it (:mod:`.server`).
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from aiohttp import web

from mockbroker.core.schemas.cluster import registry_of
from mockbroker.core.schemas.compatibility import LEVELS
from mockbroker.core.schemas.formats import SCHEMA_TYPES
from mockbroker.core.control.rules import http_status
from mockbroker.core.schemas.routes import ROUTES
from mockbroker.core.schemas.registry import (
    CONFIG_FIELDS, DEFAULT_CONTEXT, RegistryError, SchemaRegistry, guid_of, parse_version,
)
from mockbroker.core.schemas.store import SchemaVersion

if TYPE_CHECKING:
    from mockbroker.io.runtime import ClusterRuntime

log = logging.getLogger("mockbroker.schema_registry")

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class Call:
    """One request as the operations read it."""

    def __init__(self, request: web.Request, body: bytes):
        self.request = request
        self.path = request.match_info
        self.query = request.query
        self._body = body

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.query.get(name)
        return default if value is None else value.strip().lower() == "true"

    def text(self, name: str) -> str | None:
        value = self.query.get(name)
        return value or None

    def int(self, name: str, default: int) -> int:
        value = self.query.get(name)
        if value is None or value == "":
            return default
        try:
            return int(value)
        except ValueError:
            raise web.HTTPNotFound() from None

    def body(self) -> dict[str, Any]:
        if not self._body.strip():
            raise RegistryError(422, 422, "The request body must be a JSON object")
        try:
            data = json.loads(self._body)
        except ValueError as exc:
            raise RegistryError(400, 400, f"Unrecognized JSON: {exc}") from None
        if not isinstance(data, dict):
            raise RegistryError(422, 422, "The request body must be a JSON object")
        return data


def _entity(found: SchemaVersion, *, schema: str | None = None,
            lookup: bool = False) -> dict[str, Any]:
    """A subject's version as ``GET /subjects/{s}/versions/{v}`` answers it: whether it is
    soft-deleted too (Confluent 8 says it in every stored version's answer, not a lookup's)."""
    out: dict[str, Any] = {"subject": found.subject, "version": found.version, "id": found.id,
                           "guid": guid_of(found), "schemaType": found.schema_type}
    _schema_fields(out, found, schema)
    if not lookup:
        out["deleted"] = found.deleted
    return out


def _schema_fields(out: dict[str, Any], found: SchemaVersion, schema: str | None) -> None:
    if found.references:
        out["references"] = found.references
    if found.metadata:
        out["metadata"] = found.metadata
    if found.rule_set:
        out["ruleSet"] = found.rule_set
    out["schema"] = found.schema if schema is None else schema


class RegistryApi:
    """Every route's operation, over the cluster's registry."""

    def __init__(self, runtime: "ClusterRuntime"):
        self.runtime = runtime

    @property
    def registry(self) -> SchemaRegistry:
        return registry_of(self.runtime.core.cluster)

    def _formatted(self, found: SchemaVersion, fmt: str | None) -> str | None:
        if not fmt:
            return None
        return self.registry.parsed(found).formatted(fmt)

    # -- subjects ---------------------------------------------------------------------------------

    def subjects(self, call: Call):
        deleted_only = call.flag("deletedOnly") or call.flag("deleted_only")
        found = self.registry.subjects(call.text("subjectPrefix"), deleted=call.flag("deleted"),
                                       deleted_only=deleted_only)
        return _page(found, call)

    def versions(self, call: Call):
        subject = call.path["subject"]
        deleted_only = call.flag("deletedOnly") or call.flag("deleted_only")
        return _page(self.registry.versions(
            subject, deleted=call.flag("deleted"), deleted_only=deleted_only,
            deleted_as_negative=call.flag("deletedAsNegative")), call)

    def register(self, call: Call):
        body = call.body()
        found = self.registry.register(call.path["subject"], body,
                                       normalize=call.flag("normalize"),
                                       force=call.flag("force"))
        out: dict[str, Any] = {"id": found.id, "version": found.version,
                               "guid": guid_of(found), "schemaType": found.schema_type}
        _schema_fields(out, found, self._formatted(found, call.text("format")))
        return out

    def lookup(self, call: Call):
        found = self.registry.lookup(call.path["subject"], call.body(),
                                     normalize=call.flag("normalize"),
                                     deleted=call.flag("deleted"))
        return _entity(found, schema=self._formatted(found, call.text("format")),
                       lookup=True)

    def version(self, call: Call):
        deleted = call.flag("deleted")
        found = self.registry.version(call.path["subject"], parse_version(call.path["version"]),
                                      deleted=deleted)
        return _entity(found, schema=self._formatted(found, call.text("format")))

    def version_schema(self, call: Call):
        found = self.registry.version(call.path["subject"], parse_version(call.path["version"]),
                                      deleted=call.flag("deleted"))
        return Raw(self._formatted(found, call.text("format")) or found.schema)

    def referenced_by(self, call: Call):
        return _page(self.registry.referenced_by(
            call.path["subject"], parse_version(call.path["version"]),
            deleted=call.flag("deleted")), call)

    def delete_subject(self, call: Call):
        return self.registry.delete_subject(call.path["subject"],
                                            permanent=call.flag("permanent"))

    def delete_version(self, call: Call):
        return self.registry.delete_version(call.path["subject"],
                                            parse_version(call.path["version"]),
                                            permanent=call.flag("permanent"))

    def metadata(self, call: Call):
        keys, values = call.query.getall("key", []), call.query.getall("value", [])
        found = self.registry.latest_with_metadata(call.path["subject"],
                                                   dict(zip(keys, values)),
                                                   deleted=call.flag("deleted"))
        return _entity(found, schema=self._formatted(found, call.text("format")))

    # -- schemas by id ----------------------------------------------------------------------------

    def _id(self, call: Call) -> int:
        try:
            return int(call.path["id"])
        except ValueError:
            raise web.HTTPNotFound() from None

    def schema_by_id(self, call: Call):
        subject = call.text("subject")
        found = self.registry.by_id(self._id(call), subject)
        out: dict[str, Any] = {"schemaType": found.schema_type}
        _schema_fields(out, found, self._formatted(found, call.text("format")))
        if subject:
            out = {"subject": found.subject, "version": found.version, **out}
        out["guid"] = guid_of(found)
        if call.flag("fetchMaxId"):
            out["maxId"] = self.registry.state.max_id
        out["deleted"] = found.deleted
        return out

    def schema_text_by_id(self, call: Call):
        found = self.registry.by_id(self._id(call), call.text("subject"))
        return Raw(self._formatted(found, call.text("format")) or found.schema)

    def subjects_by_id(self, call: Call):
        pairs = self.registry.subjects_of_id(self._id(call), deleted=call.flag("deleted"))
        return _page(list(dict.fromkeys(s for s, _ in pairs)), call)

    def versions_by_id(self, call: Call):
        pairs = self.registry.subjects_of_id(self._id(call), deleted=call.flag("deleted"))
        return _page([{"subject": s, "version": v} for s, v in pairs], call)

    def schema_by_guid(self, call: Call):
        found = self.registry.by_guid(call.path["guid"])
        out: dict[str, Any] = {"schemaType": found.schema_type}
        _schema_fields(out, found, self._formatted(found, call.text("format")))
        out["guid"] = guid_of(found)
        return out

    def ids_by_guid(self, call: Call):
        try:
            found = self.registry.by_guid(call.path["guid"])
        except RegistryError:  # no schema has it: none of its ids
            return []
        return [{"context": DEFAULT_CONTEXT, "id": found.id}]

    def schemas(self, call: Call):
        registry, prefix = self.registry, call.text("subjectPrefix")
        deleted, latest_only = call.flag("deleted"), call.flag("latestOnly")
        out = []
        for subject in registry.subjects(prefix, deleted=deleted):
            versions = [registry.version(subject, v, deleted=deleted)
                        for v in registry.versions(subject, deleted=deleted)]
            for found in versions[-1:] if latest_only else versions:
                out.append(_entity(found))
        return _page(out, call)

    def schema_types(self, call: Call):
        return list(SCHEMA_TYPES)

    # -- configs and modes ------------------------------------------------------------------------

    def get_config(self, call: Call):
        subject = call.path.get("subject")
        found = self.registry.config(subject, default_to_global=call.flag("defaultToGlobal"))
        if found is None:
            raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level "
                                            "compatibility configured")
        return found

    def set_config(self, call: Call):
        body = call.body()
        update: dict[str, Any] = {}
        level = body.get("compatibility")
        if level is not None:
            if not isinstance(level, str) or level.upper() not in LEVELS:
                raise RegistryError(422, 42203, "Invalid compatibility level. Valid values are "
                                                "none, backward, forward, full, "
                                                "backward_transitive, forward_transitive, and "
                                                "full_transitive")
            update["compatibilityLevel"] = level.upper()
        for name in CONFIG_FIELDS[1:]:
            if body.get(name) is not None:
                update[name] = body[name]
        stored = self.registry.set_config(call.path.get("subject"), update)
        # the whole config now stored, in the request's names (the level as "compatibility")
        return {("compatibility" if k == "compatibilityLevel" else k): v
                for k, v in stored.items()}

    def delete_config(self, call: Call):
        return self.registry.delete_config(call.path.get("subject"))

    def get_mode(self, call: Call):
        subject = call.path.get("subject")
        found = self.registry.mode(subject, default_to_global=call.flag("defaultToGlobal"))
        if found is None:
            raise RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level "
                                            "mode configured")
        return {"mode": found}

    def set_mode(self, call: Call):
        mode = call.body().get("mode")
        if not isinstance(mode, str):
            raise RegistryError(422, 42204, "Invalid mode. Valid values are READWRITE, "
                                            "READONLY, IMPORT and FORWARD.")
        return {"mode": self.registry.set_mode(call.path.get("subject"), mode,
                                               force=call.flag("force"))}

    def delete_mode(self, call: Call):
        return {"mode": self.registry.delete_mode(call.path.get("subject"))}

    # -- compatibility ---------------------------------------------------------------------------

    def compatibility(self, call: Call):
        version_text = call.path.get("version")
        subject = call.path["subject"]
        version = None if version_text is None else parse_version(version_text)
        verbose = call.flag("verbose")
        try:
            messages = self.registry.test_compatibility(subject, version, call.body(),
                                                        normalize=call.flag("normalize"))
        except RegistryError as exc:
            if not (verbose and exc.error_code == 42201):
                raise
            messages = [exc.message]  # verbose: an invalid schema is an answer, not an error
        out: dict[str, Any] = {"is_compatible": not messages}
        if verbose:
            out["messages"] = messages
        return out

    def contexts(self, call: Call):
        return _page([DEFAULT_CONTEXT], call)

    def root(self, call: Call):
        return {}


class Raw(str):
    """An answer that is the schema's text itself, not JSON."""


def _page(items: list, call: Call) -> list:
    offset, limit = max(call.int("offset", 0), 0), call.int("limit", -1)
    return items[offset:] if limit < 0 else items[offset:offset + limit]


def _json(data: Any, status: int = 200) -> web.Response:
    body = data if isinstance(data, Raw) else json.dumps(data, separators=(",", ":"),
                                                           ensure_ascii=False)
    return web.Response(body=str(body).encode(), status=status,
                        headers={"Content-Type": CONTENT_TYPE})


def _error(status: int, code: int, message: str) -> web.Response:
    return _json({"error_code": code, "message": message}, status)


#: what an injected error answers with, by its code (Confluent's words where it has them)
_INJECTED = {50001: "Error while writing to the Kafka store", 50002: "Operation timed out",
             50003: "Error while forwarding the request to the leader",
             50004: "Leader not known.", 40901: "Schema being registered is incompatible with "
                                                "an earlier schema",
             409: "Schema being registered is incompatible with an earlier schema",
             40401: "Subject not found.", 40403: "Schema not found"}


async def _apply_rule(runtime: "ClusterRuntime", rule, request: web.Request
                      ) -> web.StreamResponse | None:
    """What a control rule does to a registry call: None lets it be answered as usual."""
    if rule.delay_ms:
        await _later(runtime, rule.delay_ms)
    if rule.action == "error":
        return _error(http_status(rule.error), rule.error,
                      _INJECTED.get(rule.error, f"Error {rule.error} (rule {rule.id})"))
    if rule.action == "disconnect":
        if request.transport is not None:
            request.transport.close()
        raise asyncio.CancelledError()
    if rule.action == "drop":
        await asyncio.Event().wait()  # never answered (until the server stops)
    return None


async def _later(runtime: "ClusterRuntime", delay_ms: int) -> None:
    """Wait ``delay_ms`` on the broker clock (a manual clock moves only when told)."""
    done = asyncio.get_running_loop().create_future()
    runtime.core.timers.call_later(delay_ms, lambda: done.done() or done.set_result(None))
    await done  # the core's timers wake the loop (ClusterRuntime._rearm)


def _handler(api: RegistryApi, name: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    operation = getattr(api, name)
    runtime = api.runtime

    async def serve(request: web.Request) -> web.StreamResponse:
        response = await answer(request)
        server = runtime.schema_registry
        if server is not None:
            key = (name, response.status)
            server.calls[key] = server.calls.get(key, 0) + 1
        return response

    async def answer(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        control = runtime.core.control
        if control:
            rule = control.pick_registry(name, request.match_info.get("subject"))
            if rule is not None:
                answer = await _apply_rule(runtime, rule, request)
                if answer is not None:
                    return answer
        call = Call(request, body)
        try:
            return _json(operation(call))
        except RegistryError as exc:
            return _error(exc.status, exc.error_code, exc.message)

    serve.__name__ = name
    return serve


@web.middleware
async def _errors(request: web.Request, handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _error(exc.status, exc.status, f"HTTP {exc.status} {exc.reason}")
    except Exception:  # a bug: answered as Confluent answers one, and logged
        log.exception("schema registry: %s %s failed", request.method, request.path)
        return _error(500, 50001, "Error in the backend data store")


def _credentials(runtime: "ClusterRuntime", header: str) -> bool:
    """Whether an ``Authorization`` header names one of the cluster's users with its password
    (HTTP basic, as confluent-kafka's ``basic.auth.user.info`` sends it), or carries the admin
    API's token."""
    kind, _, value = header.partition(" ")
    if kind.lower() == "basic":
        try:
            user, _, password = base64.b64decode(value.strip(), validate=True).decode() \
                .partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        return runtime.core.security.credentials.check_password(user, password)
    token = runtime.admin_token
    return kind.lower() == "bearer" and token is not None and \
        hmac.compare_digest(value.strip().encode(), token.encode())


def _authorizing(runtime: "ClusterRuntime"):
    """With SASL users configured, every call needs one of them (or the admin token)."""
    @web.middleware
    async def authorize(request: web.Request, handler) -> web.StreamResponse:
        if runtime.security.users and \
                not _credentials(runtime, request.headers.get("Authorization", "")):
            response = _error(401, 401, "Unauthorized")
            response.headers["WWW-Authenticate"] = 'Basic realm="SchemaRegistry"'
            return response
        return await handler(request)
    return authorize


def make_app(runtime: "ClusterRuntime") -> web.Application:
    api = RegistryApi(runtime)
    app = web.Application(middlewares=[_errors, _authorizing(runtime)],
                          client_max_size=16 * 1024 * 1024)
    app.add_routes([web.route(method, path, _handler(api, name))
                    for method, path, name in ROUTES])
    return app

