"""The model layer's one exception type."""


class TraceError(Exception):
    """A trace (or part of it) cannot be read. The message names the file and, where it applies,
    the byte offset, and says what is wrong; whatever was valid stays usable."""
