import CLibSSH2

/// Owns one `LIBSSH2_AGENT`: a connection to an ssh-agent socket on behalf of one session, freed
/// in deinit. Used only on its connection's thread; the agent socket is a blocking Unix socket, so
/// listing and signing wait for the agent (an agent fronting a hardware key may wait for a touch).
final class SSHAgentHandle {
    /// One key the agent offers; valid while the handle lives.
    struct Identity {
        let raw: UnsafeMutablePointer<libssh2_agent_publickey>
        /// The SSH wire blob of the public key.
        var blob: [UInt8] { Array(UnsafeBufferPointer(start: raw.pointee.blob, count: raw.pointee.blob_len)) }
        /// The comment ssh-add stored (often the key file's path), for messages.
        var comment: String { raw.pointee.comment.map { String(cString: $0) } ?? "" }
    }

    /// The most agent keys tried: sshd's MaxAuthTries (6 by default) ends the connection long before.
    static let maximumIdentities = 32

    let raw: OpaquePointer
    private let socketPath: String
    private var connected = false

    init(session: SSHSessionHandle, socketPath: String) throws(SSHFailure) {
        guard let raw = libssh2_agent_init(session.raw) else {
            throw SSHFailure(.internalError, "libssh2_agent_init failed")
        }
        self.raw = raw
        self.socketPath = socketPath
        libssh2_agent_set_identity_path(raw, socketPath)
    }

    deinit {
        if connected { _ = libssh2_agent_disconnect(raw) }
        libssh2_agent_free(raw)
    }

    /// Connects and lists the agent's keys; throws a sentence naming the socket when the agent
    /// cannot be reached or will not list.
    func identities(session: SSHSessionHandle) throws(SSHFailure) -> [Identity] {
        guard libssh2_agent_connect(raw) == 0 else {
            throw SSHFailure(
                .authentication, "ssh-agent at \(socketPath) could not be reached (\(session.lastErrorMessage))")
        }
        connected = true
        guard libssh2_agent_list_identities(raw) == 0 else {
            throw SSHFailure(
                .authentication, "ssh-agent at \(socketPath) did not list its keys (\(session.lastErrorMessage))")
        }
        var found: [Identity] = []
        var previous: UnsafeMutablePointer<libssh2_agent_publickey>?
        while found.count < Self.maximumIdentities {
            var next: UnsafeMutablePointer<libssh2_agent_publickey>?
            let rc = libssh2_agent_get_identity(raw, &next, previous)
            guard rc == 0, let next else {
                if rc < 0 {
                    throw SSHFailure(
                        .authentication,
                        "ssh-agent at \(socketPath) gave an unreadable key list (\(session.lastErrorMessage))")
                }
                break
            }
            found.append(Identity(raw: next))
            previous = next
        }
        return found
    }
}
