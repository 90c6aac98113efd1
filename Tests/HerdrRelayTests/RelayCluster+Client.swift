import RelayClient
import TestSupport

extension RelayCluster {
    /// The relay as clients see it: the cluster's origin, reached at HAProxy's port.
    var endpoint: RelayEndpoint {
        // swift-format-ignore: NeverUseForceTry
        try! RelayEndpoint(parsing: origin).connecting(toHost: "127.0.0.1", port: UInt16(haproxy.port), tls: false)
    }

    var http: RelayHTTPClient { RelayHTTPClient(endpoint: endpoint, timeout: 10) }
}
