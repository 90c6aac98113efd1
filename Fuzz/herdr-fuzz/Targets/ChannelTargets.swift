extension FuzzTargets {
    /// The channel parsers' targets.
    static let channel: [FuzzTarget] = []
}
