"""What the outside sees of the core, and waits for.

:mod:`.events` is the event log (``GET /events``, the live stream, the dashboard, waits);
:mod:`.watch` turns group changes into events after every request, timer or call;
:mod:`.requests` is the request log (``GET /requests``); :mod:`.inspect` builds the admin API's
views (:mod:`mockbroker.adminapi.views`) from live objects; :mod:`.waits` checks what a wait
waits for.  What a group looks like (its snapshot, its view, its assignments by topic name) is
its type's to say: the watch and the views ask the group coordinator, never a type by name.

:mod:`.request_metrics` counts the traffic the listeners time.  It reads every part of the core
and changes none of it: the core below it writes to its logs (events, requests) and imports
nothing else of it.
"""
