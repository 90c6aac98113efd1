import Plumbing

/// The end-to-end channel over one frame pipe (an admitted relay connection, or a home road
/// connection): frames out go straight to the pipe, frames in come from the owner's loop. Any
/// failure (of the channel or of a send) is fatal, as the channel's own failures are: the owner
/// closes the pipe and starts over on the next one with a fresh handshake.
public struct FramedChannel: Sendable {
    public enum Output: Sendable, Equatable {
        case established(CompanionChannel.Established)
        case message([UInt8])
    }

    public let connection: any FramePipe
    private var channel: CompanionChannel

    public init(connection: any FramePipe, handshake: CompanionHandshake) {
        self.connection = connection
        self.channel = CompanionChannel(handshake: handshake)
    }

    public var isEstablished: Bool { channel.isEstablished }
    public var established: CompanionChannel.Established? { channel.established }

    /// Starts the handshake (the initiator's first message goes out).
    public mutating func start() throws(FramedChannelError) -> [Output] {
        do {
            let actions = try channel.start()
            return try Self.carryOut(actions, on: connection)
        } catch let error as SecureChannelError {
            throw .channel(error)
        } catch let error as FramedChannelError {
            throw error
        } catch {
            throw .channel(SecureChannelError(.noise, "\(error)"))
        }
    }

    /// One frame from the peer.
    public mutating func receive(_ frame: [UInt8]) throws(FramedChannelError) -> [Output] {
        if channel.isEstablished {
            // Every keystroke and echo: one message at most, no actions to carry out.
            do {
                return try channel.receiveTransport(frame).map { [.message($0)] } ?? []
            } catch {
                throw .channel(error)
            }
        }
        do {
            let actions = try channel.receive(frame)
            return try Self.carryOut(actions, on: connection)
        } catch let error as SecureChannelError {
            throw .channel(error)
        } catch let error as FramedChannelError {
            throw error
        } catch {
            throw .channel(SecureChannelError(.noise, "\(error)"))
        }
    }

    /// Sends one message (chunked into frames as needed).
    public mutating func send(_ message: [UInt8]) throws(FramedChannelError) {
        if message.count <= SecureChannelLimits.maximumChunkLength {
            let frame: [UInt8]
            do {
                frame = try channel.sendFrame(message)
            } catch {
                throw .channel(error)
            }
            do {
                try connection.send(frame)
            } catch {
                throw .send(error)
            }
            return
        }
        let frames: [[UInt8]]
        do {
            frames = try channel.send(message)
        } catch {
            throw .channel(error)
        }
        for frame in frames {
            do {
                try connection.send(frame)
            } catch {
                throw .send(error)
            }
        }
    }

    /// Static, and called with actions already taken: a method called on `self` with an argument
    /// that mutates `self` makes Swift copy `self` first, and the copy would share the cipher
    /// states, so every message would build a fresh OpenSSL context.
    private static func carryOut(_ actions: [CompanionChannel.Action], on connection: any FramePipe) throws
        -> [Output]
    {
        var outputs: [Output] = []
        for action in actions {
            switch action {
            case .send(let frame):
                do {
                    try connection.send(frame)
                } catch {
                    throw FramedChannelError.send(error)
                }
            case .established(let established): outputs.append(.established(established))
            case .deliver(let message): outputs.append(.message(message))
            }
        }
        return outputs
    }
}

/// Why a framed channel ended.
public enum FramedChannelError: Error, Sendable, CustomStringConvertible {
    case channel(SecureChannelError)
    case send(ConnectionError)

    public var description: String {
        switch self {
        case .channel(let error): "the end-to-end channel failed (\(error))"
        case .send(let error): "sending failed (\(error.message))"
        }
    }
}
