"""The registry's records in the ``_schemas`` topic, in the JSON Confluent's registry writes,
and the state they add up to.

Confluent's registry keeps nothing but this topic: each key names what it is about (a schema
version, a config, a mode, a subject deleted) and the last value of a key wins; a tombstone
(null value) removes it.  :class:`SchemaState` is what the records say, built by reading them
in order (:meth:`SchemaState.apply`), so a registry reading the topic from its start answers as
the one that wrote it.

Keys and values are compact JSON with Confluent's field order, and fields without a value are
left out (Jackson's ``NON_EMPTY``): a schema version's key is
``{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`` and its value
``{"subject":"s","version":1,"id":1,"schemaType":"AVRO","schema":"...","deleted":false}``.
"""

from __future__ import annotations

import json
from typing import Any

from msgspec import Struct, field

TOPIC = "_schemas"


def dumps(value: Any) -> bytes:
    """Compact JSON, as Jackson writes it (no spaces, non-ASCII kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# -- keys -------------------------------------------------------------------------------------

def schema_key(subject: str, version: int) -> bytes:
    return dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1})


def config_key(subject: str | None) -> bytes:
    return dumps({"keytype": "CONFIG", **({} if subject is None else {"subject": subject}),
                  "magic": 0})


def mode_key(subject: str | None) -> bytes:
    return dumps({"keytype": "MODE", **({} if subject is None else {"subject": subject}),
                  "magic": 0})


def delete_subject_key(subject: str) -> bytes:
    return dumps({"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0})


def clear_subject_key(subject: str) -> bytes:
    return dumps({"keytype": "CLEAR_SUBJECT", "subject": subject, "magic": 0})


# -- values -----------------------------------------------------------------------------------

class SchemaVersion(Struct, kw_only=True):
    """One version of a subject, as its record holds it."""

    subject: str
    version: int
    id: int
    schema_type: str = "AVRO"
    #: the canonical text
    schema: str
    #: each {"name", "subject", "version"}
    references: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    rule_set: dict[str, Any] | None = None
    deleted: bool = False

    def value(self) -> bytes:
        out: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id,
                               "schemaType": self.schema_type}
        if self.references:
            out["references"] = self.references
        if self.metadata:
            out["metadata"] = self.metadata
        if self.rule_set:
            out["ruleSet"] = self.rule_set
        out["schema"] = self.schema
        out["deleted"] = self.deleted
        return dumps(out)

    @classmethod
    def from_value(cls, value: dict[str, Any]) -> "SchemaVersion":
        return cls(subject=value["subject"], version=int(value["version"]),
                   id=int(value["id"]), schema_type=value.get("schemaType") or "AVRO",
                   schema=value.get("schema", ""), references=value.get("references") or [],
                   metadata=value.get("metadata") or None,
                   rule_set=value.get("ruleSet") or None,
                   deleted=bool(value.get("deleted", False)))

    def content(self) -> tuple:
        """What makes two versions the same schema (and so the same id)."""
        return (self.schema_type, self.schema,
                tuple((r.get("name"), r.get("subject"), r.get("version"))
                      for r in self.references),
                dumps(self.metadata or {}), dumps(self.rule_set or {}))


def config_value(subject: str | None, config: dict[str, Any]) -> bytes:
    return dumps({**({} if subject is None else {"subject": subject}), **config})


def delete_subject_value(subject: str, version: int) -> bytes:
    """Every version up to ``version`` is soft-deleted."""
    return dumps({"subject": subject, "version": version})


def clear_subject_value(subject: str) -> bytes:
    return dumps({"subject": subject})


def mode_value(subject: str | None, mode: str) -> bytes:
    return dumps({**({} if subject is None else {"subject": subject}), "mode": mode})


# -- what the records add up to ---------------------------------------------------------------

class SchemaState:
    """Subjects and their versions, ids, configs and modes, as the records so far say."""

    def __init__(self) -> None:
        #: subject -> version -> the version
        self.subjects: dict[str, dict[int, SchemaVersion]] = {}
        #: schema id -> the (subject, version) pairs carrying it
        self.holders: dict[int, set[tuple[str, int]]] = {}
        #: content -> schema id, while a version carries it
        self.ids: dict[tuple, int] = {}
        #: subject (None: global) -> its config, in the record's field names
        self.configs: dict[str | None, dict[str, Any]] = {}
        #: subject (None: global) -> its mode
        self.modes: dict[str | None, str] = {}
        self.max_id = 0
        #: the next offset of the topic to read
        self.offset = 0

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """One record of the topic (a record that is not the registry's is passed over)."""
        try:
            k = json.loads(key) if key else None
            v = json.loads(value) if value is not None else None
        except ValueError:
            return
        if not isinstance(k, dict) or (v is not None and not isinstance(v, dict)):
            return
        kind, subject = k.get("keytype"), k.get("subject")
        if kind == "SCHEMA":
            self._schema(subject, k.get("version"), v)
        elif kind == "CONFIG":
            self._set(self.configs, subject, None if v is None else {
                n: x for n, x in v.items() if n != "subject"})
        elif kind == "MODE":
            self._set(self.modes, subject, None if v is None else v.get("mode"))
        elif kind == "DELETE_SUBJECT" and v is not None:
            upto = v.get("version", 0)
            for version in self.subjects.get(v.get("subject", subject), {}).values():
                if version.version <= upto:
                    version.deleted = True
        elif kind == "CLEAR_SUBJECT" and v is not None:
            versions = self.subjects.get(v.get("subject", subject), {})
            for number in [n for n, found in versions.items() if found.deleted]:
                del versions[number]

    @staticmethod
    def _set(table: dict, subject: str | None, value: Any) -> None:
        if value is None:
            table.pop(subject, None)
        else:
            table[subject] = value

    def _schema(self, subject: Any, version: Any, value: dict | None) -> None:
        if not isinstance(subject, str) or not isinstance(version, int):
            return
        versions = self.subjects.setdefault(subject, {})
        before = versions.pop(version, None)
        if before is not None:
            holders = self.holders.get(before.id, set())
            holders.discard((subject, version))
            if not holders:
                self.holders.pop(before.id, None)
                self.ids.pop(before.content(), None)
        if value is not None:
            try:
                found = SchemaVersion.from_value(value)
            except (KeyError, TypeError, ValueError):
                found = None
            if found is not None:
                versions[version] = found
                self.holders.setdefault(found.id, set()).add((subject, version))
                self.ids.setdefault(found.content(), found.id)
                self.max_id = max(self.max_id, found.id)
        if not versions:
            del self.subjects[subject]

    def by_id(self, schema_id: int) -> SchemaVersion | None:
        """A version carrying ``schema_id`` (the lowest subject and version), or None."""
        holders = self.holders.get(schema_id)
        if not holders:
            return None
        subject, version = min(holders)
        return self.subjects[subject][version]
