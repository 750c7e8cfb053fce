"""The airline domain pack: an airline's customer service on tau2-bench's airline data.

``tables`` (schema), ``document`` (db.json, typed) and ``loader`` (load/export), ``uow`` and ``repositories``
(transactions, locks, row-level changes), ``checks`` (the policy's rules, in order), ``args``/``reads``/``writes``/
``booking``/``views`` (the operations and their compact results), ``registry`` (the one list of operations),
``profile``, ``service`` (``AirlineApi``), ``demo`` (a made-up airline) and ``pack`` (the ``chops.domains`` entry point
``airline``).
"""
