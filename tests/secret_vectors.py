"""Fake secrets of many kinds, built when the tests run.

No literal token is written in this file (scanners and push protection would flag the
repository itself): each is assembled from a prefix and random characters of the right
alphabet and length, so each matches its detect-secrets plugin.
"""

from __future__ import annotations

import base64
import json
import random
import string

_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"
_B64 = string.ascii_letters + string.digits + "+/"
_URLSAFE = _ALNUM + "-_"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def vectors(seed: int = 13) -> dict[str, tuple[str, str]]:
    """``{kind: (secret value, line as a program would print it)}``: 22 kinds."""
    rng = random.Random(seed)
    pick = lambda alphabet, n: _pick(rng, alphabet, n)  # noqa: E731
    jwt = ".".join(
        [
            _b64url({"alg": "HS256", "typ": "JWT"}),
            _b64url({"sub": pick(string.digits, 10), "name": "Ada", "iat": 1516239022}),
            pick(_URLSAFE, 43),
        ]
    )
    key_head = "-----BEGIN " + "RSA " + "PRIVATE" + " KEY-----"
    raw = {
        "aws": "AK" + "IA" + pick(string.ascii_uppercase + "234567", 16),
        "private-key": key_head,
        "jwt": jwt,
        "github": "gh" + "p_" + pick(_ALNUM, 36),
        "gitlab": "gl" + "pat-" + pick(_ALNUM, 20),
        "slack": "xo"
        + "xb-"
        + pick(string.digits, 12)
        + "-"
        + pick(string.digits, 13)
        + "-"
        + pick(string.ascii_lowercase + string.digits, 24),
        "stripe": "sk" + "_live_" + pick(_ALNUM, 24),
        "twilio": "S" + "K" + pick(_HEX, 32),
        "sendgrid": "S" + "G." + pick(_URLSAFE, 22) + "." + pick(_URLSAFE, 43),
        "mailchimp": pick(_HEX, 32) + "-u" + "s12",
        "npm": "np" + "m_" + pick(_ALNUM, 36),
        "pypi": "py" + "pi-AgEIcHlwaS5vcmc" + pick(_URLSAFE, 80),
        "openai": "s" + "k-" + pick(_ALNUM, 20) + "T3Blbk" + "FJ" + pick(_ALNUM, 20),
        "discord": "M" + pick(_URLSAFE, 24) + "." + pick(_URLSAFE, 6) + "." + pick(_URLSAFE, 27),
        "square": "sq" + "0csp-" + pick(_URLSAFE, 43),
        "azure": "Account" + "Key=" + pick(_B64, 86) + "==",
        "artifactory": "AK" + "C" + pick(_ALNUM, 60),
        "basic-auth": "https://admin:" + pick(_ALNUM, 12) + "@db.example.com/",
        "keyword": pick(_ALNUM, 14),
        "base64-entropy": pick(_B64, 44),
        "telegram": pick(string.digits, 9) + ":" + "AA" + pick(_URLSAFE, 33),
        "ibm-cos-hmac": pick(_HEX, 48),
    }
    lines = {kind: value for kind, value in raw.items()}
    lines["keyword"] = '{"password": "' + raw["keyword"] + '"}'
    lines["base64-entropy"] = 'token "' + raw["base64-entropy"] + '"'
    lines["ibm-cos-hmac"] = 'secret_access_key = "' + raw["ibm-cos-hmac"] + '"'
    lines["npm"] = "//registry.npmjs.org/:_authToken=" + raw["npm"]
    lines["artifactory"] = 'artifactory: "' + raw["artifactory"] + '"'
    return {kind: (raw[kind], lines[kind]) for kind in raw}
