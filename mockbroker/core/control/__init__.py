"""Breaking Kafka on purpose and steering the cluster: control rules and control actions.

:mod:`.rules` holds the rules in force (what a rule picks, and how a picked request is
answered), :mod:`.actions` the function that carries out each control action (stop a broker,
move a leader or coordinator, expire a member, ...), registered against the table that declares
every action once (:mod:`mockbroker.adminapi.actions`), :mod:`.error_responses` the shape of an
injected error in each API's response, and :mod:`.request_names` what a request names (topics,
partitions, groups) for rules to match on.

It may import the whole core below the front door (:mod:`mockbroker.core.dispatch` imports
it), the codec and the admin API's description of the actions; nothing below it imports it.
"""
