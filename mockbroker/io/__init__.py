"""The edges: asyncio listeners for Kafka clients and the HTTP admin API."""
