import Testing

/// Tests that change terminal state through the process-wide registry or send signals to this
/// process run one at a time, so none of them sees another's registrations or signals.
@Suite(.serialized) struct InProcessTerminalTests {}
