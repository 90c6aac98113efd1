import Noise

extension FuzzTargets {
    /// Noise transport messages against their encoder, with the transport keys of the fixed-key XK
    /// exchange: the first two bytes choose a frame to tamper with and the byte to flip, the rest
    /// is records `length (1 byte), bytes`, each a plaintext sealed by the phone's send
    /// CipherState and opened by the computer's receive CipherState, by turns with the allocating
    /// calls, the buffer calls and the gather/scatter calls (a header of up to 2 bytes split off).
    /// Every plaintext comes back exactly, every frame is 16 bytes longer than its plaintext and
    /// is the same whichever call sealed it, the chosen frame with one byte flipped is refused
    /// without moving the receiver's nonce (the genuine frame then opens), and a frame opened once
    /// is refused the second time.
    static let noiseTransport = FuzzTarget("noise-transport", "Noise transport frames: seal, open, tamper") { data in
        guard data.count >= 2 else { return }
        var sender = ChannelFixtures.phoneSend
        var receiver = try! ChannelFixtures.exchange.responderDone.transportCipherStates().receive
        var chunks: [[UInt8]] = []
        var index = 2
        while index < data.count {
            let end = min(data.count, index + 1 + Int(data[index]))
            chunks.append(Array(data[(index + 1)..<end]))
            index = end
        }
        guard !chunks.isEmpty else { return }
        let tampered = Int(data[0]) % chunks.count
        let flip = data[1] == 0 ? UInt8(0x01) : data[1]
        for (number, plaintext) in chunks.enumerated() {
            var reference = sender
            guard let expected = try? reference.encryptWithAd([], plaintext) else { return }
            FuzzCheck.expect(expected.count == plaintext.count + NoiseLimits.tagLength, "a frame of the wrong length")
            let headerLength = min(plaintext.count, number % 3)
            let frame: [UInt8]
            switch number % 3 {
            case 0:
                frame = (try? sender.encryptWithAd([], plaintext)) ?? []
            case 1:
                var out = [UInt8](repeating: 0, count: plaintext.count + NoiseLimits.tagLength)
                let written = try? [UInt8]().withUnsafeBytes { ad in
                    try plaintext.withUnsafeBytes { p in
                        try out.withUnsafeMutableBytes { o in try sender.encryptWithAd(ad, plaintext: p, into: o) }
                    }
                }
                FuzzCheck.expect(written == out.count, "the buffer call wrote \(String(describing: written)) bytes")
                frame = out
            default:
                var out = [UInt8](repeating: 0, count: plaintext.count + NoiseLimits.tagLength)
                let header = Array(plaintext.prefix(headerLength))
                let body = Array(plaintext.dropFirst(headerLength))
                let written = try? [UInt8]().withUnsafeBytes { ad in
                    try header.withUnsafeBytes { h in
                        try body.withUnsafeBytes { p in
                            try out.withUnsafeMutableBytes { o in
                                try sender.encryptWithAd(ad, header: h, plaintext: p, into: o)
                            }
                        }
                    }
                }
                FuzzCheck.expect(written == out.count, "the gather call wrote \(String(describing: written)) bytes")
                frame = out
            }
            FuzzCheck.expect(frame == expected, "the calls seal differently")
            FuzzCheck.expect(sender.n == UInt64(number + 1), "the sender's nonce did not count the frame")
            if number == tampered {
                var bad = frame
                bad[Int(data[0] &+ data[1]) % bad.count] ^= flip
                var probe = receiver
                FuzzCheck.expect((try? probe.decryptWithAd([], bad)) == nil, "a flipped frame opens")
                FuzzCheck.expect(probe.n == receiver.n, "a refused frame moved the nonce")
                FuzzCheck.expect((try? probe.decryptWithAd([], Array(frame.dropLast()))) == nil, "a cut frame opens")
            }
            let opened: [UInt8]?
            switch number % 3 {
            case 0:
                opened = try? receiver.decryptWithAd([], frame)
            case 1:
                var out = [UInt8](repeating: 0, count: plaintext.count)
                let read = try? [UInt8]().withUnsafeBytes { ad in
                    try frame.withUnsafeBytes { c in
                        try out.withUnsafeMutableBytes { o in try receiver.decryptWithAd(ad, ciphertext: c, into: o) }
                    }
                }
                opened = read == plaintext.count ? out : nil
            default:
                var header = [UInt8](repeating: 0, count: headerLength)
                var out = [UInt8](repeating: 0, count: plaintext.count - headerLength)
                let read = try? [UInt8]().withUnsafeBytes { ad in
                    try frame.withUnsafeBytes { c in
                        try header.withUnsafeMutableBytes { h in
                            try out.withUnsafeMutableBytes { o in
                                try receiver.decryptWithAd(ad, ciphertext: c, header: h, into: o)
                            }
                        }
                    }
                }
                opened = read == plaintext.count ? header + out : nil
            }
            FuzzCheck.expect(opened == plaintext, "the plaintext did not come back")
            FuzzCheck.expect(receiver.n == sender.n, "the receiver's nonce is not the sender's")
            if number == tampered {
                var replay = receiver
                FuzzCheck.expect((try? replay.decryptWithAd([], frame)) == nil, "a replayed frame opens")
            }
        }
    }
}
