// HTTP/1.1 message syntax for the exporter's server (RFC 9112): where a
// request's head ends, what it asks for, and the head of an answer. Only
// what a metrics endpoint needs: no request bodies, no chunked encoding, no
// header kept beyond the few that change the answer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ckpt {

// Where the head starting at buffer[0] ends (just past its empty line: a
// CRLF CRLF, or bare LFs as RFC 9112 lets a server accept), or npos while it
// is incomplete. The search starts at `from` (what was scanned before,
// less the three bytes an end can straddle), so a head that arrives a byte
// at a time costs linear time, not quadratic.
size_t find_head_end(std::string_view buffer, size_t from);

// The empty lines a client may send before a request line (RFC 9112 2.2:
// after a body, some clients add a CRLF): how many bytes to skip.
size_t leading_empty_lines(std::string_view buffer);

struct RequestHead {
  std::string method;
  // The path, without the query or the fragment; an absolute-form target
  // (http://host/path) is reduced to its path.
  std::string path;
  int minor_version = 1;  // HTTP/1.x
  // Whether the client keeps the connection after this answer: HTTP/1.1
  // unless "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
  bool keep_alive = true;
  // Accept-Encoding lists gzip (or x-gzip, or *) with a weight above 0.
  bool accepts_gzip = false;
  // A body follows (Content-Length above 0, or a Transfer-Encoding): the
  // server reads none, so the connection ends after the answer.
  bool has_body = false;
};

struct ParsedHead {
  // 0 when the head is well-formed, else the status to answer: 400 for a
  // malformed head, 505 for an HTTP major version other than 1.
  int error_status = 0;
  std::string why;  // what was wrong, for the error answer's body
  RequestHead head;
};

// Parses a complete head (as find_head_end delimits it).
ParsedHead parse_request_head(std::string_view head);

// Whether an Accept-Encoding value allows gzip.
bool accepts_gzip(std::string_view accept_encoding);

// The reason phrase of the statuses the server answers with ("OK", "Not Found").
std::string_view reason_phrase(int status);

struct ResponseHead {
  int status = 200;
  std::string_view content_type;
  std::string_view content_encoding;  // "" for none
  size_t content_length = 0;
  bool keep_alive = true;
  int minor_version = 1;        // the request's: HTTP/1.0 keep-alive must be said
  bool allow_get_head = false;  // "Allow: GET, HEAD" (405)
};

// The status line and headers, through the empty line.
std::string format_response_head(const ResponseHead& head);

}  // namespace ckpt
