"""The one error the tools raise for input they cannot use."""


class InputError(Exception):
    """A file or option the tools cannot use; str(error) is the one line to show."""
