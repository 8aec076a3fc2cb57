"""The admin HTTP API's server: the handlers of every route (:mod:`.api`), served over HTTP
(:mod:`.http`, :mod:`.server`, :mod:`.token`) or in-process (:mod:`.local`), with
``GET /metrics`` (:mod:`.metrics`), the live event stream (:mod:`.event_stream`) and the
dashboard (:mod:`.pages`).

It validates and answers with the description in :mod:`mockbroker.adminapi`; it reads the
running cluster through :mod:`mockbroker.io.runtime`.  Loading this package loads nothing: the
CLI reads :mod:`.token` without a broker."""
