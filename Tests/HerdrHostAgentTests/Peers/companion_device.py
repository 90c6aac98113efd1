#!/usr/bin/env python3
"""An independent DEVICE side ("phone", herdr-remote's role) of the herdr-remote relay road.

Written from docs/companion.md, docs/relay.md, docs/noise.md and interop-facts §5 only, for
interop tests against `herdr-host pair` / `herdr-host run`.

    companion_device.py pair CODE --name DEVICE_NAME --state FILE [--timeout SECONDS]
    companion_device.py rejoin --state FILE [--timeout SECONDS]

stdout: one JSON object per line (events); stderr: diagnostics.

Exit codes:
  0 success            1 other failure (bad state file, broken channel, I/O)
  2 usage / malformed code or device name
  3 the computer rejected the pairing
  4 timeout
  5 the relay refused the join or closed the connection with a reason that retrying cannot fix
  6 POST /register failed (the pairing is kept with registered=false; a rejoin registers)
  7 POST /register said "already registered" (nothing kept: pair again)
  130/143 interrupted by SIGINT/SIGTERM
Dependencies: the standard library, noiseprotocol, websockets, cryptography.
"""

import argparse
import base64
import binascii
import hashlib
import json
import os
import re
import signal
import sys
import tempfile
import time
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from noise.connection import Keypair, NoiseConnection
import websockets.exceptions as wsexc
from websockets.sync.client import connect as ws_connect

PROTOCOL_NAME = "Noise_XK_25519_ChaChaPoly_BLAKE2s"
PROLOGUE_PREFIX = "herdr-remote/v1/pid:"
SAS_INFO = b"herdr-remote-sas-v1"
JOIN_KEY_INFO = b"relay-auth-ed25519"
USER_AGENT = "iTerm2Companion"
MAX_LINK_BYTES = 8192
MAX_CHUNK = 65518          # 65535 - 16 (tag) - 1 (flag)
MAX_NOISE_MESSAGE = 65535
MAX_CONTROL = 4096
MAX_REASSEMBLY = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 180.0    # the device's own time limit (companion.md)
BACKOFF_START = 0.5
BACKOFF_MAX = 2.0

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_REJECTED, EXIT_TIMEOUT, EXIT_RELAY = 0, 1, 2, 3, 4, 5
EXIT_REGISTER, EXIT_ALREADY_REGISTERED = 6, 7

# Close reasons after which trying again cannot help (relay.md, RelayLink).
FATAL_CLOSE_REASONS = {
    "room deleted", "displaced", "pairing cycle cap", "bad signature", "signature required",
    "room expired", "bad hello", "ticket required", "bad ticket", "bad proof", "slot occupied",
}


# ----------------------------------------------------------------------------- output

def emit(event, **fields):
    obj = {"event": event}
    obj.update(fields)
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def diag(msg):
    sys.stderr.write("companion_device: " + msg + "\n")
    sys.stderr.flush()


class Exit(Exception):
    def __init__(self, code, message=None):
        super().__init__(message or "")
        self.code = code
        self.message = message


# ----------------------------------------------------------------------------- encodings

def b64std(data):
    return base64.b64encode(data).decode("ascii")


def b64std_decode(text, length=None, what="value"):
    if not isinstance(text, str):
        raise ValueError(f"{what} is not a string")
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ValueError(f"{what} is not base64")
    if length is not None and len(data) != length:
        raise ValueError(f"{what} is not {length} bytes")
    return data


_B64URL_RE = re.compile(r"^[A-Za-z0-9_-]*$")


def b64url_canonical_decode(text, length, what):
    """Unpadded, canonical base64url of exactly `length` bytes."""
    expected_chars = (length * 4 + 2) // 3
    if len(text) != expected_chars or not _B64URL_RE.match(text):
        raise ValueError(f"{what} is not {expected_chars} characters of unpadded base64url")
    padded = text + "=" * (-len(text) % 4)
    try:
        data = base64.urlsafe_b64decode(padded.encode("ascii"))
    except (binascii.Error, ValueError):
        raise ValueError(f"{what} is not base64url")
    if len(data) != length or base64.urlsafe_b64encode(data).decode("ascii").rstrip("=") != text:
        raise ValueError(f"{what} is not canonical base64url of {length} bytes")
    return data


def canonical(domain, fields):
    def lp(b):
        return len(b).to_bytes(4, "big") + b
    out = lp(domain.encode("utf-8"))
    for f in fields:
        out += lp(f)
    return out


def room_name(rs, pid):
    return hashlib.sha256(canonical("iterm2-room", [rs, pid.encode("utf-8")])).hexdigest()


def hkdf_sha256(ikm, info, length):
    # An empty salt: RFC 5869 pads it to HashLen zeros, which is what salt=None does.
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(ikm)


def sas_code(handshake_hash):
    value = int.from_bytes(hkdf_sha256(handshake_hash, SAS_INFO, 8), "big")
    return "%06d" % (value % 1_000_000)


def join_key(room_secret):
    return Ed25519PrivateKey.from_private_bytes(hkdf_sha256(room_secret, JOIN_KEY_INFO, 32))


def verifier_of(key):
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def join_transcript(role_byte, nonce, room, origin):
    return canonical("iterm2-relay-join",
                     [b"\x01", bytes([role_byte]), nonce, room.encode("utf-8"), origin.encode("utf-8")])


# ----------------------------------------------------------------------------- the code

class CodeError(ValueError):
    pass


_HOST_CHARS_RE = re.compile(r"^[a-z0-9.-]+$")
_SESSION_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_IPV4_RE = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")


def _is_loopback_host(host):
    if host == "localhost":
        return True
    m = _IPV4_RE.match(host)
    if m and all(0 <= int(p) <= 255 for p in m.groups()):
        return int(m.group(1)) == 127
    return False


def parse_relay_origin(text):
    """`https://host[:port]` reduced to its origin (companion.md, the `relay` row)."""
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)$", text, re.S)
    if not m:
        raise CodeError("relay: not an http(s) URL")
    scheme, authority, rest = m.group(1).lower(), m.group(2), m.group(3)
    if scheme not in ("https", "http"):
        raise CodeError(f"relay: scheme {scheme!r} is not https")
    if "?" in rest or "#" in rest:
        raise CodeError("relay: a query or fragment is not allowed")
    if rest not in ("", "/"):
        raise CodeError("relay: a path is not allowed")
    if "@" in authority:
        raise CodeError("relay: user info is not allowed")
    host, port = authority, None
    if ":" in authority:
        host, _, port_text = authority.rpartition(":")
        if not re.fullmatch(r"[0-9]{1,5}", port_text):
            raise CodeError("relay: bad port")
        port = int(port_text)
        if not 1 <= port <= 65535:
            raise CodeError("relay: port out of range")
    host = host.lower()
    if not host or not _HOST_CHARS_RE.match(host):
        raise CodeError("relay: the host may hold only letters, digits, '-' and '.'")
    if scheme == "http" and not _is_loopback_host(host):
        raise CodeError("relay: http:// is allowed only for a loopback host")
    default_port = 443 if scheme == "https" else 80
    if port == default_port:
        port = None
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


def _percent_decode(text, what):
    out = bytearray()
    i = 0
    raw = text.encode("utf-8")
    while i < len(raw):
        c = raw[i]
        if c == 0x25:  # %
            hexpart = raw[i + 1:i + 3]
            if len(hexpart) != 2 or not all(ch in b"0123456789abcdefABCDEF" for ch in hexpart):
                raise CodeError(f"{what}: bad percent escape")
            out.append(int(hexpart, 16))
            i += 3
        else:
            out.append(c)
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise CodeError(f"{what}: not UTF-8 once unescaped")


def _has_control(s):
    return any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in s)


KNOWN_KEYS = ("v", "proto", "rs", "pid", "relay", "n", "s", "x")


def parse_code(text, now=None):
    if now is None:
        now = time.time()
    if len(text.encode("utf-8")) > MAX_LINK_BYTES:
        raise CodeError("the code is longer than 8192 bytes")
    for ch in text:
        if ch == " " or ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F:
            raise CodeError("the code holds a raw space or control character")
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):(.*)$", text, re.S)
    if not m or m.group(1).lower() != "herdr":
        raise CodeError("not a herdr:// link")
    rest = m.group(2)
    if not rest.startswith("//"):
        raise CodeError("not a herdr:// link")
    rest = rest[2:]
    if "#" in rest:
        raise CodeError("a fragment is not allowed")
    authority_end = len(rest)
    for sep in "/?":
        idx = rest.find(sep)
        if idx != -1:
            authority_end = min(authority_end, idx)
    authority, after = rest[:authority_end], rest[authority_end:]
    if "@" in authority:
        raise CodeError("a user or password is not allowed")
    if ":" in authority:
        raise CodeError("a port is not allowed")
    if authority.lower() != "companion":
        if authority.lower() == "pair":
            raise CodeError("this is an SSH-road herdr://pair code, not a companion code")
        raise CodeError(f"unknown link host {authority!r}")
    qidx = after.find("?")
    path, query = (after, None) if qidx == -1 else (after[:qidx], after[qidx + 1:])
    if path != "":
        raise CodeError("a path is not allowed")
    if query is None or query == "":
        raise CodeError("the code has no parameters")

    values = {}
    for part in query.split("&"):
        if part == "":
            raise CodeError("empty parameter")
        if "=" not in part:
            raise CodeError(f"parameter without a value: {part[:20]!r}")
        raw_key, raw_value = part.split("=", 1)
        key = _percent_decode(raw_key, "key")
        if key not in KNOWN_KEYS:
            continue  # unknown keys are ignored
        if key in values:
            raise CodeError(f"key {key!r} appears twice")
        values[key] = _percent_decode(raw_value, key)

    for key in ("v", "proto", "rs", "pid", "relay", "n"):
        if key not in values:
            raise CodeError(f"missing {key!r}")
    if values["v"] != "1":
        raise CodeError("unsupported version")
    if values["proto"] != PROTOCOL_NAME:
        raise CodeError(f"unsupported protocol {values['proto']!r}")
    try:
        rs = b64url_canonical_decode(values["rs"], 32, "rs")
        pid = values["pid"]
        b64url_canonical_decode(pid, 16, "pid")
    except ValueError as e:
        raise CodeError(str(e))
    if pid.startswith("-"):
        raise CodeError("pid starts with '-'")
    relay = parse_relay_origin(values["relay"])
    name = values["n"]
    if len(name) > 64:
        raise CodeError("n is longer than 64 characters")
    if _has_control(name):
        raise CodeError("n holds a control character")
    session = values.get("s")
    if session is not None:
        if not _SESSION_RE.match(session) or session in (".", ".."):
            raise CodeError("s is not a valid herdr session name")
    expiry = None
    if "x" in values:
        if not re.fullmatch(r"[0-9]{1,19}", values["x"]):
            raise CodeError("x is not Unix seconds")
        expiry = int(values["x"])
        if expiry <= now:
            raise CodeError("the code has expired")
        if expiry > now + 900:
            raise CodeError("the code's expiry is more than 900 s ahead")
    return {"rs": rs, "pid": pid, "relay": relay, "name": name, "session": session, "expiry": expiry}


def valid_device_name(name):
    return 1 <= len(name) <= 64 and all(ch.isprintable() for ch in name)


# ----------------------------------------------------------------------------- state file

def write_state(path, state):
    data = json.dumps(state, indent=2, sort_keys=True).encode("utf-8") + b"\n"
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".companion-state.", dir=directory)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)
        os.chmod(path, 0o600)
        try:
            dfd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_state(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def load_state(path):
    try:
        with open(path, "rb") as f:
            st = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        raise Exit(EXIT_FAIL, f"cannot read the state file {path}: {e}")
    try:
        if not isinstance(st, dict) or st.get("v") != 1:
            raise ValueError("not a version-1 state file")
        out = dict(st)
        out["_static"] = b64std_decode(st["deviceStaticPrivateKey"], 32, "deviceStaticPrivateKey")
        out["_rs"] = b64url_canonical_decode(st["rs"], 32, "rs")
        b64url_canonical_decode(st["pid"], 16, "pid")
        out["_secret"] = b64std_decode(st["roomSecret"], 32, "roomSecret")
        if parse_relay_origin(st["relay"]) != st["relay"]:
            raise ValueError("relay is not an origin")
        if not isinstance(st["registered"], bool):
            raise ValueError("registered is not a boolean")
        if not isinstance(st["name"], str) or not valid_device_name(st["name"]):
            raise ValueError("bad device name")
        if room_name(out["_rs"], st["pid"]) != st["room"]:
            raise ValueError("room does not match rs and pid")
    except (KeyError, ValueError, TypeError) as e:
        raise Exit(EXIT_FAIL, f"bad state file {path}: {e}")
    return out


# ----------------------------------------------------------------------------- relay connection

class Refused(Exception):
    """The relay refused the admission ({"ok":false,"error":X})."""
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class Closed(Exception):
    """The socket closed (code/reason of the relay's close frame, or 1006 without one)."""
    def __init__(self, code, reason):
        super().__init__(f"{code} {reason}")
        self.code = code
        self.reason = reason


class Unreachable(Exception):
    """The relay could not be reached (TCP, TLS, upgrade)."""
    def __init__(self, message, retryable=True):
        super().__init__(message)
        self.retryable = retryable


class ChannelFailure(Exception):
    pass


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()

    def check(self):
        if self.left() <= 0:
            raise Exit(EXIT_TIMEOUT, "timed out")


def _closed_from(exc):
    rcvd = getattr(exc, "rcvd", None)
    if rcvd is not None:
        return Closed(rcvd.code, rcvd.reason)
    return Closed(1006, "connection lost")


def _connect(url, **kwargs):
    # websockets >= 16 warns unless `legacy=True` asks for a plain connection object.
    try:
        return ws_connect(url, legacy=True, **kwargs)
    except TypeError as e:
        if "legacy" not in str(e):
            raise
        return ws_connect(url, **kwargs)


class RelaySocket:
    def __init__(self, origin, room, deadline):
        self.origin = origin
        self.room = room
        self.deadline = deadline
        scheme, hostport = origin.split("://", 1)
        url = ("wss" if scheme == "https" else "ws") + "://" + hostport + "/"
        try:
            self.ws = _connect(
                url,
                origin=None,                       # never an Origin header (403 forbidden)
                additional_headers={"x-relay-room": room},
                user_agent_header=USER_AGENT,
                compression=None,
                proxy=None,
                open_timeout=max(1.0, min(10.0, deadline.left())),
                ping_interval=15,
                ping_timeout=10,
                close_timeout=2,
                max_size=1 << 20,
            )
        except wsexc.InvalidStatus as e:
            status = e.response.status_code
            body = (e.response.body or b"").decode("utf-8", "replace").strip()
            raise Unreachable(f"upgrade refused: HTTP {status} {body}", retryable=status in (429, 503))
        except (OSError, wsexc.InvalidHandshake, TimeoutError) as e:
            raise Unreachable(f"cannot reach {url}: {e}")

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass

    def _recv(self):
        left = self.deadline.left()
        if left <= 0:
            raise Exit(EXIT_TIMEOUT, "timed out")
        try:
            return self.ws.recv(timeout=left)
        except TimeoutError:
            raise Exit(EXIT_TIMEOUT, "timed out")
        except wsexc.ConnectionClosed as e:
            raise _closed_from(e)

    def send_text(self, text):
        try:
            self.ws.send(text)
        except wsexc.ConnectionClosed as e:
            raise _closed_from(e)

    def send_binary(self, data):
        try:
            self.ws.send(bytes(data))
        except wsexc.ConnectionClosed as e:
            raise _closed_from(e)

    def recv_text_json(self, what):
        msg = self._recv()
        if not isinstance(msg, str):
            raise ChannelFailure(f"the relay sent a binary frame instead of its {what}")
        try:
            obj = json.loads(msg)
        except ValueError:
            raise ChannelFailure(f"the relay's {what} is not JSON")
        if not isinstance(obj, dict):
            raise ChannelFailure(f"the relay's {what} is not a JSON object")
        return obj

    def recv_binary(self):
        msg = self._recv()
        if not isinstance(msg, (bytes, bytearray)):
            raise ChannelFailure("a text frame arrived where a Noise message was expected")
        return bytes(msg)

    def admit_phone(self, signer=None):
        """Hello, Challenge, Proof, Result. Returns the 24-byte registration token."""
        self.send_text(json.dumps({"v": 1, "role": "phone"}, separators=(",", ":")))
        challenge = self.recv_text_json("challenge")
        try:
            nonce = b64std_decode(challenge.get("nonce"), 32, "challenge nonce")
        except ValueError as e:
            raise ChannelFailure(str(e))
        if signer is None:
            proof = {}
        else:
            sig = signer.sign(join_transcript(0x02, nonce, self.room, self.origin))
            proof = {"sig": b64std(sig)}
        self.send_text(json.dumps(proof, separators=(",", ":")))
        result = self.recv_text_json("result")
        if result.get("ok") is not True:
            reason = result.get("error")
            raise Refused(reason if isinstance(reason, str) else json.dumps(result))
        token = result.get("registrationToken")
        try:
            return b64std_decode(token, None, "registrationToken")
        except ValueError as e:
            diag(f"admitted, but no usable registration token ({e})")
            return None


def post_register(origin, room, token, verifier, deadline):
    """POST /register. Returns (ok, error text)."""
    body = json.dumps({"registrationToken": b64std(token), "verifier": b64std(verifier)},
                      separators=(",", ":")).encode("utf-8")
    req = urllib.request.Request(origin + "/register", data=body, method="POST", headers={
        "x-relay-room": room,
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
    })
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    timeout = max(1.0, min(15.0, deadline.left()))
    try:
        with opener.open(req, timeout=timeout) as resp:
            status, data = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, data = e.code, e.read()
    except (urllib.error.URLError, OSError) as e:
        return False, f"cannot reach the relay: {e}"
    try:
        obj = json.loads(data.decode("utf-8"))
    except ValueError:
        obj = None
    if status == 200 and isinstance(obj, dict) and obj.get("ok") is True:
        return True, None
    if isinstance(obj, dict) and isinstance(obj.get("error"), str):
        return False, obj["error"]
    return False, f"HTTP {status} {data.decode('utf-8', 'replace').strip()}"


# ----------------------------------------------------------------------------- Noise channel

class Channel:
    def __init__(self, sock, static_private, rs, pid):
        self.sock = sock
        n = NoiseConnection.from_name(PROTOCOL_NAME.encode("ascii"))
        n.set_as_initiator()
        n.set_keypair_from_private_bytes(Keypair.STATIC, static_private)
        n.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, rs)
        n.set_prologue((PROLOGUE_PREFIX + pid).encode("utf-8"))
        self.noise = n
        self.handshake_hash = None

    def handshake(self):
        n = self.noise
        n.start_handshake()
        try:
            self.sock.send_binary(n.write_message(b""))          # -> e, es
            msg2 = self.sock.recv_binary()                        # <- e, ee
            if len(msg2) > MAX_NOISE_MESSAGE:
                raise ChannelFailure("handshake message over 65535 bytes")
            n.read_message(msg2)                                  # payload ignored
            self.sock.send_binary(n.write_message(b""))          # -> s, se
        except (Closed, Exit, ChannelFailure):
            raise
        except Exception as e:
            raise ChannelFailure(f"handshake failed: {type(e).__name__} {e}")
        if not n.handshake_finished:
            raise ChannelFailure("handshake did not finish")
        self.handshake_hash = bytes(n.get_handshake_hash())
        return self.handshake_hash

    def send(self, message):
        chunks = [message[i:i + MAX_CHUNK] for i in range(0, len(message), MAX_CHUNK)] or [b""]
        for i, chunk in enumerate(chunks):
            flag = b"\x01" if i < len(chunks) - 1 else b"\x00"
            try:
                frame = self.noise.encrypt(flag + chunk)
            except Exception as e:
                raise ChannelFailure(f"encrypt failed: {e}")
            self.sock.send_binary(frame)

    def receive(self):
        buf = bytearray()
        while True:
            frame = self.sock.recv_binary()
            if len(frame) > MAX_NOISE_MESSAGE:
                raise ChannelFailure("frame over 65535 bytes")
            try:
                plain = self.noise.decrypt(frame)
            except Exception as e:
                raise ChannelFailure(f"decrypt failed: {type(e).__name__} {e}")
            if len(plain) < 1 or plain[0] not in (0, 1):
                raise ChannelFailure("chunk without a valid flag byte")
            buf += plain[1:]
            if len(buf) > MAX_REASSEMBLY:
                raise ChannelFailure("message over the reassembly limit")
            if plain[0] == 0:
                return bytes(buf)

    def send_control(self, obj):
        data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if len(data) > MAX_CONTROL:
            raise ChannelFailure("control message over 4096 bytes")
        self.send(data)

    def receive_control(self):
        """Next control message as (key, value). This device speaks no session protocol, so
        a session message (first byte 0x01-0x1F) is out of turn; any other first byte, or an
        empty message, ends the channel (companion.md, "Inside the channel")."""
        while True:
            msg = self.receive()
            if not msg:
                raise ChannelFailure("the computer sent an empty message")
            if 0x01 <= msg[0] <= 0x1F:
                raise ChannelFailure("the computer sent a session message while this device waits for control messages")
            if not msg.startswith(b"{"):
                raise ChannelFailure(f"the computer sent a message starting with byte 0x{msg[0]:02X}")
            if len(msg) > MAX_CONTROL:
                raise ChannelFailure("control message over 4096 bytes")

            def pairs(items):
                keys = [k for k, _ in items]
                if len(keys) != len(set(keys)):
                    raise ValueError("duplicate key")
                return dict(items)
            try:
                obj = json.loads(msg.decode("utf-8"), object_pairs_hook=pairs)
            except ValueError:
                raise ChannelFailure("malformed control message")
            if not isinstance(obj, dict) or len(obj) != 1:
                raise ChannelFailure("control message is not a one-key JSON object")
            (key, value), = obj.items()
            return key, value


# ----------------------------------------------------------------------------- the device

class Device:
    def __init__(self, args):
        self.args = args
        self.deadline = Deadline(args.timeout)
        self.state_path = args.state
        self.state = None           # dict written to disk once accepted
        self.acked = False
        self.sock = None

    # -- helpers

    def sleep_backoff(self, backoff):
        left = self.deadline.left()
        if left <= 0:
            raise Exit(EXIT_TIMEOUT, "timed out")
        time.sleep(min(backoff, left))
        return min(backoff * 2, BACKOFF_MAX)

    def connect_and_admit(self, origin, room, signer):
        """Connect and be admitted as phone, retrying `mac offline` and unreachable relays."""
        backoff = BACKOFF_START
        while True:
            self.deadline.check()
            try:
                sock = RelaySocket(origin, room, self.deadline)
            except Unreachable as e:
                if not e.retryable:
                    emit("closed", reason=str(e), code=None)
                    raise Exit(EXIT_RELAY, str(e))
                diag(f"{e}; retrying")
                backoff = self.sleep_backoff(backoff)
                continue
            try:
                token = sock.admit_phone(signer)
                self.sock = sock
                return sock, token
            except Refused as r:
                sock.close()
                if r.reason == "mac offline":
                    diag("the relay says mac offline (the computer is not parked); retrying")
                    backoff = self.sleep_backoff(backoff)
                    continue
                if r.reason == "rate limited":
                    diag("the relay says rate limited; retrying")
                    backoff = self.sleep_backoff(max(backoff, 1.0))
                    continue
                emit("closed", reason=r.reason, code=1008)
                raise Exit(EXIT_RELAY, f"the relay refused the join: {r.reason}")
            except Closed as c:
                sock.close()
                if c.reason in FATAL_CLOSE_REASONS:
                    emit("closed", reason=c.reason, code=c.code)
                    raise Exit(EXIT_RELAY, f"the relay closed the connection: {c.code} {c.reason}")
                diag(f"closed during admission ({c.code} {c.reason}); retrying")
                backoff = self.sleep_backoff(backoff)
            except ChannelFailure as e:
                sock.close()
                raise Exit(EXIT_FAIL, f"admission failed: {e}")

    def established_steps(self, channel, token):
        """Status, ack, and the registration if it is still due. Ends with exit 0."""
        st = self.state
        channel.send_control({"status": {"v": 1, "name": st["name"], "roomSecret": st["roomSecret"],
                                          "registered": st["registered"]}})
        while True:
            key, value = channel.receive_control()
            if key == "ack":
                if value != "status":
                    raise ChannelFailure(f"unexpected ack {value!r}")
                break
            if key in ("pairing", "status", "registered"):
                diag(f"ignoring a {key!r} control message while waiting for the ack")
                continue
            diag(f"ignoring an unknown control message {key!r}")
        self.acked = True
        emit("acked")
        if not st["registered"]:
            if token is None:
                raise Exit(EXIT_REGISTER, "no registration token from this admission; a rejoin registers")
            ok, err = post_register(st["relay"], st["room"], token, verifier_of(join_key(self.secret)),
                                    self.deadline)
            if not ok:
                if err == "already registered":
                    remove_state(self.state_path)
                    raise Exit(EXIT_ALREADY_REGISTERED,
                               "the relay says the room is already registered: someone registered it "
                               "first; nothing kept, pair again")
                raise Exit(EXIT_REGISTER,
                           f"relay refused /register: {err}; the pairing is kept (registered: false), "
                           "the next connection registers")
            channel.send_control({"registered": True})
            st["registered"] = True
            write_state(self.state_path, st)
            emit("registered")
        self.sock.close()
        emit("done")
        raise Exit(EXIT_OK)

    # -- pair

    def pair(self, code):
        self.static = X25519PrivateKey.generate().private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
        rs, pid, origin = code["rs"], code["pid"], code["relay"]
        room = room_name(rs, pid)
        host = origin.split("://", 1)[1]
        diag(f"pairing with {code['name']!r} through the relay {host} (room {room[:8]}…)")
        self.secret = None
        shown = False
        while True:
            signer = join_key(self.secret) if self.secret is not None else None
            sock, token = self.connect_and_admit(origin, room, signer)
            try:
                channel = Channel(sock, self.static, rs, pid)
                h = channel.handshake()
                emit("handshake")
                if self.state is None:
                    sas = sas_code(h)
                    shown = True
                    emit("sas", code=sas)
                    diag(f"Type this code on {code['name']}: {sas[:3]} {sas[3:]}  "
                         "(if the computer is not asking, or says the code is wrong, cancel)")
                    while True:
                        key, value = channel.receive_control()
                        if key == "pairing":
                            break
                        diag(f"ignoring a {key!r} control message before the pairing answer")
                    if value == "rejected":
                        emit("rejected")
                        sock.close()
                        raise Exit(EXIT_REJECTED, "the computer rejected the pairing")
                    if value != "accepted":
                        raise ChannelFailure(f"bad pairing answer {value!r}")
                    shown = False
                    emit("accepted")
                    self.secret = os.urandom(32)
                    self.state = {
                        "v": 1,
                        "name": self.args.name,
                        "deviceStaticPrivateKey": b64std(self.static),
                        "deviceStaticPublicKey": b64std(X25519PrivateKey.from_private_bytes(self.static)
                                                        .public_key().public_bytes(
                                                            serialization.Encoding.Raw,
                                                            serialization.PublicFormat.Raw)),
                        "rs": base64.urlsafe_b64encode(rs).decode("ascii").rstrip("="),
                        "pid": pid,
                        "room": room,
                        "relay": origin,
                        "computerName": code["name"],
                        "session": code["session"],
                        "roomSecret": b64std(self.secret),
                        "registered": False,
                    }
                    write_state(self.state_path, self.state)
                self.established_steps(channel, token)
            except Closed as c:
                sock.close()
                emit("closed", reason=c.reason, code=c.code)
                if shown:
                    emit("void", reason=c.reason)
                    shown = False
                # Before the answer, a displaced device reconnects (companion.md: the question
                # is voided and the next handshake gets a new code); afterwards it stops.
                fatal = FATAL_CLOSE_REASONS - ({"displaced"} if self.state is None else set())
                if c.reason in fatal:
                    raise Exit(EXIT_RELAY, f"the relay closed the connection: {c.code} {c.reason}")
                diag("connection dropped; reconnecting for a fresh handshake")
                self.sleep_backoff(BACKOFF_START)
            except ChannelFailure as e:
                sock.close()
                diag(f"channel failed: {e}")
                if shown:
                    emit("void", reason=f"channel failed: {e}")
                    shown = False
                self.sleep_backoff(BACKOFF_START)

    # -- rejoin

    def rejoin(self):
        st = load_state(self.state_path)
        self.static, self.secret = st.pop("_static"), st.pop("_secret")
        rs = st.pop("_rs")
        self.state = st
        signer = join_key(self.secret)
        backoff = BACKOFF_START
        while True:
            sock, token = self.connect_and_admit(st["relay"], st["room"], signer)
            try:
                channel = Channel(sock, self.static, rs, st["pid"])
                channel.handshake()
                emit("handshake")
                self.established_steps(channel, token)
            except Closed as c:
                sock.close()
                emit("closed", reason=c.reason, code=c.code)
                if c.reason and c.code != 1006:
                    raise Exit(EXIT_RELAY, f"the relay closed the connection: {c.code} {c.reason}")
                diag("connection lost; reconnecting")
                backoff = self.sleep_backoff(backoff)
            except ChannelFailure as e:
                sock.close()
                raise Exit(EXIT_FAIL, f"channel failed: {e}")


# ----------------------------------------------------------------------------- main

def main(argv=None):
    parser = argparse.ArgumentParser(prog="companion_device.py",
                                     description="The device side of the herdr-remote relay road.")
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("pair", help="pair with a herdr://companion code")
    p.add_argument("code")
    p.add_argument("--name", required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    r = sub.add_parser("rejoin", help="reconnect a paired device")
    r.add_argument("--state", required=True)
    r.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    args = parser.parse_args(argv)
    if not args.timeout > 0:
        parser.error("--timeout must be positive")

    def on_term(signum, frame):
        raise Exit(128 + signum, f"interrupted by signal {signum}")
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    device = None
    try:
        if args.mode == "pair":
            if not valid_device_name(args.name):
                raise Exit(EXIT_USAGE, "the device name must be 1-64 printable characters")
            try:
                code = parse_code(args.code.strip())
            except CodeError as e:
                raise Exit(EXIT_USAGE, f"malformed code: {e}")
            device = Device(args)
            device.pair(code)
        else:
            device = Device(args)
            device.rejoin()
        return EXIT_OK
    except KeyboardInterrupt:
        exc = Exit(130, "interrupted")
    except Exit as e:
        exc = e
    if device is not None and device.sock is not None and exc.code != EXIT_OK:
        device.sock.close()
    if exc.code in (130, 128 + signal.SIGTERM, 128 + signal.SIGHUP) \
            and args.mode == "pair" and device is not None and device.state is not None \
            and not device.acked:
        # Cancelled before the ack: nothing is kept (companion.md, "Either side can cancel").
        remove_state(args.state)
    if exc.message:
        diag(exc.message)
    return exc.code


if __name__ == "__main__":
    sys.exit(main())
