"""The edges: everything that touches sockets, the event loop or threads.

:mod:`.kafka` holds the Kafka listeners (a server per broker and security protocol, the
connection's frames, TLS), :mod:`.admin` the admin HTTP API's server (its handlers, the
in-process transport, metrics, the event stream and the dashboard), and :mod:`.runtime` runs a
core with both on an asyncio loop.

It may import the handlers, the core, the codec and the admin API's description; never the
cluster facade, the CLI or the plugin above it.
"""
