"""The registry's rules, without HTTP: ids, versions, deletes, modes, configs, references and
compatibility levels as Confluent's ``KafkaSchemaRegistry`` applies them, and its state as the
``_schemas`` records rebuild it (:mod:`mockbroker.core.schemas.registry`)."""

from __future__ import annotations

import json

import pytest

from mockbroker.core.schemas.cluster import registry_of
from mockbroker.core.schemas.registry import RegistryError, SchemaRegistry
from mockbroker.core.schemas.store import TOPIC
from tests.core.harness import make_core


class Records:
    """A topic's records in memory: the registry's source in these tests."""

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self.generation = 0

    def identity(self) -> object:
        return self.generation

    def append(self, entries):
        self.records.extend(entries)

    def read_from(self, offset: int):
        for at in range(offset, len(self.records)):
            yield at, *self.records[at]


def avro(*fields: tuple[str, str] | tuple[str, str, object], name: str = "User") -> dict:
    out = []
    for f in fields:
        entry = {"name": f[0], "type": f[1]}
        if len(f) > 2:
            entry["default"] = f[2]
        out.append(entry)
    return {"schema": json.dumps({"type": "record", "name": name, "fields": out})}


V1 = avro(("name", "string"))
V2 = avro(("name", "string"), ("age", "int", 0))
V3 = avro(("name", "string"), ("age", "int", 0), ("city", "string", ""))
NO_DEFAULT = avro(("name", "string"), ("email", "string"))


@pytest.fixture
def records() -> Records:
    return Records()


@pytest.fixture
def registry(records) -> SchemaRegistry:
    return SchemaRegistry(records)


def refusal(call, *args, **kwargs) -> tuple[int, int, str]:
    with pytest.raises(RegistryError) as info:
        call(*args, **kwargs)
    return info.value.status, info.value.error_code, info.value.message


def test_ids_are_global_and_a_schema_keeps_its_id_everywhere(registry):
    assert (registry.register("a", V1).id, registry.register("b", V1).id) == (1, 1)
    again = registry.register("a", V1)
    assert (again.version, again.id) == (1, 1)  # already there: nothing new
    assert (registry.register("a", V2).version, registry.register("a", V2).id) == (2, 2)
    assert registry.subjects_of_id(1) == [("a", 1), ("b", 1)]
    assert registry.state.max_id == 2


def test_versions_go_on_past_deleted_ones_and_a_deleted_schema_comes_back(registry):
    registry.register("a", V1)
    registry.register("a", V2)
    registry.delete_version("a", 2)
    assert registry.versions("a") == [1] and registry.versions("a", deleted=True) == [1, 2]
    back = registry.register("a", V2)  # the same schema again: its id, a new version
    assert (back.version, back.id) == (3, 2)
    # the soft-deleted version of that id is tombstoned in the same write
    assert registry.versions("a", deleted=True) == [1, 3]
    assert refusal(registry.version, "a", 2) == (404, 40402, "Version 2 not found.")


def test_compatibility_levels_compose_confluents_messages(registry):
    registry.register("a", V1)
    status, code, message = refusal(registry.register, "a", NO_DEFAULT)
    assert (status, code) == (409, 40901)
    assert message == (
        'Schema being registered is incompatible with an earlier schema for subject "a", '
        "details: [{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field "
        "'email' at path '/fields/1' in the new schema has no default value and is missing in "
        "the old schema', additionalInfo:'email'}, {oldSchemaVersion: 1}, {oldSchema: "
        '\'{"type":"record","name":"User","fields":[{"name":"name","type":"string"}]}\'}, '
        "{validateFields: 'false', compatibility: 'BACKWARD'}]")
    registry.set_config("a", {"compatibilityLevel": "FORWARD"})
    assert registry.register("a", NO_DEFAULT).version == 2  # old readers ignore the field
    # FORWARD: the old schema (the reader) is the one missing a default
    registry.set_config("a", {"compatibilityLevel": "FULL"})
    messages = registry.test_compatibility("a", None, V1)
    assert messages[0].startswith("{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', "
                                  "description:'The field 'email' at path '/fields/1' in the "
                                  "old schema has no default value")
    assert messages[-1] == "{validateFields: 'false', compatibility: 'FULL'}"
    assert not any(m.startswith("{oldSchemaVersion") for m in messages)  # forward half only


def test_transitive_levels_check_every_live_version(registry):
    registry.set_config("t", {"compatibilityLevel": "BACKWARD_TRANSITIVE"})
    registry.register("t", avro(("name", "string")))
    registry.register("t", avro(("name", "string"), ("email", "string", "")))
    no_default = avro(("name", "string"), ("email", "string"))
    assert registry.test_compatibility("t", -1, no_default) == []  # against v2 alone
    assert registry.test_compatibility("t", None, no_default)  # v1 has no email
    registry.delete_version("t", 1)
    assert registry.register("t", no_default).version == 3  # deleted versions do not count


def test_normalized_schemas_share_an_id(registry):
    spaced = {"schema": '{"fields": [{"type": "string", "name": "name"}], '
                        '"name": "User", "type": "record"}'}
    assert registry.register("a", V1, normalize=True).id == 1
    assert registry.register("b", spaced, normalize=True).id == 1
    assert registry.register("c", spaced).id == 1  # canonical forms agree anyway
    registry.set_config("d", {"normalize": True})  # the subject's config asks for it
    assert registry.register("d", spaced).id == 1
    assert registry.lookup("d", V1).version == 1


def test_deletes_soft_then_permanent_with_confluents_refusals(registry):
    registry.register("a", V1)
    assert refusal(registry.delete_subject, "a", permanent=True) == (
        404, 40405, "Subject 'a' was not deleted first before being permanently deleted")
    assert registry.delete_subject("a") == [1]
    assert refusal(registry.delete_subject, "a") == (
        404, 40404, "Subject 'a' was soft deleted.Set permanent=true to delete permanently")
    assert registry.by_id(1).subject == "a"  # an id is never hidden by a soft delete
    assert registry.delete_subject("a", permanent=True) == [1]
    assert refusal(registry.by_id, 1) == (404, 40403, "Schema 1 not found")
    assert refusal(registry.delete_subject, "a") == (404, 40401, "Subject 'a' not found.")


def test_references_are_resolved_counted_and_protected(registry):
    address = {"schema": json.dumps({"type": "record", "name": "Address",
                                     "fields": [{"name": "city", "type": "string"}]})}
    registry.register("address", address)
    customer = {"schema": json.dumps({"type": "record", "name": "Customer", "fields": [
        {"name": "home", "type": "Address"}]}),
        "references": [{"name": "Address", "subject": "address", "version": 1}]}
    found = registry.register("customer", customer)
    assert registry.referenced_by("address", 1) == [found.id]
    assert refusal(registry.delete_version, "address", 1)[:2] == (422, 42206)
    missing = {**customer, "references": [{"name": "Address", "subject": "nowhere",
                                           "version": 1}]}
    status, code, message = refusal(registry.register, "other", missing)
    assert (status, code) == (422, 42201)
    assert message.endswith('details: No schema reference found for subject "nowhere" and '
                            "version 1")


def test_modes_refuse_what_they_forbid(registry):
    registry.register("a", V1)
    assert refusal(registry.set_mode, None, "IMPORT") == (
        422, 42205, "Cannot import since found existing subjects")
    registry.set_mode("a", "READONLY")
    assert refusal(registry.register, "a", V2) == (
        422, 42205, "Subject a in context  is in read-only mode")
    assert refusal(registry.delete_subject, "a")[:2] == (422, 42205)
    assert refusal(registry.set_config, "a", {"compatibilityLevel": "NONE"})[:2] == (422, 42205)
    assert registry.register("b", V2).id == 2  # only subject a is read-only
    assert registry.delete_mode("a") == "READONLY"
    registry.set_mode(None, "IMPORT", force=True)
    imported = registry.register("z", {**V3, "id": 100, "version": 5})
    assert (imported.id, imported.version) == (100, 5)
    assert refusal(registry.register, "z", {**V1, "id": 100, "version": 6}) == (
        422, 42205, "Overwrite new schema with id 100 in context  is not permitted.")


def test_configs_merge_and_fall_back_to_the_global_one(registry):
    assert registry.config(None) == {"compatibilityLevel": "BACKWARD"}
    assert registry.config("a") is None
    registry.set_config("a", {"compatibilityLevel": "FULL"})
    registry.set_config("a", {"normalize": True})
    assert registry.config("a") == {"compatibilityLevel": "FULL", "normalize": True}
    registry.set_config(None, {"compatibilityLevel": "NONE"})
    assert registry.config("b", default_to_global=True) == {"compatibilityLevel": "NONE"}
    assert registry.delete_config("a") == {"compatibilityLevel": "FULL", "normalize": True}
    assert refusal(registry.delete_config, "a") == (404, 40401, "Subject 'a' not found.")


def test_a_registry_reading_the_records_afresh_answers_the_same(records, registry):
    registry.register("a", V1)
    registry.register("a", V2)
    registry.register("b", V1)
    registry.delete_version("a", 1)
    registry.set_config("a", {"compatibilityLevel": "NONE"})
    registry.set_mode("b", "READONLY")
    fresh = SchemaRegistry(records)
    for one in (registry, fresh):
        assert one.subjects() == ["a", "b"]
        assert one.versions("a", deleted=True) == [1, 2] and one.versions("a") == [2]
        assert one.config("a") == {"compatibilityLevel": "NONE"}
        assert one.mode("b") == "READONLY"
        assert one.subjects_of_id(1) == [("b", 1)]
    assert fresh.register("c", V3).id == 3  # ids go on from what the records hold


def test_the_cluster_keeps_it_in_the_schemas_topic_and_starts_over_with_a_new_one():
    core = make_core(3)
    registry = registry_of(core.cluster)
    topic = core.cluster.topics[TOPIC]
    assert (len(topic.partitions), len(topic.partitions[0].replicas)) == (1, 3)
    assert topic.configs == {"cleanup.policy": "compact"}
    registry.register("a", V1)
    assert topic.partitions[0].log.log_end_offset == 1
    core.cluster.delete_topic(TOPIC)
    assert registry.subjects() == []  # the records are gone with their topic
    assert registry.register("a", V2).version == 1
    assert core.cluster.topics[TOPIC].partitions[0].log.log_end_offset == 1


def test_a_record_that_is_not_the_registrys_is_passed_over(records, registry):
    records.append([(b"not json", b"{}"), (b'{"keytype":"SCHEMA"}', b"[]"),
                    (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}', b"{}")])
    assert registry.subjects() == []
    assert registry.register("s", V1).version == 1


# -- Confluent's finer rules (KafkaSchemaRegistry, AbstractSchemaRegistry, its resources) ------

def test_a_schema_a_read_only_subject_holds_is_still_answered(registry):
    registry.register("a", V1)
    registry.set_mode("a", "READONLY")
    assert registry.register("a", V1).version == 1  # looked up before the mode is checked
    assert refusal(registry.register, "a", V2)[:2] == (422, 42205)


def test_latest_is_the_latest_live_version_even_with_deleted_ones_asked_for(registry):
    registry.register("a", V1)
    registry.register("a", V2)
    registry.delete_version("a", 2)
    assert registry.version("a", -1, deleted=True).version == 1
    assert registry.delete_version("a", -1) == 1  # deletes the latest live one
    assert refusal(registry.version, "a", 1) == (404, 40401, "Subject 'a' not found.")
    assert registry.version("a", 1, deleted=True).deleted
    assert refusal(registry.lookup, "a", V1) == (404, 40401, "Subject 'a' not found.")
    assert registry.lookup("a", V1, deleted=True).version == 1


def test_listing_deleted_subjects_and_versions(registry):
    registry.register("a", V1)
    registry.register("a", V2)
    registry.register("b", V1)
    registry.delete_version("a", 1)
    registry.delete_subject("b")
    assert registry.subjects(deleted_only=True) == ["b"]  # every version deleted
    assert registry.subjects(deleted=True) == ["a", "b"] and registry.subjects() == ["a"]
    assert registry.versions("a", deleted_only=True) == [1]
    assert registry.versions("a", deleted=True, deleted_as_negative=True) == [-1, 2]
    assert registry.subjects_of_id(2) == [("a", 2)]
    registry.delete_version("a", 2)
    assert registry.subjects_of_id(2) == []  # an id held by deleted versions only
    assert registry.subjects_of_id(2, deleted=True) == [("a", 2)]
    assert refusal(registry.subjects_of_id, 9) == (404, 40403, "Schema not found")


def test_testing_compatibility_against_a_version(registry):
    assert refusal(registry.test_compatibility, "nobody", 1, V1) == (
        404, 40402, "Version 1 not found.")
    registry.register("a", V1)
    assert refusal(registry.test_compatibility, "a", -1, {"schema": ""}) == (
        422, 42201, "Empty schema")
    registry.set_config("a", {"compatibilityLevel": "BACKWARD_TRANSITIVE"})
    messages = registry.test_compatibility("a", 1, NO_DEFAULT)
    assert messages[-1] == "{validateFields: 'false', compatibility: 'BACKWARD_TRANSITIVE'}"


def test_a_subject_config_keeps_its_own_level(registry):
    registry.set_config(None, {"compatibilityLevel": "FULL"})
    registry.set_config("a", {"normalize": True})
    assert registry.config("a") == {"normalize": True, "compatibilityLevel": "BACKWARD"}
    assert registry.config("a", default_to_global=True)["compatibilityLevel"] == "BACKWARD"
    assert registry.config("b", default_to_global=True) == {"compatibilityLevel": "FULL"}


def test_a_subject_referring_to_itself_can_be_deleted(registry):
    registry.register("self", avro(("name", "string"), name="Base"))
    referring = {"schema": json.dumps({"type": "record", "name": "Next", "fields": [
        {"name": "base", "type": "Base"}]}),
        "references": [{"name": "Base", "subject": "self", "version": 1}]}
    registry.register("self", {**referring}, force=True)
    assert registry.delete_subject("self") == [1, 2]
    assert registry.delete_subject("self", permanent=True) == [1, 2]


def test_metadata_is_kept_sorted_and_counts_in_the_schema_s_identity_and_guid(registry):
    from mockbroker.core.schemas.registry import guid_of

    plain = registry.register("a", V1)
    owned = registry.register("b", {**V1, "metadata": {"properties": {"z": "1", "a": "2"},
                                                       "tags": {"t": ["y", "x", "x"]}}})
    assert owned.id != plain.id and guid_of(owned) != guid_of(plain)
    assert list(owned.metadata["properties"]) == ["a", "z"]
    assert owned.metadata["tags"] == {"t": ["x", "y"]}
    # the same properties in another order are the same schema
    again = registry.register("c", {**V1, "metadata": {"tags": {"t": ["x", "y"]},
                                                       "properties": {"a": "2", "z": "1"}}})
    assert again.id == owned.id
