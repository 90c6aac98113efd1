import EndToEndChannel
import Noise

extension FuzzTargets {
    /// The companion channel's receive path on either side, after the genuine fixed-key handshake.
    /// The first byte picks the side (bit 0: the computer receiving the phone's frames, or the
    /// phone receiving the computer's) and, with bit 1, a channel still in its handshake reading
    /// the first record as the handshake message it waits for. The rest is records `op, length
    /// (2 bytes), bytes`: op 0 is an authentic frame of those bytes (the first is the chunk flag,
    /// any value), sealed by a copy of the sending CipherState; op 1 the bytes as a frame, as they
    /// are; op 2 an authentic frame of `bytes[2...]` with the byte at `bytes[0]` flipped by
    /// `bytes[1]`.
    ///
    /// A model decides each outcome: a frame is authentic only if the sender's key at the next
    /// nonce opens it (a raw frame that does is exactly the sealing of what it carries); an
    /// authentic chunk needs a flag of 0 or 1, a chunked message stays within the channel's
    /// limit, and a last chunk delivers the bytes of its chunks exactly. Every failure is fatal:
    /// the channel reports it and refuses every later frame (even a genuine one) and every send
    /// with the same error.
    static let secureChannel = FuzzTarget("secure-channel", "Companion SecureChannel frames, both sides") { data in
        guard let first = data.first else { return }
        let phoneReceives = first & 1 == 1
        var records = RecordReader(bytes: Array(data.dropFirst()))
        if first & 2 != 0 {
            SecureChannelModel.handshake(phoneReceives: phoneReceives, message: records.next()?.bytes ?? [])
            return
        }
        var channel = phoneReceives ? ChannelFixtures.established.phone : ChannelFixtures.established.mac
        var sender = phoneReceives ? ChannelFixtures.macSend : ChannelFixtures.phoneSend
        var pending: [UInt8]?
        while let record = records.next() {
            // The model: what the sender's key opens at the next nonce is authentic.
            let frame: [UInt8]
            let plaintext: [UInt8]?
            switch record.op % 3 {
            case 0:
                guard let sealed = try? sender.encryptWithAd([], record.bytes) else { return }
                frame = sealed
                plaintext = record.bytes
            case 1:
                frame = record.bytes
                var opener = sender
                plaintext = try? opener.decryptWithAd([], frame)
                if let plaintext {
                    var resealer = sender
                    FuzzCheck.expect(
                        (try? resealer.encryptWithAd([], plaintext)) == frame,
                        "an authentic frame is not the sealing of its plaintext")
                    sender = opener
                }
            default:
                let nonce = sender.n
                guard record.bytes.count >= 2, var sealed = try? sender.encryptWithAd([], Array(record.bytes[2...]))
                else { continue }
                sealed[Int(record.bytes[0]) % sealed.count] ^= record.bytes[1] == 0 ? 0x80 : record.bytes[1]
                frame = sealed
                var opener = sender
                opener.setNonce(nonce)
                FuzzCheck.expect((try? opener.decryptWithAd([], frame)) == nil, "a flipped frame opens")
                plaintext = nil
            }
            let expected: SecureChannelModel.Outcome
            if let plaintext {
                if let flag = plaintext.first, flag <= 1 {
                    let chunk = Array(plaintext.dropFirst())
                    if pending == nil && flag == 0 {
                        expected = .take(chunk)
                    } else if (pending ?? []).count + chunk.count > ChannelFixtures.channelLimit {
                        expected = .refuse(.messageTooLarge)
                    } else {
                        let whole = (pending ?? []) + chunk
                        pending = flag == 0 ? nil : whole
                        expected = .take(flag == 0 ? whole : nil)
                    }
                } else {
                    expected = .refuse(.invalidChunk)
                }
            } else {
                expected = .refuse(.decryptionFailed)
            }
            do throws(SecureChannelError) {
                let actions = try channel.receive(frame)
                guard case .take(let message) = expected else {
                    FuzzCheck.expect(false, "the channel took a frame the model refuses (\(expected))")
                    return
                }
                FuzzCheck.expect(actions == (message.map { [.deliver($0)] } ?? []), "the channel delivered otherwise")
            } catch {
                FuzzCheck.expect(expected == .refuse(error.kind), "the channel refused with \(error), not \(expected)")
                SecureChannelModel.checkFailed(&channel, error, next: (try? sender.encryptWithAd([], [0])) ?? [])
                return
            }
        }
    }
}

/// The secure-channel target's handshake mode and its check that a failure is fatal.
enum SecureChannelModel {
    /// What the channel must do with a frame: take it (delivering a message or not), or fail.
    enum Outcome: Equatable {
        case take([UInt8]?)
        case refuse(SecureChannelError.Kind)
    }

    /// A channel waiting for its peer's first handshake message takes only the genuine one. The
    /// phone (the initiator) passes over any other frame of a legal length, the handshake left as
    /// it was (the computer's old frames on a relay; `SecureChannelLimits.maximumStaleFrames`),
    /// and the genuine reply after it still completes the handshake.
    static func handshake(phoneReceives: Bool, message: [UInt8]) {
        let exchange = ChannelFixtures.exchange
        var channel = phoneReceives ? ChannelFixtures.phoneWaiting : ChannelFixtures.macWaiting
        let genuine = phoneReceives ? exchange.message2 : exchange.message1
        do throws(SecureChannelError) {
            let actions = try channel.receive(message)
            if message != genuine {
                FuzzCheck.expect(
                    phoneReceives && actions.isEmpty && !channel.isEstablished && channel.staleFrames == 1,
                    "the channel took a handshake message other than the genuine one")
                let reply = try? channel.receive(genuine)
                FuzzCheck.expect(
                    reply?.first == .send(exchange.message3) && channel.isEstablished,
                    "the genuine reply after a passed-over frame did not finish the handshake")
                return
            }
            if phoneReceives {
                FuzzCheck.expect(
                    actions.first == .send(exchange.message3) && channel.isEstablished
                        && channel.established?.remoteStaticPublicKey == ChannelFixtures.macStatic.publicKey,
                    "the phone's channel did not finish as the genuine exchange does")
            } else {
                FuzzCheck.expect(actions == [.send(exchange.message2)], "the computer's channel answered otherwise")
            }
        } catch {
            FuzzCheck.expect(message != genuine, "the channel refused the genuine handshake message: \(error)")
            FuzzCheck.expect(
                !phoneReceives || error.kind == .frameTooLong, "the phone refused a frame it must pass over: \(error)")
            FuzzCheck.expect(
                error.kind == .handshakeFailed || error.kind == .frameTooLong, "a handshake refused with \(error)")
            checkFailed(&channel, error, next: genuine)
        }
    }

    /// After `error`, the channel stays failed with it: `next` (a genuine frame) and a send are
    /// refused the same way.
    static func checkFailed(_ channel: inout CompanionChannel, _ error: SecureChannelError, next: [UInt8]) {
        FuzzCheck.expect(channel.failure?.kind == error.kind && !channel.isEstablished, "the failure is not kept")
        do throws(SecureChannelError) {
            _ = try channel.receive(next)
            FuzzCheck.expect(false, "a failed channel took a frame")
        } catch {
            FuzzCheck.expect(error.kind == channel.failure?.kind, "a failed channel refused with another error")
        }
        do throws(SecureChannelError) {
            _ = try channel.send([1, 2, 3])
            FuzzCheck.expect(false, "a failed channel sent")
        } catch {
            FuzzCheck.expect(error.kind == channel.failure?.kind, "a failed channel refused a send otherwise")
        }
    }
}

/// Records `op, length (2 bytes, big-endian), bytes` from a fuzz input; a short last record
/// takes what is left.
struct RecordReader {
    let bytes: [UInt8]
    var index = 0

    mutating func next() -> (op: UInt8, bytes: [UInt8])? {
        guard index < bytes.count else { return nil }
        let op = bytes[index]
        let high = index + 1 < bytes.count ? Int(bytes[index + 1]) : 0
        let low = index + 2 < bytes.count ? Int(bytes[index + 2]) : 0
        let start = min(bytes.count, index + 3)
        let end = min(bytes.count, start + (high << 8 | low))
        index = end
        return (op, Array(bytes[start..<end]))
    }
}
