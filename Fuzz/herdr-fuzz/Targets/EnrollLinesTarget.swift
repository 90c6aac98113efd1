import HerdrKit
import SSHPairingHost

extension FuzzTargets {
    /// Both sides of the SSH pairing's enroll exchange. The computer's side: the request's bytes,
    /// fed to `EnrollLineReader` in the chunks the first byte chooses, give the same result as in
    /// one piece; complete lines are within `maximumLineBytes` and hold no newline; a request the
    /// lines make has an Ed25519 key and an acceptable 1–64 code point name, and its stored
    /// `text` parses back to the same request; a refusal has a reason. The device's side: any name
    /// the device sends (`Pairing.sanitizedDeviceName`) is one the computer accepts, and
    /// `Pairing.Verdict.decide` approves only an `OK` last line with exit status 0.
    static let enrollLines = FuzzTarget(
        "enroll-lines", "herdr-pair --enroll: request lines; the device's name and verdict"
    ) { data in
        guard let first = data.first else { return }
        let stream = Array(data.dropFirst())
        let chunk = Int(first % 32) + 1

        var whole = EnrollLineReader()
        var oneShot = whole.append(stream)
        if oneShot == .needMore { oneShot = whole.finish() }
        var pieces = EnrollLineReader()
        var chunked = EnrollLineReader.Result.needMore
        var offset = 0
        while offset < stream.count, chunked == .needMore {
            let end = min(stream.count, offset + chunk)
            chunked = pieces.append(stream[offset..<end])
            offset = end
        }
        if chunked == .needMore { chunked = pieces.finish() }
        FuzzCheck.expect(oneShot == chunked, "chunking changed the result: \(oneShot) vs \(chunked)")

        switch oneShot {
        case .complete(let lines):
            FuzzCheck.expect(lines.count == EnrollLineReader.lineCount, "not two lines")
            FuzzCheck.expect(
                lines.allSatisfy { $0.utf8.count <= EnrollLineReader.maximumLineBytes && !$0.contains("\n") },
                "a line over the limit or with a newline")
            checkRequest(keyLine: lines[0], nameLine: lines[1])
            // The device side: whatever name it was given, what it sends is accepted.
            let sent = Pairing.sanitizedDeviceName(lines[1])
            FuzzCheck.expect(EnrollRequest.isAcceptableName(sent), "the computer refuses the name the device sends")
            FuzzCheck.expect(
                sent.unicodeScalars.count <= Pairing.maximumDeviceNameLength, "the device sends a name too long")
        case .invalid(let reason):
            FuzzCheck.expect(!reason.isEmpty, "a refusal without a reason")
        case .needMore:
            FuzzCheck.expect(false, "still waiting after the input ended")
        }

        // The device reads the helper's stdout and exit status.
        let status: Int? = first & 0x80 == 0 ? Int(first & 0x07) : nil
        let verdict = Pairing.Verdict.decide(stdout: stream, status: status)
        if verdict == .approved {
            FuzzCheck.expect(status == 0, "approved with exit status \(String(describing: status))")
            let lastLine = stream.split(separator: 0x0A).last { line in
                !String(decoding: line, as: UTF8.self).allSatisfy(\.isWhitespace)
            }
            FuzzCheck.expect(
                lastLine.map { String(decoding: $0, as: UTF8.self).contains("OK") } == true,
                "approved without an OK line")
        }
    }

    /// A request from two lines: accepted within its bounds and round-tripping, or refused with a reason.
    private static func checkRequest(keyLine: String, nameLine: String) {
        do throws(EnrollRequestError) {
            let request = try EnrollRequest(keyLine: keyLine, nameLine: nameLine)
            FuzzCheck.expect(request.deviceKey.algorithm == "ssh-ed25519", "a request with another key type")
            FuzzCheck.expect(request.deviceKey.blob.count == EnrollRequest.keyBlobSize, "a key blob of the wrong size")
            FuzzCheck.expect(request.deviceName == nameLine, "the name changed")
            FuzzCheck.expect(
                (1...EnrollRequest.maximumNameLength).contains(request.deviceName.unicodeScalars.count)
                    && EnrollRequest.isAcceptableName(request.deviceName), "an unacceptable name accepted")
            let again = try? EnrollRequest(text: request.text)
            FuzzCheck.expect(again == request, "the stored text does not parse back")
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a refusal without a reason")
        }
    }
}
