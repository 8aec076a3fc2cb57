"""Tests for wire.errors: the Kafka error-code table, its lookups and constants."""

from __future__ import annotations

import inspect
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wire import errors
from wire.errors import ERRORS, ERRORS_BY_NAME, KafkaError

# Highest code in org.apache.kafka.common.protocol.Errors at Kafka 4.4.0 (133 from 4.1.1 to 4.3.0).
MAX_CODE = 136


# --- shape of the table -------------------------------------------------------------------------

def test_codes_are_contiguous_from_minus_one() -> None:
    assert sorted(ERRORS) == list(range(-1, MAX_CODE + 1))
    assert len(ERRORS) == MAX_CODE + 2


def test_table_rows_are_unique_and_ordered() -> None:
    codes = [row[0] for row in errors._TABLE]
    names = [row[1] for row in errors._TABLE]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)


def test_entries_are_consistent() -> None:
    for code, entry in ERRORS.items():
        assert isinstance(entry, KafkaError)
        assert entry.code == code
        assert ERRORS_BY_NAME[entry.name] is entry
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", entry.name), entry.name
        assert isinstance(entry.retriable, bool)
        desc = entry.description
        assert desc and "\n" not in desc and len(desc) <= 100, (entry.name, desc)
    assert len(ERRORS_BY_NAME) == len(ERRORS)


def test_entries_are_frozen() -> None:
    with pytest.raises(AttributeError):
        ERRORS[0].code = 1  # type: ignore[misc]


def test_well_known_names() -> None:
    expected = {
        -1: "UNKNOWN_SERVER_ERROR",
        0: "NONE",
        3: "UNKNOWN_TOPIC_OR_PARTITION",
        6: "NOT_LEADER_OR_FOLLOWER",
        15: "COORDINATOR_NOT_AVAILABLE",
        16: "NOT_COORDINATOR",
        25: "UNKNOWN_MEMBER_ID",
        27: "REBALANCE_IN_PROGRESS",
        35: "UNSUPPORTED_VERSION",
        79: "MEMBER_ID_REQUIRED",
        82: "FENCED_INSTANCE_ID",
        133: "SHARE_SESSION_LIMIT_REACHED",
        134: "GROUP_DELETION_FAILED",
        136: "CONTROLLER_ID_NOT_REGISTERED",
    }
    assert {code: ERRORS[code].name for code in expected} == expected


# --- constants ----------------------------------------------------------------------------------

def test_constants_match_table() -> None:
    for entry in ERRORS.values():
        value = getattr(errors, entry.name)
        assert type(value) is int and value == entry.code, entry.name
    assert errors.NONE == 0
    assert errors.UNKNOWN_SERVER_ERROR == -1
    assert errors.NOT_LEADER_OR_FOLLOWER == 6
    assert errors.REBALANCE_IN_PROGRESS == 27


def test_no_stray_constants() -> None:
    int_constants = {
        name for name, value in vars(errors).items()
        if name.isupper() and type(value) is int
    }
    assert int_constants == set(ERRORS_BY_NAME)


# --- lookups ------------------------------------------------------------------------------------

@pytest.mark.parametrize("code", sorted(ERRORS))
def test_lookup_round_trips(code: int) -> None:
    entry = errors.error_by_code(code)
    assert entry.code == code
    assert errors.error_by_name(entry.name) is entry
    assert errors.error_by_name(entry.name.lower()) is entry
    assert errors.resolve_error(code) is entry
    assert errors.resolve_error(str(code)) is entry
    assert errors.resolve_error(entry.name) is entry
    assert errors.resolve_error(entry.name.lower()) is entry


def test_resolve_accepts_loose_forms() -> None:
    assert errors.resolve_error("not_leader_or_follower").code == 6
    assert errors.resolve_error("Not_Leader_Or_Follower").code == 6
    assert errors.resolve_error(" 6 ").code == 6
    assert errors.resolve_error("-1").name == "UNKNOWN_SERVER_ERROR"
    assert errors.resolve_error("+27").name == "REBALANCE_IN_PROGRESS"
    assert errors.resolve_error("0").name == "NONE"


@pytest.mark.parametrize("code", [-2, MAX_CODE + 1, 1000, -32768, 32767])
def test_unknown_code_rejected(code: int) -> None:
    with pytest.raises(KeyError, match=f"unknown Kafka error code {code}"):
        errors.error_by_code(code)
    with pytest.raises(KeyError, match="unknown Kafka error code"):
        errors.resolve_error(code)
    with pytest.raises(KeyError, match="unknown Kafka error code"):
        errors.resolve_error(str(code))


@given(st.integers().filter(lambda n: n < -1 or n > MAX_CODE))
def test_any_out_of_range_code_rejected(code: int) -> None:
    with pytest.raises(KeyError):
        errors.resolve_error(code)


@pytest.mark.parametrize("name", ["", "   ", "NOT_A_REAL_ERROR", "NotLeaderOrFollower",
                                  "not leader or follower", "6x", "--1", "1.0"])
def test_unknown_name_rejected(name: str) -> None:
    with pytest.raises(KeyError, match="unknown Kafka error"):
        errors.resolve_error(name)


def test_error_by_name_rejects_unknown_with_clear_message() -> None:
    with pytest.raises(errors.UnknownKafkaError) as info:
        errors.error_by_name("NO_SUCH_THING")
    assert str(info.value) == "unknown Kafka error name 'NO_SUCH_THING'"


@pytest.mark.parametrize("value", [True, False, 6.0, None, b"6"])
def test_resolve_rejects_other_types(value: object) -> None:
    with pytest.raises(TypeError):
        errors.resolve_error(value)  # type: ignore[arg-type]


# --- retriability (each checked against the exception's superclass chain in Kafka 4.1.1) --------

@pytest.mark.parametrize(
    ("name", "retriable"),
    [
        ("NONE", False),
        ("NOT_LEADER_OR_FOLLOWER", True),       # via InvalidMetadataException
        ("UNKNOWN_TOPIC_OR_PARTITION", True),   # via InvalidMetadataException
        ("LEADER_NOT_AVAILABLE", True),
        ("COORDINATOR_LOAD_IN_PROGRESS", True),
        ("COORDINATOR_NOT_AVAILABLE", True),    # via RefreshRetriableException
        ("NOT_COORDINATOR", True),              # via RefreshRetriableException
        ("REQUEST_TIMED_OUT", True),
        ("NOT_ENOUGH_REPLICAS", True),
        ("CORRUPT_MESSAGE", True),
        ("REBALANCE_IN_PROGRESS", False),
        ("UNKNOWN_MEMBER_ID", False),
        ("ILLEGAL_GENERATION", False),
        ("OUT_OF_ORDER_SEQUENCE_NUMBER", False),
        ("UNKNOWN_PRODUCER_ID", False),         # subclasses OutOfOrderSequenceException
        ("UNKNOWN_SERVER_ERROR", False),
        ("TOPIC_AUTHORIZATION_FAILED", False),
        ("MESSAGE_TOO_LARGE", False),
    ],
)
def test_retriable_spot_checks(name: str, retriable: bool) -> None:
    assert errors.error_by_name(name).retriable is retriable


# --- cross-check against kafka-python -----------------------------------------------------------

# Codes kafka-python still names after an older Kafka name (our name is Kafka 4.x's).
KAFKA_PYTHON_OLD_NAMES = {
    -1: "UNKNOWN",
    0: "NO_ERROR",
    6: "NOT_LEADER_FOR_PARTITION",
    10: "MESSAGE_SIZE_TOO_LARGE",
    39: "INVALID_REPLICATION_ASSIGNMENT",
}

# Codes where kafka-python's `retriable` disagrees with Kafka 4.x; ours follows Kafka.
#   2 CORRUPT_MESSAGE: Kafka's CorruptRecordException extends RetriableException;
#     kafka-python marks CorruptRecordError as not retriable.
RETRIABLE_DISAGREEMENTS = {2: True}


def _norm(name: str) -> str:
    flat = name.replace("_", "").lower()
    return re.sub(r"(error|exception)$", "", flat)


@pytest.fixture(scope="module")
def kafka_python_classes() -> dict[int, list[type]]:
    import kafka.errors as kerrors
    by_code: dict[int, list[type]] = {}
    for _, cls in inspect.getmembers(kerrors, inspect.isclass):
        if (issubclass(cls, kerrors.BrokerResponseError)
                and isinstance(getattr(cls, "errno", None), int)):
            by_code.setdefault(cls.errno, []).append(cls)
    assert by_code, "found no kafka-python error classes"
    return by_code


def test_kafka_python_defines_no_code_we_lack(kafka_python_classes: dict[int, list[type]]) -> None:
    assert set(kafka_python_classes) <= set(ERRORS)


def test_names_match_kafka_python(kafka_python_classes: dict[int, list[type]]) -> None:
    for code, classes in kafka_python_classes.items():
        ours = ERRORS[code].name
        if code in KAFKA_PYTHON_OLD_NAMES:
            assert any(getattr(c, "message", None) == KAFKA_PYTHON_OLD_NAMES[code]
                       for c in classes), (code, classes)
            continue
        candidates = {_norm(c.__name__) for c in classes}
        messages = (getattr(c, "message", None) for c in classes)
        candidates |= {_norm(m) for m in messages if isinstance(m, str)}
        assert _norm(ours) in candidates, (code, ours, [c.__name__ for c in classes])


def test_retriable_matches_kafka_python(kafka_python_classes: dict[int, list[type]]) -> None:
    for code, classes in kafka_python_classes.items():
        ours = ERRORS[code].retriable
        if code in RETRIABLE_DISAGREEMENTS:
            assert ours is RETRIABLE_DISAGREEMENTS[code], code
            continue
        for cls in classes:
            assert bool(cls.retriable) is ours, (code, ERRORS[code].name, cls.__name__)
