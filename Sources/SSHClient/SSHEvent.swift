import Foundation
import HerdrCrypto

/// What a connection reports, in order, on its event stream.
public enum SSHEvent: Sendable {
    /// TCP is up with this numeric peer address; no SSH byte has been sent yet.
    case connected(peerAddress: String)
    /// The key exchange finished and the host proved possession of this key.
    case hostKey(SSHHostKeyBlob)
    /// Authentication succeeded with this method.
    case authenticated(method: String)
    /// The channel is open and the command runs.
    case sessionStarted
    /// Output from the remote command. The connection reads nothing more until the consumer
    /// calls `acknowledgeOutput()`; until then the server waits in its SSH window.
    case output(stdout: [UInt8], stderr: [UInt8])
    /// The last event: how the connection ended, and for how long the command had been running
    /// (measured on the connection's thread, so a slow consumer does not stretch it), if it started.
    case finished(SSHTermination, commandRunTime: Duration?)
}

/// A host key as the server presented it: the SSH wire blob and its algorithm name.
public struct SSHHostKeyBlob: Sendable, Hashable {
    public let blob: [UInt8]
    public let algorithm: String

    public init(blob: [UInt8], algorithm: String) {
        self.blob = blob
        self.algorithm = algorithm
    }

    /// `SHA256:` and the unpadded standard base64 of SHA-256(blob), exactly as
    /// `ssh-keygen -l -E sha256` prints it.
    public var fingerprintSHA256: String {
        var encoded = Data(SHA256.hash(blob)).base64EncodedString()
        while encoded.hasSuffix("=") { encoded.removeLast() }
        return "SHA256:" + encoded
    }
}

/// How a connection ended.
public enum SSHTermination: Sendable, Equatable {
    /// The remote command ended: its exit status and, when killed, the signal name (without "SIG").
    case exited(status: Int?, signal: String?)
    /// The `.probe` policy stopped after the key exchange; nothing was authenticated.
    case probed(SSHHostKeyBlob)
    /// The presented key is not in the accepted set; nothing was authenticated.
    case hostKeyRejected(SSHHostKeyBlob)
    /// The local side asked to stop.
    case cancelled
    case failed(SSHFailure)
}

/// A failure with a stable kind for programs and a message for people.
public struct SSHFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Name resolution or TCP connect failed, or the connect timed out.
        case unreachable
        /// The peer address check refused the connected address.
        case peerRefused
        /// Version exchange or key exchange failed.
        case handshake
        /// No offered credential was accepted.
        case authentication
        /// The session channel, PTY or command request was refused.
        case channel
        /// The connection broke after it was established (reset, EOF, keepalive timeout).
        case connectionLost
        case timeout
        case internalError
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
