import PeerGateListener
import RelayProtocol
import RelayServer
import RelayStorage
import WebClient

extension FuzzTargets {
    /// The relay's request gate and the web client's files (`herdr-relay serve --web-client`): the
    /// first byte picks whether the web client is on, the method (GET, HEAD, POST), whether the
    /// request is an upgrade and which `Origin` and `x-relay-room` it carries; the rest is the
    /// request target. Without the web client any `Origin` is 403 and the query is never read;
    /// with it, a foreign `Origin` is 403, a file answer is 200, 304 or 404, and a 200 is exactly
    /// a served file whose path `contentType(servablePath:)` accepts (never a dotfile, a test,
    /// anything outside the root); a room comes from the query only with the relay's own `Origin`.
    static let relayWebRequest = FuzzTarget(
        "relay-web-request", "RelayServer: the request gate and the web client's paths (--web-client)"
    ) { data in
        guard let first = data.first else { return }
        let webClientOn = first & 1 != 0
        let method = ["GET", "HEAD", "POST", "GET"][Int(first >> 1 & 3)]
        let upgrade = first & 8 != 0
        let origin: String? = [nil, relayWebOrigin, "https://evil.example", "null"][Int(first >> 4 & 3)]
        let headerRoom: String? = first & 0x40 != 0 ? relayWebRoom : first & 0x80 != 0 ? "not a room" : nil
        let target = "/" + String(decoding: data.dropFirst(), as: UTF8.self)
        var headers: [(name: String, value: String)] = [("Host", "relay.test")]
        if upgrade { headers += [("Upgrade", "websocket"), ("Connection", "Upgrade")] }
        if let origin { headers.append(("Origin", origin)) }
        if let headerRoom { headers.append((RelayLimits.roomHeader, headerRoom)) }
        let head = HTTPRequestHead(method: method, target: target, version: "HTTP/1.1", headers: headers)

        var configuration = RelayConfiguration(origin: relayWebOrigin, attestationRequired: false)
        if webClientOn { configuration.webClient = relayWebFiles }
        let core = RelayCore(configuration: configuration, store: MemoryRelayStore(), clock: ManualRelayClock())
        let verdict = core.gate(head)
        FuzzCheck.expect(verdict == core.gate(head), "the gate answered twice differently")
        if let origin, !webClientOn || origin != relayWebOrigin {
            guard case .refused(let refusal) = verdict, refusal.status == 403 else {
                return FuzzCheck.expect(false, "Origin \(origin) not refused (web client \(webClientOn))")
            }
            return
        }
        switch verdict {
        case .refused(let refusal):
            FuzzCheck.expect(refusal.status == 400, "a refusal other than bad room: \(refusal.status)")
        case .room(let room):
            FuzzCheck.expect(RoomName.isValid(room), "an invalid room admitted")
            if origin == nil {
                FuzzCheck.expect(room == headerRoom, "a room read from the query without an Origin")
            }
        case .webClientFile:
            FuzzCheck.expect(webClientOn && !upgrade && headerRoom == nil, "a file request that is not one")
            FuzzCheck.expect(method == "GET" || method == "HEAD", "a file request by \(method)")
            guard let files = configuration.webClient else { return }
            let response = files.response(to: head)
            FuzzCheck.expect([200, 404].contains(response.status), "a file answered \(response.status)")
            if response.status == 200 {
                let file = files.file(at: head.path)
                FuzzCheck.expect(file?.bytes == response.body, "the answer is not the file named")
                FuzzCheck.expect(
                    file.map { WebClientFiles.contentType(servablePath: $0.path) != nil } == true,
                    "a file outside the rules served")
                FuzzCheck.expect(
                    file.map { !$0.path.contains("test") && !$0.path.hasPrefix(".") } == true,
                    "a file that is never served was: \(file?.path ?? "")")
            }
        }
    }
}

private let relayWebOrigin = "https://relay.test"
private let relayWebRoom = String(repeating: "ab", count: 32)
/// The files the relay serves in the target: what a person installs, never what is beside them.
private let relayWebFiles: WebClientFiles = {
    do {
        return try WebClientFiles([
            ("index.html", Array("<!doctype html>".utf8)), ("js/app.js", Array("export {};".utf8)),
            ("js/noise.js", Array("// noise".utf8)),
            ("icons/icon.png", [0x89, 0x50]), ("app.webmanifest", Array("{}".utf8)),
        ])
    } catch {
        fatalError("the fuzz target's web client files: \(error)")
    }
}()
