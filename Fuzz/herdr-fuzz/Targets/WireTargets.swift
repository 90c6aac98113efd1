extension FuzzTargets {
    /// The wire parsers' targets.
    static let wire: [FuzzTarget] = []
}
