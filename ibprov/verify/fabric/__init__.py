"""The fabric section of verify (``verify --fabric``); its entry point is :mod:`.section`.

Import-light: the CLI imports :mod:`.commands` to start the discovery before the spec loads."""
