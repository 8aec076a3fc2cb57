"""The Schema Registry's core: schemas of the three formats Confluent's registry serves (AVRO,
JSON, PROTOBUF), parsed, written in their canonical and normalized forms and checked for
compatibility by Confluent's rules (:mod:`.formats` and one module per format), and the
registry's subjects, versions, ids, configs and modes, kept as records of the ``_schemas``
topic.  Nothing here is imported until a cluster runs with ``schema_registry=True``.
"""
