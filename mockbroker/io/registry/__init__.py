"""The Schema Registry's HTTP server (``MockCluster(schema_registry=True)``, ``mockbroker serve
--schema-registry``): imported only when a cluster runs one."""
