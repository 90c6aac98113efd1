import EndToEndChannel
import Noise

extension FuzzTargets {
    /// The three XK handshake reads as the companion roads run them (herdr-remote's prologue,
    /// fixed keys): the first byte picks the reader (0 a fresh responder reading message 1, 1 the
    /// initiator that sent message 1 reading message 2, 2 the responder that read message 1 and
    /// wrote message 2 reading message 3) and the rest is the message. A message is accepted only
    /// if it is the genuine one, and then the reader ends where the genuine exchange does (its own
    /// next message is the genuine one, the same handshake hash, the phone's static key learnt
    /// from message 3); a refused message leaves
    /// the state as it was (ReadMessage is a transaction), so the genuine message is still
    /// accepted after it.
    static let noiseHandshake = FuzzTarget("noise-handshake", "Noise XK handshake messages 1, 2 and 3 (read side)") {
        data in
        guard let first = data.first else { return }
        let message = Array(data.dropFirst())
        let exchange = ChannelFixtures.exchange
        let (reader, genuine, after): (CompanionHandshake, [UInt8], CompanionHandshake) =
            switch first % 3 {
            case 0: (exchange.responderFresh, exchange.message1, exchange.responderAwaiting3)
            case 1: (exchange.initiatorAwaiting2, exchange.message2, exchange.initiatorDone)
            default: (exchange.responderAwaiting3, exchange.message3, exchange.responderDone)
            }
        var state = reader
        do throws(NoiseError) {
            let payload = try state.readMessage(message)
            FuzzCheck.expect(message == genuine, "a message other than the genuine one was accepted")
            FuzzCheck.expect(payload.isEmpty, "the genuine message's payload is not empty")
            if first % 3 < 2 {
                // The reader writes the next message; with the fixed keys it is the genuine one.
                let next = first % 3 == 0 ? exchange.message2 : exchange.message3
                FuzzCheck.expect((try? state.writeMessage()) == next, "the next message differs")
            }
            FuzzCheck.expect(state.handshakeHash == after.handshakeHash, "the handshake hash differs")
            FuzzCheck.expect(
                state.remoteStaticPublicKey == after.remoteStaticPublicKey, "the peer's static key differs")
            if first % 3 == 2 {
                FuzzCheck.expect(state.isHandshakeComplete, "message 3 did not finish the handshake")
                FuzzCheck.expect(
                    state.remoteStaticPublicKey == ChannelFixtures.phoneStatic.publicKey,
                    "message 3 named another phone")
            }
        } catch {
            FuzzCheck.expect(message != genuine, "the genuine message was refused: \(error)")
            FuzzCheck.expect(
                state.handshakeHash == reader.handshakeHash && state.turn == .read,
                "a refused message changed the state")
            // Nothing was consumed: the genuine message is still accepted.
            FuzzCheck.expect((try? state.readMessage(genuine)) != nil, "the genuine message is refused after \(error)")
            FuzzCheck.expect(
                first % 3 < 2 || state.handshakeHash == after.handshakeHash, "the genuine message ends elsewhere")
        }
    }
}
