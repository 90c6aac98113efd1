import RelayStorage

extension FuzzTargets {
    /// herdr-relay's `--store` URL: any text parses or is refused with a reason, a parsed
    /// address's description (password hidden) parses back to the same place, and a password
    /// never shows in the description or in an error.
    static let redisURL = FuzzTarget("redis-url", "herdr-relay --store / RELAY_REDIS_URL") { data in
        let text = String(decoding: data, as: UTF8.self)
        do throws(RelayStoreError) {
            let address = try RedisAddress(url: text)
            // A user escaped for display can make the description longer than a URL may be;
            // then it cannot be read back, and that is no finding.
            guard address.description.utf8.count <= RedisAddress.maximumLength else { return }
            let shown = try? RedisAddress(url: address.description)
            if address.password != nil {
                // The password's place shows the mask, never the password.
                FuzzCheck.expect(shown?.password == "***", "the description shows a password")
                FuzzCheck.expect(shown?.endpoint == address.endpoint, "the description names another server")
            } else {
                FuzzCheck.expect(shown == address, "the description does not parse back")
            }
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a refusal without a reason")
        }
    }
}
