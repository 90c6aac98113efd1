import HerdrAgents
import SessionProtocol
import Testing

/// The channel's one rule (docs/companion.md, "Inside the channel"): a message's first byte makes
/// it a control message (`{`), a session message (0x01–0x1F), or the end of the channel (any
/// other byte, or no byte at all).
@Suite struct ChannelMessageTests {
    @Test func everyFirstByteHasItsKind() {
        for byte in UInt8.min...UInt8.max {
            let expected: ChannelMessage.Kind =
                byte == UInt8(ascii: "{") ? .control : (0x01...0x1F).contains(byte) ? .session : .invalid
            #expect(ChannelMessage.Kind(firstByteOf: [byte]) == expected, "\(byte)")
            #expect(ChannelMessage.Kind(firstByteOf: [byte, 0x01, 0x7B]) == expected, "only the first byte counts")
        }
        #expect(ChannelMessage.Kind(firstByteOf: []) == .invalid, "an empty message ends the channel")
    }

    @Test(arguments: [
        ([UInt8](), "an empty message"),
        ([0x00], "byte 0x00"), ([0x20], "byte 0x20"), ([0x7F], "byte 0x7F"), ([0x80], "byte 0x80"),
        ([0xFF, 0x7B], "byte 0xFF"), (Array(" {\"ack\":\"status\"}".utf8), "byte 0x20"),
    ])
    func aMessageOfNeitherKindIsRefusedSayingWhatItWas(bytes: [UInt8], said: String) {
        #expect {
            try ChannelMessage(parsing: bytes)
        } throws: { error in
            (error as? ChannelMessageError)?.description.contains(said) == true
        }
    }

    @Test func eachKindParsesWithItsOwnCodec() throws {
        #expect(try ChannelMessage(parsing: Array(#"{"ack":"status"}"#.utf8)) == .control(.statusAcknowledged))
        let board = AgentBoardMessage(
            sequence: 1, kind: .changes,
            agents: [HerdrAgent(key: AgentKey(session: "default", pane: "w1:p1"), status: .blocked)])
        #expect(try ChannelMessage(parsing: ChannelMessage.bytes(of: board)) == .agents(board))
        #expect(
            try ChannelMessage(parsing: Array(#"{"agents":{"v":1,"watch":true}}"#.utf8))
                == .control(.agents(watch: true)))
        #expect(
            try ChannelMessage(parsing: Array(#"{"agents":{"v":2,"later":[]}}"#.utf8)) == .control(.unknown("agents")),
            "a later version of the family is ignored as an unknown key")
        #expect(throws: ChannelMessageError.self) { try ChannelMessage(parsing: Array(#"{"agents":{"v":1}}"#.utf8)) }
        #expect(
            try ChannelMessage(parsing: SessionMessage.close(stream: 7).bytes) == .session(.close(stream: 7)))
        // A control message of a later version (a key this side does not know) is no error.
        #expect(try ChannelMessage(parsing: Array(#"{"later":1}"#.utf8)) == .control(.unknown("later")))
    }

    @Test(arguments: [
        (Array(#"{"ack":"nope"}"#.utf8), "a malformed control message (an ack of something unknown)"),
        (Array("{".utf8), "a malformed control message"),
        ([0x15, 0, 0, 0, 1], "a malformed session message (an unknown session message type 21)"),
        ([0x0D, 2] + Array("{}".utf8), "an agents message of a version other than 1"),
        ([0x0D], "an agents message of a version other than 1"),
        ([0x0D, 1] + Array("{}".utf8), "a malformed agents message (an agents message has no seq"),
        ([0x1F], "a malformed session message (an unknown session message type 31)"),
        ([0x06, 0, 0, 0, 1, 0, 0, 0, 0], "a malformed session message (a window of 0×0 cells"),
    ])
    func aMalformedMessageOfEitherKindIsRefusedSayingWhy(bytes: [UInt8], said: String) {
        #expect {
            try ChannelMessage(parsing: bytes)
        } throws: { error in
            (error as? ChannelMessageError)?.description.hasPrefix(said) == true
        }
    }
}
