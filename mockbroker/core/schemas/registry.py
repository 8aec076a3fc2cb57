"""The Schema Registry's operations, as Confluent's registry (8.x) carries them out: register,
look up, read, delete, configs, modes and compatibility tests, each refused with its error code
and message (:class:`RegistryError`).

The state lives in the cluster's ``_schemas`` topic (:mod:`.store`): every change is a record
appended there, and the registry reads the topic before it answers, so what clients write to
the topic themselves, or a registry built afresh, is seen the same way.  Schema ids are global,
and the same schema (text, references, metadata, rule set) keeps its id under every subject.
Only the default context ``.`` exists.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any, Callable, Iterable, Protocol

from mockbroker.core.schemas import compatibility
from mockbroker.core.schemas.formats import (
    SCHEMA_TYPES, STRICT, InvalidSchema, ParsedSchema, parse,
)
from mockbroker.core.schemas.store import (
    SchemaState, SchemaVersion, clear_subject_key, clear_subject_value, config_key,
    config_value, delete_subject_key, delete_subject_value, mode_key, mode_value, schema_key,
)

DEFAULT_CONTEXT = "."
#: how Confluent's messages name the default context (its qualified name is empty)
_CONTEXT_SHOWN = ""
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT", "FORWARD")
#: what a config may hold, by its field name in records and answers
CONFIG_FIELDS = ("compatibilityLevel", "normalize", "alias", "validateFields", "validateRules",
                 "compatibilityPolicy", "compatibilityGroup", "defaultMetadata",
                 "overrideMetadata", "defaultRuleSet", "overrideRuleSet")
MAX_VERSION = 2 ** 31 - 1
#: what a subject's own config never takes from the global one when they are merged
_SUBJECT_ONLY = ("compatibilityLevel", "alias", "defaultMetadata", "overrideMetadata",
                 "defaultRuleSet", "overrideRuleSet")
#: how many schemas sent in requests the registry keeps parsed
_REMEMBERED = 1024


class RegistryError(Exception):
    """A refusal: the HTTP status, Confluent's error code and its message."""

    def __init__(self, status: int, error_code: int, message: str):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version: Any) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(what: Any = None) -> RegistryError:
    return RegistryError(404, 40403, "Schema not found" if what is None
                         else f"Schema {what} not found")


def invalid_version(text: str) -> RegistryError:
    return RegistryError(422, 42202, f"The specified version '{text}' is not a valid version "
                                     "id. Allowed values are between [1, 2^31-1] and the "
                                     'string "latest"')


def invalid_schema(message: str) -> RegistryError:
    return RegistryError(422, 42201, message)


def not_permitted(message: str) -> RegistryError:
    return RegistryError(422, 42205, message)


def parse_version(text: str) -> int:
    """A version in a path: a number from 1, or ``latest`` (-1)."""
    if text.strip().lower() == "latest":
        return -1
    try:
        number = int(text)
    except ValueError:
        raise invalid_version(text) from None
    if number == -1:
        return -1
    if not 1 <= number <= MAX_VERSION:
        raise invalid_version(text)
    return number


def valid_subject(subject: str) -> bool:
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in subject) \
        and subject not in ("__GLOBAL", "__EMPTY")


def guid_of(version: SchemaVersion) -> str:
    """The schema's guid: an MD5 of its text, references, metadata and rule set, in the order
    and the bytes Confluent's ``Schema.updateHash`` feeds them, written as a UUID."""
    digest = hashlib.md5(version.schema.encode())

    def text(value: Any) -> None:
        if value is not None:
            digest.update(str(value).encode())
    for ref in version.references:
        text(ref.get("name"))
        text(ref.get("subject"))
        if isinstance(ref.get("version"), int):
            digest.update(ref["version"].to_bytes(4, "big", signed=True))
    if version.metadata is not None:
        digest.update(b"\x01")
        for key, values in (version.metadata.get("tags") or {}).items():
            text(key)
            for value in values:
                text(value)
        for key, value in (version.metadata.get("properties") or {}).items():
            text(key)
            text(value)
        for value in version.metadata.get("sensitive") or ():
            text(value)
    if version.rule_set is not None:
        digest.update(b"\x01")
        for kind in ("migrationRules", "domainRules", "encodingRules"):
            for rule in version.rule_set.get(kind) or ():
                for name in ("name", "doc", "kind", "mode", "type"):
                    text(rule.get(name))
                for tag in rule.get("tags") or ():
                    text(tag)
                for key, value in (rule.get("params") or {}).items():
                    text(key)
                    text(value)
                for name in ("expr", "onSuccess", "onFailure"):
                    text(rule.get(name))
                if rule.get("disabled"):
                    digest.update(b"\x01")
        text(version.rule_set.get("enableAt"))
    return str(uuid.UUID(bytes=digest.digest()))


def sorted_metadata(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """Metadata as Confluent's ``Metadata`` holds it: tags, properties and sensitive names
    sorted (so their order makes no other schema)."""
    if metadata is None:
        return None
    # its fields in Metadata's own order, whatever order the request gave them in
    order = ("tags", "properties", "sensitive")
    out = {k: metadata[k] for k in order if k in metadata}
    out.update({k: v for k, v in metadata.items() if k not in order})
    if isinstance(out.get("tags"), dict):
        out["tags"] = {k: sorted(set(v)) if isinstance(v, list) else v
                       for k, v in sorted(out["tags"].items())}
    if isinstance(out.get("properties"), dict):
        out["properties"] = dict(sorted(out["properties"].items()))
    if isinstance(out.get("sensitive"), list):
        out["sensitive"] = sorted(set(out["sensitive"]))
    return out


def sorted_rule_set(rule_set: dict[str, Any] | None) -> dict[str, Any] | None:
    """A rule set as Confluent's ``Rule`` holds each rule: its tags and params sorted."""
    if rule_set is None:
        return None
    out = dict(rule_set)
    for kind in ("migrationRules", "domainRules", "encodingRules"):
        if isinstance(out.get(kind), list):
            out[kind] = [_sorted_rule(r) if isinstance(r, dict) else r for r in out[kind]]
    return out


def _sorted_rule(rule: dict[str, Any]) -> dict[str, Any]:
    out = dict(rule)
    if isinstance(out.get("tags"), list):
        out["tags"] = sorted(set(out["tags"]))
    if isinstance(out.get("params"), dict):
        out["params"] = dict(sorted(out["params"].items()))
    return out


class RecordSource(Protocol):
    """Where the registry's records are: the cluster's ``_schemas`` topic
    (:mod:`mockbroker.core.schemas.cluster`)."""

    def identity(self) -> object:
        """What changes when the topic is deleted and made anew (its records start over)."""

    def append(self, entries: list[tuple[bytes, bytes | None]]) -> None:
        """Write (key, value) records, or raise :class:`RegistryError` (50001)."""

    def read_from(self, offset: int) -> Iterable[tuple[int, bytes | None, bytes | None]]:
        """(offset, key, value) of every record from ``offset`` on."""


class SchemaRegistry:
    """One cluster's registry, over its ``_schemas`` records."""

    def __init__(self, source: RecordSource, *, default_compatibility: str = "BACKWARD",
                 emit: Callable[..., None] | None = None):
        self.source = source
        self.default_compatibility = default_compatibility
        self.state = SchemaState()
        self._identity = source.identity()
        #: stored versions parsed, by content
        self._parsed: dict[tuple, ParsedSchema] = {}
        #: schemas requests sent, parsed (:meth:`_parse`)
        self._requested: dict[tuple, ParsedSchema] = {}
        self._emit = emit or (lambda *a, **k: None)

    # -- the topic ------------------------------------------------------------------------------

    def catch_up(self) -> SchemaState:
        """Read the records appended since the last look (all of them, when the topic was
        made anew)."""
        identity = self.source.identity()
        if identity != self._identity:
            self.state, self._identity = SchemaState(), identity
        state = self.state
        for offset, key, value in self.source.read_from(state.offset):
            state.apply(key, value)
            state.offset = offset + 1
        return state

    def _write(self, *entries: tuple[bytes, bytes | None]) -> None:
        self.catch_up()
        self.source.append(list(entries))
        self.catch_up()

    # -- reading what is there --------------------------------------------------------------------

    def _versions(self, subject: str, deleted: bool = False) -> list[SchemaVersion]:
        found = self.catch_up().subjects.get(subject, {})
        return [found[n] for n in sorted(found) if deleted or not found[n].deleted]

    def subjects(self, prefix: str | None = None, *, deleted: bool = False,
                 deleted_only: bool = False) -> list[str]:
        out = []
        for subject, versions in sorted(self.catch_up().subjects.items()):
            if prefix and not subject.startswith(prefix):
                continue
            live = any(not v.deleted for v in versions.values())
            if (not live) if deleted_only else (live or deleted):
                out.append(subject)
        return out

    def versions(self, subject: str, *, deleted: bool = False, deleted_only: bool = False,
                 deleted_as_negative: bool = False) -> list[int]:
        """A subject's version numbers (soft-deleted ones too with ``deleted``, only them with
        ``deleted_only``, written negative with ``deleted_as_negative``)."""
        every = self._versions(subject, deleted=True)
        if not (every if deleted or deleted_only else [v for v in every if not v.deleted]):
            raise subject_not_found(subject)
        chosen = [v for v in every if (v.deleted if deleted_only else deleted or not v.deleted)]
        return [-v.version if v.deleted and deleted_as_negative else v.version
                for v in chosen]

    def version(self, subject: str, version: int, *, deleted: bool = False) -> SchemaVersion:
        """A subject's version (-1: the latest); 40401 / 40402 as Confluent answers."""
        every = self._versions(subject, deleted=True)
        live = [v for v in every if not v.deleted]
        if not (every if deleted else live):
            raise subject_not_found(subject)
        if version == -1:  # the latest live version, deleted ones asked for or not
            if not live:
                raise version_not_found(version)
            return live[-1]
        for found in every if deleted else live:
            if found.version == version:
                return found
        raise version_not_found(version)

    def by_id(self, schema_id: int, subject: str | None = None) -> SchemaVersion:
        state = self.catch_up()
        if subject:
            for found in state.subjects.get(subject, {}).values():
                if found.id == schema_id:
                    return found
        found = state.by_id(schema_id)
        if found is None:
            raise schema_not_found(schema_id)
        return found

    def by_guid(self, guid: str) -> SchemaVersion:
        for holders in self.catch_up().holders.values():
            for subject, number in sorted(holders):
                found = self.state.subjects[subject][number]
                if guid_of(found) == guid:
                    return found
        raise schema_not_found(guid)

    def subjects_of_id(self, schema_id: int, *, deleted: bool = False,
                       subject: str | None = None) -> list[tuple[str, int]]:
        """(subject, version) pairs carrying ``schema_id`` (``subject`` names the context only,
        as in Confluent's registry: it filters nothing); 40403 for an id nobody holds."""
        state = self.catch_up()
        holders = state.holders.get(schema_id)
        if not holders:
            raise schema_not_found()
        return sorted(p for p in holders if deleted or not state.subjects[p[0]][p[1]].deleted)

    def referenced_by(self, subject: str, version: int, *, deleted: bool = False) -> list[int]:
        target = self.version(subject, version, deleted=True)
        return sorted({found.id for found in self._referrers(subject, target.version,
                                                             deleted=deleted)})

    def _referrers(self, subject: str, version: int, *, deleted: bool) -> list[SchemaVersion]:
        """The versions whose references name ``subject``'s ``version``."""
        return [found for versions in self.catch_up().subjects.values()
                for found in versions.values() if (deleted or not found.deleted)
                and any(r.get("subject") == subject and r.get("version") == version
                        for r in found.references)]

    def parsed(self, found: SchemaVersion) -> ParsedSchema:
        """A stored version, parsed (with what its references name)."""
        key = found.content()
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed = parse(found.schema_type, found.schema,
                           self._resolve(found.references, deleted=True))
            self._parsed[key] = parsed
        return parsed

    def _parse(self, schema_type: str, text: str, resolved: dict[str, str],
               normalize: bool) -> ParsedSchema:
        """A schema a request sends, parsed (and normalized), remembered: serializers send
        the same schema on every lookup."""
        key = (schema_type, text, tuple(resolved.items()), normalize)
        parsed = self._requested.get(key)
        if parsed is None:
            parsed = parse(schema_type, text, resolved)
            if normalize:
                parsed = parsed.normalized()
            if len(self._requested) >= _REMEMBERED:
                self._requested.clear()
            self._requested[key] = parsed
        return parsed

    def _holding(self, subject: str, candidate: SchemaVersion, *, deleted: bool
                 ) -> list[SchemaVersion]:
        """The versions of ``subject`` that hold the same schema as ``candidate``, oldest
        first (by the schema's id, not by comparing every version)."""
        state = self.catch_up()
        schema_id = state.ids.get(candidate.content())
        if schema_id is None:
            return []
        found = [state.subjects[s][v] for s, v in state.holders.get(schema_id, ())
                 if s == subject]
        return sorted((f for f in found if deleted or not f.deleted), key=lambda f: f.version)

    def _resolve(self, references: list[dict[str, Any]], *, deleted: bool,
                 seen: dict[str, str] | None = None) -> dict[str, str]:
        """Every schema text ``references`` name, theirs included: name -> text."""
        out = {} if seen is None else seen
        for ref in references:
            name, subject, version = ref.get("name"), ref.get("subject"), ref.get("version")
            if not isinstance(name, str) or not isinstance(subject, str) \
                    or not isinstance(version, int):
                raise InvalidSchema(f"Invalid reference: {_reference_text(ref)}")
            try:
                found = self.version(subject, version, deleted=deleted)
            except RegistryError:
                raise InvalidSchema(f'No schema reference found for subject "{subject}" and '
                                    f"version {version}") from None
            if name not in out:
                out[name] = found.schema
                self._resolve(found.references, deleted=deleted, seen=out)
        return out

    # -- configs and modes ------------------------------------------------------------------------

    def config(self, subject: str | None, *, default_to_global: bool = False
               ) -> dict[str, Any] | None:
        """The config set for ``subject`` (None: global); None when the subject has none of
        its own, unless ``default_to_global``.  A config without a compatibility level has the
        server's default; merged over the global one, a subject's own config keeps its
        level, alias and metadata and rule set defaults as they are (Confluent's
        ``Config.mergeConfigs``)."""
        configs = self.catch_up().configs
        global_config = configs.get(None) or {}
        if subject is None:
            return {**global_config,
                    "compatibilityLevel": global_config.get("compatibilityLevel",
                                                            self.default_compatibility)}
        own = configs.get(subject)
        if own is None:
            return self.config(None) if default_to_global else None
        merged = {k: v for k, v in global_config.items() if k not in _SUBJECT_ONLY} \
            if default_to_global else {}
        merged.update(own)
        merged.setdefault("compatibilityLevel", self.default_compatibility)
        return merged

    def effective_config(self, subject: str) -> dict[str, Any]:
        return self.config(subject, default_to_global=True) or {}

    def set_config(self, subject: str | None, update: dict[str, Any]) -> dict[str, Any]:
        self._check_writable(subject)
        current = dict(self.catch_up().configs.get(subject) or {})
        current.update({k: v for k, v in update.items() if v is not None})
        self._write((config_key(subject), config_value(subject, current)))
        return current

    def delete_config(self, subject: str | None) -> dict[str, Any]:
        """The config removed, as it read (its level filled in when it had none)."""
        before = self.config(subject)
        if before is None:
            raise subject_not_found(subject)
        self._check_writable(subject)
        self._write((config_key(subject), None))
        return before

    def mode(self, subject: str | None, *, default_to_global: bool = False) -> str | None:
        modes = self.catch_up().modes
        if subject is None:
            return modes.get(None, "READWRITE")
        own = modes.get(subject)
        if own is None and default_to_global:
            return modes.get(None, "READWRITE")
        return own

    def effective_mode(self, subject: str) -> str:
        return self.mode(subject, default_to_global=True) or "READWRITE"

    def set_mode(self, subject: str | None, mode: str, *, force: bool = False) -> str:
        mode = mode.upper()
        if mode not in MODES:
            raise RegistryError(422, 42204, "Invalid mode. Valid values are READWRITE, "
                                            "READONLY, IMPORT and FORWARD.")
        if mode == "FORWARD" and subject is not None:
            raise RegistryError(422, 42204, "Forward mode only supported on global level")
        if mode == "IMPORT" and not force:
            present = [s for s in self.subjects() if subject is None or s == subject]
            if present:
                raise not_permitted("Cannot import since found existing subjects")
        self._write((mode_key(subject), mode_value(subject, mode)))
        return mode

    def delete_mode(self, subject: str | None) -> str:
        """The mode removed (the global one: READWRITE when none was set)."""
        before = self.catch_up().modes.get(subject)
        if before is None:
            if subject is not None:
                raise subject_not_found(subject)
            before = "READWRITE"
        self._write((mode_key(subject), None))
        return before

    def _check_writable(self, subject: str | None) -> None:
        """Deletes and config changes are refused in read-only mode (the global one, or the
        subject's); ``null`` names the global scope, as Confluent's message prints it."""
        mode = self.effective_mode(subject) if subject is not None else self.mode(None)
        if mode in ("READONLY", "READONLY_OVERRIDE"):
            name = "null" if subject is None else subject
            raise not_permitted(f"Subject {name} in context {_CONTEXT_SHOWN} is in "
                                "read-only mode")

    # -- registering and looking up ---------------------------------------------------------------

    def prepare(self, subject: str, body: dict[str, Any], *, normalize: bool,
                previous: SchemaVersion | None = None) -> tuple[SchemaVersion, ParsedSchema]:
        """The version a request body describes (not yet numbered): its schema parsed,
        canonical or normalized; 42201 when it cannot be."""
        schema_type = body.get("schemaType") or "AVRO"
        text = body.get("schema")
        references = body.get("references") or []
        for name in ("metadata", "ruleSet"):
            if body.get(name) is not None and not isinstance(body[name], dict):
                raise _unreadable(name, body[name], "an object")
        if not isinstance(text, str) or not text.strip():
            if previous is None:
                raise invalid_schema("Empty schema")
            schema_type, text, references = (previous.schema_type, previous.schema,
                                             previous.references)
        if schema_type not in SCHEMA_TYPES:
            raise invalid_schema(f"Invalid schema type {schema_type}")
        if not isinstance(references, list) or not all(isinstance(r, dict)
                                                        for r in references):
            raise invalid_schema(f"Invalid schema of type {schema_type}, details: the "
                                 "references must be a list of objects")
        try:
            resolved = self._resolve(references, deleted=False)
            parsed = self._parse(schema_type, text, resolved, normalize)
        except InvalidSchema as exc:
            described = _described(subject, schema_type, text, references)
            if getattr(exc, "stage", "parse") == "validate":  # parsed, then found invalid
                raise invalid_schema(f"Invalid schema {described}, details: {exc}") from None
            # the format's provider words its refusal, then the registry wraps it again
            if schema_type == "AVRO":
                refs = ", ".join(_reference_text(r) for r in references)
                provider = (f"Invalid schema {described} with refs [{refs}] of type AVRO, "
                            f"details: {exc}")
            else:
                provider = f"Invalid schema of type {schema_type}, details: {exc}"
            raise invalid_schema(f"Invalid schema of type {schema_type}, details: {provider}") \
                from None
        refs = [{"name": r["name"], "subject": r["subject"], "version": r["version"]}
                for r in references]
        if normalize:
            refs = sorted({(r["name"], r["subject"], r["version"]): r
                           for r in refs}.values(), key=lambda r: (r["name"], r["subject"],
                                                                  r["version"]))
        version = SchemaVersion(subject=subject, version=0, id=-1, schema_type=schema_type,
                                schema=parsed.canonical(), references=refs,
                                metadata=sorted_metadata(body.get("metadata") or None),
                                rule_set=sorted_rule_set(body.get("ruleSet") or None))
        return version, parsed

    def register(self, subject: str, body: dict[str, Any], *, normalize: bool = False,
                 force: bool = False) -> SchemaVersion:
        """POST /subjects/{subject}/versions."""
        if not valid_subject(subject):
            raise RegistryError(422, 42208, f"The specified subject '{subject}' is not a "
                                            "valid.")
        wanted_id, wanted_version = body.get("id"), body.get("version")
        for name, value in (("id", wanted_id), ("version", wanted_version)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise _unreadable(name, value, "an integer")
        wanted_id = -1 if wanted_id is None else wanted_id
        wanted_version = 0 if wanted_version is None else wanted_version
        config = self.effective_config(subject)
        normalize = normalize or bool(config.get("normalize"))
        live = self._versions(subject)
        # a schema the subject holds already is answered before anything else is checked
        # (Confluent looks it up first), read-only and import modes included
        candidate, parsed = self.prepare(subject, body, normalize=normalize,
                                         previous=live[-1] if live else None)
        if wanted_version == 0:
            for found in reversed(self._holding(subject, candidate, deleted=False)):
                if wanted_id in (-1, found.id):
                    return found
        mode = self.effective_mode(subject)
        if mode in ("READONLY", "READONLY_OVERRIDE"):
            raise not_permitted(f"Subject {subject} in context {_CONTEXT_SHOWN} is in "
                                "read-only mode")
        importing = mode in ("IMPORT", "FORWARD")
        if wanted_id >= 0 and not importing:
            raise not_permitted(f"Subject {subject} in context {_CONTEXT_SHOWN} is not in "
                                "import mode")
        if wanted_id < 0 and mode != "READWRITE":
            raise not_permitted(f"Subject {subject} in context {_CONTEXT_SHOWN} is not in "
                                "read-write mode")
        every = self._versions(subject, deleted=True)
        next_version = max([v.version for v in every], default=0) + 1
        state = self.state
        known_id = state.ids.get(candidate.content())
        schema_id = known_id if known_id is not None and wanted_id in (-1, known_id) \
            else wanted_id
        if not importing and not force:
            messages = compatibility.check(
                config.get("compatibilityLevel", self.default_compatibility), parsed,
                [compatibility.Earlier(v.version, self.parsed(v)) for v in live],
                config.get("compatibilityPolicy") or STRICT)
            if messages:
                level = config.get("compatibilityLevel", self.default_compatibility)
                messages.append(_applied(config, level))
                self._emit("schema_incompatible", subject=subject, compatibility=level)
                raise RegistryError(409, 40901, "Schema being registered is incompatible with "
                                                f'an earlier schema for subject "{subject}", '
                                                f"details: [{', '.join(messages)}]")
        if wanted_version <= 0:
            wanted_version = next_version
        elif wanted_version != next_version and not importing:
            raise invalid_schema("Version is not one more than previous version")
        if schema_id >= 0:
            holder = state.by_id(schema_id)
            if holder is not None and holder.content() != candidate.content():
                raise not_permitted(f"Overwrite new schema with id {schema_id} in context "
                                    f"{_CONTEXT_SHOWN} is not permitted.")
        else:
            schema_id = state.max_id + 1
        candidate.version, candidate.id = wanted_version, schema_id
        entries = [(schema_key(v.subject, v.version), None) for v in every
                   if v.deleted and v.id == schema_id and v.version < wanted_version
                   and not self.referenced_by(subject, v.version, deleted=True)]
        entries.append((schema_key(subject, wanted_version), candidate.value()))
        self._write(*entries)
        self._parsed.setdefault(candidate.content(), parsed)
        self._emit("schema_registered", subject=subject, version=wanted_version, id=schema_id,
                   schema_type=candidate.schema_type)
        return self.state.subjects[subject][wanted_version]

    def lookup(self, subject: str, body: dict[str, Any], *, normalize: bool = False,
               deleted: bool = False) -> SchemaVersion:
        """POST /subjects/{subject}: the version of ``subject`` holding this schema (the schema
        is read first: a bad one is 42201 whatever the subject)."""
        normalize = normalize or bool(self.effective_config(subject).get("normalize"))
        text = body.get("schema")
        candidate = None
        if isinstance(text, str) and text.strip():
            candidate, _ = self.prepare(subject, body, normalize=normalize)
        if not self._versions(subject, deleted=deleted):
            raise subject_not_found(subject)
        if candidate is None:  # nothing to look up
            raise schema_not_found()
        holding = self._holding(subject, candidate, deleted=deleted)
        if not holding:
            raise schema_not_found()
        return holding[-1]

    def latest_with_metadata(self, subject: str, wanted: dict[str, str], *,
                             deleted: bool = False) -> SchemaVersion:
        visible = self._versions(subject, deleted=deleted)
        if not visible:
            raise subject_not_found(subject)
        for found in reversed(visible):
            properties = (found.metadata or {}).get("properties")
            if properties is not None and all(properties.get(k) == v
                                              for k, v in wanted.items()):
                return found
        raise schema_not_found()

    def test_compatibility(self, subject: str, version: int | None, body: dict[str, Any], *,
                           normalize: bool = False) -> list[str]:
        """POST /compatibility/subjects/{subject}/versions[/{version}]: why the schema may not
        be registered, against that version (None: every version the level asks for).  A
        numbered version that does not exist is 40402, whether the subject does or not; the
        schema sent is not completed from an earlier version (none: 42201 Empty schema)."""
        live = self._versions(subject)
        config = self.effective_config(subject)
        level = config.get("compatibilityLevel", self.default_compatibility)
        if version is None:
            earlier = live
        elif version == -1:
            earlier = live[-1:]
        else:
            earlier = [v for v in live if v.version == version]
            if not earlier:
                raise version_not_found(version)
        _, parsed = self.prepare(subject, body, normalize=normalize or bool(
            config.get("normalize")))
        checked = level[:-len("_TRANSITIVE")] if version is not None and \
            level.endswith("_TRANSITIVE") else level
        messages = compatibility.check(
            checked, parsed, [compatibility.Earlier(v.version, self.parsed(v)) for v in earlier],
            config.get("compatibilityPolicy") or STRICT)
        if messages:
            messages.append(_applied(config, level))  # the level configured
        return messages

    # -- deleting ---------------------------------------------------------------------------------

    def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        every = self._versions(subject, deleted=True)
        if not every:
            raise subject_not_found(subject)
        self._check_writable(subject)
        if permanent:
            live = [v.version for v in every if not v.deleted]
            if live:
                raise RegistryError(404, 40405, f"Subject '{subject}' was not deleted first "
                                                "before being permanently deleted")
            self._check_unreferenced(subject, every, deleted=True, own_too=False)
            entries = [(schema_key(subject, v.version), None) for v in reversed(every)]
            state = self.state
            if subject in state.modes:
                entries.append((mode_key(subject), None))
            if subject in state.configs:
                entries.append((config_key(subject), None))
            self._write(*entries)
            self._emit("subject_deleted", subject=subject, permanent=True)
            return [v.version for v in every]
        live = [v for v in every if not v.deleted]
        if not live:
            raise RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set "
                                            "permanent=true to delete permanently")
        self._check_unreferenced(subject, live, deleted=False, own_too=False)
        self._write((delete_subject_key(subject),
                     delete_subject_value(subject, live[-1].version)))
        self._emit("subject_deleted", subject=subject, permanent=False)
        return [v.version for v in live]

    def delete_version(self, subject: str, version: int, *, permanent: bool = False) -> int:
        found = self.version(subject, version, deleted=True)
        self._check_writable(subject)
        if permanent:
            self._check_unreferenced(subject, [found], deleted=True)
            if not found.deleted:
                raise RegistryError(404, 40407, f"Subject '{subject}' Version {found.version} "
                                                "was not deleted first before being "
                                                "permanently deleted")
            entries = [(schema_key(subject, found.version), None)]
            remaining = [v for v in self._versions(subject, deleted=True) if v is not found]
            if not remaining:
                if subject in self.state.modes:
                    entries.append((mode_key(subject), None))
                if subject in self.state.configs:
                    entries.append((config_key(subject), None))
            self._write(*entries)
        else:
            if found.deleted:
                raise RegistryError(404, 40406, f"Subject '{subject}' Version {found.version} "
                                                "was soft deleted.Set permanent=true to delete "
                                                "permanently")
            self._check_unreferenced(subject, [found], deleted=False)
            gone = SchemaVersion(**{f: getattr(found, f) for f in found.__struct_fields__})
            gone.deleted = True
            self._write((schema_key(subject, found.version), gone.value()))
        self._emit("schema_deleted", subject=subject, version=found.version,
                   permanent=permanent)
        return found.version

    def _check_unreferenced(self, subject: str, versions: list[SchemaVersion], *,
                            deleted: bool, own_too: bool = True) -> None:
        """42206 when another schema refers to one of ``versions`` (with ``own_too`` False,
        references from the subject's own versions do not count: deleting the subject)."""
        for found in versions:
            referrers = self._referrers(subject, found.version, deleted=deleted)
            if not own_too:
                referrers = [r for r in referrers if r.subject != subject]
            if referrers:
                raise RegistryError(422, 42206, "One or more references exist to the schema "
                                                f"{{magic=1,keytype=SCHEMA,subject={subject},"
                                                f"version={found.version}}}.")

    def clear_subject(self, subject: str) -> None:
        """Forget a subject's soft-deleted versions (as entering IMPORT mode does)."""
        self._write((clear_subject_key(subject), clear_subject_value(subject)))


def _unreadable(name: str, value: Any, wanted: str) -> RegistryError:
    """A request body whose field has the wrong type (Jackson's mapping refuses it: 422)."""
    return RegistryError(422, 422, f"The field {name} must be {wanted}, not "
                                   f"{type(value).__name__} {value!r}"[:200])


def _described(subject: str, schema_type: str, text: str, references: list) -> str:
    """A schema being registered as Confluent's messages print it (its ``toString``)."""
    refs = ", ".join(_reference_text(r) for r in references)
    return (f"{{subject={subject},version=0,id=-1,guid=null,schemaType={schema_type},"
            f"references=[{refs}],metadata=null,ruleSet=null,schema={text},schemaTags=null,"
            f"ts=null,deleted=null}}")


def _applied(config: dict[str, Any], level: str) -> str:
    """The note that ends a refusal's messages: the checks the registry applied."""
    fields = "true" if config.get("validateFields") else "false"
    return f"{{validateFields: '{fields}', compatibility: '{level}'}}"


def _reference_text(ref: dict[str, Any]) -> str:
    return (f"{{name='{ref.get('name')}', subject='{ref.get('subject')}', "
            f"version={ref.get('version')}}}")
