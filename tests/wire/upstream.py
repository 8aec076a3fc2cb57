"""Where the tests find Apache Kafka's own jars (fetched by ``bash ci/dev.sh setup``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wire.definitions import KAFKA_VERSION

ROOT = Path(__file__).resolve().parents[2]
JAR_DIR = Path(os.environ.get("MOCKBROKER_JAR_DIR", ROOT / ".cache" / "jars"))
ARTIFACTS = ("kafka-clients", "kafka-group-coordinator", "kafka-transaction-coordinator",
             "kafka-share-coordinator")


def kafka_jars() -> list[Path]:
    jars = [JAR_DIR / f"{artifact}-{KAFKA_VERSION}.jar" for artifact in ARTIFACTS]
    missing = [str(j) for j in jars if not j.is_file()]
    if missing:
        pytest.fail(f"Kafka's jars are missing ({', '.join(missing)}); run `bash ci/dev.sh setup` "
                    "first, or point MOCKBROKER_JAR_DIR at a folder holding them", pytrace=False)
    return jars
