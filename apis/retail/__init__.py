"""The retail domain pack: an online shop's customer service on tau2-bench's retail data.

``tables`` (schema), ``document`` (db.json, typed) and ``loader`` (load/export), ``uow`` and ``repositories``
(transactions, locks, row-level changes), ``args``/``reads``/``writes``/``calc``/``views`` (the operations and
their compact results), ``registry`` (the one list of operations), ``profile``, ``service`` (``RetailApi``),
``demo`` (a made-up shop) and ``pack`` (the ``chops.domains`` entry point ``retail``).
"""
