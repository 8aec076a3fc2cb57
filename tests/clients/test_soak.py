"""A short, seeded fault soak (``bench/soak.py`` runs the long one): idempotent producers of
both libraries and a group mixing them, while random rules are added over HTTP.  Every
acknowledged record is consumed, in order, once in the log; nothing below a successful commit
is read twice; committed offsets never go backwards (the checks are described there)."""

from __future__ import annotations

import pytest

from bench.soak import BROKERS, soak
from mockbroker import MockCluster
from mockbroker.admin import AdminClient

pytestmark = pytest.mark.mockbroker_only("faults")


def test_acknowledged_records_survive_random_faults_at_least_once(stack):
    cluster = stack.enter_context(MockCluster(brokers=BROKERS))
    report = soak(cluster.bootstrap_servers, AdminClient(cluster.admin_url), seconds=20,
                  seed=11, catch_up_s=90, pace=5)
    assert report.rules_fired > 10, report.summary()
    assert report.acked > 1000, report.summary()
    assert report.violations == [], report.summary()
