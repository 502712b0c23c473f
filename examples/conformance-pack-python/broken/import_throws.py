"""A module that raises while it is imported (index.import-throws.json only): the service
must refuse to boot, naming conformance.import-throws."""

raise RuntimeError("conformance import boom")
