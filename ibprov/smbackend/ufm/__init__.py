"""NVIDIA UFM Enterprise as the SM back end (``subnet_manager.backend: ufm``): UFM's SM runs on its server and
holds the partitions, which ibprov reconciles through UFM's REST API.

* :mod:`.payload`: the model to and from UFM's pkeys bodies and answers (pure);
* :mod:`.api`: the REST calls over ibprov's own HTTP client, the three authentication styles, located errors;
* :mod:`.backend`: connect, read, plan the minimal calls and apply them (the reconcile rules and their reasons).

Contract-tested (tests/contracts/ufm.py), not run against the product.
"""
