"""The Host header check of the explorer's web application (``book.ui.web.app.create_app``'s
``trusted_hosts``): a page elsewhere must not reach the book by pointing a DNS name at 127.0.0.1.
"""

from __future__ import annotations

import re

LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1", "[::1]"]
_HOST = re.compile(r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::[0-9]{1,5})?")


def host_name(header: str | None) -> str | None:
    """The name in a ``Host`` header, without port or IPv6 brackets (``[::1]:8000`` -> ``::1``);
    None for a header that is no host.

    Our own check rather than Flask's ``TRUSTED_HOSTS``: Werkzeug 3.1.9 compares a bracketed
    IPv6 Host with each trusted name cut at its first ``:``, so ``[::1]:8000`` never matches
    (tests/test_web_api.py::test_security_headers_and_trusted_hosts fails with it).
    """
    match = _HOST.fullmatch(header or "")
    if match is None:
        return None
    return (match.group("ipv6") or match.group("name")).lower()
