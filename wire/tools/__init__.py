"""Build-time tools of the codec: :mod:`.generate` writes :mod:`wire.definitions` from
Kafka's own message specs.  Nothing at run time imports them."""
