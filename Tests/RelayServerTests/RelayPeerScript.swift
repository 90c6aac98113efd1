/// The independent WebSocket peer: PyPI `websockets` (sync client) and urllib, speaking relay
/// protocol v1 to a real `RelayServer`. Argument: one JSON object (scenario, port, room, origin,
/// roomSecret). Join signatures are made here with the `cryptography` package when it is
/// installed (independently of our Swift transcript code), else asked of the test.
let relayPeerScript = #"""
    import base64, json, os, struct, sys, time, urllib.error, urllib.request
    from websockets.sync.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    ARGS = json.loads(sys.argv[1])
    PORT = ARGS["port"]
    ROOM = ARGS["room"]
    ORIGIN = ARGS["origin"]
    URI = "ws://127.0.0.1:%d/" % PORT
    T = 10.0

    HAVE_CRYPTO = False
    if not os.environ.get("PEER_NO_CRYPTOGRAPHY"):
        try:
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF
            HAVE_CRYPTO = True
        except ImportError:
            pass


    def say(message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


    def obs(key, value):
        say({"obs": key, "value": value if isinstance(value, str) else json.dumps(value)})


    def ask(request):
        say({"ask": request})
        line = sys.stdin.readline()
        if not line:
            raise SystemExit("the test went away")
        return json.loads(line)


    def b64(data):
        return base64.b64encode(data).decode()


    def unb64(text):
        return base64.b64decode(text, validate=True)


    def canonical(domain, fields):
        out = struct.pack(">I", len(domain)) + domain
        for field in fields:
            out += struct.pack(">I", len(field)) + field
        return out


    class JoinKey:
        """The room's join key from roomSecret: HKDF-SHA256(empty salt, info relay-auth-ed25519) seed."""

        def __init__(self, secret):
            self.secret = secret
            if HAVE_CRYPTO:
                seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"relay-auth-ed25519").derive(secret)
                self.key = Ed25519PrivateKey.from_private_bytes(seed)

        def verifier(self):
            if HAVE_CRYPTO:
                return self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            return unb64(ask({"verifier": b64(self.secret)})["verifier"])

        def sign_join(self, role, nonce, room, origin):
            if HAVE_CRYPTO:
                role_byte = {"mac": b"\x01", "phone": b"\x02"}[role]
                transcript = canonical(b"iterm2-relay-join", [b"\x01", role_byte, nonce, room.encode(), origin.encode()])
                return self.key.sign(transcript)
            answer = ask({"signJoin": b64(self.secret), "role": role, "nonce": b64(nonce), "room": room, "origin": origin})
            return unb64(answer["signature"])


    def ws_open(room=None, headers=None, **kwargs):
        if headers is None:
            headers = [("x-relay-room", room or ROOM)]
        return connect(URI, additional_headers=headers, user_agent_header="iTerm2Companion", max_size=None,
                       open_timeout=T, close_timeout=3, ping_interval=None, **kwargs)


    def recv_json(ws):
        message = ws.recv(timeout=T)
        if not isinstance(message, str):
            raise AssertionError("expected a text frame, got %d bytes" % len(message))
        return json.loads(message)


    def recv_bytes(ws):
        message = ws.recv(timeout=T)
        if not isinstance(message, bytes):
            raise AssertionError("expected a binary frame, got text %r" % message)
        return message


    def frames_then_close(ws):
        """Reads until the relay closes: how many frames came first, and 'code reason'."""
        count = 0
        try:
            while True:
                ws.recv(timeout=T)
                count += 1
        except ConnectionClosed as error:
            return "%d frames, %s" % (count, "%d %s" % (error.rcvd.code, error.rcvd.reason) if error.rcvd else "no close frame")
        except TimeoutError:
            return "still open"


    def close_of(ws):
        """Reads until the relay closes; 'code reason' of its close frame."""
        try:
            while True:
                ws.recv(timeout=T)
        except ConnectionClosed as error:
            return "%d %s" % (error.rcvd.code, error.rcvd.reason) if error.rcvd else "no close frame"
        except TimeoutError:
            return "still open"


    def hello_text(role, non_displacing=False):
        hello = {"v": 1, "role": role}
        if non_displacing:
            hello["nonDisplacing"] = True
        return json.dumps(hello)


    def admit(role, room=None, proof=None, key=None, non_displacing=False, sign_room=None, sign_origin=None):
        """Hello, Challenge (checked uniform), Proof; returns the socket and the Result."""
        room = room or ROOM
        ws = ws_open(room)
        ws.send(hello_text(role, non_displacing))
        challenge = recv_json(ws)
        nonce = unb64(challenge["nonce"])
        if list(challenge) != ["nonce"] or len(nonce) != 32:
            raise AssertionError("not a uniform challenge: %r" % challenge)
        if proof is None:
            proof = {"sig": b64(key.sign_join(role, nonce, sign_room or room, sign_origin or ORIGIN))} if key else {}
        ws.send(json.dumps(proof))
        return ws, recv_json(ws)


    def result_text(result):
        if result.get("ok") is True:
            token = result.get("registrationToken")
            return "ok token=%d" % len(unb64(token)) if token else "ok"
        return "refused " + str(result.get("error"))


    def answer_text(status, body, content_type):
        """'status ok|error' for a JSON answer, 'status text (plain)' for a plain-text one."""
        if (content_type or "").startswith("application/json"):
            answer = json.loads(body)
            return "%d %s" % (status, "ok" if answer.get("ok") is True else answer.get("error"))
        return "%d %s (plain)" % (status, body.decode())


    def request(method, path, body=None, room=None, extra=(), headers=None):
        data = None if body is None else json.dumps(body).encode()
        if data is None and method == "POST":
            data = b""
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (PORT, path), data=data, method=method)
        if headers is None:
            headers = [("x-relay-room", room or ROOM)]
        for name, value in list(headers) + [("User-Agent", "iTerm2Companion")] + list(extra):
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=T) as response:
                status, body, kind = response.status, response.read(), response.headers.get("Content-Type")
        except urllib.error.HTTPError as error:
            status, body, kind = error.code, error.read(), error.headers.get("Content-Type")
        return answer_text(status, body, kind)


    def post(path, body=None, room=None, extra=()):
        return request("POST", path, body, room, extra)


    def upgrade_status(**kwargs):
        try:
            ws = ws_open(**kwargs)
        except InvalidStatus as error:
            response = error.response
            return answer_text(response.status_code, response.body or b"", response.headers.get("Content-Type"))
        ws.close()
        return "101"


    def register(token, key):
        return post("/register", {"registrationToken": token, "verifier": b64(key.verifier())})


    def establish(key):
        """Mac parks, phone joins, the phone registers V; both left connected."""
        mac, result = admit("mac")
        phone, result = admit("phone")
        obs("establish.register", register(result["registrationToken"], key))
        return mac, phone


    # Scenarios -----------------------------------------------------------------------------------


    def scenario_splice():
        mac, result = admit("mac")
        obs("mac.result", result_text(result))
        phone, result = admit("phone")
        obs("phone.result", result_text(result))
        mac.send(b"to phone")
        obs("phone.got", recv_bytes(phone).decode())
        phone.send(b"to mac")
        obs("mac.got", recv_bytes(mac).decode())
        big = os.urandom(256 * 1024)
        mac.send(big)
        obs("phone.256KiB", recv_bytes(phone) == big)
        phone.send(big[::-1])
        obs("mac.256KiB", recv_bytes(mac) == big[::-1])
        mac.send([b"frag-one|", b"frag-two|", b"frag-three"])
        obs("phone.fragmented", recv_bytes(phone).decode())
        phone.send([b"x" * 100000, b"y" * 100000, b"z" * 62144])
        obs("mac.fragmented256KiB", len(recv_bytes(mac)))
        # Text is spliced too, as text: whole, fragmented, and with characters split across frames.
        mac.send("text after admission, é€𝄞")
        obs("phone.text", phone.recv(timeout=T))
        phone.send(["fré", "€|", "𝄞"])
        obs("mac.fragmentedText", mac.recv(timeout=T))
        big_text = "€" * 87381  # 262143 bytes
        mac.send(big_text)
        obs("phone.bigText", phone.recv(timeout=T) == big_text)
        obs("mac.pong", mac.ping().wait(T))
        obs("phone.pong", phone.ping().wait(T))
        try:
            phone.send("€" * 87382)  # 262146 bytes: over the limit, as text
        except ConnectionClosed:
            pass
        obs("phone.oversizeText", close_of(phone))
        obs("mac.afterPhoneClosedByRelay", close_of(mac))
        # Either side leaving takes the other: the phone closing, then the Mac closing.
        mac, result = admit("mac")
        phone, result = admit("phone")
        phone.close()
        obs("mac.afterPhoneLeft", close_of(mac))
        mac, result = admit("mac")
        phone, result = admit("phone")
        obs("phone2.result", result_text(result))
        # A reconnecting phone displaces the old one; the Mac stays.
        phone3, result = admit("phone")
        obs("phone2.displaced", close_of(phone))
        obs("mac.afterDisplacement", mac.ping().wait(T))
        phone3.send(b"still spliced")
        obs("mac.fromPhone3", recv_bytes(mac).decode())
        mac.close()
        obs("phone3.afterMacLeft", close_of(phone3))


    def spliced_frames_total():
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % PORT, timeout=T) as response:
            for line in response.read().decode().splitlines():
                if line.startswith("relay_frames_spliced_total "):
                    return int(line.split()[1])
        raise AssertionError("no relay_frames_spliced_total in /metrics")


    def scenario_pongmidframe():
        """The phone pings while a frame from the Mac is half-way through the relay to it: the
        relay's pong must wait for the frame's end (nothing goes inside a frame)."""
        mac, result = admit("mac")
        phone, result = admit("phone")
        payload = bytes((index * 7) % 251 for index in range(60000))
        mask = os.urandom(4)
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        before = spliced_frames_total()
        # A binary frame's header (masked, 16-bit length) and its first 1000 bytes, written under
        # the library: the rest comes only once the relay has taken the ping.
        mac.socket.sendall(bytes([0x82, 0x80 | 126]) + struct.pack(">H", len(payload)) + mask + masked[:1000])
        # The relay's loop answers /metrics between events: once it counts the frame, the frame's
        # splice to the phone has begun.
        for _ in range(200):
            if spliced_frames_total() > before:
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the relay never started the frame")
        pong = phone.ping()
        # The phone's frame after its ping reaching the Mac: the relay has handled the ping.
        phone.send(b"after the ping")
        obs("mac.afterPing", recv_bytes(mac).decode())
        mac.socket.sendall(masked[1000:])
        obs("phone.frameWhole", recv_bytes(phone) == payload)
        obs("phone.pong", pong.wait(T))
        mac.send(b"and the stream goes on")
        obs("phone.next", recv_bytes(phone).decode())


    def padded_hello(size):
        head = '{"v":1,"role":"mac","pad":"'
        return head + "x" * (size - len(head) - 2) + '"}'


    def scenario_preauth():
        ws = ws_open()
        ws.send(padded_hello(8192))
        obs("hello8192", "nonce" in recv_json(ws))
        ws.send("{" + " " * 8190 + "}")
        obs("proof8192", result_text(recv_json(ws)))
        ws.send(os.urandom(9000))
        obs("admitted9000.pong", ws.ping().wait(T))
        big_hello = ws_open()
        big_hello.send(padded_hello(8193))
        obs("hello8193", close_of(big_hello))
        big_proof = ws_open()
        big_proof.send(hello_text("phone"))
        recv_json(big_proof)
        big_proof.send("{" + " " * 8191 + "}")
        obs("proof8193", close_of(big_proof))
        big_binary = ws_open()
        big_binary.send(os.urandom(8193))
        obs("binary8193", close_of(big_binary))
        early = ws_open()
        early.send(b"early")
        obs("binaryEarly", frames_then_close(early))


    def scenario_displace():
        mac1, result = admit("mac")
        mac2, result = admit("mac")
        obs("mac2.result", result_text(result))
        obs("mac1", close_of(mac1))
        mac3, result = admit("mac", non_displacing=True)
        obs("mac3.result", result_text(result))
        obs("mac3", close_of(mac3))
        phone, result = admit("phone")
        mac4, result = admit("mac")
        obs("mac2.byMac4", close_of(mac2))
        mac4.send(b"spliced to the newest mac")
        obs("phone.got", recv_bytes(phone).decode())


    def scenario_badhello():
        for name, text in [("notJson", "not json"), ("v2", '{"v":2,"role":"mac"}'), ("vTrue", '{"v":true,"role":"mac"}'),
                           ("tablet", '{"v":1,"role":"tablet"}'), ("array", "[]"), ("number", "5")]:
            ws = ws_open()
            ws.send(text)
            obs(name, frames_then_close(ws))
        # nonDisplacing counts only when exactly true; anything else is an ordinary Hello.
        ws = ws_open()
        ws.send('{"v":1,"role":"mac","nonDisplacing":"yes"}')
        obs("nonDisplacingYes", "nonce" in recv_json(ws))


    def scenario_openproof():
        """Open mode admits a pairing room's sockets whatever their Proof carries."""
        mac, result = admit("mac", proof={"ticket": "AAAA"})
        obs("mac.ticket", result_text(result))
        phone, result = admit("phone", proof={"sig": b64(bytes(64))})
        obs("phone.sig", result_text(result))
        phone.send("hello over a signature nobody checked")
        obs("mac.got", mac.recv(timeout=T))


    def scenario_gate():
        """Upstream's order: Origin (403), then the room (400), then method and path (501)."""
        good = [("x-relay-room", ROOM)]
        bad = [("x-relay-room", "nope")]
        obs("getRoot.badRoom", request("GET", "/", headers=bad))
        obs("getRoot.noRoom", request("GET", "/", headers=[]))
        obs("getRoot.goodRoom", request("GET", "/", headers=good))
        obs("getRegister.goodRoom", request("GET", "/register", headers=good))
        obs("postRoot.origin", request("POST", "/", headers=bad, extra=[("Origin", "https://evil.example")]))
        obs("register.noJson", request("POST", "/register", headers=good))
        obs("healthz.noRoom", request("GET", "/healthz", headers=[]))


    def scenario_established():
        key = JoinKey(unb64(ARGS["roomSecret"]))
        obs("signer", "python" if HAVE_CRYPTO else "swift")
        obs("verifier", b64(key.verifier()))
        mac, phone = establish(key)
        mac_again, result = admit("mac", key=key)
        obs("signedMac.result", result_text(result))
        obs("mac", close_of(mac))
        phone_again, result = admit("phone", key=key)
        obs("signedPhone.result", result_text(result))
        obs("phone", close_of(phone))
        obs("register2", register(result["registrationToken"], key))
        attempts = [("unsigned", {}), ("zeroSig", {"sig": b64(bytes(64))})]
        for name, proof in attempts:
            ws, result = admit("phone", proof=proof)
            obs(name + ".result", result_text(result))
            obs(name, close_of(ws))
        for name, options in [("otherRoom", {"sign_room": "0" * 64}), ("otherOrigin", {"sign_origin": "https://evil.example"})]:
            ws, result = admit("phone", key=key, **options)
            obs(name + ".result", result_text(result))
            obs(name, close_of(ws))
        obs("phone.stillThere", phone_again.ping().wait(T))
        mac_again.send(b"signed splice")
        obs("phone.got", recv_bytes(phone_again).decode())


    def scenario_fifth():
        sockets = [ws_open() for _ in range(5)]
        obs("first", close_of(sockets[0]))
        for index, ws in enumerate(sockets[1:], 2):
            ws.send(hello_text("mac"))
            obs("socket%d.challenge" % index, "nonce" in recv_json(ws))


    def scenario_oversize():
        mac, result = admit("mac")
        phone, result = admit("phone")
        try:
            mac.send(os.urandom(256 * 1024 + 1))
        except ConnectionClosed:
            pass
        obs("mac", close_of(mac))
        obs("phone", close_of(phone))


    def scenario_origin():
        obs("originUpgrade", upgrade_status(origin="https://evil.example"))
        obs("goodUpgrade", upgrade_status())
        obs("originPost", post("/attest/challenge", extra=[("Origin", "https://evil.example")]))
        obs("badRoom.63", upgrade_status(headers=[("x-relay-room", "a" * 63)]))
        obs("badRoom.upper", upgrade_status(headers=[("x-relay-room", "A" * 64)]))
        obs("badRoom.two", upgrade_status(headers=[("x-relay-room", ROOM), ("x-relay-room", ROOM)]))
        obs("badRoom.none", upgrade_status(headers=[]))
        obs("badRoom.post", post("/attest/challenge", room="a" * 63))
        obs("attest", post("/attest", {"challenge": b64(bytes(32)), "attestationObject": "AAAA"}))


    def scenario_quota():
        key = JoinKey(unb64(ARGS["roomSecret"]))
        establish(key)
        mac, result = admit("mac", key=key)
        phone, result = admit("phone", key=key)
        mac.send(os.urandom(60000))
        obs("phone.got", len(recv_bytes(phone)))
        phone.send(os.urandom(40000))
        obs("mac.got", len(recv_bytes(mac)))
        phone.send(b"x")
        obs("phone", close_of(phone))
        obs("mac", close_of(mac))
        # Upstream admits into a room over its quota, then closes it at the first frame.
        again, result = admit("mac", key=key)
        obs("again.result", result_text(result))
        again.send(b"y")
        obs("again", close_of(again))


    def scenario_shutdown():
        mac, result = admit("mac")
        phone, result = admit("phone")
        pending = ws_open()
        ask({"shutdown": True})
        obs("mac", close_of(mac))
        obs("phone", close_of(phone))
        obs("pending", close_of(pending))


    def scenario_establish():
        key = JoinKey(unb64(ARGS["roomSecret"]))
        mac, phone = establish(key)
        mac.send(b"before restart")
        obs("phone.got", recv_bytes(phone).decode())


    def scenario_rejoin():
        key = JoinKey(unb64(ARGS["roomSecret"]))
        ws, result = admit("mac")
        obs("unsignedMac.result", result_text(result))
        obs("unsignedMac", close_of(ws))
        mac, result = admit("mac", key=key)
        obs("mac.result", result_text(result))
        phone, result = admit("phone", key=key)
        obs("phone.result", result_text(result))
        ws, result = admit("phone")
        obs("unsignedPhone.result", result_text(result))
        obs("unsignedPhone", close_of(ws))
        mac.send(b"after restart")
        obs("phone.got", recv_bytes(phone).decode())
        phone.send(b"and back")
        obs("mac.got", recv_bytes(mac).decode())
        obs("register", post("/register", {"verifier": b64(key.verifier())}))


    globals()["scenario_" + ARGS["scenario"]]()
    """#
