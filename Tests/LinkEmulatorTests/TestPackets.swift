import LinkEmulator

/// Hand-built IP packets for the model's tests: headers with the fields the emulator reads,
/// and `payload` bytes after them.
enum TestPackets {
    static func udp4(
        from source: String, _ sourcePort: UInt16, to destination: String, _ destinationPort: UInt16, payload: Int = 0
    ) -> [UInt8] {
        ipv4(from: source, to: destination, transport: 17, ports: (sourcePort, destinationPort), payload: payload)
    }

    static func tcp4(
        from source: String, _ sourcePort: UInt16, to destination: String, _ destinationPort: UInt16, payload: Int = 0
    ) -> [UInt8] {
        ipv4(from: source, to: destination, transport: 6, ports: (sourcePort, destinationPort), payload: payload)
    }

    static func ipv4(
        from source: String, to destination: String, transport: UInt8, ports: (UInt16, UInt16)?, payload: Int
    ) -> [UInt8] {
        let transportHeader = ports.map { portBytes($0) + [UInt8](repeating: 0, count: transport == 6 ? 16 : 4) } ?? []
        let total = 20 + transportHeader.count + payload
        var packet: [UInt8] = [0x45, 0, UInt8(total >> 8), UInt8(total & 0xff), 0, 0, 0x40, 0, 64, transport, 0, 0]
        packet += IPAddress(source)!.wireBytes + IPAddress(destination)!.wireBytes
        return packet + transportHeader + [UInt8](repeating: 0xab, count: payload)
    }

    static func tcp6(
        from source: String, _ sourcePort: UInt16, to destination: String, _ destinationPort: UInt16, payload: Int = 0
    ) -> [UInt8] {
        ipv6(from: source, to: destination, next: 6, ports: (sourcePort, destinationPort), payload: payload)
    }

    static func udp6(
        from source: String, _ sourcePort: UInt16, to destination: String, _ destinationPort: UInt16, payload: Int = 0
    ) -> [UInt8] {
        ipv6(from: source, to: destination, next: 17, ports: (sourcePort, destinationPort), payload: payload)
    }

    /// `hopByHop`: how many 8-byte hop-by-hop option headers stand before the transport header.
    static func ipv6(
        from source: String, to destination: String, next: UInt8, hopByHop: Int = 0, ports: (UInt16, UInt16)?,
        payload: Int
    ) -> [UInt8] {
        let transportHeader = ports.map { portBytes($0) + [UInt8](repeating: 0, count: next == 6 ? 16 : 4) } ?? []
        var chain: [UInt8] = []
        for index in 0..<hopByHop { chain += [index == hopByHop - 1 ? next : 0, 0, 0, 0, 0, 0, 0, 0] }
        let payloadLength = chain.count + transportHeader.count + payload
        var packet: [UInt8] = [
            0x60, 0, 0, 0, UInt8(payloadLength >> 8), UInt8(payloadLength & 0xff), hopByHop > 0 ? 0 : next, 64,
        ]
        packet += IPAddress(source)!.wireBytes + IPAddress(destination)!.wireBytes
        return packet + chain + transportHeader + [UInt8](repeating: 0xcd, count: payload)
    }

    private static func portBytes(_ ports: (UInt16, UInt16)) -> [UInt8] {
        [UInt8(ports.0 >> 8), UInt8(ports.0 & 0xff), UInt8(ports.1 >> 8), UInt8(ports.1 & 0xff)]
    }
}
