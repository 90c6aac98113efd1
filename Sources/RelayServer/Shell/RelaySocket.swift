import Glibc
import PeerGateListener
import TLS
import WebWire

/// One accepted socket in the event loop: its stage (TLS handshake, HTTP request, WebSocket,
/// closing), its read state and its pending output. Owned by the loop thread.
final class RelaySocket {
    enum Stage {
        case tlsHandshake
        case http
        case webSocket
        /// Our last bytes are queued or sent; waiting for the peer's EOF (bounded by `deadline`),
        /// so a late packet from the peer cannot reset the connection before it read our close.
        case closing
    }

    let fd: Int32
    /// The client address the per-address limits count against (the proxy's client when trusted).
    var address: String
    /// The TCP peer's numeric address.
    let tcpPeer: String
    /// The TCP peer is loopback (gates `/metrics` and trusting a proxy header).
    let peerIsLoopback: Bool
    var tls: TLSConnection?
    var stage: Stage
    /// Milliseconds (loop clock) after which a socket not yet in `.webSocket` is closed.
    var deadline: Int64

    // HTTP stage.
    var httpBytes: [UInt8] = []
    var httpParser = HTTPRequestHeadParser()
    var head: HTTPRequestHead?
    var headLength = 0
    /// The request body's length (Content-Length), once the head passed its checks.
    var bodyLength = 0
    /// Requests answered on this connection (a kept-alive one carries several).
    var requestsServed = 0

    // WebSocket stage.
    var stream: WebSocketDecoder?
    var connectionID: ConnectionID?

    // Cut-through splicing, as a source: where the binary frame arriving now goes (nil: dropped),
    // and the last socket this one spliced to (to repair its stream if this one ends mid-way).
    weak var spliceTarget: RelaySocket?
    weak var lastSpliceTarget: RelaySocket?

    // Cut-through splicing, as a receiver: a spliced frame is being written to this socket.
    var receivingSplice = false
    /// Payload bytes of that frame still to come from the source.
    var inboundRemaining = 0
    /// The frame's header, held back to go out in one write with the first payload bytes.
    var inboundHeader: [UInt8] = []
    /// A fragmented binary message is open on this socket's outgoing stream…
    var inboundFragmentOpen = false
    /// …fed by this source.
    weak var inboundSource: RelaySocket?
    /// Frames of our own (pings, text, close) waiting for the spliced frame to end: nothing may
    /// go inside a frame.
    var deferred: [UInt8] = []

    // Output.
    var output: [UInt8] = []
    var outputStart = 0
    var pendingOutput: Int { output.count - outputStart }
    /// Sources that stopped reading because this socket's output passed the high-water mark.
    var pausedSources: [RelaySocket] = []
    var readPaused = false
    /// TLS needs the socket writable before it can read (or readable before it can write).
    var tlsReadWantsWritable = false
    var tlsHandshakeWantsWritable = false
    /// The write side is shut down (after the last bytes of a closing socket).
    var writeShut = false
    /// Counted against its peer address's sockets that are not (yet) WebSockets.
    var countedAsPreliminary = false
    /// The epoll mask registered now.
    var registeredEvents: UInt32

    init(fd: Int32, address: String, peerIsLoopback: Bool, tls: TLSConnection?, deadline: Int64, events: UInt32) {
        self.fd = fd
        self.address = address
        self.tcpPeer = address
        self.peerIsLoopback = peerIsLoopback
        self.tls = tls
        self.stage = tls == nil ? .http : .tlsHandshake
        self.deadline = deadline
        self.registeredEvents = events
    }

    /// The epoll mask this socket needs now.
    var wantedEvents: UInt32 {
        var events: UInt32 = readPaused ? 0 : Epoll.readable
        if pendingOutput > 0 || tlsReadWantsWritable || tlsHandshakeWantsWritable { events |= Epoll.writable }
        return events
    }
}
