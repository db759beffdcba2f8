"""User-facing errors: one line that names what is wrong and where."""


class SotacheckError(Exception):
    """An error caused by the user's input or environment, reported as one line and a non-zero exit."""


class DataFileNotFound(SotacheckError):
    """A benchmark file that is missing from every place sotacheck looked."""

    def __init__(self, filename: str, looked_in: list[str]) -> None:
        places = ", ".join(looked_in) if looked_in else "(no data directory configured)"
        super().__init__(f"data file {filename!r} not found; looked in: {places}")
        self.filename = filename
        self.looked_in = looked_in
