/// What a line the relay logs is about. Neither kind ever names a room or an address.
public enum RelayLogKind: Sendable {
    /// Something that happened ("a room was established", "reaped 3 idle room(s)"): logged only
    /// when the operator asks (`RELAY_LOG=true`), as upstream retains nothing by default.
    case event
    /// Something that went wrong in the relay itself (a store error): always logged.
    case failure
}
