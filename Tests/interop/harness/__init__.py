"""Building blocks of the interop tier: ports, raw HTTP, peers (nginx, a Python origin,
stand-in proxies) and the Countersign process itself. Fixtures in conftest.py wire them up."""
