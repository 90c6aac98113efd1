import PeerGateListener
import RelayProtocol

/// The relay's HTTP answers as upstream writes them: the room endpoints answer JSON,
/// `{"ok":true,…}` or `{"ok":false,"error":X}`; the host's own refusals (the request gate, rate
/// limits, capacity, body size, unknown paths) are a short plain-text body.
enum RelayHTTP {
    static func ok(_ fields: [(String, String)] = []) -> HTTPResponse {
        var body = "{\"ok\":true"
        for (name, value) in fields { body += ",\(RelayJSON.quoted(name)):\(RelayJSON.quoted(value))" }
        body += "}"
        return HTTPResponse(status: 200, reason: "OK", contentType: "application/json", body: Array(body.utf8))
    }

    static func error(_ status: Int, _ error: String) -> HTTPResponse {
        HTTPResponse(
            status: status, reason: reasonPhrase(status), contentType: "application/json",
            body: Array("{\"ok\":false,\"error\":\(RelayJSON.quoted(error))}".utf8))
    }

    static func plain(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, reason: reasonPhrase(status), contentType: "text/plain", body: Array(text.utf8))
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 421: "Misdirected Request"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
