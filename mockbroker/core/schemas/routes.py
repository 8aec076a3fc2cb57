"""The Schema Registry's routes, Confluent's REST API v1: each method and path with the name of
the operation that serves it (:mod:`mockbroker.io.registry.http`).  Control rules pick
registry requests by these names (``{"registry": "register", "error": 50001}``).
"""

from __future__ import annotations

#: (method, path, operation name)
ROUTES: tuple[tuple[str, str, str], ...] = (
    ("GET", "/", "root"),
    ("GET", "/subjects", "subjects"),
    ("GET", "/subjects/{subject}/versions", "versions"),
    ("POST", "/subjects/{subject}/versions", "register"),
    ("POST", "/subjects/{subject}", "lookup"),
    ("DELETE", "/subjects/{subject}", "delete_subject"),
    ("GET", "/subjects/{subject}/versions/{version}", "version"),
    ("DELETE", "/subjects/{subject}/versions/{version}", "delete_version"),
    ("GET", "/subjects/{subject}/versions/{version}/schema", "version_schema"),
    ("GET", "/subjects/{subject}/versions/{version}/referencedby", "referenced_by"),
    ("GET", "/subjects/{subject}/metadata", "metadata"),
    ("GET", "/schemas", "schemas"),
    ("GET", "/schemas/types", "schema_types"),
    ("GET", "/schemas/ids/{id}", "schema_by_id"),
    ("GET", "/schemas/ids/{id}/schema", "schema_text_by_id"),
    ("GET", "/schemas/ids/{id}/subjects", "subjects_by_id"),
    ("GET", "/schemas/ids/{id}/versions", "versions_by_id"),
    ("GET", "/schemas/guids/{guid}", "schema_by_guid"),
    ("GET", "/schemas/guids/{guid}/ids", "ids_by_guid"),
    ("GET", "/config", "get_config"),
    ("PUT", "/config", "set_config"),
    ("DELETE", "/config", "delete_config"),
    ("GET", "/config/{subject}", "get_config"),
    ("PUT", "/config/{subject}", "set_config"),
    ("DELETE", "/config/{subject}", "delete_config"),
    ("GET", "/mode", "get_mode"),
    ("PUT", "/mode", "set_mode"),
    ("DELETE", "/mode", "delete_mode"),
    ("GET", "/mode/{subject}", "get_mode"),
    ("PUT", "/mode/{subject}", "set_mode"),
    ("DELETE", "/mode/{subject}", "delete_mode"),
    ("POST", "/compatibility/subjects/{subject}/versions/{version}", "compatibility"),
    ("POST", "/compatibility/subjects/{subject}/versions", "compatibility"),
    ("GET", "/contexts", "contexts"),
)


#: every operation, in the order of the table (each once)
OPERATIONS: tuple[str, ...] = tuple(dict.fromkeys(name for _, _, name in ROUTES))
