import Foundation
import HerdrAgents
import Testing

@Suite("The agents family's board messages")
struct AgentBoardMessageTests {
    static func agent(
        _ pane: String, session: String = "default", status: HerdrAgentStatus = .working, name: String? = nil,
        since: Int64? = nil
    ) -> HerdrAgent {
        HerdrAgent(
            key: AgentKey(session: session, pane: pane), name: name, kind: "claude", status: status, title: "a title",
            since: since)
    }

    static let sessions = [
        HerdrSessionInfo(name: "default", isDefault: true, state: .ready),
        HerdrSessionInfo(name: "work", isDefault: false, state: .unresponsive, detail: "no answer in 2 s"),
    ]

    /// The longest agent a board can carry: every text at its bound, of characters JSON escapes.
    static func longest(_ index: Int) -> HerdrAgent {
        let pane = "w\(index):" + String(repeating: "p", count: HerdrAgent.maximumPaneBytes - "w\(index):".count)
        return HerdrAgent(
            key: AgentKey(session: String(repeating: "s", count: 64), pane: pane),
            name: String(repeating: "\"", count: HerdrAgent.maximumNameBytes),
            kind: String(repeating: "\\", count: HerdrAgent.maximumKindBytes), status: .blocked,
            title: String(repeating: "\"", count: HerdrAgent.maximumTitleBytes), since: Int64(1_000_000_000_000))
    }

    @Test func aWholeBoardGoesInOnePartAndParsesBack() throws {
        let board = AgentBoard(
            sessions: Self.sessions,
            agents: [Self.agent("w1:p1", status: .blocked, name: "claude-1", since: 100), Self.agent("w1:p2")],
            omitted: 3)
        var sequence: UInt32 = 1
        let messages = AgentBoardMessage.full(board, sequence: &sequence)
        #expect(messages.count == 1)
        #expect(sequence == 2)
        let parsed = try AgentBoardMessage(parsingBody: messages[0].body)
        #expect(parsed == messages[0])
        var receiver = AgentBoardReceiver()
        #expect(try receiver.receive(parsed) == board)
    }

    @Test func theLongestBoardFitsItsPartsAndComesBackWhole() throws {
        let board = AgentBoard(
            sessions: Self.sessions, agents: (0..<AgentBoard.maximumAgents).map(Self.longest), omitted: 0)
        var sequence: UInt32 = 7
        let messages = AgentBoardMessage.full(board, sequence: &sequence)
        #expect(messages.count > 1)
        #expect(messages.count <= AgentBoardMessage.maximumParts)
        var receiver = AgentBoardReceiver()
        var result: AgentBoard?
        for message in messages {
            #expect(message.body.count <= AgentBoardMessage.maximumBodyBytes)
            result = try receiver.receive(AgentBoardMessage(parsingBody: message.body))
            if message != messages.last { #expect(result == nil) }
        }
        #expect(result == board)
    }

    @Test func changesTurnTheOldBoardIntoTheNewOne() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let old = Self.randomBoard(&generator)
            let new = Self.randomBoard(&generator)
            var sequence: UInt32 = 1
            var receiver = AgentBoardReceiver()
            for message in AgentBoardMessage.full(old, sequence: &sequence) {
                _ = try receiver.receive(AgentBoardMessage(parsingBody: message.body))
            }
            #expect(receiver.board == old)
            let changes = AgentBoardMessage.changes(from: old, to: new, sequence: &sequence)
            for message in changes { _ = try receiver.receive(AgentBoardMessage(parsingBody: message.body)) }
            #expect(receiver.board == new)
            #expect(changes.isEmpty == (old == new))
        }
    }

    static func randomBoard(_ generator: inout SystemRandomNumberGenerator) -> AgentBoard {
        let agents = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
            agent(
                "w1:p\(Int.random(in: 1...15, using: &generator))",
                session: ["default", "work"].randomElement(using: &generator)!,
                status: HerdrAgentStatus.allCases.randomElement(using: &generator)!,
                name: Bool.random(using: &generator) ? "agent-\(Int.random(in: 1...3, using: &generator))" : nil,
                since: Int64.random(in: 0...3, using: &generator))
        }
        return AgentBoard(
            herdr: Bool.random(using: &generator) ? .ready : HerdrAvailability(.failing, detail: "bad"),
            sessions: Bool.random(using: &generator) ? sessions : [sessions[0]], agents: agents,
            omitted: Int.random(in: 0...1, using: &generator))
    }

    @Test func nothingChangedSendsNothing() {
        let board = AgentBoard(sessions: Self.sessions, agents: [Self.agent("w1:p1")])
        var sequence: UInt32 = 5
        #expect(AgentBoardMessage.changes(from: board, to: board, sequence: &sequence).isEmpty)
        #expect(sequence == 5)
    }

    @Test(arguments: [
        (#"{"seq":1,"changes":true,"agents":[],"removed":[]}"#, "changes came before a whole board"),
        (#"{"seq":1,"full":{"part":2,"parts":2},"agents":[]}"#, "out of order"),
    ])
    func aReceiverRefusesMessagesOutOfTurn(body: String, problem: String) throws {
        var receiver = AgentBoardReceiver()
        let message = try AgentBoardMessage(parsingBody: Array(body.utf8))
        #expect {
            try receiver.receive(message)
        } throws: { error in
            "\(error)".contains(problem)
        }
    }

    @Test func aSequenceThatDoesNotGrowIsRefused() throws {
        var receiver = AgentBoardReceiver()
        let first = try AgentBoardMessage(
            parsingBody: Array(
                #"{"seq":4,"full":{"part":1,"parts":1},"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[]}"#
                    .utf8))
        _ = try receiver.receive(first)
        let again = try AgentBoardMessage(
            parsingBody: Array(#"{"seq":4,"changes":true,"agents":[],"removed":[]}"#.utf8))
        #expect(throws: AgentBoardMessageError.self) { try receiver.receive(again) }
    }

    static let malformed: [String] = [
        "[]",
        "{}",
        #"{"seq":0,"changes":true,"agents":[],"removed":[]}"#,
        #"{"seq":4294967296,"changes":true,"agents":[],"removed":[]}"#,
        #"{"seq":1,"changes":true,"agents":[]}"#,
        #"{"seq":1,"changes":false,"agents":[],"removed":[]}"#,
        #"{"seq":1,"full":{"part":1,"parts":9},"herdr":{"state":"ready"},"sessions":[],"omitted":0,"agents":[]}"#,
        #"{"seq":1,"full":{"part":3,"parts":2},"agents":[]}"#,
        #"{"seq":1,"full":{"part":1,"parts":1},"sessions":[],"omitted":0,"agents":[]}"#,
        #"{"seq":1,"full":{"part":2,"parts":2},"omitted":0,"agents":[]}"#,
        #"{"seq":1,"full":{"part":1,"parts":1},"herdr":{"state":"fine"},"sessions":[],"omitted":0,"agents":[]}"#,
        #"{"seq":1,"full":{"part":1,"parts":1},"herdr":{"state":"ready"},"sessions":[],"omitted":-1,"agents":[]}"#,
        #"{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1:p1"}],"removed":[]}"#,
        #"{"seq":1,"changes":true,"agents":[{"session":"no space","pane":"w1:p1","status":"idle"}],"removed":[]}"#,
        #"{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1 p1","status":"idle"}],"removed":[]}"#,
        #"{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1:p1","status":"idle","since":-1}],"removed":[]}"#,
        #"{"seq":1,"changes":true,"agents":[{"session":"default","pane":"w1:p1","status":"idle","name":7}],"removed":[]}"#,
        #"{"seq":1,"changes":true,"agents":[],"removed":[{"session":"default"}]}"#,
        #"{"seq":1,"changes":true,"agents":[],"removed":[],"sessions":[{"name":"a","default":true,"state":"ready"},{"name":"a","default":false,"state":"ready"}]}"#,
    ]

    @Test(arguments: malformed)
    func aMalformedBodyIsRefusedWithAReason(body: String) {
        #expect {
            try AgentBoardMessage(parsingBody: Array(body.utf8))
        } throws: { error in
            !"\(error)".isEmpty
        }
    }

    @Test func textsAtTheirBoundParseAndOneByteMoreDoesNot() throws {
        let atBound = String(repeating: "é", count: HerdrAgent.maximumNameBytes / 2)
        let over = atBound + "x"
        for (name, parses) in [(atBound, true), (over, false)] {
            let body =
                #"{"seq":1,"changes":true,"removed":[],"agents":[{"session":"default","pane":"w1:p1","status":"idle","name":"\#(name)"}]}"#
            #expect(((try? AgentBoardMessage(parsingBody: Array(body.utf8))) != nil) == parses)
        }
    }

    @Test func aBodyOverItsLimitAndAListOverItsBoundAreRefused() {
        let long =
            Array(#"{"seq":1,"changes":true,"removed":[],"agents":[],"pad":""#.utf8)
            + [UInt8](repeating: 0x61, count: AgentBoardMessage.maximumBodyBytes) + Array(#""}"#.utf8)
        #expect(throws: AgentBoardMessageError.self) { try AgentBoardMessage(parsingBody: long) }
        let entry = #"{"session":"default","pane":"w1:p1","status":"idle"}"#
        let many =
            #"{"seq":1,"changes":true,"removed":[],"agents":["#
            + Array(repeating: entry, count: AgentBoard.maximumAgents + 1).joined(separator: ",") + "]}"
        #expect(throws: AgentBoardMessageError.self) { try AgentBoardMessage(parsingBody: Array(many.utf8)) }
    }

    @Test func unknownFieldsAreIgnoredAndAnUnknownStatusIsUnknown() throws {
        let body =
            #"{"seq":1,"changes":true,"later":[1],"removed":[],"agents":[{"session":"default","pane":"w1:p1","status":"thinking","colour":"red"}]}"#
        let message = try AgentBoardMessage(parsingBody: Array(body.utf8))
        #expect(message.agents.first?.status == .unknown)
    }
}
