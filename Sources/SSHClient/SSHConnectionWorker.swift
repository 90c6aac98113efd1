import CLibSSH2
import Glibc
import HerdrCrypto

/// The part of a connection that lives on its thread: it owns the socket and the libssh2
/// handles, walks the phases (TCP, key exchange, host key decision, authentication, channel)
/// and then pumps data until the command ends or the connection breaks.
final class SSHConnectionWorker {
    /// Algorithms offered to the server. CBC modes, SHA-1 MACs and RC4 are left out on purpose.
    static let kexAlgorithms =
        "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group16-sha512,diffie-hellman-group14-sha256"
    static let hostKeyAlgorithms = [
        "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa",
    ]
    static let ciphers = "aes128-ctr,aes256-ctr,aes192-ctr"
    static let macs = "hmac-sha2-256,hmac-sha2-512"
    static let packetSize: UInt32 = 32768
    static let readBufferSize = 64 * 1024

    private let configuration: SSHConnectionConfiguration
    private let control: ConnectionControl
    private let emit: (SSHEvent) -> Void
    private let callbacks: SSHCallbackContext
    private var socket: TCPSocket?
    private var session: SSHSessionHandle?
    private var channel: SSHChannelHandle?
    private var commandStartedAt: Double?
    private var commandEndedAt: Double?

    /// From the command's start to the remote EOF (or the connection's end), if it started.
    var commandRunTime: Duration? {
        guard let start = commandStartedAt else { return nil }
        return .milliseconds(Int(((commandEndedAt ?? Monotonic.now) - start) * 1000))
    }

    init(configuration: SSHConnectionConfiguration, control: ConnectionControl, emit: @escaping (SSHEvent) -> Void) {
        self.configuration = configuration
        self.control = control
        self.emit = emit
        self.callbacks = SSHCallbackContext(
            credentials: configuration.credentials,
            target: "\(configuration.credentials.username)@\(configuration.host)")
    }

    private var endpoint: String { "\(configuration.host) port \(configuration.port)" }

    /// Runs every phase and returns how the connection ended. Releases all handles before returning.
    func run() -> SSHTermination {
        let termination: SSHTermination
        do {
            termination = try runPhases()
        } catch {
            switch error {
            case .cancelled: termination = .cancelled
            case .failure(let failure): termination = .failed(failure)
            }
        }
        // A connection lost (a quiet path, a dead socket, an address gone) gets no goodbye: on
        // such a path the channel's close and the disconnect would each wait out their time limit
        // (1 s) before the reattach could start.
        if case .failed(let failure) = termination, failure.kind == .connectionLost { socket?.shutDownBothWays() }
        shutDown()
        return termination
    }

    private func runPhases() throws(SSHConnectionStop) -> SSHTermination {
        let socket = try TCPSocket.connect(
            host: configuration.host, port: configuration.port, timeout: configuration.connectTimeout,
            wake: control.wake, isCancelled: { control.isCancelled }, accept: configuration.peerAddressCheck)
        self.socket = socket
        emit(.connected(peerAddress: socket.peerAddress))

        let deadline = Monotonic.now + configuration.handshakeTimeout.seconds
        let session = try makeSession()
        self.session = session
        try call("key exchange", deadline: deadline, failure: .handshake) {
            libssh2_session_handshake(session.raw, socket.fd)
        }

        guard let hostKey = session.hostKey() else {
            throw .failure(SSHFailure(.handshake, "\(endpoint) presented no host key"))
        }
        emit(.hostKey(hostKey))
        switch configuration.hostKeyPolicy {
        case .probe:
            return .probed(hostKey)
        case .accept(let keys):
            guard keys.contains(hostKey.blob) else { return .hostKeyRejected(hostKey) }
        case .acceptFingerprints(let fingerprints):
            guard fingerprints.contains(hostKey.fingerprintSHA256) else { return .hostKeyRejected(hostKey) }
        }

        let method = try authenticate(session: session, deadline: deadline)
        emit(.authenticated(method: method))
        try openSession(session: session, deadline: deadline)
        commandStartedAt = Monotonic.now
        emit(.sessionStarted)
        return try pump(session: session)
    }

    private func makeSession() throws(SSHConnectionStop) -> SSHSessionHandle {
        do {
            let session = try SSHSessionHandle(abstract: Unmanaged.passUnretained(callbacks).toOpaque())
            libssh2_session_callback_set(
                session.raw, LIBSSH2_CALLBACK_RECV, unsafeBitCast(countingReceive, to: UnsafeMutableRawPointer.self))
            try session.setMethodPreference(LIBSSH2_METHOD_KEX, Self.kexAlgorithms)
            let preferred = configuration.preferredHostKeyAlgorithms.filter { Self.hostKeyAlgorithms.contains($0) }
            let hostKeys = preferred + Self.hostKeyAlgorithms.filter { !preferred.contains($0) }
            try session.setMethodPreference(LIBSSH2_METHOD_HOSTKEY, hostKeys.joined(separator: ","))
            for direction in [LIBSSH2_METHOD_CRYPT_CS, LIBSSH2_METHOD_CRYPT_SC] {
                try session.setMethodPreference(direction, Self.ciphers)
            }
            for direction in [LIBSSH2_METHOD_MAC_CS, LIBSSH2_METHOD_MAC_SC] {
                try session.setMethodPreference(direction, Self.macs)
            }
            return session
        } catch {
            throw .failure(error)
        }
    }

    // MARK: Authentication

    private func authenticate(session: SSHSessionHandle, deadline: Double) throws(SSHConnectionStop) -> String {
        let credentials = configuration.credentials
        let user = credentials.username
        var offered: String?
        while offered == nil {
            if let list = libssh2_userauth_list(session.raw, user, UInt32(user.utf8.count)) {
                offered = String(cString: list)
            } else if libssh2_userauth_authenticated(session.raw) == 1 {
                return "none"
            } else if session.lastErrorCode == LIBSSH2_ERROR_EAGAIN {
                try waitForSocket(session: session, deadline: deadline, phase: "authentication")
            } else {
                throw .failure(phaseFailure(.authentication, "authentication", session: session))
            }
        }
        let methods = Set(offered!.split(separator: ",").map(String.init))
        var tried: [String] = []

        if methods.contains("publickey"), let key = credentials.privateKey {
            tried.append("publickey")
            if try attemptPublicKey(key, session: session, deadline: deadline) { return "publickey" }
        }
        if methods.contains("publickey") {
            for path in credentials.identityFiles {
                let (accepted, note) = try attemptIdentityFile(path, session: session, deadline: deadline)
                tried.append(note)
                if accepted { return "publickey" }
            }
            if let socketPath = credentials.agentSocketPath {
                let (accepted, note) = try attemptAgent(socketPath: socketPath, session: session, deadline: deadline)
                tried.append(note)
                if accepted { return "publickey" }
            }
        }
        let canAskPassword = credentials.password != nil || credentials.responder != nil
        if methods.contains("password"), canAskPassword {
            tried.append("password")
            if try attemptPassword(session: session, deadline: deadline) { return "password" }
        }
        if methods.contains("keyboard-interactive"), canAskPassword {
            tried.append("keyboard-interactive")
            for _ in 0..<3 {
                callbacks.beginKeyboardInteractive()
                if try attempt(
                    "keyboard-interactive", session: session, deadline: deadline,
                    {
                        libssh2_userauth_keyboard_interactive_ex(
                            session.raw, user, UInt32(user.utf8.count), keyboardInteractiveResponse)
                    })
                {
                    return "keyboard-interactive"
                }
                if callbacks.responderGaveUp || credentials.responder == nil { break }
            }
        }
        let triedText = tried.isEmpty ? "nothing it accepts (no password stored)" : tried.joined(separator: ", ")
        throw .failure(
            SSHFailure(
                .authentication,
                "Permission denied for \(user) at \(endpoint): the server accepts \(offered!.isEmpty ? "no methods" : offered!); tried \(triedText)"
            ))
    }

    private func attemptPublicKey(_ key: Ed25519PrivateKey, session: SSHSessionHandle, deadline: Double)
        throws(SSHConnectionStop) -> Bool
    {
        let user = configuration.credentials.username
        let blob = SSHKeyBlob.ed25519(key.publicKey.raw)
        var abstract: UnsafeMutableRawPointer? = Unmanaged.passUnretained(callbacks).toOpaque()
        return try attempt("publickey", session: session, deadline: deadline) {
            libssh2_userauth_publickey(session.raw, user, blob, blob.count, ed25519Sign, &abstract)
        }
    }

    private func attemptPassword(session: SSHSessionHandle, deadline: Double) throws(SSHConnectionStop) -> Bool {
        let credentials = configuration.credentials
        let user = credentials.username
        var candidates: [String] = []
        if let stored = credentials.password { candidates.append(stored) }
        var asked = 0
        while true {
            let password: String
            if !candidates.isEmpty {
                password = candidates.removeFirst()
            } else if let responder = credentials.responder, asked < 3 {
                asked += 1
                let challenge = KeyboardInteractiveChallenge(
                    name: "password", instruction: "",
                    prompts: [.init(text: "\(user)@\(configuration.host)'s password: ", echo: false)])
                guard let answer = responder(challenge)?.first else { return false }
                password = answer
            } else {
                return false
            }
            if try attempt(
                "password", session: session, deadline: deadline,
                {
                    libssh2_userauth_password_ex(
                        session.raw, user, UInt32(user.utf8.count), password, UInt32(password.utf8.count), nil)
                })
            {
                return true
            }
        }
    }

    /// Tries a key file: its passphrase is asked through the responder (up to three times) when
    /// the file is encrypted. Returns whether the server took it and a phrase for the summary.
    private func attemptIdentityFile(_ path: String, session: SSHSessionHandle, deadline: Double)
        throws(SSHConnectionStop) -> (accepted: Bool, note: String)
    {
        let file: PrivateKeyFile
        do {
            file = try PrivateKeyFile.read(path)
        } catch {
            return (false, "identity \(path) (\(error.reason))")
        }
        let user = configuration.credentials.username
        var asked = 0
        while true {
            var passphrase: String?
            if file.isEncrypted {
                guard let responder = configuration.credentials.responder else {
                    return (false, "identity \(path) (encrypted, and there is no terminal to ask its passphrase)")
                }
                guard asked < 3 else { return (false, "identity \(path) (wrong passphrase 3 times)") }
                asked += 1
                let challenge = KeyboardInteractiveChallenge(
                    name: "passphrase", instruction: "",
                    prompts: [.init(text: "Enter passphrase for key '\(path)': ", echo: false)])
                guard let answer = responder(challenge)?.first, !answer.isEmpty else {
                    return (false, "identity \(path) (no passphrase given)")
                }
                passphrase = answer
            }
            let code = try completion(session: session, deadline: deadline) {
                file.contents.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { key in
                        libssh2_userauth_publickey_frommemory(
                            session.raw, user, user.utf8.count, nil, 0, key.baseAddress, key.count, passphrase)
                    }
                }
            }
            switch code {
            case 0:
                return (true, "identity \(path)")
            case LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
                return (false, "identity \(path) (not accepted\(Self.rsaNote(file)))")
            case _ where Self.transportFailures.contains(code):
                throw .failure(phaseFailure(.authentication, "publickey authentication", session: session))
            case _ where file.isEncrypted:
                continue  // libssh2 could not unpack it: a wrong passphrase, so ask again
            default:
                return (false, "identity \(path) (not a private key this client can read: \(session.lastErrorMessage))")
            }
        }
    }

    /// Failures of the connection itself, as opposed to a key that could not be loaded or signed.
    static let transportFailures: Set<Int32> = [
        LIBSSH2_ERROR_SOCKET_SEND, LIBSSH2_ERROR_SOCKET_RECV, LIBSSH2_ERROR_SOCKET_DISCONNECT,
        LIBSSH2_ERROR_SOCKET_TIMEOUT, LIBSSH2_ERROR_TIMEOUT, LIBSSH2_ERROR_BAD_SOCKET, LIBSSH2_ERROR_INVALID_MAC,
        LIBSSH2_ERROR_ALLOC,
    ]

    /// libssh2 1.10 signs with an RSA key as `ssh-rsa` (SHA-1), which OpenSSH 8.8 and later refuse
    /// by default: worth saying when such a key is refused.
    static func rsaNote(_ file: PrivateKeyFile) -> String {
        file.keyType == "ssh-rsa" ? Self.rsaCaveat : ""
    }

    static func rsaNote(_ blob: [UInt8]) -> String {
        SSHWireReader.firstString(of: blob) == "ssh-rsa" ? Self.rsaCaveat : ""
    }

    static let rsaCaveat =
        "; this client signs with RSA keys only as ssh-rsa (SHA-1), which OpenSSH 8.8 and later refuse: use an Ed25519 or ECDSA key"

    /// Tries each key ssh-agent holds (but the device key, already tried). An agent that cannot be
    /// reached is a phrase in the summary, not a failure: the password may still work.
    private func attemptAgent(socketPath: String, session: SSHSessionHandle, deadline: Double)
        throws(SSHConnectionStop) -> (accepted: Bool, note: String)
    {
        let agent: SSHAgentHandle
        let identities: [SSHAgentHandle.Identity]
        do {
            agent = try SSHAgentHandle(session: session, socketPath: socketPath)
            identities = try agent.identities(session: session)
        } catch {
            return (false, error.message)
        }
        let deviceBlob = configuration.credentials.privateKey.map { SSHKeyBlob.ed25519($0.publicKey.raw) }
        let candidates = identities.filter { $0.blob != deviceBlob }
        guard !candidates.isEmpty else { return (false, "ssh-agent (it holds no other key)") }
        let user = configuration.credentials.username
        var caveat = ""
        for identity in candidates {
            let code = try completion(session: session, deadline: deadline) {
                libssh2_agent_userauth(agent.raw, user, identity.raw)
            }
            if code == 0 { return (true, "ssh-agent key \(identity.comment)") }
            guard Self.refusals.contains(code) else {
                throw .failure(phaseFailure(.authentication, "ssh-agent authentication", session: session))
            }
            if caveat.isEmpty { caveat = Self.rsaNote(identity.blob) }
        }
        let count = candidates.count
        return (false, "ssh-agent (\(count) key\(count == 1 ? "" : "s"), none accepted\(caveat))")
    }

    /// Runs one authentication call to completion; false when the server said no.
    private func attempt(_ method: String, session: SSHSessionHandle, deadline: Double, _ call: () -> Int32)
        throws(SSHConnectionStop) -> Bool
    {
        let code = try completion(session: session, deadline: deadline, call)
        guard code == 0 || Self.refusals.contains(code) else {
            throw .failure(phaseFailure(.authentication, "\(method) authentication", session: session))
        }
        return code == 0
    }

    /// The server said no (or the agent would not sign): the connection stays usable for the next method.
    static let refusals: Set<Int32> = [
        LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED, LIBSSH2_ERROR_METHOD_NOT_SUPPORTED,
        LIBSSH2_ERROR_AGENT_PROTOCOL,
    ]

    /// Runs one authentication call until it stops asking to wait; 0 or the libssh2 error code.
    private func completion(session: SSHSessionHandle, deadline: Double, _ call: () -> Int32)
        throws(SSHConnectionStop) -> Int32
    {
        while true {
            let rc = call()
            switch LibSSH2Status(rc) {
            case .done: return 0
            case .wouldBlock: try waitForSocket(session: session, deadline: deadline, phase: "authentication")
            case .error(let code): return code
            }
        }
    }

    // MARK: Channel

    private func openSession(session: SSHSessionHandle, deadline: Double) throws(SSHConnectionStop) {
        var raw: OpaquePointer?
        while raw == nil {
            raw = libssh2_channel_open_ex(
                session.raw, "session", 7, UInt32(configuration.receiveWindow), Self.packetSize, nil, 0)
            if raw == nil {
                guard session.lastErrorCode == LIBSSH2_ERROR_EAGAIN else {
                    throw .failure(phaseFailure(.channel, "Opening a session channel", session: session))
                }
                try waitForSocket(session: session, deadline: deadline, phase: "opening the session channel")
            }
        }
        let channel = SSHChannelHandle(raw: raw!)
        self.channel = channel
        if let pty = configuration.pty {
            let modes = TerminalMode.encode(pty.modes)
            try call("The PTY request", deadline: deadline, failure: .channel) {
                modes.withUnsafeBufferPointer { modeBytes in
                    modeBytes.withMemoryRebound(to: CChar.self) { modeChars in
                        libssh2_channel_request_pty_ex(
                            channel.raw, pty.term, UInt32(pty.term.utf8.count), modeChars.baseAddress,
                            UInt32(modes.count),
                            Int32(pty.cols), Int32(pty.rows), 0, 0)
                    }
                }
            }
        }
        let command = configuration.command
        try call("Running the command", deadline: deadline, failure: .channel) {
            libssh2_channel_process_startup(channel.raw, "exec", 4, command, UInt32(command.utf8.count))
        }
    }

    // MARK: Data pump

    private func pump(session: SSHSessionHandle) throws(SSHConnectionStop) -> SSHTermination {
        guard let channel, let socket else { throw .failure(SSHFailure(.internalError, "pump without a channel")) }
        let pump = ChannelPump(
            session: session, channel: channel, socket: socket, control: control, callbacks: callbacks,
            configuration: configuration, endpoint: endpoint, emit: emit)
        try pump.run()
        commandEndedAt = Monotonic.now
        return try finishChannel(channel, session: session)
    }

    /// The remote sent EOF: close our side, wait for the close, and collect the exit status.
    private func finishChannel(_ channel: SSHChannelHandle, session: SSHSessionHandle) throws(SSHConnectionStop)
        -> SSHTermination
    {
        let deadline = Monotonic.now + 5
        do {
            try call("Closing the channel", deadline: deadline, failure: .connectionLost) {
                libssh2_channel_close(channel.raw)
            }
            try call("Closing the channel", deadline: deadline, failure: .connectionLost) {
                libssh2_channel_wait_closed(channel.raw)
            }
        } catch {
            if case .cancelled = error { throw .cancelled }
            // Otherwise the exit status usually arrived already; report what we have.
        }
        var signalName: UnsafeMutablePointer<CChar>?
        var signalLength = 0
        _ = libssh2_channel_get_exit_signal(channel.raw, &signalName, &signalLength, nil, nil, nil, nil)
        var signal: String?
        if let signalName {
            signal = String(decoding: UnsafeRawBufferPointer(start: signalName, count: signalLength), as: UTF8.self)
            libssh2_free(session.raw, signalName)
        }
        let status = Int(libssh2_channel_get_exit_status(channel.raw))
        // libssh2 reports 0 both for "exit 0" and for "no exit-status"; a signal explains the latter.
        return .exited(status: signal == nil ? status : nil, signal: signal)
    }

    // MARK: Helpers

    /// Runs a non-blocking libssh2 call until it completes, waiting on the socket between tries.
    private func call(_ what: String, deadline: Double, failure kind: SSHFailure.Kind, _ body: () -> Int32)
        throws(SSHConnectionStop)
    {
        guard let session else { throw .failure(SSHFailure(.internalError, "\(what): no session")) }
        while true {
            switch LibSSH2Status(body()) {
            case .done: return
            case .wouldBlock: try waitForSocket(session: session, deadline: deadline, phase: what)
            case .error: throw .failure(phaseFailure(kind, what, session: session))
            }
        }
    }

    private func waitForSocket(session: SSHSessionHandle, deadline: Double, phase: String) throws(SSHConnectionStop) {
        guard let socket else { throw .failure(SSHFailure(.internalError, "no socket")) }
        if control.isCancelled { throw .cancelled }
        let remaining = deadline - Monotonic.now
        guard remaining > 0 else {
            throw .failure(
                SSHFailure(
                    .timeout,
                    "\(endpoint) did not finish \(phase) within \(Int(configuration.handshakeTimeout.seconds)) s"))
        }
        let directions = session.blockDirections
        var events: Int16 = 0
        if directions.inbound { events |= Int16(POLLIN) }
        if directions.outbound { events |= Int16(POLLOUT) }
        if events == 0 { events = Int16(POLLIN) }
        var fds = [
            pollfd(fd: socket.fd, events: events, revents: 0),
            pollfd(fd: control.wake.fd, events: Int16(POLLIN), revents: 0),
        ]
        let rc = poll(&fds, 2, Int32(min(remaining, 1) * 1000) + 1)
        if rc < 0 && errno != EINTR {
            throw .failure(SSHFailure(.internalError, "poll failed: \(errnoText())"))
        }
        if fds[1].revents != 0 { control.wake.drain() }
        if control.isCancelled { throw .cancelled }
    }

    private func phaseFailure(_ kind: SSHFailure.Kind, _ what: String, session: SSHSessionHandle) -> SSHFailure {
        let code = session.lastErrorCode
        if Self.socketErrors.contains(code) {
            let reason =
                kind == .handshake
                ? "the server closed the connection during the key exchange" : session.lastErrorMessage
            return SSHFailure(
                kind == .handshake ? .handshake : .connectionLost, "Connection to \(endpoint) lost: \(reason)")
        }
        if code == LIBSSH2_ERROR_KEX_FAILURE {
            return SSHFailure(
                .handshake,
                "\(what) with \(endpoint) failed: no common algorithm (\(session.lastErrorMessage)); the host needs an Ed25519 or ECDSA host key"
            )
        }
        return SSHFailure(kind, "\(what) with \(endpoint) failed: \(session.lastErrorMessage)")
    }

    private func lostFailure(_ session: SSHSessionHandle) -> SSHFailure {
        SSHFailure(.connectionLost, "Connection to \(endpoint) lost: \(session.lastErrorMessage)")
    }

    private static let socketErrors: Set<Int32> = [
        LIBSSH2_ERROR_SOCKET_DISCONNECT, LIBSSH2_ERROR_SOCKET_RECV, LIBSSH2_ERROR_SOCKET_SEND,
        LIBSSH2_ERROR_BANNER_RECV,
        LIBSSH2_ERROR_BANNER_SEND,
    ]

    /// Releases the channel, says goodbye (best effort), then frees the session and socket.
    private func shutDown() {
        if let session {
            // Blocking with a short timeout: libssh2 cannot finish these calls non-blocking in one go.
            libssh2_session_set_timeout(session.raw, 1000)
            libssh2_session_set_blocking(session.raw, 1)
            channel = nil
            _ = libssh2_session_disconnect_ex(session.raw, SSH_DISCONNECT_BY_APPLICATION, "herdr-remote closing", "")
        }
        channel = nil
        session = nil
        socket = nil
    }
}
