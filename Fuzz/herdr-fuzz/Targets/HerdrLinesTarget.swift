import HerdrAgents
import HerdrWatch

extension FuzzTargets {
    /// What herdr-host reads from herdr's socket (specs/herdr-api.md, "The socket"): the bytes cut
    /// into lines by `HerdrLineReader` (here with a 512-byte bound, so inputs reach it), each line
    /// read as an answer to `ping` and to `agent.list` and as a subscription's line. The same lines
    /// and the same end however the bytes arrive (whole, or cut where the input says); no line
    /// past the bound, nothing kept past it after the error; an answer's agents within
    /// `HerdrJSON.maximumAgentsRead` with pane ids by their rule and texts bounded; a failure names
    /// what came, within a board detail's bytes; an event's pane by its rule.
    static let herdrLines = FuzzTarget("herdr-lines", "HerdrWatch line reader and herdr's answers") { data in
        let maximum = 512
        let whole = lines(of: [data], maximum: maximum)
        let cut = Int(data.first ?? 0) % (data.count + 1)
        let split = lines(of: [Array(data[..<cut]), Array(data[cut...])], maximum: maximum)
        var bytewise = lines(of: data.prefix(600).map { [$0] }, maximum: maximum)
        if data.count > 600 {
            bytewise = lines(of: [Array(data.prefix(600)), Array(data.dropFirst(600))], maximum: maximum)
        }
        FuzzCheck.expect(
            whole.lines == split.lines && whole.failed == split.failed, "cutting the bytes changed the lines")
        FuzzCheck.expect(
            whole.lines == bytewise.lines && whole.failed == bytewise.failed, "a byte at a time changed the lines")
        for line in whole.lines {
            FuzzCheck.expect(line.count <= maximum && !line.contains(0x0A), "a line past its bound or with a newline")
            for method in [HerdrProtocol.Method.ping, .agentList] {
                do throws(HerdrRequestFailure) {
                    switch try HerdrProtocol.answer(line, id: "herdr-host", method: method) {
                    case .agents(let agents, let unread):
                        FuzzCheck.expect(method == .agentList, "an agent list answering ping")
                        FuzzCheck.expect(
                            agents.count <= HerdrJSON.maximumAgentsRead && unread >= 0, "a list past its bound")
                        for agent in agents {
                            FuzzCheck.expect(HerdrAgent.isValidPane(agent.pane), "a pane breaking its rule")
                            FuzzCheck.expect(
                                (agent.name?.utf8.count ?? 0) <= HerdrAgent.maximumNameBytes
                                    && (agent.title?.utf8.count ?? 0) <= HerdrAgent.maximumTitleBytes
                                    && (agent.kind?.utf8.count ?? 0) <= HerdrAgent.maximumKindBytes,
                                "a text past its bound")
                        }
                    case .pong:
                        FuzzCheck.expect(method == .ping, "a pong answering agent.list")
                    case nil:
                        break
                    }
                } catch {
                    detailIsBounded(error)
                }
            }
            do throws(HerdrRequestFailure) {
                if case .event(let event) = try HerdrProtocol.subscriptionLine(line, id: "herdr-host-events") {
                    switch event {
                    case .statusChanged(let pane, _, _, _), .paneClosed(let pane):
                        FuzzCheck.expect(HerdrAgent.isValidPane(pane), "an event's pane breaking its rule")
                    case .paneCreated(let pane), .agentDetected(let pane):
                        FuzzCheck.expect(pane.map(HerdrAgent.isValidPane) ?? true, "an event's pane breaking its rule")
                    case .other(let name):
                        FuzzCheck.expect(name.utf8.count <= 64, "an event name past its bound")
                    }
                }
            } catch {
                detailIsBounded(error)
            }
        }
    }

    private static func lines(of chunks: [[UInt8]], maximum: Int) -> (lines: [[UInt8]], failed: Bool) {
        var reader = HerdrLineReader(maximumLineBytes: maximum)
        var lines: [[UInt8]] = []
        do throws(HerdrLineError) {
            for chunk in chunks {
                reader.append(chunk)
                while let line = try reader.next() { lines.append(line) }
                FuzzCheck.expect(
                    reader.pendingCount <= maximum + chunk.count, "the reader kept more than a line and a read")
            }
        } catch {
            FuzzCheck.expect(reader.pendingCount == 0, "the reader kept bytes after its error")
            return (lines, true)
        }
        return (lines, false)
    }

    private static func detailIsBounded(_ failure: HerdrRequestFailure) {
        FuzzCheck.expect(
            !failure.detail.isEmpty && failure.detail.utf8.count <= HerdrSessionInfo.maximumDetailBytes,
            "a failure's detail empty or past its bound")
    }
}
