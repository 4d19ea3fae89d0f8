"""The bridge's one exception type."""


class BridgeError(Exception):
    """Static information cannot be read through the JVM: the message says which class, where it
    was looked for, or what is missing (a JDK, the engine jar)."""
