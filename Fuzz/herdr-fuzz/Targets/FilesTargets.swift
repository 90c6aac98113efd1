extension FuzzTargets {
    /// The files parsers' targets.
    static let files: [FuzzTarget] = []
}
